//! `my-chrome setup` for real: a real `npm ci` from the shipped lock, and
//! every way it can fail leaves the previous copy as it was.

mod common;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use common::{FakeNpm, Sandbox, mode, wait_gone};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

#[test]
fn setup_on_a_fresh_home_installs_a_supported_copy_and_a_second_run_changes_nothing() {
    // No MY_CHROME_RUNTIME_DIR: the default location under HOME, and
    // setup's own fresh npm cache, so this is a real install from the
    // registry.
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.command(&["setup"]);
    cmd.env_remove("MY_CHROME_RUNTIME_DIR");
    let first = common::Running::start(cmd).wait();
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        first.stdout.contains(&format!(
            "installed @playwright/cli {}",
            my_chrome::helper::pin::Pin::shipped().version
        )),
        "{}",
        first.stdout
    );

    let runtime = sandbox.home.path().join(".cache/my-chrome");
    assert_eq!(mode(&runtime), 0o700);
    // npm's cache was setup's, in the private TMPDIR, and went with it.
    assert!(!sandbox.home.path().join(".npm").exists());
    assert!(!runtime.join("tmp/npm-cache").exists());
    assert_eq!(mode(&runtime.join(".my-chrome-runtime")), 0o600);
    for sub in ["tmp", ".playwright"] {
        assert_eq!(mode(&runtime.join(sub)), 0o700, "{sub}");
    }
    // The helper is sealed read-only, and recorded as verified.
    let cli = runtime.join("cli");
    assert_eq!(mode(&cli), 0o500);
    assert_eq!(mode(&cli.join("package.json")), 0o400);
    assert_eq!(mode(&cli.join("node_modules/@playwright/cli")), 0o500);
    let record = fs::read_to_string(runtime.join("cli-manifest.txt")).unwrap();
    assert!(record.lines().count() > 100, "{record}");
    assert!(
        record
            .lines()
            .any(|l| l.ends_with(" node_modules/@playwright/cli/playwright-cli.js"))
    );

    let mut doctor = sandbox.command(&["doctor", "--json"]);
    doctor.env_remove("MY_CHROME_RUNTIME_DIR");
    let report = common::Running::start(doctor).wait().json();
    assert_eq!(report["cli"]["compatibility"], "supported");
    assert_eq!(
        report["cli"]["version"],
        my_chrome::helper::pin::Pin::shipped().version.as_str()
    );
    assert_eq!(report["runtime"]["status"], "ok");

    let before = fs::metadata(runtime.join("cli")).unwrap().ino();
    let mut again = sandbox.command(&["setup"]);
    again.env_remove("MY_CHROME_RUNTIME_DIR");
    let second = common::Running::start(again).wait();
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second.stdout.contains("already supported; nothing changed"),
        "{}",
        second.stdout
    );
    assert!(
        !second.stderr.contains("npm"),
        "a no-op setup must not run npm: {}",
        second.stderr
    );
    assert_eq!(fs::metadata(runtime.join("cli")).unwrap().ino(), before);
}

