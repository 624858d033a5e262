//! The installed CLI is trusted only while it is exactly what we ship:
//! tamper cases on a real installed tree, reported by `doctor` and refused by
//! the library checks that every later command uses.

mod common;

use std::fs;
use std::path::Path;

use common::{Sandbox, says};
use my_chrome::helper::check::{Check, Fault, check};
use my_chrome::helper::pin::Pin;
use my_chrome::helper::{Helper, HelperError};

fn compatibility(sandbox: &Sandbox) -> String {
    sandbox.doctor()["cli"]["compatibility"]
        .as_str()
        .unwrap()
        .to_string()
}

fn set_version(manifest: &Path, version: &str) {
    let mut doc: serde_json::Value = serde_json::from_slice(&fs::read(manifest).unwrap()).unwrap();
    doc["version"] = version.into();
    fs::write(manifest, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
}

#[test]
fn the_golden_install_is_supported_and_intact() {
    let sandbox = Sandbox::installed();
    assert_eq!(compatibility(&sandbox), "supported");
    let pin = Pin::shipped();
    check(&sandbox.cli(), pin, Check::Verified).unwrap();
    check(&sandbox.cli(), pin, Check::Intact).unwrap();
}

#[test]
fn a_lock_with_one_byte_changed_is_unsupported_and_not_intact() {
    let sandbox = Sandbox::installed();
    let lock = sandbox.cli().join("package-lock.json");
    let mut bytes = fs::read(&lock).unwrap();
    let at = bytes.iter().position(|b| *b == b'3').unwrap(); // lockfileVersion 3 -> 4
    bytes[at] = b'4';
    fs::write(&lock, bytes).unwrap();
    assert_eq!(
        compatibility(&sandbox),
        "unsupported: package-lock.json differs from the shipped lock"
    );
    assert_eq!(
        check(&sandbox.cli(), Pin::shipped(), Check::Intact),
        Err(Fault::UnknownLock)
    );
}

#[test]
fn a_package_at_another_version_is_named_with_both_versions() {
    let sandbox = Sandbox::installed();
    let core = Pin::shipped()
        .lock
        .packages
        .iter()
        .find(|p| p.name == "playwright-core")
        .unwrap();
    set_version(
        &sandbox
            .cli()
            .join("node_modules/playwright-core/package.json"),
        "1.61.0",
    );
    assert_eq!(
        compatibility(&sandbox),
        format!(
            "unsupported: playwright-core is 1.61.0, lock says {}",
            core.version
        )
    );
    assert!(matches!(
        check(&sandbox.cli(), Pin::shipped(), Check::Intact),
        Err(Fault::WrongVersion { .. })
    ));
}

#[test]
fn the_cli_at_another_version_is_refused() {
    let sandbox = Sandbox::installed();
    set_version(
        &sandbox
            .cli()
            .join("node_modules/@playwright/cli/package.json"),
        "0.1.16",
    );
    assert_eq!(
        compatibility(&sandbox),
        format!(
            "unsupported: @playwright/cli is 0.1.16, lock says {}",
            Pin::shipped().version
        )
    );
}

#[test]
fn a_missing_package_is_named() {
    let sandbox = Sandbox::installed();
    fs::remove_dir_all(sandbox.cli().join("node_modules/playwright")).unwrap();
    assert_eq!(
        compatibility(&sandbox),
        "unsupported: missing node_modules/playwright"
    );
    assert_eq!(
        check(&sandbox.cli(), Pin::shipped(), Check::Intact),
        Err(Fault::Missing("node_modules/playwright".into()))
    );
}

#[test]
fn a_file_edited_or_added_after_setup_is_caught_by_the_tree_digest() {
    let sandbox = Sandbox::installed();
    let file = sandbox
        .cli()
        .join("node_modules/playwright-core/lib/tools/cli-client/program.js");
    let original = fs::read(&file).unwrap();
    fs::write(&file, [&original[..], b"\n// injected\n"].concat()).unwrap();
    assert!(
        compatibility(&sandbox)
            .starts_with("unsupported: installed files differ from the pin (tree digest")
    );
    // The quick check (every browser command) does not hash; the full one does.
    check(&sandbox.cli(), Pin::shipped(), Check::Supported).unwrap();
    // Edited code still lets us detach: intact does not need the digest.
    check(&sandbox.cli(), Pin::shipped(), Check::Intact).unwrap();

    fs::write(&file, original).unwrap();
    assert_eq!(compatibility(&sandbox), "supported");
    fs::write(
        sandbox.cli().join("node_modules/playwright-core/evil.js"),
        "process.exit(0)",
    )
    .unwrap();
    assert!(compatibility(&sandbox).contains("tree digest"));
}

#[test]
fn what_the_cli_reports_must_be_the_pinned_version() {
    let sandbox = Sandbox::installed();
    let config = my_chrome::config::Config::from_vars([
        ("HOME".into(), sandbox.home.path().into()),
        (
            "MY_CHROME_RUNTIME_DIR".into(),
            sandbox.runtime.clone().into(),
        ),
    ])
    .unwrap();
    let pin = Pin::shipped();
    let env = my_chrome::child::ChildEnv::new(&config, &sandbox.runtime.join("tmp"));
    let node = my_chrome::helper::trusted_node(&config, pin, &env).unwrap();
    let helper = Helper::at(sandbox.cli());
    helper
        .check_reported_version(pin, &node, &env, &sandbox.runtime)
        .unwrap();

    // The CLI prints its manifest's version: change it and --version follows.
    set_version(
        &sandbox
            .cli()
            .join("node_modules/@playwright/cli/package.json"),
        "9.9.9",
    );
    match helper.check_reported_version(pin, &node, &env, &sandbox.runtime) {
        Err(HelperError::Unsupported {
            fault: Fault::ReportedVersion { found, expected },
            ..
        }) => assert_eq!(
            (found.as_str(), expected.as_str()),
            ("9.9.9", pin.version.as_str())
        ),
        other => panic!("expected a reported-version fault, got {other:?}"),
    }
}

#[test]
fn doctor_json_is_stable() {
    let sandbox = Sandbox::installed();
    let report = sandbox.doctor();
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&report),
        [
            "agents",
            "bound_browser",
            "chrome",
            "cli",
            "node",
            "process_token",
            "rotation",
            "runtime",
            "sandbox",
            "session",
            "session_limits",
            "settings",
            "token"
        ]
    );
    assert_eq!(report["sandbox"]["status"], "none");
    assert_eq!(keys(&report["cli"]), ["compatibility", "path", "version"]);
    assert_eq!(keys(&report["node"]), ["path", "status", "version"]);
    assert_eq!(keys(&report["runtime"]), ["path", "status"]);
    assert_eq!(keys(&report["token"]), ["item", "status"]);
    assert_eq!(
        keys(&report["chrome"]),
        [
            "browser",
            "chosen",
            "installed",
            "name",
            "path",
            "pids",
            "status",
            "user_data"
        ]
    );
    assert_eq!(keys(&report["process_token"]), ["pids", "status"]);
    assert_eq!(keys(&report["rotation"]), ["status"]);
    assert_eq!(keys(&report["session"]), ["detail", "name", "status"]);
    assert_eq!(report["session"]["status"], "missing");
    assert_eq!(keys(&report["bound_browser"]), ["paths", "status"]);
    assert_eq!(report["bound_browser"]["status"], "shut");
    assert_eq!(keys(&report["agents"]), ["detail", "status"]);
    assert_eq!(report["agents"]["status"], "no agent has a tab");
    assert_eq!(report["cli"]["path"], sandbox.cli().display().to_string());
    assert_eq!(report["node"]["status"], "ok");
    assert_eq!(report["rotation"]["status"], "not started");
    assert_eq!(
        keys(&report["session_limits"]),
        ["idle_left_secs", "lifetime_left_secs", "status", "watcher"]
    );
    assert_eq!(report["session_limits"]["status"], "no session");
    assert_eq!(
        keys(&report["settings"]),
        [
            "agent_gone_secs",
            "agent_tabs",
            "command_bound_secs",
            "connect_consent",
            "file_roots",
            "idle_limit_secs",
            "lifetime_limit_secs",
            "session_tabs",
            "status"
        ]
    );
    assert_eq!(report["settings"]["agent_tabs"], 10);
    assert_eq!(report["settings"]["session_tabs"], 30);
    assert_eq!(report["settings"]["idle_limit_secs"], 1800);
    assert_eq!(report["settings"]["lifetime_limit_secs"], 8 * 3600);

    let text = sandbox.run(&["doctor"]).stdout;
    let labels: Vec<&str> = text.lines().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "runtime",
            "node",
            "cli",
            "version",
            "compatibility",
            "token",
            "browser",
            "process-token",
            "rotation",
            "session",
            "session-limits",
            "bound-browser",
            "agents",
            "settings",
            "sandbox"
        ]
    );
    assert!(text.contains("compatibility: supported\n"), "{text}");
    assert!(text.contains("agents: no agent has a tab\n"), "{text}");
}

