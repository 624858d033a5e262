//! A session that ends by itself (docs/DESIGN.md, "A session that ends by
//! itself"): at the user's idle limit with no command run, at the lifetime
//! limit while commands keep coming, earlier when `connect --for` asked for
//! less; a killed watcher leaves the end to the next command and to the
//! daemon's own idle timer. After the end: exit 4 with the reason, no
//! daemon, nothing bound, no leftovers, the browser still running, the
//! token in no process and no file. The real binary, the real pinned CLI,
//! the Chrome stand-in (a real Chromium).

mod common;

use std::fs;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::sampler::sampler;
use common::{Run, Sandbox, assert_nowhere, process_gone, says, world};

const IDLE_END: &str = "the session ended by itself after 10s without a browser command (the \
                        idle limit)";

/// The pid of the session's watcher, from its record.
fn watcher_pid(sandbox: &Sandbox) -> u32 {
    let record = fs::read_to_string(sandbox.runtime.join("session-limits.json")).unwrap();
    let limits: serde_json::Value = serde_json::from_str(&record).unwrap();
    limits["watcher"]["pid"]
        .as_u64()
        .expect("a watcher is recorded") as u32
}

fn session_status(sandbox: &Sandbox) -> String {
    sandbox.doctor()["session"]["status"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Waits (up to `within`) until the session is no longer ready.
fn until_gone(sandbox: &Sandbox, within: Duration) {
    let deadline = Instant::now() + within;
    while session_status(sandbox) == "ready" {
        assert!(Instant::now() < deadline, "the session did not end");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Sends `tab-list` every half second until one is refused (within a
/// minute): that run, and how many were served before it.
fn busy_until_refused(sandbox: &Sandbox) -> (Run, usize) {
    let started = Instant::now();
    let mut served = 0;
    loop {
        let run = sandbox.run(&["tab-list"]);
        if run.code != 0 {
            return (run, served);
        }
        served += 1;
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "it never ended"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// What an ended session leaves: nothing of ours running or bound, the
/// browser running, the end in the lease log.
fn nothing_left(sandbox: &Sandbox, chrome_alive: bool, reason: &str) {
    assert!(chrome_alive, "the browser was closed");
    assert_eq!(session_status(sandbox), "missing");
    assert!(
        sandbox.bound_leftovers().is_empty(),
        "{:?}",
        sandbox.bound_leftovers()
    );
    assert!(!sandbox.runtime.join("session-output").exists());
    assert!(!sandbox.runtime.join("session-limits.json").exists());
    let artifacts: Vec<_> = fs::read_dir(sandbox.runtime.join("tmp"))
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("playwright-artifacts-")
        })
        .collect();
    assert!(artifacts.is_empty(), "{artifacts:?}");
    let log = fs::read_to_string(sandbox.runtime.join("lease.log")).unwrap();
    assert!(
        log.contains(&format!(
            "ENDED agent=my-chrome command=session-end reason={reason}"
        )),
        "{log}"
    );
}

#[test]
fn an_idle_session_ends_by_itself_with_no_command_run() {
    let mut w = world();
    let chrome = w.chrome();
    let limits = w
        .sandbox
        .run(&["setup", "--idle-limit", "10s", "--lifetime-limit", "1h"]);
    says(
        &limits,
        0,
        "a session ends after 10s without a browser command",
    );
    let (stop, sampling) = sampler(w.token.clone());
    let connected = w.sandbox.run(&["connect"]);
    says(
        &connected,
        0,
        "ends after 10s more without a browser command",
    );
    let watcher = watcher_pid(&w.sandbox);
    let doctor = w.sandbox.doctor();
    let reported = &doctor["session_limits"];
    assert_eq!(reported["watcher"], true, "{doctor}");
    assert!(
        reported["idle_left_secs"].as_u64().unwrap() <= 10,
        "{doctor}"
    );
    assert!(
        reported["lifetime_left_secs"].as_u64().unwrap() > 3500,
        "{doctor}"
    );
    // A command moves the idle end: half-way to it, the session is ready.
    std::thread::sleep(Duration::from_secs(6));
    let listed = w.sandbox.run(&["tab-list"]);
    listed.expect(0, "");
    std::thread::sleep(Duration::from_secs(6));
    let ensured = w.sandbox.run(&["ensure"]);
    says(&ensured, 0, "ends after");
    let agents = w.sandbox.run(&["agents"]);
    says(&agents, 0, "session: the session ends after");

    // Then nothing: the watcher ends it.
    until_gone(&w.sandbox, Duration::from_secs(40));
    common::wait_gone(&watcher.to_string());
    let after = w.sandbox.run(&["tab-list"]);
    after.expect(4, IDLE_END);
    after.expect(4, "my-chrome connect");
    // Every command after it says the same, once and for all agents.
    let other = w.sandbox.run(&["--agent", "other", "snapshot"]);
    other.expect(4, IDLE_END);
    stop.store(true, Ordering::SeqCst);
    let (_, seen) = sampling.join().unwrap();
    assert!(seen.is_empty(), "the token was visible in: {seen:?}");
    nothing_left(&w.sandbox, chrome.alive(), "idle");
    let doctor = w.sandbox.run(&["doctor"]);
    says(&doctor, 0, &format!("session-limits: {IDLE_END}"));

    // A fresh connect starts clean.
    let again = w.sandbox.run(&["connect"]);
    says(&again, 0, "connected");
    w.sandbox.run(&["tab-list"]).expect(0, "");
    let gone = w.sandbox.run(&["disconnect"]);
    says(&gone, 0, "disconnected");
    assert!(!w.sandbox.runtime.join("session-ended.json").exists());
    assert_nowhere(
        &w.token,
        w.sandbox.home.path(),
        &[
            &limits, &connected, &listed, &ensured, &agents, &after, &other, &doctor, &again, &gone,
        ],
    );
}

#[test]
fn the_lifetime_ends_a_busy_session_and_connect_asks_only_for_less() {
    let mut w = world();
    let chrome = w.chrome();
    let mut runs: Vec<Run> = Vec::new();
    // Limits that are not ones are refused with the accepted forms.
    for (args, needle) in [
        (
            &["setup", "--idle-limit", "5s"][..],
            "from 10 s to 24 h, or 0 (never)",
        ),
        (&["setup", "--idle-limit", "soon"], "is not a duration"),
        (&["setup", "--lifetime-limit", "0"], "from 10 s to 7 days"),
        (&["setup", "--lifetime-limit", "8days"], "is out of range"),
    ] {
        runs.push(w.sandbox.run(args));
        runs.last().unwrap().expect(2, needle);
    }
    w.sandbox
        .run(&["setup", "--idle-limit", "10m", "--lifetime-limit", "1h"])
        .expect(0, "");
    // More than the user's limit, or no duration: refused, nothing attached.
    for (asked, needle) in [
        (
            "2h",
            "more than your lifetime limit of 1h; nothing was read or attached",
        ),
        ("later", "is not a duration"),
    ] {
        runs.push(w.sandbox.run(&["connect", "--for", asked]));
        runs.last().unwrap().expect(2, needle);
        assert_eq!(session_status(&w.sandbox), "missing");
    }
    let connected = w.sandbox.run(&["connect", "--for", "15s"]);
    says(&connected, 0, "in 15s at the latest");
    let watcher = watcher_pid(&w.sandbox);
    // Commands keep coming; the lifetime ends the session all the same,
    // between two of them.
    let (ended, served) = busy_until_refused(&w.sandbox);
    assert!(served >= 5, "only {served} commands ran");
    ended.expect(
        4,
        "the session ended by itself 15s after it was connected (the lifetime limit)",
    );
    common::wait_gone(&watcher.to_string());
    nothing_left(&w.sandbox, chrome.alive(), "lifetime");
    runs.push(connected);
    runs.push(ended);
    let all: Vec<&Run> = runs.iter().collect();
    assert_nowhere(&w.token, w.sandbox.home.path(), &all);
}

#[test]
fn a_killed_watcher_leaves_the_end_to_the_next_command_and_connect_brings_it_back() {
    let mut w = world();
    let chrome = w.chrome();
    w.sandbox
        .run(&["setup", "--idle-limit", "10s", "--lifetime-limit", "1h"])
        .expect(0, "");
    let connected = w.sandbox.run(&["connect"]);
    says(&connected, 0, "connected");
    // By hand, the watcher refuses and changes nothing.
    let by_hand = w.sandbox.run(&["watch-session"]);
    by_hand.expect(2, "never run it by hand");
    let watcher = watcher_pid(&w.sandbox);
    assert!(!process_gone(&watcher.to_string()));

    let kill = |pid: u32| {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
        common::wait_gone(&pid.to_string());
    };
    kill(watcher);
    let doctor = w.sandbox.run(&["doctor"]);
    says(&doctor, 0, "its watcher is not running");
    // Past the idle limit, the next command ends the session itself.
    std::thread::sleep(Duration::from_secs(11));
    let next = w.sandbox.run(&["snapshot"]);
    next.expect(4, IDLE_END);
    nothing_left(&w.sandbox, chrome.alive(), "idle");

    // A connect that reuses the session starts a watcher again, and
    // `--for` shortens the session it reuses (never lengthens it).
    let again = w.sandbox.run(&["connect"]);
    says(&again, 0, "connected");
    kill(watcher_pid(&w.sandbox));
    let reused = w.sandbox.run(&["connect", "--for", "12s"]);
    says(&reused, 0, "already connected");
    let doctor = w.sandbox.doctor();
    assert_eq!(doctor["session_limits"]["watcher"], true, "{doctor}");
    let left = doctor["session_limits"]["lifetime_left_secs"]
        .as_u64()
        .unwrap();
    assert!(left <= 12, "{doctor}");
    let longer = w.sandbox.run(&["connect", "--for", "30s"]);
    says(&longer, 0, "already connected");
    let left = w.sandbox.doctor()["session_limits"]["lifetime_left_secs"]
        .as_u64()
        .unwrap();
    assert!(left <= 12, "--for lengthened the session to {left} s");
    // Kept busy, it still ends at that lifetime.
    let (ended, _) = busy_until_refused(&w.sandbox);
    let log = fs::read_to_string(w.sandbox.runtime.join("lease.log")).unwrap();
    assert!(
        ended
            .stderr
            .contains("after it was connected (the lifetime limit)"),
        "{}\n{log}\n{:?}",
        ended.stderr,
        fs::read_dir(&w.sandbox.runtime)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect::<Vec<_>>()
    );
    nothing_left(&w.sandbox, chrome.alive(), "lifetime");
    assert_nowhere(
        &w.token,
        w.sandbox.home.path(),
        &[
            &connected, &by_hand, &next, &again, &reused, &longer, &ended,
        ],
    );
}

/// Starts a page command that runs `secs` seconds, with the command bound
/// `bound` (in seconds) for that call.
fn slow_eval(sandbox: &Sandbox, secs: u64, bound: &str) -> Run {
    let mut cmd = sandbox.command(&[
        "eval",
        &format!(
            "() => new Promise(done => setTimeout(() => done('late'), {}))",
            secs * 1000
        ),
    ]);
    cmd.env("MY_CHROME_COMMAND_TIMEOUT_SECS", bound);
    common::Running::start(cmd).wait()
}

/// A command that runs longer than the idle limit is activity, not
/// idleness: neither the watcher nor the daemon's own timer cuts it, and
/// the idle end follows it.
#[test]
fn a_command_longer_than_the_idle_limit_is_never_cut_and_the_end_follows() {
    let mut w = world();
    let chrome = w.chrome();
    w.sandbox
        .run(&["setup", "--idle-limit", "10s", "--lifetime-limit", "1h"])
        .expect(0, "");
    says(&w.sandbox.run(&["connect"]), 0, "connected");
    let slow = slow_eval(&w.sandbox, 25, "90");
    assert_eq!(slow.code, 0, "cut half-way: {}{}", slow.stdout, slow.stderr);
    assert!(slow.stdout.contains("late"), "{}", slow.stdout);
    // Abandoned past its bound, the daemon runs it on: its turn is held
    // and the idle end waits for its end too.
    let abandoned = slow_eval(&w.sandbox, 25, "3");
    abandoned.expect(124, "");
    until_gone(&w.sandbox, Duration::from_secs(90));
    // The end is logged once its detach is done: doctor can see the
    // session gone a moment before (CI saw it).
    let log_path = w.sandbox.runtime.join("lease.log");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !fs::read_to_string(&log_path).unwrap().contains("ENDED") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    let log = fs::read_to_string(&log_path).unwrap();
    assert!(
        log.contains("FINISHED") && log.contains("answered"),
        "{log}"
    );
    let finished = log.find("FINISHED").unwrap();
    assert!(
        log[finished..].contains("ENDED"),
        "the end came first: {log}"
    );
    w.sandbox.run(&["tab-list"]).expect(4, IDLE_END);
    nothing_left(&w.sandbox, chrome.alive(), "idle");
}
