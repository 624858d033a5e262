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

/// The fields of a `.session` file that we use.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEntry {
    pub name: Option<String>,
    pub version: Option<String>,
    pub socket_path: PathBuf,
    #[serde(default)]
    pub attached: bool,
    /// The workspace the CLI that made it ran in (the CLI lists entries by
    /// it, else by the folder's hash).
    pub workspace_dir: Option<String>,
}

impl SessionEntry {
    /// A session is open when its daemon's socket accepts a connection
    /// (within a second: a daemon whose backlog is full is not open).
    pub fn is_open(&self) -> bool {
        crate::socket::connect_within(&self.socket_path, PROBE).is_ok()
    }

    /// Why no daemon listens on its socket, when none does (the socket is
    /// gone, or nothing listens on it): a daemon that is only slow to
    /// accept, or a connect that failed otherwise, is not ruled out here
    /// (its command's own bound says it does not answer).
    pub fn refused(&self) -> Option<io::Error> {
        match crate::socket::connect_within(&self.socket_path, PROBE) {
            Err(crate::socket::ConnectError::Refused(why))
                if matches!(
                    why.kind(),
                    io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound
                ) =>
            {
                Some(why)
            }
            _ => None,
        }
    }
}

/// Where every workspace's registry folder lies.
fn base_dir(home: &Path) -> PathBuf {
    home.join(crate::platform::CACHE_UNDER_HOME)
        .join("ms-playwright/daemon")
}

/// The registry directory the CLI uses for `workspace`.
pub fn daemon_dir(home: &Path, workspace: &Path) -> io::Result<PathBuf> {
    Ok(daemon_dir_of_real(home, &fs::canonicalize(workspace)?))
}

/// The same, for a workspace whose real path is `real` (which may be gone:
/// uninstall finds the folder of a runtime it is finishing removing).
pub fn daemon_dir_of_real(home: &Path, real: &Path) -> PathBuf {
    let hash = hex::encode(Sha1::digest(real.as_os_str().as_encoded_bytes()));
    base_dir(home).join(&hash[..16])
}

/// Where the CLI keeps session `name`'s entry for `workspace`.
pub fn entry_path(home: &Path, workspace: &Path, name: &str) -> io::Result<PathBuf> {
    Ok(daemon_dir(home, workspace)?.join(format!("{name}.session")))
}

/// Reads `<name>.session` for `workspace`. `Ok(None)` when there is none;
/// an unparsable file is an error.
pub fn read_entry(home: &Path, workspace: &Path, name: &str) -> io::Result<Option<SessionEntry>> {
    let path = entry_path(home, workspace, name)?;
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

/// An entry of the registry, in whichever workspace.
#[derive(Debug)]
pub struct Listed {
    /// The registry folder it is in.
    pub dir: PathBuf,
    /// Its file's name without `.session`: what the CLI looks a session
    /// up by.
    pub file: String,
    /// The session's name (the file's, unless the entry names one).
    pub name: String,
    pub entry: SessionEntry,
}

/// A `.session` file is a few hundred bytes: past this it is not one.
const ENTRY_LIMIT: u64 = 64 * 1024;

impl Listed {
    /// Whether this is session `name` of the registry folder `dir`: the
    /// file it is looked up by, whatever name an entry gives itself.
    pub fn is(&self, dir: &Path, name: &str) -> bool {
        self.dir == dir && self.file == name
    }

    /// The workspace as the CLI's `list` names it.
    pub fn workspace(&self) -> String {
        match &self.entry.workspace_dir {
            Some(dir) => dir.clone(),
            None => self
                .dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }
}

/// Every entry of every workspace, as the CLI's `list --all` finds them,
/// but strictly: an entry that cannot be read or is not one of the CLI's
/// is an error, never left out (the CLI skips it; an attach may hide
/// behind it). No registry at all is an empty list.
pub fn all_entries(home: &Path) -> io::Result<Vec<Listed>> {
    let base = base_dir(home);
    let folders = match fs::read_dir(&base) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other?,
    };
    let mut out = Vec::new();
    for folder in folders {
        let dir = folder?.path();
        if !fs::metadata(&dir)?.is_dir() {
            continue;
        }
        for file in fs::read_dir(&dir)? {
            let path = file?.path();
            let Some(name) = path.file_name() else {
                continue;
            };
            let invalid = |e: &dyn std::fmt::Display| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: {e}", path.display()),
                )
            };
            let Some(stem) = name.as_encoded_bytes().strip_suffix(b".session") else {
                continue;
            };
            // The CLI cannot load what it cannot name: neither do we skip it.
            let stem = std::str::from_utf8(stem)
                .map_err(|_| invalid(&"a session file whose name is not UTF-8"))?
                .to_string();
            // A regular file of a few hundred bytes: a link to a pipe or a
            // device must not hold connect.
            let meta = fs::symlink_metadata(&path).map_err(|e| invalid(&e))?;
            if !meta.is_file() || meta.len() > ENTRY_LIMIT {
                return Err(invalid(
                    &"not a session file (a link, a special file, or too large)",
                ));
            }
            let bytes = fs::read(&path).map_err(|e| invalid(&e))?;
            let entry: SessionEntry = serde_json::from_slice(&bytes).map_err(|e| invalid(&e))?;
            let name = entry.name.clone().unwrap_or_else(|| stem.clone());
            out.push(Listed {
                dir: dir.clone(),
                file: stem,
                name,
                entry,
            });
        }
    }
    Ok(out)
}

