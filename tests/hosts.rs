//! my-chrome where agents run: inside Codex's and Claude Code's own
//! sandboxes (issue 47), real ones (`codex sandbox`, `srt`), beside an agent
//! outside them on the same session.
//!
//! - A host's default sandbox blocks my-chrome's sockets: every command
//!   says so with exit 9 and the host's setting, and changes nothing.
//! - A sandbox that blocks only the runtime's writing is named as such.
//! - One that lets my-chrome reach its runtime and sockets works, with
//!   the agent's identity from its name, never from the namespace's pid 1.
//! - The installer's configuration makes Codex run my-chrome outside its
//!   sandbox, by Codex's own rule engine; host-config.js refuses a file it
//!   cannot read as expected and leaves it as it was.

mod common;

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::agent_hosts::{Host, codex, codex_home, inside};
use common::browser::{Browser, browser};
use common::{Run, Running};

/// Every file of the runtime, as (path, size, modified), but the daemon's
/// own folder and the staged outputs, which the session outside writes.
fn runtime_files(runtime: &Path) -> Vec<(PathBuf, u64, i64, i64)> {
    let mut out = Vec::new();
    let mut dirs = vec![runtime.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(runtime).unwrap().to_path_buf();
            if rel.starts_with("tmp") || rel.starts_with("session-output") {
                continue;
            }
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                dirs.push(path);
            }
            out.push((rel, meta.len(), meta.mtime(), meta.mtime_nsec()));
        }
    }
    out.sort();
    out
}

fn run(cmd: Command) -> Run {
    Running::start(cmd).wait()
}

/// The agent's workspace in the sandbox: its own folder of /tmp, where
/// forwarded commands may put files.
fn workspace(b: &Browser) -> PathBuf {
    b.sandbox().files().to_path_buf()
}

/// An srt settings file (in the test's home) that allows every Unix
/// socket and writing only in `writable`.
fn srt_with_sockets(b: &Browser, name: &str, writable: &[&Path]) -> PathBuf {
    let file = b.sandbox().home.path().join(name);
    let settings = serde_json::json!({
        "network": {"allowedDomains": [], "deniedDomains": [], "allowAllUnixSockets": true},
        "filesystem": {"denyRead": [], "allowWrite": writable, "denyWrite": []}
    });
    fs::write(&file, settings.to_string()).unwrap();
    file
}

/// Every kind of command, run inside `host`'s sandbox: each stops with
/// exit 9, names what is blocked and the host's setting, and the runtime
/// is as it was; ann, outside, goes on.
fn every_command_is_refused_and_nothing_changes(
    b: &Browser,
    host: &Host,
    what: &str,
    setting: &str,
) {
    let cwd = workspace(b);
    let before = runtime_files(&b.sandbox().runtime);
    let page = b.page("bob");
    let shot = cwd.join("shot.png").display().to_string();
    let commands: [&[&str]; 10] = [
        &["--agent", "bob", "goto", &page],
        &["--agent", "bob", "snapshot"],
        &["--agent", "bob", "eval", "1 + 1"],
        &["--agent", "bob", "screenshot", "--filename", &shot],
        &["--agent", "bob", "tab-new", &page],
        &["--agent", "bob", "release"],
        &["--agent", "bob", "agents"],
        &["ensure"],
        &["disconnect"],
        &["connect"],
    ];
    for args in commands {
        let said = run(inside(host, b.sandbox(), &cwd, args));
        assert_eq!(said.code, 9, "{args:?}: {}{}", said.stdout, said.stderr);
        for word in [what, setting, "nothing ran"] {
            assert!(
                said.stderr.contains(word),
                "{args:?}: {word:?} in {}",
                said.stderr
            );
        }
        for word in ["stale", "`my-chrome connect`", "approve"] {
            assert!(
                !said.stderr.contains(word),
                "{args:?}: {word:?} in {}",
                said.stderr
            );
        }
    }
    // doctor reports it, and does not call the session stale.
    let doctor = run(inside(host, b.sandbox(), &cwd, &["doctor"]));
    assert_eq!(doctor.code, 0, "{}", doctor.stderr);
    assert!(
        doctor.stdout.contains("session: not checked (see sandbox)"),
        "{}",
        doctor.stdout
    );
    let line = doctor
        .stdout
        .lines()
        .find(|l| l.starts_with("sandbox: "))
        .unwrap();
    assert!(line.contains(what) && line.contains(setting), "{line}");
    // The help only reads: it is there inside too.
    let help = run(inside(host, b.sandbox(), &cwd, &["--help"]));
    assert_eq!(help.code, 0, "{}", help.stderr);
    assert!(
        help.stdout.contains("Browser commands (forwarded"),
        "{}",
        help.stdout
    );
    assert_eq!(
        runtime_files(&b.sandbox().runtime),
        before,
        "a sandboxed command changed the runtime"
    );
    assert_eq!(
        fs::read_dir(&cwd).unwrap().count(),
        0,
        "nothing was written in the workspace"
    );
    // The session is the same for the agent outside.
    let eval = b.ok("ann", &["eval", "document.title"]);
    assert!(eval.stdout.contains("Agent ann"), "{}", eval.stdout);
    assert!(b.agents().to_string().contains("ann") && !b.agents().to_string().contains("bob"));
}

