//! The Playwright CLI's session registry:
//! `<cache>/ms-playwright/daemon/<hash>/<name>.session`, where `<cache>` is
//! `~/.cache` on Linux and `~/Library/Caches` on macOS (our children never see
//! `XDG_CACHE_HOME` or `PWTEST_DAEMON_SESSION_DIR`, so only `HOME` counts), and
//! `<hash>` is the first 16 hex digits of SHA-1 of the workspace directory
//! (the runtime, as the CLI sees it: with symlinks resolved).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use std::time::Duration;

use serde::Deserialize;
use sha1::{Digest, Sha1};

/// How long a liveness probe waits for the daemon to take a connection.
const PROBE: Duration = Duration::from_secs(1);

#[cfg(target_os = "macos")]
const CACHE_UNDER_HOME: &str = "Library/Caches";
#[cfg(not(target_os = "macos"))]
const CACHE_UNDER_HOME: &str = ".cache";

/// The fields of a `.session` file that we use.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEntry {
    pub name: Option<String>,
    pub version: Option<String>,
    pub socket_path: PathBuf,
    #[serde(default)]
    pub attached: bool,
}

impl SessionEntry {
    /// A session is open when its daemon's socket accepts a connection
    /// (within a second: a daemon whose backlog is full is not open).
    pub fn is_open(&self) -> bool {
        crate::socket::connect_within(&self.socket_path, PROBE).is_ok()
    }
}

/// The registry directory the CLI uses for `workspace`.
pub fn daemon_dir(home: &Path, workspace: &Path) -> io::Result<PathBuf> {
    let real = fs::canonicalize(workspace)?;
    let hash = hex::encode(Sha1::digest(real.as_os_str().as_encoded_bytes()));
    Ok(home
        .join(CACHE_UNDER_HOME)
        .join("ms-playwright/daemon")
        .join(&hash[..16]))
}

/// Reads `<name>.session` for `workspace`. `Ok(None)` when there is none;
/// an unparsable file is an error.
pub fn read_entry(home: &Path, workspace: &Path, name: &str) -> io::Result<Option<SessionEntry>> {
    let path = daemon_dir(home, workspace)?.join(format!("{name}.session"));
    let bytes = match fs::read(&path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        other => other?,
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_sha1_of_the_resolved_workspace() {
        let home = Path::new("/home/u");
        let dir = daemon_dir(home, Path::new("/")).unwrap();
        // SHA-1("/") = 42099b4af021e53fd8fd4e056c2568d7c2e3ffa8
        assert_eq!(
            dir,
            home.join(CACHE_UNDER_HOME)
                .join("ms-playwright/daemon/42099b4af021e53f")
        );
    }
}
