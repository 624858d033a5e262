//! Where a forwarded command's files may be (docs/DESIGN.md, invariant 8),
//! as far as the command line alone tells: which words name files, and the
//! rules that need no disk (file_args.rs checks the rest there).
//! The daemon reads and writes them wherever they point, without a check:
//! every option or argument that names a file (the command table says
//! which) is resolved as the daemon resolves it — against the runtime, the
//! CLI's working directory — and must then pass `FileRules::check`:
//!
//! - inside a root: the system temporary directory, or a root the user
//!   configured (`my-chrome setup --file-root`, src/settings.rs) — never
//!   the caller's working directory, which is the caller's to pick;
//! - whatever the roots, never in my-chrome's runtime, a browser's user
//!   data directory (the configured one, any folder that looks like one),
//!   Playwright's own folders (`ms-playwright`), the platform's app data
//!   (`~/Library` on macOS, `~/snap` on Linux), nor in a hidden file or
//!   folder under the home directory or below its root (`~/.ssh`,
//!   `~/.config`, a project's `.git`);
//! - no symbolic link on the way;
//! - an existing file only when it is a regular file that is not
//!   executable and has no other name (hard link): a write never replaces
//!   what runs, a read never takes a file that is also somewhere else.
//!
//! The same rule serves reads (`upload`) and writes (`screenshot`): a file
//! a page must not receive is a file it must not overwrite.

use std::path::{Component, Path, PathBuf};

use super::Refusal;
use crate::minimist;
use crate::pinned_commands;

/// The system temporary directory, always a root.
pub const SYSTEM_TMP: &str = "/tmp";

/// Files that mark a browser's user data directory (Chromium's family,
/// Firefox): a folder holding one is a browser profile wherever it is.
pub const PROFILE_MARKERS: [&str; 5] = [
    "Local State",
    "SingletonLock",
    "prefs.js",
    "times.json",
    "profiles.ini",
];

/// Names of files that hold credentials where they are (the system
/// temporary directory is a root): Kerberos' ticket caches.
const SECRET_NAMES: [&str; 1] = ["krb5cc"];

/// What no root can open.
pub const NEVER: &str = "Files of forwarded commands must lie in /tmp (more roots only where the \
                     user allows them: ask the user to allow the folder), given as an absolute path with no symbolic link on the way, \
                     outside hidden folders, browser profiles and my-chrome's runtime; an \
                     existing file must be a plain, non-executable file";

/// Where a line names a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// An option (`filename`), its `n`th value when it is given more than
    /// once.
    Option { key: &'static str, nth: usize },
    /// A positional word (the command is 0).
    Argument(usize),
}

/// One file a command line names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileArg {
    /// The command.
    pub command: String,
    /// Where the line names it: `--filename`, `argument 1`.
    pub what: String,
    pub path: String,
    pub slot: Slot,
    /// Whether the command writes it (else it reads it).
    pub written: bool,
}

/// Every file a parsed command line names, by the pinned CLI's command
/// table (its file options and file arguments, lists included); refused
/// when such an option or slot names no file.
pub fn files_of(parsed: &minimist::Parsed) -> Result<Vec<FileArg>, Refusal> {
    let Some(minimist::Value::Text(name)) = parsed.positional.first() else {
        return Ok(Vec::new());
    };
    let Some(command) = pinned_commands::find(name) else {
        return Ok(Vec::new());
    };
    files_named(command, parsed)
}

/// The files `parsed` names for `command`, by its table entry.
fn files_named(
    command: &pinned_commands::CliCommand,
    parsed: &minimist::Parsed,
) -> Result<Vec<FileArg>, Refusal> {
    let name = command.name;
    // The review decides which slots are written (`file-out`); every other
    // one is read.
    let written = |token: &str| command.writes.contains(&token);
    let mut files = Vec::new();
    for flag in &command.file_flags {
        let Some(value) = parsed.options.get(flag) else {
            continue;
        };
        let what = format!("--{flag}");
        // `--filename` alone (or `--no-filename`) names no file: what the
        // daemon would make of `true` is not ours to guess.
        if has_bool(value) {
            return Err(Refusal::NoFile {
                command: name.to_string(),
                what,
            });
        }
        for (nth, path) in value.texts().into_iter().enumerate() {
            files.push(FileArg {
                command: name.to_string(),
                what: what.clone(),
                path: path.to_string(),
                slot: Slot::Option { key: flag, nth },
                written: written(&what),
            });
        }
    }
    let mut arguments: Vec<(usize, String)> = command
        .file_args
        .iter()
        .map(|at| (at + 1, at.to_string()))
        .collect();
    // A variadic argument: every word from its place on.
    if let Some(from) = command.file_rest {
        arguments.extend((from + 1..parsed.positional.len()).map(|at| (at, format!("{from}..."))));
    }
    for (at, token) in arguments {
        let Some(value) = parsed.positional.get(at) else {
            continue;
        };
        let what = format!("argument {at}");
        if has_bool(value) {
            return Err(Refusal::NoFile {
                command: name.to_string(),
                what,
            });
        }
        for path in value.texts() {
            files.push(FileArg {
                command: name.to_string(),
                what: what.clone(),
                path: path.to_string(),
                slot: Slot::Argument(at),
                written: written(&token),
            });
        }
    }
    Ok(files)
}

