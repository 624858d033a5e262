//! `my-chrome connect` end to end: the real binary, the real pinned CLI, a
//! real Secret Service holding the token, and the Chrome stand-in backed by
//! a real Chromium. The headline: while connect runs, no process's command
//! line or environment ever holds the token.

mod common;

use std::fs;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use common::sampler::sampler;
use common::standin::{Options, Standin};
use common::{Run, Sandbox, World, assert_nowhere, fresh_token, read_snapshot, world};
use nix::sys::signal::Signal;

fn no_leftovers(sandbox: &Sandbox) {
    let names: Vec<String> = fs::read_dir(&sandbox.runtime)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.starts_with("session-output.") || n.starts_with("handoff.") || n == "bootstrap.json"
        })
        .collect();
    assert!(names.is_empty(), "left in the runtime: {names:?}");
    // Nor a browser the daemon bound (invariant 13), whatever failed.
    let bound = sandbox.bound_leftovers();
    assert!(bound.is_empty(), "a bound browser stayed: {bound:?}");
    // Nor, once no session is left, the folder its daemon made.
    if sandbox.doctor()["session"]["status"] == "ready" {
        return;
    }
    let artifacts: Vec<_> = common::entries(&sandbox.runtime.join("tmp"))
        .into_iter()
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("playwright-artifacts-")
        })
        .collect();
    assert!(
        artifacts.is_empty(),
        "a daemon's folder stayed: {artifacts:?}"
    );
}

#[test]
fn connect_delivers_the_token_straight_to_chrome_and_no_process_ever_holds_it() {
    let mut w = world();
    let chrome = w.chrome();

    let (stop, sampling) = sampler(w.token.clone());
    let connected = w.sandbox.run(&["connect"]);
    let again = w.sandbox.run(&["connect"]);
    stop.store(true, Ordering::SeqCst);
    let (rounds, seen) = sampling.join().unwrap();
    eprintln!("/proc sampled {rounds} times during two connects");
    assert!(seen.is_empty(), "the token was visible in: {seen:?}");

    assert_eq!(
        connected.code, 0,
        "{}\n{}",
        connected.stdout, connected.stderr
    );
    assert!(
        connected.stdout.contains(&format!(
            "connected to {} (pid {})",
            common::UNNAMED,
            chrome.pid
        )),
        "{}",
        connected.stdout
    );
    assert!(
        again.stdout.contains("already connected"),
        "{}",
        again.stdout
    );
    assert_eq!(w.sandbox.doctor()["session"]["status"], "ready");
    assert!(
        chrome.log().contains("main: opening chrome-extension://"),
        "{}",
        chrome.log()
    );
    no_leftovers(&w.sandbox);

    // The connect tab, which carries the token, is no page of the session
    // (the stand-in, like the real extension, attached the session to it):
    // one blank tab is, for the first agent.
    let agents = w.sandbox.run(&["agents", "--json"]).json();
    assert_eq!(
        agents["spare_tabs"].as_array().unwrap().len(),
        1,
        "{agents}"
    );
    assert_eq!(agents["user_tabs"].as_array().unwrap().len(), 0, "{agents}");
    let spare = agents["spare_tabs"][0].as_str().unwrap().to_string();
    let tabs = w.sandbox.run(&["tab-claim", &spare]);
    assert_eq!(tabs.code, 0, "{}", tabs.stderr);
    assert!(
        tabs.stdout
            .contains(&format!("- 0: {spare} (current) [](about:blank)")),
        "{}",
        tabs.stdout
    );
    assert!(
        chrome
            .pages()
            .iter()
            .all(|(url, _)| !url.contains("/connect.html")),
        "the connect tab is closed in Chrome too"
    );
    let json_tabs = w.sandbox.run(&["--json", "tab-list"]);
    assert_eq!(json_tabs.code, 0, "{}", json_tabs.stderr);
    let site = common::site::Site::start();
    assert_eq!(w.sandbox.run(&["goto", &site.url("/")]).code, 0);
    let snapshot = w.sandbox.run(&["snapshot"]);
    let yaml = read_snapshot(&w.sandbox, &snapshot.stdout);
    assert!(yaml.contains(common::site::HOME_TEXT), "{yaml}");
    let shot = w.sandbox.file("page.png");
    let shot_run = w
        .sandbox
        .run(&["screenshot", &format!("--filename={}", shot.display())]);
    assert_eq!(shot_run.code, 0, "{}", shot_run.stderr);
    assert!(
        fs::read(&shot).unwrap().starts_with(b"\x89PNG"),
        "a real PNG at the absolute path"
    );
    let open = w.sandbox.run(&["open", "https://example.test/"]);
    open.expect(2, "use `my-chrome goto <url>`");
    let other = w.sandbox.run(&["-s=other", "tab-list"]);
    other.expect(2, "is refused");
    let audit = w.sandbox.run(&["safety-audit", "--json"]);
    assert_eq!(audit.code, 0, "{}{}", audit.stdout, audit.stderr);
    let report = audit.json();
    let checked: Vec<&str> = report["safeguards"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["holds"] == true)
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        checked.len(),
        report["safeguards"].as_array().unwrap().len(),
        "every safeguard holds: {}",
        audit.stdout
    );
    assert_eq!(checked.len(), 7, "{}", audit.stdout);
    // What the audit cannot check is said apart, never as a passed check.
    let design: Vec<&str> = report["design"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(design.contains(&"pid-continuity"), "{}", audit.stdout);
    assert!(
        !checked.iter().any(|c| design.contains(c)),
        "{}",
        audit.stdout
    );
    let plan = w.sandbox.run(&["cleanup-plan", "--json"]).json();
    let ours: Vec<_> = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["ours"] == true)
        .collect();
    assert_eq!(ours.len(), 1, "{plan}");
    assert_eq!(ours[0]["action"], "my-chrome disconnect");
    assert_eq!(
        plan["blocked"],
        serde_json::json!(["close-all", "kill-all"])
    );
    let ensure = w.sandbox.run(&["ensure"]);
    assert!(ensure.stdout.contains("ready"), "{}", ensure.stderr);
    // A session whose browser nobody recorded is reused for none.
    fs::remove_file(w.sandbox.runtime.join("session-browser.txt")).unwrap();
    let unknown = w.sandbox.run(&["connect"]);
    unknown.expect(5, "attached to a browser my-chrome did not record");

    // Disconnect detaches and leaves Chrome running.
    let gone = w.sandbox.run(&["disconnect"]);
    let still = format!("{} is still running (pid {})", common::UNNAMED, chrome.pid);
    assert!(gone.stdout.contains(&still), "{}", gone.stdout);
    assert!(chrome.alive());
    assert!(
        !w.sandbox.runtime.join("session-output").exists(),
        "the session's output is removed"
    );
    w.sandbox.run(&["ensure"]).expect(4, "my-chrome connect");
    w.sandbox.run(&["tab-list"]).expect(4, "my-chrome connect");
    let listed = w.sandbox.run(&["list"]);
    assert_eq!(listed.code, 0, "list needs no session: {}", listed.stderr);

    let doctor = w.sandbox.run(&["doctor"]);
    let outputs = [
        &connected, &again, &doctor, &tabs, &json_tabs, &snapshot, &open, &other, &ensure,
        &unknown, &gone,
    ];
    assert_nowhere(&w.token, w.sandbox.home.path(), &outputs);
}

