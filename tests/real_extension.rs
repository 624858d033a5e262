//! my-chrome against the real Playwright Extension (built from
//! `../shared/real-extension/`) in a real, headed Chromium under Xvfb, with
//! the real pinned CLI and a real keyring: every released version, the same
//! scenario. Where the stand-in and the real extension disagree, these tests
//! are the reference.

mod common;

use std::fs;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::real_extension::{self, Answer, Quit, RealWorld};
use common::sampler::sampler;
use common::site::{HOME_TEXT, SECOND_TEXT, Site, agent_text};
use common::{Run, assert_nowhere_but, fresh_token, read_snapshot, reference};

const EXTENSION_PAGES: &str = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/";
const CONNECT_PAGE: &str = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html";

#[test]
fn the_released_extension_0_2_1() {
    scenario("0.2.1");
}

#[test]
fn the_released_extension_0_3_0() {
    scenario("0.3.0");
}

#[test]
fn the_extension_at_main_2026_08_21() {
    scenario("main-2026-08-21");
}

/// A my-chrome run that must succeed.
fn ok(real: &RealWorld, runs: &mut Vec<Run>, args: &[&str]) -> String {
    let run = real.sandbox().run(args);
    // A step that asked the person: they close its page before anything
    // else happens.
    real.person.wait_done();
    assert_eq!(
        run.code, 0,
        "my-chrome {args:?}\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let out = run.stdout.clone();
    runs.push(run);
    out
}

fn scenario(version: &str) {
    let Some(source) = real_extension::source() else {
        return;
    };
    let extension = real_extension::build(&source, version);
    let mut real = RealWorld::start(Some(extension));
    let token = real.world.token.clone();
    let chrome_pid = real.chrome.pid().unwrap();
    let mut runs = Vec::new();

    // Connect, while every process's argv and environ are read over and over.
    let (stop, sampling) = sampler(token.clone());
    let started = Instant::now();
    let connected = real.sandbox().run(&["connect"]);
    let took = started.elapsed();
    stop.store(true, Ordering::SeqCst);
    let (rounds, seen) = sampling.join().unwrap();
    eprintln!(
        "real extension {version}: connect took {} ms; /proc sampled {rounds} times",
        took.as_millis()
    );
    connected.expect(0, "");
    assert!(
        connected
            .stdout
            .contains(&format!("connected to Chromium (pid {chrome_pid})")),
        "{}",
        connected.stdout
    );
    // Only after the person confirmed it, in Chromium itself.
    assert!(
        connected.stderr.contains("asked the user in Chromium"),
        "{}",
        connected.stderr
    );
    assert_eq!(
        real.person.answered(),
        1,
        "the person confirmed the connect"
    );
    assert!(rounds > 0);
    assert!(seen.is_empty(), "the token was visible in: {seen:?}");
    runs.push(connected);
    ok(&real, &mut runs, &["ensure"]);

    no_other_process_can_attach(&real, &mut runs);
    no_page_carries_the_token(&real, &token, &mut runs);
    a_browser_task(&real, &mut runs);
    a_page_command_runs_on_no_other_tab(&real, &mut runs);
    a_command_past_its_bound_keeps_out_only_its_agent(&real, &mut runs);
    agents_side_by_side(&real, version, &mut runs);
    a_click_keeps_its_tab_in_front(&real, &mut runs);
    a_misled_agent_reaches_nothing_of_another(&real, &mut runs);
    no_agent_harms_another(&real, &mut runs);
    what_a_page_asks_for_is_refused(&real, &mut runs);
    the_consent_page_is_the_users_alone(&real, &mut runs);

    // Disconnect leaves Chrome running; connecting again does not pile up
    // connect tabs in the session.
    let gone = ok(&real, &mut runs, &["disconnect"]);
    assert!(
        gone.contains(&format!("Chromium is still running (pid {chrome_pid})")),
        "{gone}"
    );
    let table = my_chrome::procs::ProcessTable::read().unwrap();
    assert_eq!(
        my_chrome::chrome::normal_chrome_pids(&table, real.chrome.exe()),
        vec![chrome_pid],
        "disconnect leaves the user's Chromium running"
    );
    for round in 1..=3 {
        let started = Instant::now();
        ok(&real, &mut runs, &["connect"]);
        eprintln!(
            "real extension {version}: connect after disconnect ({round}) took {} ms",
            started.elapsed().as_millis()
        );
        told_its_tabs_went(&real, &mut runs);
        let tabs = every_tab(&real, &mut runs);
        assert!(!tabs.contains(EXTENSION_PAGES), "{tabs}");
        ok(&real, &mut runs, &["disconnect"]);
    }

    a_daemon_that_hangs_is_named_and_stopped(&real, &mut runs);
    connect_on_an_ipv6_first_host(&real, &mut runs);
    a_wrong_token_is_named_as_the_likely_cause(&mut real, &mut runs);
    an_idle_session_ends_by_itself(&real, chrome_pid, &mut runs);

    // Chromium quits between connect and a command: the session is gone.
    // Chrome writes tab changes to its session file on a timer (2.5 s);
    // a quit within it restored the connect tab in place of connect's new
    // tab (CI, 0.2.1: 18 tabs either way). Waiting past it makes the
    // restored tabs say what connect closed, not what Chrome last saved.
    ok(&real, &mut runs, &["connect"]);
    std::thread::sleep(Duration::from_secs(4));
    let quit = real.chrome.quit();
    eprintln!("real extension {version}: Chromium's quit right after connect: {quit:?}");
    // Only a browser that saved its session on the way out says what the
    // user finds in it afterwards.
    assert!(matches!(quit, Quit::ByItself(_)), "{quit:?}");
    let after_quit = real.sandbox().run(&["tab-list"]);
    after_quit.expect(4, "my-chrome connect");
    runs.push(after_quit);

    // What the user finds in Chrome afterwards: no connect tab with the
    // stored token among six connects, only the wrong token's own tab.
    let restored = real.chrome.restored_tabs();
    let connect_tabs: Vec<&String> = restored
        .iter()
        .filter(|url| url.starts_with(CONNECT_PAGE))
        .collect();
    let with_token = connect_tabs.iter().filter(|u| u.contains(&token)).count();
    eprintln!(
        "real extension {version}: Chrome restores {} tabs, {} of them connect tabs",
        restored.len(),
        connect_tabs.len()
    );
    assert_eq!(with_token, 0, "a connect tab with the token stayed open");
    assert_eq!(connect_tabs.len(), 1, "only the wrong token's tab stays");

    let all: Vec<&Run> = runs.iter().collect();
    let home = real.sandbox().home.path().to_path_buf();
    let profile = real.chrome.user_data();
    assert_nowhere_but(&token, &home, &all, &[&profile]);
    let reversed: String = token.chars().rev().collect();
    assert_nowhere_but(&reversed, &home, &all, &[&profile]);
}

/// At the user's idle limit, with no command run, the session's watcher
/// detaches it as `disconnect` does: the extension lets go (a new connect
/// is served at once), the browser keeps running, and the next command
/// says why, exit 4.
fn an_idle_session_ends_by_itself(real: &RealWorld, chrome_pid: u32, runs: &mut Vec<Run>) {
    let sandbox = real.sandbox();
    ok(real, runs, &["setup", "--idle-limit", "10s"]);
    ok(real, runs, &["connect"]);
    told_its_tabs_went(real, runs);
    let status = || {
        sandbox.doctor()["session"]["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while status() == "ready" {
        assert!(Instant::now() < deadline, "the idle session did not end");
        std::thread::sleep(Duration::from_millis(500));
    }
    let after = sandbox.run(&["tab-list"]);
    after.expect(4, "without a browser command (the idle limit)");
    runs.push(after);
    let table = my_chrome::procs::ProcessTable::read().unwrap();
    assert_eq!(
        my_chrome::chrome::normal_chrome_pids(&table, real.chrome.exe()),
        vec![chrome_pid],
        "the end leaves the user's Chromium running"
    );
    assert_eq!(status(), "missing");
    // The extension let the ended session go: a new one is served.
    ok(real, runs, &["setup", "--idle-limit", "30m"]);
    ok(real, runs, &["connect"]);
    let tabs = every_tab(real, runs);
    assert!(!tabs.contains(EXTENSION_PAGES), "{tabs}");
    ok(real, runs, &["disconnect"]);
}

/// No page reachable through the session carries the token: not in a tab's
/// address or title, not one step back, and the ways to the extension's own
/// pages are refused.
/// The browser the daemon bound (invariant 13) was shut by connect: its
/// folder exists, empty; the pinned CLI run from outside my-chrome cannot
/// attach to `mychrome`; the session still works.
fn no_other_process_can_attach(real: &RealWorld, runs: &mut Vec<Run>) {
    let sandbox = real.sandbox();
    assert!(
        !sandbox.bound_socket_dirs().is_empty(),
        "the daemon bound no browser"
    );
    let bound = sandbox.bound_leftovers();
    assert!(bound.is_empty(), "a bound browser stayed: {bound:?}");
    assert_eq!(real.sandbox().doctor()["bound_browser"]["status"], "shut");
    let outsider = common::pwcli::PwCli::new(real.sandbox(), None, real.chrome.exe());
    let attempt = outsider
        .run_within(
            &["attach", "mychrome", "--session=outsider"],
            std::time::Duration::from_secs(60),
        )
        .expect("it finishes");
    assert_ne!(attempt.code, 0, "{}\n{}", attempt.stdout, attempt.stderr);
    assert!(attempt.stderr.contains("ENOENT"), "{}", attempt.stderr);
    runs.push(attempt);
    ok(real, runs, &["tab-list"]);
}

/// After a reconnect, the agent that had tabs in the earlier session is
/// told once that they went with it, and nothing runs.
fn told_its_tabs_went(real: &RealWorld, runs: &mut Vec<Run>) {
    let told = real.sandbox().run(&["tab-list"]);
    told.expect(8, "went with it");
    assert!(told.stderr.contains("nothing was run"), "{}", told.stderr);
    runs.push(told);
}

/// Every tab of the session, taken by this test's agent (the user gives it
/// the user's; it claims the blank one `connect` left): its list.
fn every_tab(real: &RealWorld, runs: &mut Vec<Run>) -> String {
    let agents = real.sandbox().run(&["agents", "--json"]).json();
    let me = agents["you"].as_str().unwrap();
    for tab in agents["user_tabs"].as_array().unwrap() {
        ok(real, runs, &["tab-give", tab["id"].as_str().unwrap(), me]);
    }
    for id in agents["spare_tabs"].as_array().unwrap() {
        ok(real, runs, &["tab-claim", id.as_str().unwrap()]);
    }
    ok(real, runs, &["tab-list"])
}

fn no_page_carries_the_token(real: &RealWorld, token: &str, runs: &mut Vec<Run>) {
    let tabs = every_tab(real, runs);
    assert!(!tabs.contains(EXTENSION_PAGES), "{tabs}");
    let count = tabs.lines().filter(|l| l.starts_with("- ")).count();
    assert!(count >= 1, "{tabs}");
    let look = "() => location.href + ' ' + document.title";
    for index in 0..count {
        ok(real, runs, &["tab-select", &index.to_string()]);
        let here = ok(real, runs, &["eval", look]);
        // A tab with no history answers with an error text and exit 0.
        runs.push(real.sandbox().run(&["go-back"]));
        let back = ok(real, runs, &["eval", look]);
        for seen in [&here, &back] {
            assert!(!seen.contains(EXTENSION_PAGES), "{seen}");
            assert!(!seen.contains(token));
        }
    }
    let reversed = "async page => (await Promise.all(page.context().pages().map(async p => \
                    p.url() + ' ' + await p.title()))).join(' ').split('').reverse().join('')";
    let read_back = real.sandbox().run(&["--raw", "run-code", reversed]);
    read_back.expect(2, "`run-code` is refused");
    runs.push(read_back);
    let state = real.sandbox().home.path().join("state.json");
    let origins = format!(
        r#"{{"cookies":[],"origins":[{{"origin":"{EXTENSION_PAGES}","localStorage":[]}}]}}"#
    );
    fs::write(&state, origins).unwrap();
    let loaded = real
        .sandbox()
        .run(&["state-load", &state.display().to_string()]);
    loaded.expect(2, "`state-load` is refused");
    runs.push(loaded);
    let status = format!("{EXTENSION_PAGES}status.html");
    for command in ["goto", "tab-new"] {
        let refused = real.sandbox().run(&[command, &status]);
        refused.expect(2, "web pages only");
        runs.push(refused);
    }
}

fn a_browser_task(real: &RealWorld, runs: &mut Vec<Run>) {
    let site = Site::start();
    ok(real, runs, &["tab-new"]);
    ok(real, runs, &["goto", &site.url("/")]);
    let home = read_snapshot(real.sandbox(), &ok(real, runs, &["snapshot"]));
    assert!(home.contains(HOME_TEXT), "{home}");
    ok(
        real,
        runs,
        &["fill", &reference(&home, "Name"), "typed by the test"],
    );
    let typed = ok(
        real,
        runs,
        &["eval", "() => document.querySelector('#name').value"],
    );
    assert!(typed.contains("typed by the test"), "{typed}");
    ok(
        real,
        runs,
        &["click", &reference(&home, "Go to the second page")],
    );
    let second = read_snapshot(real.sandbox(), &ok(real, runs, &["snapshot"]));
    assert!(second.contains(SECOND_TEXT), "{second}");
}

/// `my-chrome --agent NAME args…`, which must succeed.
fn ok_as(real: &RealWorld, agent: &str, args: &[&str]) -> Run {
    let mut full = vec!["--agent", agent];
    full.extend_from_slice(args);
    let run = real.sandbox().run(&full);
    if run.code != 0 {
        // What the book holds then, to tell a product fault from a page's,
        // and the command's own words last: CI shows a failure's tail.
        let book = real.sandbox().run(&["agents", "--json"]);
        let log = fs::read_to_string(real.sandbox().runtime.join("lease.log")).unwrap_or_default();
        let turns: Vec<&str> = log.lines().rev().take(12).collect();
        panic!(
            "agents --json then: {}{}\nthe last turns, newest first:\n{}\n{agent} {args:?} exited {}:\n{}{}",
            book.stdout,
            book.stderr,
            turns.join("\n"),
            run.code,
            run.stdout,
            run.stderr
        );
    }
    run
}

/// The agent's tab ids, from its own list.
fn tab_ids(real: &RealWorld, agent: &str) -> Vec<String> {
    let listed = ok_as(real, agent, &["tab-list", "--json"]).json();
    listed["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

/// my-chrome's consent page opens in the user's Chromium, and is no tab of
/// the session: while it waits, the daemon's own list of every tab does
/// not have it. Nothing changes until the person's keys confirm it; their
/// refusal changes nothing.
fn the_consent_page_is_the_users_alone(real: &RealWorld, runs: &mut Vec<Run>) {
    let lifetime = || real.sandbox().doctor()["settings"].to_string();
    let before = lifetime();
    real.person.will(Answer::Away);
    let asking = common::Running::start(real.sandbox().command(&[
        "--agent",
        "bob",
        "setup",
        "--lifetime-limit",
        "2d",
    ]));
    real_extension::eventually("the consent page never showed in Chromium", || real.asks());
    let every = real.sandbox().daemon_says(&["tab-list"]);
    assert!(!every.contains("my-chrome asks you"), "{every}");
    let agents = real.sandbox().run(&["agents", "--json"]);
    assert!(
        !agents.stdout.contains("127.0.0.1") && !agents.stdout.contains("asks you"),
        "{}",
        agents.stdout
    );
    assert_eq!(lifetime(), before, "nothing changed while asked");
    real.person.will(Answer::Confirm);
    let confirmed = asking.wait();
    confirmed.expect(0, "");
    assert!(confirmed.stdout.contains("2days"), "{}", confirmed.stdout);
    assert!(
        !confirmed.stderr.contains("http://"),
        "{}",
        confirmed.stderr
    );
    real.person.will(Answer::Refuse);
    let refused = real
        .sandbox()
        .run(&["--agent", "bob", "setup", "--lifetime-limit", "3d"]);
    refused.expect(7, "the user refused in the browser");
    let now = lifetime();
    assert!(now.contains("172800"), "{now}");
    real.person.will(Answer::Confirm);
    // Tightening asks nobody.
    ok(real, runs, &["setup", "--lifetime-limit", "8h"]);
    runs.extend([confirmed, refused, agents]);
}

/// Three agents at once, each in its own tabs: every read, fill and click
/// is on the agent's own page; another's tab is out of reach by id, index
/// or `--tab`; a popup that any of their pages could have opened is the
/// user's until the user gives it; a tab that closes by itself, or
/// that the user closes at the keyboard, is news to its owner alone.
fn agents_side_by_side(real: &RealWorld, version: &str, runs: &mut Vec<Run>) {
    let site = Site::start();
    let names = ["ann", "bob", "cid"];
    let page = |name: &str| site.url(&format!("/agent/{name}"));
    let started = Instant::now();
    std::thread::scope(|scope| {
        for name in names {
            let page = page(name);
            scope.spawn(move || {
                ok_as(real, name, &["goto", &page]);
                for round in 0..4 {
                    let snapshot = ok_as(real, name, &["snapshot"]);
                    let yaml = read_snapshot(real.sandbox(), &snapshot.stdout);
                    let title = ok_as(real, name, &["eval", "document.title"]);
                    // What it types and presses lands on its own page.
                    let note = format!("{name} wrote {round}");
                    let filled = ok_as(real, name, &["fill", "#note", &note]);
                    let typed = ok_as(
                        real,
                        name,
                        &["eval", "document.querySelector('#note').value"],
                    );
                    assert!(typed.stdout.contains(&note), "{name}: {}", typed.stdout);
                    let clicked = ok_as(real, name, &["click", "#press"]);
                    let pressed = ok_as(
                        real,
                        name,
                        &["eval", "document.querySelector('#press').textContent"],
                    );
                    assert!(
                        pressed.stdout.contains(&format!("pressed on {name}")),
                        "{name}: {}",
                        pressed.stdout
                    );
                    let seen = format!(
                        "{}{yaml}{}{}{}{}{}",
                        snapshot.stdout,
                        title.stdout,
                        filled.stdout,
                        typed.stdout,
                        clicked.stdout,
                        pressed.stdout
                    );
                    assert!(yaml.contains(&agent_text(name)), "{name}: {yaml}");
                    for other in names.iter().filter(|o| **o != name) {
                        assert!(
                            !seen.contains(&format!("/agent/{other}"))
                                && !seen.contains(&agent_text(other)),
                            "{name} saw {other}'s page:\n{seen}"
                        );
                    }
                }
            });
        }
    });
    eprintln!(
        "real extension {version}: three agents, 75 commands side by side in {} ms",
        started.elapsed().as_millis()
    );
    let bob = tab_ids(real, "bob");
    assert_eq!(bob.len(), 1, "{bob:?}");
    let cid = tab_ids(real, "cid");
    // Every index but its own is no tab of ann's, whatever the daemon's
    // list holds there.
    for index in ["1", "2", "3"] {
        for args in [
            vec!["tab-select", index],
            vec!["tab-close", index],
            vec!["snapshot", "--tab", index],
        ] {
            let mut full = vec!["--agent", "ann"];
            full.extend_from_slice(&args);
            let refused = real.sandbox().run(&full);
            refused.expect(2, &format!("no tab of agent ann has index {index}"));
            runs.push(refused);
        }
    }
    for args in [
        vec!["tab-select", &bob[0]],
        vec!["snapshot", "--tab", &bob[0]],
        vec!["tab-close", &bob[0]],
    ] {
        let mut full = vec!["--agent", "ann"];
        full.extend_from_slice(&args);
        let refused = real.sandbox().run(&full);
        refused.expect(7, &format!("tab {} is agent bob's", bob[0]));
        runs.push(refused);
    }
    let cookies = real.sandbox().run(&["--agent", "cid", "cookie-list"]);
    cookies.expect(7, "have tabs open");
    runs.push(cookies);
    // The others' tabs stayed, and stayed theirs.
    assert_eq!(tab_ids(real, "bob"), bob);
    assert_eq!(tab_ids(real, "cid"), cid);
    for name in ["bob", "cid"] {
        let title = ok_as(real, name, &["eval", "document.title"]);
        assert!(
            title.stdout.contains(&format!("Agent {name}")),
            "{}",
            title.stdout
        );
    }
    // ann's click opens a popup while bob's and cid's pages are open: any
    // of them could have opened it, so it is the user's until the user
    // gives it (to ann). It closes itself five seconds after her next
    // click, once that click has ended (a second was within it on a loaded
    // machine, in a CI pre-check): her next command says so; bob's is
    // untouched.
    ok_as(real, "ann", &["goto", &site.url("/")]);
    let home = read_snapshot(real.sandbox(), &ok_as(real, "ann", &["snapshot"]).stdout);
    ok_as(real, "ann", &["click", &reference(&home, "Open popup")]);
    let mut waiting = None;
    real_extension::eventually("the popup never reached the session", || {
        ok_as(real, "bob", &["tab-list"]);
        let agents = real.sandbox().run(&["agents", "--json"]).json();
        waiting = agents["user_tabs"][0]["id"].as_str().map(String::from);
        waiting.is_some()
    });
    assert_eq!(tab_ids(real, "ann").len(), 1, "not ann's by itself");
    ok(real, runs, &["tab-give", &waiting.unwrap(), "ann"]);
    eventually_ids(real, "ann", 2);
    let ann = tab_ids(real, "ann");
    assert_eq!(tab_ids(real, "bob"), bob);
    // A popup is attached while it already runs: Playwright can miss its
    // main-world context, and then every action waits for the bound (its
    // settling runs a timer there). A navigation mends it (DESIGN.md).
    ok_as(
        real,
        "ann",
        &["goto", &site.url("/popup"), "--tab", &ann[1]],
    );
    let popup = read_snapshot(
        real.sandbox(),
        &ok_as(real, "ann", &["snapshot", "--tab", &ann[1]]).stdout,
    );
    ok_as(
        real,
        "ann",
        &[
            "click",
            &reference(&popup, "Close me later"),
            "--tab",
            &ann[1],
        ],
    );
    // Waited for through bob's list, so that ann's next command is the
    // first she runs after it.
    real_extension::eventually("ann's popup never closed itself", || {
        real.sandbox().run(&["--agent", "bob", "tab-list"]).code == 0
            && real.sandbox().run(&["agents", "--json"]).json()["agents"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["name"] == "ann" && a["tabs"].as_array().unwrap().len() == 1)
    });
    let told = real.sandbox().run(&["--agent", "ann", "snapshot"]);
    told.expect(8, &format!("tab {} was closed", ann[1]));
    runs.push(told);
    let title = ok_as(real, "bob", &["eval", "document.title"]);
    assert!(title.stdout.contains("Agent bob"), "{}", title.stdout);
    // The user closes ann's tab at the keyboard (Ctrl+W on the front tab,
    // which ann's `tab-select` just brought there): ann's next command
    // says so and runs nothing; bob and cid are untouched.
    let ann = tab_ids(real, "ann");
    assert_eq!(ann.len(), 1, "{ann:?}");
    ok_as(real, "ann", &["tab-select", &ann[0]]);
    real.user_presses("ctrl+w");
    real_extension::eventually("the user's Ctrl+W never closed ann's tab", || {
        real.sandbox().run(&["--agent", "bob", "tab-list"]).code == 0
            && real.sandbox().run(&["agents", "--json"]).json()["agents"]
                .as_array()
                .unwrap()
                .iter()
                .all(|a| a["name"] != "ann" || a["tabs"].as_array().unwrap().is_empty())
    });
    let told = real.sandbox().run(&["--agent", "ann", "snapshot"]);
    told.expect(8, &format!("tab {} was closed", ann[0]));
    runs.push(told);
    assert_eq!(tab_ids(real, "bob"), bob);
    assert_eq!(tab_ids(real, "cid"), cid);
    for name in ["bob", "cid"] {
        let title = ok_as(real, name, &["eval", "document.title"]);
        assert!(
            title.stdout.contains(&format!("Agent {name}")),
            "{}",
            title.stdout
        );
    }
    let released = ok_as(real, "ann", &["release"]);
    assert!(
        released.stdout.contains("has no tab"),
        "{}",
        released.stdout
    );
    for name in ["bob", "cid"] {
        let released = ok_as(real, name, &["release"]);
        assert!(released.stdout.contains("gave back"), "{}", released.stdout);
    }
}

/// What a misled agent tries (tests/isolation.rs has all of it on the
/// stand-in), on the real extension: every spelling of the reply's mode
/// prints nothing of another agent's page; a popup that ann's page opens
/// on a timer during bob's command goes to neither (the user's); ann's page
/// that leaves for another site is held for her, out of bob's reach; a
/// hostile title comes out redacted and escaped, and `--json` parses.
fn a_misled_agent_reaches_nothing_of_another(real: &RealWorld, runs: &mut Vec<Run>) {
    let site = Site::start();
    let shows_ann = |text: &str| text.contains("/agent/ann") || text.contains("Agent ann");
    ok_as(real, "ann", &["goto", &site.url("/agent/ann")]);
    ok_as(real, "bob", &["goto", &site.url("/agent/bob")]);
    for line in [
        &["snapshot", "--json", "false"][..],
        &["--raw", "true", "snapshot"],
        &["tab-list", "--json", "false"],
    ] {
        let run = ok_as(real, "bob", line);
        assert!(!shows_ann(&run.stdout), "{line:?}: {}", run.stdout);
        runs.push(run);
    }
    // ann's page opens a popup 1.5 s after her click, while bob's command
    // runs: neither agent's.
    ok_as(real, "ann", &["goto", &site.url("/popup-after?1500")]);
    let page = read_snapshot(real.sandbox(), &ok_as(real, "ann", &["snapshot"]).stdout);
    ok_as(real, "ann", &["click", &reference(&page, "Open after")]);
    let long = ok_as(
        real,
        "bob",
        &[
            "eval",
            "() => new Promise(done => setTimeout(() => done('waited'), 4000))",
        ],
    );
    runs.push(long);
    let mut waiting = Vec::new();
    real_extension::eventually("ann's popup never reached the session", || {
        ok_as(real, "bob", &["tab-list"]);
        let agents = real.sandbox().run(&["agents", "--json"]).json();
        waiting = agents["user_tabs"].as_array().unwrap().clone();
        !waiting.is_empty()
    });
    assert_eq!(tab_ids(real, "bob").len(), 1, "not bob's");
    assert_eq!(tab_ids(real, "ann").len(), 1, "not ann's by itself");
    let popup = waiting[0]["id"].as_str().unwrap().to_string();
    let taken = real.sandbox().run(&["--agent", "bob", "tab-claim", &popup]);
    taken.expect(7, "only the user can give it");
    runs.push(taken);
    // ann's page leaves for another site between commands: it may as well
    // be a new tab in the place of hers, so it is the user's.
    let users = |real: &RealWorld| -> Vec<String> {
        let agents = real.sandbox().run(&["agents", "--json"]).json();
        agents["user_tabs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_string())
            .collect()
    };
    let before = users(real);
    ok_as(real, "ann", &["tab-new", &site.url("/mover")]);
    std::thread::sleep(std::time::Duration::from_millis(2500));
    ok_as(real, "bob", &["tab-list"]);
    let moved: Vec<String> = users(real)
        .into_iter()
        .filter(|t| !before.contains(t))
        .collect();
    assert_eq!(moved.len(), 1, "{moved:?}");
    let agents = real.sandbox().run(&["agents", "--json"]).json();
    common::browser::nothing_held_for(&agents, "ann");
    let taken = real
        .sandbox()
        .run(&["--agent", "bob", "tab-claim", &moved[0]]);
    taken.expect(7, "only the user can give it");
    runs.push(taken);
    // A hostile title.
    let other = fresh_token();
    common::site::say(&format!("token={other} \u{9b}31m \u{1b}[31m"));
    ok_as(real, "bob", &["tab-new", &site.url("/said")]);
    let listed = ok_as(real, "bob", &["tab-list", "--json"]);
    let parsed: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    let titles = parsed["tabs"].to_string();
    assert!(titles.contains("token=<redacted>"), "{titles}");
    assert!(!listed.stdout.contains(&other) && !listed.stdout.contains('\u{9b}'));
    runs.push(listed);
    for name in ["ann", "bob"] {
        ok_as(real, name, &["release"]);
    }
}

/// What one agent could do to another without reading anything of it
/// (tests/harm.rs has it all on the stand-in), on the real extension: a
/// page whose title changes every millisecond fails no command beside it
/// or on it; a close reaches only the closer's tabs (bob's tab with ann's
/// after it is left open, the user's; his last one closes by its place);
/// bob's routes end with his release, so ann's commands run again.
fn no_agent_harms_another(real: &RealWorld, runs: &mut Vec<Run>) {
    let site = Site::start();
    common::site::put_page(
        "ticker",
        r#"<!doctype html><html><head><title>Tick</title></head><body><h1>Ticker</h1>
<script>let n = 0; const t = setInterval(() => { document.title = 'Tick ' + (++n); }, 1);
setTimeout(() => clearInterval(t), 30000);</script>
</body></html>"#,
    );
    // (It stops after 30 s: it stays open, the user's, for the rest.)
    ok_as(real, "bob", &["tab-new", &site.url("/put/ticker")]);
    ok_as(real, "ann", &["tab-new", &site.url("/agent/ann")]);
    ok_as(real, "bob", &["tab-new", &site.url("/agent/bob")]);
    let bob = tab_ids(real, "bob");
    assert_eq!(bob.len(), 2, "{bob:?}");
    for _ in 0..4 {
        let anns = ok_as(real, "ann", &["eval", "document.title"]);
        assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
        let ticks = ok_as(real, "bob", &["eval", "document.title", "--tab", &bob[0]]);
        assert!(ticks.stdout.contains("Tick"), "{}", ticks.stdout);
        runs.push(anns);
        runs.push(ticks);
    }
    let left = real
        .sandbox()
        .run(&["--agent", "bob", "tab-close", &bob[0]]);
    left.expect(7, "was not closed");
    runs.push(left);
    ok_as(real, "bob", &["tab-close", &bob[1]]);
    let anns = ok_as(real, "ann", &["eval", "document.title"]);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    let agents = real.sandbox().run(&["agents", "--json"]).json();
    let user = agents["user_tabs"].as_array().unwrap();
    assert!(user.iter().any(|t| t["id"] == bob[0].as_str()), "{agents}");
    // bob alone with a tab: his routes keep ann out until he releases.
    ok_as(real, "ann", &["release"]);
    ok(real, runs, &["release"]);
    ok_as(real, "bob", &["goto", &site.url("/agent/bob")]);
    ok_as(real, "bob", &["route", "**/never-requested"]);
    let kept_out = real
        .sandbox()
        .run(&["--agent", "ann", "goto", &site.url("/agent/ann")]);
    kept_out.expect(7, "agent bob has routes set");
    runs.push(kept_out);
    ok_as(real, "bob", &["release"]);
    let agents = real.sandbox().run(&["agents", "--json"]).json();
    assert_eq!(agents["holds"], serde_json::json!([]), "{agents}");
    let back = ok_as(real, "ann", &["goto", &site.url("/agent/ann")]);
    assert!(back.stdout.contains("Agent ann"), "{}", back.stdout);
    runs.push(back);
    ok_as(real, "ann", &["release"]);
}

/// bob's own page closes itself the moment bob's `eval` selects it, while
/// his my-chrome is stopped between the selection and the command; ann's
/// tab comes right after his. The daemon keeps the closed tab current
/// (src/tabs/stay.rs), so the `eval` runs on no tab; before, it ran in
/// ann's page. bob's own command arms the page (no clock to race on a
/// loaded machine), and the step runs before any step whose pages close
/// themselves. tests/harm.rs has more timings.
fn a_page_command_runs_on_no_other_tab(real: &RealWorld, runs: &mut Vec<Run>) {
    let site = Site::start();
    common::site::put_page("closer", common::site::CLOSER);
    // A page may close only a tab a script opened: the closer is a popup
    // of bob's page, given to him by the user if it went to the user.
    ok_as(real, "bob", &["tab-new", &site.url("/agent/bob")]);
    let bobs_and_users = || -> Vec<String> {
        let agents = real.sandbox().run(&["agents", "--json"]).json();
        let users = agents["user_tabs"].as_array().unwrap().iter();
        users
            .map(|t| t["id"].as_str().unwrap().to_string())
            .chain(tab_ids(real, "bob"))
            .collect()
    };
    let before = bobs_and_users();
    let closer = site.url("/put/closer?600,stay,flag");
    ok_as(
        real,
        "bob",
        &["eval", &format!("window.open('{closer}'), document.title")],
    );
    let mut popup = None;
    real_extension::eventually("bob's popup never reached the session", || {
        popup = bobs_and_users().into_iter().find(|t| !before.contains(t));
        popup.is_some()
    });
    let popup = popup.unwrap();
    if !tab_ids(real, "bob").contains(&popup) {
        ok(real, runs, &["tab-give", &popup, "bob"]);
    }
    // A popup is attached while it already runs: Playwright can miss its
    // main-world context, and then an `eval` there waits for the bound
    // (DESIGN.md, the facts about the real extension). A navigation mends
    // it, and a window a script opened may still close itself after one.
    // Without it, bob's arming `eval` below waited 60 s on loaded machines
    // (CI with main-2026-08-21 and 0.3.0, a CI pre-check with main), even
    // once the popup showed its title.
    ok_as(real, "bob", &["goto", &closer, "--tab", &popup]);
    ok_as(real, "ann", &["tab-new", &site.url("/agent/ann")]);
    // Armed by bob's own command there: its next selection closes it.
    ok_as(
        real,
        "bob",
        &["eval", "window.armed = true", "--tab", &popup],
    );
    ok_as(real, "ann", &["snapshot"]);
    let beacon = "navigator.sendBeacon('/ran-on-' + document.title.replace(/\\W/g, ''))";
    let evaluating = common::Running::start(
        real.sandbox()
            .command(&["--agent", "bob", "eval", beacon, "--tab", &popup]),
    );
    real_extension::eventually("bob's page was never selected", || {
        site.was_requested("/probed-stay")
    });
    let pid = nix::unistd::Pid::from_raw(evaluating.child.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP);
    std::thread::sleep(Duration::from_millis(1500));
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT);
    let evaluated = evaluating.wait();
    eprintln!(
        "bob's eval on a page that closed under it: exit {}",
        evaluated.code
    );
    // Its page closed after the selection was answered (exit 8: it ran on
    // no other tab), or, on a loaded machine, before (exit 1: the tabs
    // moved under the selection, nothing ran).
    assert!([1, 8].contains(&evaluated.code), "{evaluated:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !site.was_requested("/ran-on-Agentann"),
        "bob's eval ran in ann's page"
    );
    runs.push(evaluated);
    let anns = ok_as(real, "ann", &["eval", "document.title"]);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    for name in ["ann", "bob"] {
        ok_as(real, name, &["release"]);
    }
}

/// bob's `eval` settles 8 s after it starts, past his bound (shortened to
/// 2 s for himself, as a caller may): ann's commands run meanwhile; bob's
/// next command waits for his own late one, then runs; `agents` listed it
/// while it was late. The waits are printed.
fn a_command_past_its_bound_keeps_out_only_its_agent(real: &RealWorld, runs: &mut Vec<Run>) {
    let site = Site::start();
    ok_as(real, "ann", &["tab-new", &site.url("/agent/ann")]);
    ok_as(real, "bob", &["tab-new", &site.url("/agent/bob")]);
    let started = Instant::now();
    let mut late = real.sandbox().command(&[
        "--agent",
        "bob",
        "eval",
        "new Promise(r => setTimeout(() => { window.settled = 'yes'; r(1); }, 8000))",
    ]);
    late.env("MY_CHROME_COMMAND_TIMEOUT_SECS", "2");
    let late = common::Running::start(late).wait();
    late.expect(124, "did not finish within 2 s");
    runs.push(late);
    let listed = real.sandbox().run(&["agents", "--json"]).json();
    assert_eq!(listed["late"][0]["agent"], "bob", "{listed}");
    for round in 0..3 {
        let asked = Instant::now();
        let anns = ok_as(real, "ann", &["eval", "document.title"]);
        assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
        eprintln!(
            "ann's eval beside bob's late one ({round}): {} ms",
            asked.elapsed().as_millis()
        );
        runs.push(anns);
    }
    // It ran once his late one had settled, in his own page.
    let bobs = ok_as(
        real,
        "bob",
        &["eval", "document.title + ' ' + window.settled"],
    );
    assert!(bobs.stdout.contains("Agent bob yes"), "{}", bobs.stdout);
    eprintln!(
        "bob's next eval ended {} ms after his late one started (it settles at 8000)",
        started.elapsed().as_millis()
    );
    runs.push(bobs);
    let listed = real.sandbox().run(&["agents", "--json"]).json();
    assert_eq!(listed["late"], serde_json::json!([]), "{listed}");
    // Before its bound: bob's eval, answered after 3 s, steps aside for
    // ann's once the daemon has it; hers runs, then his reply is shown.
    let slow = common::Running::start(real.sandbox().command(&[
        "--agent",
        "bob",
        "eval",
        "new Promise(r => setTimeout(() => r(document.title + ' after ann'), 3000))",
    ]));
    real_extension::eventually("bob's eval never held the turn", || {
        real.sandbox().run(&["agents", "--json"]).json()["running"]["agent"] == "bob"
    });
    let anns = ok_as(real, "ann", &["eval", "document.title"]);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    runs.push(anns);
    let slow = slow.wait();
    assert_eq!(slow.code, 0, "{}{}", slow.stdout, slow.stderr);
    assert!(
        slow.stdout.contains("Agent bob after ann"),
        "{}",
        slow.stdout
    );
    runs.push(slow);
    let log = std::fs::read_to_string(real.sandbox().runtime.join("lease.log")).unwrap();
    let last = |needle: &str| log.rfind(needle);
    let (aside, anns, bobs) = (
        last("ASIDE agent=bob"),
        last("RAN agent=ann command=eval"),
        last("RAN agent=bob command=eval"),
    );
    assert!(aside.is_some() && aside < anns && anns < bobs, "{log}");
    // The last opened first: a close leaves open a tab with another's
    // after it (for the user), which a later step would find.
    for name in ["bob", "ann"] {
        ok_as(real, name, &["release"]);
    }
}

/// bob's `click` waits for its button to hold still (Playwright counts
/// frames), and Chromium draws no frames for a tab behind another. ann's
/// command, in line meanwhile, brings her tab to the front; so bob's click
/// keeps the turn past the daemon's action timeout instead of stepping
/// aside at once, and both succeed. Before, it stepped aside and waited
/// out the daemon's 5 s (CI, 0.3.0).
fn a_click_keeps_its_tab_in_front(real: &RealWorld, runs: &mut Vec<Run>) {
    let site = Site::start();
    common::site::put_page(
        "mover",
        r#"<!doctype html><html><head><title>Mover</title><style>
@keyframes slide { from { margin-left: 0 } to { margin-left: 300px } }
.moving { animation: slide 2s linear; }
</style></head><body><button id="mover" onclick="this.textContent = 'pressed'">press</button>
</body></html>"#,
    );
    ok_as(real, "ann", &["tab-new", &site.url("/agent/ann")]);
    ok_as(real, "bob", &["tab-new", &site.url("/put/mover")]);
    ok_as(
        real,
        "bob",
        &[
            "eval",
            "document.querySelector('#mover').classList.add('moving')",
        ],
    );
    let clicking = common::Running::start(
        real.sandbox()
            .command(&["--agent", "bob", "click", "#mover"]),
    );
    real_extension::eventually("bob's click never held the turn", || {
        real.sandbox().run(&["agents", "--json"]).json()["running"]["agent"] == "bob"
    });
    let anns = ok_as(real, "ann", &["eval", "document.title"]);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    runs.push(anns);
    let clicked = clicking.wait();
    assert_eq!(clicked.code, 0, "{}{}", clicked.stdout, clicked.stderr);
    runs.push(clicked);
    let pressed = ok_as(
        real,
        "bob",
        &["eval", "document.querySelector('#mover').textContent"],
    );
    assert!(pressed.stdout.contains("pressed"), "{}", pressed.stdout);
    runs.push(pressed);
    for name in ["bob", "ann"] {
        ok_as(real, name, &["release"]);
    }
}

/// Waits until `agent` has `n` tabs (a popup reaches the daemon a moment
/// after the click that opened it).
fn eventually_ids(real: &RealWorld, agent: &str, n: usize) {
    real_extension::eventually(&format!("{agent} never had {n} tabs"), || {
        tab_ids(real, agent).len() == n
    });
}

/// An attacker's page asks the agent for files and prints terminal
/// sequences: the profile file that holds the extension's storage never
/// reaches it, an ffmpeg planted in the user's cache never runs (neither
/// through my-chrome, which refuses `video-start`, nor asked of the daemon
/// directly), what it prints comes out escaped, and a file of the agent's
/// own in /tmp still uploads.
fn what_a_page_asks_for_is_refused(real: &RealWorld, runs: &mut Vec<Run>) {
    let site = Site::start();
    ok(real, runs, &["goto", &site.url("/upload")]);
    let page = read_snapshot(real.sandbox(), &ok(real, runs, &["snapshot"]));
    ok(real, runs, &["click", &reference(&page, "Pick a file")]);
    let storage = real
        .chrome
        .user_data()
        .join("Default/Local Storage/leveldb");
    let mut stolen: Vec<String> = fs::read_dir(&storage)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "log"))
        .map(|path| path.display().to_string())
        .collect();
    stolen.push(
        real.chrome
            .user_data()
            .join("Default/Preferences")
            .display()
            .to_string(),
    );
    for path in &stolen {
        let refused = real.sandbox().run(&["upload", path]);
        refused.expect(2, "user data directory");
        runs.push(refused);
    }
    let home = real.sandbox().home.path();
    let mine = real.sandbox().file("mine.txt");
    fs::write(&mine, "the user's own file").unwrap();
    ok(real, runs, &["upload", &mine.display().to_string()]);
    let got = ok(
        real,
        runs,
        &["eval", "() => document.querySelector('#out').textContent"],
    );
    assert!(
        got.contains("Received file: mine.txt the user's own file"),
        "{got}"
    );

    let marker = home.join("planted-ffmpeg-ran");
    common::sandbox::plant_ffmpeg(real.sandbox(), &marker);
    let video = home.join("clip.webm").display().to_string();
    let refused = real.sandbox().run(&["video-start", &video]);
    refused.expect(2, "`video-start` is refused");
    runs.push(refused);
    let said = real.sandbox().daemon_says(&["video-start", &video]);
    real.sandbox().daemon_says(&["video-stop"]);
    assert!(!marker.exists(), "the planted ffmpeg ran: {said}");

    ok(real, runs, &["goto", &site.url("/hostile")]);
    let console = ok(real, runs, &["console"]);
    assert!(
        !console.contains('\u{1b}') && !console.contains('\u{7}'),
        "{console:?}"
    );
    assert!(console.contains("Hostile \\u{1b}]52;c;"), "{console}");
}

/// The session's daemon stops answering (SIGSTOP): `ensure` and a
/// browser command say exactly that within the bound they were given,
/// never a word about the connect tab; `disconnect` stops that daemon and
/// the browser keeps running.
fn a_daemon_that_hangs_is_named_and_stopped(real: &RealWorld, runs: &mut Vec<Run>) {
    ok(real, runs, &["connect"]);
    told_its_tabs_went(real, runs);
    every_tab(real, runs);
    let runtime = fs::canonicalize(&real.sandbox().runtime).unwrap();
    let table = my_chrome::procs::ProcessTable::read().unwrap();
    let daemons = my_chrome::session::daemon_process::ours(&table, &runtime, "mychrome");
    assert_eq!(daemons.len(), 1, "{daemons:?}");
    let hung = nix::unistd::Pid::from_raw(daemons[0] as i32);
    nix::sys::signal::kill(hung, nix::sys::signal::Signal::SIGSTOP).unwrap();
    // (A command's own lists and selections keep their 8 s.)
    for (args, within) in [(&["ensure"][..], 5), (&["snapshot"], 8)] {
        let mut cmd = real.sandbox().command(args);
        cmd.env("MY_CHROME_COMMAND_TIMEOUT_SECS", "5");
        let run = common::Running::start(cmd).wait();
        run.expect(
            124,
            &format!("the session's daemon does not answer (nothing within {within} s)"),
        );
        assert!(!run.stderr.contains("connect tab"), "{}", run.stderr);
        runs.push(run);
    }
    let mut cmd = real.sandbox().command(&["disconnect"]);
    cmd.env("MY_CHROME_COMMAND_TIMEOUT_SECS", "5");
    let gone = common::Running::start(cmd).wait();
    gone.expect(0, "");
    assert!(
        gone.stdout.contains(&format!(
            "(pid {hung}) was stopped: it did not answer within 5 s"
        )),
        "{}",
        gone.stdout
    );
    assert!(
        gone.stdout.contains("Chromium is still running"),
        "{}",
        gone.stdout
    );
    runs.push(gone);
}

/// `connect` in a private mount namespace whose `/etc/hosts` puts `::1`
/// first for `localhost` (Debian's default file, macOS): the relay then
/// listens on `[::1]`, and the connect URL names it.
fn connect_on_an_ipv6_first_host(real: &RealWorld, runs: &mut Vec<Run>) {
    if !nix::unistd::geteuid().is_root() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root and must run this"
        );
        eprintln!("SKIPPED: a private /etc/hosts needs root (unshare -m)");
        return;
    }
    let hosts = real.sandbox().home.path().join("hosts-ipv6-first");
    fs::write(&hosts, "::1 localhost ip6-localhost\n127.0.0.1 localhost\n").unwrap();
    let hosts = hosts.display().to_string();
    let wrapper = [
        "/usr/bin/unshare",
        "-m",
        "/bin/sh",
        "-c",
        "mount --bind \"$0\" /etc/hosts && exec \"$@\"",
        &hosts,
    ];
    let run = common::Running::start(real.sandbox().command_through(&wrapper, &["connect"])).wait();
    run.expect(0, "");
    runs.push(run);
    assert!(
        relay_listens_on_ipv6_loopback(&real.sandbox().runtime),
        "the relay did not listen on [::1]: the test did not test IPv6"
    );
    told_its_tabs_went(real, runs);
    let tabs = every_tab(real, runs);
    assert!(!tabs.contains(EXTENSION_PAGES), "{tabs}");
    ok(real, runs, &["disconnect"]);
}

