//! Trusted Node: taken from fixed absolute locations only (or the absolute
//! `MY_CHROME_NODE`), never from the caller's `PATH`. npm is the `npm` next
//! to that node.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nodejs_semver::Version;

use super::pin::NodeRequirement;
use crate::child::{ChildCommand, ChildEnv, ChildError};
use crate::exit::Exit;
use crate::runtime::{Runtime, RuntimeError, StateFile};

const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone, Debug)]
pub struct Node {
    pub path: PathBuf,
    pub version: Version,
}

impl Node {
    /// The npm installed beside this node, with the same trust checks as node.
    pub fn npm(&self) -> Result<PathBuf, NodeError> {
        let npm = self.dir().join("npm");
        trusted_file(&npm).map_err(|problem| NodeError::Npm {
            path: npm.clone(),
            problem,
        })?;
        Ok(npm)
    }

    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("/"))
    }
}

/// The file at `path` (after links) as it is now: real path, device,
/// inode, mode, size, modification and change times (no one can set a
/// ctime back).
fn identity(path: &Path) -> Option<String> {
    let real = fs::canonicalize(path).ok()?;
    let meta = fs::metadata(&real).ok()?;
    Some(format!(
        "{} {} {:o} {} {}.{} {}.{} {}",
        meta.dev(),
        meta.ino(),
        meta.mode(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        real.display()
    ))
}

const RECORD_HEADER: &str = "my-chrome node record 1";

/// Records the node a full check just ran, with its file as it is now.
pub fn remember(runtime: &Runtime, node: &Node) -> Result<(), RuntimeError> {
    // A file that cannot be described now is simply not recorded.
    let Some(identity) = identity(&node.path) else {
        return runtime.remove_state(StateFile::NodeRecord);
    };
    let record = format!(
        "{RECORD_HEADER}\n{}\n{}\n{identity}\n",
        node.version,
        node.path.display()
    );
    runtime.write_state(StateFile::NodeRecord, record.as_bytes())
}

/// The version of the node at `path` when the record names that very file,
/// unchanged since a full check ran it; `None` otherwise (it must be run to
/// be known).
pub fn recalled_version(runtime: &Runtime, path: &Path) -> Option<Version> {
    // Volta's `node` is a shim that runs whichever node Volta picks now:
    // its own file says nothing about the version.
    if path.components().any(|c| c.as_os_str() == ".volta") {
        return None;
    }
    let bytes = runtime.read_state(StateFile::NodeRecord).ok()??;
    let text = String::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    if lines.next()? != RECORD_HEADER {
        return None;
    }
    let version = Version::parse(lines.next()?).ok()?;
    let (recorded_path, recorded_identity) = (lines.next()?, lines.next()?);
    (Path::new(recorded_path) == path && identity(path)? == recorded_identity).then_some(version)
}

#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error(
        "MY_CHROME_NODE={}: {problem}. Set MY_CHROME_NODE to a trusted node the pinned CLI \
         accepts, or unset it to look in the usual places",
        .path.display()
    )]
    Configured { path: PathBuf, problem: String },
    #[error(
        "no trusted node satisfies engines.node {requirement}. Looked at: {}. Install a Node that \
         satisfies it in one of those places, or set MY_CHROME_NODE to its absolute path.",
        .tried.join("; ")
    )]
    NotFound {
        requirement: String,
        tried: Vec<String>,
    },
    #[error(
        "{}: {problem}. setup needs the npm that belongs to the trusted node: install npm next to it, \
         or set MY_CHROME_NODE to a node that has one",
        .path.display()
    )]
    Npm { path: PathBuf, problem: String },
    /// Checking a candidate was interrupted: that is not a verdict on it.
    #[error(transparent)]
    Child(ChildError),
}

impl NodeError {
    pub fn exit(&self) -> Exit {
        match self {
            NodeError::Child(e) => e.exit(),
            NodeError::Configured { .. } | NodeError::NotFound { .. } | NodeError::Npm { .. } => {
                Exit::Usage
            }
        }
    }
}