#[test]
fn doctor_reports_a_missing_runtime_without_creating_it() {
    let sandbox = Sandbox::new();
    let report = sandbox.doctor();
    assert_eq!(report["runtime"]["status"], "missing");
    assert_eq!(report["cli"]["compatibility"], "missing");
    assert!(!sandbox.runtime.exists(), "doctor created the runtime");
}

#[test]
fn help_and_version_name_both_the_wrapper_and_the_pinned_cli() {
    let sandbox = Sandbox::installed();
    let version = sandbox.run(&["--version"]);
    assert_eq!(version.code, 0);
    assert!(
        version.stdout.contains("my-chrome ")
            && version.stdout.contains(&format!(
                "@playwright/cli {} (pinned)",
                Pin::shipped().version
            ))
    );
    let help = sandbox.run(&["--help"]).stdout;
    let ours = help.find("connect").expect("our usage first");
    let theirs = help
        .find("Browser commands (forwarded to the pinned @playwright/cli)")
        .expect(&help);
    assert!(ours < theirs && help.contains("playwright-cli"), "{help}");
    let bare = Sandbox::new().run(&["--help"]).stdout;
    assert!(
        bare.contains("once `my-chrome setup` has installed"),
        "{bare}"
    );
    assert!(
        !bare.contains("playwright-cli <command>"),
        "an unsupported CLI's help is not shown"
    );
}

