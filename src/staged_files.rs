//! A forwarded command's output files (`--filename` of `screenshot`,
//! `pdf`, `snapshot`, `eval`…, `state-save`'s file): the daemon writes each
//! into a private folder of the runtime (`<runtime>/tmp/outputs`), and
//! my-chrome moves it to the path the agent named only once the check
//! after the command has passed (its reply is shown: the tab it describes
//! is the agent's). A withheld reply leaves no file anywhere; nobody sees
//! one before it is delivered.
//!
//! The daemon prints a written file's path relative to its working
//! directory (`path.relative`, with `./` for a file right in it); the
//! reply is given back with the staged path replaced by the one it would
//! have printed for the agent's own.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use tempfile::TempDir;

use crate::exit::Exit;
use crate::file_owners::{FileOwners, FileOwnersError};
use crate::minimist::{Parsed, Value};
use crate::policy::files::{self, FileArg, Slot};
use crate::redact::fingerprint::Fingerprint;
use crate::runtime::{Runtime, RuntimeError};

#[derive(Debug, thiserror::Error)]
pub enum OutputsError {
    #[error(
        "the command's output could not be {action} ({path}: {source}); whatever was written \
         stays private in my-chrome's runtime. Check the folder and run the command again"
    )]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Owners(#[from] FileOwnersError),
}

impl OutputsError {
    pub fn exit(&self) -> Exit {
        match self {
            OutputsError::Io { .. } => Exit::Failure,
            OutputsError::Runtime(e) => e.exit(),
            OutputsError::Owners(e) => e.exit(),
        }
    }
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> OutputsError {
    let path = path.to_path_buf();
    move |source| OutputsError::Io {
        action,
        path,
        source,
    }
}

/// One output file: where the daemon writes it, and where it goes.
struct Output {
    staged: PathBuf,
    target: PathBuf,
}

/// A command's output files, staged.
pub struct Outputs {
    /// Their private folder (removed with this).
    dir: Option<TempDir>,
    /// A lock held inside it while this lives: a later command leaves the
    /// folder of one still running (stepped aside) alone (`clear`).
    _held: Option<Flock<fs::File>>,
    files: Vec<Output>,
    /// The daemon's working directory: paths are printed relative to it.
    cwd: PathBuf,
    /// Whose command this is, and the record its files go into.
    owners: Option<Owners>,
}

/// The record of agents' files (`file_owners`), for one agent's command.
struct Owners {
    runtime: Runtime,
    record: FileOwners,
    me: u64,
}

impl Outputs {
    /// Nothing staged (a command that writes no file).
    pub fn none() -> Outputs {
        Outputs {
            dir: None,
            _held: None,
            files: Vec::new(),
            cwd: PathBuf::new(),
            owners: None,
        }
    }

    /// Stages the files `parsed` writes for the agent registered as `me`:
    /// their private places, and the parsed form to send (each written
    /// file replaced by its place). First, under the session's turn, no
    /// file it names, read or written, may be another agent's
    /// (`file_owners`). Earlier commands' leftovers (a command killed or
    /// abandoned) go.
    pub fn stage(
        runtime: &Runtime,
        cwd: &Path,
        parsed: &Parsed,
        me: u64,
    ) -> Result<(Outputs, Parsed), OutputsError> {
        let named = files::files_of(parsed).unwrap_or_default();
        let mut outputs = Outputs {
            dir: None,
            _held: None,
            files: Vec::new(),
            cwd: cwd.to_path_buf(),
            owners: None,
        };
        if named.is_empty() {
            return Ok((outputs, parsed.clone()));
        }
        let record = FileOwners::read(runtime)?;
        let resolved: Vec<(PathBuf, bool)> = named
            .iter()
            .map(|f| (files::resolve(cwd, &f.path), f.written))
            .collect();
        record.allows(&resolved, me)?;
        outputs.owners = Some(Owners {
            runtime: runtime.clone(),
            record,
            me,
        });
        let written: Vec<FileArg> = named.into_iter().filter(|f| f.written).collect();
        if written.is_empty() {
            return Ok((outputs, parsed.clone()));
        }
        let base = runtime.outputs_dir()?;
        clear(&base);
        // The runtime's real path: what the daemon prints relative to.
        let base = cwd.join(
            base.strip_prefix(runtime.root())
                .expect("the outputs folder is in the runtime"),
        );
        let dir = tempfile::Builder::new()
            .prefix("out.")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(&base)
            .map_err(io_error("staged", &base))?;
        let held = dir.path().join(HELD);
        let lock = fs::File::create_new(&held)
            .map_err(io_error("staged", &held))
            .and_then(|file| {
                Flock::lock(file, FlockArg::LockExclusiveNonblock)
                    .map_err(|(_, errno)| io_error("staged", &held)(errno.into()))
            })?;
        outputs._held = Some(lock);
        let mut sent = parsed.clone();
        for (n, file) in written.iter().enumerate() {
            // A plain name of ours (the kind of file is told by its
            // extension: a screenshot's format follows it).
            let staged = dir.path().join(format!("{n}{}", extension(&file.path)));
            let target = files::resolve(cwd, &file.path);
            replace(&mut sent, &file.slot, &staged.to_string_lossy());
            outputs.files.push(Output { staged, target });
        }
        outputs.dir = Some(dir);
        Ok((outputs, sent))
    }

