//! Harm without reading (docs/DESIGN.md, "Who closes a tab"): agent bob,
//! with ordinary `my-chrome` commands and pages he controls, tries to
//! close ann's tab. Every attempt ends with ann's tab open, hers, and her
//! commands run. The real binary, the real pinned CLI, a session of
//! `my-chrome connect` to the Chrome stand-in (a real Chromium).

mod common;

use std::thread;
use std::time::Duration;

use common::browser::{Browser, as_agent, browser, run_as};
use common::run::Running;
use common::site::{CLOSER, LATE_SELECT, agent_text, put_page};
use common::{read_snapshot, reference};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// A closer in a popup of bob's page (a page may close only a window a
/// script opened), given to bob by the user and armed by his `eval`; then
/// ann's command makes her tab the daemon's current one, so that bob's
/// next command on the popup selects it again.
fn bob_opens_a_closer(b: &Browser, how: &str) -> String {
    let popup = bob_opens_a_popup(b);
    let closer = b.site.url(&format!("/put/closer?{how},flag"));
    b.ok("bob", &["goto", &closer, "--tab", &popup]);
    // Armed by bob's own command (not by the page's age: under load, the
    // goto's reply, which asks the page for its tools, came later than
    // that age and the page closed under the goto).
    b.ok("bob", &["eval", "window.armed = true", "--tab", &popup]);
    b.ok("ann", &["snapshot"]);
    popup
}

/// A popup of bob's page (a page may close only a window a script
/// opened), given to bob by the user.
fn bob_opens_a_popup(b: &Browser) -> String {
    bob_opens_a_popup_with(b, "Open popup")
}

/// The popup bob's home page opens with `button`, given to bob by the user.
fn bob_opens_a_popup_with(b: &Browser, button: &str) -> String {
    let yaml = read_snapshot(
        b.sandbox(),
        &b.ok("bob", &["snapshot", "--tab", "home"]).stdout,
    );
    let before = b.user_tabs();
    b.ok(
        "bob",
        &["click", &reference(&yaml, button), "--tab", "home"],
    );
    let popup = common::wait::until("the popup", Duration::from_secs(20), || {
        b.ok("bob", &["tab-list"]);
        let new = b.user_tabs_since(&before);
        match new.as_slice() {
            [one] => Ok(one.clone()),
            _ => Err(format!("{new:?}")),
        }
    });
    b.ok("person", &["tab-give", &popup, "bob"]);
    popup
}

/// `agent`'s `eval` that answers `result` after `ms`, once it holds the
/// session's turn.
fn holding_the_turn(b: &Browser, agent: &str, ms: u64, result: &str) -> Running {
    let eval = format!("new Promise(r => setTimeout(() => r({result}), {ms}))");
    let long = Running::start(as_agent(b.sandbox(), agent, &["eval", &eval]));
    until_running(b, agent);
    long
}

