//! Is our session usable, read natively (no Node process): the CLI's
//! registry entry, the daemon socket's private directory, the version that
//! made it, and whether the socket answers.

use std::path::Path;

use super::registry::{self, SessionEntry};
use crate::runtime::{self, Runtime};

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

/// The state of session `name` in the (checked) runtime, whose children run
/// with `TMPDIR=<runtime>/tmp`; `core_version` is the playwright-core version
/// of the pin. Its daemon must answer a connection.
pub fn session_state(
    home: &Path,
    runtime: &Runtime,
    name: &str,
    core_version: &str,
) -> SessionState {
    classify(home, runtime, name, core_version, true)
}

/// The same, without knocking on the daemon: for a caller whose own request
/// is the knock (a daemon that does not answer it is just as stale).
pub fn registered_state(
    home: &Path,
    runtime: &Runtime,
    name: &str,
    core_version: &str,
) -> SessionState {
    classify(home, runtime, name, core_version, false)
}

fn classify(
    home: &Path,
    runtime: &Runtime,
    name: &str,
    core_version: &str,
    probe: bool,
) -> SessionState {
    let entry = match registry::read_entry(home, runtime.root(), name) {
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
    if let Err(why) = check_socket_dir(runtime, &entry.socket_path) {
        return SessionState::Unavailable(why);
    }
    if probe && !entry.is_open() {
        return SessionState::Stale("its daemon does not answer".into());
    }
    // An open daemon that is not attached to Chrome (a failed attach left
    // behind, say) is no session to use.
    if !entry.attached || entry.name.as_deref().is_some_and(|n| n != name) {
        return SessionState::Stale("its daemon is not attached to the browser".into());
    }
    SessionState::Ready(entry)
}

/// The socket of our session's daemon when one answers there, attached or
/// not, made by any version: something to stop. Only inside our private
/// TMPDIR, as for any use.
pub fn open_socket(home: &Path, runtime: &Runtime, name: &str) -> Option<std::path::PathBuf> {
    let entry = registry::read_entry(home, runtime.root(), name).ok()??;
    check_socket_dir(runtime, &entry.socket_path).ok()?;
    entry.is_open().then_some(entry.socket_path)
}

/// The socket our session's daemon left when nothing listens there any
/// more (the daemon was killed): only inside our private TMPDIR.
pub fn dead_socket(home: &Path, runtime: &Runtime, name: &str) -> Option<std::path::PathBuf> {
    let entry = registry::read_entry(home, runtime.root(), name).ok()??;
    check_socket_dir(runtime, &entry.socket_path).ok()?;
    entry.refused().is_some().then_some(entry.socket_path)
}

/// The daemon puts its socket under our private TMPDIR: anywhere else, or
/// in a directory someone else could enter, it is not ours to trust. The
/// path is resolved first, so `..` or a symlink cannot lead elsewhere.
fn check_socket_dir(runtime: &Runtime, socket: &Path) -> Result<(), String> {
    let outside = || {
        format!(
            "the daemon socket {} is outside {}",
            socket.display(),
            runtime.tmp_dir().display()
        )
    };
    let dir = socket.parent().unwrap_or(Path::new("/"));
    if !dir.starts_with(runtime.tmp_dir()) {
        return Err(outside());
    }
    let private_tmp = std::fs::canonicalize(runtime.tmp_dir())
        .map_err(|e| format!("cannot resolve the private tmp: {e}"))?;
    let real = std::fs::canonicalize(dir)
        .map_err(|e| format!("the daemon socket's directory {}: {e}", dir.display()))?;
    if !real.starts_with(&private_tmp) || real == private_tmp {
        return Err(outside());
    }
    for ancestor in real.ancestors().take_while(|d| *d != private_tmp) {
        runtime::check_private_dir(ancestor).map_err(|e| e.to_string())?;
    }
    Ok(())
}