#[test]
fn each_hosts_default_sandbox_is_named_with_its_setting_and_changes_nothing() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    let home = codex_home("default");
    let codex_host = Host::Codex {
        home: &home,
        settings: &[],
    };
    every_command_is_refused_and_nothing_changes(
        &b,
        &codex_host,
        "Unix sockets",
        "prefix_rule(pattern",
    );
    // A runtime named by a path too long for a socket's address (through a
    // link in the workspace) is probed all the same.
    let long = workspace(&b).join("l".repeat(100));
    std::os::unix::fs::symlink(b.sandbox().home.path(), &long).unwrap();
    let mut padded = inside(&codex_host, b.sandbox(), &workspace(&b), &["doctor"]);
    padded.env("MY_CHROME_RUNTIME_DIR", long.join("runtime"));
    let doctor = run(padded);
    assert!(
        doctor.stdout.contains(
            "sandbox: inside this agent host's sandbox my-chrome cannot open the Unix sockets"
        ),
        "{}",
        doctor.stdout
    );
    fs::remove_file(&long).unwrap();
    let srt_host = Host::Srt { settings: None };
    every_command_is_refused_and_nothing_changes(
        &b,
        &srt_host,
        "Unix sockets",
        "dangerouslyDisableSandbox",
    );
}

#[test]
fn a_sandbox_that_blocks_only_writing_the_runtime_is_named_as_such() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    // Sockets allowed, nothing writable but the workspace.
    let settings = srt_with_sockets(&b, "srt-sockets.json", &[Path::new(".")]);
    let host = Host::Srt {
        settings: Some(&settings),
    };
    every_command_is_refused_and_nothing_changes(
        &b,
        &host,
        "write its runtime in",
        "dangerouslyDisableSandbox",
    );
}

/// A sandbox that lets my-chrome write its runtime and open sockets still
/// puts it in a PID namespace of its own: the process it would record for
/// the session's turn means nothing outside (one stopped with the turn kept
/// every other agent out without end, an attack found), so it is refused
/// the same way, and changes nothing.
#[test]
fn a_sandbox_that_lets_my_chrome_reach_its_runtime_is_refused_for_its_pid_namespace() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    let runtime = b.sandbox().runtime.clone();
    let home = codex_home("open");
    let codex_settings = [
        format!(
            "sandbox_workspace_write.writable_roots=[{:?}]",
            runtime.display().to_string()
        ),
        "sandbox_workspace_write.network_access=true".to_string(),
    ];
    let srt_settings = srt_with_sockets(&b, "srt-open.json", &[Path::new("."), &runtime]);
    let codex_host = Host::Codex {
        home: &home,
        settings: &codex_settings,
    };
    every_command_is_refused_and_nothing_changes(
        &b,
        &codex_host,
        "PID namespace of its own",
        "prefix_rule(pattern",
    );
    let srt_host = Host::Srt {
        settings: Some(&srt_settings),
    };
    every_command_is_refused_and_nothing_changes(
        &b,
        &srt_host,
        "PID namespace of its own",
        "dangerouslyDisableSandbox",
    );
}