/// Waits until a command of `agent`'s holds the session's turn.
fn until_running(b: &Browser, agent: &str) {
    common::wait::until("the command to run", Duration::from_secs(20), || {
        match b.agents()["running"]["agent"].as_str() {
            Some(running) if running == agent => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
}

/// `agent`'s `eval` that runs `secs` seconds, its my-chrome stopped
/// (SIGSTOP) once the daemon has started it (its page asked the site for
/// `/started-<agent>`): a stopped process never steps aside, so the others
/// wait in line for it until it goes on ([`going_on`]). (A tab command
/// kept the turn before `tab-new`'s load of its page stepped aside.)
fn holding_the_turn_stopped(b: &Browser, agent: &str, secs: u64) -> Running {
    let started = format!("/started-{agent}");
    let script = format!(
        "fetch('{started}'), new Promise(done => setTimeout(() => done(1), {}))",
        secs * 1000
    );
    let long = Running::start(as_agent(b.sandbox(), agent, &["eval", &script]));
    requested(b, &started);
    kill(Pid::from_raw(long.child.id() as i32), Signal::SIGSTOP).unwrap();
    until_running(b, agent);
    long
}

/// Lets a process [`holding_the_turn_stopped`] go on.
fn going_on(run: &Running) {
    kill(Pid::from_raw(run.child.id() as i32), Signal::SIGCONT).unwrap();
}

/// Waits until the site saw `path` requested.
fn requested(b: &Browser, path: &str) {
    common::wait::until(path, Duration::from_secs(20), || {
        if b.site.was_requested(path) {
            Ok(())
        } else {
            Err(String::new())
        }
    });
}

/// ann's tabs, by id, and that each still answers her.
fn anns_tabs_answer(b: &Browser, tabs: &[String]) {
    let listed: Vec<String> = b.tabs("ann").into_iter().map(|t| t.0).collect();
    assert_eq!(listed, tabs, "ann's tabs");
    for tab in tabs {
        // Another tab whose address changes while hers is selected (a
        // popup of bob's still loading) refuses her command, "run it
        // again", and nothing runs: she runs it again.
        let run = common::wait::until("ann's snapshot", Duration::from_secs(20), || {
            let run = run_as(b.sandbox(), "ann", &["snapshot", "--tab", tab]);
            match run.code {
                0 => Ok(run),
                1 if run.stderr.contains("nothing was run. Run it again") => Err(run.stderr),
                _ => panic!("{run:?}"),
            }
        });
        assert!(run.stdout.contains(&agent_text("ann")), "{}", run.stdout);
    }
}

/// bob's tab before ann's: closing it is not done (a page closing itself
/// at that moment would move ann's tab into its place); it is left open,
/// the user's, and no request reaches the browser for it.
#[test]
fn a_tab_with_anothers_tab_after_it_is_left_open_for_the_user() {
    let b = browser();
    put_page("closer", CLOSER);
    b.ok("bob", &["tab-new", &b.site.url("/put/closer?0")]);
    b.ok("bob", &["tab-new", &b.site.url("/put/closer?0")]);
    let bobs: Vec<String> = b.tabs("bob").into_iter().map(|t| t.0).collect();
    b.ok("ann", &["tab-new", &b.page("ann")]);
    let anns: Vec<String> = b.tabs("ann").into_iter().map(|t| t.0).collect();
    thread::sleep(Duration::from_millis(1100));
    let closing = run_as(b.sandbox(), "bob", &["tab-close", &bobs[0]]);
    closing.expect(7, "was not closed");
    assert!(
        closing.stderr.contains("the user's now"),
        "{}",
        closing.stderr
    );
    anns_tabs_answer(&b, &anns);
    assert!(b.tabs("bob").iter().all(|t| t.0 != bobs[0]), "still bob's");
    let agents = b.agents();
    let user = agents["user_tabs"].as_array().unwrap();
    assert!(
        user.iter().any(
            |t| t["id"] == bobs[0].as_str() && t["why"].as_str().unwrap().contains("left open")
        ),
        "{agents}"
    );
    // release, the same: bob's other tab before ann's stays open, the
    // user's.
    let released = b.ok("bob", &["release"]);
    assert!(released.stdout.contains("0 closed"), "{}", released.stdout);
    anns_tabs_answer(&b, &anns);
    assert!(user_tab(&b, &bobs[1]));
    // Never selected by my-chrome: neither page closed itself.
    let closers = b
        .chrome
        .pages()
        .iter()
        .filter(|(url, _)| url.contains("/put/closer"))
        .count();
    assert_eq!(closers, 2, "{:?}", b.chrome.pages());
}

/// Whether `id` is one of the user's tabs.
fn user_tab(b: &Browser, id: &str) -> bool {
    b.user_tabs().iter().any(|t| t == id)
}

/// bob's tab last: closed by its place, which a page closing itself can
/// only make fail. At every moment after its selection, with a popup of
/// its own appended as it goes, and with bob's my-chrome stopped midway:
/// ann's tab stays open and hers.
#[test]
fn a_page_that_closes_itself_when_selected_closes_no_other_agents_tab() {
    let b = browser();
    put_page("closer", CLOSER);
    b.ok("bob", &["tab-new", "--label", "home", &b.site.url("/")]);
    b.ok("ann", &["tab-new", &b.page("ann")]);
    let anns: Vec<String> = b.tabs("ann").into_iter().map(|t| t.0).collect();
    // The popup last: it may come after the next tab (then that tab is
    // left open, as one with another's after it).
    for (n, (how, stop)) in [
        ("0", false),
        ("80", false),
        ("600", false),
        ("0", true),
        ("50", true),
        ("150", true),
        ("popup", false),
    ]
    .into_iter()
    .enumerate()
    {
        let bobs = bob_opens_a_closer(&b, &format!("{how},{n}"));
        let closing = Running::start(as_agent(b.sandbox(), "bob", &["tab-close", &bobs]));
        if stop {
            // Stopped the moment its page learns it is selected, for
            // longer than the page waits: the page closes while bob's
            // my-chrome is between the selection and the close.
            let probed = format!("/probed-{n}");
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            while !b.site.was_requested(&probed) {
                if std::time::Instant::now() > deadline {
                    let run = closing.wait();
                    panic!("never selected: {run:?} {}", b.agents());
                }
                thread::sleep(Duration::from_millis(1));
            }
            let pid = Pid::from_raw(closing.child.id() as i32);
            let _ = kill(pid, Signal::SIGSTOP);
            thread::sleep(Duration::from_millis(600));
            let _ = kill(pid, Signal::SIGCONT);
        }
        let closing = closing.wait();
        // Closed (by bob or its page), or the tabs moved under the check
        // (its page went first): either way, nothing of ann's.
        assert!(
            [0, 1].contains(&closing.code),
            "{how}: {}{}{}",
            closing.stdout,
            closing.stderr,
            b.agents()
        );
        eprintln!("closer?{how} (stopped: {stop}): exit {}", closing.code);
        anns_tabs_answer(&b, &anns);
        // bob hears once that its page closed his tab, if it did.
        let told = run_as(b.sandbox(), "bob", &["tab-list"]);
        assert!([0, 8].contains(&told.code), "{}", told.stderr);
        assert!(b.tabs("bob").iter().all(|t| t.0 != bobs), "{how}");
    }
}

/// `disconnect`, a `connect --for` that ends the session sooner and
/// `uninstall`, while ann has a tab: the user's step, asked in the
/// browser. Refused, nothing ends and ann works on; a name claimed without
/// its key is not ann's; confirmed, it ends; an agent alone in the session
/// ends it unasked.
#[test]
fn ending_the_session_under_anothers_work_is_the_users_step() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["goto", &b.page("bob")]);
    let ann_works = || {
        let title = b.ok("ann", &["eval", "document.title"]);
        assert!(title.stdout.contains("Agent ann"), "{}", title.stdout);
    };
    b.chrome.person_will("refuse");
    for line in [
        &["--agent", "bob", "disconnect"][..],
        &["--agent", "bob", "connect", "--for", "1m"],
        &["--agent", "bob", "uninstall"],
        // ann's name, without ann's key: not ann.
        &["--agent", "ann", "disconnect"],
    ] {
        let run = match line[1] {
            "bob" => run_as(b.sandbox(), "bob", &line[2..]),
            _ => b.sandbox().run(line),
        };
        run.expect(7, "the user refused in the browser");
        assert!(run.stderr.contains("asked the user in"), "{}", run.stderr);
        ann_works();
    }
    // Under another session name or HOME, the daemon's registry shows no
    // session, but the runtime (and every agent's records in it) is the
    // same: asked all the same. A connect there is refused outright.
    let elsewhere = tempfile::tempdir().unwrap();
    for (variable, value) in [
        ("MY_CHROME_SESSION", std::ffi::OsStr::new("other")),
        ("HOME", elsewhere.path().as_os_str()),
    ] {
        for line in [&["disconnect"][..], &["uninstall"]] {
            let mut step = as_agent(b.sandbox(), "bob", line);
            step.env(variable, value);
            let run = Running::start(step).wait();
            run.expect(7, "the user refused in the browser");
            ann_works();
        }
        let mut step = as_agent(b.sandbox(), "bob", &["connect"]);
        step.env(variable, value);
        Running::start(step)
            .wait()
            .expect(1, "under another session name or HOME");
        ann_works();
    }
    let dry = run_as(b.sandbox(), "bob", &["uninstall", "--dry-run"]);
    dry.expect(0, "");
    assert!(
        dry.stdout
            .contains("ends other agents' work (Agent ann loses 1 tab"),
        "{}",
        dry.stdout
    );
    b.chrome.person_will("confirm");
    let ended = run_as(b.sandbox(), "bob", &["disconnect"]);
    ended.expect(0, "");
    assert!(
        ended.stderr.contains("asked the user in"),
        "{}",
        ended.stderr
    );
    run_as(b.sandbox(), "ann", &["eval", "document.title"]).expect(4, "my-chrome connect");
    // A new session, ann alone in it: her own disconnect asks nobody.
    b.sandbox()
        .run(&["--agent", "person", "connect"])
        .expect(0, "");
    b.ok("ann", &["goto", &b.page("ann")]);
    b.chrome.person_will("away");
    let alone = run_as(b.sandbox(), "ann", &["disconnect"]);
    alone.expect(0, "");
    assert!(!alone.stderr.contains("asked the user"), "{}", alone.stderr);
}

/// Browser-wide state outlives no agent: bob's offline network and route
/// end in the browser when he releases (ann's page loads again); his
/// tracing, left on when he goes quiet past the gone time, is ended by
/// the next command of another. `agents` shows each hold with its agent meanwhile.
#[test]
fn a_hold_ends_with_its_agent() {
    let b = browser();
    b.ok("person", &["setup", "--agent-gone", "10s"]);
    b.ok("bob", &["goto", &b.page("bob")]);
    b.ok("bob", &["network-state-set", "offline"]);
    b.ok("bob", &["route", "**/never-requested"]);
    run_as(b.sandbox(), "ann", &["goto", &b.page("ann")]).expect(7, "agent bob has");
    let holds = b.agents()["holds"].clone();
    let held: Vec<(&str, &str)> = holds
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["agent"].as_str().unwrap(), h["what"].as_str().unwrap()))
        .collect();
    assert_eq!(held, [("bob", "network"), ("bob", "routes")], "{holds}");
    b.ok("bob", &["release"]);
    assert_eq!(b.agents()["holds"], serde_json::json!([]));
    // Online again: ann's page loads.
    let reloaded = b.ok("ann", &["goto", &b.page("ann")]);
    assert!(reloaded.stdout.contains("Agent ann"), "{}", reloaded.stdout);

    // cid alone in the session starts tracing, then goes quiet.
    b.ok("ann", &["release"]);
    b.ok("cid", &["goto", &b.page("cid")]);
    b.ok("cid", &["tracing-start"]);
    run_as(b.sandbox(), "dan", &["tab-list"]).expect(7, "agent cid has tracing running");
    thread::sleep(Duration::from_secs(11));
    // dan's name ended too (the gone time): a new one runs.
    b.ok("eve", &["tab-list"]);
    assert_eq!(b.agents()["holds"], serde_json::json!([]));
    let log = std::fs::read_to_string(b.sandbox().runtime.join("lease.log")).unwrap();
    assert!(log.contains("HOLD-ENDED agent=cid what=tracing"), "{log}");
    assert!(log.contains("HOLD-ENDED agent=bob what=network"), "{log}");
}

/// An agent is there until its command ends: ann's `eval` outlasts the
/// gone time (10 s); bob asks past that time while it still runs, waits
/// for it, and runs; ann's name, key and tab are still hers after it
/// (before, the gone time counted from her command's start: bob's call
/// ended her name while her command ran).
#[test]
fn a_command_longer_than_the_gone_time_leaves_its_agent_present() {
    let b = browser();
    b.ok("person", &["setup", "--agent-gone", "10s"]);
    b.ok("ann", &["goto", &b.page("ann")]);
    let ann: Vec<String> = b.tabs("ann").into_iter().map(|t| t.0).collect();
    let long = holding_the_turn(&b, "ann", 15000, "'slept'");
    thread::sleep(Duration::from_secs(11));
    // bob asks past the gone time while it runs: his command waits for
    // it, then runs.
    assert_eq!(b.agents()["running"]["agent"], "ann");
    b.ok("bob", &["tab-list"]);
    let slept = long.wait();
    assert_eq!(slept.code, 0, "{slept:?}");
    assert!(slept.stdout.contains("slept"), "{}", slept.stdout);
    let agents = b.agents();
    common::browser::nothing_held_for(&agents, "ann");
    let own: Vec<String> = b.tabs("ann").into_iter().map(|t| t.0).collect();
    assert_eq!(own, ann, "{agents}");
    let title = b.ok("ann", &["eval", "document.title"]);
    assert!(title.stdout.contains("Agent ann"), "{}", title.stdout);
    let log = std::fs::read_to_string(b.sandbox().runtime.join("lease.log")).unwrap();
    assert!(!log.contains(" GONE agent=ann"), "{log}");
}

