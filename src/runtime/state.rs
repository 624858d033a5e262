//! The private state files: the fixed list of them, each read bounded,
//! written whole (atomically, and synced where it must outlive a power
//! loss) and removed.

use std::fs;
use std::io::{self, Read, Write};

use super::private::{check_private_file, open_no_follow, refusal_or_io};
use super::{Runtime, RuntimeError, STATE_LIMIT, STATE_TEMP_PREFIX, io_error, unsafe_path};

/// The fixed list of private state files; nothing else is ever written by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateFile {
    /// SHA-256 of the token before a rotation began.
    RotationBaseline,
    /// The Chrome PID recorded when the user marked the token regenerated.
    RotationMarker,
    /// Where a connect's private bootstrap output lives, until it is scrubbed.
    Bootstrap,
    /// Which command is running on the shared browser session now.
    Lease,
    /// Commands past their bound that the daemon may still answer
    /// (src/lease/late.rs).
    Late,
    /// Every tab of the session: its id, owner and label (src/tabs/).
    Tabs,
    /// The helper tree as its last full check found it.
    HelperManifest,
    /// The stored token's salted fingerprint, for the redactor.
    TokenFingerprint,
    /// The node the last full check ran, and its file as it was then.
    NodeRecord,
    /// The browser `setup --browser NAME` chose.
    Browser,
    /// The artifacts folders our daemons made (src/session/leftovers.rs).
    Artifacts,
    /// The executable of the browser the session is attached to.
    SessionBrowser,
    /// The next tab id (src/tabs/): ids go on from it even when the book
    /// is removed.
    TabIds,
    /// The user's settings, written by `my-chrome setup` (src/settings.rs).
    Settings,
    /// The session's idle and lifetime limits and its watcher
    /// (src/session/limits.rs).
    SessionLimits,
    /// Why the session ended by itself, until the next connect or disconnect.
    SessionEnded,
    /// The agent names registered in the session (src/identity/registry.rs).
    AgentNames,
    /// Which agent's command made which file or folder in the roots
    /// (src/file_owners.rs); it outlives sessions, as the files do.
    FileOwners,
}

impl StateFile {
    /// Every state file (a unit test holds it to the enum).
    pub const ALL: [StateFile; 18] = [
        StateFile::RotationBaseline,
        StateFile::RotationMarker,
        StateFile::Bootstrap,
        StateFile::Lease,
        StateFile::Late,
        StateFile::Tabs,
        StateFile::HelperManifest,
        StateFile::TokenFingerprint,
        StateFile::NodeRecord,
        StateFile::Browser,
        StateFile::Artifacts,
        StateFile::SessionBrowser,
        StateFile::TabIds,
        StateFile::Settings,
        StateFile::SessionLimits,
        StateFile::SessionEnded,
        StateFile::AgentNames,
        StateFile::FileOwners,
    ];

    pub fn file_name(self) -> &'static str {
        match self {
            StateFile::RotationBaseline => "rotation-baseline.json",
            StateFile::RotationMarker => "rotation-marker.json",
            StateFile::Bootstrap => "bootstrap.json",
            StateFile::Lease => "lease.json",
            StateFile::Late => "late.json",
            StateFile::Tabs => "tabs.json",
            StateFile::HelperManifest => "cli-manifest.txt",
            StateFile::TokenFingerprint => "token-fingerprint.txt",
            StateFile::NodeRecord => "node-record.txt",
            StateFile::Browser => "browser.txt",
            StateFile::Artifacts => "daemon-artifacts.json",
            StateFile::SessionBrowser => "session-browser.txt",
            StateFile::TabIds => "tab-ids.txt",
            StateFile::Settings => "settings.json",
            StateFile::SessionLimits => "session-limits.json",
            StateFile::SessionEnded => "session-ended.json",
            StateFile::AgentNames => "agent-names.json",
            StateFile::FileOwners => "file-owners.json",
        }
    }

    /// Whether a write must reach the disk before it counts. The lease and
    /// the tab book are rewritten by every browser command and mean nothing
    /// after a restart (the session is gone then), so they are not synced:
    /// after a power loss either may be gone, empty or zero-filled (a lease
    /// reads as none; a book stops commands until the user reconnects). The
    /// next tab id is (it is written only when a new tab appears): ids
    /// given before a power loss are not given again. The agent names end
    /// with the session, as the book does.
    /// The most a state file may hold: the record of agents' files holds
    /// thousands of paths, every other file far less.
    pub fn limit(self) -> u64 {
        match self {
            StateFile::FileOwners => 16 * STATE_LIMIT,
            _ => STATE_LIMIT,
        }
    }

    pub(super) fn durable(self) -> bool {
        !matches!(
            self,
            StateFile::Lease | StateFile::Late | StateFile::Tabs | StateFile::AgentNames
        )
    }
}

impl Runtime {
    /// Reads a private state file. `Ok(None)` when it does not exist; a file
    /// that is a symlink, not ours, not 0600 or oversized is refused, exit 6.
    pub fn read_state(&self, which: StateFile) -> Result<Option<Vec<u8>>, RuntimeError> {
        let path = self.root.join(which.file_name());
        let mut file = match open_no_follow(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(refusal_or_io(e, &path, "open")),
        };
        check_private_file(&file, &path)?;
        let mut bytes = Vec::new();
        (&mut file)
            .take(which.limit() + 1)
            .read_to_end(&mut bytes)
            .map_err(io_error("read", &path))?;
        if bytes.len() as u64 > which.limit() {
            return Err(unsafe_path(
                &path,
                format!("is larger than {} bytes", which.limit()),
            ));
        }
        Ok(Some(bytes))
    }

    /// Writes a private state file atomically: a 0600 temporary file in the
    /// runtime, synced (when the file is durable), then renamed over the old
    /// one.
    pub fn write_state(&self, which: StateFile, bytes: &[u8]) -> Result<(), RuntimeError> {
        let path = self.root.join(which.file_name());
        let mut temp = tempfile::Builder::new()
            .prefix(STATE_TEMP_PREFIX)
            .tempfile_in(&self.root)
            .map_err(io_error("create a temporary file in", &self.root))?;
        temp.write_all(bytes)
            .map_err(io_error("write", temp.path()))?;
        if which.durable() {
            temp.as_file().sync_all().map_err(io_error("sync", &path))?;
        }
        // Removed when dropped: the old file after an exchange, or ours
        // when the replace failed.
        let temp = temp.into_temp_path();
        crate::platform::replace_file(&temp, &path).map_err(io_error("replace", &path))?;
        // Nothing is left at its name (the old file went with it).
        let _ = temp.keep();
        Ok(())
    }

    pub fn remove_state(&self, which: StateFile) -> Result<(), RuntimeError> {
        let path = self.root.join(which.file_name());
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error("remove", &path)(e)),
            _ => Ok(()),
        }
    }
}