fn has_bool(value: &minimist::Value) -> bool {
    match value {
        minimist::Value::Bool(_) => true,
        minimist::Value::Text(_) => false,
        minimist::Value::List(values) => values.iter().any(has_bool),
    }
}

/// Why a file's name alone refuses it (`absolute`, `by_name`): said to the
/// agent after the file's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ByName {
    #[error(
        "a relative path would be resolved against my-chrome's runtime (the daemon's working \
         directory), not yours; give an absolute path"
    )]
    Relative,
    #[error(
        "it lies in Playwright's own folder (ms-playwright), whose programs the browser's tools \
         run"
    )]
    PlaywrightFolder,
    /// The file's name.
    #[error("{0:?} is a credential cache (Kerberos keeps tickets there)")]
    CredentialCache(String),
}

/// A relative path would be resolved against the daemon's working
/// directory (the runtime), not the caller's: never what was meant.
pub fn absolute(raw: &str) -> Result<(), ByName> {
    if Path::new(raw).is_absolute() {
        Ok(())
    } else {
        Err(ByName::Relative)
    }
}

/// The rules a resolved path's names alone decide: Playwright's own
/// folders, credential caches.
pub fn by_name(path: &Path) -> Result<(), ByName> {
    if path.components().any(|c| c.as_os_str() == "ms-playwright") {
        return Err(ByName::PlaywrightFolder);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if SECRET_NAMES.iter().any(|secret| name.starts_with(secret)) {
        return Err(ByName::CredentialCache(name.into_owned()));
    }
    Ok(())
}

/// The first hidden name (`.x`) in `path` below `base`, when `path` lies
/// under `base`.
pub fn hidden_below(path: &Path, base: &Path) -> Option<String> {
    let below = path.strip_prefix(base).ok()?;
    below
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .find(|name| name.starts_with('.'))
}

/// `raw` as the daemon resolves it (`path.resolve(cwd, raw)`): relative to
/// the runtime, `.` and `..` taken lexically.
pub fn resolve(runtime: &Path, raw: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for part in runtime.join(raw).components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> Vec<String> {
        line.iter().map(|s| s.to_string()).collect()
    }

    fn files_of(line: &[String]) -> Result<Vec<FileArg>, Refusal> {
        super::files_of(&minimist::parse(line, pinned_commands::booleans()).unwrap())
    }

    #[test]
    fn the_table_says_which_words_name_files() {
        let files = files_of(&args(&["screenshot", "--filename=/tmp/a.png", "e1"])).unwrap();
        assert_eq!(
            files,
            [FileArg {
                command: "screenshot".into(),
                what: "--filename".into(),
                path: "/tmp/a.png".into(),
                slot: Slot::Option {
                    key: "filename",
                    nth: 0
                },
                written: true,
            }]
        );
        let upload = files_of(&args(&["upload", "/tmp/a.txt"])).unwrap();
        assert_eq!(upload[0].what, "argument 1");
        assert_eq!(
            (&upload[0].slot, upload[0].written),
            (&Slot::Argument(1), false)
        );
        let saved = files_of(&args(&["state-save", "/tmp/s.json"])).unwrap();
        assert_eq!(
            (&saved[0].slot, saved[0].written),
            (&Slot::Argument(1), true)
        );
        let twice = files_of(&args(&["pdf", "--filename=/tmp/a", "--filename", "/tmp/b"])).unwrap();
        assert_eq!(
            twice.iter().map(|f| f.slot.clone()).collect::<Vec<_>>(),
            [
                Slot::Option {
                    key: "filename",
                    nth: 0
                },
                Slot::Option {
                    key: "filename",
                    nth: 1
                }
            ]
        );
        assert_eq!(files_of(&args(&["click", "/tmp/x"])).unwrap(), []);
        for line in [
            &["screenshot", "--filename"][..],
            &["screenshot", "--no-filename"],
        ] {
            assert!(
                matches!(files_of(&args(line)), Err(Refusal::NoFile { .. })),
                "{line:?}"
            );
        }
    }

    #[test]
    fn every_file_slot_of_the_pin_is_read_or_written_once() {
        for command in pinned_commands::table() {
            let tokens = command
                .file_flags
                .iter()
                .map(|f| format!("--{f}"))
                .chain(command.file_args.iter().map(|a| a.to_string()))
                .chain(command.file_rest.iter().map(|r| format!("{r}...")));
            let mut slots = Vec::new();
            for token in tokens {
                let found = [
                    command.writes.contains(&token.as_str()),
                    command.reads.contains(&token.as_str()),
                ];
                assert_eq!(
                    found.iter().filter(|f| **f).count(),
                    1,
                    "{} {token}: decide file-out or file-in in skill/cli/reviewed.txt",
                    command.name
                );
                slots.push(token);
            }
            // Every decision names a slot the pin has.
            for token in command.writes.iter().chain(&command.reads) {
                assert!(
                    slots.iter().any(|s| s == token),
                    "{} {token} is no file slot of the pin",
                    command.name
                );
            }
        }
        assert_eq!(
            pinned_commands::find("screenshot").unwrap().writes,
            ["--filename"]
        );
        assert_eq!(pinned_commands::find("drop").unwrap().reads, ["--path"]);
    }

    #[test]
    fn paths_resolve_against_the_runtime_as_the_daemon_resolves_them() {
        let runtime = Path::new("/home/u/.cache/my-chrome");
        assert_eq!(resolve(runtime, "x.png"), runtime.join("x.png"));
        assert_eq!(resolve(runtime, "/tmp/x.png"), Path::new("/tmp/x.png"));
        assert_eq!(
            resolve(runtime, "../my-chrome/cli/a.js"),
            runtime.join("cli/a.js")
        );
        assert_eq!(
            resolve(runtime, "../../../../../etc/x"),
            Path::new("/etc/x")
        );
        assert_eq!(
            resolve(runtime, "/tmp/../home/u/.cache/my-chrome/./cli"),
            runtime.join("cli")
        );
    }

    #[test]
    fn every_word_of_a_variadic_file_argument_is_a_file() {
        let upload = pinned_commands::find("upload").unwrap();
        let parsed =
            minimist::parse(&args(&["upload", "/tmp/a", "/tmp/b", "/tmp/c"]), &[]).unwrap();
        let paths: Vec<String> = files_named(upload, &parsed)
            .unwrap()
            .into_iter()
            .map(|f| format!("{} {}", f.what, f.path))
            .collect();
        assert_eq!(
            paths,
            [
                "argument 1 /tmp/a",
                "argument 2 /tmp/b",
                "argument 3 /tmp/c"
            ]
        );
        let bare = minimist::parse(&args(&["upload", "/tmp/a", "--no-_"]), &[]).unwrap();
        assert!(matches!(
            files_named(upload, &bare),
            Err(Refusal::NoFile { .. })
        ));
    }

    #[test]
    fn a_refusal_by_name_says_the_words_agents_have_always_read() {
        assert_eq!(
            absolute("x.png").unwrap_err().to_string(),
            "a relative path would be resolved against my-chrome's runtime (the daemon's working \
             directory), not yours; give an absolute path"
        );
        assert_eq!(
            by_name(Path::new("/tmp/ms-playwright/x")).unwrap_err(),
            ByName::PlaywrightFolder
        );
        assert_eq!(
            ByName::PlaywrightFolder.to_string(),
            "it lies in Playwright's own folder (ms-playwright), whose programs the browser's \
             tools run"
        );
        assert_eq!(
            by_name(Path::new("/tmp/krb5cc_1000"))
                .unwrap_err()
                .to_string(),
            "\"krb5cc_1000\" is a credential cache (Kerberos keeps tickets there)"
        );
    }

    #[test]
    fn names_alone_refuse_playwrights_folders_and_credential_caches() {
        assert!(absolute("x.png").is_err());
        assert!(absolute("/tmp/x.png").is_ok());
        assert!(by_name(Path::new("/tmp/ms-playwright/x")).is_err());
        assert!(by_name(Path::new("/tmp/krb5cc_1000")).is_err());
        assert!(by_name(Path::new("/tmp/playwright/x.png")).is_ok());
        assert_eq!(
            hidden_below(Path::new("/h/w/.git/hooks/x"), Path::new("/h/w")),
            Some(".git".into())
        );
        assert_eq!(hidden_below(Path::new("/h/.x"), Path::new("/h/w")), None);
    }
}