/// Waiting is no absence: bob's `eval` holds the turn for 15 s, ann's
/// command waits for it, and bob asks again past the gone time (10 s).
/// ann's command runs when its turn comes, and her name and tab are hers.
/// Found by an attack: her waiting command was refused as gone (exit 8),
/// and bob's second call ended her name.
#[test]
fn waiting_for_the_turn_past_the_gone_time_leaves_an_agent_present() {
    let b = browser();
    b.ok("person", &["setup", "--agent-gone", "10s"]);
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    let long = holding_the_turn_stopped(&b, "bob", 15);
    let waiting = Running::start(as_agent(b.sandbox(), "ann", &["eval", "document.title"]));
    thread::sleep(Duration::from_secs(11));
    let again = Running::start(as_agent(b.sandbox(), "bob", &["tab-list"]));
    going_on(&long);
    let anns = waiting.wait();
    assert_eq!(anns.code, 0, "{anns:?}");
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    assert_eq!(long.wait().code, 0);
    assert_eq!(again.wait().code, 0);
    let next = b.ok("ann", &["eval", "document.title"]);
    assert!(next.stdout.contains("Agent ann"), "{}", next.stdout);
    let log = std::fs::read_to_string(b.sandbox().runtime.join("lease.log")).unwrap();
    assert!(!log.contains(" GONE agent=ann"), "{log}");
}

/// Every command of a name counts while it waits: ann's second command
/// gives up (or is killed) while her first still waits behind bob's
/// stopped `eval`, and bob asks again past the gone time. Her first runs, and her
/// name is still hers. Found by an attack: only her latest command's
/// process was recorded, and it had ended.
#[test]
fn a_name_stays_while_any_of_its_commands_waits() {
    let b = browser();
    b.ok("person", &["setup", "--agent-gone", "10s"]);
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    let long = holding_the_turn_stopped(&b, "bob", 15);
    let first = Running::start(as_agent(b.sandbox(), "ann", &["eval", "document.title"]));
    thread::sleep(Duration::from_secs(1));
    let mut second = Running::start(as_agent(b.sandbox(), "ann", &["eval", "1"]));
    thread::sleep(Duration::from_secs(1));
    second.child.kill().unwrap();
    second.wait();
    thread::sleep(Duration::from_secs(11));
    let again = Running::start(as_agent(b.sandbox(), "bob", &["tab-list"]));
    going_on(&long);
    let first = first.wait();
    assert_eq!(first.code, 0, "{first:?}");
    assert!(first.stdout.contains("Agent ann"), "{}", first.stdout);
    assert_eq!(long.wait().code, 0);
    assert_eq!(again.wait().code, 0);
    let next = b.ok("ann", &["eval", "document.title"]);
    assert!(next.stdout.contains("Agent ann"), "{}", next.stdout);
}

/// bob's popup closes itself while ann's page opens a popup of another
/// site, both between commands: the next list shows ann's popup where
/// bob's was, which could be his popup gone to another site. By the
/// daemon's numbers it is a new tab, the user's, and bob hears his popup
/// closed: his `tab-claim` would have taken ann's page. Found by an attack
/// (held for bob, claimed, read).
#[test]
fn a_popup_in_the_place_of_one_that_closed_is_nobodys_to_claim() {
    popup_in_the_place_of_bobs("localhost");
}

/// The same with ann's popup showing exactly what bob's showed (the same
/// page of the same site): read by place and header alone, it was bob's
/// popup, kept, and he read ann's page (SECURITY.md's residual before the
/// daemon numbered its tabs).
#[test]
fn a_new_tab_of_the_same_page_in_the_place_of_one_that_closed_is_the_users() {
    popup_in_the_place_of_bobs("127.0.0.1");
}

/// bob's popup is closed by its opener while ann's page, on `host`, opens
/// `/popup` (what bob's popup showed): bob hears his closed, and the new
/// tab is the user's.
fn popup_in_the_place_of_bobs(host: &str) {
    let b = browser();
    let anns = b.site.url("/popup-after?2500").replace("127.0.0.1", host);
    b.ok("ann", &["goto", &anns]);
    b.ok("bob", &["tab-new", "--label", "home", &b.site.url("/")]);
    let popup = bob_opens_a_popup(&b);
    let before = b.user_tabs();
    // Closed by its opener, bob's home page, 3 s from now.
    b.ok(
        "bob",
        &[
            "eval",
            "setTimeout(() => window.open('', 'popup').close(), 3000), 1",
            "--tab",
            "home",
        ],
    );
    let yaml = read_snapshot(b.sandbox(), &b.ok("ann", &["snapshot"]).stdout);
    b.ok("ann", &["click", &reference(&yaml, "Open after")]);
    // Both happen before the next command lists the tabs.
    thread::sleep(Duration::from_secs(5));
    let told = run_as(b.sandbox(), "bob", &["tab-list"]);
    told.expect(8, &format!("tab {popup} was closed"));
    let agents = b.agents();
    let new = b.user_tabs_since(&before);
    assert_eq!(new.len(), 1, "ann's popup, the user's: {agents}");
    common::browser::nothing_held_for(&agents, "bob");
    let taken = run_as(b.sandbox(), "bob", &["tab-claim", &new[0]]);
    taken.expect(7, "only the user can give it");
    let bobs: Vec<String> = b.tabs("bob").into_iter().map(|t| t.0).collect();
    assert!(
        !bobs.contains(&new[0]) && !bobs.contains(&popup),
        "{bobs:?}"
    );
}

/// bob's home page: two popups of its own, and a button that closes both
/// 2.5 s after its click and opens a third 4.8 s after it, showing exactly
/// what the others showed.
const TWO_AND_ONE: &str = r#"<!doctype html><html><head><title>Bob home</title></head><body>
<h1>Bob home</h1>
<button onclick="window.w2 = window.open('/popup', 'x2', 'width=400,height=300')">Open two</button>
<button onclick="window.w3 = window.open('/popup', 'x3', 'width=400,height=300')">Open three</button>
<button onclick="setTimeout(() => { window.w2.close(); window.w3.close(); }, 2500); setTimeout(() => window.open('/popup', 'q', 'width=400,height=300'), 4800)">Arm</button>
</body></html>"#;

/// Between two commands, bob's two popups close, ann's page opens one of
/// another site, then bob's page opens one showing what his last showed.
/// The list reads "bob's first popup went to ann's site, his second is the
/// new one": a tab after it kept its header, which a new tab can do too.
/// ann's popup is the user's, never held for bob. Found by an attack: it
/// was held for him, and he claimed and read it.
#[test]
fn a_kept_tab_after_it_does_not_make_a_new_tab_an_agents_moved_one() {
    let b = browser();
    put_page("two-and-one", TWO_AND_ONE);
    let other_site = b
        .site
        .url("/popup-after?4500")
        .replace("127.0.0.1", "localhost");
    b.ok("ann", &["goto", &other_site]);
    b.ok(
        "bob",
        &[
            "tab-new",
            "--label",
            "home",
            &b.site.url("/put/two-and-one"),
        ],
    );
    for button in ["Open two", "Open three"] {
        bob_opens_a_popup_with(&b, button);
    }
    let bobs = read_snapshot(
        b.sandbox(),
        &b.ok("bob", &["snapshot", "--tab", "home"]).stdout,
    );
    let anns = read_snapshot(b.sandbox(), &b.ok("ann", &["snapshot"]).stdout);
    b.ok("ann", &["click", &reference(&anns, "Open after")]);
    b.ok("bob", &["click", &reference(&bobs, "Arm"), "--tab", "home"]);
    thread::sleep(Duration::from_secs(8));
    let listed = run_as(b.sandbox(), "bob", &["tab-list"]);
    assert!([0, 8].contains(&listed.code), "{listed:?}");
    let agents = b.agents();
    common::browser::nothing_held_for(&agents, "bob");
    let theirs: Vec<String> = b.tabs("bob").into_iter().map(|t| t.3).collect();
    assert!(
        !theirs.iter().any(|url| url.contains("localhost")),
        "{theirs:?}"
    );
    for tab in b.user_tabs() {
        run_as(b.sandbox(), "bob", &["tab-claim", &tab]).expect(7, "only the user can give it");
    }
}