/// Why a candidate could not be used.
#[derive(Debug)]
pub enum Rejected {
    /// Not usable: the reason is shown, and the next candidate is tried.
    Unusable(String),
    /// We were interrupted: stop looking.
    Interrupted(ChildError),
}

impl From<String> for Rejected {
    fn from(reason: String) -> Rejected {
        Rejected::Unusable(reason)
    }
}

/// The fixed places a trusted node may live, in order of preference: the
/// newest nvm version first, then Volta, then system locations.
pub fn candidates(home: &Path) -> Vec<PathBuf> {
    let mut nvm: Vec<(Version, PathBuf)> = fs::read_dir(home.join(".nvm/versions/node"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let version = Version::parse(name.strip_prefix('v')?).ok()?;
            Some((version, entry.path().join("bin/node")))
        })
        .collect();
    nvm.sort_by(|a, b| b.0.cmp(&a.0));
    let mut out: Vec<PathBuf> = nvm.into_iter().map(|(_, path)| path).collect();
    out.push(home.join(".volta/bin/node"));
    out.extend(crate::platform::SYSTEM_NODES.iter().map(PathBuf::from));
    out
}

/// Picks the node: `configured` when given (no fallback: the user chose it),
/// else the first candidate that passes the trust checks and whose version
/// satisfies `requirement`. `probe` reports a binary's version.
pub fn select(
    configured: Option<&Path>,
    candidates: &[PathBuf],
    requirement: &NodeRequirement,
    probe: impl Fn(&Path) -> Result<Version, Rejected>,
) -> Result<Node, NodeError> {
    let examine = |path: &Path| -> Result<Node, Rejected> {
        trusted_file(path)?;
        let version = probe(path)?;
        if !requirement.accepts(&version) {
            let why = format!("v{version} does not satisfy engines.node {requirement}");
            return Err(why.into());
        }
        Ok(Node {
            path: path.to_path_buf(),
            version,
        })
    };
    if let Some(path) = configured {
        return examine(path).map_err(|rejected| match rejected {
            Rejected::Interrupted(e) => NodeError::Child(e),
            Rejected::Unusable(problem) => NodeError::Configured {
                path: path.to_path_buf(),
                problem,
            },
        });
    }
    let mut tried = Vec::new();
    for path in candidates {
        match examine(path) {
            Ok(node) => return Ok(node),
            Err(Rejected::Interrupted(e)) => return Err(NodeError::Child(e)),
            Err(Rejected::Unusable(why)) => tried.push(format!("{} ({why})", path.display())),
        }
    }
    Err(NodeError::NotFound {
        requirement: requirement.to_string(),
        tried,
    })
}

/// Runs `<node> --version` in the child environment and parses `vX.Y.Z`.
pub fn probe(path: &Path, env: &ChildEnv) -> Result<Version, Rejected> {
    let finished = ChildCommand::new("node --version", path, Path::new("/"), PROBE_TIMEOUT)
        .arg("--version")
        .run(env)
        .map_err(|e| match e {
            ChildError::Interrupted { .. } => Rejected::Interrupted(e),
            other => Rejected::Unusable(other.to_string()),
        })?;
    let text = finished.stdout_text();
    let raw = text.trim();
    if !finished.status.success() {
        return Err(format!("--version failed ({})", finished.status).into());
    }
    raw.strip_prefix('v')
        .and_then(|v| Version::parse(v).ok())
        .ok_or_else(|| format!("--version printed {raw:?}, not a version").into())
}

