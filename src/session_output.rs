//! What one command wrote into the folder where the daemon keeps what no
//! agent named (`<runtime>/session-output`: a snapshot's YAML, a console
//! log). A reply names its files by path, and a page can make a reply name
//! any file (titles, console text): so the folder is read before the
//! command is sent, and a reply's file is touched (redacted, or removed
//! when the reply is withheld) only when it appeared or changed since —
//! written for this command, under its turn. Another agent's file named
//! by a page's words stays as it is.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::redact::fingerprint::Fingerprint;
use crate::runtime::SESSION_OUTPUT;
use crate::tabs::listing;

/// Past this many entries the folder is not read in full: then no file is
/// removed, and every file a reply names is redacted (keeping the token
/// out of files matters more than leaving one untouched).
const MAX_ENTRIES: usize = 100_000;

/// A file as it was: which file, and whether it changed since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
        }
    }
}

/// The session's output folder as it was before a command was sent.
pub struct Before {
    /// The runtime's real root: the daemon names files relative to it.
    root: Option<PathBuf>,
    /// Every plain file in the folder, or `None` when it was not read whole.
    files: Option<HashMap<PathBuf, Stamp>>,
    /// Another command may write into the folder meanwhile (one the daemon
    /// still runs, past its bound or stepped aside): then nothing that
    /// appears is this command's alone.
    shared: bool,
    /// The folder when the command stepped aside, if it did: what appears
    /// after may be the next commands' (`None` inside: not read whole).
    aside: Option<Option<HashMap<PathBuf, Stamp>>>,
}

/// What a command did to a file its reply names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Touched {
    /// It is a file no earlier command left: this command's alone.
    Created,
    /// It was there and changed (written again, or appended to).
    Changed,
    /// As it was before the command.
    Untouched,
}

impl Before {
    /// Reads the folder of the runtime at `runtime` now (under the turn,
    /// just before the command); `shared`: another command the daemon
    /// still runs may write into it meanwhile.
    pub fn read(runtime: &Path, shared: bool) -> Before {
        let root = fs::canonicalize(runtime).ok();
        let files = root
            .as_ref()
            .and_then(|root| every_file(&root.join(SESSION_OUTPUT)));
        Before {
            root,
            files,
            shared,
            aside: None,
        }
    }

    /// The command steps aside: the folder as it is now bounds what it
    /// may call its own.
    pub fn step_aside(&mut self) {
        let now = self
            .root
            .as_ref()
            .and_then(|root| every_file(&root.join(SESSION_OUTPUT)));
        self.aside = Some(now);
    }

    /// Redacts in place each file the reply names that the command wrote.
    pub fn redact_written(&self, text: Option<&str>, known: Option<&Fingerprint>) {
        for (path, touched) in self.named(text) {
            if touched != Touched::Untouched {
                let _ = crate::staged_files::redact_text_file(&path, known);
            }
        }
    }

    /// A withheld reply describes another's tab: the files the command
    /// created for it are removed. A file that was there before is not
    /// the command's to remove, whatever the reply says of it; nor is one
    /// that may be another command's: none while another ran beside it,
    /// and, once it stepped aside, only what appeared before.
    pub fn forget_created(&self, text: Option<&str>) {
        if self.shared {
            return;
        }
        for (path, touched) in self.named(text) {
            if touched == Touched::Created && self.before_aside(&path) {
                let _ = fs::remove_file(&path);
            }
        }
    }

    /// Whether `path` was there, that very file, when the command stepped
    /// aside (always, when it did not).
    fn before_aside(&self, path: &Path) -> bool {
        let Some(aside) = &self.aside else {
            return true;
        };
        let (Some(files), Ok(real), Ok(meta)) =
            (aside, fs::canonicalize(path), fs::symlink_metadata(path))
        else {
            return false;
        };
        let now = Stamp::of(&meta);
        files
            .get(&real)
            .is_some_and(|was| was.dev == now.dev && was.ino == now.ino)
    }

    /// The plain files inside the folder that `text` names, each with what
    /// the command did to it.
    fn named(&self, text: Option<&str>) -> Vec<(PathBuf, Touched)> {
        let (Some(text), Some(root)) = (text, &self.root) else {
            return Vec::new();
        };
        let output = root.join(SESSION_OUTPUT);
        listing::mentioned_files(text)
            .into_iter()
            .filter_map(|file| {
                let path = root.join(file);
                let real = fs::canonicalize(&path).ok()?;
                let meta = fs::symlink_metadata(&path).ok()?;
                if !real.starts_with(&output) || !meta.is_file() {
                    return None;
                }
                let touched = self.touched(&real, &Stamp::of(&meta));
                Some((path, touched))
            })
            .collect()
    }

    fn touched(&self, real: &Path, now: &Stamp) -> Touched {
        let Some(files) = &self.files else {
            // Not read whole: written, for the redactor; never created.
            return Touched::Changed;
        };
        match files.get(real) {
            None => Touched::Created,
            Some(was) if was.dev != now.dev || was.ino != now.ino => Touched::Created,
            Some(was) if was != now => Touched::Changed,
            Some(_) => Touched::Untouched,
        }
    }
}

