//! The bound browser, shut (docs/DESIGN.md, invariant 13). From
//! @playwright/cli 0.1.20 the daemon *binds* the browser it attaches to: it
//! listens on a pipe socket (`<TMPDIR>/pw-<user hash>/browser/<id>.sock`)
//! and writes a descriptor naming it into a server registry, through which
//! any process that finds them (`playwright-cli attach mychrome`) gets the
//! whole Playwright protocol, past every check of ours. Nothing disables it.
//!
//! So children get `PWTEST_SERVER_REGISTRY` inside the private TMPDIR
//! ([`crate::runtime::bound_registry`]): socket and descriptor are born
//! inside the runtime, never in the user's cache. After `connect` both are
//! removed: a Unix socket whose path is gone takes no connection, so none
//! exists at all. Disconnect and recovery remove whatever a daemon that
//! died left there.

use std::fs;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path, PathBuf};

use crate::exit::Exit;
use crate::runtime::{self, Runtime};

/// A descriptor is a few hundred bytes of JSON.
const DESCRIPTOR_LIMIT: u64 = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum BoundError {
    #[error(
        "{} is not what a daemon of ours leaves there ({why}); it was left as it is",
        .path.display()
    )]
    Foreign { path: PathBuf, why: String },
    #[error("{} could not be {doing} ({source})", .path.display())]
    Io {
        path: PathBuf,
        doing: &'static str,
        source: io::Error,
    },
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
    let mut found = entries(&runtime::bound_registry(&runtime.tmp_dir()))?;
    found.extend(sockets(&runtime.tmp_dir())?);
    found.extend(outside(runtime, home)?);
    Ok(found)
}

/// Removes every door [`doors`] finds, after checking that each descriptor
/// names a socket in our TMPDIR (anything else stops it: it is not our
/// daemon's). How many it removed.
pub fn close(runtime: &Runtime, home: &Path) -> Result<usize, BoundError> {
    let tmp = runtime.tmp_dir();
    let mut removed = 0;
    for descriptor in entries(&runtime::bound_registry(&tmp))? {
        let endpoint = endpoint_of(&descriptor)?;
        if !inside(&endpoint, &tmp) {
            return Err(BoundError::Foreign {
                path: descriptor,
                why: format!("its endpoint {endpoint:?} is not in the private TMPDIR"),
            });
        }
        removed += remove_socket(Path::new(&endpoint))? as usize;
        remove(&descriptor)?;
        removed += 1;
    }
    // A daemon killed before its descriptor was written, or one from
    // before a recovery: sockets only our daemons create.
    for socket in sockets(&tmp)? {
        removed += remove_socket(&socket)? as usize;
    }
    for descriptor in outside(runtime, home)? {
        remove(&descriptor)?;
        removed += 1;
    }
    Ok(removed)
}

/// The files in `dir` (none when it does not exist).
fn entries(dir: &Path) -> Result<Vec<PathBuf>, BoundError> {
    let list = match fs::read_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other.map_err(io_error(dir, "listed"))?,
    };
    let mut found = Vec::new();
    for entry in list {
        found.push(entry.map_err(io_error(dir, "listed"))?.path());
    }
    found.sort();
    Ok(found)
}

/// Every entry of `<tmp>/pw-*/browser/`, where the daemon binds.
fn sockets(tmp: &Path) -> Result<Vec<PathBuf>, BoundError> {
    let mut found = Vec::new();
    for dir in entries(tmp)? {
        let is_hash_dir = dir
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("pw-"));
        if is_hash_dir {
            found.extend(entries(&dir.join("browser"))?);
        }
    }
    Ok(found)
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
        let Ok(endpoint) = endpoint_of(&descriptor) else {
            continue;
        };
        if inside(&endpoint, runtime.root()) {
            ours.push(descriptor);
        }
    }
    Ok(ours)
}

/// The `endpoint` a descriptor names.
fn endpoint_of(descriptor: &Path) -> Result<String, BoundError> {
    let foreign = |why: String| BoundError::Foreign {
        path: descriptor.to_path_buf(),
        why,
    };
    let meta = fs::symlink_metadata(descriptor).map_err(io_error(descriptor, "read"))?;
    if !meta.file_type().is_file() {
        return Err(foreign("not a plain file".into()));
    }
    if meta.len() > DESCRIPTOR_LIMIT {
        return Err(foreign(format!("larger than {DESCRIPTOR_LIMIT} bytes")));
    }
    let bytes = fs::read(descriptor).map_err(io_error(descriptor, "read"))?;
    let json: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| foreign(format!("not JSON: {e}")))?;
    json["endpoint"]
        .as_str()
        .map(String::from)
        .ok_or_else(|| foreign("no endpoint path".into()))
}

/// Whether `endpoint` is an absolute path below `dir`, with no `..`.
fn inside(endpoint: &str, dir: &Path) -> bool {
    let path = Path::new(endpoint);
    path.is_absolute()
        && path.starts_with(dir)
        && !path.components().any(|c| c == Component::ParentDir)
}

/// Removes `path` if it is a socket; whether it was there.
fn remove_socket(path: &Path) -> Result<bool, BoundError> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_error(path, "read")(e)),
        Ok(meta) if meta.file_type().is_socket() => {
            remove(path)?;
            Ok(true)
        }
        Ok(_) => Err(BoundError::Foreign {
            path: path.to_path_buf(),
            why: "a bound browser's endpoint that is no socket".into(),
        }),
    }
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
        assert!(inside("/rt/tmp/pw-1/browser/a.sock", dir));
        assert!(!inside("/rt/tmp/../x.sock", dir));
        assert!(!inside("/rt/tmpx/a.sock", dir));
        assert!(!inside("rt/tmp/a.sock", dir));
        assert!(!inside("ws://127.0.0.1:1/x", dir));
    }
}