/// A waiter stopped in line keeps nobody out: bob's second command waits
/// behind his first, and he stops it (SIGSTOP); once his first ends, ann's
/// command runs, past the stopped one. Found by an attack: every later
/// command of every agent waited its whole wait and was refused, for as
/// long as bob kept it stopped.
#[test]
fn a_waiter_stopped_in_line_keeps_nobody_out() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    let long = holding_the_turn(&b, "bob", 4000, "1");
    let waiter = Running::start(as_agent(b.sandbox(), "bob", &["eval", "1"]));
    thread::sleep(Duration::from_millis(1000));
    let pid = Pid::from_raw(waiter.child.id() as i32);
    kill(pid, Signal::SIGSTOP).unwrap();
    assert_eq!(long.wait().code, 0);
    let mut anns = as_agent(b.sandbox(), "ann", &["eval", "document.title"]);
    anns.env("MY_CHROME_LEASE_WAIT_SECS", "20");
    let anns = Running::start(anns).wait();
    let _ = kill(pid, Signal::SIGCONT);
    let resumed = waiter.wait();
    assert_eq!(anns.code, 0, "{anns:?}");
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    // Continued, bob's command runs after all, in his own tab.
    assert_eq!(resumed.code, 0, "{resumed:?}");
}

/// A page whose title changes every millisecond (a counter, as an unread
/// count or a clock does more slowly) fails no command: not another
/// agent's beside it, not its own agent's on it. How long each took is
/// printed.
#[test]
fn a_title_that_never_holds_still_starves_nobody() {
    let b = browser();
    put_page(
        "ticker",
        r#"<!doctype html><html><head><title>Tick</title></head><body><h1>Ticker</h1>
<script>let n = 0; setInterval(() => { document.title = 'Tick ' + (++n); }, 1);</script>
</body></html>"#,
    );
    b.ok("bob", &["tab-new", &b.site.url("/put/ticker")]);
    b.ok("ann", &["tab-new", &b.page("ann")]);
    let bobs = b.tabs("bob")[0].0.clone();
    for round in 0..8 {
        // Each names the other's tab in turn: every command selects.
        let started = std::time::Instant::now();
        let anns = b.ok("ann", &["eval", "document.title"]);
        assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
        let took = started.elapsed();
        let bob_ran = b.ok("bob", &["eval", "document.title", "--tab", &bobs]);
        assert!(bob_ran.stdout.contains("Tick"), "{}", bob_ran.stdout);
        eprintln!(
            "round {round}: ann's eval {} ms, bob's {} ms",
            took.as_millis(),
            started.elapsed().as_millis() - took.as_millis()
        );
    }
    let snapshot = b.ok("ann", &["snapshot"]);
    assert!(
        snapshot.stdout.contains(&agent_text("ann")),
        "{}",
        snapshot.stdout
    );
}

/// The user's caps on tabs: an agent at its cap, or the session at its
/// cap, opens no tab (exit 2, saying which cap and what to do); nothing of
/// anyone's is closed to make room. A release closes what it can, last
/// first.
#[test]
fn tabs_stop_at_the_users_caps() {
    let b = browser();
    b.ok(
        "person",
        &["setup", "--agent-tabs", "3", "--session-tabs", "5"],
    );
    b.ok("bob", &["goto", &b.page("bob")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    let refused = run_as(b.sandbox(), "bob", &["tab-new", &b.page("bob")]);
    refused.expect(2, "the most the user allows one agent (3)");
    assert!(
        refused.stderr.contains("nothing was opened"),
        "{}",
        refused.stderr
    );
    b.ok("ann", &["tab-new", &b.page("ann")]);
    b.ok("ann", &["tab-new", &b.page("ann")]);
    let full = run_as(b.sandbox(), "ann", &["tab-new", &b.page("ann")]);
    full.expect(2, "the session holds 5 tabs, the most the user allows (5)");
    assert_eq!(b.tabs("bob").len(), 3);
    assert_eq!(b.tabs("ann").len(), 2);
    let agents_pages = |b: &Browser| {
        let pages = b.chrome.pages();
        pages
            .iter()
            .filter(|(url, _)| url.contains("/agent/"))
            .count()
    };
    assert_eq!(agents_pages(&b), 5, "{:?}", b.chrome.pages());
    // ann's tabs are the last two: both close, the last first.
    let released = b.ok("ann", &["release"]);
    assert!(released.stdout.contains("(2 closed"), "{}", released.stdout);
    assert_eq!(agents_pages(&b), 3, "{:?}", b.chrome.pages());
    b.ok("ann", &["tab-new", &b.page("ann")]);
}

/// A page that closes itself after its tab is selected for a command,
/// before the command reaches it (at once, a few milliseconds later, or
/// while bob's my-chrome is stopped): the daemon then has no tab of bob's
/// to run it on, and bob's command runs on none. Before, the daemon made
/// the next tab current, ann's, and bob's `eval` ran in her page. Each
/// ends with ann's page never having run it and her tabs answering her.
#[test]
fn a_page_command_never_runs_on_the_tab_after_its_own() {
    let b = browser();
    put_page("closer", CLOSER);
    b.ok("bob", &["tab-new", "--label", "home", &b.site.url("/")]);
    b.ok("ann", &["tab-new", &b.page("ann")]);
    let anns: Vec<String> = b.tabs("ann").into_iter().map(|t| t.0).collect();
    // What bob's command does wherever it runs: tells the site the title
    // of the page it ran in.
    let beacon = "navigator.sendBeacon('/ran-on-' + document.title.replace(/\\W/g, ''))";
    for (n, (how, stop)) in [
        ("150", true),
        ("5", false),
        ("12", false),
        ("25", false),
        ("40", false),
        ("0", false),
    ]
    .into_iter()
    .enumerate()
    {
        let popup = bob_opens_a_closer(&b, &format!("{how},{}", 20 + n));
        let evaluating = Running::start(as_agent(
            b.sandbox(),
            "bob",
            &["eval", beacon, "--tab", &popup],
        ));
        if stop {
            let probed = format!("/probed-{}", 20 + n);
            requested(&b, &probed);
            let pid = Pid::from_raw(evaluating.child.id() as i32);
            let _ = kill(pid, Signal::SIGSTOP);
            thread::sleep(Duration::from_millis(600));
            let _ = kill(pid, Signal::SIGCONT);
        }
        let evaluated = evaluating.wait();
        eprintln!(
            "closer?{how} (stopped: {stop}): exit {}: {}",
            evaluated.code, evaluated.stderr
        );
        // Its own page may have run it before it closed; never ann's.
        thread::sleep(Duration::from_millis(300));
        assert!(
            !b.site.was_requested("/ran-on-Agentann"),
            "{how}: bob's eval ran in ann's page: {evaluated:?}"
        );
        assert_ne!(evaluated.code, 0, "{how}: {evaluated:?}");
        anns_tabs_answer(&b, &anns);
        // bob hears once that its page closed his tab, if it did.
        let told = run_as(b.sandbox(), "bob", &["tab-list"]);
        assert!([0, 8].contains(&told.code), "{}", told.stderr);
    }
}

/// A command past its bound costs the others nothing more (issue 46):
/// bob's `eval`, whose promise never settles, ends at the user's bound
/// (exit 124; his own longer one counts for nothing) while the daemon
/// runs it on; ann's commands run at
/// once beside it, within a two-second wait for the turn (before, the
/// turn stayed bob's until the daemon finished it, up to ten minutes);
/// only bob's next command waits for his own (exit 7, saying so);
/// `agents` lists it; `disconnect` ends the wait.
#[test]
fn a_command_past_its_bound_keeps_out_only_its_own_agent() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    // The bound is the user's: bob's own variable may shorten it, never
    // lengthen it.
    b.ok("person", &["setup", "--command-bound", "3s"]);
    let mut stuck = as_agent(b.sandbox(), "bob", &["eval", "new Promise(() => {})"]);
    stuck.env("MY_CHROME_COMMAND_TIMEOUT_SECS", "60");
    Running::start(stuck)
        .wait()
        .expect(124, "did not finish within 3 s");
    let mut again = as_agent(b.sandbox(), "bob", &["eval", "new Promise(() => {})"]);
    again.env("MY_CHROME_LEASE_WAIT_SECS", "0");
    // (His first still runs: this one waits for it, not for the turn.)
    Running::start(again)
        .wait()
        .expect(7, "past its bound: the daemon still runs it");
    for round in 0..3 {
        let started = std::time::Instant::now();
        let mut anns = as_agent(b.sandbox(), "ann", &["eval", "document.title"]);
        anns.env("MY_CHROME_LEASE_WAIT_SECS", "2");
        let anns = Running::start(anns).wait();
        assert_eq!(anns.code, 0, "{}{}", anns.stdout, anns.stderr);
        assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
        eprintln!(
            "round {round}: ann's eval beside bob's late one: {} ms",
            started.elapsed().as_millis()
        );
    }
    let agents = b.agents();
    assert_eq!(agents["late"][0]["agent"], "bob", "{agents}");
    let mut next = as_agent(b.sandbox(), "bob", &["eval", "document.title"]);
    next.env("MY_CHROME_LEASE_WAIT_SECS", "1");
    let next = Running::start(next).wait();
    next.expect(7, "past its bound: the daemon still runs it");
    assert!(
        next.stderr.contains("agent bob's `eval`"),
        "{}",
        next.stderr
    );
    b.ok("person", &["disconnect"]);
    assert_eq!(b.agents()["late"], serde_json::json!([]));
}

/// bob's pages are titled with the extension's connect page, more of
/// them than one cleanup closes: `ensure` (anyone's) takes no page of his
/// for the connect tab, which only a tab showing the session's token is.
/// Found by an attack: it closed his tabs by index, then detached the
/// whole session under ann's work, with nobody asked.
#[test]
fn a_page_titled_as_the_connect_tab_is_no_connect_tab() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    let title = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?token=x";
    put_page(
        "conn",
        &format!("<!doctype html><html><head><title>{title}</title></head><body>x</body></html>"),
    );
    for i in 0..9 {
        b.ok("bob", &["tab-new", &b.site.url(&format!("/put/conn?{i}"))]);
    }
    b.chrome.person_will("refuse");
    b.ok("bob", &["ensure"]);
    assert_eq!(b.tabs("bob").len(), 9);
    let anns = b.ok("ann", &["eval", "document.title"]);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
}

