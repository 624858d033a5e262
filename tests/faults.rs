//! Faults as a user's machine produces them, on the stand-in: a daemon that
//! hangs (SIGSTOP), a browser that dies under a command, a command that
//! fails at once while another agent's runs, and what daemons leave in the
//! runtime over connects, kills and disconnects. Each is named truly,
//! within its bound, and costs nothing it need not.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

use common::site::Site;
use common::{Run, Running, Sandbox, assert_nowhere, world};
use my_chrome::procs::ProcessTable;
use my_chrome::session::daemon_process;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The session's daemon: the one process of ours that is it.
fn daemon(sandbox: &Sandbox) -> u32 {
    let real = fs::canonicalize(&sandbox.runtime).unwrap();
    let pids = daemon_process::ours(&ProcessTable::read().unwrap(), &real, "mychrome");
    assert_eq!(pids.len(), 1, "one daemon: {pids:?}");
    pids[0]
}

fn signal(pid: u32, signal: Signal) {
    kill(Pid::from_raw(pid as i32), signal).unwrap();
}

/// The artifacts folders in the runtime's TMPDIR.
fn artifacts(sandbox: &Sandbox) -> Vec<PathBuf> {
    common::sandbox::entries(&sandbox.runtime.join("tmp"))
        .into_iter()
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("playwright-artifacts-")
        })
        .collect()
}

#[test]
fn a_daemon_that_hangs_is_named_within_its_bound_and_disconnect_stops_it() {
    let mut w = world();
    let _chrome = w.chrome();
    let mut runs: Vec<Run> = Vec::new();
    let connected = w.sandbox.run(&["connect"]);
    connected.expect(0, "");
    runs.push(connected);
    let hung = daemon(&w.sandbox);
    signal(hung, Signal::SIGSTOP);
    w.sandbox.set("MY_CHROME_COMMAND_TIMEOUT_SECS", "5");
    // A connect finding the session "ready" does not reuse it either. A
    // command's own lists and selections keep their 8 s whatever the
    // caller asks (a page may hold a selection 5 s: docs/DESIGN.md,
    // invariant 10).
    for (args, within) in [
        (&["ensure"][..], 5),
        (&["tab-list"], 8),
        (&["snapshot"], 8),
        (&["connect"], 5),
    ] {
        let run = w.sandbox.run(args);
        run.expect(
            124,
            &format!("the session's daemon does not answer (nothing within {within} s)"),
        );
        assert!(
            run.stderr.contains("`my-chrome disconnect` stops it"),
            "{}",
            run.stderr
        );
        // Nothing was seen of its tabs: no word about the connect tab.
        for never in ["connect tab", "token", "MY_CHROME_COMMAND_TIMEOUT_SECS"] {
            assert!(
                !run.stderr.contains(never),
                "{args:?} said {never:?}: {}",
                run.stderr
            );
        }
        runs.push(run);
    }
    let gone = w.sandbox.run(&["disconnect"]);
    gone.expect(0, "");
    assert!(
        gone.stdout.contains(&format!(
            "session mychrome's daemon (pid {hung}) was stopped: it did not answer within 5 s"
        )),
        "{}",
        gone.stdout
    );
    assert!(common::process_gone(&hung.to_string()));
    assert!(
        artifacts(&w.sandbox).is_empty(),
        "{:?}",
        artifacts(&w.sandbox)
    );
    runs.push(gone);
    // The way back: connect, and the session works.
    let again = w.sandbox.run(&["connect"]);
    again.expect(0, "");
    runs.push(again);
    let listed = w.sandbox.run(&["tab-list"]);
    listed.expect(0, "");
    runs.push(listed);
    let all: Vec<&Run> = runs.iter().collect();
    assert_nowhere(&w.token, w.sandbox.home.path(), &all);
}

