//! Is our session usable, read natively (no Node process): the CLI's
//! registry entry, the daemon socket's private directory, the version that
//! made it, and whether the socket answers.

use std::path::Path;

use super::registry::{self, SessionEntry};
use crate::runtime;

#[derive(Debug)]
pub enum SessionState {
    /// Open, ours, compatible: commands can be forwarded.
    Ready(SessionEntry),
    /// No session: a fresh `connect` needs approval.
    Missing,
    /// An entry whose daemon is gone or was made by another version.
    Stale(String),
    /// Something we must not trust or cannot read.
    Unavailable(String),
}

impl SessionState {
    pub fn name(&self) -> &'static str {
        match self {
            SessionState::Ready(_) => "ready",
            SessionState::Missing => "missing",
            SessionState::Stale(_) => "stale",
            SessionState::Unavailable(_) => "unavailable",
        }
    }
}

/// The state of session `name` in the workspace `runtime_root`, whose
/// children run with `TMPDIR=<runtime>/tmp`; `core_version` is the
/// playwright-core version of the pin.
pub fn session_state(
    home: &Path,
    runtime_root: &Path,
    name: &str,
    core_version: &str,
) -> SessionState {
    let entry = match registry::read_entry(home, runtime_root, name) {
        Ok(Some(entry)) => entry,
        Ok(None) => return SessionState::Missing,
        Err(e) => {
            return SessionState::Unavailable(format!("cannot read the session registry: {e}"));
        }
    };
    if entry.version.as_deref() != Some(core_version) {
        let made_by = entry.version.as_deref().unwrap_or("an unknown version");
        return SessionState::Stale(format!(
            "made by playwright-core {made_by}, the pin has {core_version}"
        ));
    }
    // The daemon puts its socket under our private TMPDIR: anywhere else, or
    // in a directory someone else could enter, it is not ours to trust.
    let private_tmp = match std::fs::canonicalize(runtime_root.join(runtime::TMP_DIR)) {
        Ok(path) => path,
        Err(e) => return SessionState::Unavailable(format!("cannot resolve the private tmp: {e}")),
    };
    let socket_dir = entry.socket_path.parent().unwrap_or(Path::new("/"));
    if !socket_dir.starts_with(&private_tmp) || socket_dir == private_tmp {
        return SessionState::Unavailable(format!(
            "the daemon socket {} is outside {}",
            entry.socket_path.display(),
            private_tmp.display()
        ));
    }
    for dir in socket_dir.ancestors().take_while(|d| *d != private_tmp) {
        if let Err(e) = runtime::check_private_dir(dir) {
            return SessionState::Unavailable(e.to_string());
        }
    }
    if entry.is_open() {
        SessionState::Ready(entry)
    } else {
        SessionState::Stale("its daemon does not answer".into())
    }
}