/// bob's first command runs on the blank tab opened for him, and leaves a
/// timer there that opens a page of his during ann's next command: that
/// page is not ann's (a blank tab runs its agent's scripts like any
/// other). Found by an attack: it was listed as ann's, for her `fill`.
#[test]
fn a_popup_from_another_agents_blank_tab_is_not_the_runners() {
    let b = browser();
    put_page(
        "evil",
        "<!doctype html><html><head><title>Evil</title></head><body><h1>bob's page</h1>\
         <input aria-label='Password'></body></html>",
    );
    b.ok("ann", &["goto", &b.page("ann")]);
    let evil = b.site.url("/put/evil");
    b.ok(
        "bob",
        &[
            "eval",
            &format!("setTimeout(() => window.open('{evil}'), 1500), document.title"),
        ],
    );
    b.ok(
        "ann",
        &[
            "eval",
            "new Promise(r => setTimeout(() => r(document.title), 5000))",
        ],
    );
    // It opened (the site served it), and it is nobody's but the user's.
    assert!(b.site.was_requested("/put/evil"));
    let anns = b.tabs("ann");
    assert!(!anns.iter().any(|t| t.3.contains("/put/evil")), "{anns:?}");
    assert_eq!(anns.len(), 1, "{anns:?}");
    // The browser may tell the daemon of a popup after its page was asked
    // for (the extension attaches to it first): under load, after ann's
    // command. It is the user's then too.
    let mut user: Vec<String> = b.user_tabs();
    for _ in 0..50 {
        if !user.is_empty() {
            break;
        }
        thread::sleep(Duration::from_millis(200));
        user = b.user_tabs();
    }
    assert_eq!(user.len(), 1, "{user:?} {}", b.agents());
}

/// bob kills the process that waits for his command past its bound
/// (SIGKILL, as any process of his may be), while the daemon still runs
/// the command: it stays late — listed, so no reply proves the tabs —
/// until the cap or the session's end, and bob's next command is not held
/// for a waiter that is gone. A second one's waiter stopped (SIGSTOP)
/// keeps nothing past `disconnect`. Found by an attack: the record went
/// with its waiter, while the daemon could still answer.
#[test]
fn a_late_command_stays_late_whatever_is_done_to_its_waiter() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    let late_one = |b: &Browser| {
        let mut stuck = as_agent(b.sandbox(), "bob", &["eval", "new Promise(() => {})"]);
        stuck.env("MY_CHROME_COMMAND_TIMEOUT_SECS", "2");
        Running::start(stuck)
            .wait()
            .expect(124, "did not finish within 2 s");
        let file = std::fs::read(b.sandbox().runtime.join("late.json")).unwrap();
        let late: serde_json::Value = serde_json::from_slice(&file).unwrap();
        let waiter = late["late"].as_array().unwrap().last().unwrap()["process"]["pid"]
            .as_u64()
            .unwrap();
        Pid::from_raw(waiter as i32)
    };
    let gone = |pid: Pid| {
        common::wait::until("the waiter's end", Duration::from_secs(10), || {
            if kill(pid, None).is_err() {
                Ok(())
            } else {
                Err(String::new())
            }
        })
    };
    let killed = late_one(&b);
    kill(killed, Signal::SIGKILL).unwrap();
    gone(killed);
    let agents = b.agents();
    assert_eq!(agents["late"][0]["agent"], "bob", "{agents}");
    let mut next = as_agent(b.sandbox(), "bob", &["eval", "document.title"]);
    next.env("MY_CHROME_LEASE_WAIT_SECS", "1");
    let next = Running::start(next).wait();
    assert_eq!(next.code, 0, "{}{}", next.stdout, next.stderr);
    assert!(next.stdout.contains("Agent bob"), "{}", next.stdout);
    let anns = b.ok("ann", &["eval", "document.title"]);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    let stopped = late_one(&b);
    kill(stopped, Signal::SIGSTOP).unwrap();
    assert_eq!(b.agents()["late"].as_array().unwrap().len(), 2);
    b.ok("person", &["disconnect"]);
    gone(stopped);
    assert_eq!(b.agents()["late"], serde_json::json!([]));
}

/// A late reply is of its own tab: bob's `goto` to a page that answers
/// after 20 s passes his bound (1 s); ann's `eval` meanwhile makes her
/// tab the daemon's current one, and it still is when bob's page loads.
/// The daemon builds a reply (its snapshot, its new console lines) when
/// the tool ends, from the tab current then: before, bob's late reply
/// wrote a snapshot of ann's page into the session's output folder (and
/// took her new console lines out of her next reply). Now each reply is
/// built on the tab its command ran on (src/tabs/stay.rs).
#[test]
fn a_late_reply_is_built_on_its_own_tab() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    let outputs = b.sandbox().runtime.join("session-output");
    let files = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&outputs)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    let before = files();
    let mut late = as_agent(b.sandbox(), "bob", &["goto", &b.site.url("/slow")]);
    late.env("MY_CHROME_COMMAND_TIMEOUT_SECS", "1");
    Running::start(late)
        .wait()
        .expect(124, "did not finish within 1 s");
    let anns = b.ok("ann", &["eval", "document.title"]);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    common::wait::until("bob's late goto to end", Duration::from_secs(60), || {
        match b.agents()["late"].as_array().map(Vec::len) {
            Some(0) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    let written: Vec<(std::path::PathBuf, String)> = files()
        .into_iter()
        .filter(|f| !before.contains(f))
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            (f, text)
        })
        .collect();
    // bob's page, and nothing of ann's.
    assert!(
        written
            .iter()
            .any(|(_, t)| t.contains(common::site::SECOND_TEXT)),
        "{written:?}"
    );
    let anns_text = agent_text("ann");
    assert!(
        !written.iter().any(|(_, t)| t.contains(&anns_text)),
        "{written:?}"
    );
}

