//! The pinned `@playwright/cli`: the shipped pin, trusted node, checks of
//! the installed copy, and `my-chrome setup`.

pub mod check;
pub mod node;
pub mod pin;
pub mod setup;
pub mod tree;

use std::path::{Path, PathBuf};
use std::time::Duration;

use check::{Depth, Fault};
use node::{Node, NodeError};
use pin::Pin;

use crate::child::{ChildCommand, ChildEnv, ChildError};
use crate::error::Exit;
use crate::procs::ProcError;
use crate::runtime::{self, RuntimeError};

/// The CLI's entry point, relative to the install directory.
pub const ENTRY: &str = "node_modules/@playwright/cli/playwright-cli.js";
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum HelperError {
    #[error(transparent)]
    Unsafe(#[from] RuntimeError),
    #[error("the pinned @playwright/cli is not installed in {}; run `my-chrome setup`", .dir.display())]
    Missing { dir: PathBuf },
    #[error("the @playwright/cli in {} is not supported: {fault}; run `my-chrome setup`", .dir.display())]
    Unsupported { dir: PathBuf, fault: Fault },
    #[error(transparent)]
    Node(#[from] NodeError),
    #[error(transparent)]
    Child(#[from] ChildError),
    #[error(transparent)]
    Processes(#[from] ProcError),
    #[error(
        "the Playwright session {session:?} is open; setup was not started. \
         Run `my-chrome disconnect` first, then `my-chrome setup`"
    )]
    SessionOpen { session: String },
    #[error(
        "processes {pids:?} are running code from {}; setup was not started. \
         Run `my-chrome disconnect`, let them finish, then run `my-chrome setup` again",
        .dir.display()
    )]
    InUse { dir: PathBuf, pids: Vec<u32> },
    #[error(
        "npm ci failed ({status}); nothing was installed and the previous copy, if any, is unchanged. \
         npm's output above says why (often the network or a proxy); fix that and run `my-chrome setup` again"
    )]
    NpmFailed { status: String },
    #[error(
        "{0}. Nothing was installed and the previous copy, if any, is unchanged. Run `my-chrome setup` \
         again (if npm is slow, check the network or raise MY_CHROME_SETUP_TIMEOUT_SECS)"
    )]
    NpmAborted(ChildError),
    #[error(
        "interrupted by {signal} before the new copy was put in place; the previous copy, if any, is unchanged"
    )]
    Interrupted { signal: nix::sys::signal::Signal },
    #[error(
        "the freshly installed copy failed verification ({fault}); it was removed and the previous copy, \
         if any, is unchanged. With an unmodified my-chrome this should not happen: please report it"
    )]
    StagedUnsupported { fault: Fault },
    #[error(
        "cannot read the Playwright session registry ({reason}); setup was not started. If no my-chrome \
         session is running, remove that file and run `my-chrome setup` again"
    )]
    SessionUnreadable { reason: String },
    #[error("{0}")]
    Swap(String),
    #[error("could not {action}: {source}")]
    Io {
        action: String,
        source: std::io::Error,
    },
}

impl HelperError {
    pub fn exit(&self) -> Exit {
        match self {
            HelperError::Unsafe(e) => e.exit(),
            HelperError::Child(e) | HelperError::NpmAborted(e) => e.exit(),
            HelperError::Interrupted { signal } => Exit::Signal(*signal as i32),
            HelperError::Node(e) => e.exit(),
            HelperError::Missing { .. } | HelperError::Unsupported { .. } => Exit::Usage,
            HelperError::Processes(_)
            | HelperError::SessionOpen { .. }
            | HelperError::SessionUnreadable { .. }
            | HelperError::InUse { .. }
            | HelperError::NpmFailed { .. }
            | HelperError::StagedUnsupported { .. }
            | HelperError::Swap(_)
            | HelperError::Io { .. } => Exit::Failure,
        }
    }
}

/// The private copy of the CLI at `<runtime>/cli` (or a staging directory).
#[derive(Clone, Debug)]
pub struct Helper {
    dir: PathBuf,
}

impl Helper {
    pub fn at(dir: impl Into<PathBuf>) -> Helper {
        Helper { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn entry(&self) -> PathBuf {
        self.dir.join(ENTRY)
    }

    /// Fails with `Missing`, `Unsafe` (exit 6: the directory is a symlink,
    /// not ours or not 0700) or `Unsupported` with the exact fault.
    pub fn check_supported(&self, pin: &Pin, depth: Depth) -> Result<(), HelperError> {
        self.check_dir()?;
        check::check_supported(&self.dir, pin, depth).map_err(|fault| self.unsupported(fault))
    }

    /// Enough to detach: a complete install of a lock we once shipped.
    pub fn check_intact(&self, pin: &Pin) -> Result<(), HelperError> {
        self.check_dir()?;
        check::check_intact(&self.dir, pin).map_err(|fault| self.unsupported(fault))
    }

    /// The full check of setup, doctor and connect: supported with the tree
    /// digest, and `--version` run through node prints the pin.
    pub fn verify(
        &self,
        pin: &Pin,
        node: &Node,
        env: &ChildEnv,
        cwd: &Path,
    ) -> Result<(), HelperError> {
        self.check_supported(pin, Depth::Full)?;
        self.check_reported_version(pin, node, env, cwd)
    }

    /// Runs `node <entry> --version` and compares it with the pin.
    pub fn check_reported_version(
        &self,
        pin: &Pin,
        node: &Node,
        env: &ChildEnv,
        cwd: &Path,
    ) -> Result<(), HelperError> {
        let finished =
            ChildCommand::new("playwright-cli --version", &node.path, cwd, VERSION_TIMEOUT)
                .arg(self.entry())
                .arg("--version")
                .run(env)?;
        let found = finished.stdout_text().trim().to_string();
        if !finished.status.success() || found != pin.version {
            return Err(self.unsupported(Fault::ReportedVersion {
                found: if finished.status.success() {
                    found
                } else {
                    format!("{found} ({})", finished.status)
                },
                expected: pin.version.clone(),
            }));
        }
        Ok(())
    }

    fn check_dir(&self) -> Result<(), HelperError> {
        if std::fs::symlink_metadata(&self.dir)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        {
            return Err(HelperError::Missing {
                dir: self.dir.clone(),
            });
        }
        runtime::check_private_dir(&self.dir)?;
        Ok(())
    }

    fn unsupported(&self, fault: Fault) -> HelperError {
        HelperError::Unsupported {
            dir: self.dir.clone(),
            fault,
        }
    }
}

/// Resolves the trusted node for this pin.
pub fn trusted_node(
    config: &crate::config::Config,
    pin: &Pin,
    env: &ChildEnv,
) -> Result<Node, NodeError> {
    node::select(
        config.node.as_deref(),
        &node::candidates(&config.home),
        &pin.node,
        |path| node::probe(path, env),
    )
}
