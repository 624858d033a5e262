//! Removing a tree my-chrome made (the runtime, a skill copy, the daemon's
//! registry folder), for `uninstall`. The whole tree is surveyed first and
//! removed only if every entry passes: owned by the user, on the tree's own
//! file system (a mount point inside is not descended into), and a link is
//! removed as a link, never followed. A directory the owner cannot write is
//! given write permission back only where my-chrome seals (the pinned
//! CLI); one anywhere else is refused. A refusal removes nothing.

use std::fs;
use std::io;
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
            RemovalError::Refused { .. } => Exit::Security,
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

/// A tree that passed the survey.
#[derive(Debug)]
pub struct Survey {
    root: PathBuf,
    /// Directories sealed read-only by my-chrome, parents before children.
    sealed: Vec<PathBuf>,
    entries: u64,
}

/// Surveys `root`; `Ok(None)` when there is nothing there. `sealed(rel)`
/// says whether a directory at `rel` (relative to `root`) lies where
/// my-chrome seals, so that a read-only one there is ours to unseal.
pub fn survey(root: &Path, sealed: &dyn Fn(&Path) -> bool) -> Result<Option<Survey>, RemovalError> {
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
    let me = nix::unistd::geteuid().as_raw();
    let mut survey = Survey {
        root: root.to_path_buf(),
        sealed: Vec::new(),
        entries: 0,
    };
    for entry in walkdir::WalkDir::new(root).follow_links(false) {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(root).to_path_buf();
            io_error("list", &path)(e.into())
        })?;
        let path = entry.path();
        let meta = entry
            .metadata()
            .map_err(|e| io_error("inspect", path)(e.into()))?;
        if meta.uid() != me {
            return Err(refused(
                path,
                format!("is owned by uid {}, not by you (uid {me})", meta.uid()),
            ));
        }
        if meta.dev() != top.dev() {
            return Err(refused(
                path,
                "is on another file system (something is mounted there)",
            ));
        }
        if meta.is_dir() && meta.mode() & 0o200 == 0 {
            let rel = path.strip_prefix(root).unwrap_or(path);
            if !sealed(rel) {
                return Err(refused(
                    path,
                    format!(
                        "is a folder you cannot write (mode {:04o}), which my-chrome never makes \
                         outside its sealed copy of the pinned CLI",
                        meta.mode() & 0o7777
                    ),
                ));
            }
            survey.sealed.push(path.to_path_buf());
        }
        survey.entries += 1;
    }
    Ok(Some(survey))
}

impl Survey {
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How many entries the tree holds, itself included.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Unseals what the survey found sealed, then removes the tree. Neither
    /// step follows a link (std's `remove_dir_all` does not).
    pub fn remove(self) -> Result<(), RemovalError> {
        for dir in &self.sealed {
            unseal(dir)?;
        }
        fs::remove_dir_all(&self.root).map_err(io_error("remove", &self.root))
    }
}

/// Owner read, write and search on one directory, opened without following
/// a link in its last component (the ones above it were surveyed).
fn unseal(dir: &Path) -> Result<(), RemovalError> {
    use nix::fcntl::{OFlag, open};
    use nix::sys::stat::{Mode, fchmod};
    let fd = open(
        dir,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io_error("open", dir)(e.into()))?;
    fchmod(&fd, Mode::from_bits_truncate(0o700)).map_err(|e| io_error("unseal", dir)(e.into()))
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

    #[test]
    fn nothing_there_is_nothing_to_remove() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            survey(&dir.path().join("gone"), &only_cli)
                .unwrap()
                .is_none()
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
        symlink(&kept, root.join("cli/node_modules/.bin/a")).unwrap();
        // A link to a read-only folder, where sealed folders lie: not
        // followed, so not unsealed.
        symlink(outside.path(), root.join("cli/to-outside")).unwrap();
        mode(outside.path(), 0o555);
        for sub in ["cli/node_modules/.bin", "cli/node_modules", "cli"] {
            mode(&root.join(sub), 0o500);
        }
        let found = survey(&root, &only_cli).unwrap().unwrap();
        assert_eq!(found.entries(), 7);
        assert_eq!(found.sealed.len(), 3);
        found.remove().unwrap();
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
    fn a_read_only_folder_outside_the_sealed_places_is_refused_and_nothing_goes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("runtime");
        fs::create_dir_all(root.join("tmp/locked")).unwrap();
        fs::write(root.join("state.json"), "{}").unwrap();
        mode(&root.join("tmp/locked"), 0o500);
        let err = survey(&root, &only_cli).unwrap_err();
        assert!(
            matches!(&err, RemovalError::Refused { path, .. } if path.ends_with("tmp/locked")),
            "{err}"
        );
        assert_eq!(err.exit(), Exit::Security);
        assert!(err.to_string().contains("nothing was removed"), "{err}");
        assert!(root.join("state.json").exists());
        mode(&root.join("tmp/locked"), 0o700);
    }

    #[test]
    fn a_link_in_place_of_the_tree_is_refused_and_its_target_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("f"), "x").unwrap();
        let root = dir.path().join("runtime");
        symlink(&target, &root).unwrap();
        let err = survey(&root, &only_cli).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(target.join("f").exists());
        fs::write(dir.path().join("file"), "x").unwrap();
        let err = survey(&dir.path().join("file"), &only_cli).unwrap_err();
        assert!(err.to_string().contains("is not a folder"), "{err}");
    }
}