#[test]
fn the_shipped_command_table_is_the_installed_clis_own() {
    // A pin move that changes the CLI's commands fails here until
    // scripts/pin-cli.sh has regenerated skill/cli/commands.txt.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/cli-commands.sh");
    let out = std::process::Command::new(script)
        .arg(common::golden_runtime().join("cli"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        include_str!("../skill/cli/commands.txt")
    );
    let installed = common::golden_runtime()
        .join("cli/node_modules/playwright-core/lib/tools/cli-client/help.json");
    assert_eq!(
        fs::read(installed).unwrap(),
        include_bytes!("../skill/cli/help.json"),
        "skill/cli/help.json is the pinned client's own"
    );
}

#[test]
fn doctor_runs_no_node_while_the_record_of_the_last_full_check_holds() {
    use std::os::unix::fs::PermissionsExt;
    let mut sandbox = Sandbox::installed();
    // A node that notes every start, then runs the real one.
    let real = ["/usr/bin/node", "/usr/local/bin/node"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("a node");
    let starts = sandbox.home.path().join("node-starts");
    let node = sandbox.home.path().join("bin/node");
    fs::create_dir(node.parent().unwrap()).unwrap();
    let script = format!(
        "#!/bin/sh\necho x >> {}\nexec {real} \"$@\"\n",
        starts.display()
    );
    fs::write(&node, &script).unwrap();
    fs::set_permissions(&node, fs::Permissions::from_mode(0o755)).unwrap();
    sandbox.set("MY_CHROME_NODE", &node);
    let count = || {
        fs::read_to_string(&starts)
            .unwrap_or_default()
            .lines()
            .count()
    };

    // Without a record, doctor runs node (its version, the CLI's --version).
    let first = sandbox.doctor();
    assert_eq!(first["cli"]["compatibility"], "supported", "{first}");
    assert!(count() >= 2, "{}", count());
    // The first command that needs the helper checks it in full and
    // records it, node included.
    sandbox.run(&["tab-list"]).expect(4, "");
    let before = count();
    let recorded = sandbox.doctor();
    assert_eq!(
        count(),
        before,
        "doctor started node with the record intact"
    );
    for part in ["node", "cli", "runtime"] {
        assert_eq!(recorded[part], first[part], "the same {part} report");
    }
    let text = sandbox.run(&["doctor"]);
    assert_eq!(count(), before);
    assert!(
        text.stdout.contains("compatibility: supported\n"),
        "{}",
        text.stdout
    );

    // The node file changed since: it is run again to learn its version.
    fs::write(&node, format!("{script}\n")).unwrap();
    let changed = sandbox.doctor();
    assert!(count() > before, "a changed node was not run");
    assert_eq!(changed["node"]["status"], "ok", "{changed}");
    assert_eq!(changed["node"]["version"], first["node"]["version"]);
}

/// A tree that is exactly what its record says can still be another pin's
/// (what a my-chrome upgrade leaves): doctor checks the pin, without a
/// process, and says so.
#[test]
fn doctor_checks_the_pin_of_a_tree_that_matches_its_record() {
    use my_chrome::config::RuntimeLocation;
    use my_chrome::runtime::{Runtime, StateFile};
    let sandbox = Sandbox::installed();
    let lock = sandbox.cli().join("package-lock.json");
    let mut bytes = fs::read(&lock).unwrap();
    let at = bytes.iter().position(|b| *b == b'3').unwrap();
    bytes[at] = b'4';
    fs::write(&lock, bytes).unwrap();
    // The changed tree recorded as if a full check had passed on it (as
    // the check's record is written: sealed, then each entry).
    let runtime = Runtime::open(&RuntimeLocation {
        path: sandbox.runtime.clone(),
    })
    .unwrap();
    Helper::at(sandbox.cli()).seal().unwrap();
    let record = my_chrome::helper::manifest::Manifest::take(&sandbox.cli()).unwrap();
    runtime
        .write_state(StateFile::HelperManifest, &record.to_bytes())
        .unwrap();
    assert!(Helper::at(sandbox.cli()).unchanged(&runtime).unwrap());
    assert_eq!(
        compatibility(&sandbox),
        "unsupported: package-lock.json differs from the shipped lock"
    );
}

/// The full check and the record are two passes: the digest reads every
/// file, then `--version` runs through node (tens of milliseconds or more),
/// then the tree is sealed and recorded as it is *then*. A process of the
/// same user that waits for that `--version` run and edits a file of the
/// tree meanwhile gets its edit recorded as verified: every later command
/// finds the tree "unchanged" and runs the edit. No record is edited, no
/// root needed; the thread here is what such a process does (it watches
/// `/proc` for the run, as `python3` as an ordinary user did against
/// `my-chrome setup`). Found with the walk and with the look-ups alike:
/// the record is right about the tree, the tree is not what was verified.
/// Hence the record (after sealing) is taken *before* the digest, and
/// written only if the tree still matches it once the check has passed.
#[test]
fn a_file_edited_between_the_full_check_and_its_record_is_not_run() {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    use std::time::{Duration, Instant};
    let sandbox = Sandbox::installed();
    let entry = sandbox.cli().join(my_chrome::helper::ENTRY);
    let marker = sandbox.home.path().join("ran-unverified");
    let payload = format!(
        "\n;require('fs').writeFileSync({:?}, 'x');\n",
        marker.display().to_string()
    );
    let wanted = format!("{}\0--version", entry.display()).into_bytes();
    let racer = {
        let entry = entry.clone();
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(120);
            while Instant::now() < deadline {
                for proc in fs::read_dir("/proc").unwrap().flatten() {
                    let cmdline = proc.path().join("cmdline");
                    let Ok(cmd) = fs::read(&cmdline) else {
                        continue;
                    };
                    if !cmd.windows(wanted.len()).any(|w| w == wanted.as_slice()) {
                        continue;
                    }
                    fs::set_permissions(&entry, fs::Permissions::from_mode(0o644)).unwrap();
                    fs::OpenOptions::new()
                        .append(true)
                        .open(&entry)
                        .unwrap()
                        .write_all(payload.as_bytes())
                        .unwrap();
                    // Edited while the check's `--version` still ran: the
                    // digest was over, the record still to come.
                    return fs::read(&cmdline).is_ok_and(|now| now == cmd);
                }
                std::thread::sleep(Duration::from_micros(200));
            }
            false
        })
    };
    let setup = sandbox.run(&["setup"]);
    assert!(
        racer.join().unwrap(),
        "the edit did not land while --version ran"
    );
    let _ = fs::remove_file(&marker);
    // The record was taken before the check: the edit is a change to it,
    // and no record of the edited tree is kept.
    says(&setup, 6, "playwright-cli.js");
    // Without a record, `--help` checks the copy in full, finds the edit,
    // and leaves the browser commands out: none of its code runs.
    let help = sandbox.run(&["--help"]);
    assert!(
        !marker.exists(),
        "code the full check never saw ran (--help exit {})",
        help.code
    );
    assert!(!help.stdout.contains("forwarded to the pinned"));
}
