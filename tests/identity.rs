//! No agent passes for another (docs/DESIGN.md, "Who is asking"): a chosen
//! name is the agent's that registered it, proven by the key printed to
//! it once; a derived name holds while its process lives and is never
//! pid 1's. Agent bob, with ordinary `my-chrome` commands only, tries every
//! spelling of ann's name and of a key; each attempt is refused (exit 7,
//! or 2 where no name can be derived) with nothing of ann's printed, and
//! ann's tab stays ann's. The real binary, the real pinned CLI, a session
//! of `my-chrome connect` to the Chrome stand-in (a real Chromium).

mod common;

use std::process::Command;

use common::agent_keys::key_of;
use common::browser::{Browser, browser};
use common::site::agent_text;
use common::{Run, Running};

/// Whether `text` shows anything of ann's page or key.
fn shows_ann(text: &str, key: &str) -> bool {
    text.contains("/agent/ann")
        || text.contains(&agent_text("ann"))
        || text.contains("Agent ann")
        || text.to_lowercase().contains(key)
}

/// A command spelled exactly as given: no key added (`agent_keys`).
fn raw(b: &Browser, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = b.sandbox().typed(args);
    cmd.envs(env.iter().copied());
    Running::start(cmd).wait()
}

/// The registration notice's key, from a first command's stderr.
fn key_in(stderr: &str) -> String {
    let mut lines = stderr.lines();
    lines
        .find(|l| l.contains("is now registered to you"))
        .and_then(|_| lines.next())
        .unwrap_or_else(|| panic!("no key printed:\n{stderr}"))
        .trim()
        .to_string()
}

fn ann_tabs(b: &Browser) -> Vec<String> {
    b.tabs("ann").into_iter().map(|t| t.0).collect()
}

/// ann on her page, registered; her key.
fn ann_registered(b: &Browser) -> String {
    let first = raw(b, &["--agent=ann", "goto", &b.page("ann")], &[]);
    assert_eq!(first.code, 0, "{}{}", first.stdout, first.stderr);
    let key = key_in(&first.stderr);
    assert_eq!(key.len(), 32, "128 bits, in hex");
    assert!(!first.stdout.contains(&key), "the key goes to stderr only");
    // The harness carries it from here, as SKILL.md tells an agent to.
    assert_eq!(key_of(&home(b), "ann").as_deref(), Some(key.as_str()));
    key
}

fn home(b: &Browser) -> String {
    b.sandbox().home.path().to_string_lossy().into_owned()
}