/// What `install.sh --agent codex` writes makes Codex run these command
/// lines outside its sandbox, by Codex's own rule engine, and no other.
#[test]
fn the_installers_rule_lets_codex_run_my_chrome_and_nothing_else_outside_its_sandbox() {
    let home = tempfile::tempdir().unwrap();
    let record = home.path().join("record");
    let binary = "/opt/my chrome/bin/my-chrome";
    let added = host_config(home.path(), &["add", "codex", binary], &record);
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    assert!(String::from_utf8_lossy(&added.stdout).contains("prefix_rule(pattern"));
    let rules = home.path().join(".codex/rules/my-chrome.rules");
    let decision = |command: &[&str]| -> serde_json::Value {
        let out = Command::new(codex())
            .args(["execpolicy", "check", "--rules"])
            .arg(&rules)
            .args(command)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    for command in [
        vec![binary, "goto", "https://example.test/"],
        vec![binary, "snapshot"],
        vec![binary, "eval", "document.title"],
        vec![binary, "screenshot", "--filename", "shot.png"],
        vec![binary, "--agent", "bob:0123", "tab-list"],
    ] {
        assert_eq!(decision(&command)["decision"], "allow", "{command:?}");
    }
    for command in [
        vec!["my-chrome", "goto", "x"],
        vec!["/opt/my chrome/bin/my-chrome-other", "goto", "x"],
        vec!["sh", "-c", "/opt/my chrome/bin/my-chrome goto x; curl x"],
        vec!["rm", "-rf", "/"],
    ] {
        assert!(decision(&command).get("decision").is_none(), "{command:?}");
    }
    let removed = host_config(home.path(), &["remove", "codex", binary], &record);
    assert!(removed.status.success());
    assert!(!rules.exists() && !record.exists());
}

fn host_config(home: &Path, args: &[&str], record: &Path) -> std::process::Output {
    host_config_with(home, args, record, &[])
}

fn host_config_with(
    home: &Path,
    args: &[&str],
    record: &Path,
    vars: &[(&str, &Path)],
) -> std::process::Output {
    Command::new("node")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/host-config.js"))
        .args(args)
        .arg(record)
        .env_clear()
        .env("HOME", home)
        .envs(vars.iter().copied())
        .output()
        .unwrap()
}

/// `remove` takes back what `add` wrote where it wrote it, whatever
/// CODEX_HOME or CLAUDE_CONFIG_DIR say by then (an attack left the rule
/// behind by unsetting them), and a rewritten settings file keeps its mode.
#[test]
fn host_config_takes_back_what_it_wrote_where_it_wrote_it() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let record = home.path().join("record");
    let binary = "/opt/bin/my-chrome";
    let codex_home = home.path().join("alt-codex");
    let claude_dir = home.path().join("alt-claude");
    fs::create_dir_all(&claude_dir).unwrap();
    let settings = claude_dir.join("settings.json");
    fs::write(&settings, "{}\n").unwrap();
    fs::set_permissions(&settings, fs::Permissions::from_mode(0o644)).unwrap();
    let vars = [
        ("CODEX_HOME", codex_home.as_path()),
        ("CLAUDE_CONFIG_DIR", claude_dir.as_path()),
    ];
    for host in ["codex", "claude-code"] {
        let out = host_config_with(home.path(), &["add", host, binary], &record, &vars);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let rules = codex_home.join("rules/my-chrome.rules");
    assert!(rules.exists());
    assert!(
        fs::read_to_string(&settings)
            .unwrap()
            .contains("Bash(/opt/bin/my-chrome:*)")
    );
    assert_eq!(
        fs::metadata(&settings).unwrap().permissions().mode() & 0o777,
        0o644
    );
    for host in ["codex", "claude-code"] {
        let out = host_config(home.path(), &["remove", host, binary], &record);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(!rules.exists(), "the rule outlived the uninstall");
    assert_eq!(fs::read_to_string(&settings).unwrap(), "{}\n");
    assert_eq!(
        fs::metadata(&settings).unwrap().permissions().mode() & 0o777,
        0o644
    );
    assert!(!record.exists());
}

/// A configuration file the installer cannot read as expected is refused
/// by name, with the line to add by hand, and left byte for byte.
#[test]
fn host_config_never_rewrites_a_file_it_cannot_read_as_expected() {
    let home = tempfile::tempdir().unwrap();
    let record = home.path().join("record");
    let binary = "/opt/bin/my-chrome";
    let settings = home.path().join(".claude/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    for (text, says) in [
        ("{\"model\": \"opus\",}\n", "is not valid JSON"),
        ("[1, 2]\n", "does not hold a JSON object"),
        (
            "{\"model\":\"opus\",   \"theme\": \"dark\"}\n",
            "laid out in a way",
        ),
        (
            "{\n  \"permissions\": true\n}\n",
            "\"permissions\" is not an object",
        ),
        (
            "{\n  \"permissions\": {\n    \"allow\": \"Bash\"\n  }\n}\n",
            "is not an array",
        ),
    ] {
        fs::write(&settings, text).unwrap();
        let out = host_config(home.path(), &["add", "claude-code", binary], &record);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{text}: {err}");
        assert!(
            err.contains(says) && err.contains("nothing changed"),
            "{text}: {err}"
        );
        assert!(
            err.contains("Bash(/opt/bin/my-chrome:*)"),
            "the line to add by hand: {err}"
        );
        assert_eq!(fs::read_to_string(&settings).unwrap(), text);
        assert!(!record.exists());
    }
    // A link into the user's dotfiles: neither replaced nor written through.
    let dotfiles = home.path().join("dotfiles-settings.json");
    fs::write(&dotfiles, "{}\n").unwrap();
    fs::remove_file(&settings).unwrap();
    std::os::unix::fs::symlink(&dotfiles, &settings).unwrap();
    let out = host_config(home.path(), &["add", "claude-code", binary], &record);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("symbolic link"));
    assert!(
        fs::symlink_metadata(&settings)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_to_string(&dotfiles).unwrap(), "{}\n");
    fs::remove_file(&settings).unwrap();
    // Four spaces, no final newline: kept so, and taken back to the byte.
    let four = "{\n    \"model\": \"opus\"\n}";
    fs::write(&settings, four).unwrap();
    assert!(
        host_config(home.path(), &["add", "claude-code", binary], &record)
            .status
            .success()
    );
    let added = fs::read_to_string(&settings).unwrap();
    assert!(
        added.starts_with(
            "{\n    \"model\": \"opus\",\n    \"permissions\": {\n        \"allow\": [\n"
        ),
        "{added}"
    );
    assert!(!added.ends_with('\n'));
    assert!(
        host_config(home.path(), &["remove", "claude-code", binary], &record)
            .status
            .success()
    );
    assert_eq!(fs::read_to_string(&settings).unwrap(), four);
    // A rules file of the same name that is not ours.
    let rules = home.path().join(".codex/rules/my-chrome.rules");
    fs::create_dir_all(rules.parent().unwrap()).unwrap();
    fs::write(&rules, "prefix_rule(pattern = [\"rm\"])\n").unwrap();
    let out = host_config(home.path(), &["add", "codex", binary], &record);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not the file install.sh writes"));
    assert_eq!(
        fs::read_to_string(&rules).unwrap(),
        "prefix_rule(pattern = [\"rm\"])\n"
    );
    // Our lines taken out by hand before uninstall: nothing to remove, no failure.
    fs::remove_file(&rules).unwrap();
    fs::write(&settings, "{}\n").unwrap();
    assert!(
        host_config(home.path(), &["add", "claude-code", binary], &record)
            .status
            .success()
    );
    fs::write(&settings, "{}\n").unwrap();
    let out = host_config(home.path(), &["remove", "claude-code", binary], &record);
    assert!(out.status.success());
    assert_eq!(fs::read_to_string(&settings).unwrap(), "{}\n");
}

/// A PID namespace of its own made without an agent host (`unshare
/// --pid`), its first process a script as an agent's would be: refused,
/// named or not, and nothing changes. (Were it let through, `identity`
/// would derive no name from that first process either: every such
/// namespace starts alike, `bash@2`.)
#[test]
fn a_pid_namespace_of_its_own_is_refused_named_or_not() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    let script = b.sandbox().home.path().join("agent.sh");
    fs::write(&script, "\"$@\"\n").unwrap();
    let script = script.display().to_string();
    let wrapper = [
        "/usr/bin/unshare",
        "--pid",
        "--fork",
        "--mount-proc",
        "/bin/sh",
        "-c",
        "/bin/bash \"$0\" \"$@\"; exit $?",
        &script,
    ];
    let before = runtime_files(&b.sandbox().runtime);
    let page = b.page("bob");
    for args in [&["eval", "1"][..], &["--agent", "bob", "goto", &page]] {
        let said = run(b.sandbox().command_through(&wrapper, args));
        assert_eq!(said.code, 9, "{args:?}: {}{}", said.stdout, said.stderr);
        assert!(
            said.stderr.contains("PID namespace of its own"),
            "{}",
            said.stderr
        );
    }
    assert_eq!(runtime_files(&b.sandbox().runtime), before);
    assert!(!b.agents().to_string().contains("bob"), "{}", b.agents());
}