    /// `text` (a reply, `json` when it is one JSON document) with every
    /// staged file's path, as the daemon printed it, put back as the
    /// agent's own.
    pub fn unstage(&self, text: &str, json: bool) -> String {
        let mut out = text.to_string();
        for file in &self.files {
            let staged = printable(&self.cwd, &file.staged);
            let target = printable(&self.cwd, &file.target);
            let target = if json {
                let quoted = serde_json::Value::String(target).to_string();
                quoted[1..quoted.len() - 1].to_string()
            } else {
                target
            };
            out = out.replace(&staged, &target);
        }
        out
    }

    /// Moves every staged file the daemon wrote to its target (folders
    /// made as the daemon makes them, private), replacing what is there
    /// in one step; the private folder goes. A text file is redacted first
    /// (`known`: the stored token's fingerprint), as anything printed is.
    /// Each file, and each folder made for it, is recorded as the agent's
    /// (`file_owners`); when the record cannot be kept, the files it would
    /// have covered are taken back, so none lies in the open unrecorded.
    pub fn deliver(mut self, known: Option<&Fingerprint>) -> Result<(), OutputsError> {
        let Some(mut owners) = self.owners.take() else {
            return Ok(());
        };
        // As it is now: a command that stepped aside comes back to a
        // record the others' commands wrote meanwhile.
        owners.record = FileOwners::read(&owners.runtime)?;
        let mut delivered = Vec::new();
        let done = self.deliver_each(known, &mut owners, &mut delivered);
        let kept = done.and_then(|()| Ok(owners.record.write(&owners.runtime)?));
        if kept.is_err() {
            for target in &delivered {
                let _ = fs::remove_file(target);
            }
        }
        kept
    }

    fn deliver_each(
        &self,
        known: Option<&Fingerprint>,
        owners: &mut Owners,
        delivered: &mut Vec<PathBuf>,
    ) -> Result<(), OutputsError> {
        for file in &self.files {
            match fs::symlink_metadata(&file.staged) {
                Ok(meta) if meta.is_file() => {}
                // Not written (the command failed): nothing to deliver.
                Ok(_) | Err(_) => continue,
            }
            redact_text_file(&file.staged, known)?;
            // Under the turn nothing else of my-chrome's came between; a
            // second look costs a few stats.
            owners
                .record
                .allows(&[(file.target.clone(), true)], owners.me)?;
            owners.record.make_folders(&file.target, owners.me)?;
            move_file(&file.staged, &file.target)?;
            delivered.push(file.target.clone());
            owners.record.delivered(&file.target, owners.me)?;
        }
        Ok(())
    }