/// Whether a process of this runtime (the CLI's daemon) listens on `[::1]`.
fn relay_listens_on_ipv6_loopback(runtime: &Path) -> bool {
    let loopback = "00000000000000000000000001000000:";
    let table = fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    let sockets: Vec<String> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.len() > 9 && fields[1].starts_with(loopback) && fields[3] == "0A")
                .then(|| format!("socket:[{}]", fields[9]))
        })
        .collect();
    let runtime = runtime.display().to_string();
    fs::read_dir("/proc").unwrap().flatten().any(|process| {
        let cmdline = fs::read(process.path().join("cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&cmdline).contains(&runtime)
            && fs::read_dir(process.path().join("fd"))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|fd| fs::read_link(fd.path()).ok())
                .any(|link| sockets.contains(&link.display().to_string()))
    })
}

/// A stored token that is not the extension's: the extension never opens
/// the relay's WebSocket, so the bounded wait ends with the likely cause
/// and the step that fixes it, and asks for no rotation.
fn a_wrong_token_is_named_as_the_likely_cause(real: &mut RealWorld, runs: &mut Vec<Run>) {
    let stale = fresh_token();
    store(real, &stale, "10");
    let refused = real.sandbox().run(&["connect"]);
    refused.expect(124, "Invalid token provided.");
    for needle in [
        "Chromium opened the Playwright Extension's connect page",
        "not installed or not enabled in Chromium",
        "stored token is not the extension's current one",
        "my-chrome token store",
    ] {
        assert!(refused.stderr.contains(needle), "{}", refused.stderr);
    }
    assert!(
        !refused.stderr.contains("begin-token-rotation"),
        "{}",
        refused.stderr
    );
    assert!(!refused.stderr.contains(&stale));
    runs.push(refused);
    let token = real.world.token.clone();
    store(real, &token, "30");
    let doctor = real.sandbox().doctor();
    assert_eq!(doctor["session"]["status"], "missing", "{doctor}");
}

