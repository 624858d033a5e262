//! The bound browser, shut (docs/DESIGN.md, invariant 13). From
//! @playwright/cli 0.1.20 the daemon *binds* the browser it attaches to: it
//! listens on a pipe socket (`<TMPDIR>/pw-<user hash>/browser/<id>.sock`)
//! and writes a descriptor naming it into a server registry, through which
//! any process that finds them (`playwright-cli attach mychrome`) gets the
//! whole Playwright protocol, past every check of ours. Nothing disables it.
//!
//! So children get `PWTEST_SERVER_REGISTRY` inside the private TMPDIR
//! ([`crate::runtime::bound_registry`]): socket and descriptor are born
//! inside the runtime, never in the user's cache. After the attach both are
//! removed: a Unix socket whose path is gone takes no connection, so none
//! exists at all. Disconnect and recovery remove whatever a daemon that
//! died left there.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use nix::fcntl::OFlag;

use crate::exit::Exit;
use crate::runtime::{self, Runtime};

/// A descriptor is a few hundred bytes of JSON.
const DESCRIPTOR_LIMIT: u64 = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum BoundError {
    /// Entries no daemon of ours leaves; every bound socket was removed all
    /// the same.
    #[error(
        "{} {} not what a daemon of ours leaves in the runtime ({why}); left as {}. Every bound \
         socket was removed, so nothing can attach through them; look at {}, remove {} yourself, \
         then run the command again",
        listed(.paths),
        if .paths.len() == 1 { "is" } else { "are" },
        if .paths.len() == 1 { "it is" } else { "they are" },
        if .paths.len() == 1 { "it" } else { "them" },
        if .paths.len() == 1 { "it" } else { "them" }
    )]
    Foreign { paths: Vec<PathBuf>, why: String },
    #[error("{} could not be {doing} ({source}); run the command again", .path.display())]
    Io {
        path: PathBuf,
        doing: &'static str,
        source: io::Error,
    },
}

/// Paths as a message names them.
pub fn listed(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    shown.join(", ")
}

impl BoundError {
    pub fn exit(&self) -> Exit {
        match self {
            BoundError::Foreign { .. } => Exit::Security,
            BoundError::Io { .. } => Exit::Failure,
        }
    }
}

fn io_error<'a>(path: &'a Path, doing: &'static str) -> impl FnOnce(io::Error) -> BoundError + 'a {
    move |source| BoundError::Io {
        path: path.to_path_buf(),
        doing,
        source,
    }
}

/// Where another process could attach to our session: descriptors in the
/// private registry, bound sockets in the private TMPDIR, and descriptors
/// in the user's own server registry (`home`'s cache) whose endpoint lies
/// in our runtime.
pub fn doors(runtime: &Runtime, home: &Path) -> Result<Vec<PathBuf>, BoundError> {
    let tmp = runtime.tmp_dir();
    let mut found = sockets(&tmp)?;
    found.extend(entries(&runtime::bound_registry(&tmp))?);
    found.extend(outside(runtime, home)?);
    Ok(found)
}

/// Removes every door [`doors`] finds. Bound sockets go first and always
/// (only our daemons create them there); a descriptor goes when it names
/// one of them, else it is left and named (exit 6), as is anything in the
/// sockets' folders that is no socket.
pub fn close(runtime: &Runtime, home: &Path) -> Result<(), BoundError> {
    let tmp = runtime.tmp_dir();
    let mut foreign = Vec::new();
    for entry in sockets(&tmp)? {
        match fs::symlink_metadata(&entry) {
            Ok(meta) if meta.file_type().is_socket() => remove(&entry)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(&entry, "read")(e)),
            Ok(_) => foreign.push(entry),
        }
    }
    for descriptor in entries(&runtime::bound_registry(&tmp))? {
        match endpoint_of(&descriptor)? {
            Some(endpoint) if is_bound_socket(&endpoint, &tmp) => remove(&descriptor)?,
            None => {}
            Some(_) => foreign.push(descriptor),
        }
    }
    for descriptor in outside(runtime, home)? {
        remove(&descriptor)?;
    }
    if foreign.is_empty() {
        Ok(())
    } else {
        Err(BoundError::Foreign {
            paths: foreign,
            why: "neither a bound socket nor a descriptor naming one".into(),
        })
    }
}

/// The entries of `dir`: none when it does not exist; a link or anything
/// but a folder there is refused (it would lead elsewhere).
fn entries(dir: &Path) -> Result<Vec<PathBuf>, BoundError> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(dir, "read")(e)),
        Ok(meta) if !meta.is_dir() => {
            return Err(BoundError::Foreign {
                paths: vec![dir.to_path_buf()],
                why: "not a folder".into(),
            });
        }
        Ok(_) => {}
    }
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_error(dir, "listed"))? {
        found.push(entry.map_err(io_error(dir, "listed"))?.path());
    }
    found.sort();
    Ok(found)
}

