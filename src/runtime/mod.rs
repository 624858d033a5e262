//! The private runtime directory: where the pinned CLI, its workspace, our
//! temporary files, state files and the wrapper lock live.
//!
//! Rules (invariant 5): the runtime is a real directory (not a symlink), owned
//! by us, mode exactly 0700, and carries our claim file (0600, fixed content).
//! A non-empty directory without our claim is never adopted, and we never
//! change the permissions of a directory we did not create. Any violation is
//! reported with the path and the rule, exit 6, and nothing is touched.
//!
//! This file opens the runtime and says where things are in it; each
//! job has its own file: `claim.rs` (what is ours), `private.rs` (the
//! checks of folders and files), `state.rs` (state files), `log.rs`
//! (logs), `lock.rs` (the locks and their one wait), `turn.rs` (the
//! session's lock in the order asked).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::config::RuntimeLocation;
use crate::exit::Exit;

mod claim;
mod lock;
mod log;
mod private;
mod state;
#[cfg(test)]
mod tests;
mod turn;

pub use claim::{claimed, made_here, sealed_place};
pub use lock::FileLock;
pub use log::LogFile;
pub use private::{check_helper_dir, check_private_dir};
pub use state::StateFile;

use claim::{check_claim, claim_if_empty, create_root, is_empty_dir, unclaimed};
use private::ensure_private_subdir;

pub const CLAIM_FILE: &str = ".my-chrome-runtime";
/// The claim file's exact content; anything else is a foreign or corrupted claim.
pub const CLAIM: &[u8] = b"my-chrome runtime v1: private to my-chrome; do not add files by hand\n";
const LOCK_FILE: &str = ".lock";
/// The session's lock: one browser command at a time, never waiting behind
/// a `setup` holding the wrapper lock.
const SESSION_LOCK_FILE: &str = ".session.lock";
/// The queue to the session's lock: the next ticket is in this file (read
/// and written under its own lock), and each waiter holds a lock file of
/// its own, `.turn-<ticket>.lock`, until it has the session's lock.
const TURN_TICKETS_FILE: &str = ".turn-tickets.lock";
const TURN_PREFIX: &str = ".turn-";
/// The registry of agent names' lock (src/identity/registry.rs).
const NAMES_LOCK_FILE: &str = ".names.lock";
/// The lock of `late.json` (src/lease/late.rs): its waiters write it
/// without the session's turn.
const LATE_LOCK_FILE: &str = ".late.lock";
/// Its presence makes the runtime the Playwright CLI's workspace.
pub const WORKSPACE_DIR: &str = ".playwright";
/// Handed to every child as `TMPDIR`, so the CLI daemon's socket is private.
pub const TMP_DIR: &str = "tmp";
/// Inside the private TMPDIR: the output files of a command in flight.
const OUTPUTS_DIR: &str = "outputs";
pub const CLI_DIR: &str = "cli";
/// Where the daemon registers the browser it binds (`PWTEST_SERVER_REGISTRY`),
/// inside the private TMPDIR (src/session/bound.rs).
const BOUND_REGISTRY_DIR: &str = "bound-browsers";
const STATE_LIMIT: u64 = 64 * 1024;
/// Where a setup stages a new copy, and sets the old one aside, in the
/// runtime (`command/setup.rs`).
pub const STAGING_PREFIX: &str = ".cli-setup.";
pub const ASIDE_PREFIX: &str = ".cli-old.";
/// The pinned CLI's own output of the session (src/session/bootstrap.rs).
pub const SESSION_OUTPUT: &str = "session-output";
/// The temporary files of an atomic state write.
const STATE_TEMP_PREFIX: &str = ".state.";

/// The server registry our children use, inside the private TMPDIR `tmp`.
pub fn bound_registry(tmp: &Path) -> PathBuf {
    tmp.join(BOUND_REGISTRY_DIR)
}

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(
        "unsafe runtime: {path}: {rule}. Nothing was changed. Fix or remove it yourself, \
         or point MY_CHROME_RUNTIME_DIR at a new directory."
    )]
    Unsafe { path: PathBuf, rule: String },
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error(
        "interrupted by {0} while waiting for another my-chrome command to finish; nothing was done"
    )]
    Interrupted(Signal),
    #[error(
        "another my-chrome command held the lock {} for {} s; nothing was done. \
         Let it finish and try again (MY_CHROME_LOCK_WAIT_SECS sets how long to wait)",
        .path.display(), .waited.as_secs()
    )]
    LockTimeout { path: PathBuf, waited: Duration },
    #[error(
        "the runtime was removed or replaced while this command waited for {} (by `my-chrome \
         uninstall`?); nothing was done. Run `my-chrome setup` if my-chrome is to be used again, \
         then this command",
        .0.display()
    )]
    Gone(PathBuf),
}