/// bob's page answers the probe of its selection 3 s late (the daemon
/// makes a tab current only once it is answered, and waits up to 5 s),
/// and bob shortens his own bound to 1 s. Found by an attack: the
/// selection, given up at bob's bound, was finished by the daemon in the
/// middle of ann's next command, which then ran in bob's page, and her
/// tab was read as closed. The selection's budget is no caller's to
/// shorten: it waits for the page, and ann's tab and commands are hers.
#[test]
fn a_selection_answered_late_moves_no_tab_under_another() {
    let b = browser();
    put_page("late-select", LATE_SELECT);
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.site.url("/put/late-select?3000")]);
    let bobs = b.tabs("bob")[0].0.clone();
    b.ok("ann", &["eval", "1"]);
    let anns: Vec<String> = b.tabs("ann").into_iter().map(|t| t.0).collect();
    thread::sleep(Duration::from_millis(1100));
    let mut select = as_agent(
        b.sandbox(),
        "bob",
        &["eval", "document.title", "--tab", &bobs],
    );
    select.env("MY_CHROME_COMMAND_TIMEOUT_SECS", "1");
    let started = std::time::Instant::now();
    let bob = Running::start(select).wait();
    eprintln!(
        "bob's eval took {} ms: exit {}",
        started.elapsed().as_millis(),
        bob.code
    );
    assert_eq!(bob.code, 0, "{}{}", bob.stdout, bob.stderr);
    assert!(bob.stdout.contains("Bob late"), "{}", bob.stdout);
    assert!(b.site.was_requested("/late-asked"), "never probed late");
    for _ in 0..3 {
        let anns_run = b.ok("ann", &["eval", "document.title"]);
        assert!(anns_run.stdout.contains("Agent ann"), "{}", anns_run.stdout);
    }
    let now: Vec<String> = b.tabs("ann").into_iter().map(|t| t.0).collect();
    assert_eq!(now, anns, "ann's tab is hers: {}", b.agents());
}

/// bob stops his own my-chrome (SIGSTOP) while its `eval` holds the
/// session's turn (found by an attack: a stopped process gives nothing up,
/// and ann waited her whole wait, then exit 7). Past the user's bound and
/// the housekeeping around it, the next in line ends the stopped process:
/// ann's command runs, the log says so, and bob's process is gone.
#[test]
fn a_process_stopped_with_the_turn_keeps_nobody_out_past_the_bound() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    b.ok("person", &["setup", "--command-bound", "2s"]);
    let mut stuck = Running::start(as_agent(
        b.sandbox(),
        "bob",
        &[
            "eval",
            "navigator.sendBeacon('/bob-sent'), new Promise(r => setTimeout(r, 60000))",
        ],
    ));
    requested(&b, "/bob-sent");
    let bob = Pid::from_raw(stuck.child.id() as i32);
    kill(bob, Signal::SIGSTOP).unwrap();
    let started = std::time::Instant::now();
    let mut anns = as_agent(b.sandbox(), "ann", &["eval", "document.title"]);
    anns.env("MY_CHROME_LEASE_WAIT_SECS", "60");
    let anns = Running::start(anns).wait();
    eprintln!(
        "ann's eval, bob's my-chrome stopped with the turn, bound 2 s: exit {} after {} ms",
        anns.code,
        started.elapsed().as_millis()
    );
    assert_eq!(anns.code, 0, "{}{}", anns.stdout, anns.stderr);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    assert!(
        anns.stderr.contains("was stopped while it held"),
        "{}",
        anns.stderr
    );
    let log = std::fs::read_to_string(b.sandbox().runtime.join("lease.log")).unwrap();
    assert!(
        log.contains("STOPPED-ENDED agent=bob command=eval"),
        "{log}"
    );
    assert!(
        stuck.child.try_wait().unwrap().is_some() || {
            thread::sleep(Duration::from_millis(500));
            stuck.child.try_wait().unwrap().is_some()
        },
        "bob's process was ended"
    );
}

/// bob's page spins for good (a script that never yields) between
/// commands: ann's commands run, as if it were not there, and so does a
/// newcomer's first. Found by trying: every tab list asks each page its
/// title, and a page that never answers made every command of every agent
/// fail (exit 124, "the session's daemon does not answer", told to
/// disconnect); an attack on the first fix found tab commands, which
/// describe the tabs twice, still ran out of their budget.
#[test]
fn a_page_that_never_yields_holds_up_no_other_agent() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    b.ok("ann", &["tab-new", "--label", "x", &b.page("ann")]);
    b.ok(
        "bob",
        &["eval", "setTimeout(() => { for (;;) {} }, 2000), 1"],
    );
    thread::sleep(Duration::from_secs(3));
    let read = b.ok("ann", &["eval", "document.title", "--tab", "x"]);
    assert!(read.stdout.contains("Agent ann"), "{}", read.stdout);
    let yaml = read_snapshot(b.sandbox(), &b.ok("ann", &["snapshot"]).stdout);
    assert!(yaml.contains("Agent ann"), "{yaml}");
    b.ok("ann", &["tab-select", "x"]);
    b.ok("ann", &["tab-close", "x"]);
    b.ok("ann", &["tab-new", &b.page("ann")]);
    assert_eq!(b.tabs("ann").len(), 2);
    b.ok("carol", &["eval", "1"]);
    b.ok("carol", &["release"]);
    // bob's tab is still his: the page that does not answer is described
    // by what the daemon knows without it.
    assert_eq!(b.tabs("bob").len(), 1, "{}", b.agents());
    b.ok("ann", &["release"]);
}

/// bob's page retitles itself with megabytes: every tab list carries every
/// title, and each was larger than my-chrome reads, so every command of
/// every agent failed (exit 1), bob's `tab-close` too. Found by an attack.
/// The daemon's description cuts a title (and an address) short.
#[test]
fn a_page_with_a_huge_title_holds_up_no_other_agent() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    b.ok(
        "bob",
        &[
            "eval",
            "setTimeout(() => { document.title = 'x'.repeat(5 << 20); \
             history.replaceState(null, '', '?' + 'y'.repeat(3 << 20)); }, 1500), 1",
        ],
    );
    thread::sleep(Duration::from_secs(3));
    let read = b.ok("ann", &["eval", "document.title"]);
    assert!(read.stdout.contains("Agent ann"), "{}", read.stdout);
    assert_eq!(b.tabs("ann").len(), 1);
    let listed = b.ok("bob", &["tab-list"]);
    assert!(listed.stdout.len() < 64 << 10, "{}", listed.stdout.len());
    // bob's tab is the last: his close can reach no other.
    b.ok("bob", &["tab-close"]);
    assert!(b.tabs("bob").is_empty(), "{}", b.agents());
    b.ok("ann", &["tab-new", &b.page("ann")]);
}

/// The lease log's lines for `agents`, each cut to its event and agent
/// (`ASIDE agent=bob`), in order.
fn turns_of(b: &Browser, agents: &[&str]) -> Vec<String> {
    let log = std::fs::read_to_string(b.sandbox().runtime.join("lease.log")).unwrap();
    log.lines()
        .filter_map(|line| {
            let mut words = line.split(' ').skip(1);
            let (event, agent) = (words.next()?, words.next()?);
            let name = agent.strip_prefix("agent=")?;
            agents.contains(&name).then(|| format!("{event} {agent}"))
        })
        .collect()
}

/// bob's `eval` answers after 3 s; ann asks while it runs. bob's command
/// steps aside once the daemon has it (the turn passes on, his tab stays
/// his), ann's runs meanwhile, and bob's reply is shown once he has the
/// turn back: the log says so, in that order.
#[test]
fn a_command_steps_aside_for_another_agents_and_shows_its_reply_after() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    let bobs = holding_the_turn(&b, "bob", 3000, "document.title + ' answered late'");
    let anns = b.ok("ann", &["eval", "document.title"]);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    let bobs = bobs.wait();
    assert_eq!(bobs.code, 0, "{}{}", bobs.stdout, bobs.stderr);
    assert!(
        bobs.stdout.contains("Agent bob answered late"),
        "{}",
        bobs.stdout
    );
    assert!(!bobs.stdout.contains("Agent ann"), "{}", bobs.stdout);
    let turns = turns_of(&b, &["ann", "bob"]);
    let at = |line: &str| turns.iter().rposition(|l| l == line);
    let (aside, anns, bobs) = (
        at("ASIDE agent=bob"),
        at("RAN agent=ann"),
        at("RAN agent=bob"),
    );
    assert!(aside.is_some() && aside < anns && anns < bobs, "{turns:?}");
    // Nothing is left running, and each tab is its agent's.
    assert_eq!(b.agents()["late"], serde_json::json!([]));
    assert_eq!(b.tabs("bob").len(), 1);
    assert_eq!(b.tabs("ann").len(), 1);
    assert!(b.user_tabs().is_empty(), "{}", b.agents());
}