#[test]
fn connect_refuses_without_exactly_one_chrome_before_reading_the_token() {
    let mut w = world();
    drop(w.chrome());
    let missing = w.sandbox.run(&["connect"]);
    missing.expect(5, "not running");
    assert!(
        missing.stderr.contains("launched none"),
        "{}",
        missing.stderr
    );
    no_leftovers(&w.sandbox);
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&missing]);
}

#[test]
fn a_token_chrome_does_not_accept_times_out_naming_the_stored_token() {
    let mut w = world();
    let other = fresh_token();
    let chrome = w.chrome_with(Options {
        token: Some(&other),
        ..Default::default()
    });
    w.sandbox.set("MY_CHROME_ATTACH_TIMEOUT_SECS", "4");
    let run: Run = w.sandbox.run(&["connect"]);
    run.expect(124, "the extension never connected within 4 s");
    // The token reached only the user's own Chrome: no rotation, but the
    // likely cause and the step that fixes it.
    assert!(
        !run.stderr.contains("begin-token-rotation"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("my-chrome token store"),
        "{}",
        run.stderr
    );
    assert_ne!(w.sandbox.doctor()["session"]["status"], "ready");
    no_leftovers(&w.sandbox);
    assert!(chrome.alive(), "connect never stops Chrome");
    let daemons = my_chrome::procs::ProcessTable::read()
        .unwrap()
        .using_path(&w.sandbox.cli());
    assert!(
        daemons.is_empty(),
        "the attach left processes running: {daemons:?}"
    );
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&run]);
}

#[test]
fn another_attached_session_or_an_entry_not_the_clis_stops_connect() {
    let mut w = world();
    let _chrome = w.chrome();
    let elsewhere = w.sandbox.home.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    let registry =
        my_chrome::session::registry::daemon_dir(w.sandbox.home.path(), &elsewhere).unwrap();
    fs::create_dir_all(&registry).unwrap();
    // What the CLI's own `list` would skip, so that "none attached" would
    // follow: a truncated entry.
    fs::write(registry.join("theirs.session"), "{\"socketPath\": ").unwrap();
    let broken = w.sandbox.run(&["connect"]);
    broken.expect(1, "the Playwright session registry cannot be read");
    assert!(
        broken.stderr.contains("theirs.session"),
        "{}",
        broken.stderr
    );
    assert!(
        broken.stderr.contains("nothing was attached"),
        "{}",
        broken.stderr
    );
    // A live, attached session of another workspace.
    let socket = w.sandbox.home.path().join("theirs.sock");
    let _daemon = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let entry = serde_json::json!({"version": "1", "socketPath": socket, "attached": true});
    fs::write(registry.join("theirs.session"), entry.to_string()).unwrap();
    let other = w.sandbox.run(&["connect"]);
    other.expect(
        1,
        "another Playwright session is attached to the browser: theirs",
    );
    // Stopped before the token was read: connect records the token's
    // fingerprint as soon as it holds it.
    assert!(!w.sandbox.runtime.join("token-fingerprint.txt").exists());
    no_leftovers(&w.sandbox);
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&broken, &other]);
}

