//! The session's lease: many agents, one browser. The real binary and the
//! real pinned CLI throughout; where a browser is involved, a session made by
//! `my-chrome connect` to the Chrome stand-in (a real Chromium).
//!
//! Without a session, a browser command still takes the lease before it
//! finds there is nothing to drive (exit 4): the browser-free tests use that
//! to hold and contend for the lease cheaply.

mod common;

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use common::site::{SLOW, Site, agent_text};
use common::standin::Standin;
use common::{Run, Running, Sandbox, World, assert_nowhere, fresh_token, read_snapshot, world};

/// `my-chrome --agent NAME args…`.
fn as_agent(sandbox: &Sandbox, agent: &str, args: &[&str]) -> Command {
    let mut full = vec!["--agent", agent];
    full.extend_from_slice(args);
    sandbox.command(&full)
}

fn run_as(sandbox: &Sandbox, agent: &str, args: &[&str]) -> Run {
    Running::start(as_agent(sandbox, agent, args)).wait()
}

/// One line of `lease.log`.
#[derive(Debug, Clone)]
struct Entry {
    at: SystemTime,
    /// `ACQUIRED`, `ACQUIRED after`, `REFRESHED`, `BLOCKED`, …
    event: String,
    agent: String,
    fields: HashMap<String, String>,
}

fn entries(sandbox: &Sandbox) -> Vec<Entry> {
    let mut text = fs::read_to_string(sandbox.runtime.join("lease.log.1")).unwrap_or_default();
    text.push_str(&fs::read_to_string(sandbox.runtime.join("lease.log")).unwrap_or_default());
    text.lines()
        .map(|line| {
            let mut words = line.split_whitespace().peekable();
            let at = humantime::parse_rfc3339(words.next().unwrap()).unwrap();
            let mut event = words.next().unwrap().to_string();
            if words.peek() == Some(&"after") {
                words.next();
                let waited = words.next().unwrap();
                assert!(waited.ends_with('s'), "{line}");
                event.push_str(" after");
            }
            let fields: HashMap<String, String> = words
                .map(|w| {
                    let (k, v) = w.split_once('=').unwrap_or_else(|| panic!("{line}"));
                    (k.to_string(), v.to_string())
                })
                .collect();
            Entry {
                at,
                event,
                agent: fields["agent"].clone(),
                fields,
            }
        })
        .collect()
}

fn find<'a>(log: &'a [Entry], event: &str, agent: &str) -> &'a Entry {
    log.iter()
        .rev()
        .find(|e| e.event == event && e.agent == agent)
        .unwrap_or_else(|| panic!("no {event} by {agent} in {log:#?}"))
}

fn gap(from: SystemTime, to: SystemTime) -> Duration {
    to.duration_since(from)
        .unwrap_or_else(|e| panic!("{to:?} is before {from:?} by {:?}", e.duration()))
}

