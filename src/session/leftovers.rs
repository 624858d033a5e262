//! What a daemon of ours leaves in the runtime when it ends: Playwright
//! makes a `playwright-artifacts-*` folder in its TMPDIR (our private
//! `<runtime>/tmp`) for each browser it attaches to, and leaves it however
//! it ends; a daemon that is killed also leaves its socket (the registry
//! names it; nothing listens on it), which goes with the folders. Each connect records the folders its attach made
//! (`daemon-artifacts.json`, beside the other state files; a connect that
//! died is known by the list its bootstrap record kept of those there
//! before), and they are removed once that daemon is gone: by
//! `disconnect`, by the next `connect`, by the recovery of a killed one.
//! Only what a record names is removed, and only a real folder of ours
//! with that prefix, directly in `<runtime>/tmp`.

use std::fs;
use std::os::unix::fs::MetadataExt;

use serde::{Deserialize, Serialize};

use crate::runtime::{Runtime, RuntimeError, StateFile};

pub const PREFIX: &str = "playwright-artifacts-";

#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    artifacts: Vec<String>,
}

/// The artifacts folders in the runtime's TMPDIR now, by name.
pub fn present(runtime: &Runtime) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(runtime.tmp_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| is_artifacts_name(n))
        .collect();
    names.sort();
    names
}

/// `playwright-artifacts-` and Node's mkdtemp suffix (six characters).
fn is_artifacts_name(name: &str) -> bool {
    name.strip_prefix(PREFIX).is_some_and(|rest| {
        !rest.is_empty() && rest.len() <= 16 && rest.chars().all(|c| c.is_ascii_alphanumeric())
    })
}

fn read(runtime: &Runtime) -> Result<Record, RuntimeError> {
    let Some(bytes) = runtime.read_state(StateFile::Artifacts)? else {
        return Ok(Record::default());
    };
    // A record that is not ours names nothing to remove.
    Ok(serde_json::from_slice(&bytes).unwrap_or_default())
}

/// Records the folders that appeared since `before` (an attach's own).
pub fn record_new(runtime: &Runtime, before: &[String]) -> Result<(), RuntimeError> {
    let mut record = read(runtime)?;
    for name in present(runtime) {
        if !before.contains(&name) && !record.artifacts.contains(&name) {
            record.artifacts.push(name);
        }
    }
    let bytes = serde_json::to_vec(&record).expect("the record serialises");
    runtime.write_state(StateFile::Artifacts, &bytes)
}

/// Removes the folders the record names (their daemons are gone), then the
/// record. Returns how many were removed.
pub fn remove_recorded(runtime: &Runtime) -> Result<usize, RuntimeError> {
    let record = read(runtime)?;
    let removed = record
        .artifacts
        .iter()
        .filter(|name| remove_one(runtime, name))
        .count();
    runtime.remove_state(StateFile::Artifacts)?;
    Ok(removed)
}

/// Removes the folders that appeared since `before` (a connect that died:
/// its attach and daemon were stopped).
pub fn remove_since(runtime: &Runtime, before: &[String]) -> usize {
    present(runtime)
        .iter()
        .filter(|name| !before.contains(name) && remove_one(runtime, name))
        .count()
}

/// The socket a daemon of ours left when it was killed (nothing listens
/// on it; the registry entry of our session names it, inside our private
/// TMPDIR): removed when it is a socket of ours, and then the entry too (a
/// file of ours), as the daemon removes it when it stops and as the CLI's
/// `list` drops a dead one: an ended session leaves no stale entry behind.
/// A socket already gone counts as removed: the daemon removes its socket
/// first and its entry after, so one stopped in between (a slow daemon
/// killed by a detach) leaves the entry alone. Whether no socket is left.
pub fn remove_dead_socket(runtime: &Runtime, home: &std::path::Path, session: &str) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let Some(path) = super::state::dead_socket(home, runtime, session) else {
        return false;
    };
    let me = nix::unistd::geteuid().as_raw();
    let removed = match fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_socket() && meta.uid() == me => {
            fs::remove_file(&path).is_ok()
        }
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        Ok(_) => false,
    };
    if removed
        && let Ok(entry) = super::registry::entry_path(home, runtime.root(), session)
        && fs::symlink_metadata(&entry).is_ok_and(|m| m.is_file() && m.uid() == me)
    {
        let _ = fs::remove_file(&entry);
    }
    removed
}