/// A second normal main process of the stand-in's executable, doing nothing.
fn idle_second_chrome(exe: &std::path::Path) -> std::process::Child {
    std::process::Command::new(exe)
        .env_clear()
        .env("STANDIN_IDLE", "1")
        .spawn()
        .unwrap()
}

#[test]
fn two_chromes_are_refused_before_the_token_is_read() {
    let mut w = world();
    let chrome = w.chrome();
    let mut second = idle_second_chrome(&chrome.exe());
    common::wait::until(
        "the second Chrome is seen as a normal one",
        Duration::from_secs(10),
        || {
            let table = my_chrome::procs::ProcessTable::read().unwrap();
            let pids = my_chrome::chrome::normal_chrome_pids(&table, &chrome.exe());
            if pids.contains(&second.id()) {
                Ok(())
            } else {
                Err(format!("normal Chromes {pids:?}, not {}", second.id()))
            }
        },
    );
    let run = w.sandbox.run(&["connect"]);
    second.kill().unwrap();
    second.wait().unwrap();
    run.expect(
        5,
        &format!("2 main processes of {} are running", common::UNNAMED),
    );
    no_leftovers(&w.sandbox);
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&run]);
}

/// The connect stopped before the URL went to Chrome: it says so, and asks
/// for no rotation.
fn assert_not_delivered(run: &Run) {
    assert!(
        run.stderr.contains("nothing was sent to the browser"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("begin-token-rotation"),
        "not delivered, no rotation: {}",
        run.stderr
    );
}

/// A connect that fails after the URL reached Chrome (the stand-in's
/// `faults`): it says why and leaves no session and nothing behind; only an
/// exposure (exit 6) asks for a rotation.
fn fails_after_delivery(faults: &str, code: i32, needle: &str) {
    let mut w = world();
    let _chrome = w.chrome_with_faults(faults);
    let run = w.sandbox.run(&["connect"]);
    run.expect(code, needle);
    assert_eq!(
        run.stderr.contains("begin-token-rotation"),
        code == 6,
        "rotation advice: {}",
        run.stderr
    );
    assert_ne!(w.sandbox.doctor()["session"]["status"], "ready");
    no_leftovers(&w.sandbox);
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&run]);
}

#[test]
fn a_chrome_appearing_during_the_attach_fails_it_and_asks_for_rotation() {
    fails_after_delivery(
        "spawn-second-main",
        6,
        "processes of the browser MY_CHROME_CHROME names changed during the attach",
    );
}

#[test]
fn a_lock_naming_another_chrome_stops_delivery() {
    let mut w = world();
    let chrome = w.chrome();
    let lock = w
        .sandbox
        .home
        .path()
        .join(".config/google-chrome/SingletonLock");
    let host = fs::read_link(&lock)
        .unwrap()
        .to_string_lossy()
        .rsplit_once('-')
        .unwrap()
        .0
        .to_string();
    fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink(format!("{host}-{}", chrome.pid + 100000), &lock).unwrap();
    let run = w.sandbox.run(&["connect"]);
    run.expect(5, "lock names pid");
    assert_not_delivered(&run);
    no_leftovers(&w.sandbox);
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&run]);
}

/// A connect to a Chrome whose extension never approves its token, sent
/// `signal` as soon as `when` holds.
fn interrupted_connect(
    w: &mut World,
    signal: Signal,
    when: impl Fn(&Standin, &Sandbox) -> bool,
) -> (Standin, Run) {
    let chrome = w.chrome_with(Options {
        token: Some(&fresh_token()),
        ..Default::default()
    });
    let connect = common::Running::start(w.sandbox.command(&["connect"]));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !when(&chrome, &w.sandbox) {
        assert!(std::time::Instant::now() < deadline, "{}", chrome.log());
        thread::sleep(Duration::from_millis(20));
    }
    let pid = nix::unistd::Pid::from_raw(connect.child.id() as i32);
    nix::sys::signal::kill(pid, signal).unwrap();
    (chrome, connect.wait())
}

/// The URL is delivered, and the extension has refused it.
fn delivered(chrome: &Standin, _: &Sandbox) -> bool {
    chrome.log().contains("no matching token")
}

#[test]
fn sigint_during_the_attach_cleans_up() {
    let mut w = world();
    let (_chrome, run) = interrupted_connect(&mut w, Signal::SIGINT, delivered);
    run.expect(130, "interrupted by SIGINT");
    // Delivered to the user's own Chrome only: nothing to rotate.
    assert!(
        !run.stderr.contains("begin-token-rotation"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("close the extension's connect tab"),
        "{}",
        run.stderr
    );
    no_leftovers(&w.sandbox);
    let daemons = my_chrome::procs::ProcessTable::read()
        .unwrap()
        .using_path(&w.sandbox.cli());
    assert!(daemons.is_empty(), "{daemons:?}");
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&run]);
}

