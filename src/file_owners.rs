//! `file-owners.json`: which agent's command delivered which file or made
//! which folder in the roots, by device and inode (docs/DESIGN.md,
//! "Each agent's files"). No other agent's command reads such a file
//! (`upload`, `drop`), replaces it, or writes into such a folder: the
//! roots (`/tmp` above all) are shared by every agent, and a name in them
//! is anyone's to guess.
//!
//! Read and written only under the session's turn, so that a check and
//! the delivery it allows are one step no other command comes between.
//! An entry holds while its path still has its identity: a file replaced
//! or removed meanwhile is no longer the agent's.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::exit::Exit;
use crate::file_args::{Identity, identity};
use crate::runtime::{Runtime, RuntimeError, StateFile};

const VERSION: u32 = 1;
/// How many files and folders of agents' commands the record holds: its
/// file stays within the runtime's bound on a state file.
pub const MAX_ENTRIES: usize = 4000;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileOwners {
    version: u32,
    entries: Vec<Entry>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    dev: u64,
    ino: u64,
    path: PathBuf,
    /// The registration of the agent whose command made it
    /// (`identity::Identity::registration`): random, and new whenever a
    /// name is registered anew.
    owner: u64,
    folder: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum FileOwnersError {
    #[error(
        "{}: {}; another agent's command made it, and only that agent's commands may {}; \
         nothing was run. Choose a path of your own{}",
        .path.display(),
        if *.folder { "it lies in a folder" } else { "it is a file" },
        if *.folder { "read or write in it" } else { "read or replace it" },
        if *.read { " (or ask the user for the file)" } else { "" }
    )]
    Theirs {
        path: PathBuf,
        folder: bool,
        read: bool,
    },
    #[error(
        "my-chrome's record of the files agents' commands made holds {MAX_ENTRIES}, the most it \
         holds; nothing was run. Ask the user to remove outputs no longer needed from the \
         folders agents write to (/tmp and the user's file roots)"
    )]
    Full,
    #[error(
        "{}: is not my-chrome's record of the files agents' commands made ({detail}); nothing \
         was run. Ask the user to look at it (README, \"A broken record of agents' files\")",
        .path.display()
    )]
    Malformed { path: PathBuf, detail: String },
    #[error(
        "the command's output could not be delivered ({}: {source}); whatever was written stays \
         private in my-chrome's runtime. Check the folder and run the command again",
        .path.display()
    )]
    Io { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl FileOwnersError {
    pub fn exit(&self) -> Exit {
        match self {
            FileOwnersError::Theirs { .. } => Exit::Busy,
            FileOwnersError::Full | FileOwnersError::Io { .. } => Exit::Failure,
            FileOwnersError::Malformed { .. } => Exit::Security,
            FileOwnersError::Runtime(e) => e.exit(),
        }
    }
}

/// What lies at `path` (a link itself, never followed), if anything.
fn identity_of(path: &Path) -> Option<Identity> {
    fs::symlink_metadata(path).ok().map(|meta| identity(&meta))
}

impl Entry {
    /// Whether its path still has its identity: what it names is still
    /// what the agent's command made.
    fn still_there(&self) -> bool {
        identity_of(&self.path) == Some((self.dev, self.ino))
    }
}

impl Default for FileOwners {
    fn default() -> FileOwners {
        FileOwners {
            version: VERSION,
            entries: Vec::new(),
        }
    }
}

impl FileOwners {
    /// The record as written (none yet: empty); one that is not ours is
    /// refused (exit 6), never read as empty.
    pub fn read(runtime: &Runtime) -> Result<FileOwners, FileOwnersError> {
        let Some(bytes) = runtime.read_state(StateFile::FileOwners)? else {
            return Ok(FileOwners::default());
        };
        let malformed = |detail: String| FileOwnersError::Malformed {
            path: runtime.root().join(StateFile::FileOwners.file_name()),
            detail,
        };
        // Where and what kind of fault, never the text.
        let owners: FileOwners = serde_json::from_slice(&bytes)
            .map_err(|e| malformed(crate::runtime::json_fault(&e)))?;
        if owners.version != VERSION || owners.entries.len() > MAX_ENTRIES {
            return Err(malformed("unexpected version or size".into()));
        }
        Ok(owners)
    }

    pub fn write(&mut self, runtime: &Runtime) -> Result<(), FileOwnersError> {
        self.prune();
        let bytes = serde_json::to_vec(self).expect("the record serialises");
        // Long paths can fill the file before the count does.
        if bytes.len() as u64 > StateFile::FileOwners.limit() {
            return Err(FileOwnersError::Full);
        }
        Ok(runtime.write_state(StateFile::FileOwners, &bytes)?)
    }

    /// How many files and folders of agents' commands are still there.
    pub fn live(&self) -> usize {
        self.entries
            .iter()
            .filter(|entry| entry.still_there())
            .count()
    }

    /// Entries whose path no longer has their identity go.
    fn prune(&mut self) {
        self.entries.retain(Entry::still_there);
    }

    /// What other agents' commands made and still is: identities, with
    /// whether each is a folder.
    fn others(&self, me: u64) -> Vec<(Identity, bool)> {
        self.entries
            .iter()
            .filter(|entry| entry.owner != me)
            .filter(|entry| entry.still_there())
            .map(|entry| ((entry.dev, entry.ino), entry.folder))
            .collect()
    }

    /// Refused when a file of the command (each as the daemon resolves
    /// it, and whether the command writes it) is, or lies in a folder,
    /// another agent's command made: compared by identity, every part of
    /// the way, whatever the path's spelling.
    pub fn allows(&self, files: &[(PathBuf, bool)], me: u64) -> Result<(), FileOwnersError> {
        let others = self.others(me);
        if others.is_empty() {
            return Ok(());
        }
        let folders: HashSet<Identity> = others.iter().filter(|o| o.1).map(|o| o.0).collect();
        let files_too: HashSet<Identity> = others.iter().map(|o| o.0).collect();
        for (path, written) in files {
            let theirs = |folder| FileOwnersError::Theirs {
                path: path.clone(),
                folder,
                read: !written,
            };
            if let Some(id) = identity_of(path).filter(|id| files_too.contains(id)) {
                return Err(theirs(folders.contains(&id)));
            }
            if path
                .ancestors()
                .skip(1)
                .filter_map(identity_of)
                .any(|id| folders.contains(&id))
            {
                return Err(theirs(true));
            }
        }
        Ok(())
    }

    /// Makes the folders on the way to `target` that do not exist yet
    /// (private, as the daemon makes them), each recorded as `me`'s.
    pub fn make_folders(&mut self, target: &Path, me: u64) -> Result<(), FileOwnersError> {
        let missing: Vec<&Path> = target
            .ancestors()
            .skip(1)
            .take_while(|dir| fs::symlink_metadata(dir).is_err())
            .collect();
        for dir in missing.into_iter().rev() {
            // One made meanwhile by something else is not ours to record,
            // nor to deliver into: an error, like any other.
            fs::DirBuilder::new()
                .mode(0o700)
                .create(dir)
                .map_err(|source| FileOwnersError::Io {
                    path: dir.to_path_buf(),
                    source,
                })?;
            self.add(dir, me, true)?;
        }
        Ok(())
    }

    /// Records `file`, just delivered by `me`'s command (nothing to record
    /// when it lies in a folder `me`'s command made: the folder says it).
    pub fn delivered(&mut self, file: &Path, me: u64) -> Result<(), FileOwnersError> {
        let parent = file.parent().and_then(identity_of);
        let in_own_folder = self.entries.iter().any(|entry| {
            entry.owner == me && entry.folder && Some((entry.dev, entry.ino)) == parent
        });
        if in_own_folder {
            return Ok(());
        }
        self.add(file, me, false)
    }

    fn add(&mut self, path: &Path, me: u64, folder: bool) -> Result<(), FileOwnersError> {
        let Some((dev, ino)) = identity_of(path) else {
            return Ok(());
        };
        self.entries
            .retain(|entry| (entry.dev, entry.ino) != (dev, ino));
        if self.entries.len() >= MAX_ENTRIES {
            self.prune();
        }
        if self.entries.len() >= MAX_ENTRIES {
            return Err(FileOwnersError::Full);
        }
        self.entries.push(Entry {
            dev,
            ino,
            path: path.to_path_buf(),
            owner: me,
            folder,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANN: u64 = 1;
    const BOB: u64 = 2;

    fn refused(owners: &FileOwners, path: &Path, written: bool, me: u64) -> Option<bool> {
        match owners.allows(&[(path.to_path_buf(), written)], me) {
            Ok(()) => None,
            Err(FileOwnersError::Theirs { folder, .. }) => Some(folder),
            Err(other) => panic!("{other}"),
        }
    }

    #[test]
    fn another_agents_file_or_folder_is_neither_read_nor_replaced_nor_written_into() {
        let root = tempfile::tempdir().unwrap();
        let mut owners = FileOwners::default();
        // Ann's command delivers a file in a folder it made, and one
        // straight in the root.
        let deep = root.path().join("ann/shots/a.png");
        owners.make_folders(&deep, ANN).unwrap();
        fs::write(&deep, "png").unwrap();
        owners.delivered(&deep, ANN).unwrap();
        let flat = root.path().join("result.json");
        owners.make_folders(&flat, ANN).unwrap();
        fs::write(&flat, "{}").unwrap();
        owners.delivered(&flat, ANN).unwrap();
        // The file in her folder needs no entry of its own.
        assert_eq!(owners.entries.len(), 3, "{:?}", owners.entries);

        for written in [false, true] {
            assert_eq!(refused(&owners, &flat, written, BOB), Some(false));
            assert_eq!(refused(&owners, &deep, written, BOB), Some(true));
            // A name she has not used yet, in her folder.
            let next = root.path().join("ann/shots/next.png");
            assert_eq!(refused(&owners, &next, written, BOB), Some(true));
            assert_eq!(
                refused(&owners, &root.path().join("ann"), written, BOB),
                Some(true)
            );
            // Her own, and what nobody's command made.
            assert_eq!(refused(&owners, &deep, written, ANN), None);
            assert_eq!(refused(&owners, &next, written, ANN), None);
            let free = root.path().join("bob.png");
            assert_eq!(refused(&owners, &free, written, BOB), None);
        }
        // What uninstall would forget: three, then two once one goes.
        assert_eq!(owners.live(), 3);
        fs::remove_file(&flat).unwrap();
        assert_eq!(owners.live(), 2);
        fs::write(&flat, "{}").unwrap();
        owners.delivered(&flat, ANN).unwrap();
        // Another spelling of the same folder is the same folder.
        let spelled = root.path().join("ann/./shots/../shots/a.png");
        assert_eq!(refused(&owners, &spelled, false, BOB), Some(true));
    }

    #[test]
    fn an_entry_holds_while_its_path_keeps_its_identity() {
        let root = tempfile::tempdir().unwrap();
        let (_home, runtime) = crate::runtime::scratch();
        let file = root.path().join("out.txt");
        let mut owners = FileOwners::read(&runtime).unwrap();
        fs::write(&file, "x").unwrap();
        owners.delivered(&file, ANN).unwrap();
        owners.write(&runtime).unwrap();
        let owners = FileOwners::read(&runtime).unwrap();
        assert_eq!(refused(&owners, &file, false, BOB), Some(false));
        // Replaced by something else (a new inode): no longer hers.
        fs::remove_file(&file).unwrap();
        fs::write(root.path().join("other"), "keep the inode busy").unwrap();
        fs::write(&file, "y").unwrap();
        let mut owners = FileOwners::read(&runtime).unwrap();
        if identity_of(&file) != Some((owners.entries[0].dev, owners.entries[0].ino)) {
            assert_eq!(refused(&owners, &file, false, BOB), None);
            owners.write(&runtime).unwrap();
            assert!(FileOwners::read(&runtime).unwrap().entries.is_empty());
        }
    }

    #[test]
    fn a_full_record_refuses_rather_than_forgets() {
        let root = tempfile::tempdir().unwrap();
        let mut owners = FileOwners::default();
        for n in 0..MAX_ENTRIES {
            let file = root.path().join(n.to_string());
            fs::write(&file, "").unwrap();
            owners.delivered(&file, ANN).unwrap();
        }
        let one_more = root.path().join("more");
        fs::write(&one_more, "").unwrap();
        assert!(matches!(
            owners.delivered(&one_more, BOB),
            Err(FileOwnersError::Full)
        ));
        // Once files go, their entries do too.
        fs::remove_file(root.path().join("0")).unwrap();
        owners.delivered(&one_more, BOB).unwrap();
        assert_eq!(refused(&owners, &one_more, false, ANN), Some(false));
    }

    #[test]
    fn a_folder_that_cannot_be_made_is_an_error_and_records_nothing() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("a-file");
        fs::write(&file, "").unwrap();
        let mut owners = FileOwners::default();
        let through = file.join("sub/out.png");
        assert!(matches!(
            owners.make_folders(&through, ANN),
            Err(FileOwnersError::Io { path, .. }) if path == file.join("sub")
        ));
        assert!(owners.entries.is_empty());
    }

    #[test]
    fn a_record_holds_as_many_entries_as_it_may_and_no_more() {
        let (_home, runtime) = crate::runtime::scratch();
        let entry = r#"{"dev":1,"ino":2,"path":"/tmp/x","owner":3,"folder":false}"#;
        let record = |n: usize| {
            format!(
                r#"{{"version":{VERSION},"entries":[{}]}}"#,
                vec![entry; n].join(",")
            )
        };
        runtime
            .write_state(StateFile::FileOwners, record(MAX_ENTRIES).as_bytes())
            .unwrap();
        assert_eq!(
            FileOwners::read(&runtime).unwrap().entries.len(),
            MAX_ENTRIES
        );
        runtime
            .write_state(StateFile::FileOwners, record(MAX_ENTRIES + 1).as_bytes())
            .unwrap();
        assert!(matches!(
            FileOwners::read(&runtime),
            Err(FileOwnersError::Malformed { .. })
        ));
    }

    #[test]
    fn a_record_as_large_as_its_file_may_be_is_written_and_one_byte_more_is_full() {
        // Long paths fill the file before the count does. Real files (a
        // write drops entries whose files are gone) in a folder with a long
        // path, their names sized so that the record is exactly the bound.
        let (_home, runtime) = crate::runtime::scratch();
        let limit = StateFile::FileOwners.limit() as usize;
        let root = tempfile::tempdir().unwrap();
        let mut dir = root.path().to_path_buf();
        for _ in 0..14 {
            dir.push("d".repeat(250));
        }
        fs::create_dir_all(&dir).unwrap();
        let size = |o: &FileOwners| serde_json::to_vec(o).unwrap().len();
        let mut owners = FileOwners::default();
        let mut n = 0u32;
        // An entry whose file name is `len` long (8 to 250).
        let mut add = |owners: &mut FileOwners, len: usize| {
            n += 1;
            let file = dir.join(format!("{n:0>len$}"));
            fs::write(&file, "").unwrap();
            owners.delivered(&file, ANN).unwrap();
        };
        let cost = |owners: &mut FileOwners, add: &mut dyn FnMut(&mut FileOwners, usize)| {
            let before = size(owners);
            add(owners, 8);
            let cost = size(owners) - before;
            owners.entries.pop();
            cost
        };
        let base = cost(&mut owners, &mut add) - 8;
        let entries = (limit - size(&owners)) / (base + 129);
        for left in (1..=entries).rev() {
            let gap = limit - size(&owners);
            if left == 1 {
                let len = gap - cost(&mut owners, &mut add) + 8;
                assert!((8..=250).contains(&len), "{len}");
                add(&mut owners, len);
            } else {
                add(&mut owners, (gap / left - base).clamp(8, 250));
            }
        }
        assert_eq!(size(&owners), limit);
        owners.write(&runtime).unwrap();
        assert_eq!(FileOwners::read(&runtime).unwrap(), owners);
        // The last name one character longer: one byte more.
        let last = owners.entries.pop().unwrap();
        let longer = last.path.with_file_name(format!(
            "{}x",
            last.path.file_name().unwrap().to_string_lossy()
        ));
        fs::write(&longer, "").unwrap();
        owners.delivered(&longer, ANN).unwrap();
        assert_eq!(size(&owners), limit + 1);
        assert!(matches!(owners.write(&runtime), Err(FileOwnersError::Full)));
    }

    #[test]
    fn a_record_that_is_not_ours_is_refused() {
        let (_home, runtime) = crate::runtime::scratch();
        for bytes in [&b""[..], b"{}", b"{\"version\":2,\"entries\":[]}", b"[1]"] {
            runtime.write_state(StateFile::FileOwners, bytes).unwrap();
            assert!(matches!(
                FileOwners::read(&runtime),
                Err(FileOwnersError::Malformed { .. })
            ));
        }
    }
}