/// Every entry of `<tmp>/pw-*/browser/`, where the daemon binds.
fn sockets(tmp: &Path) -> Result<Vec<PathBuf>, BoundError> {
    let mut found = Vec::new();
    for dir in entries(tmp)? {
        if is_hash_dir(&dir) {
            found.extend(entries(&dir.join("browser"))?);
        }
    }
    Ok(found)
}

fn is_hash_dir(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("pw-"))
}

/// Descriptors in the user's server registry whose endpoint is in our
/// runtime (a daemon started without our environment would write there).
fn outside(runtime: &Runtime, home: &Path) -> Result<Vec<PathBuf>, BoundError> {
    let registry = home
        .join(crate::platform::CACHE_UNDER_HOME)
        .join("ms-playwright/b");
    let mut ours = Vec::new();
    for descriptor in entries(&registry)? {
        // Other tools' descriptors are theirs to keep, readable or not.
        let Ok(Some(endpoint)) = endpoint_of(&descriptor) else {
            continue;
        };
        if is_inside(&endpoint, runtime.root()) {
            ours.push(descriptor);
        }
    }
    Ok(ours)
}

/// The `endpoint` a descriptor names (`None`: it is gone already). Opened
/// without following a link or waiting on a FIFO, and read within a limit.
fn endpoint_of(descriptor: &Path) -> Result<Option<String>, BoundError> {
    let foreign = |why: String| BoundError::Foreign {
        paths: vec![descriptor.to_path_buf()],
        why,
    };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
        .open(descriptor);
    let file: File = match file {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err(foreign("a link".into()));
        }
        other => other.map_err(io_error(descriptor, "read"))?,
    };
    let meta = file.metadata().map_err(io_error(descriptor, "read"))?;
    if !meta.is_file() {
        return Err(foreign("not a plain file".into()));
    }
    let mut bytes = Vec::new();
    file.take(DESCRIPTOR_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error(descriptor, "read"))?;
    if bytes.len() as u64 > DESCRIPTOR_LIMIT {
        return Err(foreign(format!("larger than {DESCRIPTOR_LIMIT} bytes")));
    }
    let json: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| foreign(format!("not JSON: {e}")))?;
    json["endpoint"]
        .as_str()
        .map(|e| Some(e.to_string()))
        .ok_or_else(|| foreign("no endpoint path".into()))
}

/// Whether `endpoint` is an absolute path below `dir`, with no `..`.
fn is_inside(endpoint: &str, dir: &Path) -> bool {
    let path = Path::new(endpoint);
    path.is_absolute()
        && path.starts_with(dir)
        && !path.components().any(|c| c == Component::ParentDir)
}

/// Whether `endpoint` has the one shape a bound socket of our daemons has:
/// `<tmp>/pw-*/browser/<name>.sock` (never, say, the daemon's own socket).
fn is_bound_socket(endpoint: &str, tmp: &Path) -> bool {
    let path = Path::new(endpoint);
    let folder = path.parent();
    is_inside(endpoint, tmp)
        && path.extension().is_some_and(|e| e == "sock")
        && folder
            .and_then(Path::file_name)
            .is_some_and(|n| n == "browser")
        && folder
            .and_then(Path::parent)
            .is_some_and(|hash| hash.parent() == Some(tmp) && is_hash_dir(hash))
}

fn remove(path: &Path) -> Result<(), BoundError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other.map_err(io_error(path, "removed")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_counts_only_inside_without_climbing() {
        let dir = Path::new("/rt/tmp");
        assert!(is_inside("/rt/tmp/pw-1/browser/a.sock", dir));
        assert!(!is_inside("/rt/tmp/../x.sock", dir));
        assert!(!is_inside("/rt/tmpx/a.sock", dir));
        assert!(!is_inside("rt/tmp/a.sock", dir));
        assert!(!is_inside("ws://127.0.0.1:1/x", dir));
    }

    #[test]
    fn only_a_bound_sockets_shape_is_one() {
        let tmp = Path::new("/rt/tmp");
        assert!(is_bound_socket("/rt/tmp/pw-0123abcd/browser/x.sock", tmp));
        for not in [
            // The daemon's own socket, which removing would end the session.
            "/rt/tmp/pw-0123abcd/cli/0123-mychrome.sock",
            "/rt/tmp/pw-0123abcd/browser/x.json",
            "/rt/tmp/other/browser/x.sock",
            "/rt/tmp/pw-1/deeper/browser/x.sock",
            "/rt/tmp/pw-1/browser/../cli/x.sock",
            "/elsewhere/pw-1/browser/x.sock",
        ] {
            assert!(!is_bound_socket(not, tmp), "{not}");
        }
    }
}