#[test]
fn a_connect_killed_outright_is_recovered_by_the_next_one() {
    let mut w = world();
    let (chrome, killed) = interrupted_connect(&mut w, Signal::SIGKILL, |_, sandbox| {
        sandbox.runtime.join("bootstrap.json").exists()
    });
    assert!(
        w.sandbox.runtime.join("bootstrap.json").exists(),
        "the record outlives a SIGKILL"
    );
    drop(chrome);
    let next = w.sandbox.run(&["connect"]);
    assert!(
        next.stderr.contains("an earlier connect was interrupted"),
        "{}",
        next.stderr
    );
    next.expect(5, "not running");
    // The killed connect's attach (and the daemon it started) were stopped.
    let left = my_chrome::procs::ProcessTable::read()
        .unwrap()
        .using_path(&w.sandbox.cli());
    assert!(left.is_empty(), "still running: {left:?}");
    no_leftovers(&w.sandbox);
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&killed, &next]);
}

/// What of the sandbox's still runs right after my-chrome ended: processes
/// whose arguments name its runtime, apart from what an attach started on
/// purpose (its daemon names the bootstrap directory, and the next command
/// recovers it). The grace is short: a child left behind would otherwise
/// end on its own (a `--version` run takes ~250 ms).
fn stray_children(sandbox: &Sandbox) -> Vec<u32> {
    let runtime = sandbox.runtime.to_string_lossy().into_owned();
    let deadline = std::time::Instant::now() + Duration::from_millis(100);
    loop {
        let table = my_chrome::procs::ProcessTable::read().unwrap();
        let stray: Vec<u32> = table
            .iter()
            .filter(|p| {
                let args: Vec<String> = p.cmd.iter().map(|a| a.to_string_lossy().into()).collect();
                args.iter().any(|a| a.contains(&runtime))
                    && !args.iter().any(|a| a.contains("session-output."))
            })
            .map(|p| p.pid)
            .collect();
        if stray.is_empty() || std::time::Instant::now() >= deadline {
            return stray;
        }
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_interrupt_anywhere_in_connect_ends_128_plus_n_and_no_child_outlives_it() {
    let mut w = world();
    let _chrome = w.chrome_with(Options {
        token: Some(&fresh_token()),
        ..Default::default()
    });
    let mut runs = Vec::new();
    for (signal, after) in [
        (Signal::SIGINT, 100),
        (Signal::SIGINT, 300),
        (Signal::SIGINT, 500),
        (Signal::SIGTERM, 900),
        (Signal::SIGHUP, 1400),
        (Signal::SIGKILL, 100),
        (Signal::SIGKILL, 200),
        (Signal::SIGKILL, 450),
        (Signal::SIGKILL, 700),
    ] {
        let connect = common::Running::start(w.sandbox.command(&["connect"]));
        thread::sleep(Duration::from_millis(after));
        let pid = nix::unistd::Pid::from_raw(connect.child.id() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
        let run = connect.wait();
        if signal != Signal::SIGKILL {
            assert_eq!(
                run.code,
                128 + signal as i32,
                "{signal} after {after} ms: {}",
                run.stderr
            );
        }
        let stray = stray_children(&w.sandbox);
        assert!(
            stray.is_empty(),
            "{signal} after {after} ms left {stray:?} running"
        );
        // The next command recovers whatever the attach itself started.
        let next = w.sandbox.run(&["disconnect"]);
        assert_eq!(next.code, 0, "{}", next.stderr);
        runs.push(run);
        runs.push(next);
    }
    no_leftovers(&w.sandbox);
    let runs: Vec<&Run> = runs.iter().collect();
    assert_nowhere(&w.token, w.sandbox.home.path(), &runs);
}

#[test]
fn two_connects_at_once_attach_once() {
    let mut w = world();
    let chrome = w.chrome();
    let first = common::Running::start(w.sandbox.command(&["connect"]));
    let second = common::Running::start(w.sandbox.command(&["connect"]));
    let (a, b) = (first.wait(), second.wait());
    assert_eq!((a.code, b.code), (0, 0), "{}\n{}", a.stderr, b.stderr);
    let outputs = format!("{}{}", a.stdout, b.stdout);
    assert_eq!(
        outputs.matches("my-chrome: connected to ").count(),
        1,
        "{outputs}"
    );
    assert_eq!(outputs.matches("already connected").count(), 1, "{outputs}");
    assert_eq!(
        chrome
            .log()
            .matches("main: opening chrome-extension://")
            .count(),
        1
    );
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&a, &b]);
}

#[test]
fn a_singleton_socket_in_a_directory_that_is_not_private_stops_delivery() {
    use std::os::unix::fs::PermissionsExt;
    let mut w = world();
    let _chrome = w.chrome();
    let profile = w.sandbox.home.path().join(".config/google-chrome");
    let planted = tempfile::tempdir().unwrap();
    fs::set_permissions(planted.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let socket = planted.path().join("SingletonSocket");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::os::unix::fs::symlink(
        fs::read_link(profile.join("SingletonCookie")).unwrap(),
        planted.path().join("SingletonCookie"),
    )
    .unwrap();
    fs::remove_file(profile.join("SingletonSocket")).unwrap();
    std::os::unix::fs::symlink(&socket, profile.join("SingletonSocket")).unwrap();
    let run = w.sandbox.run(&["connect"]);
    run.expect(6, "cannot be trusted");
    assert_not_delivered(&run);
    no_leftovers(&w.sandbox);
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&run]);
}