/// Every plain file under `dir` by its real path, or `None` past
/// [`MAX_ENTRIES`] or when a folder cannot be read. A folder that is not
/// there yet holds nothing.
fn every_file(dir: &Path) -> Option<HashMap<PathBuf, Stamp>> {
    let mut files = HashMap::new();
    let mut folders = vec![dir.to_path_buf()];
    let mut entries = 0;
    while let Some(folder) = folders.pop() {
        let listed = match fs::read_dir(&folder) {
            Ok(listed) => listed,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && folder == dir => continue,
            Err(_) => return None,
        };
        for entry in listed {
            entries += 1;
            if entries > MAX_ENTRIES {
                return None;
            }
            let path = entry.ok()?.path();
            let meta = fs::symlink_metadata(&path).ok()?;
            if meta.is_dir() {
                folders.push(path);
            } else if meta.is_file() {
                files.insert(path, Stamp::of(&meta));
            }
        }
    }
    Some(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_the_command_created_is_removed_and_only_what_it_wrote_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join(SESSION_OUTPUT);
        fs::create_dir_all(output.join("traces")).unwrap();
        let anns = output.join("console-1.log");
        let kept = output.join("traces/trace-1.json");
        let appended = output.join("network-1.log");
        fs::write(&anns, "ann's console").unwrap();
        fs::write(&kept, "ann's trace").unwrap();
        fs::write(&appended, "before").unwrap();
        let before = Before::read(dir.path(), false);

        // The command writes one new file and appends to one; its reply
        // (a page's words) names those and two of ann's.
        let bobs = output.join("page-2.yml");
        fs::write(&bobs, "bob's snapshot").unwrap();
        fs::write(&appended, "before, and more").unwrap();
        let text = "### Snapshot\n[Snapshot](session-output/page-2.yml)\n\
                    - console: session-output/console-1.log (session-output/traces/trace-1.json)\n\
                    - network: session-output/network-1.log\n\
                    - outside: /etc/passwd ../x/y";
        let named: HashMap<PathBuf, Touched> = before.named(Some(text)).into_iter().collect();
        let root = fs::canonicalize(dir.path()).unwrap();
        let at = |p: &Path| root.join(p.strip_prefix(dir.path()).unwrap());
        assert_eq!(named.get(&at(&bobs)), Some(&Touched::Created));
        assert_eq!(named.get(&at(&appended)), Some(&Touched::Changed));
        assert_eq!(named.get(&at(&anns)), Some(&Touched::Untouched));
        assert_eq!(named.get(&at(&kept)), Some(&Touched::Untouched));
        assert_eq!(named.len(), 4, "{named:?}");

        before.forget_created(Some(text));
        assert!(!bobs.exists());
        assert!(anns.exists() && kept.exists() && appended.exists());
    }

    #[test]
    fn a_file_is_the_commands_only_while_no_other_may_write() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join(SESSION_OUTPUT);
        fs::create_dir_all(&output).unwrap();
        let text = "session-output/page-1.yml session-output/page-2.yml";
        let (first, second) = (output.join("page-1.yml"), output.join("page-2.yml"));
        // Another command the daemon still runs may write meanwhile: what
        // appears may be its, and nothing is removed.
        let shared = Before::read(dir.path(), true);
        fs::write(&first, "maybe another's").unwrap();
        shared.forget_created(Some(text));
        assert!(first.exists());
        fs::remove_file(&first).unwrap();
        // A command that stepped aside: what appeared before is its own,
        // what appeared after (the next command's) is not.
        let mut aside = Before::read(dir.path(), false);
        fs::write(&first, "its own").unwrap();
        aside.step_aside();
        fs::write(&second, "the next command's").unwrap();
        aside.forget_created(Some(text));
        assert!(!first.exists());
        assert!(second.exists());
        // Its own file, replaced meanwhile by another of the same name,
        // is no longer its own.
        let mut replaced = Before::read(dir.path(), false);
        fs::write(&first, "its own").unwrap();
        replaced.step_aside();
        let next = output.join("next.yml");
        fs::write(&next, "the next command's").unwrap();
        fs::rename(&next, &first).unwrap();
        replaced.forget_created(Some(text));
        assert!(first.exists());
    }

    #[test]
    fn a_file_written_again_under_its_name_is_the_commands() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join(SESSION_OUTPUT);
        fs::create_dir_all(&output).unwrap();
        let file = output.join("page-1.yml");
        fs::write(&file, "old").unwrap();
        let before = Before::read(dir.path(), false);
        assert_eq!(
            before.named(Some("session-output/page-1.yml"))[0].1,
            Touched::Untouched
        );
        fs::remove_file(&file).unwrap();
        fs::write(&file, "newer").unwrap();
        let named = before.named(Some("session-output/page-1.yml"));
        assert_ne!(named[0].1, Touched::Untouched);
    }

    #[test]
    fn a_folder_not_there_yet_holds_nothing_and_every_file_in_it_is_new() {
        let dir = tempfile::tempdir().unwrap();
        let before = Before::read(dir.path(), false);
        assert_eq!(before.files.as_ref().map(HashMap::len), Some(0));
        let output = dir.path().join(SESSION_OUTPUT);
        fs::create_dir_all(&output).unwrap();
        fs::write(output.join("page-1.yml"), "x").unwrap();
        let named = before.named(Some("[Snapshot](session-output/page-1.yml)"));
        assert_eq!(named.len(), 1);
        assert_eq!(named[0].1, Touched::Created);
    }
}
