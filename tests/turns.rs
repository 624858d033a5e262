//! The session's turn: one browser command at a time, whoever's; who is
//! asking (the agent's name); the lease file and the event log. The real
//! binary and the real pinned CLI; a browser only for the log's lines
//! (tests/agents.rs and tests/faults.rs have the rest).
//!
//! Without a session, a browser command runs nothing and takes no turn;
//! `connect` and `disconnect` still take it (they change the session):
//! these tests hold and wait for the turn through them.

mod common;

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::process::Command;

use common::site::Site;
use common::{Run, Running, Sandbox, assert_nowhere, fresh_token, world};

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
    /// `RAN`, `TIMEOUT`, `CLAIMED`, `RELEASED`, `GONE`.
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
            humantime::parse_rfc3339(words.next().unwrap()).unwrap();
            let event = words.next().unwrap().to_string();
            let fields: HashMap<String, String> = words
                .map(|w| {
                    let (k, v) = w.split_once('=').unwrap_or_else(|| panic!("{line}"));
                    (k.to_string(), v.to_string())
                })
                .collect();
            Entry {
                event,
                agent: fields["agent"].clone(),
                fields,
            }
        })
        .collect()
}

fn running(sandbox: &Sandbox) -> serde_json::Value {
    let shown = sandbox.run(&["agents", "--json"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    shown.json()["running"].clone()
}

/// Holds the session's turn as a command of `agent` would: its lock taken
/// and `lease.json` naming it (and this test's process, which runs).
fn hold_turn(sandbox: &Sandbox, agent: &str) -> nix::fcntl::Flock<fs::File> {
    let path = sandbox.runtime.join(".session.lock");
    let lock = fs::File::create(&path).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    let held = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .map_err(|(_, e)| e)
        .unwrap();
    let lease = serde_json::json!({
        "version": 2,
        "holder": {
            "agent": agent,
            "command": "snapshot",
            "since": my_chrome::lease::now_ms(),
            "process": my_chrome::procs::ProcessId::current().unwrap(),
        }
    });
    let file = sandbox.runtime.join("lease.json");
    fs::write(&file, lease.to_string()).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
    held
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
        ("MY_CHROME_AGENT_GONE_SECS", "0"),
        ("MY_CHROME_AGENT_GONE_SECS", "forever"),
    ] {
        let mut cmd = sandbox.command(&["tab-list"]);
        cmd.env(var, value);
        Running::start(cmd).wait().expect(2, var);
    }
    // Nothing was taken or written by any of them.
    assert!(!sandbox.runtime.join("lease.json").exists());
    assert!(!sandbox.runtime.join("lease.log").exists());
    sandbox.set("MY_CHROME_AGENT", "fine");
    assert_eq!(running(&sandbox), serde_json::Value::Null);
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
        you(sandbox.command(&["agents", "--json"])),
        expected.as_str()
    );
    let mut via_shell = Command::new("/bin/sh");
    via_shell.args(["-c", &format!("{} agents --json; true", common::BIN)]);
    assert_eq!(you(clean(via_shell)), expected.as_str());
    let mut via_timeout = Command::new("/usr/bin/timeout");
    via_timeout.args(["60", common::BIN, "agents", "--json"]);
    assert_eq!(you(clean(via_timeout)), expected.as_str());
    // A script is an agent of its own.
    let script = sandbox.home.path().join("agent.sh");
    fs::write(&script, format!("{} agents --json\ntrue\n", common::BIN)).unwrap();
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
        format!("{bin} agents --json"),
        format!("( {bin} agents --json; true )"),
        format!("echo agents --json | xargs {bin}"),
        format!("nice -n 1 {bin} agents --json"),
        format!("nohup {bin} agents --json 2>/dev/null"),
        format!("stdbuf -o0 {bin} agents --json"),
        format!("/usr/bin/time -o /dev/null {bin} agents --json"),
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
fn a_command_in_flight_holds_others_up_to_the_bound_then_exit_7_naming_it() {
    let mut sandbox = Sandbox::installed();
    sandbox.set("MY_CHROME_LEASE_WAIT_SECS", "0");
    // No browser here: one named where there is none (its connect below is
    // refused for the turn, before any browser is looked at).
    let absent = sandbox.home.path().join("no-chrome/chrome");
    sandbox.browser_at(absent);
    // A command that runs nothing in the browser (no session) takes no
    // turn: it holds nothing afterwards, and leaves no line.
    run_as(&sandbox, "alpha", &["tab-list"]).expect(4, "my-chrome connect");
    assert_eq!(running(&sandbox), serde_json::Value::Null);

    let held = hold_turn(&sandbox, "alpha");
    assert_eq!(running(&sandbox)["agent"], "alpha");
    // Nor does it wait for the command in flight: exit 4 at once, not 7.
    for args in [
        &["snapshot"][..],
        &["goto", "https://example.test/"],
        &["ensure"],
        &["tab-claim", "t1"],
    ] {
        run_as(&sandbox, "beta", args).expect(4, "my-chrome connect");
    }
    let release = run_as(&sandbox, "beta", &["release"]);
    release.expect(0, "");
    assert!(
        release.stdout.contains("nothing to release"),
        "{}",
        release.stdout
    );
    // The turn never waits behind the wrapper lock (which `setup` holds for
    // long): with both taken, beta fails at once with 7, not 124.
    let wrapper = fs::File::create(sandbox.runtime.join(".lock")).unwrap();
    let wrapper = nix::fcntl::Flock::lock(wrapper, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .map_err(|(_, e)| e)
        .unwrap();
    let mut beta = as_agent(&sandbox, "beta", &["disconnect"]);
    beta.env("MY_CHROME_LOCK_WAIT_SECS", "1");
    let busy = Running::start(beta).wait();
    busy.expect(7, "agent alpha's `snapshot` has been running");
    assert!(busy.stderr.contains("ran nothing"), "{}", busy.stderr);
    // A wait of 0 s is no wait, and says none.
    assert!(!busy.stderr.contains("waiting up to"), "{}", busy.stderr);
    drop(wrapper);
    // connect waits its turn too (a browser command with a session does:
    // tests/faults.rs).
    run_as(&sandbox, "beta", &["connect"]).expect(7, "agent alpha's `snapshot`");
    // Commands that do not touch the browser never wait.
    assert_eq!(run_as(&sandbox, "beta", &["doctor"]).code, 0);
    assert_eq!(run_as(&sandbox, "beta", &["list"]).code, 0);
    assert_eq!(run_as(&sandbox, "beta", &["agents"]).code, 0);

    // Waiting: the waiter says for whom, and goes as soon as it is free.
    sandbox.set("MY_CHROME_LEASE_WAIT_SECS", "60");
    let waiter = Running::start(as_agent(&sandbox, "gamma", &["disconnect"]));
    waiter.wait_for_stderr(
        "agent alpha's `snapshot` is running on the browser; waiting up to 60 s as agent gamma",
    );
    drop(held);
    let _ = fs::remove_file(sandbox.runtime.join("lease.json"));
    waiter.wait().expect(0, "");

    let log = entries(&sandbox);
    let events: Vec<String> = log
        .iter()
        .map(|e| format!("{} {} {}", e.event, e.agent, e.fields["command"]))
        .collect();
    assert_eq!(
        events,
        [
            "TIMEOUT beta disconnect",
            "TIMEOUT beta connect",
            "RAN gamma disconnect",
        ]
    );
    assert_eq!(log[0].fields["holder"], "alpha");
    assert!(log[2].fields.contains_key("waited"), "{:?}", log[2]);
}

#[test]
fn a_command_during_a_connect_waits_for_it_instead_of_saying_there_is_none() {
    let mut sandbox = Sandbox::installed();
    sandbox.set("MY_CHROME_LEASE_WAIT_SECS", "0");
    // A connect under way: its turn, the wrapper lock, and its record out.
    let _turn = hold_turn(&sandbox, "person");
    let lease = serde_json::json!({
        "version": 2,
        "holder": {
            "agent": "person",
            "command": "connect",
            "since": my_chrome::lease::now_ms(),
            "process": my_chrome::procs::ProcessId::current().unwrap(),
        }
    });
    fs::write(sandbox.runtime.join("lease.json"), lease.to_string()).unwrap();
    let wrapper = fs::File::create(sandbox.runtime.join(".lock")).unwrap();
    let _wrapper = nix::fcntl::Flock::lock(wrapper, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .map_err(|(_, e)| e)
        .unwrap();
    let output = sandbox.runtime.join("session-output.under-way");
    fs::create_dir(&output).unwrap();
    let record = sandbox.runtime.join("bootstrap.json");
    fs::write(&record, serde_json::json!({"dir": output}).to_string()).unwrap();
    fs::set_permissions(&record, fs::Permissions::from_mode(0o600)).unwrap();
    // No session yet, but one is being made: the command waits for the
    // connect's turn (here: none at all, so exit 7 naming it), never
    // "not connected" while the user's connect runs.
    for args in [&["tab-list"][..], &["ensure"], &["tab-claim", "t1"]] {
        run_as(&sandbox, "beta", args).expect(7, "agent person's `connect`");
    }
    // The record is the connect's: nothing was recovered under it.
    assert!(record.exists() && output.exists());
}

#[test]
fn a_killed_command_leaves_no_turn_behind() {
    let mut sandbox = Sandbox::installed();
    sandbox.set("MY_CHROME_LEASE_WAIT_SECS", "60");
    let held = hold_turn(&sandbox, "alpha");
    let mut waiter = Running::start(as_agent(&sandbox, "doomed", &["disconnect"]));
    waiter.wait_for_stderr("as agent doomed");
    waiter.child.kill().unwrap();
    waiter.child.wait().unwrap();
    drop(held);
    // The record of a command whose process is gone names nobody.
    let lease = sandbox.runtime.join("lease.json");
    let stale = serde_json::json!({
        "version": 2,
        "holder": {"agent": "ghost", "command": "goto", "since": 1, "process": {"pid": 999_999, "start": 1}},
    });
    fs::write(&lease, stale.to_string()).unwrap();
    assert_eq!(running(&sandbox), serde_json::Value::Null);
    run_as(&sandbox, "beta", &["disconnect"]).expect(0, "");
    assert!(!entries(&sandbox).iter().any(|e| e.agent == "doomed"));
    assert!(entries(&sandbox).iter().any(|e| e.agent == "beta"));
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
    let quoted = r#"{"version":2,"holder":"CANARY-in-the-file"}"#;
    for junk in [
        "{not json",
        r#"{"version":9,"holder":null}"#,
        "null",
        quoted,
    ] {
        fs::write(&lease, junk).unwrap();
        private(&lease, 0o600);
        let run = sandbox.run(&["disconnect"]);
        run.expect(6, "is not a lease file of my-chrome");
        assert!(
            run.stderr.contains(&format!("rm {}", lease.display())),
            "{}",
            run.stderr
        );
        let shown = sandbox.run(&["agents"]);
        shown.expect(6, "is not a lease file");
        // doctor reports it and does not fail.
        let report = sandbox.doctor();
        let status = report["agents"]["status"].as_str().unwrap();
        assert!(status.starts_with("error: "), "{status}");
        for text in [&run.stderr, &shown.stderr, &report.to_string()] {
            assert!(!text.contains("CANARY"), "{text}");
        }
    }
    // An empty or zero-filled file (what a power loss can leave of the
    // unsynced lease) holds nothing; nor does an earlier release's lease.
    let earlier = br#"{"version":1,"holder":null,"waiters":[],"last":"x"}"#;
    for left in [&b""[..], &[0u8; 146], b" \n", earlier] {
        fs::write(&lease, left).unwrap();
        private(&lease, 0o600);
        let after_power_loss = sandbox.run(&["agents", "--json"]);
        assert_eq!(after_power_loss.code, 0, "{}", after_power_loss.stderr);
        assert!(
            after_power_loss.json()["running"].is_null(),
            "{}",
            after_power_loss.stdout
        );
    }
    fs::write(&lease, "{}").unwrap();
    private(&lease, 0o644);
    sandbox.run(&["disconnect"]).expect(6, "has mode 0644");
    fs::remove_file(&lease).unwrap();
    let elsewhere = sandbox.home.path().join("elsewhere.json");
    fs::write(&elsewhere, "{}").unwrap();
    private(&elsewhere, 0o600);
    symlink(&elsewhere, &lease).unwrap();
    sandbox.run(&["disconnect"]).expect(6, "is a symbolic link");
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
        .run(&["disconnect"])
        .expect(6, "lease.log: has mode 0644");
    fs::remove_file(&log).unwrap();
    // Following the instruction recovers.
    sandbox.run(&["disconnect"]).expect(0, "");
    assert_eq!(entries(&sandbox).last().unwrap().agent, "alpha");
}

#[test]
fn the_log_names_commands_only_and_rotates() {
    let mut w = world();
    let _chrome = w.chrome();
    w.sandbox.run(&["connect"]).expect(0, "");
    let sandbox = &mut w.sandbox;
    sandbox.set("MY_CHROME_AGENT", "alpha");
    let canary = "CANARY-7f3a9";
    let site = Site::start();
    let url = site.url(&format!("/agent/{canary}?q={canary}"));
    sandbox.run(&["goto", &url]).expect(0, "");
    // A word that is no command is refused before the lease is taken.
    sandbox
        .run(&[&url])
        .expect(2, "not a command my-chrome forwards");
    // No such element: it runs, and fails, in the browser.
    sandbox.run(&["fill", "e1", canary]).expect(1, "");
    // A token-shaped argument is refused before anything else happens.
    let token = fresh_token();
    let refused = sandbox.run(&["fill", "e1", &token]);
    refused.expect(2, "looks like the extension token");
    // Another agent's tab, named: refused under its turn, logged as such.
    sandbox
        .run(&["--agent", "beta", "snapshot", "--tab", "t1"])
        .expect(7, "is agent alpha's");
    let text = fs::read_to_string(sandbox.runtime.join("lease.log")).unwrap();
    assert!(
        !text.contains(canary) && !text.contains("127.0.0.1"),
        "{text}"
    );
    let events: Vec<String> = entries(sandbox)
        .iter()
        .filter(|e| e.fields["command"] != "connect")
        .map(|e| format!("{} {} {}", e.event, e.agent, e.fields["command"]))
        .collect();
    assert_eq!(
        events,
        ["RAN alpha goto", "RAN alpha fill", "REFUSED beta snapshot"]
    );
    assert_eq!(
        fs::metadata(sandbox.runtime.join("lease.log"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    let tail = sandbox.run(&["agents", "--log", "2"]);
    assert_eq!(tail.stdout.lines().count(), 2, "{}", tail.stdout);
    assert!(tail.stdout.contains("RAN agent=alpha command=fill tab=t"));

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
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&refused, &tail]);
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
