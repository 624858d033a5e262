//! What the full check verified, entry by entry: the helper tree as it was
//! when its digest and version last passed (path, kind, mode, size, inode,
//! mtime, ctime — no one can set a ctime back). Kept as a private state file;
//! before any code of the helper runs, the tree must still be exactly that,
//! which a walk of `lstat`s tells in about a millisecond instead of the
//! digest's second. The walk goes from directory to directory by their
//! descriptors (`openat`, `fstatat`): each look-up is one name, not the
//! whole path again, and no link met on the way is followed.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use nix::dir::Dir;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{FileStat, Mode, SFlag, fstatat};

/// One entry of the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// Relative to the helper directory; "." for the directory itself.
    path: String,
    line: String,
}

/// The tree as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    entries: Vec<Entry>,
}

/// The first way a tree differs from its record.
#[derive(Debug, PartialEq, Eq)]
pub struct Difference {
    pub path: String,
    pub what: &'static str,
}

/// What the record keeps of one entry's `lstat`.
struct Stat {
    /// `l`ink, `d`irectory, `f`ile, or `?`.
    kind: char,
    mode: u32,
    size: i64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stat {
    fn of_metadata(meta: &fs::Metadata) -> Stat {
        let kind = if meta.file_type().is_symlink() {
            'l'
        } else if meta.is_dir() {
            'd'
        } else if meta.is_file() {
            'f'
        } else {
            '?'
        };
        Stat {
            kind,
            mode: meta.mode(),
            size: meta.size() as i64,
            ino: meta.ino(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    fn of_file_stat(stat: &FileStat) -> Stat {
        let kind = match SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT {
            SFlag::S_IFLNK => 'l',
            SFlag::S_IFDIR => 'd',
            SFlag::S_IFREG => 'f',
            _ => '?',
        };
        // `mode_t` is a u16 on macOS, a u32 on Linux.
        #[allow(clippy::useless_conversion)]
        let mode = u32::from(stat.st_mode);
        Stat {
            kind,
            mode,
            size: stat.st_size,
            ino: stat.st_ino,
            mtime: (stat.st_mtime, stat.st_mtime_nsec),
            ctime: (stat.st_ctime, stat.st_ctime_nsec),
        }
    }

    fn is_dir(&self) -> bool {
        self.kind == 'd'
    }
}

fn describe(stat: &Stat) -> String {
    format!(
        "{} {:o} {} {} {}.{} {}.{}",
        stat.kind,
        stat.mode,
        stat.size,
        stat.ino,
        stat.mtime.0,
        stat.mtime.1,
        stat.ctime.0,
        stat.ctime.1
    )
}

impl Manifest {
    /// Records the tree under `dir` as it is now.
    pub fn take(dir: &Path) -> io::Result<Manifest> {
        let mut entries = Vec::new();
        walk(dir, &mut |path, meta| {
            entries.push(Entry {
                path: path.to_string(),
                line: describe(meta),
            })
        })?;
        Ok(Manifest { entries })
    }

    /// Compares the tree under `dir` with the record, in one walk.
    pub fn compare(&self, dir: &Path) -> Result<(), Difference> {
        let mut expected = self.entries.iter();
        let mut first: Option<Difference> = None;
        let walked = walk(dir, &mut |path, meta| {
            if first.is_some() {
                return;
            }
            first = match expected.next() {
                Some(entry) if entry.path == path => {
                    (entry.line != describe(meta)).then(|| Difference {
                        path: path.to_string(),
                        what: what_changed(&entry.line, &describe(meta)),
                    })
                }
                Some(entry) if entry.path.as_str() < path => Some(Difference {
                    path: entry.path.clone(),
                    what: "is gone",
                }),
                _ => Some(Difference {
                    path: path.to_string(),
                    what: "was added",
                }),
            };
        });
        if let Err(e) = walked {
            return Err(Difference {
                path: format!(". ({e})"),
                what: "cannot be read",
            });
        }
        if let Some(difference) = first {
            return Err(difference);
        }
        match expected.next() {
            Some(entry) => Err(Difference {
                path: entry.path.clone(),
                what: "is gone",
            }),
            None => Ok(()),
        }
    }

    /// The record as the state file keeps it: a line per entry,
    /// `<kind> <mode> <size> <inode> <mtime> <ctime> <path>`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = String::new();
        for entry in &self.entries {
            out.push_str(&entry.line);
            out.push(' ');
            out.push_str(&entry.path);
            out.push('\n');
        }
        out.into_bytes()
    }

    /// `None` when the bytes are not a record of ours.
    pub fn from_bytes(bytes: &[u8]) -> Option<Manifest> {
        let text = std::str::from_utf8(bytes).ok()?;
        let entries = text
            .lines()
            .map(|line| {
                let mut fields = line.splitn(7, ' ');
                let described: Vec<&str> = fields.by_ref().take(6).collect();
                let path = fields.next()?;
                (described.len() == 6).then(|| Entry {
                    path: path.to_string(),
                    line: described.join(" "),
                })
            })
            .collect::<Option<Vec<Entry>>>()?;
        (!entries.is_empty()).then_some(Manifest { entries })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn what_changed(recorded: &str, now: &str) -> &'static str {
    let field = recorded
        .split(' ')
        .zip(now.split(' '))
        .position(|(a, b)| a != b);
    match field {
        Some(0) => "changed its kind",
        Some(1) => "changed its mode",
        Some(2) => "changed its size",
        Some(3) => "was replaced (another inode)",
        Some(4) => "was modified",
        _ => "was changed (its ctime moved)",
    }
}

/// Visits `root` (as ".") and everything under it, sorted by path, without
/// following links.
fn walk(root: &Path, visit: &mut dyn FnMut(&str, &Stat)) -> io::Result<()> {
    let stat = Stat::of_metadata(&fs::symlink_metadata(root)?);
    visit(".", &stat);
    if !stat.is_dir() {
        // A link or a file where the tree should be.
        return Err(io::Error::other("it is not a directory"));
    }
    let dir = Dir::open(root, opened(), Mode::empty())?;
    walk_dir(dir, &mut String::new(), visit)
}

/// How a directory of the tree is opened: never through a link.
fn opened() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// Visits what `dir` holds, its path `prefix` (empty for the root).
fn walk_dir(
    mut dir: Dir,
    prefix: &mut String,
    visit: &mut dyn FnMut(&str, &Stat),
) -> io::Result<()> {
    let mut names: Vec<std::ffi::OsString> = Vec::new();
    for entry in dir.iter() {
        let name = entry?.file_name().to_bytes().to_vec();
        if name != b"." && name != b".." {
            names.push(OsStr::from_bytes(&name).to_os_string());
        }
    }
    names.sort();
    let at = prefix.len();
    for name in names {
        let stat = Stat::of_file_stat(&fstatat(
            &dir,
            name.as_os_str(),
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        )?);
        if at > 0 {
            prefix.push('/');
        }
        prefix.push_str(&name.to_string_lossy());
        visit(prefix, &stat);
        if stat.is_dir() {
            let sub = Dir::from_fd(openat(&dir, name.as_os_str(), opened(), Mode::empty())?)?;
            walk_dir(sub, prefix, visit)?;
        }
        prefix.truncate(at);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("a/b")).unwrap();
        fs::write(dir.path().join("a/b/c.js"), "code").unwrap();
        fs::write(dir.path().join("a/d.json"), "{}").unwrap();
        std::os::unix::fs::symlink("b/c.js", dir.path().join("a/link")).unwrap();
        dir
    }

    /// Each entry's line, as `lstat` reads it, in the form earlier
    /// releases recorded (a record made before compares equal).
    #[test]
    fn each_entry_is_recorded_by_kind_mode_size_inode_and_times() {
        let dir = tree();
        let record = String::from_utf8(Manifest::take(dir.path()).unwrap().to_bytes()).unwrap();
        let lines: Vec<&str> = record.lines().collect();
        let paths: Vec<&str> = lines
            .iter()
            .map(|l| l.rsplit(' ').next().unwrap())
            .collect();
        assert_eq!(paths, [".", "a", "a/b", "a/b/c.js", "a/d.json", "a/link"]);
        for (line, path) in lines.iter().zip(&paths) {
            let meta = fs::symlink_metadata(dir.path().join(path)).unwrap();
            let kind = if meta.file_type().is_symlink() {
                'l'
            } else if meta.is_dir() {
                'd'
            } else {
                'f'
            };
            let expected = format!(
                "{kind} {:o} {} {} {}.{} {}.{} {path}",
                meta.mode(),
                meta.size(),
                meta.ino(),
                meta.mtime(),
                meta.mtime_nsec(),
                meta.ctime(),
                meta.ctime_nsec()
            );
            assert_eq!(*line, expected);
        }
    }

    #[test]
    fn an_untouched_tree_matches_and_survives_the_state_file() {
        let dir = tree();
        let manifest = Manifest::take(dir.path()).unwrap();
        assert_eq!(manifest.len(), 6);
        assert_eq!(manifest.compare(dir.path()), Ok(()));
        let back = Manifest::from_bytes(&manifest.to_bytes()).unwrap();
        assert_eq!(back, manifest);
        assert_eq!(Manifest::from_bytes(b"not a manifest"), None);
    }

    #[test]
    fn every_change_is_named() {
        let changed = |change: &dyn Fn(&Path)| {
            let dir = tree();
            let manifest = Manifest::take(dir.path()).unwrap();
            // File times move in steps of a clock tick, not a nanosecond.
            std::thread::sleep(std::time::Duration::from_millis(30));
            change(dir.path());
            manifest.compare(dir.path()).unwrap_err()
        };
        let d = changed(&|p| fs::write(p.join("a/b/c.js"), "evil").unwrap());
        assert_eq!(d.path, "a/b/c.js");
        let d = changed(&|p| fs::write(p.join("a/b/c.js"), "code!").unwrap());
        assert_eq!((d.path.as_str(), d.what), ("a/b/c.js", "changed its size"));
        let d = changed(&|p| {
            fs::set_permissions(p.join("a/d.json"), fs::Permissions::from_mode(0o666)).unwrap()
        });
        assert_eq!((d.path.as_str(), d.what), ("a/d.json", "changed its mode"));
        let d = changed(&|p| {
            fs::write(p.join("a/new.js"), "x").unwrap();
            fs::rename(p.join("a/new.js"), p.join("a/d.json")).unwrap();
        });
        assert_eq!(d.path, "a");
        let d = changed(&|p| fs::remove_file(p.join("a/d.json")).unwrap());
        assert_eq!(d.path, "a", "the directory's own times moved first");
        let d = changed(&|p| fs::write(p.join("z.js"), "x").unwrap());
        assert_eq!(d.path, ".");
    }

    /// The record with its lines edited: the tree stays as it was, so only
    /// the entries' paths differ, and the walk's order has to name them.
    fn compared_with(edit: &dyn Fn(Vec<String>) -> Vec<String>) -> Result<(), Difference> {
        let dir = tree();
        let taken = String::from_utf8(Manifest::take(dir.path()).unwrap().to_bytes()).unwrap();
        let lines = edit(taken.lines().map(str::to_string).collect());
        let record = Manifest::from_bytes(format!("{}\n", lines.join("\n")).as_bytes()).unwrap();
        record.compare(dir.path())
    }

    fn without(path: &'static str) -> impl Fn(Vec<String>) -> Vec<String> {
        move |lines| {
            lines
                .into_iter()
                .filter(|l| !l.ends_with(&format!(" {path}")))
                .collect()
        }
    }

    fn with(path: &'static str) -> impl Fn(Vec<String>) -> Vec<String> {
        move |mut lines| {
            let line = format!("f 100644 4 1 0.0 0.0 {path}");
            let at = lines
                .iter()
                .position(|l| l.rsplit(' ').next().unwrap() > path)
                .unwrap_or(lines.len());
            lines.insert(at, line);
            lines
        }
    }

    #[test]
    fn an_entry_the_record_lacks_was_added_and_one_the_tree_lacks_is_gone() {
        assert_eq!(compared_with(&|lines| lines), Ok(()));
        // The walk meets a/b/c.js where the record has a/d.json next.
        assert_eq!(
            compared_with(&without("a/b/c.js")),
            Err(Difference {
                path: "a/b/c.js".into(),
                what: "was added"
            })
        );
        // The record's a/a.js sorts before the a/b the walk meets.
        assert_eq!(
            compared_with(&with("a/a.js")),
            Err(Difference {
                path: "a/a.js".into(),
                what: "is gone"
            })
        );
        // After everything the walk met, the record still has one.
        assert_eq!(
            compared_with(&with("zz.js")),
            Err(Difference {
                path: "zz.js".into(),
                what: "is gone"
            })
        );
    }

    #[test]
    fn the_first_field_that_differs_names_the_change() {
        let recorded = "f 100644 4 17 10.5 20.5";
        for (now, what) in [
            ("d 100644 4 17 10.5 20.5", "changed its kind"),
            ("f 100666 4 17 10.5 20.5", "changed its mode"),
            ("f 100644 5 17 10.5 20.5", "changed its size"),
            ("f 100644 4 18 10.5 20.5", "was replaced (another inode)"),
            ("f 100644 4 17 11.5 21.5", "was modified"),
            ("f 100644 4 17 10.5 21.5", "was changed (its ctime moved)"),
            ("d 100666 5 18 11.5 21.5", "changed its kind"),
        ] {
            assert_eq!(what_changed(recorded, now), what, "{now}");
        }
    }

    #[test]
    fn a_record_is_never_empty() {
        let dir = tree();
        let manifest = Manifest::take(dir.path()).unwrap();
        assert!(!manifest.is_empty());
        assert_eq!(Manifest::from_bytes(b""), None);
    }
}