impl RuntimeError {
    pub fn exit(&self) -> Exit {
        match self {
            RuntimeError::Unsafe { .. } => Exit::Security,
            RuntimeError::Io { .. } => Exit::Failure,
            RuntimeError::Interrupted(signal) => Exit::from(*signal),
            RuntimeError::LockTimeout { .. } => Exit::Timeout,
            RuntimeError::Gone(_) => Exit::Failure,
        }
    }
}

fn unsafe_path(path: &Path, rule: impl Into<String>) -> RuntimeError {
    RuntimeError::Unsafe {
        path: path.to_path_buf(),
        rule: rule.into(),
    }
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> RuntimeError {
    let path = path.to_path_buf();
    move |source| RuntimeError::Io {
        action,
        path,
        source,
    }
}

/// Where and what kind of fault a state file's JSON has, never its text
/// (it may quote the file: an address, a name): for a message.
pub fn json_fault(e: &serde_json::Error) -> String {
    format!(
        "{:?} error at line {}, column {}",
        e.classify(),
        e.line(),
        e.column()
    )
}

/// A runtime whose checks have passed.
#[derive(Clone, Debug)]
pub struct Runtime {
    root: PathBuf,
}

impl Runtime {
    /// Opens the runtime, creating it (and its subdirectories) when missing.
    pub fn open(location: &RuntimeLocation) -> Result<Runtime, RuntimeError> {
        let root = &location.path;
        match fs::symlink_metadata(root) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => create_root(root)?,
            Err(e) => return Err(io_error("inspect", root)(e)),
            Ok(_) => {}
        }
        check_private_dir(root)?;
        if !check_claim(root)? {
            claim_if_empty(root)?;
        }
        for sub in [WORKSPACE_DIR, TMP_DIR] {
            ensure_private_subdir(&root.join(sub))?;
        }
        Ok(Runtime { root: root.clone() })
    }

    /// Checks the runtime without creating or changing anything (for
    /// `doctor`). `Ok(None)` when it does not exist yet.
    pub fn inspect(location: &RuntimeLocation) -> Result<Option<Runtime>, RuntimeError> {
        let root = &location.path;
        match fs::symlink_metadata(root) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("inspect", root)(e)),
            Ok(_) => {}
        }
        check_private_dir(root)?;
        if !check_claim(root)? && !is_empty_dir(root)? {
            return Err(unclaimed(root));
        }
        // `cli` is the helper's to check (it reports its own faults).
        for sub in [WORKSPACE_DIR, TMP_DIR] {
            let path = root.join(sub);
            if fs::symlink_metadata(&path).is_ok() {
                check_private_dir(&path)?;
            }
        }
        Ok(Some(Runtime { root: root.clone() }))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn cli_dir(&self) -> PathBuf {
        self.root.join(CLI_DIR)
    }

    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join(TMP_DIR)
    }

    /// `<runtime>/tmp/outputs`, made private when missing: where the daemon
    /// writes a command's output files before they are delivered
    /// (src/staged_files.rs).
    pub fn outputs_dir(&self) -> Result<PathBuf, RuntimeError> {
        let dir = self.tmp_dir().join(OUTPUTS_DIR);
        ensure_private_subdir(&dir)?;
        Ok(dir)
    }
}

/// A runtime opened in a throw-away home, for unit tests (the home goes
/// when the returned directory is dropped).
#[cfg(test)]
pub(crate) fn scratch() -> (tempfile::TempDir, Runtime) {
    let home = tempfile::tempdir().unwrap();
    let location = RuntimeLocation {
        path: home.path().join("runtime"),
    };
    let runtime = Runtime::open(&location).unwrap();
    (home, runtime)
}