    /// Removes what was staged: the reply was withheld.
    pub fn discard(self) {}
}

/// A file the daemon wrote, as text, redacted in place (the token's
/// spellings, the stored token's bare value) when it is text and anything
/// in it is to be; an image stays as it is (SECURITY.md).
pub fn redact_text_file(path: &Path, known: Option<&Fingerprint>) -> Result<(), OutputsError> {
    let Ok(bytes) = fs::read(path) else {
        return Ok(());
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return Ok(());
    };
    let redacted = crate::redact::redact_value(&text, known);
    if redacted == text {
        return Ok(());
    }
    let parent = path.parent().unwrap_or(Path::new("/"));
    let mut copy = tempfile::Builder::new()
        .prefix(".my-chrome-")
        .tempfile_in(parent)
        .map_err(io_error("redacted", path))?;
    io::Write::write_all(copy.as_file_mut(), redacted.as_bytes())
        .map_err(io_error("redacted", path))?;
    copy.persist(path)
        .map_err(|e| io_error("redacted", path)(e.error))?;
    Ok(())
}

/// Removes earlier commands' staged folders (their commands were killed
/// or abandoned); the daemon may still write into one, which the next
/// command removes. The folder of a command still waiting for its reply
/// (stepped aside: it holds the lock inside) stays.
fn clear(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let ours = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with("out."));
        if ours && entry.file_type().is_ok_and(|t| t.is_dir()) && !in_use(&path) {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

/// The lock file inside a staged folder, held by its command's process.
const HELD: &str = ".held";

/// Whether a living command holds the staged folder `dir`.
fn in_use(dir: &Path) -> bool {
    let Ok(file) = fs::File::open(dir.join(HELD)) else {
        return false;
    };
    matches!(
        Flock::lock(file, FlockArg::LockExclusiveNonblock),
        Err((_, nix::errno::Errno::EWOULDBLOCK))
    )
}

/// `.png`, `.json`: the extension of `path`, when it is a plain one.
fn extension(path: &str) -> String {
    Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .filter(|e| !e.is_empty() && e.len() <= 16 && e.bytes().all(|b| b.is_ascii_alphanumeric()))
        .map(|e| format!(".{e}"))
        .unwrap_or_default()
}

/// Puts `path` where `slot` named a file.
fn replace(parsed: &mut Parsed, slot: &Slot, path: &str) {
    match slot {
        Slot::Argument(at) => {
            if let Some(word) = parsed.positional.get_mut(*at) {
                *word = Value::Text(path.to_string());
            }
        }
        Slot::Option { key, nth } => {
            let value = match parsed.options.get(key).cloned() {
                Some(Value::List(mut values)) => {
                    if let Some(value) = values.get_mut(*nth) {
                        *value = Value::Text(path.to_string());
                    }
                    Value::List(values)
                }
                _ => Value::Text(path.to_string()),
            };
            parsed.options.insert(key, value);
        }
    }
}

/// Moves `from` to `to` in one step: a rename, or across file systems a
/// private copy beside `to` renamed over it (a link at `to` is replaced,
/// never followed).
fn move_file(from: &Path, to: &Path) -> Result<(), OutputsError> {
    match fs::rename(from, to) {
        Ok(()) => return Ok(()),
        Err(e) if e.raw_os_error() == Some(nix::libc::EXDEV) => {}
        Err(e) => return Err(io_error("delivered", to)(e)),
    }
    let parent = to.parent().unwrap_or(Path::new("/"));
    let mut copy = tempfile::Builder::new()
        .prefix(".my-chrome-")
        .tempfile_in(parent)
        .map_err(io_error("delivered", to))?;
    let mut source = fs::File::open(from).map_err(io_error("delivered", from))?;
    io::copy(&mut source, copy.as_file_mut()).map_err(io_error("delivered", to))?;
    copy.as_file()
        .sync_all()
        .map_err(io_error("delivered", to))?;
    copy.persist(to)
        .map_err(|e| io_error("delivered", to)(e.error))?;
    let _ = fs::remove_file(from);
    Ok(())
}

/// A path as the daemon prints a written file (`_printablePath`):
/// relative to its working directory, with `./` for a file right in it.
pub fn printable(cwd: &Path, file: &Path) -> String {
    let relative = relative(cwd, file);
    let in_cwd = !relative.contains('/') && !relative.starts_with('.');
    if in_cwd {
        format!("./{relative}")
    } else {
        relative
    }
}

/// Node's `path.relative` for two absolute paths.
fn relative(from: &Path, to: &Path) -> String {
    let parts = |p: &Path| -> Vec<String> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect()
    };
    let (from, to) = (parts(from), parts(to));
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let up = std::iter::repeat_n("..".to_string(), from.len() - common);
    up.chain(to[common..].iter().cloned())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_print_as_the_daemon_prints_them() {
        let cwd = Path::new("/home/u/.cache/my-chrome");
        for (file, printed) in [
            ("/home/u/.cache/my-chrome/x.png", "./x.png"),
            ("/home/u/.cache/my-chrome/sub/x.png", "sub/x.png"),
            ("/home/u/.cache/x.png", "../x.png"),
            ("/tmp/shots/a.png", "../../../../tmp/shots/a.png"),
            ("/home/u/.cache/my-chrome/.hidden", ".hidden"),
        ] {
            assert_eq!(printable(cwd, Path::new(file)), printed, "{file}");
        }
    }

    #[test]
    fn written_files_are_staged_and_the_reply_says_the_agents_path() {
        let (_home, runtime) = crate::runtime::scratch();
        let cwd = fs::canonicalize(runtime.root()).unwrap();
        let target_dir = tempfile::tempdir().unwrap();
        let target = target_dir.path().join("new/shot.png");
        let words = [
            "screenshot".to_string(),
            format!("--filename={}", target.display()),
        ];
        let parsed = crate::minimist::parse(&words, crate::pinned_commands::booleans()).unwrap();
        let (outputs, sent) = Outputs::stage(&runtime, &cwd, &parsed, 1).unwrap();
        let Some(Value::Text(staged)) = sent.options.get("filename") else {
            panic!("{sent:?}")
        };
        let staged = PathBuf::from(staged);
        assert!(staged.starts_with(cwd.join("tmp/outputs")), "{staged:?}");
        assert_eq!(staged.extension().unwrap(), "png");
        assert!(!target.exists());
        // The daemon writes it, and says so relative to its cwd.
        fs::write(&staged, b"image").unwrap();
        let said = format!("- [Screenshot]({})", printable(&cwd, &staged));
        assert_eq!(
            outputs.unstage(&said, false),
            format!("- [Screenshot]({})", printable(&cwd, &target))
        );
        outputs.deliver(None).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"image");
        assert!(!staged.exists(), "moved, not copied");
        assert!(
            fs::read_dir(cwd.join("tmp/outputs"))
                .unwrap()
                .next()
                .is_none(),
            "the private folder went"
        );
    }

