//! Removing a tree my-chrome made (the runtime, a skill copy, the daemon's
//! registry folder), for `uninstall`. The whole tree is surveyed first and
//! removed only if every entry passes: owned by the user, on the tree's own
//! file system and no mount point (a bind mount too), a name my-chrome
//! makes at the top when the caller says which, and a link is removed as a
//! link, never followed. A folder the owner cannot write is given write
//! permission back only where my-chrome seals (the pinned CLI), walking
//! down from the tree's own handle without following a link; one anywhere
//! else is refused. A refusal removes nothing.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::exit::Exit;

#[derive(Debug, thiserror::Error)]
pub enum RemovalError {
    #[error(
        "{}: {rule}; nothing was removed. Move or remove it yourself, then run \
         `my-chrome uninstall` again",
        .path.display()
    )]
    Refused { path: PathBuf, rule: String },
    /// Found changed once removal had begun: what went before is said.
    #[error(
        "{}: {what}; the removal stopped there. Run `my-chrome uninstall` again",
        .path.display()
    )]
    Changed { path: PathBuf, what: &'static str },
    #[error("could not {action} {}: {source}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
}

impl RemovalError {
    pub fn exit(&self) -> Exit {
        match self {
            RemovalError::Refused { .. } | RemovalError::Changed { .. } => Exit::Security,
            RemovalError::Io { .. } => Exit::Failure,
        }
    }
}

fn refused(path: &Path, rule: impl Into<String>) -> RemovalError {
    RemovalError::Refused {
        path: path.to_path_buf(),
        rule: rule.into(),
    }
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> RemovalError {
    let path = path.to_path_buf();
    move |source| RemovalError::Io {
        action,
        path,
        source,
    }
}

/// What a tree must be to be removed, besides the user's and unmounted.
pub struct Rules<'a> {
    /// Whether a folder at this path (relative to the tree) lies where
    /// my-chrome seals, so that a read-only one there is its to unseal.
    pub sealed: &'a dyn Fn(&Path) -> bool,
    /// Whether a name directly in the tree is one my-chrome makes there;
    /// `None`: any name.
    pub top_level: Option<&'a dyn Fn(&str) -> bool>,
}

impl Rules<'_> {
    /// A tree with no seal and no rule for its names (a skill copy, the
    /// registry folder).
    pub const PLAIN: Rules<'static> = Rules {
        sealed: &|_| false,
        top_level: None,
    };
}

/// Which folder a tree is: its device and inode, for "is it still the one
/// surveyed".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    dev: u64,
    ino: u64,
}