/// Stores `token` and sets the attach bound for the next connects.
fn store(real: &mut RealWorld, token: &str, attach_secs: &str) {
    let stored = real
        .sandbox()
        .run_input(&["token", "store", "--stdin"], token);
    assert_eq!(stored.code, 0, "{}", stored.stderr);
    real.world
        .sandbox
        .set("MY_CHROME_ATTACH_TIMEOUT_SECS", attach_secs);
}

/// A Chromium without the extension: the connect page cannot load, so the
/// bounded wait ends naming a missing extension among the likely causes.
#[test]
fn without_the_extension_connect_ends_within_its_bound() {
    if real_extension::source().is_none() {
        return;
    }
    let mut real = RealWorld::start(None);
    real.world.sandbox.set("MY_CHROME_ATTACH_TIMEOUT_SECS", "8");
    let started = Instant::now();
    let refused = real.sandbox().run(&["connect"]);
    eprintln!(
        "without the extension, connect ended after {} ms",
        started.elapsed().as_millis()
    );
    refused.expect(124, "not installed or not enabled");
    assert!(
        !refused.stderr.contains("begin-token-rotation"),
        "{}",
        refused.stderr
    );
    let token = real.world.token.clone();
    real.chrome.quit();
    let home = real.sandbox().home.path().to_path_buf();
    assert_nowhere_but(&token, &home, &[&refused], &[&real.chrome.user_data()]);
}