/// An attached session other than `session` of `workspace` whose daemon
/// answers, by name and workspace: what the CLI's `list --all` would show
/// as attached. A daemon that does not answer holds no browser.
pub fn other_attached(home: &Path, workspace: &Path, session: &str) -> io::Result<Option<String>> {
    let ours = daemon_dir(home, workspace)?;
    for listed in all_entries(home)? {
        if listed.entry.attached && !listed.is(&ours, session) && listed.entry.is_open() {
            return Ok(Some(format!(
                "{} (workspace {})",
                listed.name,
                listed.workspace()
            )));
        }
    }
    Ok(None)
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
            home.join(crate::platform::CACHE_UNDER_HOME)
                .join("ms-playwright/daemon/42099b4af021e53f")
        );
    }

    /// The workspace key `list` shows for an entry without `workspaceDir`.
    fn theirs_key(dir: &Path) -> String {
        dir.file_name().unwrap().to_string_lossy().into_owned()
    }

    #[test]
    fn another_attached_session_is_found_and_a_malformed_entry_refuses() {
        let home = tempfile::tempdir().unwrap();
        let workspace = home.path().join("runtime");
        fs::create_dir(&workspace).unwrap();
        let other_ws = home.path().join("elsewhere");
        fs::create_dir(&other_ws).unwrap();
        let ours = daemon_dir(home.path(), &workspace).unwrap();
        let theirs = daemon_dir(home.path(), &other_ws).unwrap();
        fs::create_dir_all(&ours).unwrap();
        fs::create_dir_all(&theirs).unwrap();
        let socket = home.path().join("live.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let write = |dir: &Path, file: &str, attached: bool, socket: &Path| {
            let entry = serde_json::json!({
                "version": "1", "socketPath": socket, "attached": attached,
                "workspaceDir": "/w"
            });
            fs::write(dir.join(file), entry.to_string()).unwrap();
        };
        let other = |ws: &Path| other_attached(home.path(), ws, "mychrome").unwrap();
        assert_eq!(other(&workspace), None, "no registry entries");
        // Ours, attached and live: not another.
        write(&ours, "mychrome.session", true, &socket);
        assert_eq!(other(&workspace), None);
        // The same name in another workspace is another session.
        assert_eq!(other(&other_ws), Some("mychrome (workspace /w)".into()));
        // Another name, not attached; attached but its daemon gone.
        write(&theirs, "x.session", false, &socket);
        write(&theirs, "y.session", true, &home.path().join("gone.sock"));
        fs::write(theirs.join("notes.txt"), "not an entry").unwrap();
        assert_eq!(other(&workspace), None);
        write(&theirs, "z.session", true, &socket);
        assert_eq!(other(&workspace), Some("z (workspace /w)".into()));
        fs::remove_file(theirs.join("z.session")).unwrap();
        // Ours is the file our session is looked up by, not whatever name
        // an entry gives itself.
        let posing = serde_json::json!({
            "name": "mychrome", "socketPath": socket, "attached": true
        });
        fs::write(ours.join("evil.session"), posing.to_string()).unwrap();
        assert_eq!(
            other(&workspace),
            Some("mychrome (workspace ".to_string() + &theirs_key(&ours) + ")")
        );
        fs::remove_file(ours.join("evil.session")).unwrap();
        // A link (to a pipe, a device, anything) is no session file.
        std::os::unix::fs::symlink("/dev/zero", theirs.join("zero.session")).unwrap();
        let err = other_attached(home.path(), &workspace, "mychrome").expect_err("a link");
        assert!(err.to_string().contains("zero.session"), "{err}");
        fs::remove_file(theirs.join("zero.session")).unwrap();
        // What the CLI's list would skip stops us instead.
        for bad in [
            "",
            "{broken",
            "[]",
            r#"{"socketPath": 3}"#,
            r#"{"socketPath": "/s", "attached": "yes"}"#,
        ] {
            fs::write(theirs.join("bad.session"), bad).unwrap();
            let err = other_attached(home.path(), &workspace, "mychrome").expect_err(bad);
            assert!(err.to_string().contains("bad.session"), "{bad}: {err}");
        }
    }
}