impl Identity {
    /// The folder at `path` now, not following a link; `None` when there is
    /// nothing there.
    pub fn of(path: &Path) -> Option<Identity> {
        let meta = fs::symlink_metadata(path).ok()?;
        Some(Identity {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }
}

/// A tree that passed the survey.
#[derive(Debug)]
pub struct Survey {
    root: PathBuf,
    identity: Identity,
    /// Folders sealed read-only by my-chrome, relative to the root,
    /// parents before children.
    sealed: Vec<PathBuf>,
    entries: u64,
}

/// Surveys `root` under `rules`; `Ok(None)` when there is nothing there.
pub fn survey(root: &Path, rules: &Rules<'_>) -> Result<Option<Survey>, RemovalError> {
    let top = match fs::symlink_metadata(root) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error("inspect", root)(e)),
        Ok(meta) => meta,
    };
    if top.file_type().is_symlink() {
        return Err(refused(
            root,
            "is a symbolic link, not the folder my-chrome made",
        ));
    }
    if !top.is_dir() {
        return Err(refused(root, "is not a folder"));
    }
    // Removing it, or moving it aside, writes its parent folder.
    if let Some(parent) = root.parent() {
        use nix::unistd::{AccessFlags, access};
        if access(parent, AccessFlags::W_OK | AccessFlags::X_OK).is_err() {
            return Err(refused(
                root,
                format!(
                    "its folder {} is not one you can write, so it cannot be removed",
                    parent.display()
                ),
            ));
        }
    }
    let real_root = fs::canonicalize(root).map_err(io_error("resolve", root))?;
    let mounts: BTreeSet<PathBuf> = crate::platform::mount_points()
        .map_err(io_error("read the mount points for", root))?
        .into_iter()
        .collect();
    let me = nix::unistd::geteuid().as_raw();
    let mut survey = Survey {
        root: root.to_path_buf(),
        identity: Identity {
            dev: top.dev(),
            ino: top.ino(),
        },
        sealed: Vec::new(),
        entries: 0,
    };
    for entry in walkdir::WalkDir::new(root).follow_links(false) {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(root).to_path_buf();
            io_error("list", &path)(e.into())
        })?;
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap_or(path);
        if let (1, Some(made)) = (entry.depth(), rules.top_level) {
            let name = entry.file_name().to_string_lossy();
            if !made(&name) {
                return Err(refused(
                    path,
                    "is nothing my-chrome makes in its runtime, so the folder is not (only) \
                     my-chrome's",
                ));
            }
        }
        let meta = entry
            .metadata()
            .map_err(|e| io_error("inspect", path)(e.into()))?;
        if meta.uid() != me {
            return Err(refused(
                path,
                format!("is owned by uid {}, not by you (uid {me})", meta.uid()),
            ));
        }
        if meta.dev() != top.dev() || mounts.contains(&real_root.join(rel)) {
            return Err(refused(
                path,
                "is a mount point (something is mounted there)",
            ));
        }
        if meta.is_dir() && meta.mode() & 0o200 == 0 {
            if !(rules.sealed)(rel) {
                return Err(refused(
                    path,
                    format!(
                        "is a folder you cannot write (mode {:04o}), which my-chrome never makes \
                         outside its sealed copy of the pinned CLI",
                        meta.mode() & 0o7777
                    ),
                ));
            }
            survey.sealed.push(rel.to_path_buf());
        }
        survey.entries += 1;
    }
    Ok(Some(survey))
}

impl Survey {
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn identity(&self) -> Identity {
        self.identity
    }

    /// The same survey of the same folder, now at `path` (renamed there):
    /// [`Survey::remove`] checks that it is.
    pub fn moved_to(self, path: &Path) -> Survey {
        Survey {
            root: path.to_path_buf(),
            ..self
        }
    }