#[test]
fn setup_repairs_a_tampered_copy_with_a_real_npm_ci() {
    let sandbox = Sandbox::installed();
    sandbox.tamper();
    assert!(
        sandbox.doctor()["cli"]["compatibility"]
            .as_str()
            .unwrap()
            .contains("tree digest")
    );
    let run = sandbox.run(&["setup"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("installed"), "{}", run.stdout);
    assert_eq!(sandbox.doctor()["cli"]["compatibility"], "supported");
    assert!(sandbox.leftovers().is_empty(), "{:?}", sandbox.leftovers());
}

#[test]
fn children_see_only_the_allowlisted_environment() {
    let npm =
        FakeNpm::new("env > @DIR@/env.txt\numask > @DIR@/umask.txt\npwd > @DIR@/cwd.txt\nexit 1");
    let evil = npm.file("evil.js");
    fs::write(
        &evil,
        format!(
            "require('fs').writeFileSync({:?}, 'ran')",
            npm.file("evil-ran").display()
        ),
    )
    .unwrap();
    let mut sandbox = Sandbox::new();
    sandbox
        .set("MY_CHROME_NODE", npm.node())
        .set("NODE_OPTIONS", format!("--require={}", evil.display()))
        .set("PLAYWRIGHT_MCP_EXTENSION_TOKEN", "canary-not-a-real-token")
        .set("PLAYWRIGHT_CLI_SESSION", "other")
        .set("PWTEST_DAEMON_SESSION_DIR", "/tmp/elsewhere")
        .set("XDG_CACHE_HOME", "/tmp/elsewhere")
        .set("npm_config_registry", "http://127.0.0.1:9/")
        .set("USER", "somebody-else")
        .set("LANG", "C.UTF-8")
        .set("LC_ALL", "C.UTF-8");
    sandbox.run(&["setup"]).expect(1, "npm ci failed");

    let env = fs::read_to_string(npm.file("env.txt")).unwrap();
    let mut names: Vec<&str> = env
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    names.sort_unstable();
    // `sh` itself adds PWD, SHLVL and `_`; everything else came from my-chrome.
    names.retain(|n| !["PWD", "SHLVL", "_"].contains(n));
    let expected = [
        "HOME",
        "LANG",
        "LC_ALL",
        "LOGNAME",
        "NO_UPDATE_NOTIFIER",
        "PATH",
        "PLAYWRIGHT_BROWSERS_PATH",
        "PWTEST_CLI_GLOBAL_CONFIG",
        "PWTEST_SERVER_REGISTRY",
        "TMPDIR",
        "USER",
        "WS_NO_BUFFER_UTIL",
        "WS_NO_UTF_8_VALIDATE",
        "npm_config_cache",
    ];
    assert_eq!(names, expected, "{env}");
    // npm's cache is setup's own, in the private TMPDIR, not ~/.npm.
    assert!(
        env.contains(&format!(
            "npm_config_cache={}\n",
            sandbox.runtime.join("tmp/npm-cache").display()
        )),
        "{env}"
    );
    let me = common::user_name();
    assert!(
        env.contains(&format!("USER={me}\n")),
        "USER comes from the user database: {env}"
    );
    assert!(
        env.contains(&format!("TMPDIR={}", sandbox.runtime.join("tmp").display())),
        "{env}"
    );
    // The CLI's global config is looked for in the private TMPDIR, not HOME.
    assert!(
        env.contains(&format!(
            "PWTEST_CLI_GLOBAL_CONFIG={}\n",
            sandbox.runtime.join("tmp").display()
        )),
        "{env}"
    );
    assert!(
        env.contains(&format!(
            "PATH={}:/usr/bin:/bin:/usr/sbin:/sbin",
            npm.dir.path().display()
        )),
        "{env}"
    );
    assert_eq!(
        fs::read_to_string(npm.file("umask.txt")).unwrap().trim(),
        "0077"
    );
    let cwd = fs::read_to_string(npm.file("cwd.txt")).unwrap();
    assert!(
        cwd.trim()
            .starts_with(&format!("{}/.cli-setup.", sandbox.runtime.display())),
        "{cwd}"
    );
    assert!(!npm.file("evil-ran").exists(), "NODE_OPTIONS reached node");
    assert!(sandbox.leftovers().is_empty(), "{:?}", sandbox.leftovers());
}

#[test]
fn npm_failing_leaves_the_previous_copy_unchanged() {
    let npm = FakeNpm::new("echo 'npm ERR! stand-in failure' >&2\nexit 1");
    let mut sandbox = Sandbox::installed();
    sandbox.tamper();
    let before = sandbox.cli_digest();
    sandbox.set("MY_CHROME_NODE", npm.node());
    let run = sandbox.run(&["setup"]);
    run.expect(1, "npm ci failed");
    assert!(
        run.stderr.contains("previous copy, if any, is unchanged"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("stand-in failure"),
        "npm's output is shown: {}",
        run.stderr
    );
    assert_eq!(sandbox.cli_digest(), before);
    assert!(sandbox.leftovers().is_empty(), "{:?}", sandbox.leftovers());
}

const HANGING_NPM: &str = "echo $$ > @DIR@/npm.pid.tmp && mv @DIR@/npm.pid.tmp @DIR@/npm.pid\n\
    sleep 300 &\n\
    echo $! > @DIR@/sleep.pid.tmp && mv @DIR@/sleep.pid.tmp @DIR@/sleep.pid\n\
    wait";

#[test]
fn a_hanging_npm_is_killed_with_its_whole_group_at_the_bound() {
    let npm = FakeNpm::new(HANGING_NPM);
    let mut sandbox = Sandbox::installed();
    sandbox.tamper();
    let before = sandbox.cli_digest();
    sandbox
        .set("MY_CHROME_NODE", npm.node())
        .set("MY_CHROME_SETUP_TIMEOUT_SECS", "2");
    sandbox
        .run(&["setup"])
        .expect(124, "npm ci did not finish within 2 s");
    wait_gone(&npm.wait_for("npm.pid"));
    wait_gone(&npm.wait_for("sleep.pid"));
    assert_eq!(sandbox.cli_digest(), before);
    assert!(sandbox.leftovers().is_empty(), "{:?}", sandbox.leftovers());
}

fn interrupt_setup(signal: Signal) {
    let npm = FakeNpm::new(HANGING_NPM);
    let mut sandbox = Sandbox::installed();
    sandbox.tamper();
    let before = sandbox.cli_digest();
    sandbox.set("MY_CHROME_NODE", npm.node());
    let setup = common::Running::start(sandbox.command(&["setup"]));
    let npm_pid = npm.wait_for("npm.pid");
    let sleep_pid = npm.wait_for("sleep.pid");
    kill(Pid::from_raw(setup.child.id() as i32), signal).unwrap();
    let run = setup.wait();
    run.expect(128 + signal as i32, &format!("interrupted by {signal}"));
    wait_gone(&npm_pid);
    wait_gone(&sleep_pid);
    assert_eq!(sandbox.cli_digest(), before, "the previous copy survived");
    assert!(sandbox.leftovers().is_empty(), "{:?}", sandbox.leftovers());
}

#[test]
fn sigint_during_setup_kills_npm_and_keeps_the_previous_copy() {
    interrupt_setup(Signal::SIGINT);
}

#[test]
fn sigterm_during_setup_kills_npm_and_keeps_the_previous_copy() {
    interrupt_setup(Signal::SIGTERM);
}

#[test]
fn sighup_during_setup_kills_npm_and_keeps_the_previous_copy() {
    interrupt_setup(Signal::SIGHUP);
}

#[test]
fn an_interrupt_while_checking_node_is_an_interrupt_not_a_bad_node() {
    let slow = FakeNpm::new("exit 1");
    fs::remove_file(slow.node()).unwrap();
    let script = "#!/bin/sh\necho $$ > @DIR@/node.pid.tmp && mv @DIR@/node.pid.tmp @DIR@/node.pid\nexec sleep 300\n";
    fs::write(
        slow.node(),
        script.replace("@DIR@", &slow.dir.path().to_string_lossy()),
    )
    .unwrap();
    fs::set_permissions(slow.node(), fs::Permissions::from_mode(0o755)).unwrap();
    let mut sandbox = Sandbox::new();
    sandbox.set("MY_CHROME_NODE", slow.node());
    let setup = common::Running::start(sandbox.command(&["setup"]));
    let probe = slow.wait_for("node.pid");
    kill(Pid::from_raw(setup.child.id() as i32), Signal::SIGINT).unwrap();
    let run = setup.wait();
    run.expect(130, "interrupted by SIGINT");
    assert!(
        !run.stderr.contains("MY_CHROME_NODE="),
        "not blamed on the node: {}",
        run.stderr
    );
    wait_gone(&probe);
}

#[test]
fn a_setup_killed_mid_swap_is_recovered_by_the_next_one() {
    let sandbox = Sandbox::installed();
    let good = sandbox.cli_digest();
    // SIGKILL between "old copy aside" and "new copy in": no cli, the old
    // copy set aside, and a staging directory.
    fs::rename(sandbox.cli(), sandbox.runtime.join(".cli-old.4242")).unwrap();
    fs::create_dir(sandbox.runtime.join(".cli-setup.abc123")).unwrap();
    fs::write(sandbox.runtime.join(".cli-setup.abc123/package.json"), "{}").unwrap();
    let run = sandbox.run(&["setup"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("restoring the copy"), "{}", run.stderr);
    assert!(
        run.stdout.contains("already supported; nothing changed"),
        "{}",
        run.stdout
    );
    assert_eq!(sandbox.cli_digest(), good);
    assert!(sandbox.leftovers().is_empty(), "{:?}", sandbox.leftovers());
}

#[test]
fn setup_refuses_while_a_process_runs_code_from_the_cli() {
    let sandbox = Sandbox::installed();
    sandbox.tamper();
    let before = sandbox.cli_digest();
    // A node process holding a path inside cli in its argv, as the CLI daemon does.
    let entry = sandbox
        .cli()
        .join("node_modules/@playwright/cli/playwright-cli.js");
    let mut holder = std::process::Command::new(common::system_node())
        .arg("-e")
        .arg("setTimeout(() => {}, 60000)")
        .arg(&entry)
        .spawn()
        .unwrap();
    let run = sandbox.run(&["setup"]);
    holder.kill().unwrap();
    holder.wait().unwrap();
    run.expect(1, "are running code from");
    assert!(
        run.stderr.contains(&holder.id().to_string()),
        "names the pid: {}",
        run.stderr
    );
    assert_eq!(sandbox.cli_digest(), before);
}

#[test]
fn setup_refuses_while_the_session_is_open() {
    let sandbox = Sandbox::installed();
    sandbox.tamper();
    // The CLI's registry entry for our session, with a live socket behind it.
    let daemon_dir =
        my_chrome::session::registry::daemon_dir(sandbox.home.path(), &sandbox.runtime).unwrap();
    fs::create_dir_all(&daemon_dir).unwrap();
    let socket = sandbox.home.path().join("daemon.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let entry = serde_json::json!({"name": "mychrome", "socketPath": socket, "attached": true, "version": "x"});
    fs::write(daemon_dir.join("mychrome.session"), entry.to_string()).unwrap();
    sandbox
        .run(&["setup"])
        .expect(1, "session \"mychrome\" is open");
}

#[test]
fn a_node_without_npm_beside_it_is_refused_before_anything_changes() {
    let npm = FakeNpm::new("exit 1");
    fs::remove_file(npm.file("npm")).unwrap();
    let mut sandbox = Sandbox::installed();
    sandbox.tamper();
    let before = sandbox.cli_digest();
    sandbox.set("MY_CHROME_NODE", npm.node());
    let run = sandbox.run(&["setup"]);
    run.expect(2, "install npm next to it");
    assert!(
        run.stderr.contains(&npm.file("npm").display().to_string()),
        "{}",
        run.stderr
    );
    assert_eq!(sandbox.cli_digest(), before);
    assert!(sandbox.leftovers().is_empty(), "{:?}", sandbox.leftovers());
}

#[test]
fn a_node_too_old_or_missing_is_refused_before_anything_changes() {
    let old = FakeNpm::new("exit 1");
    fs::remove_file(old.node()).unwrap();
    fs::write(old.node(), "#!/bin/sh\necho v18.19.0\n").unwrap();
    fs::set_permissions(old.node(), fs::Permissions::from_mode(0o755)).unwrap();

    let mut sandbox = Sandbox::installed();
    sandbox.tamper();
    let before = sandbox.cli_digest();
    sandbox.set("MY_CHROME_NODE", old.node());
    sandbox
        .run(&["setup"])
        .expect(2, "v18.19.0 does not satisfy engines.node");
    assert_eq!(sandbox.cli_digest(), before);

    let mut sandbox = Sandbox::new();
    sandbox.set("MY_CHROME_NODE", "/nonexistent/node");
    sandbox
        .run(&["setup"])
        .expect(2, "MY_CHROME_NODE=/nonexistent/node: not found");

    let mut sandbox = Sandbox::new();
    sandbox.set("MY_CHROME_NODE", "node");
    sandbox
        .run(&["setup"])
        .expect(2, "MY_CHROME_NODE: must be an absolute path");
}

#[test]
fn setup_records_a_browser_only_when_it_is_one_and_installed() {
    let sandbox = Sandbox::installed();
    let record = sandbox.runtime.join("browser.txt");
    let unknown = sandbox.run(&["setup", "--browser", "firefox"]);
    unknown.expect(2, "\"firefox\" is not a browser my-chrome knows");
    assert!(
        unknown
            .stderr
            .contains("chrome, chrome-beta, chrome-dev, chrome-canary, chromium, edge, brave")
    );
    // This machine has Debian's Chromium (scripts/prerequisites.sh), no Edge.
    let absent = sandbox.run(&["setup", "--browser", "edge"]);
    absent.expect(
        5,
        "Microsoft Edge (asked for with `my-chrome setup --browser`) is not installed",
    );
    assert!(!record.exists(), "nothing is recorded");
    let chosen = sandbox.run(&["setup", "--browser", "chromium"]);
    assert_eq!(chosen.code, 0, "{}", chosen.stderr);
    assert!(
        chosen.stdout.contains("Chromium (chromium) is the browser"),
        "{}",
        chosen.stdout
    );
    assert_eq!(fs::read_to_string(&record).unwrap(), "chromium\n");
    assert_eq!(mode(&record), 0o600);
    let doctor = sandbox.doctor();
    assert_eq!(doctor["chrome"]["name"], "chromium", "{doctor}");
    assert_eq!(
        doctor["chrome"]["chosen"],
        "chosen with `my-chrome setup --browser`"
    );
    assert_eq!(doctor["chrome"]["path"], "/usr/lib/chromium/chromium");
    assert_eq!(doctor["chrome"]["status"], "missing", "{doctor}");
    // A record that is not one is refused with the way out.
    fs::write(&record, "netscape\n").unwrap();
    let text = sandbox.run(&["doctor"]).stdout;
    assert!(text.contains("browser: error: "), "{text}");
    assert!(text.contains("choose again"), "{text}");
}
