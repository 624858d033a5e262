//! Where a forwarded command's files may go (docs/DESIGN.md, invariant 8).
//! The daemon writes (and reads) them wherever they point, without a check:
//! every option or argument that names a file (the command table says
//! which) is resolved as the daemon resolves it — against the runtime, the
//! CLI's working directory — and refused when it lands inside the runtime
//! (`<runtime>/cli` included) or passes a symbolic link on its way.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use crate::commands;
use crate::minimist;
use crate::token::shape::redact_runs;

/// Why the file arguments of `args` (a command line without session
/// options) may not be passed on, if they may not.
pub fn refusal(runtime: &Path, args: &[String]) -> Option<String> {
    let parsed = match minimist::parse(args, commands::booleans()) {
        Ok(parsed) => parsed,
        Err(minimist::ParseError(why)) => return Some(why),
    };
    let name = match parsed.positional.first()? {
        minimist::Value::Text(name) => name,
        _ => return None,
    };
    let command = commands::find(name)?;
    let flags = command.file_flags.iter().flat_map(|flag| {
        let values = parsed.options.get(flag).map(minimist::Value::texts);
        values
            .unwrap_or_default()
            .into_iter()
            .map(move |value| (format!("--{flag}"), value))
    });
    let positional = command.file_args.iter().flat_map(|at| {
        let value = parsed.positional.get(at + 1).map(minimist::Value::texts);
        value
            .unwrap_or_default()
            .into_iter()
            .map(move |value| (format!("argument {}", at + 1), value))
    });
    for (what, value) in flags.chain(positional).collect::<Vec<_>>() {
        if let Err(why) = check(runtime, value) {
            return Some(format!(
                "`{name}` {what} {:?}: {why}. Give an absolute path outside my-chrome's runtime \
                 whose directories are no symbolic links",
                redact_runs(value)
            ));
        }
    }
    None
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

/// Fine for a file of a forwarded command: outside the runtime, and no
/// symbolic link on its way. The daemon's working directory is the
/// runtime's real path (a link above it is resolved), so a relative name
/// is resolved against that; and a directory on the way that *is* the
/// runtime (same device and inode: another spelling of its path, a
/// case-insensitive file system) counts as inside.
pub fn check(runtime: &Path, raw: &str) -> Result<(), String> {
    let inside = || {
        Err(format!(
            "it would land inside my-chrome's private runtime ({})",
            runtime.display()
        ))
    };
    let real_runtime = fs::canonicalize(runtime).unwrap_or_else(|_| runtime.to_path_buf());
    let path = resolve(&real_runtime, raw);
    if path.starts_with(runtime) || path.starts_with(&real_runtime) {
        return inside();
    }
    let identity = |meta: &fs::Metadata| (meta.dev(), meta.ino());
    let runtime_id = fs::metadata(&real_runtime).ok().map(|m| identity(&m));
    let mut prefix = PathBuf::new();
    for part in path.components() {
        prefix.push(part);
        match fs::symlink_metadata(&prefix) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(format!(
                    "{} on its way is a symbolic link",
                    prefix.display()
                ));
            }
            Ok(meta) if Some(identity(&meta)) == runtime_id => return inside(),
            Ok(_) => {}
            // What does not exist yet cannot be a link (the daemon creates
            // the file itself).
            Err(_) => break,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> Vec<String> {
        line.iter().map(|s| s.to_string()).collect()
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
    fn files_inside_the_runtime_or_through_a_link_are_refused() {
        let home = tempfile::tempdir().unwrap();
        let runtime = home.path().join("runtime");
        fs::create_dir_all(runtime.join("cli/node_modules")).unwrap();
        let outside = home.path().join("out");
        fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&runtime, home.path().join("link")).unwrap();
        std::os::unix::fs::symlink("/nowhere", outside.join("dangling")).unwrap();
        let target = runtime.join("cli/node_modules/@playwright/cli/playwright-cli.js");
        let refused = |line: &[&str]| refusal(&runtime, &args(line));
        for line in [
            &["screenshot", "--filename=x.png"][..],
            &["screenshot", "--filename", "x.png"],
            &["pdf", &format!("--filename={}", target.display())],
            &[
                "response-body",
                "3",
                "--filename",
                &format!("{}/../runtime/cli/a", outside.display()),
            ],
            &["state-save", "state.json"],
            &[
                "video-start",
                "--size",
                "800x600",
                &runtime.join("v.webm").display().to_string(),
            ],
            &[
                "snapshot",
                &format!("--filename={}/link/x.yml", home.path().display()),
            ],
            &[
                "eval",
                "1",
                &format!("--filename={}/dangling", outside.display()),
            ],
            &["screenshot", "--filename=/tmp/ok.png", "--filename=x.png"],
            &["upload", "session-output/page.yml"],
        ] {
            assert!(refused(line).is_some(), "{line:?} passed");
        }
        for line in [
            &[
                "screenshot",
                &format!("--filename={}/x.png", outside.display()),
            ][..],
            &["screenshot", "e5"],
            &[
                "video-start",
                "--size",
                "800x600",
                &outside.join("v.webm").display().to_string(),
            ],
            &["cookie-set", "a", "b", "--path", "/"],
            &["goto", "https://example.test/x.png"],
            &["tab-list"],
        ] {
            assert_eq!(refused(line), None, "{line:?}");
        }
        let why = refused(&["pdf", "--filename=../runtime/cli/x"]).unwrap();
        assert!(why.contains("inside my-chrome's private runtime"), "{why}");
        let why = refused(&[
            "snapshot",
            &format!("--filename={}/link/x", home.path().display()),
        ])
        .unwrap();
        assert!(why.contains("is a symbolic link"), "{why}");
    }

    #[test]
    fn a_runtime_reached_through_a_link_is_still_the_runtime() {
        // Configured as /…/via/runtime where `via` links to the real parent:
        // the daemon's cwd is the real path, and `..` climbs from there.
        let home = tempfile::tempdir().unwrap();
        let real = home.path().join("x/y");
        fs::create_dir_all(real.join("runtime")).unwrap();
        std::os::unix::fs::symlink(&real, home.path().join("via")).unwrap();
        let configured = home.path().join("via/runtime");
        for line in [
            &["state-save", "../../y/runtime/bootstrap.json"][..],
            &["state-save", "../runtime/lease.json"],
            &["pdf", "--filename=./cli/x"],
        ] {
            let args: Vec<String> = line.iter().map(|s| s.to_string()).collect();
            assert!(refusal(&configured, &args).is_some(), "{line:?} passed");
        }
    }
}