/// bob, under four names, sends four promises that never settle, each
/// with the user's whole bound (20 s). Each steps aside once the next is
/// in line: ann's command, asked after them and waiting 10 s at most,
/// runs while they all still run; each then ends at its bound (exit 124),
/// its tab its own. Before, each held the turn for its bound in turn.
#[test]
fn stuck_commands_under_many_names_hold_up_no_other_agent() {
    let b = browser();
    b.ok("person", &["setup", "--command-bound", "20s"]);
    b.ok("ann", &["goto", &b.page("ann")]);
    let names = ["bob", "bob-two", "bob-three", "bob-four"];
    for name in names {
        b.ok(name, &["tab-new", &b.page(name)]);
    }
    let mut stuck: Vec<Running> = names
        .iter()
        .map(|name| {
            Running::start(as_agent(
                b.sandbox(),
                name,
                &["eval", "new Promise(() => {})"],
            ))
        })
        .collect();
    common::wait::until(
        "a stuck command to hold the turn",
        Duration::from_secs(20),
        || match b.agents()["running"]["agent"].as_str() {
            Some(agent) if agent.starts_with("bob") => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );
    let mut anns = as_agent(b.sandbox(), "ann", &["eval", "document.title"]);
    anns.env("MY_CHROME_LEASE_WAIT_SECS", "10");
    let anns = Running::start(anns).wait();
    assert_eq!(anns.code, 0, "{}{}", anns.stdout, anns.stderr);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    let late = b.agents()["late"].clone();
    let running: Vec<bool> = stuck
        .iter_mut()
        .map(|run| run.child.try_wait().unwrap().is_none())
        .collect();
    let ended: Vec<common::run::Run> = stuck.into_iter().map(Running::wait).collect();
    assert!(running.iter().all(|r| *r), "{late} {ended:?}");
    for run in ended {
        run.expect(124, "did not finish within 20 s");
    }
    for name in names {
        assert_eq!(b.tabs(name).len(), 1, "{name}: {}", b.agents());
    }
    assert_eq!(b.tabs("ann").len(), 1);
}

/// A click waits for its tab's frames, so it keeps the turn longer than
/// another command before it steps aside, but only past the daemon's
/// action timeout: bob's page, under two names, stops its timers the
/// moment its button is clicked, so the daemon's settle after each click
/// never ends, each with the user's bound (25 s). ann's command, asked
/// after them and waiting 22 s at most (less than one bound), runs while
/// both still run; each then ends at its bound (exit 124). A first fix,
/// that never let such a command step aside, let a page hold the turn for
/// a bound a name (a read-only review found it).
#[test]
fn clicks_a_page_never_lets_settle_under_many_names_hold_up_no_other_agent() {
    let b = browser();
    b.ok("person", &["setup", "--command-bound", "25s"]);
    b.ok("ann", &["goto", &b.page("ann")]);
    common::site::put_page(
        "unsettled",
        r#"<!doctype html><html><head><title>Unsettled</title></head><body>
<button id="stop" onclick="window.setTimeout = () => 0">stop the clocks</button></body></html>"#,
    );
    let names = ["bob", "bob-two"];
    for name in names {
        b.ok(name, &["tab-new", &b.site.url("/put/unsettled")]);
    }
    let mut clicks: Vec<Running> = names
        .iter()
        .map(|name| Running::start(as_agent(b.sandbox(), name, &["click", "#stop"])))
        .collect();
    common::wait::until("a click to hold the turn", Duration::from_secs(20), || {
        match b.agents()["running"]["agent"].as_str() {
            Some(agent) if agent.starts_with("bob") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    let mut anns = as_agent(b.sandbox(), "ann", &["eval", "document.title"]);
    anns.env("MY_CHROME_LEASE_WAIT_SECS", "22");
    let anns = Running::start(anns).wait();
    assert_eq!(anns.code, 0, "{}{}", anns.stdout, anns.stderr);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    let running: Vec<bool> = clicks
        .iter_mut()
        .map(|run| run.child.try_wait().unwrap().is_none())
        .collect();
    let ended: Vec<common::run::Run> = clicks.into_iter().map(Running::wait).collect();
    assert!(running.iter().all(|r| *r), "{ended:?}");
    for run in ended {
        run.expect(124, "did not finish within 25 s");
    }
    let log = std::fs::read_to_string(b.sandbox().runtime.join("lease.log")).unwrap();
    assert!(log.contains("ASIDE agent=bob command=click"), "{log}");
}

/// The same with slow pages opened in new tabs: bob, under four names,
/// opens a page that answers after 28 s, each with the user's bound
/// (25 s). Each new tab's load steps aside once the next is in line:
/// ann's command, asked after them and waiting 22 s at most (less than
/// one bound), runs while they all still load; each then ends at its
/// bound (exit 124) with its new tab its own. Before, `tab-new` was a tab
/// command that never stepped aside, and each held the turn for its bound
/// in turn (the last finding of an attack on stepping aside). The times
/// are long because each blank tab is made under the turn before its load
/// steps aside: with 15 s and 12 s, four of them took ann's 12 s on a
/// loaded machine (a CI pre-check).
#[test]
fn slow_new_tabs_under_many_names_hold_up_no_other_agent() {
    let b = browser();
    b.ok("person", &["setup", "--command-bound", "25s"]);
    b.ok("ann", &["goto", &b.page("ann")]);
    let names = ["bob", "bob-two", "bob-three", "bob-four"];
    let mut slow: Vec<Running> = names
        .iter()
        .map(|name| {
            let page = b.site.url(&format!("/slower/{name}"));
            Running::start(as_agent(b.sandbox(), name, &["tab-new", &page]))
        })
        .collect();
    common::wait::until(
        "a slow tab to hold the turn",
        Duration::from_secs(20),
        || match b.agents()["running"]["agent"].as_str() {
            Some(agent) if agent.starts_with("bob") => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );
    let mut anns = as_agent(b.sandbox(), "ann", &["eval", "document.title"]);
    anns.env("MY_CHROME_LEASE_WAIT_SECS", "22");
    let anns = Running::start(anns).wait();
    assert_eq!(anns.code, 0, "{}{}", anns.stdout, anns.stderr);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
    let running: Vec<bool> = slow
        .iter_mut()
        .map(|run| run.child.try_wait().unwrap().is_none())
        .collect();
    let ended: Vec<common::run::Run> = slow.into_iter().map(Running::wait).collect();
    assert!(running.iter().all(|r| *r), "{ended:?}");
    for run in ended {
        run.expect(124, "did not finish within 25 s");
    }
    // Each new tab is its name's, and shows its own slow page once it came.
    for name in names {
        let page = b.site.url(&format!("/slower/{name}"));
        common::wait::until(name, Duration::from_secs(60), || match &b.tabs(name)[..] {
            [(_, _, _, url)] if *url == page => Ok(()),
            other => Err(format!("{other:?}")),
        });
    }
    assert_eq!(b.tabs("ann").len(), 1);
}

/// bob's `goto` takes his tab to another site, which loads for 5 s; ann's
/// command runs meanwhile and lists the tabs while his tab shows the new
/// site. A tab whose command stepped aside is busy: what happens to it is
/// that command's doing, so it stays bob's (a tab that goes to another
/// site between commands is the user's), and his reply is shown.
#[test]
fn a_tab_whose_command_stands_aside_stays_its_own_wherever_it_goes() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    let away = b.site.url("/trickle").replace("127.0.0.1", "localhost");
    let goto = Running::start(as_agent(b.sandbox(), "bob", &["goto", &away]));
    requested(&b, "/trickle");
    // The head is there: the tab shows the other site, still loading.
    thread::sleep(Duration::from_millis(500));
    let anns = b.ok("ann", &["snapshot"]);
    assert!(!anns.stdout.contains("Trickle"), "{}", anns.stdout);
    b.ok("ann", &["tab-list"]);
    let goto = goto.wait();
    assert_eq!(goto.code, 0, "{}{}", goto.stdout, goto.stderr);
    assert!(goto.stdout.contains("Trickle"), "{}", goto.stdout);
    let turns = turns_of(&b, &["ann", "bob"]);
    let aside = turns.iter().rposition(|l| l == "ASIDE agent=bob");
    let anns = turns.iter().rposition(|l| l == "RAN agent=ann");
    assert!(aside.is_some() && aside < anns, "{turns:?}");
    let bobs = b.tabs("bob");
    assert_eq!(bobs.len(), 1, "{}", b.agents());
    assert!(bobs[0].3.contains("localhost"), "{bobs:?}");
    assert!(b.user_tabs().is_empty(), "{}", b.agents());
}

/// bob's `eval` steps aside for ann's, whose process is stopped while it
/// holds the turn; bob's is answered soon after, and he waits 2 s at most
/// for the turn. His command ran: it says so (exit 7), shows nothing of
/// its reply, is no longer recorded as running, and his next command
/// runs.
#[test]
fn a_reply_whose_turn_does_not_come_back_says_it_ran() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    let mut bobs = as_agent(
        b.sandbox(),
        "bob",
        &[
            "eval",
            "new Promise(r => setTimeout(() => r('answered ' + 'late'), 3000))",
        ],
    );
    bobs.env("MY_CHROME_LEASE_WAIT_SECS", "2");
    let bobs = Running::start(bobs);
    until_running(&b, "bob");
    let anns = holding_the_turn_stopped(&b, "ann", 6);
    let bobs = bobs.wait();
    bobs.expect(7, "ran (it stepped aside for another agent's command");
    assert!(!bobs.stdout.contains("answered late"), "{}", bobs.stdout);
    going_on(&anns);
    assert_eq!(anns.wait().code, 0);
    assert_eq!(b.agents()["late"], serde_json::json!([]));
    let again = b.ok("bob", &["eval", "document.title"]);
    assert!(again.stdout.contains("Agent bob"), "{}", again.stdout);
}

/// ann's `goto` goes past its bound (1 s) and is answered when its page
/// has come (5 s): the page it ended on is read in as its doing. Later,
/// with no command run meanwhile, the person takes that tab to a site of
/// their own: it is theirs, not ann's. Found by an attack: the tab of an
/// answered command stayed busy until a book was kept, so ann's next
/// command read the person's site as her command's doing and kept it.
#[test]
fn a_tab_the_user_takes_elsewhere_after_a_late_answer_is_the_users() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    let mut late = as_agent(b.sandbox(), "ann", &["goto", &b.site.url("/trickle")]);
    late.env("MY_CHROME_COMMAND_TIMEOUT_SECS", "1");
    Running::start(late)
        .wait()
        .expect(124, "did not finish within 1 s");
    let late_file = || std::fs::read_to_string(b.sandbox().runtime.join("late.json")).unwrap();
    common::wait::until("the answer", Duration::from_secs(20), || {
        let file: serde_json::Value = serde_json::from_str(&late_file()).unwrap();
        match (&file["late"], &file["ended"]) {
            (serde_json::Value::Array(late), serde_json::Value::Array(ended))
                if late.is_empty() && ended.len() == 1 =>
            {
                Ok(())
            }
            _ => Err(file.to_string()),
        }
    });
    thread::sleep(Duration::from_secs(2));
    let users = b.site.url("/second").replace("127.0.0.1", "localhost");
    b.chrome.navigate_page("/trickle", &users);
    let run = run_as(b.sandbox(), "ann", &["eval", "location.href"]);
    assert!(!run.stdout.contains("localhost"), "{run:?}");
    let anns = b.tabs("ann");
    assert!(!anns.iter().any(|t| t.3 == users), "{anns:?}");
    assert_eq!(b.user_tabs().len(), 1, "{}", b.agents());
    // Read in, the record is gone.
    assert!(!late_file().contains("ended"), "{}", late_file());
}

/// The last ticket given for the session's turn (only to see the attack's
/// progress: bob cannot read the runtime, he would spend a few more).
fn last_ticket(b: &Browser) -> u64 {
    std::fs::read_to_string(b.sandbox().runtime.join(".turn-tickets.lock"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// bob's never-settling `eval` holds the turn while he spends a thousand
/// tickets under his own name (commands that give up at once), so that
/// ann's ticket lies far behind his. Found by an attack: the holder looked
/// only at the next thousand ticket numbers for another agent's waiter,
/// never stepped aside, and ann waited for his command. The waiters'
/// files that are there are read instead.
#[test]
fn tickets_spent_hide_no_waiter_from_a_stuck_command() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    let stuck = Running::start(as_agent(
        b.sandbox(),
        "bob",
        &["eval", "new Promise(() => {})"],
    ));
    until_running(&b, "bob");
    let from = last_ticket(&b);
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                while last_ticket(&b) < from + 1005 {
                    let mut spent = as_agent(b.sandbox(), "bob", &["eval", "1"]);
                    spent.env("MY_CHROME_LEASE_WAIT_SECS", "0");
                    let _ = Running::start(spent).wait();
                }
            });
        }
    });
    let mut anns = as_agent(b.sandbox(), "ann", &["eval", "document.title"]);
    anns.env("MY_CHROME_LEASE_WAIT_SECS", "20");
    let anns = Running::start(anns).wait();
    let turns = turns_of(&b, &["ann", "bob"]);
    let mut stuck = stuck;
    let _ = stuck.child.kill();
    let _ = stuck.wait();
    assert_eq!(anns.code, 0, "{}{}", anns.stdout, anns.stderr);
    let aside = turns.iter().rposition(|l| l == "ASIDE agent=bob");
    let ran = turns.iter().rposition(|l| l == "RAN agent=ann");
    assert!(aside.is_some() && aside < ran, "{turns:?}");
}