/// The browser is the one chosen, and only it counts: a browser named but
/// not installed, or a profile that is not the chosen browser's, is refused
/// before the keyring is read; a named browser running beside the chosen
/// one (Debian's Chromium beside the stand-in, given by path) is ignored,
/// and said so.
#[test]
fn only_the_chosen_browser_counts() {
    if real_extension::source().is_none() {
        return;
    }
    let mut real = RealWorld::start(None);
    let chromium = real.chrome.pid().unwrap();
    let token = real.world.token.clone();
    let fingerprint = real.sandbox().runtime.join("token-fingerprint.txt");
    let mut runs = Vec::new();

    let mut edge = real.sandbox().command(&["connect"]);
    edge.env("MY_CHROME_BROWSER", "edge");
    let edge = common::Running::start(edge).wait();
    edge.expect(
        5,
        "Microsoft Edge (named by MY_CHROME_BROWSER) is not installed",
    );
    assert!(
        edge.stderr.contains("/opt/microsoft/msedge/msedge"),
        "{}",
        edge.stderr
    );
    runs.push(edge);

    let standin = common::standin::Standin::start(
        real.sandbox().home.path(),
        common::standin::Options {
            token: Some(&token),
            ..Default::default()
        },
    );
    let sandbox = &mut real.world.sandbox;
    sandbox.browser_at(standin.exe());
    // The stand-in's executable with Chromium's profile: not a pair.
    let profile = sandbox.home.path().join(".config/chromium");
    sandbox.set("MY_CHROME_USER_DATA_DIR", &profile);
    let wrong = sandbox.run(&["connect"]);
    wrong.expect(
        5,
        &format!("{} is not where {}", profile.display(), common::UNNAMED),
    );
    for needle in [
        format!("lock names pid {chromium}"),
        "Nothing was read from the keyring".into(),
        "MY_CHROME_USER_DATA_DIR must name".into(),
    ] {
        assert!(wrong.stderr.contains(&needle), "{needle}: {}", wrong.stderr);
    }
    assert!(!fingerprint.exists(), "the token was read");
    runs.push(wrong);

    // The right pair: Chromium runs too, and is ignored.
    sandbox.browser_at(standin.exe());
    let connected = sandbox.run(&["connect"]);
    connected.expect(0, "");
    assert!(
        connected.stderr.contains(&format!(
            "Chromium is running too (pids [{chromium}]) and was ignored: the session uses {}\n",
            common::UNNAMED
        )),
        "{}",
        connected.stderr
    );
    assert!(
        connected.stdout.contains(&format!(
            "connected to {} (pid {})",
            common::UNNAMED,
            standin.pid
        )),
        "{}",
        connected.stdout
    );
    runs.push(connected);
    // Attached to the stand-in: no other browser takes its place quietly,
    // and no choice is recorded under it.
    let mut named = sandbox.command(&["connect"]);
    named
        .env_remove("MY_CHROME_CHROME")
        .env_remove("MY_CHROME_USER_DATA_DIR");
    let named = common::Running::start(named).wait();
    named.expect(5, "the session is attached to the browser at");
    runs.push(named);
    let chosen = sandbox.run(&["setup", "--browser", "chromium"]);
    chosen.expect(1, "is open; setup was not started");
    runs.push(chosen);
    let gone = sandbox.run(&["disconnect"]);
    gone.expect(0, "");
    runs.push(gone);
    drop(standin);
    real.chrome.quit();
    let home = real.sandbox().home.path().to_path_buf();
    let all: Vec<&Run> = runs.iter().collect();
    assert_nowhere_but(&token, &home, &all, &[&real.chrome.user_data()]);
}