/// One folder, when it is what a daemon of ours leaves: the name, directly
/// in `<runtime>/tmp`, a real folder (no link), ours.
fn remove_one(runtime: &Runtime, name: &str) -> bool {
    if !is_artifacts_name(name) {
        return false;
    }
    let path = runtime.tmp_dir().join(name);
    let me = nix::unistd::geteuid().as_raw();
    match fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() && meta.uid() == me => fs::remove_dir_all(&path).is_ok(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    use std::os::unix::net::UnixListener;
    use std::path::Path;

    /// Our session's registry entry, naming `socket`.
    fn name_socket(home: &Path, runtime: &Runtime, socket: &Path) {
        let dir = super::super::registry::daemon_dir(home, runtime.root()).unwrap();
        fs::create_dir_all(&dir).unwrap();
        let entry = serde_json::json!({"socketPath": socket, "attached": true});
        fs::write(dir.join("mychrome.session"), entry.to_string()).unwrap();
    }

    /// A socket file nothing listens on any more (its listener dropped).
    fn dead(path: &Path) {
        drop(UnixListener::bind(path).unwrap());
        assert!(path.exists());
    }

    #[test]
    fn only_the_dead_socket_our_entry_names_in_our_tmpdir_goes() {
        let (home, runtime) = crate::runtime::scratch();
        let dir = runtime.tmp_dir().join("pw-test/cli");
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .unwrap();
        let socket = dir.join("mychrome.sock");
        let gone = |home: &Path| remove_dead_socket(&runtime, home, "mychrome");
        let entry =
            super::super::registry::entry_path(home.path(), runtime.root(), "mychrome").unwrap();
        // No entry: nothing.
        assert!(!gone(home.path()));
        // A daemon still listening: its socket and its entry stay.
        let listening = UnixListener::bind(&socket).unwrap();
        name_socket(home.path(), &runtime, &socket);
        assert!(!gone(home.path()));
        assert!(socket.exists() && entry.exists());
        // Killed: nothing listens, the socket goes, and the entry with it.
        drop(listening);
        assert!(gone(home.path()) && !socket.exists());
        assert!(!entry.exists(), "a dead session's entry stays behind");
        // Its socket removed by the daemon, which was stopped before its
        // entry: the entry goes.
        name_socket(home.path(), &runtime, &socket);
        assert!(gone(home.path()) && !socket.exists());
        assert!(!entry.exists(), "an entry naming no socket stays behind");
        // An entry that is a link: the socket goes, the link and what it
        // names stay (never followed).
        dead(&socket);
        let elsewhere = home.path().join("elsewhere.session");
        let named = serde_json::json!({"socketPath": socket, "attached": true});
        fs::write(&elsewhere, named.to_string()).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &entry).unwrap();
        assert!(gone(home.path()) && !socket.exists());
        assert!(fs::symlink_metadata(&entry).is_ok() && elsewhere.exists());
        fs::remove_file(&entry).unwrap();
        // Dead, but outside our TMPDIR: not ours to remove.
        let outside = home.path().join("outside.sock");
        dead(&outside);
        name_socket(home.path(), &runtime, &outside);
        assert!(!gone(home.path()) && outside.exists());
        // A link in our TMPDIR to a dead socket: not followed, left.
        let link = dir.join("link.sock");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        name_socket(home.path(), &runtime, &link);
        assert!(!gone(home.path()));
        assert!(fs::symlink_metadata(&link).is_ok() && outside.exists());
        // In a folder others could enter: not trusted, left.
        let open = runtime.tmp_dir().join("pw-open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o755)).unwrap();
        let exposed = open.join("mychrome.sock");
        dead(&exposed);
        name_socket(home.path(), &runtime, &exposed);
        assert!(!gone(home.path()) && exposed.exists());
        // A plain file where the socket was: not a socket, left, and so
        // is the entry.
        fs::write(&socket, "").unwrap();
        name_socket(home.path(), &runtime, &socket);
        assert!(!gone(home.path()) && socket.exists() && entry.exists());
    }

    #[test]
    fn only_node_mkdtemp_names_count() {
        for ok in ["playwright-artifacts-LcUMKe", "playwright-artifacts-S7Dr4Q"] {
            assert!(is_artifacts_name(ok), "{ok}");
        }
        for bad in [
            "playwright-artifacts-",
            "playwright-artifacts-../x",
            "playwright-artifacts-a/b",
            "pw-dc76e9f0",
            "bound-browsers",
            "playwright-artifacts-aaaaaaaaaaaaaaaaaaaa",
            "playwright-artifacts-aaaaaaaaaaaaaaaaa",
            "playwright-artifacts-abc_de",
        ] {
            assert!(!is_artifacts_name(bad), "{bad}");
        }
        assert!(is_artifacts_name("playwright-artifacts-aaaaaaaaaaaaaaaa"));
    }

    fn folder(runtime: &Runtime, name: &str) {
        fs::DirBuilder::new()
            .mode(0o700)
            .create(runtime.tmp_dir().join(name))
            .unwrap();
    }

    fn exists(runtime: &Runtime, name: &str) -> bool {
        fs::symlink_metadata(runtime.tmp_dir().join(name)).is_ok()
    }

    #[test]
    fn an_attach_records_only_the_folders_it_made_and_they_go_with_its_daemon() {
        let (home, runtime) = crate::runtime::scratch();
        folder(&runtime, "playwright-artifacts-OLD111");
        folder(&runtime, "something-else");
        let before = present(&runtime);
        assert_eq!(before, ["playwright-artifacts-OLD111"]);
        folder(&runtime, "playwright-artifacts-NEW222");
        folder(&runtime, "playwright-artifacts-NEW111");
        record_new(&runtime, &before).unwrap();
        record_new(&runtime, &before).unwrap();
        assert_eq!(
            read(&runtime).unwrap().artifacts,
            ["playwright-artifacts-NEW111", "playwright-artifacts-NEW222"],
            "sorted, each once"
        );
        // One of them replaced by a link to a folder elsewhere: not followed.
        let elsewhere = home.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        fs::remove_dir(runtime.tmp_dir().join("playwright-artifacts-NEW222")).unwrap();
        std::os::unix::fs::symlink(
            &elsewhere,
            runtime.tmp_dir().join("playwright-artifacts-NEW222"),
        )
        .unwrap();
        assert_eq!(remove_recorded(&runtime).unwrap(), 1);
        assert!(!exists(&runtime, "playwright-artifacts-NEW111"));
        assert!(exists(&runtime, "playwright-artifacts-NEW222") && elsewhere.exists());
        assert!(exists(&runtime, "playwright-artifacts-OLD111"));
        assert_eq!(runtime.read_state(StateFile::Artifacts).unwrap(), None);
        // A record edited to name anything else removes nothing.
        runtime
            .write_state(
                StateFile::Artifacts,
                br#"{"artifacts":["something-else","../runtime"]}"#,
            )
            .unwrap();
        assert_eq!(remove_recorded(&runtime).unwrap(), 0);
        assert!(exists(&runtime, "something-else"));
    }

    #[test]
    fn a_connect_that_died_leaves_only_the_folders_there_before_it() {
        let (_home, runtime) = crate::runtime::scratch();
        folder(&runtime, "playwright-artifacts-OLD111");
        let before = present(&runtime);
        folder(&runtime, "playwright-artifacts-NEW111");
        folder(&runtime, "playwright-artifacts-NEW222");
        assert_eq!(remove_since(&runtime, &before), 2);
        assert_eq!(present(&runtime), before);
    }
}