/// bob kills his command that holds the turn, and stops (SIGSTOP) his
/// next one under another name while it takes the turn and waits a
/// moment for what the killed one left. Found by an attack: the turn's
/// record still named the killed process then, so nobody ended the
/// stopped one, and ann was kept out until bob let it go on. It is named
/// at once now, and ended once stopped past the bound and 8 s.
#[test]
fn a_process_stopped_as_it_takes_the_turn_keeps_nobody_out() {
    let b = browser();
    b.ok("person", &["setup", "--command-bound", "10s"]);
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", &b.page("bob")]);
    b.ok("bob-two", &["tab-new", &b.page("bob-two")]);
    let mut first = holding_the_turn_stopped(&b, "bob", 20);
    let second = Running::start(as_agent(
        b.sandbox(),
        "bob-two",
        &["eval", "document.title"],
    ));
    thread::sleep(Duration::from_millis(1500));
    kill(Pid::from_raw(first.child.id() as i32), Signal::SIGKILL).unwrap();
    let _ = first.child.wait();
    thread::sleep(Duration::from_millis(120));
    let two = Pid::from_raw(second.child.id() as i32);
    kill(two, Signal::SIGSTOP).unwrap();
    let mut anns = as_agent(b.sandbox(), "ann", &["eval", "document.title"]);
    anns.env("MY_CHROME_LEASE_WAIT_SECS", "45");
    let anns = Running::start(anns).wait();
    let _ = kill(two, Signal::SIGCONT);
    let _ = second.wait();
    assert_eq!(anns.code, 0, "{}{}", anns.stdout, anns.stderr);
    assert!(anns.stdout.contains("Agent ann"), "{}", anns.stdout);
}

/// ann's page opens a popup whose first load commits late (the browser
/// tells the daemon of a popup only then), and ann closes her tab before
/// it does. bob's `tab-new` loads its address (a `goto` since the split)
/// as the popup is reported: every tab known then is bob's, yet the popup
/// is not his page's but the user's, as when `tab-new` was one tab
/// command. Found by an attack on the split (bob was given ann's page's
/// popup).
#[test]
fn a_popup_of_a_closed_tab_reported_during_a_new_tabs_load_is_not_the_loaders() {
    let b = browser();
    put_page(
        "late-opener",
        "<!doctype html><html><head><title>Opener</title></head><body><h1>ann's page</h1>\
         <script>setTimeout(() => window.open('/slow/anns-popup'), 500)</script></body></html>",
    );
    b.ok("ann", &["tab-new", &b.site.url("/put/late-opener")]);
    requested(&b, "/slow/anns-popup");
    // ann's tab goes before the popup's first load commits.
    b.ok("ann", &["tab-close"]);
    assert!(b.tabs("ann").is_empty());
    // bob's new tab loads while the popup of ann's page commits.
    thread::sleep(Duration::from_secs(3));
    b.ok("bob", &["tab-new", &b.site.url("/slow/bobs-page")]);
    let tabs = b.tabs("bob");
    assert_eq!(
        tabs.len(),
        1,
        "ann's page's popup was given to bob: {tabs:?}"
    );
    assert!(tabs[0].3.ends_with("/slow/bobs-page"), "{tabs:?}");
    common::wait::until("the popup, the user's", Duration::from_secs(30), || match b
        .user_tabs()
        .len()
    {
        1 => Ok(()),
        n => Err(format!("{n}: {}", b.agents())),
    });
}