#[test]
fn an_extension_that_drops_the_connection_fails_the_connect() {
    fails_after_delivery("drop-after=1", 1, "the attach failed");
}

#[test]
fn a_connection_lost_right_after_the_attach_fails_closed() {
    // The attach completes (with @playwright/cli 0.1.22 its relay sends
    // the extension about fifteen commands; the count is set to fall on
    // connect's first tab list, now that no attach snapshot comes before
    // it), then the extension is gone:
    // the tabs cannot be listed (before the connect tab was seen, or once
    // it was, when its place was to be taken), so nothing stays attached.
    fails_after_delivery(
        "drop-after=18",
        1,
        "tabs could not be listed (the command failed)",
    );
}

#[test]
fn any_next_command_recovers_a_killed_connect_first() {
    let mut w = world();
    let (_chrome, killed) = interrupted_connect(&mut w, Signal::SIGKILL, delivered);
    let next = w.sandbox.run(&["tab-list"]);
    assert!(
        next.stderr.contains("an earlier connect was interrupted"),
        "{}",
        next.stderr
    );
    next.expect(4, "my-chrome connect");
    no_leftovers(&w.sandbox);
    let left = my_chrome::procs::ProcessTable::read()
        .unwrap()
        .using_path(&w.sandbox.cli());
    assert!(left.is_empty(), "still running: {left:?}");
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&killed, &next]);
}

/// The attack: a page's response body written over the verified
/// helper with forwarded commands alone. Refused before anything runs; the
/// helper and the session stay as they were.
#[test]
fn forwarded_commands_cannot_write_into_the_runtime_or_through_a_link() {
    let mut w = world();
    let _chrome = w.chrome();
    w.sandbox.run(&["connect"]).expect(0, "");
    let site = common::site::Site::start();
    assert_eq!(w.sandbox.run(&["goto", &site.url("/")]).code, 0);
    let requests = w.sandbox.run(&["requests", "--static"]);
    assert!(requests.stdout.contains("1."), "{}", requests.stdout);
    let helper = w
        .sandbox
        .cli()
        .join("node_modules/@playwright/cli/playwright-cli.js");
    let before = fs::read(&helper).unwrap();
    let link = w.sandbox.home.path().join("elsewhere");
    std::os::unix::fs::symlink(&w.sandbox.runtime, &link).unwrap();
    let attacks = [
        vec![
            "response-body".to_string(),
            "1".into(),
            format!("--filename={}", helper.display()),
        ],
        vec![
            "response-body".into(),
            "1".into(),
            "--filename".into(),
            "cli/node_modules/x.js".into(),
        ],
        vec!["screenshot".into(), "--filename=page.png".into()],
        vec![
            "snapshot".into(),
            format!("--filename={}/cli/x.yml", link.display()),
        ],
        vec![
            "state-save".into(),
            w.sandbox.runtime.join("lease.json").display().to_string(),
        ],
    ];
    for attack in &attacks {
        let line: Vec<&str> = attack.iter().map(String::as_str).collect();
        let refused = w.sandbox.run(&line);
        refused.expect(2, "ask the user to allow the folder");
    }
    assert_eq!(
        fs::read(&helper).unwrap(),
        before,
        "the helper is untouched"
    );
    assert!(!w.sandbox.runtime.join("page.png").exists());
    // Outside the runtime, with no link on the way, files are written.
    let body = w.sandbox.file("body.html");
    let saved = w.sandbox.run(&[
        "response-body",
        "1",
        &format!("--filename={}", body.display()),
    ]);
    assert_eq!(saved.code, 0, "{}{}", saved.stdout, saved.stderr);
    assert!(
        fs::read_to_string(&body)
            .unwrap()
            .contains(common::site::HOME_TEXT)
    );
    assert_eq!(w.sandbox.run(&["tab-list"]).code, 0);
    assert_nowhere(&w.token, w.sandbox.home.path(), &[]);
}

/// The verified helper changed after connect (a write no forwarded command
/// can make any more, but any process of the user can): none of its code
/// runs. The next command and disconnect refuse, exit 6, naming the file;
/// disconnect stops the session through the daemon's own socket, and setup
/// then installs a verified copy again.
#[test]
fn a_helper_changed_after_verification_runs_no_more() {
    let mut w = world();
    let chrome = w.chrome();
    w.sandbox.run(&["connect"]).expect(0, "");
    let entry = w
        .sandbox
        .cli()
        .join("node_modules/@playwright/cli/playwright-cli.js");
    let marker = w.sandbox.home.path().join("helper-code-ran");
    // File times move in clock ticks: let one pass since the record. The
    // sealed file is made writable first, as anyone but root would have to.
    thread::sleep(Duration::from_millis(30));
    fs::set_permissions(&entry, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    fs::write(
        &entry,
        format!(
            "require('fs').writeFileSync({:?}, 'ran');\n",
            marker.display().to_string()
        ),
    )
    .unwrap();

    let refused = w.sandbox.run(&["tab-list"]);
    refused.expect(6, "playwright-cli.js in the pinned @playwright/cli");
    assert!(
        refused.stderr.contains("Run `my-chrome setup`"),
        "{}",
        refused.stderr
    );
    // `--help` too: it would run the pinned CLI's own help.
    let help = w.sandbox.run(&["--help"]);
    help.expect(6, "playwright-cli.js in the pinned @playwright/cli");
    assert!(help.stdout.is_empty(), "{}", help.stdout);
    let doctor = w.sandbox.doctor();
    assert!(
        doctor["cli"]["compatibility"]
            .as_str()
            .unwrap()
            .starts_with("changed:"),
        "{doctor}"
    );
    let gone = w.sandbox.run(&["disconnect"]);
    gone.expect(6, "stopped through its daemon's socket");
    assert!(!marker.exists(), "no code of the changed helper ran");
    assert!(chrome.alive(), "Chrome keeps running");

    w.sandbox.run(&["setup"]).expect(0, "");
    let again = w.sandbox.run(&["connect"]);
    again.expect(0, "");
    assert!(
        again.stdout.contains("my-chrome: connected to "),
        "{}",
        again.stdout
    );
    assert_eq!(w.sandbox.run(&["tab-list"]).code, 0);
    assert!(!marker.exists());
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&refused, &gone, &again]);
}