fn holder(sandbox: &Sandbox) -> serde_json::Value {
    let shown = sandbox.run(&["lease", "--json"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    shown.json()["holder"].clone()
}

#[test]
fn bad_agent_names_and_waits_are_refused_naming_the_variable() {
    let mut sandbox = Sandbox::installed();
    let token = fresh_token();
    let mut outputs = Vec::new();
    for name in ["two words", "-dash", "a/b", "x@1", &token] {
        let run = run_as(&sandbox, name, &["tab-list"]);
        run.expect(2, "--agent: must be a short name");
        outputs.push(run);
        let mut with_var = sandbox.command(&["tab-list"]);
        with_var.env("MY_CHROME_AGENT", name);
        let run = Running::start(with_var).wait();
        run.expect(2, "MY_CHROME_AGENT: must be a short name");
        outputs.push(run);
    }
    sandbox
        .command(&["--agent"])
        .output()
        .map(|o| assert_eq!(o.status.code(), Some(2)))
        .unwrap();
    for (var, value) in [
        ("MY_CHROME_LEASE_WAIT_SECS", "-1"),
        ("MY_CHROME_LEASE_WAIT_SECS", "100000"),
        ("MY_CHROME_LEASE_IDLE_SECS", "0"),
        ("MY_CHROME_LEASE_IDLE_SECS", "forever"),
    ] {
        let mut cmd = sandbox.command(&["tab-list"]);
        cmd.env(var, value);
        Running::start(cmd).wait().expect(2, var);
    }
    // Nothing was taken or written by any of them.
    assert!(!sandbox.runtime.join("lease.json").exists());
    assert!(!sandbox.runtime.join("lease.log").exists());
    sandbox.set("MY_CHROME_AGENT", "fine");
    assert_eq!(holder(&sandbox), serde_json::Value::Null);
    let refs: Vec<&Run> = outputs.iter().collect();
    assert_nowhere(&token, sandbox.home.path(), &refs);
}

#[test]
fn the_fallback_names_the_calling_process_not_its_shell() {
    let sandbox = Sandbox::installed();
    let comm = fs::read_to_string("/proc/self/comm").unwrap();
    let expected = format!("{}@{}", comm.trim(), std::process::id());
    let you = |cmd: Command| Running::start(cmd).wait().json()["you"].clone();
    // Directly, through `sh -c` and through `timeout`: the same agent (this
    // test). `; true` keeps the shell from replacing itself with my-chrome.
    let clean = |mut cmd: Command| {
        cmd.env_clear()
            .env("HOME", sandbox.home.path())
            .env("MY_CHROME_RUNTIME_DIR", &sandbox.runtime);
        cmd
    };
    assert_eq!(
        you(sandbox.command(&["lease", "--json"])),
        expected.as_str()
    );
    let mut via_shell = Command::new("/bin/sh");
    via_shell.args(["-c", &format!("{} lease --json; true", common::BIN)]);
    assert_eq!(you(clean(via_shell)), expected.as_str());
    let mut via_timeout = Command::new("/usr/bin/timeout");
    via_timeout.args(["60", common::BIN, "lease", "--json"]);
    assert_eq!(you(clean(via_timeout)), expected.as_str());
    // A script is an agent of its own.
    let script = sandbox.home.path().join("agent.sh");
    fs::write(&script, format!("{} lease --json\ntrue\n", common::BIN)).unwrap();
    let mut via_script = Command::new("/bin/sh");
    via_script.arg(&script);
    let via_script = clean(via_script);
    let scripted = you(via_script);
    assert!(scripted.as_str().unwrap().starts_with("sh@"), "{scripted}");
    assert_ne!(scripted, expected.as_str());
}

#[test]
fn a_script_is_one_agent_through_command_substitution_and_wrappers() {
    let sandbox = Sandbox::installed();
    let script = sandbox.home.path().join("agent.sh");
    let bin = common::BIN;
    // Each way a script commonly calls my-chrome, its output captured.
    let calls = [
        format!("{bin} lease --json"),
        format!("( {bin} lease --json; true )"),
        format!("echo lease --json | xargs {bin}"),
        format!("nice -n 1 {bin} lease --json"),
        format!("nohup {bin} lease --json 2>/dev/null"),
        format!("stdbuf -o0 {bin} lease --json"),
        format!("/usr/bin/time -o /dev/null {bin} lease --json"),
    ];
    let mut text = String::from("echo \"$$\"\n");
    for call in &calls {
        text.push_str(&format!("out=$({call})\nprintf '%s\\n---\\n' \"$out\"\n"));
    }
    fs::write(&script, text).unwrap();
    let mut cmd = Command::new("/bin/bash");
    cmd.arg(&script)
        .env_clear()
        .env("HOME", sandbox.home.path())
        .env("PATH", "/usr/bin:/bin")
        .env("MY_CHROME_RUNTIME_DIR", &sandbox.runtime);
    let run = Running::start(cmd).wait();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (pid, outputs) = run.stdout.split_once('\n').unwrap();
    let script_agent = format!("bash@{pid}");
    let names: Vec<String> = outputs
        .split("---\n")
        .filter(|o| !o.trim().is_empty())
        .map(|o| {
            let doc: serde_json::Value =
                serde_json::from_str(o).unwrap_or_else(|e| panic!("{e}: {o}"));
            doc["you"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(names.len(), calls.len(), "{}", run.stdout);
    for (call, name) in calls.iter().zip(&names) {
        assert_eq!(name, &script_agent, "{call}");
    }
}

#[test]
fn a_busy_lease_fails_others_with_exit_7_and_a_failed_command_does_not_poison_it() {
    let mut sandbox = Sandbox::installed();
    sandbox.set("MY_CHROME_LEASE_WAIT_SECS", "0");
    // alpha's command fails (no session), but alpha holds the browser now.
    run_as(&sandbox, "alpha", &["tab-list"]).expect(4, "my-chrome connect");
    assert_eq!(holder(&sandbox)["agent"], "alpha");
    run_as(&sandbox, "alpha", &["snapshot"]).expect(4, "my-chrome connect");

    // The lease never waits behind the wrapper lock (which `setup` and
    // `connect` hold for long): with it taken, beta still fails at once
    // with 7, not 124 after MY_CHROME_LOCK_WAIT_SECS.
    let wrapper = fs::File::create(sandbox.runtime.join(".lock")).unwrap();
    let held = nix::fcntl::Flock::lock(wrapper, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .map_err(|(_, e)| e)
        .unwrap();
    let mut beta = as_agent(&sandbox, "beta", &["goto", "https://example.test/"]);
    beta.env("MY_CHROME_LOCK_WAIT_SECS", "1");
    let busy = Running::start(beta).wait();
    busy.expect(7, "agent alpha has it (idle");
    assert!(busy.stderr.contains("ran nothing"), "{}", busy.stderr);
    drop(held);
    // connect and disconnect wait their turn too: nothing else happened (no
    // keyring is configured, so anything further would have failed otherwise).
    run_as(&sandbox, "beta", &["connect"]).expect(7, "agent alpha has it");
    run_as(&sandbox, "beta", &["disconnect"]).expect(7, "agent alpha has it");
    run_as(&sandbox, "beta", &["ensure"]).expect(7, "agent alpha has it");
    // Only the holder releases it.
    run_as(&sandbox, "beta", &["release"])
        .expect(7, "agent beta does not hold the lease: alpha does");
    assert_eq!(holder(&sandbox)["agent"], "alpha");
    // Wrapper commands that do not touch the browser never wait.
    assert_eq!(run_as(&sandbox, "beta", &["doctor"]).code, 0);
    assert_eq!(run_as(&sandbox, "beta", &["list"]).code, 0);

    // alpha's disconnect gives the lease up with the session.
    let gone = run_as(&sandbox, "alpha", &["disconnect"]);
    assert_eq!(gone.code, 0, "{}", gone.stderr);
    assert_eq!(holder(&sandbox), serde_json::Value::Null);
    run_as(&sandbox, "beta", &["tab-list"]).expect(4, "my-chrome connect");
    let released = run_as(&sandbox, "beta", &["release"]);
    assert!(released.stdout.contains("agent beta released the browser"));
    let again = run_as(&sandbox, "beta", &["release"]);
    assert!(
        again.stdout.contains("nothing to release"),
        "{}",
        again.stdout
    );

    let log = entries(&sandbox);
    let events: Vec<String> = log
        .iter()
        .map(|e| format!("{} {}", e.event, e.agent))
        .collect();
    assert_eq!(
        events,
        [
            "ACQUIRED alpha",
            "REFRESHED alpha",
            "BLOCKED beta",
            "TIMEOUT beta",
            "BLOCKED beta",
            "TIMEOUT beta",
            "BLOCKED beta",
            "TIMEOUT beta",
            "BLOCKED beta",
            "TIMEOUT beta",
            "REFRESHED alpha",
            "RELEASED alpha",
            "ACQUIRED beta",
            "RELEASED beta",
        ]
    );
    assert_eq!(log[3].fields["holder"], "alpha");
    assert_eq!(log[4].fields["command"], "connect");
    assert_eq!(log[11].fields["command"], "disconnect");
}

#[test]
fn waiters_are_served_in_arrival_order_and_a_killed_waiter_leaves_the_line() {
    let mut sandbox = Sandbox::installed();
    sandbox.set("MY_CHROME_LEASE_WAIT_SECS", "60");
    run_as(&sandbox, "alpha", &["tab-list"]).expect(4, "connect");
    let beta = Running::start(as_agent(&sandbox, "beta", &["tab-list"]));
    beta.wait_for_stderr("waiting up to 60 s as agent beta");
    let mut doomed = Running::start(as_agent(&sandbox, "doomed", &["tab-list"]));
    doomed.wait_for_stderr("as agent doomed");
    let mut gamma = Running::start(as_agent(&sandbox, "gamma", &["tab-list"]));
    gamma.wait_for_stderr("as agent gamma");
    let shown = sandbox.run(&["lease", "--json"]).json();
    let line: Vec<&str> = shown["waiters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["agent"].as_str().unwrap())
        .collect();
    assert_eq!(line, ["beta", "doomed", "gamma"]);
    let text = sandbox.run(&["lease"]);
    assert!(
        text.stdout.contains("held by agent alpha") && text.stdout.contains("waiting: beta"),
        "{}",
        text.stdout
    );
    doomed.child.kill().unwrap();
    doomed.child.wait().unwrap();

    let released = run_as(&sandbox, "alpha", &["release"]);
    assert!(released.stdout.contains("agent alpha released the browser"));
    let beta = beta.wait();
    beta.expect(4, "agent alpha used the browser before this command");
    // gamma is next, not the killed one; it gets its turn when beta's ends.
    assert!(
        gamma.child.try_wait().unwrap().is_none(),
        "gamma waits for beta"
    );
    let released = run_as(&sandbox, "beta", &["release"]);
    assert!(released.stdout.contains("agent beta released the browser"));
    gamma
        .wait()
        .expect(4, "agent beta used the browser before this command");
    let log = entries(&sandbox);
    let acquired: Vec<(&str, &str)> = log
        .iter()
        .filter(|e| e.event == "ACQUIRED after")
        .map(|e| (e.agent.as_str(), e.fields["previous"].as_str()))
        .collect();
    assert_eq!(acquired, [("beta", "alpha"), ("gamma", "beta")], "{log:#?}");
    assert!(
        !log.iter()
            .any(|e| e.agent == "doomed" && e.event.starts_with("ACQUIRED"))
    );
}

#[test]
fn a_corrupted_or_foreign_lease_file_is_refused_with_the_way_out() {
    let mut sandbox = Sandbox::installed();
    sandbox.set("MY_CHROME_AGENT", "alpha");
    let lease = sandbox.runtime.join("lease.json");
    let private = |path: &std::path::Path, mode: u32| {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap()
    };
    // What the file says is never repeated (it could be anything).
    let quoted = r#"{"version":1,"holder":"CANARY-in-the-file","waiters":[]}"#;
    for junk in [
        "{not json",
        r#"{"version":9,"holder":null,"waiters":[]}"#,
        "null",
        quoted,
    ] {
        fs::write(&lease, junk).unwrap();
        private(&lease, 0o600);
        let run = sandbox.run(&["tab-list"]);
        run.expect(6, "is not a lease file of my-chrome");
        assert!(
            run.stderr.contains(&format!("rm {}", lease.display())),
            "{}",
            run.stderr
        );
        let shown = sandbox.run(&["lease"]);
        shown.expect(6, "is not a lease file");
        sandbox.run(&["release"]).expect(6, "is not a lease file");
        // doctor reports it and does not fail.
        let report = sandbox.doctor();
        let status = report["lease"]["status"].as_str().unwrap();
        assert!(status.starts_with("error: "), "{status}");
        for text in [&run.stderr, &shown.stderr, &report.to_string()] {
            assert!(!text.contains("CANARY"), "{text}");
        }
    }
    // An empty or zero-filled file (what a power loss can leave of the
    // unsynced lease) is a free lease.
    for left in [&b""[..], &[0u8; 146], b" \n"] {
        fs::write(&lease, left).unwrap();
        private(&lease, 0o600);
        let after_power_loss = sandbox.run(&["lease", "--json"]);
        assert_eq!(after_power_loss.code, 0, "{}", after_power_loss.stderr);
        assert!(
            after_power_loss.json()["holder"].is_null(),
            "{}",
            after_power_loss.stdout
        );
    }
    fs::write(&lease, "{}").unwrap();
    private(&lease, 0o644);
    sandbox.run(&["tab-list"]).expect(6, "has mode 0644");
    fs::remove_file(&lease).unwrap();
    let elsewhere = sandbox.home.path().join("elsewhere.json");
    fs::write(&elsewhere, "{}").unwrap();
    private(&elsewhere, 0o600);
    symlink(&elsewhere, &lease).unwrap();
    sandbox.run(&["tab-list"]).expect(6, "is a symbolic link");
    assert_eq!(
        fs::read_to_string(&elsewhere).unwrap(),
        "{}",
        "never followed"
    );
    fs::remove_file(&lease).unwrap();
    // A log someone else can read is refused the same way.
    let log = sandbox.runtime.join("lease.log");
    fs::write(&log, "").unwrap();
    private(&log, 0o644);
    sandbox
        .run(&["tab-list"])
        .expect(6, "lease.log: has mode 0644");
    fs::remove_file(&log).unwrap();
    // Following the instruction recovers.
    sandbox.run(&["tab-list"]).expect(4, "my-chrome connect");
    assert_eq!(holder(&sandbox)["agent"], "alpha");
}

#[test]
fn the_log_names_commands_only_and_rotates() {
    let mut sandbox = Sandbox::installed();
    sandbox.set("MY_CHROME_AGENT", "alpha");
    let canary = "CANARY-7f3a9";
    let url = format!("https://secret.example/{canary}?q={canary}");
    sandbox.run(&["goto", &url]).expect(4, "connect");
    // A word that is no command is refused before the lease is taken.
    sandbox
        .run(&[&url])
        .expect(2, "not a command my-chrome forwards");
    sandbox.run(&["fill", "e1", canary]).expect(4, "connect");
    // A token-shaped argument is refused before anything else happens.
    let token = fresh_token();
    let refused = sandbox.run(&["fill", "e1", &token]);
    refused.expect(2, "looks like the extension token");
    let text = fs::read_to_string(sandbox.runtime.join("lease.log")).unwrap();
    assert!(
        !text.contains(canary) && !text.contains("secret.example"),
        "{text}"
    );
    let commands: Vec<String> = entries(&sandbox)
        .iter()
        .map(|e| e.fields["command"].clone())
        .collect();
    assert_eq!(commands, ["goto", "fill"]);
    assert_eq!(
        fs::metadata(sandbox.runtime.join("lease.log"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    let tail = sandbox.run(&["lease", "--log", "2"]);
    assert_eq!(tail.stdout.lines().count(), 2, "{}", tail.stdout);
    assert!(tail.stdout.contains("REFRESHED agent=alpha command=fill"));

    // Rotation, through the library with a small bound.
    let location = my_chrome::config::RuntimeLocation {
        path: sandbox.runtime.clone(),
    };
    let runtime = my_chrome::runtime::Runtime::open(&location).unwrap();
    let log = my_chrome::runtime::LogFile::Lease;
    for i in 0..100 {
        let line = format!("line {i:03} of forty bytes, more or less\n");
        runtime.append_log(log, line.as_bytes(), 1000).unwrap();
    }
    let current = fs::metadata(sandbox.runtime.join("lease.log"))
        .unwrap()
        .len();
    let older = fs::metadata(sandbox.runtime.join("lease.log.1"))
        .unwrap()
        .len();
    assert!(current <= 1000 && older <= 1000, "{current} {older}");
    let kept = runtime.read_log(log, 4000).unwrap();
    assert!(kept.ends_with("line 099 of forty bytes, more or less\n"));
    let numbers: Vec<&str> = kept.lines().map(|l| &l[5..8]).collect();
    let mut sorted = numbers.clone();
    sorted.sort();
    assert_eq!(numbers, sorted, "oldest first, none lost in between");
    assert_nowhere(&token, sandbox.home.path(), &[&refused, &tail]);
}

#[test]
fn the_log_knows_every_command_of_the_pinned_cli() {
    let help = Sandbox::installed().run(&["--help"]).stdout;
    let section = &help[help
        .find("Browser commands")
        .expect("the pinned CLI's help")..];
    let commands: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("  ") && l.as_bytes().get(2).is_some_and(u8::is_ascii_lowercase))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(commands.len() > 50, "{commands:?}");
    for command in commands {
        assert_eq!(my_chrome::lease::log::command_name(command), command);
    }
}

/// A session made by `my-chrome connect` to the stand-in, and a site with a
/// page for each agent.
struct Browser {
    world: World,
    _chrome: Standin,
    site: Site,
}

fn browser() -> Browser {
    let mut world = world();
    let chrome = world.chrome();
    let connected = world.sandbox.run(&["--agent", "setup-agent", "connect"]);
    assert_eq!(connected.code, 0, "{}", connected.stderr);
    world.sandbox.run(&["--agent", "setup-agent", "release"]);
    Browser {
        world,
        _chrome: chrome,
        site: Site::start(),
    }
}

impl Browser {
    fn sandbox(&self) -> &Sandbox {
        &self.world.sandbox
    }

    /// `agent` goes to its own page.
    fn goto_own(&self, agent: &str) -> Run {
        let page = self.site.url(&format!("/agent/{agent}"));
        run_as(self.sandbox(), agent, &["goto", &page])
    }

    /// Whether the current page, as `agent` snapshots it, is `agent`'s own.
    fn sees_own_page(&self, agent: &str) -> Result<(), String> {
        let snapshot = run_as(self.sandbox(), agent, &["snapshot"]);
        if snapshot.code != 0 {
            return Err(format!("snapshot failed: {}", snapshot.stderr));
        }
        let yaml = read_snapshot(self.sandbox(), &snapshot.stdout);
        if yaml.contains(&agent_text(agent)) {
            Ok(())
        } else {
            Err(format!("{agent} saw:\n{yaml}"))
        }
    }
}

#[test]
fn two_agents_each_see_only_their_own_page() {
    let b = Arc::new(browser());
    let rounds = 6;
    let workers: Vec<_> = ["left", "right"]
        .into_iter()
        .map(|agent| {
            let b = Arc::clone(&b);
            thread::spawn(move || {
                let mut outcomes = Vec::new();
                for _ in 0..rounds {
                    let went = b.goto_own(agent);
                    assert_eq!(went.code, 0, "{}", went.stderr);
                    outcomes.push(b.sees_own_page(agent));
                    let released = run_as(b.sandbox(), agent, &["release"]);
                    assert!(released.stdout.contains("released the browser"));
                }
                outcomes
            })
        })
        .collect();
    for worker in workers {
        for outcome in worker.join().unwrap() {
            outcome.unwrap();
        }
    }
    let log = entries(b.sandbox());
    let acquired = log
        .iter()
        .filter(|e| e.agent != "setup-agent" && e.event.starts_with("ACQUIRED"))
        .count();
    assert_eq!(acquired, 2 * rounds, "one turn per round and agent");
    assert!(
        log.iter().any(|e| e.event == "BLOCKED"),
        "the two really contended"
    );
    assert_nowhere(&b.world.token, b.sandbox().home.path(), &[]);
}

#[test]
fn a_waiter_gets_the_browser_after_release_and_after_idle_expiry() {
    let b = browser();
    assert_eq!(b.goto_own("alpha").code, 0);
    let page = b.site.url("/agent/beta");
    let beta = Running::start(as_agent(b.sandbox(), "beta", &["goto", &page]));
    beta.wait_for_stderr("in use by agent alpha");
    let released = run_as(b.sandbox(), "alpha", &["release"]);
    assert!(released.stdout.contains("released the browser"));
    let done = beta.wait();
    assert_eq!(done.code, 0, "{}", done.stderr);
    let beta_finished = SystemTime::now();
    let log = entries(b.sandbox());
    let handover = gap(
        find(&log, "RELEASED", "alpha").at,
        find(&log, "ACQUIRED after", "beta").at,
    );
    eprintln!("handed over {} ms after the release", handover.as_millis());
    assert!(handover < Duration::from_secs(1), "{handover:?}");

    // beta simply stops: alpha (whose setting says 3 s) gets the browser once
    // beta has been idle that long.
    let page = b.site.url("/agent/alpha");
    let mut alpha = as_agent(b.sandbox(), "alpha", &["goto", &page]);
    alpha.env("MY_CHROME_LEASE_IDLE_SECS", "3");
    let alpha = Running::start(alpha).wait();
    assert_eq!(alpha.code, 0, "{}", alpha.stderr);
    assert!(
        alpha.stderr.contains("in use by agent beta (idle"),
        "{}",
        alpha.stderr
    );
    let log = entries(b.sandbox());
    let expired = find(&log, "EXPIRED", "beta");
    let taken = find(&log, "ACQUIRED after", "alpha");
    // beta's turn began before its command ended, and its command ended
    // before `beta_finished`: its idle time lies between the two.
    let since_taken = gap(find(&log, "ACQUIRED after", "beta").at, taken.at);
    let since_finished = gap(beta_finished, taken.at);
    eprintln!(
        "taken {} ms after beta's turn began, {} ms after its command ended",
        since_taken.as_millis(),
        since_finished.as_millis()
    );
    assert!(since_taken + Duration::from_millis(50) >= Duration::from_secs(3));
    assert!(
        since_finished < Duration::from_secs(4),
        "{since_finished:?}"
    );
    assert!(expired.at <= taken.at);
    assert_eq!(taken.fields["previous"], "beta");
    b.sees_own_page("alpha").unwrap();
}

#[test]
fn a_waiter_with_a_2s_bound_exits_7_naming_the_holder() {
    let b = browser();
    assert_eq!(b.goto_own("alpha").code, 0);
    let mut beta = as_agent(b.sandbox(), "beta", &["goto", &b.site.url("/agent/beta")]);
    beta.env("MY_CHROME_LEASE_WAIT_SECS", "2");
    let started = Instant::now();
    let busy = Running::start(beta).wait();
    busy.expect(7, "the browser is busy: agent alpha has it (idle");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "it waited its bound"
    );
    let log = entries(b.sandbox());
    let timeout = find(&log, "TIMEOUT", "beta");
    assert_eq!(timeout.fields["holder"], "alpha");
    let waited: u64 = timeout.fields["waited"]
        .trim_end_matches('s')
        .parse()
        .unwrap();
    assert!(waited >= 2, "{waited}");
    // alpha's page is untouched.
    b.sees_own_page("alpha").unwrap();
}

#[test]
fn a_holder_killed_mid_command_blocks_no_longer_than_the_idle_expiry() {
    let mut b = browser();
    b.world.sandbox.set("MY_CHROME_LEASE_IDLE_SECS", "3");
    let mut alpha = Running::start(as_agent(
        b.sandbox(),
        "alpha",
        &["goto", &b.site.url("/slow")],
    ));
    // Mid-command: the browser has asked for the slow page.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !b.site.was_requested("/slow") {
        assert!(Instant::now() < deadline, "alpha never ran its command");
        thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(holder(b.sandbox())["running"], true);
    alpha.child.kill().unwrap();
    alpha.child.wait().unwrap();
    let shown = holder(b.sandbox());
    assert_eq!(shown["agent"], "alpha");
    assert_eq!(shown["running"], false, "a killed command is not running");

    let beta = b.goto_own("beta");
    assert_eq!(beta.code, 0, "{}", beta.stderr);
    let log = entries(b.sandbox());
    let blocked_for = gap(
        find(&log, "ACQUIRED", "alpha").at,
        find(&log, "ACQUIRED after", "beta").at,
    );
    eprintln!(
        "beta had the browser {} ms after alpha took it",
        blocked_for.as_millis()
    );
    // Idle since alpha's command began (it never ended), and not much longer.
    assert!(blocked_for + Duration::from_millis(50) >= Duration::from_secs(3));
    assert!(blocked_for < Duration::from_secs(5), "{blocked_for:?}");
    assert!(blocked_for < SLOW, "not held until the slow page answered");
    find(&log, "EXPIRED", "alpha");
    b.sees_own_page("beta").unwrap();
}

#[test]
fn eight_agents_by_twenty_five_commands_never_interleave() {
    let mut b = browser();
    b.world.sandbox.set("MY_CHROME_LEASE_WAIT_SECS", "900");
    let b = Arc::new(b);
    let agents: Vec<String> = (1..=8).map(|i| format!("agent-{i}")).collect();
    let commands = 25;
    // What each command saw, in the order the commands finished.
    let finished: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
    let workers: Vec<_> = agents
        .iter()
        .cloned()
        .map(|agent| {
            let (b, finished) = (Arc::clone(&b), Arc::clone(&finished));
            thread::spawn(move || {
                let title = format!("Agent {agent}");
                let mut pause = u64::from(agent.as_bytes()[6]) * 7;
                for i in 0..commands {
                    let run = if i == 0 {
                        b.goto_own(&agent)
                    } else {
                        run_as(b.sandbox(), &agent, &["eval", "document.title"])
                    };
                    assert_eq!(run.code, 0, "{agent} #{i}: {}", run.stderr);
                    assert!(
                        run.stdout.contains(&title),
                        "{agent} #{i} acted on another page:\n{}",
                        run.stdout
                    );
                    finished.lock().unwrap().push((agent.clone(), i));
                    pause = (pause * 31 + 17) % 97;
                    thread::sleep(Duration::from_millis(pause));
                }
                let released = run_as(b.sandbox(), &agent, &["release"]);
                assert!(released.stdout.contains("released the browser"));
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }

    // Each agent's 25 commands ran as one unbroken turn.
    let order = finished.lock().unwrap().clone();
    assert_eq!(order.len(), agents.len() * commands, "no lost command");
    let turns: Vec<&str> = order
        .chunks(commands)
        .map(|turn| {
            let agent = &turn[0].0;
            let steps: Vec<usize> = turn
                .iter()
                .map(|(a, i)| if a == agent { *i } else { 99 })
                .collect();
            assert_eq!(
                steps,
                (0..commands).collect::<Vec<_>>(),
                "{agent}'s turn was broken"
            );
            agent.as_str()
        })
        .collect();

    // The log tells the same story: per turn ACQUIRED, 24 REFRESHED,
    // RELEASED, with only BLOCKED lines of others in between, in time order.
    let log = entries(b.sandbox());
    for pair in log.windows(2) {
        assert!(pair[0].at <= pair[1].at, "out of order: {pair:#?}");
    }
    let mut logged_turns = Vec::new();
    let mut current: Option<(String, usize)> = None;
    for e in log.iter().filter(|e| e.agent != "setup-agent") {
        match (e.event.as_str(), &mut current) {
            ("BLOCKED", _) => {}
            ("ACQUIRED" | "ACQUIRED after", None) => {
                logged_turns.push(e.agent.clone());
                current = Some((e.agent.clone(), 1));
            }
            ("REFRESHED", Some((agent, n))) if *agent == e.agent => *n += 1,
            ("RELEASED", Some((agent, n))) if *agent == e.agent => {
                assert_eq!(*n, commands, "{agent} ran {n} commands in its turn");
                current = None;
            }
            _ => panic!("{e:?} breaks the turn {current:?}"),
        }
    }
    assert_eq!(
        logged_turns, turns,
        "the log's turns are the turns that happened"
    );
    let blocked = log.iter().filter(|e| e.event == "BLOCKED").count();
    eprintln!("8 agents x {commands} commands; {blocked} BLOCKED lines");
    assert_nowhere(&b.world.token, b.sandbox().home.path(), &[]);
}