    #[test]
    fn a_later_command_clears_only_the_folders_of_commands_gone() {
        let (_home, runtime) = crate::runtime::scratch();
        let cwd = fs::canonicalize(runtime.root()).unwrap();
        let stage = |name: &str| {
            let words = ["state-save".to_string(), format!("/tmp/{name}.json")];
            let parsed =
                crate::minimist::parse(&words, crate::pinned_commands::booleans()).unwrap();
            let (outputs, sent) = Outputs::stage(&runtime, &cwd, &parsed, 1).unwrap();
            let Value::Text(staged) = &sent.positional[1] else {
                panic!()
            };
            (outputs, PathBuf::from(staged))
        };
        // One command still waits for its reply (stepped aside); one was
        // killed (its folder left, nobody holding it).
        let (waiting, waiting_file) = stage("waiting");
        let gone = cwd.join("tmp/outputs/out.gone");
        fs::create_dir_all(&gone).unwrap();
        fs::write(gone.join(HELD), b"").unwrap();
        let (_later, _) = stage("later");
        assert!(!gone.exists());
        assert!(waiting_file.parent().unwrap().is_dir());
        fs::write(&waiting_file, b"cookies").unwrap();
        drop(waiting);
        assert!(!waiting_file.exists());
    }

    #[test]
    fn a_withheld_reply_leaves_no_file_anywhere() {
        let (_home, runtime) = crate::runtime::scratch();
        let cwd = fs::canonicalize(runtime.root()).unwrap();
        // A name of this run's own: a staging that failed (a mutant's) must
        // not leave a file that fails every later run.
        let asked = tempfile::Builder::new()
            .prefix("never-here-")
            .suffix(".json")
            .tempfile_in("/tmp")
            .unwrap()
            .into_temp_path();
        let named = asked.to_str().unwrap().to_string();
        fs::remove_file(&asked).unwrap();
        let words = ["state-save".to_string(), named.clone()];
        let parsed = crate::minimist::parse(&words, crate::pinned_commands::booleans()).unwrap();
        let (outputs, sent) = Outputs::stage(&runtime, &cwd, &parsed, 1).unwrap();
        let Value::Text(staged) = &sent.positional[1] else {
            panic!()
        };
        fs::write(staged, b"cookies").unwrap();
        outputs.discard();
        assert!(!Path::new(staged).exists());
        assert!(!Path::new(&named).exists());
    }

    #[test]
    fn a_line_that_writes_nothing_is_sent_as_it_is() {
        let (_home, runtime) = crate::runtime::scratch();
        let cwd = fs::canonicalize(runtime.root()).unwrap();
        for line in [&["upload", "/tmp/a"][..], &["snapshot"], &["click", "e1"]] {
            let words: Vec<String> = line.iter().map(|w| w.to_string()).collect();
            let parsed =
                crate::minimist::parse(&words, crate::pinned_commands::booleans()).unwrap();
            let (outputs, sent) = Outputs::stage(&runtime, &cwd, &parsed, 1).unwrap();
            assert_eq!(sent, parsed, "{line:?}");
            assert!(outputs.files.is_empty());
        }
    }
}