/// The binary (after symlinks) must be a regular, executable file that only
/// root or we can change.
fn trusted_file(path: &Path) -> Result<(), String> {
    let real = fs::canonicalize(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "not found".to_string(),
        _ => e.to_string(),
    })?;
    let meta = fs::metadata(&real).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", real.display()));
    }
    if meta.mode() & 0o111 == 0 {
        return Err(format!("{} is not executable", real.display()));
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != 0 && meta.uid() != me {
        return Err(format!(
            "{} is owned by uid {}, neither root nor you",
            real.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!("{} is writable by other users", real.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::helper::pin::Pin;
    use std::os::unix::fs::PermissionsExt;

    fn fake_node(dir: &Path, name: &str, mode: u32) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    fn versions(
        map: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&Path) -> Result<Version, Rejected> {
        move |p: &Path| {
            let name = p.file_name().unwrap().to_str().unwrap();
            match map.iter().find(|(n, _)| *n == name) {
                Some((_, v)) => Ok(Version::parse(v).unwrap()),
                None => Err(Rejected::Unusable("no such node".into())),
            }
        }
    }

    #[test]
    fn first_trusted_candidate_new_enough_wins() {
        let dir = tempfile::tempdir().unwrap();
        let old = fake_node(dir.path(), "old", 0o755);
        let writable = fake_node(dir.path(), "writable", 0o777);
        let good = fake_node(dir.path(), "good", 0o755);
        let later = fake_node(dir.path(), "later", 0o755);
        let missing = dir.path().join("missing");
        let probe = versions(&[
            ("old", "18.19.0"),
            ("writable", "22.0.0"),
            ("good", "20.11.1"),
            ("later", "22.1.0"),
        ]);
        let req = &Pin::shipped().node;
        let node = select(
            None,
            &[missing, old, writable, good.clone(), later],
            req,
            probe,
        )
        .unwrap();
        assert_eq!(node.path, good);
        assert!(
            matches!(node.npm(), Err(NodeError::Npm { .. })),
            "no npm beside it yet"
        );
        fake_node(dir.path(), "npm", 0o755);
        assert_eq!(node.npm().unwrap(), dir.path().join("npm"));
    }

    #[test]
    fn none_acceptable_lists_what_was_tried() {
        let dir = tempfile::tempdir().unwrap();
        let old = fake_node(dir.path(), "old", 0o755);
        let noexec = fake_node(dir.path(), "noexec", 0o644);
        let err = select(
            None,
            &[old, noexec, dir.path().join("missing")],
            &Pin::shipped().node,
            versions(&[("old", "16.0.0")]),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("v16.0.0 does not satisfy"), "{err}");
        assert!(err.contains("not executable"), "{err}");
        assert!(err.contains("missing (not found)"), "{err}");
        assert!(err.contains("MY_CHROME_NODE"), "{err}");
    }

    #[test]
    fn a_configured_node_is_never_replaced_by_a_candidate() {
        let dir = tempfile::tempdir().unwrap();
        let old = fake_node(dir.path(), "old", 0o755);
        let good = fake_node(dir.path(), "good", 0o755);
        let err = select(
            Some(&old),
            &[good],
            &Pin::shipped().node,
            versions(&[("old", "18.0.0"), ("good", "20.0.0")]),
        )
        .unwrap_err();
        assert!(matches!(err, NodeError::Configured { .. }), "{err}");
    }

    #[test]
    fn nvm_versions_are_tried_newest_first() {
        let home = tempfile::tempdir().unwrap();
        for v in ["v18.20.0", "v22.3.0", "v20.1.0", "not-a-version"] {
            fs::create_dir_all(home.path().join(".nvm/versions/node").join(v).join("bin")).unwrap();
        }
        let list = candidates(home.path());
        let nvm: Vec<_> = list
            .iter()
            .filter_map(|p| p.strip_prefix(home.path().join(".nvm/versions/node")).ok())
            .collect();
        assert_eq!(
            nvm,
            [
                Path::new("v22.3.0/bin/node"),
                Path::new("v20.1.0/bin/node"),
                Path::new("v18.20.0/bin/node")
            ]
        );
        assert_eq!(list[3], home.path().join(".volta/bin/node"));
        assert!(list.iter().all(|p| p.is_absolute()));
    }
}