#[test]
fn a_command_whose_browser_died_under_it_does_not_exit_0() {
    let mut w = world();
    let mut chrome = w.chrome();
    let site = Site::start();
    w.sandbox.run(&["connect"]).expect(0, "");
    w.sandbox.run(&["goto", &site.url("/")]).expect(0, "");
    let slow = Running::start(w.sandbox.command(&["goto", &site.url("/slow")]));
    for _ in 0..100 {
        if site.was_requested("/slow") {
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    assert!(site.was_requested("/slow"));
    // The whole browser goes: its real Chromium, then its main process.
    let _ = killpg(Pid::from_raw(chrome.chromium_pid as i32), Signal::SIGKILL);
    signal(chrome.pid, Signal::SIGKILL);
    assert!(chrome.wait_gone());
    let died = slow.wait();
    assert_eq!(died.code, 4, "{}{}", died.stdout, died.stderr);
    assert!(
        died.stderr.contains("the session ended during the command"),
        "{}",
        died.stderr
    );
    // What the daemon answered stays as it came (the pinned client prints
    // it too, and exits 1): the browser closed, or (when its Chromium went
    // first) the stand-in's relay saying Chromium no longer answers.
    assert!(
        died.stdout.starts_with("### Error\nError: "),
        "{}",
        died.stdout
    );
    assert!(
        died.stdout
            .contains("Target page, context or browser has been closed")
            || died.stdout.contains("no answer from Chromium"),
        "{}",
        died.stdout
    );
    // Only that: no list after it says whose page the rest would be.
    assert_eq!(died.stdout.matches("### ").count(), 1, "{}", died.stdout);
    assert_nowhere(&w.token, w.sandbox.home.path(), &[&died]);
}

#[test]
fn a_command_that_runs_nothing_costs_the_agents_waiting_nothing() {
    let mut w = world();
    let _chrome = w.chrome();
    let site = Site::start();
    w.sandbox.run(&["connect"]).expect(0, "");
    w.sandbox.set("MY_CHROME_LEASE_WAIT_SECS", "60");
    let mut ann = w
        .sandbox
        .command(&["--agent", "ann", "goto", &site.url("/slow")]);
    ann.env("MY_CHROME_COMMAND_TIMEOUT_SECS", "60");
    let ann = Running::start(ann);
    let running = || w.sandbox.run(&["agents", "--json"]).json()["running"].clone();
    for _ in 0..100 {
        if running()["agent"] == "ann" && site.was_requested("/slow") {
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(running()["agent"], "ann");
    // Stopped (as an agent may stop its own process) while it holds the
    // turn: it cannot step aside for cid's command (docs/DESIGN.md, "A
    // command steps aside"), so cid waits behind it.
    let ann_pid = Pid::from_raw(ann.child.id() as i32);
    kill(ann_pid, Signal::SIGSTOP).unwrap();
    // cid waits for the turn behind ann's command.
    let cid = Running::start(w.sandbox.command(&["--agent", "cid", "tab-list"]));
    cid.wait_for_stderr("is running on the browser; waiting up to 60 s as agent cid");
    // bob's commands that run nothing in the browser, refused from their
    // line or by the client's own rules: answered at once, with no turn
    // waited for or taken, while ann's runs and cid waits.
    for (args, code, says) in [
        (&["goto", "file:///etc/passwd"][..], 2, "address is refused"),
        (&["run-code", "1"], 2, "`run-code` is refused"),
        (&["upload", "relative.txt"], 2, "give an absolute path"),
        (&["snapshot", "--tab", "not a tab"], 2, "names no tab"),
        (&["snapshot", "--bogus"], 1, "Unknown option: --bogus"),
        (&["snapshot", "--toString", "x"], 2, "no command has it"),
    ] {
        let mut line = vec!["--agent", "bob"];
        line.extend_from_slice(args);
        let refused = w.sandbox.run(&line);
        assert_eq!(refused.code, code, "{args:?}: {}", refused.stderr);
        assert!(
            refused.stderr.contains(says),
            "{args:?}: {}",
            refused.stderr
        );
        assert!(!refused.stderr.contains("waiting"), "{}", refused.stderr);
        // ann's command is still the one in flight: bob took no turn.
        assert_eq!(running()["agent"], "ann", "{args:?}");
    }
    // Going on, ann's command steps aside for cid's, then shows its reply.
    kill(ann_pid, Signal::SIGCONT).unwrap();
    let cid = cid.wait();
    assert_eq!(cid.code, 0, "{}", cid.stderr);
    let ann = ann.wait();
    assert_eq!(ann.code, 0, "{}", ann.stderr);
    let log = fs::read_to_string(w.sandbox.runtime.join("lease.log")).unwrap();
    assert!(!log.contains("agent=bob"), "{log}");
    let order: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("agent=ann") || l.contains("agent=cid"))
        .collect();
    assert_eq!(order.len(), 3, "{log}");
    assert!(order[0].contains("ASIDE agent=ann command=goto"), "{log}");
    assert!(order[1].contains("RAN agent=cid command=tab-list"), "{log}");
    assert!(order[1].contains(" waited="), "{log}");
    assert!(order[2].contains("RAN agent=ann command=goto"), "{log}");
}

#[test]
fn five_connects_killed_and_disconnected_leave_what_one_leaves() {
    let mut w = world();
    let _chrome = w.chrome();
    let tmp = w.sandbox.runtime.join("tmp");
    let mut after_first: Option<Vec<PathBuf>> = None;
    for round in 0..5 {
        w.sandbox.run(&["connect"]).expect(0, "");
        assert_eq!(
            artifacts(&w.sandbox).len(),
            1,
            "round {round}: one daemon's folder"
        );
        match round % 3 {
            // Killed: the next connect finds what it left.
            0 => signal(daemon(&w.sandbox), Signal::SIGKILL),
            // Killed, then disconnect.
            1 => {
                signal(daemon(&w.sandbox), Signal::SIGKILL);
                w.sandbox.run(&["disconnect"]).expect(0, "");
            }
            // Disconnected.
            _ => {
                w.sandbox.run(&["disconnect"]).expect(0, "");
            }
        }
        thread::sleep(Duration::from_millis(300));
        let seen = tree(&tmp);
        match &after_first {
            None => after_first = Some(seen.clone()),
            Some(first) => {
                // Nothing piles up: what stays is what the first round left
                // (the socket folders a daemon reuses), and after a
                // disconnect no daemon's folder at all.
                for path in &seen {
                    let is_artifacts = path.to_string_lossy().contains("playwright-artifacts-");
                    assert!(
                        is_artifacts || first.contains(path),
                        "round {round}: {path:?} is new"
                    );
                }
            }
        }
        if round % 3 != 0 {
            // After a disconnect, no daemon's folder and no socket at all
            // (a killed daemon's stays only until the next connect or
            // disconnect).
            assert!(artifacts(&w.sandbox).is_empty(), "round {round}");
            let sockets: Vec<&PathBuf> = seen
                .iter()
                .filter(|p| {
                    fs::symlink_metadata(tmp.join(p))
                        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()))
                })
                .collect();
            assert!(sockets.is_empty(), "round {round}: {sockets:?}");
        }
        assert!(artifacts(&w.sandbox).len() <= 1, "round {round}");
    }
}

/// Every path under `dir`, relative to it (sockets and folders alike).
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path.clone());
            }
            out.push(path.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    out.sort();
    out
}
