//! Where a forwarded command's files may be (docs/DESIGN.md, invariant 8),
//! as far as the command line alone tells: which words name files, and the
//! rules that need no disk (file_args.rs checks the rest there).
//! The daemon reads and writes them wherever they point, without a check:
//! every option or argument that names a file (the command table says
//! which) is resolved as the daemon resolves it — against the runtime, the
//! CLI's working directory — and must then pass `FileRules::check`:
//!
//! - inside a root: the caller's working directory tree, the system
//!   temporary directory, or a root the user configured
//!   (`MY_CHROME_FILE_ROOTS`);
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
pub const NEVER: &str = "Files of forwarded commands must lie in the caller's working directory or \
                     /tmp (more roots only through MY_CHROME_FILE_ROOTS, set by the user), given \
                     as an absolute path with no symbolic link on the way, outside hidden \
                     folders, browser profiles and my-chrome's runtime; an existing file must be \
                     a plain, non-executable file";

/// One file a command line names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileArg {
    /// The command.
    pub command: String,
    /// Where the line names it: `--filename`, `argument 1`.
    pub what: String,
    pub path: String,
}

/// Every file `args` (a command line without session options) names, by
/// the pinned CLI's command table (its file options and file arguments,
/// lists included); refused when such an option or slot names no file.
pub fn files_of(args: &[String]) -> Result<Vec<FileArg>, Refusal> {
    let parsed = minimist::parse(args, pinned_commands::booleans())
        .map_err(|minimist::ParseError(why)| Refusal::Unreadable(why))?;
    let Some(minimist::Value::Text(name)) = parsed.positional.first() else {
        return Ok(Vec::new());
    };
    let Some(command) = pinned_commands::find(name) else {
        return Ok(Vec::new());
    };
    files_named(command, &parsed)
}

/// The files `parsed` names for `command`, by its table entry.
fn files_named(
    command: &pinned_commands::CliCommand,
    parsed: &minimist::Parsed,
) -> Result<Vec<FileArg>, Refusal> {
    let name = command.name;
    let flags = command
        .file_flags
        .iter()
        .filter_map(|flag| Some((format!("--{flag}"), parsed.options.get(flag)?)));
    let positional = command.file_args.iter().filter_map(|at| {
        Some((
            format!("argument {}", at + 1),
            parsed.positional.get(at + 1)?,
        ))
    });
    // A variadic argument: every word from its place on.
    let rest = command.file_rest.into_iter().flat_map(|from| {
        parsed
            .positional
            .iter()
            .enumerate()
            .skip(from + 1)
            .map(|(at, value)| (format!("argument {at}"), value))
    });
    let mut files = Vec::new();
    for (what, value) in flags.chain(positional).chain(rest) {
        // `--filename` alone (or `--no-filename`) names no file: what the
        // daemon would make of `true` is not ours to guess.
        if has_bool(value) {
            return Err(Refusal::NoFile {
                command: name.to_string(),
                what,
            });
        }
        files.extend(value.texts().into_iter().map(|path| FileArg {
            command: name.to_string(),
            what: what.clone(),
            path: path.to_string(),
        }));
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

/// A relative path would be resolved against the daemon's working
/// directory (the runtime), not the caller's: never what was meant.
pub fn absolute(raw: &str) -> Result<(), String> {
    if Path::new(raw).is_absolute() {
        Ok(())
    } else {
        Err(
            "a relative path would be resolved against my-chrome's runtime (the daemon's \
             working directory), not yours; give an absolute path"
                .into(),
        )
    }
}

/// The rules a resolved path's names alone decide: Playwright's own
/// folders, credential caches.
pub fn by_name(path: &Path) -> Result<(), String> {
    if path.components().any(|c| c.as_os_str() == "ms-playwright") {
        return Err(
            "it lies in Playwright's own folder (ms-playwright), whose programs the browser's \
             tools run"
                .into(),
        );
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if SECRET_NAMES.iter().any(|secret| name.starts_with(secret)) {
        return Err(format!(
            "{name:?} is a credential cache (Kerberos keeps tickets there)"
        ));
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

    #[test]
    fn the_table_says_which_words_name_files() {
        let files = files_of(&args(&["screenshot", "--filename=/tmp/a.png", "e1"])).unwrap();
        assert_eq!(
            files,
            [FileArg {
                command: "screenshot".into(),
                what: "--filename".into(),
                path: "/tmp/a.png".into()
            }]
        );
        let upload = files_of(&args(&["upload", "/tmp/a.txt"])).unwrap();
        assert_eq!(upload[0].what, "argument 1");
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
        let upload = pinned_commands::CliCommand {
            name: "upload",
            file_flags: vec![],
            file_args: vec![],
            file_rest: Some(0),
        };
        let parsed =
            minimist::parse(&args(&["upload", "/tmp/a", "/tmp/b", "/tmp/c"]), &[]).unwrap();
        let paths: Vec<String> = files_named(&upload, &parsed)
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
            files_named(&upload, &bare),
            Err(Refusal::NoFile { .. })
        ));
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