    /// How many entries the tree holds, itself included.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Unseals what the survey found sealed, then removes the tree, `last`
    /// (names directly in it, in that order) after everything else, and
    /// the folder itself at the very end: cut short, what is left still
    /// carries the last of them. None
    /// of it follows a link (std's `remove_dir_all` does not). A tree that
    /// is no longer the folder surveyed is refused, and nothing removed.
    pub fn remove(self, last: &[&str]) -> Result<(), RemovalError> {
        let root = open_dir(None, &self.root)?;
        let held = fs::File::from(root.try_clone().map_err(io_error("open", &self.root))?)
            .metadata()
            .map_err(io_error("inspect", &self.root))?;
        if (Identity {
            dev: held.dev(),
            ino: held.ino(),
        }) != self.identity
        {
            return Err(RemovalError::Changed {
                path: self.root.clone(),
                what: "is no longer the folder uninstall surveyed",
            });
        }
        for dir in &self.sealed {
            unseal(&root, &self.root, dir)?;
        }
        let names: Vec<_> = fs::read_dir(&self.root)
            .map_err(io_error("list", &self.root))?
            .map(|entry| entry.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(io_error("list", &self.root))?;
        for name in last_at_the_end(names, last) {
            let path = self.root.join(&name);
            let meta = fs::symlink_metadata(&path).map_err(io_error("inspect", &path))?;
            if meta.is_dir() {
                fs::remove_dir_all(&path).map_err(io_error("remove", &path))?;
            } else {
                fs::remove_file(&path).map_err(io_error("remove", &path))?;
            }
        }
        fs::remove_dir(&self.root).map_err(io_error("remove", &self.root))
    }
}

/// `names` with those of `last` moved to the end, in `last`'s order.
fn last_at_the_end(mut names: Vec<std::ffi::OsString>, last: &[&str]) -> Vec<std::ffi::OsString> {
    names.sort_by_key(|name| last.iter().position(|l| name == l).map_or(0, |at| at + 1));
    names
}

/// Opens the folder `name` in `parent` (or the path, without one), never
/// through a link in its last part.
fn open_dir(parent: Option<&OwnedFd>, name: &Path) -> Result<OwnedFd, RemovalError> {
    use nix::fcntl::{OFlag, open, openat};
    use nix::sys::stat::Mode;
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    match parent {
        Some(fd) => openat(fd, name, flags, Mode::empty()),
        None => open(name, flags, Mode::empty()),
    }
    .map_err(|e| io_error("open", name)(e.into()))
}

/// Owner read, write and search on the folder at `rel`, reached from the
/// tree's own handle one part at a time, no part through a link.
fn unseal(root: &OwnedFd, root_path: &Path, rel: &Path) -> Result<(), RemovalError> {
    use nix::sys::stat::{Mode, fchmod};
    let mut here: Option<OwnedFd> = None;
    for part in rel.components() {
        let next = open_dir(
            Some(here.as_ref().unwrap_or(root)),
            Path::new(part.as_os_str()),
        )
        .map_err(|_| RemovalError::Changed {
            path: root_path.join(rel),
            what: "changed while uninstall removed it",
        })?;
        here = Some(next);
    }
    let fd = here.as_ref().unwrap_or(root);
    fchmod(fd, Mode::from_bits_truncate(0o700))
        .map_err(|e| io_error("unseal", &root_path.join(rel))(e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn mode(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    fn only_cli(rel: &Path) -> bool {
        rel.starts_with("cli")
    }

    const CLI: Rules<'static> = Rules {
        sealed: &only_cli,
        top_level: None,
    };

    #[test]
    fn nothing_there_is_nothing_to_remove_but_a_path_that_cannot_be_looked_at_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(survey(&dir.path().join("gone"), &CLI).unwrap().is_none());
        fs::write(dir.path().join("file"), "x").unwrap();
        assert!(survey(&dir.path().join("file/below"), &CLI).is_err());
    }

    #[test]
    fn a_sealed_folder_swapped_for_a_file_is_not_unsealed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("runtime");
        fs::create_dir_all(root.join("cli/inner")).unwrap();
        mode(&root.join("cli/inner"), 0o500);
        let found = survey(&root, &CLI).unwrap().unwrap();
        mode(&root.join("cli/inner"), 0o700);
        fs::remove_dir(root.join("cli/inner")).unwrap();
        fs::write(root.join("cli/inner"), "x").unwrap();
        mode(&root.join("cli/inner"), 0o444);
        let err = found.remove(&[]).unwrap_err();
        assert!(matches!(err, RemovalError::Changed { .. }), "{err}");
        assert_eq!(
            fs::metadata(root.join("cli/inner"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o444
        );
    }

    #[test]
    fn a_sealed_copy_is_unsealed_and_removed_and_a_link_inside_is_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        let kept = outside.path().join("kept.txt");
        fs::write(&kept, "the user's").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("runtime");
        fs::create_dir_all(root.join("cli/node_modules/.bin")).unwrap();
        fs::write(root.join("cli/node_modules/a.js"), "x").unwrap();
        fs::write(root.join("claim"), "x").unwrap();
        symlink(&kept, root.join("cli/node_modules/.bin/a")).unwrap();
        // A link to a read-only folder, where sealed folders lie: not
        // followed, so not unsealed.
        symlink(outside.path(), root.join("cli/to-outside")).unwrap();
        mode(outside.path(), 0o555);
        for sub in ["cli/node_modules/.bin", "cli/node_modules", "cli"] {
            mode(&root.join(sub), 0o500);
        }
        let found = survey(&root, &CLI).unwrap().unwrap();
        assert_eq!(found.entries(), 8);
        assert_eq!(found.sealed.len(), 3);
        found.remove(&["claim"]).unwrap();
        assert!(!root.exists());
        assert_eq!(fs::read_to_string(&kept).unwrap(), "the user's");
        assert_eq!(
            fs::metadata(outside.path()).unwrap().permissions().mode() & 0o777,
            0o555,
            "the link's target was unsealed"
        );
        mode(outside.path(), 0o700);
    }

    #[test]
    fn a_sealed_folder_swapped_for_a_link_is_not_unsealed_through_it() {
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir(outside.path().join("inner")).unwrap();
        mode(&outside.path().join("inner"), 0o555);
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("runtime");
        fs::create_dir_all(root.join("cli/inner")).unwrap();
        mode(&root.join("cli/inner"), 0o500);
        let found = survey(&root, &CLI).unwrap().unwrap();
        // After the survey, `cli` becomes a link to a folder of the same shape.
        fs::rename(root.join("cli"), dir.path().join("old-cli")).unwrap();
        symlink(outside.path(), root.join("cli")).unwrap();
        let err = found.remove(&[]).unwrap_err();
        assert!(err.to_string().contains("changed while"), "{err}");
        assert_eq!(
            fs::metadata(outside.path().join("inner"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o555,
            "a folder outside was unsealed"
        );
        mode(&outside.path().join("inner"), 0o700);
        mode(&dir.path().join("old-cli/inner"), 0o700);
    }

    #[test]
    fn the_last_name_goes_last_and_a_swapped_tree_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("runtime");
        fs::create_dir_all(root.join("tmp")).unwrap();
        fs::write(root.join("claim"), "x").unwrap();
        fs::write(root.join("zz"), "x").unwrap();
        let found = survey(&root, &CLI).unwrap().unwrap();
        // Another folder in its place: not the one surveyed.
        fs::rename(&root, dir.path().join("moved")).unwrap();
        fs::create_dir(&root).unwrap();
        fs::write(root.join("the-users"), "x").unwrap();
        let err = found.remove(&["claim"]).unwrap_err();
        assert!(err.to_string().contains("no longer the folder"), "{err}");
        assert!(root.join("the-users").exists());
        let names = ["b", "claim", "a", "c"]
            .map(std::ffi::OsString::from)
            .to_vec();
        assert_eq!(
            last_at_the_end(names.clone(), &["claim"]),
            ["b", "a", "c", "claim"]
        );
        assert_eq!(
            last_at_the_end(names.clone(), &["claim", "b"]),
            ["a", "c", "claim", "b"]
        );
        assert_eq!(last_at_the_end(names.clone(), &[]), names);
        assert_eq!(last_at_the_end(names.clone(), &["zz"]), names);
    }

    #[test]
    fn names_not_made_here_or_a_read_only_folder_elsewhere_are_refused_and_nothing_goes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("runtime");
        fs::create_dir_all(root.join("tmp/locked")).unwrap();
        fs::write(root.join("state.json"), "{}").unwrap();
        let ours = |name: &str| ["tmp", "state.json"].contains(&name);
        let strict = Rules {
            sealed: &only_cli,
            top_level: Some(&ours),
        };
        mode(&root.join("tmp/locked"), 0o500);
        let err = survey(&root, &strict).unwrap_err();
        assert!(
            matches!(&err, RemovalError::Refused { path, .. } if path.ends_with("tmp/locked")),
            "{err}"
        );
        assert_eq!(err.exit(), Exit::Security);
        assert!(err.to_string().contains("nothing was removed"), "{err}");
        mode(&root.join("tmp/locked"), 0o700);
        fs::write(root.join("id_rsa"), "the user's").unwrap();
        let err = survey(&root, &strict).unwrap_err();
        assert!(
            matches!(&err, RemovalError::Refused { path, .. } if path.ends_with("id_rsa")),
            "{err}"
        );
        assert!(survey(&root, &CLI).is_ok(), "any name, without the rule");
        assert!(root.join("state.json").exists());
    }

    #[test]
    fn a_link_in_place_of_the_tree_is_refused_and_its_target_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("f"), "x").unwrap();
        let root = dir.path().join("runtime");
        symlink(&target, &root).unwrap();
        let err = survey(&root, &CLI).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(target.join("f").exists());
        fs::write(dir.path().join("file"), "x").unwrap();
        let err = survey(&dir.path().join("file"), &CLI).unwrap_err();
        assert!(err.to_string().contains("is not a folder"), "{err}");
    }
}