/// An option line, the variables, and what the refusal says.
type Attempt = (Vec<String>, Vec<(&'static str, String)>, &'static str);

/// Every spelling of ann's name without her key, with a wrong one, or
/// with bob's, as an option or a variable: exit 7, nothing of ann's shown,
/// ann's tab ann's, and nothing run in the browser.
#[test]
fn no_spelling_of_a_name_or_a_key_acts_as_another_agent() {
    let b = browser();
    let key = ann_registered(&b);
    let ann = ann_tabs(&b);
    assert_eq!(ann.len(), 1);
    let bob_first = raw(&b, &["--agent", "bob", "tab-new", &b.page("bob")], &[]);
    assert_eq!(bob_first.code, 0, "{}", bob_first.stderr);
    let bob_key = key_in(&bob_first.stderr);
    assert!(!shows_ann(&bob_first.stderr, &key));
    assert_ne!(bob_key, key);
    // A wrong key: ann's with one digit changed, and one of the same shape.
    let flipped = {
        let mut k = key.clone().into_bytes();
        k[0] = if k[0] == b'0' { b'1' } else { b'0' };
        String::from_utf8(k).unwrap()
    };
    let log_before = b.ok("person", &["agents", "--log", "50"]).stdout;
    let mut attempts: Vec<Attempt> = Vec::new();
    for value in [
        "ann".to_string(),
        format!("ann:{flipped}"),
        format!("ann:{bob_key}"),
        format!("ann:{}", "0".repeat(32)),
    ] {
        let said = if value == "ann" {
            "must carry its key"
        } else {
            "is not its key"
        };
        attempts.push((vec!["--agent".into(), value.clone()], vec![], said));
        attempts.push((vec![format!("--agent={value}")], vec![], said));
        attempts.push((vec![], vec![("MY_CHROME_AGENT", value.clone())], said));
        // The option wins over the variable: bob's own name in the
        // variable does not help.
        attempts.push((
            vec!["--agent".into(), value.clone()],
            vec![("MY_CHROME_AGENT", format!("bob:{bob_key}"))],
            said,
        ));
    }
    for (prefix, env, said) in &attempts {
        for command in [
            &["snapshot"][..],
            &["tab-list"],
            &["eval", "document.title"],
            &["tab-close", &ann[0]],
            &["release"],
            &["tab-claim", &ann[0]],
            &["agents", "--json"],
            &["agents", "--log", "5"],
            &["disconnect"],
        ] {
            let mut args: Vec<&str> = prefix.iter().map(String::as_str).collect();
            args.extend_from_slice(command);
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let run = raw(&b, &args, &env);
            assert_eq!(
                run.code, 7,
                "{args:?} {env:?}: {}{}",
                run.stdout, run.stderr
            );
            assert!(run.stderr.contains(said), "{args:?}: {}", run.stderr);
            assert!(run.stderr.contains("nothing was run"), "{}", run.stderr);
            assert!(!shows_ann(&run.stdout, &key), "{args:?}: {}", run.stdout);
            assert!(!shows_ann(&run.stderr, &key), "{args:?}: {}", run.stderr);
            assert!(!run.stderr.contains(&bob_key), "{}", run.stderr);
        }
    }
    // Nothing ran: the log has no line of these, ann's tab is hers and on
    // her page, the session is there.
    let log_after = b.ok("person", &["agents", "--log", "50"]).stdout;
    assert_eq!(log_before, log_after, "refused names are not logged");
    assert_eq!(ann_tabs(&b), ann);
    let title = b.ok("ann", &["eval", "document.title"]);
    assert!(title.stdout.contains("Agent ann"), "{}", title.stdout);
    // A key that does not read is refused before anything, unshown.
    for bad in ["ann:", "ann:xyz", &format!("ann:{key}0")] {
        let run = raw(&b, &["--agent", bad, "tab-list"], &[]);
        run.expect(2, "is not an agent key");
        assert!(!run.stderr.contains(&key), "{}", run.stderr);
    }
    // ann's own key works in every spelling, either case.
    for (args, env) in [
        (vec![format!("--agent=ann:{key}")], vec![]),
        (
            vec!["--agent".into(), format!("ann:{}", key.to_uppercase())],
            vec![],
        ),
        (vec![], vec![("MY_CHROME_AGENT", format!("ann:{key}"))]),
    ] {
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.push("tab-list");
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let run = raw(&b, &all, &env);
        assert_eq!(run.code, 0, "{all:?}: {}", run.stderr);
        assert!(run.stdout.contains("/agent/ann"), "{}", run.stdout);
        assert!(
            !run.stderr.contains(&key),
            "shown once only: {}",
            run.stderr
        );
    }
    // Nothing anyone reads shows a key: not `agents` (names and tabs
    // only), not its log, not a file of the runtime (the registry keeps
    // salted hashes).
    for shown in [
        b.ok("person", &["agents"]).stdout,
        b.ok("person", &["agents", "--json"]).stdout,
        b.ok("person", &["agents", "--log", "200"]).stdout,
        b.ok("person", &["doctor", "--json"]).stdout,
    ] {
        assert!(!shown.to_lowercase().contains(&key), "{shown}");
        assert!(!shown.to_lowercase().contains(&bob_key), "{shown}");
    }
    // Salted hashes only: neither key is in any file under HOME (the
    // runtime, the registry, the logs).
    common::assert_nowhere(&key, b.sandbox().home.path(), &[]);
    common::assert_nowhere(&bob_key, b.sandbox().home.path(), &[]);
}

/// Two first commands under one free name: one registers it, the other is
/// refused; one key, never two.
#[test]
fn a_name_is_registered_once_when_two_ask_at_once() {
    let b = browser();
    let starts: Vec<Running> = (0..4)
        .map(|_| Running::start(b.sandbox().command(&["--agent=cid", "agents", "--json"])))
        .collect();
    let _ = starts.into_iter().map(Running::wait).count();
    // `agents` registers nothing: the name is free until a browser command.
    let runs: Vec<Run> = (0..4)
        .map(|_| Running::start(b.sandbox().command(&["--agent=cid", "tab-list"])))
        .collect::<Vec<_>>()
        .into_iter()
        .map(Running::wait)
        .collect();
    let registered: Vec<&Run> = runs
        .iter()
        .filter(|r| r.stderr.contains("is now registered to you"))
        .collect();
    assert_eq!(registered.len(), 1, "{runs:?}");
    for run in runs
        .iter()
        .filter(|r| !r.stderr.contains("is now registered"))
    {
        run.expect(7, "must carry its key");
    }
}

/// A chosen name ends with `release`, with the gone time and with the
/// session: its key opens nothing after, and whoever registers the name
/// next gets nothing of what the earlier holder had.
#[test]
fn a_name_that_ended_gives_its_next_holder_nothing() {
    let b = browser();
    let key = ann_registered(&b);
    let ann = ann_tabs(&b);
    // `release` (all of it) ends the name.
    b.ok("ann", &["release", "--keep"]);
    let stale = raw(&b, &["--agent", &format!("ann:{key}"), "tab-list"], &[]);
    stale.expect(7, "no agent holds the name ann now");
    assert!(!stale.stderr.contains(&key));
    // Whoever registers it next starts with nothing.
    let again = raw(&b, &["--agent", "ann", "tab-list"], &[]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let second = key_in(&again.stderr);
    assert_ne!(second, key);
    assert!(!again.stdout.contains("/agent/ann"), "{}", again.stdout);
    // The gone time: ann's tab held for her; her key ends with it, and the
    // name registered anew finds the tab the user's, not its own.
    let taken = raw(
        &b,
        &[
            "--agent",
            &format!("ann:{second}"),
            "tab-new",
            &b.page("ann"),
        ],
        &[],
    );
    assert_eq!(taken.code, 0, "{}", taken.stderr);
    let second_tabs = ann_tabs_by_key(&b, &second);
    assert_eq!(second_tabs.len(), 1, "{second_tabs:?}");
    assert!(!ann.contains(&second_tabs[0]), "{ann:?} {second_tabs:?}");
    b.ok("person", &["setup", "--agent-gone", "10s"]);
    // Watched from outside, as `agents` shows it (a command of ann's would
    // keep her name alive): her tab held for her once the gone time passed.
    common::wait::until(
        "ann's tab to be held after the gone time",
        std::time::Duration::from_secs(40),
        || match common::browser::held_for(&b.agents(), "ann").len() {
            1 => Ok(()),
            _ => Err(b.agents().to_string()),
        },
    );
    raw(&b, &["--agent", &format!("ann:{second}"), "tab-list"], &[])
        .expect(7, "no agent holds the name ann now");
    let third = raw(&b, &["--agent", "ann", "tab-list"], &[]);
    assert_eq!(third.code, 0, "{}", third.stderr);
    assert!(!third.stdout.contains("/agent/ann"), "{}", third.stdout);
    let agents = b.agents();
    let users: Vec<&str> = agents["user_tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["why"].as_str().unwrap())
        .collect();
    assert!(
        users.iter().any(|why| why.contains("name ended")),
        "{agents}"
    );
    // `disconnect` ends every name.
    let key_now = key_in(&third.stderr);
    b.ok("person", &["setup", "--agent-gone", "30m"]);
    b.ok("person", &["disconnect"]);
    b.ok("person", &["connect"]);
    raw(&b, &["--agent", &format!("ann:{key_now}"), "tab-list"], &[])
        .expect(7, "no agent holds the name ann now");
}

fn ann_tabs_by_key(b: &Browser, key: &str) -> Vec<String> {
    let run = raw(
        b,
        &["--agent", &format!("ann:{key}"), "tab-list", "--json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

/// A call with no name whose ancestry ends at pid 1 — an orphan (`setsid
/// -f`), a sandbox with its own PID namespace — is asked for a name (exit
/// 2) and runs nothing; with a name it works.
#[test]
fn a_call_whose_ancestry_ends_at_pid_1_is_asked_for_a_name() {
    let b = browser();
    let key = ann_registered(&b);
    let out = b.sandbox().home.path().join("orphan");
    std::fs::create_dir(&out).unwrap();
    // An orphan: `setsid -f` forks, and the fork's parent exits at once,
    // so my-chrome's parent is init.
    let mut orphan = b
        .sandbox()
        .command_through(&["/usr/bin/setsid", "-f"], &["tab-list"]);
    orphan
        .stdout(std::fs::File::create(out.join("stdout")).unwrap())
        .stderr(std::fs::File::create(out.join("stderr")).unwrap());
    assert!(orphan.status().unwrap().success());
    // (A loaded machine once took longer than 30 s to start it: CI.)
    let stderr = common::wait::until(
        "the orphan to finish",
        std::time::Duration::from_secs(90),
        || {
            let text = std::fs::read_to_string(out.join("stderr")).unwrap();
            if text.contains("my-chrome:") {
                Ok(text)
            } else {
                let stdout = std::fs::read_to_string(out.join("stdout")).unwrap();
                Err(format!("stderr: {text}; stdout: {stdout}"))
            }
        },
    );
    assert!(
        stderr.contains("cannot tell which agent runs this command"),
        "{stderr}"
    );
    assert!(stderr.contains("--agent NAME"), "{stderr}");
    assert!(!shows_ann(&stderr, &key));
    let stdout = std::fs::read_to_string(out.join("stdout")).unwrap();
    assert!(!shows_ann(&stdout, &key), "{stdout}");
    // A PID namespace of its own (as an agent host's sandbox may be):
    // refused before any name is looked at, named or not (the agents
    // outside could not see its process: tests/hosts.rs).
    for args in [&["tab-list"][..], &["--agent", "sandboxed", "tab-list"]] {
        let run = Run::from_output(namespaced(&b, args).output().unwrap());
        run.expect(9, "a PID namespace of its own");
        assert!(!shows_ann(&run.stdout, &key) && !shows_ann(&run.stderr, &key));
    }
    assert!(!b.agents().to_string().contains("sandboxed"));
    assert_eq!(ann_tabs(&b).len(), 1);
}

/// my-chrome run by `unshare` in a new PID namespace (with /proc its own):
/// a user namespace too when not root.
fn namespaced(b: &Browser, args: &[&str]) -> Command {
    let mut wrapper = vec!["/usr/bin/unshare"];
    if !nix::unistd::Uid::effective().is_root() {
        wrapper.extend(["--user", "--map-root-user"]);
    }
    wrapper.extend(["--pid", "--fork", "--mount-proc"]);
    b.sandbox().command_through(&wrapper, args)
}

/// A PID namespace of its own whose /proc is still the host's (`unshare
/// --pid` without `--mount-proc`): a pid read there names another process
/// (a kernel thread, or whichever host process a caller made its pid name
/// by `ns_last_pid`). Refused as any PID namespace of its own is, before a
/// name is derived (`identity` would refuse to derive one there too).
#[test]
fn a_namespace_that_reads_the_hosts_process_table_derives_no_name() {
    let b = browser();
    let key = ann_registered(&b);
    let mut wrapper = vec!["/usr/bin/unshare"];
    if !nix::unistd::Uid::effective().is_root() {
        wrapper.extend(["--user", "--map-root-user"]);
    }
    // A process first, so that my-chrome's pid in the namespace is not 1.
    wrapper.extend([
        "--pid",
        "--fork",
        "/bin/bash",
        "-c",
        "/bin/true; \"$@\"",
        "bash",
    ]);
    for args in [
        &["goto", &b.page("bob")][..],
        &["snapshot"],
        &["agents", "--json"],
    ] {
        let run = Run::from_output(
            b.sandbox()
                .command_through(&wrapper, args)
                .output()
                .unwrap(),
        );
        run.expect(9, "a PID namespace of its own");
        assert!(!shows_ann(&run.stdout, &key) && !shows_ann(&run.stderr, &key));
    }
    assert_eq!(ann_tabs(&b).len(), 1);
    let title = b.ok("ann", &["eval", "document.title"]);
    assert!(title.stdout.contains("Agent ann"), "{}", title.stdout);
}

/// An orphan on a desktop is adopted by `systemd --user`, a subreaper, not
/// by pid 1: every orphaned call would derive its name. Here a process
/// that makes itself a subreaper and goes by `systemd` (as the user's
/// manager does) runs a host whose call orphans itself (`setsid -f`); the
/// call is asked for a name.
#[test]
fn an_orphan_adopted_by_the_users_service_manager_derives_no_name() {
    let b = browser();
    let key = ann_registered(&b);
    let dir = b.sandbox().home.path().join("adopted");
    std::fs::create_dir(&dir).unwrap();
    // PR_SET_CHILD_SUBREAPER (36), PR_SET_NAME (15); then the host: it
    // orphans `my-chrome` and lives on, as an agent host would.
    let manager = r#"
import ctypes, subprocess, sys
libc = ctypes.CDLL(None)
assert libc.prctl(36, 1, 0, 0, 0) == 0
assert libc.prctl(15, b"systemd", 0, 0, 0) == 0
out = sys.argv[1]
host = ("setsid -f /bin/bash -c 'sleep 1; cut -d\" \" -f4 /proc/$$/stat > \"$0/ppid\"; "
        "\"$@\" > \"$0/stdout\" 2> \"$0/stderr\"; echo $? > \"$0/code\"' \"$0\" \"$@\"; "
        "sleep 30")
subprocess.Popen(["/bin/bash", "-c", host, out] + sys.argv[2:])
import time
time.sleep(30)
"#;
    let script = dir.join("manager.py");
    std::fs::write(&script, manager).unwrap();
    let mut cmd = b.sandbox().command_through(
        &[
            "/usr/bin/python3",
            script.to_str().unwrap(),
            dir.to_str().unwrap(),
        ],
        &["snapshot"],
    );
    let mut running = {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0).spawn().unwrap()
    };
    let manager_pid = running.id();
    let code = common::wait::until(
        "the adopted call to finish",
        std::time::Duration::from_secs(30),
        || match std::fs::read_to_string(dir.join("code")) {
            Ok(code) if code.ends_with('\n') => Ok(code),
            other => Err(format!("{other:?}")),
        },
    );
    let stderr = std::fs::read_to_string(dir.join("stderr")).unwrap();
    // The manager, its host and what they left.
    let group = nix::unistd::Pid::from_raw(manager_pid as i32);
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    let _ = running.wait();
    // It was the manager's orphan, not init's (its parent now, read from
    // /proc: bash's $PPID is the parent it started with).
    let ppid = std::fs::read_to_string(dir.join("ppid")).unwrap();
    assert_eq!(
        ppid.trim(),
        manager_pid.to_string(),
        "adopted by the manager"
    );
    assert_eq!(code.trim(), "2", "{stderr}");
    assert!(stderr.contains("adopts orphans"), "{stderr}");
    assert!(stderr.contains("--agent NAME"), "{stderr}");
    let stdout = std::fs::read_to_string(dir.join("stdout")).unwrap_or_default();
    assert!(
        !shows_ann(&stdout, &key) && !shows_ann(&stderr, &key),
        "{stdout}"
    );
}
