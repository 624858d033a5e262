//! What the full check verified, entry by entry: the helper tree as it was
//! when its digest and version last passed (path, kind, mode, size, inode,
//! mtime, ctime — no one can set a ctime back). Kept as a private state file;
//! before any code of the helper runs, the tree must still be exactly that,
//! which one `lstat` per recorded entry tells in about a millisecond instead
//! of the digest's second.
//!
//! The comparison follows the record, not a listing: a directory whose
//! times are as recorded holds the names it held (creating, removing or
//! renaming an entry moves its directory's mtime and ctime, and a ctime
//! cannot be set back), so its entries need no reading, only their own
//! `lstat`s. Each directory is opened (`O_NOFOLLOW`) and its own stat taken
//! from that descriptor, and its entries are looked up through it: each
//! look-up is one name, and no link met on the way is followed. When
//! anything differs, a full walk names the first difference as a listing
//! finds it (an entry added, gone, or changed). The record itself is held
//! to that full walk once, when it is made (`Helper::verify_and_record`):
//! a name added within the clock tick of its directory's recorded times
//! could leave them as recorded where ctimes are coarse.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use std::os::fd::OwnedFd;

use nix::dir::Dir;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat};

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

    /// Compares the tree under `dir` with the record: each recorded entry
    /// looked up once; on a difference, named as a full walk finds it.
    pub fn compare(&self, dir: &Path) -> Result<(), Difference> {
        let Err(found) = self.recorded_entries_match(dir) else {
            return Ok(());
        };
        // A listing names what was added; the look-ups found that something
        // differs (a full walk that finds nothing more: it changed back).
        Err(self.listed_compare(dir).err().unwrap_or(found))
    }

    /// Whether every recorded entry is as recorded, each by one `lstat`
    /// through its directory's descriptor (a directory by `fstat` of the
    /// descriptor it is opened with, so its entries are looked up in the
    /// directory that was compared). The record lists a directory before
    /// its entries, in the walk's order.
    fn recorded_entries_match(&self, root: &Path) -> Result<(), Difference> {
        let differs = |entry: &Entry, stat: &Stat| {
            let now = describe(stat);
            (entry.line != now).then(|| Difference {
                path: entry.path.clone(),
                what: what_changed(&entry.line, &now),
            })
        };
        let unreadable = |path: &str, e: nix::Error| Difference {
            path: path.to_string(),
            what: if e == nix::Error::ENOENT {
                "is gone"
            } else {
                "cannot be read"
            },
        };
        let mut entries = self.entries.iter();
        let Some(first) = entries.next().filter(|e| e.path == ".") else {
            return Err(Difference {
                path: ".".into(),
                what: "has a record that cannot be read",
            });
        };
        let fd = open_dir(None, root.as_os_str()).map_err(|e| unreadable(".", e))?;
        let stat = Stat::of_file_stat(&fstat(&fd).map_err(|e| unreadable(".", e))?);
        if let Some(d) = differs(first, &stat) {
            return Err(d);
        }
        // The directories from the root to the entry's, each open.
        let mut open: Vec<(&str, OwnedFd)> = vec![(".", fd)];
        for entry in entries {
            let (parent, name) = entry.path.rsplit_once('/').unwrap_or((".", &entry.path));
            while open.last().is_some_and(|(path, _)| *path != parent) {
                open.pop();
            }
            let Some((_, dir)) = open.last() else {
                // Its directory is not a directory of the record.
                return Err(Difference {
                    path: entry.path.clone(),
                    what: "has a record that cannot be read",
                });
            };
            let looked_up = if entry.line.starts_with('d') {
                open_dir(Some(dir), OsStr::new(name))
                    .and_then(|fd| Ok((Stat::of_file_stat(&fstat(&fd)?), Some(fd))))
            } else {
                Err(nix::Error::ENOTDIR)
            };
            // Not a directory (a record's file, or a directory replaced by
            // something else): its `lstat`, through the open parent.
            let (stat, fd) = match looked_up {
                Ok(found) => found,
                Err(_) => (
                    Stat::of_file_stat(
                        &fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)
                            .map_err(|e| unreadable(&entry.path, e))?,
                    ),
                    None,
                ),
            };
            if let Some(d) = differs(entry, &stat) {
                return Err(d);
            }
            if let Some(fd) = fd {
                open.push((&entry.path, fd));
            }
        }
        Ok(())
    }

    /// Compares the tree under `dir` with the record, in one walk that
    /// lists every directory: what the full check's record is held to once
    /// the check has passed (`Helper::verify_and_record`), when a name
    /// added within the clock tick of its directory's last recorded change
    /// may have left the directory's times as recorded.
    pub fn listed_compare(&self, dir: &Path) -> Result<(), Difference> {
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

/// Opens the directory `name` in `parent` (`None`: `name` is a path from
/// the working directory), never through a link.
fn open_dir(parent: Option<&OwnedFd>, name: &OsStr) -> nix::Result<OwnedFd> {
    match parent {
        Some(parent) => openat(parent, name, opened(), Mode::empty()),
        None => nix::fcntl::open(name, opened(), Mode::empty()),
    }
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
            AtFlags::AT_SYMLINK_NOFOLLOW,
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

    /// The record with its lines edited, compared by the full walk that
    /// names a difference: the tree stays as it was, so only the entries'
    /// paths differ, and the walk's order has to name them. (The look-ups
    /// that come first trust a directory whose times are as recorded to
    /// hold the names it held; only an edited record lacks one of them.)
    fn compared_with(edit: &dyn Fn(Vec<String>) -> Vec<String>) -> Result<(), Difference> {
        let dir = tree();
        let taken = String::from_utf8(Manifest::take(dir.path()).unwrap().to_bytes()).unwrap();
        let lines = edit(taken.lines().map(str::to_string).collect());
        let record = Manifest::from_bytes(format!("{}\n", lines.join("\n")).as_bytes()).unwrap();
        record.listed_compare(dir.path())
    }

    /// What the look-ups rest on: an entry added to a directory moves the
    /// directory's ctime, which setting its times back cannot undo.
    #[test]
    fn a_directory_is_trusted_by_its_times_and_its_ctime_cannot_be_set_back() {
        use nix::sys::stat::{UtimensatFlags, utimensat};
        use nix::sys::time::TimeSpec;
        let dir = tree();
        let manifest = Manifest::take(dir.path()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let a = dir.path().join("a");
        let before = fs::metadata(&a).unwrap();
        fs::write(a.join("added.js"), "x").unwrap();
        let (atime, mtime) = (
            TimeSpec::new(before.atime(), before.atime_nsec()),
            TimeSpec::new(before.mtime(), before.mtime_nsec()),
        );
        utimensat(
            nix::fcntl::AT_FDCWD,
            &a,
            &atime,
            &mtime,
            UtimensatFlags::NoFollowSymlink,
        )
        .unwrap();
        assert_eq!(fs::metadata(&a).unwrap().mtime_nsec(), before.mtime_nsec());
        assert_eq!(
            manifest.recorded_entries_match(dir.path()),
            Err(Difference {
                path: "a".into(),
                what: "was changed (its ctime moved)"
            })
        );
        // The full walk names the same first difference: the directory.
        assert_eq!(manifest.compare(dir.path()).unwrap_err().path, "a");
    }

    /// Each entry is looked up once, in the record's order; one that is
    /// gone or has changed kind is named by the look-ups themselves.
    #[test]
    fn the_look_ups_name_an_entry_gone_or_of_another_kind() {
        let dir = tree();
        let manifest = Manifest::take(dir.path()).unwrap();
        assert_eq!(manifest.recorded_entries_match(dir.path()), Ok(()));
        let record = String::from_utf8(manifest.to_bytes()).unwrap();
        // The directory's line edited to match after its entry is swapped:
        // only the entry's own look-up can tell.
        let swapped = |from: &str, make: &dyn Fn(&Path)| {
            let dir = tree();
            let record = Manifest::from_bytes(
                String::from_utf8(Manifest::take(dir.path()).unwrap().to_bytes())
                    .unwrap()
                    .as_bytes(),
            )
            .unwrap();
            let target = dir.path().join(from);
            if target.is_dir() {
                fs::remove_dir_all(&target).unwrap();
            } else {
                fs::remove_file(&target).unwrap();
            }
            make(&target);
            let retaken = Manifest::take(dir.path()).unwrap();
            let parent = Path::new(from).parent().unwrap().to_str().unwrap();
            let parent = if parent.is_empty() { "." } else { parent };
            let fixed: Vec<Entry> = record
                .entries
                .iter()
                .map(
                    |e| match retaken.entries.iter().find(|r| r.path == e.path) {
                        Some(r) if r.path == parent => r.clone(),
                        _ => e.clone(),
                    },
                )
                .collect();
            Manifest { entries: fixed }.recorded_entries_match(dir.path())
        };
        let named = |d: Result<(), Difference>| {
            let d = d.unwrap_err();
            (d.path, d.what)
        };
        assert_eq!(
            named(swapped("a/b", &|p| fs::write(p, "now a file").unwrap())),
            ("a/b".into(), "changed its kind")
        );
        assert_eq!(
            named(swapped("a/d.json", &|p| fs::create_dir(p).unwrap())),
            ("a/d.json".into(), "changed its kind")
        );
        // A directory replaced by a link to a copy is met as a link, never
        // entered (the copy's entries would match nothing recorded anyway).
        let copy = tree();
        assert_eq!(
            named(swapped("a/b", &|p| {
                std::os::unix::fs::symlink(copy.path().join("a/b"), p).unwrap()
            })),
            ("a/b".into(), "changed its kind")
        );
        assert_eq!(
            named(swapped("a/d.json", &|_| {})),
            ("a/d.json".into(), "is gone")
        );
        assert!(record.contains(" a/b\n"));
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