/// `connect` runs one Node process while the record of the last full
/// check holds: the session's daemon, started as the pinned session code
/// starts it (no client, no `--version`, no node probe). A tree whose
/// record differs is checked in full (`--version` included) before the
/// daemon starts, and a daemon entry whose bytes changed never runs (the
/// full check's verdict: not the pin, exit 2).
#[test]
fn connect_starts_only_the_daemon_while_the_record_holds_and_checks_in_full_otherwise() {
    use std::os::unix::fs::PermissionsExt;
    let mut w = world();
    let chrome = w.chrome();
    // A node that notes what each start runs (the script's name and its
    // first argument), then runs the real one.
    let real = ["/usr/bin/node", "/usr/local/bin/node"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("a node");
    let starts = w.sandbox.home.path().join("node-starts");
    let node = w.sandbox.home.path().join("bin/node");
    fs::create_dir(node.parent().unwrap()).unwrap();
    let script = format!(
        "#!/bin/sh\necho \"$(basename \"$1\") $2\" >> {}\nexec {real} \"$@\"\n",
        starts.display()
    );
    fs::write(&node, &script).unwrap();
    fs::set_permissions(&node, fs::Permissions::from_mode(0o755)).unwrap();
    w.sandbox.set("MY_CHROME_NODE", &node);
    let session = "mychrome";
    let taken = || {
        let text = fs::read_to_string(&starts).unwrap_or_default();
        let _ = fs::remove_file(&starts);
        text.lines().map(String::from).collect::<Vec<_>>()
    };
    let daemon = format!("cliDaemon.js {session}");
    let connected = |run: &Run| {
        run.expect(0, "");
        assert!(
            run.stdout.contains("my-chrome: connected to "),
            "{}",
            run.stdout
        );
    };

    // Another node than the record's: checked in full, then the daemon.
    let first = w.sandbox.run(&["connect"]);
    connected(&first);
    let ran = taken();
    let version = ran.iter().position(|l| l == "playwright-cli.js --version");
    let started = ran.iter().position(|l| *l == daemon);
    assert!(
        version.is_some() && started.is_some() && version < started,
        "{ran:?}"
    );
    assert!(!ran.iter().any(|l| l.ends_with(" attach")), "{ran:?}");
    w.sandbox.run(&["disconnect"]).expect(0, "");
    taken();

    // The record holds: the daemon is all that starts.
    let again = w.sandbox.run(&["connect"]);
    connected(&again);
    assert_eq!(taken(), vec![daemon.clone()]);
    w.sandbox.run(&["disconnect"]).expect(0, "");
    taken();

    // A file's metadata moved (same bytes): the full check runs again.
    let entry = w
        .sandbox
        .cli()
        .join("node_modules/playwright-core/lib/entry/cliDaemon.js");
    let mode = fs::metadata(&entry).unwrap().permissions().mode();
    thread::sleep(Duration::from_millis(30));
    fs::set_permissions(&entry, fs::Permissions::from_mode(mode)).unwrap();
    let touched = w.sandbox.run(&["connect"]);
    connected(&touched);
    let ran = taken();
    assert_eq!(
        ran.first().map(String::as_str),
        Some("playwright-cli.js --version"),
        "{ran:?}"
    );
    assert!(ran.contains(&daemon), "{ran:?}");
    w.sandbox.run(&["disconnect"]).expect(0, "");
    taken();

    // The daemon's entry itself changed: refused before any of it runs.
    let marker = w.sandbox.home.path().join("daemon-code-ran");
    thread::sleep(Duration::from_millis(30));
    fs::set_permissions(&entry, fs::Permissions::from_mode(0o600)).unwrap();
    fs::write(
        &entry,
        format!(
            "require('fs').writeFileSync({:?}, 'ran');\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    let refused = w.sandbox.run(&["connect"]);
    refused.expect(2, "installed files differ from the pin");
    assert!(!marker.exists(), "the changed daemon entry ran");
    assert!(!taken().contains(&daemon));
    assert!(chrome.alive(), "Chrome keeps running");
    assert_nowhere(
        &w.token,
        w.sandbox.home.path(),
        &[&first, &again, &touched, &refused],
    );
}

/// A browser command that never returns (the debugger never answers, as on
/// a tab the session cannot drive) is stopped at its own bound and says so.
/// The daemon runs it on, waited for in the background: its agent's next
/// command waits for it (past its own wait: exit 7, naming it; the
/// others', tests/harm.rs, do not), `agents` shows it, and `disconnect`
/// ends that wait and lets the session go; the next `connect` works.
#[test]
fn a_command_that_never_returns_keeps_its_agent_waiting_until_disconnect() {
    let mut w = world();
    let chrome = w.chrome_with_faults("stall=NEVER_ANSWERED");
    w.sandbox.set("MY_CHROME_COMMAND_TIMEOUT_SECS", "5");
    w.sandbox.run(&["connect"]).expect(0, "");
    let hung = w.sandbox.run(&["eval", "() => 'NEVER_ANSWERED'"]);
    hung.expect(
        124,
        "your MY_CHROME_COMMAND_TIMEOUT_SECS if shorter); my-chrome stopped waiting",
    );
    assert!(hung.stderr.contains("within 5 s"), "{}", hung.stderr);
    assert!(
        chrome.log().contains("fault: never answering"),
        "{}",
        chrome.log()
    );
    w.sandbox.set("MY_CHROME_LEASE_WAIT_SECS", "1");
    let next = w.sandbox.run(&["eval", "() => 40 + 2"]);
    next.expect(
        7,
        "the daemon still runs it, and my-chrome waits for its end",
    );
    let agents = w.sandbox.run(&["agents", "--json"]).json();
    assert_eq!(agents["late"][0]["command"], "eval", "{agents}");
    assert!(agents["running"].is_null(), "the turn went on: {agents}");
    let log = fs::read_to_string(w.sandbox.runtime.join("lease.log")).unwrap();
    assert!(log.contains("ABANDONED agent="), "{log}");
    // The hidden waiter, run by hand (a misled agent told to "unstick"
    // the browser), changes nothing: the record stays the real waiter's,
    // for `disconnect` to stop, and no line is forged into the log.
    let runtime = w.sandbox.runtime.display().to_string();
    let lease = fs::read(w.sandbox.runtime.join("late.json")).unwrap();
    for line in [
        &["wait-abandoned", "--runtime", &runtime][..],
        &[
            "wait-abandoned",
            "--runtime",
            &runtime,
            "ann\n2099-01-01T00:00:00.000Z RAN agent=ann",
            "goto",
        ],
    ] {
        let mut by_hand = w.sandbox.command(line);
        by_hand.stdin(std::process::Stdio::null());
        let by_hand = common::Running::start(by_hand).wait();
        assert_eq!(by_hand.code, 2, "{line:?}: {}", by_hand.stderr);
        if line.len() == 3 {
            assert!(
                by_hand.stderr.contains("never run it by hand"),
                "{}",
                by_hand.stderr
            );
        }
    }
    assert_eq!(
        fs::read(w.sandbox.runtime.join("late.json")).unwrap(),
        lease
    );
    assert_eq!(
        fs::read_to_string(w.sandbox.runtime.join("lease.log")).unwrap(),
        log
    );
    w.sandbox.set("MY_CHROME_LEASE_WAIT_SECS", "30");
    let gone = w.sandbox.run(&["disconnect"]);
    assert_eq!(gone.code, 0, "{}{}", gone.stdout, gone.stderr);
    assert!(gone.stdout.contains("disconnected"), "{}", gone.stdout);
    let log = fs::read_to_string(w.sandbox.runtime.join("lease.log")).unwrap();
    assert!(
        log.contains("FINISHED agent=") && log.contains("unanswered"),
        "{log}"
    );
    assert_eq!(
        w.sandbox.run(&["agents", "--json"]).json()["late"],
        serde_json::json!([]),
        "the wait ended"
    );
    w.sandbox.run(&["connect"]).expect(0, "");
    // Told once that its tab went with the earlier session; then it works.
    w.sandbox
        .run(&["eval", "() => 40 + 2"])
        .expect(8, "the browser was connected again");
    let next = w.sandbox.run(&["eval", "() => 40 + 2"]);
    assert_eq!(next.code, 0, "{}{}", next.stdout, next.stderr);
    assert!(next.stdout.contains("42"), "{}", next.stdout);
}

/// A command that ends a while after its bound: the next command waits for
/// the daemon to finish it, then runs.
#[test]
fn the_command_after_one_past_its_bound_waits_for_the_daemon_to_finish_it() {
    let mut w = world();
    let _chrome = w.chrome();
    w.sandbox.run(&["connect"]).expect(0, "");
    w.sandbox.set("MY_CHROME_COMMAND_TIMEOUT_SECS", "2");
    let slow = w.sandbox.run(&[
        "eval",
        "() => new Promise(done => setTimeout(() => done('late'), 6000))",
    ]);
    slow.expect(124, "did not finish within 2 s");
    w.sandbox.set("MY_CHROME_COMMAND_TIMEOUT_SECS", "30");
    let next = w.sandbox.run(&["eval", "() => 40 + 2"]);
    assert_eq!(next.code, 0, "{}{}", next.stdout, next.stderr);
    assert!(next.stdout.contains("42"), "{}", next.stdout);
    // It waited for the abandoned one (not a time check: the log says so).
    let log = fs::read_to_string(w.sandbox.runtime.join("lease.log")).unwrap();
    let finished = log.find("FINISHED").expect("the wait ended");
    let ran = log.rfind("RAN").unwrap();
    assert!(finished < ran, "{log}");
    assert!(log.contains(" answered"), "{log}");
}

/// A cleanup record is checked before any use: one naming a directory
/// outside the runtime stops nothing and deletes nothing (never tried with a
/// system directory: as root the old code stopped every process naming it).
#[test]
fn a_bootstrap_record_naming_anything_else_is_refused_before_use() {
    let sandbox = Sandbox::installed();
    let elsewhere = tempfile::tempdir().unwrap();
    let unique = elsewhere.path().join("not-a-bootstrap-dir");
    fs::create_dir(&unique).unwrap();
    let mut sleeper = std::process::Command::new("/bin/sh")
        .args(["-c", "sleep 60", "sleeper"])
        .arg(&unique)
        .spawn()
        .unwrap();
    fs::create_dir_all(&sandbox.runtime).unwrap();
    let record = sandbox.runtime.join("bootstrap.json");
    fs::write(&record, serde_json::json!({"dir": unique}).to_string()).unwrap();
    fs::set_permissions(&record, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();

    let run = sandbox.run(&["tab-list"]);
    run.expect(6, "does not name a bootstrap directory of this runtime");
    assert!(run.stderr.contains("rm "), "{}", run.stderr);
    // The audit reports the same record as a failed safeguard.
    let audit = sandbox.run(&["safety-audit", "--json"]);
    audit.expect(6, "safeguard targeted-cleanup does not hold");
    let cleanup = audit.json()["safeguards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "targeted-cleanup")
        .cloned()
        .unwrap();
    assert_eq!(cleanup["holds"], false, "{cleanup}");
    assert!(unique.is_dir(), "nothing was deleted");
    assert!(sleeper.try_wait().unwrap().is_none(), "nothing was stopped");
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
}

/// Browser commands may write files outside the runtime; the CLI's daemon
/// must not load code from there. Its global config in HOME (whose
/// `browser.initPage` it would `require`) is not read.
#[test]
fn the_daemon_loads_no_code_from_the_users_home() {
    let mut w = world();
    let _chrome = w.chrome();
    let marker = w.sandbox.home.path().join("init-page-ran");
    let init = w.sandbox.home.path().join("init.js");
    fs::write(
        &init,
        format!(
            "require('fs').writeFileSync({:?}, 'ran'); module.exports = async () => {{}};\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    let config_dir = w.sandbox.home.path().join(".playwright");
    fs::create_dir(&config_dir).unwrap();
    fs::write(
        config_dir.join("cli.config.json"),
        serde_json::json!({"browser": {"initPage": [init]}}).to_string(),
    )
    .unwrap();
    w.sandbox.run(&["connect"]).expect(0, "");
    let site = common::site::Site::start();
    assert_eq!(w.sandbox.run(&["goto", &site.url("/")]).code, 0);
    assert_eq!(w.sandbox.run(&["tab-new", &site.url("/second")]).code, 0);
    assert!(!marker.exists(), "the daemon ran code from HOME");
}

/// The session's name goes to the daemon as its first argument, where the
/// pinned daemon's own option parser reads a name that begins with `-` as
/// one of its options (`--headed`, `--persistent`, `--init-workspace`…)
/// and serves the session "default" instead. A name an agent sets
/// (MY_CHROME_SESSION) must never start a daemon of another session, nor
/// leave one behind, attached, when connect fails.
#[test]
fn a_session_name_the_daemon_would_read_as_an_option_starts_no_other_session() {
    let mut w = world();
    let _chrome = w.chrome();
    w.sandbox.set("MY_CHROME_SESSION", "--headed");
    let run = w.sandbox.run(&["connect"]);
    // Refused before anything starts (src/config.rs).
    run.expect(2, "MY_CHROME_SESSION");
    let runtime = w.sandbox.runtime.to_string_lossy().into_owned();
    let daemons: Vec<Vec<String>> = my_chrome::procs::ProcessTable::read()
        .unwrap()
        .iter()
        .map(|p| {
            p.cmd
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
        })
        .filter(|cmd| {
            cmd.iter()
                .any(|a| a.contains("cliDaemon.js") && a.contains(&runtime))
        })
        .collect();
    let registry = my_chrome::session::registry::daemon_dir(
        w.sandbox.home.path(),
        &fs::canonicalize(&w.sandbox.runtime).unwrap(),
    )
    .unwrap();
    // The session the stray daemon serves, reached by its name (the
    // later value wins).
    w.sandbox.set("MY_CHROME_SESSION", "default");
    let other = w.sandbox.run(&["tab-list"]);
    assert!(
        !registry.join("default.session").exists() && (run.code == 0 || daemons.is_empty()),
        "connect ({}: {}) left a daemon serving the session \"default\": {daemons:?}; \
         tab-list there: {} {}",
        run.code,
        run.stderr,
        other.code,
        other.stdout
    );
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&run, &other]);
}
