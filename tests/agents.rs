//! Agents side by side on one session: each in its own tabs, addressed by
//! stable ids, interleaved command by command (docs/DESIGN.md, "Agents side
//! by side"). The real binary, the real pinned CLI, and a session made by
//! `my-chrome connect` to the Chrome stand-in (a real Chromium).

mod common;

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::browser::{Browser, as_agent, browser, mentions_others, refused, run_as};
use common::site::{POPUP_TEXT, agent_text};
use common::{Run, Running, assert_nowhere, read_snapshot, reference};

#[test]
fn three_agents_interleaved_each_read_only_their_own_page() {
    let b = Arc::new(browser());
    let names = ["ann", "bob", "cid"];
    for name in names {
        b.ok(name, &["goto", &b.page(name)]);
    }
    let rounds = 8;
    let workers: Vec<_> = names
        .into_iter()
        .map(|agent| {
            let b = Arc::clone(&b);
            thread::spawn(move || {
                let mut seen = Vec::new();
                for round in 0..rounds {
                    let snapshot = b.ok(agent, &["snapshot"]);
                    let yaml = read_snapshot(b.sandbox(), &snapshot.stdout);
                    assert!(yaml.contains(&agent_text(agent)), "{agent}: {yaml}");
                    seen.push(snapshot.stdout + &yaml);
                    let title = b.ok(agent, &["eval", "document.title"]);
                    assert!(
                        title.stdout.contains(&format!("Agent {agent}")),
                        "{}",
                        title.stdout
                    );
                    seen.push(title.stdout);
                    // What it types and presses lands on its own page.
                    let note = format!("{agent} wrote {round}");
                    seen.push(b.ok(agent, &["fill", "#note", &note]).stdout);
                    let typed = b.ok(agent, &["eval", "document.querySelector('#note').value"]);
                    assert!(typed.stdout.contains(&note), "{agent}: {}", typed.stdout);
                    seen.push(typed.stdout);
                    seen.push(b.ok(agent, &["click", "#press"]).stdout);
                    let pressed = b.ok(
                        agent,
                        &["eval", "document.querySelector('#press').textContent"],
                    );
                    assert!(
                        pressed.stdout.contains(&format!("pressed on {agent}")),
                        "{agent}: {}",
                        pressed.stdout
                    );
                    seen.push(pressed.stdout);
                    if round % 2 == 0 {
                        let went = b.ok(agent, &["goto", &b.page(agent)]);
                        seen.push(went.stdout);
                    }
                }
                seen
            })
        })
        .collect();
    for (agent, worker) in names.iter().zip(workers) {
        for text in worker.join().unwrap() {
            if let Some(leak) = mentions_others(&text, agent, &names) {
                panic!("{leak}");
            }
        }
    }
    // Each has one tab of its own, and sees no other.
    for name in names {
        let tabs = b.tabs(name);
        assert_eq!(tabs.len(), 1, "{name}: {tabs:?}");
        assert!(tabs[0].3.ends_with(&format!("/agent/{name}")), "{tabs:?}");
    }
    let agents = b.agents();
    let listed: Vec<&str> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| !a["tabs"].as_array().unwrap().is_empty())
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, names);
    // For the person: every agent's tab ids, never a title or an address;
    // the log names the tab each command ran on.
    let text = b.ok("person", &["agents"]).stdout;
    for name in names {
        assert!(text.contains(&format!("agent {name}: last `")), "{text}");
    }
    assert!(
        !text.contains("/agent/") && !text.contains("Agent "),
        "{text}"
    );
    let doctor = b.sandbox().doctor();
    let summary = doctor["agents"]["status"].as_str().unwrap();
    assert!(
        summary.contains("ann: t") && summary.contains("cid: t"),
        "{summary}"
    );
    let log = std::fs::read_to_string(b.sandbox().runtime.join("lease.log")).unwrap();
    let snapshots: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" RAN agent=ann command=snapshot"))
        .collect();
    assert_eq!(snapshots.len(), rounds, "{log}");
    for command in ["fill", "click"] {
        let lines = log
            .lines()
            .filter(|l| l.contains(&format!("RAN agent=cid command={command} tab=t")))
            .count();
        assert_eq!(lines, rounds, "{log}");
    }
    assert!(snapshots.iter().all(|l| l.contains(" tab=t")), "{log}");
    assert_nowhere(&b.world.token, b.sandbox().home.path(), &[]);
}

/// The exit code and the message of a refused command.
#[test]
fn no_agent_reaches_another_agents_tab_by_index_id_or_label() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-new", "--label", "work", &b.page("bob")]);
    let bob_before = b.tabs("bob");
    assert_eq!(bob_before.len(), 1, "{bob_before:?}");
    assert_eq!(bob_before[0].1.as_deref(), Some("work"));
    let bob_id = bob_before[0].0.clone();
    let ann_id = b.tabs("ann")[0].0.clone();
    // ann has index 0 only: every other index is no tab of hers.
    for index in ["1", "2", "5"] {
        refused(
            &b,
            "ann",
            &["tab-select", index],
            2,
            "no tab of agent ann has index",
        );
        refused(
            &b,
            "ann",
            &["tab-close", index],
            2,
            "no tab of agent ann has index",
        );
    }
    for args in [
        vec!["tab-select", &bob_id],
        vec!["tab-close", &bob_id],
        vec!["snapshot", "--tab", &bob_id],
        vec!["eval", "document.title", "--tab", &bob_id],
        vec!["goto", &b.site.url("/"), "--tab", &bob_id],
    ] {
        let run = refused(&b, "ann", &args, 7, &format!("tab {bob_id} is agent bob's"));
        assert!(!run.stdout.contains("/agent/bob"), "{}", run.stdout);
    }
    // A label is the agent's own: bob's means nothing to ann.
    refused(
        &b,
        "ann",
        &["snapshot", "--tab", "work"],
        2,
        "no tab of agent ann has label",
    );
    refused(
        &b,
        "ann",
        &["snapshot", "--tab", "t999"],
        2,
        "no tab of agent ann has t999",
    );
    refused(
        &b,
        "bob",
        &["tab-new", "--label", "work"],
        2,
        "already has a tab labelled work",
    );
    b.run_bad_args();
    // Nothing of bob's moved; each still reads its own page.
    assert_eq!(b.tabs("bob"), bob_before);
    let own = b.ok("bob", &["snapshot", "--tab", "work"]);
    let yaml = read_snapshot(b.sandbox(), &own.stdout);
    assert!(yaml.contains(&agent_text("bob")), "{yaml}");
    let own = b.ok("ann", &["eval", "document.title", "--tab", &ann_id]);
    assert!(own.stdout.contains("Agent ann"), "{}", own.stdout);
    // ann's list shows her tab only, with its id; bob's shows his label.
    let list = b.ok("ann", &["tab-list"]).stdout;
    assert!(
        list.contains(&format!("- 0: {ann_id} (current) [Agent ann]")),
        "{list}"
    );
    assert!(!list.contains("bob"), "{list}");
    let list = b.ok("bob", &["tab-list"]).stdout;
    assert!(
        list.contains(&format!("- 0: {bob_id} work (current) [Agent bob]")),
        "{list}"
    );
}

impl Browser {
    /// Tab options that are no tab reference are usage errors.
    fn run_bad_args(&self) {
        for (args, needle) in [
            (vec!["snapshot", "--tab"], "`--tab` needs a value"),
            (vec!["snapshot", "--tab", "a b"], "names no tab"),
            (
                vec!["snapshot", "--tab", "t1", "--tab", "t2"],
                "given twice",
            ),
            (vec!["snapshot", "--label", "x"], "only goes with `tab-new`"),
            (vec!["tab-new", "--label", "t5"], "is not a tab label"),
        ] {
            run_as(self.sandbox(), "ann", &args).expect(2, needle);
        }
    }
}

#[test]
fn popups_are_their_openers_and_a_closed_tab_is_news_to_its_owner_alone() {
    let b = browser();
    let home = b.site.url("/");
    b.ok("ann", &["goto", &home]);
    // Only ann's page is open: the popup her click opened is hers.
    let snapshot = b.ok("ann", &["snapshot"]);
    let yaml = read_snapshot(b.sandbox(), &snapshot.stdout);
    b.ok("ann", &["click", &reference(&yaml, "Open popup")]);
    let ann = b.tabs("ann");
    assert_eq!(ann.len(), 2, "the popup is ann's: {ann:?}");
    assert!(ann[1].3.ends_with("/popup"), "{ann:?}");
    b.ok("bob", &["goto", &b.page("bob")]);
    assert_eq!(b.tabs("bob").len(), 1);
    // The user closes ann's first tab in the browser.
    b.chrome.close_page(&format!("{}/", b.site.base));
    let told = refused(
        &b,
        "ann",
        &["snapshot"],
        8,
        &format!("tab {} was closed", ann[0].0),
    );
    assert!(
        told.stderr.contains(&ann[1].0),
        "her tabs now: {}",
        told.stderr
    );
    // Said once; then her commands run on the tab she has left.
    let popup = b.ok("ann", &["snapshot"]);
    let yaml = read_snapshot(b.sandbox(), &popup.stdout);
    assert!(yaml.contains(POPUP_TEXT), "{yaml}");
    // bob was not told anything and still reads his page.
    let bob = b.ok("bob", &["eval", "document.title"]);
    assert!(bob.stdout.contains("Agent bob"), "{}", bob.stdout);
    // ann's popup closes itself during her command: the reply would
    // describe the tab current next (bob's), so none of it is shown. The
    // popup is loaded again first: through the extension Playwright can miss
    // the main-world context of a page that was open before it attached (as
    // a popup is), and an `eval` there waits for the bound (DESIGN, "The real
    // Playwright Extension"); a navigation mends it.
    b.ok("ann", &["goto", &b.site.url("/popup")]);
    let mut close = as_agent(b.sandbox(), "ann", &["eval", "window.close()"]);
    close.env("MY_CHROME_COMMAND_TIMEOUT_SECS", "30");
    let closing = Running::start(close).wait();
    closing.expect(8, "none of the reply is shown");

    assert!(!closing.stdout.contains("/agent/bob"), "{}", closing.stdout);
    assert!(
        !closing.stdout.contains(&agent_text("bob")),
        "{}",
        closing.stdout
    );
    assert!(b.tabs("ann").is_empty());
    assert_eq!(b.tabs("bob").len(), 1);
}

#[test]
fn browser_wide_commands_wait_until_no_other_agent_has_a_tab() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["goto", &b.page("bob")]);
    for args in [
        &["cookie-list"][..],
        &["route", "**/x"],
        &["state-save", "/tmp/x.json"],
        &["resume"],
    ] {
        refused(&b, "bob", args, 7, "agent(s) ann have tabs open");
    }
    let gone = b.ok("ann", &["release"]);
    assert!(gone.stdout.contains("gave back"), "{}", gone.stdout);
    assert!(b.tabs("ann").is_empty());
    b.ok("bob", &["cookie-list"]);
    // What ann opened (the blank tab she was given) comes before bob's:
    // left open, the user's (a close by its place could reach bob's).
    let agents = b.agents();
    let user = agents["user_tabs"].as_array().unwrap();
    assert_eq!(user.len(), 1, "{agents}");
    assert!(
        user[0]["why"].as_str().unwrap().contains("left open"),
        "{agents}"
    );
}

#[test]
fn browser_wide_state_one_agent_started_keeps_the_others_out_until_it_ends() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("ann", &["tracing-start"]);
    for args in [&["goto", &b.page("bob")][..], &["tab-list"], &["snapshot"]] {
        refused(&b, "bob", args, 7, "agent ann has tracing running");
    }
    b.ok("ann", &["snapshot"]);
    b.ok("ann", &["route", "**/never"]);
    b.ok("ann", &["tracing-stop"]);
    refused(&b, "bob", &["tab-list"], 7, "agent ann has routes set");
    b.ok("ann", &["unroute"]);
    b.ok("bob", &["goto", &b.page("bob")]);
}

/// The id of the first tab of the user's `agents` lists.
fn first_user_tab(agents: &serde_json::Value) -> Option<String> {
    agents["user_tabs"]
        .as_array()
        .unwrap()
        .first()
        .map(|t| t["id"].as_str().unwrap().to_string())
}

#[test]
fn a_tab_no_command_opened_is_the_users_until_the_user_gives_it() {
    let b = browser();
    b.ok("ann", &["goto", &b.site.url("/later-popup")]);
    b.ok("bob", &["goto", &b.page("bob")]);
    let yaml = read_snapshot(b.sandbox(), &b.ok("ann", &["snapshot"]).stdout);
    b.ok("ann", &["click", &reference(&yaml, "Open later")]);
    // The page opened a popup by itself, between commands.
    let mut user_tab = None;
    for _ in 0..50 {
        thread::sleep(Duration::from_millis(100));
        b.ok("bob", &["tab-list"]);
        if let Some(id) = first_user_tab(&b.agents()) {
            user_tab = Some(id);
            break;
        }
    }
    let user_tab = user_tab.expect("the page's own popup appeared");
    assert_eq!(
        b.tabs("ann").len(),
        1,
        "not ann's: no command of hers opened it"
    );
    refused(
        &b,
        "ann",
        &["snapshot", "--tab", &user_tab],
        7,
        "is the user's",
    );
    // No agent takes it: the user gives it.
    refused(
        &b,
        "bob",
        &["tab-claim", &user_tab],
        7,
        "only the user can give it",
    );
    let listed = b.ok("person", &["agents"]).stdout;
    assert!(
        listed.contains(&format!("  {user_tab} (appeared between commands")),
        "{listed}"
    );
    let given = b.ok("person", &["tab-give", &user_tab, "bob"]);
    assert!(
        given
            .stdout
            .contains(&format!("gave {user_tab} to agent bob")),
        "{}",
        given.stdout
    );
    let claimed = b.ok("bob", &["tab-claim", &user_tab, "--label", "found"]);
    assert!(
        claimed
            .stdout
            .contains(&format!("{user_tab} found (current)")),
        "{}",
        claimed.stdout
    );
    run_as(b.sandbox(), "ann", &["tab-claim", &user_tab]).expect(7, "is agent bob's");
    run_as(b.sandbox(), "person", &["tab-give", &user_tab, "ann"]).expect(7, "is agent bob's");
    let yaml = read_snapshot(b.sandbox(), &b.ok("bob", &["snapshot"]).stdout);
    assert!(yaml.contains(POPUP_TEXT), "{yaml}");
    // Given back with --keep: open, the user's again.
    b.ok("bob", &["release", "--tab", "found", "--keep"]);
    assert_eq!(first_user_tab(&b.agents()), Some(user_tab.clone()));
    // A tab bob opened himself: with --keep it stays open, the user's;
    // without, it is closed.
    let id_of = |label: &str| {
        b.tabs("bob")
            .into_iter()
            .find(|t| t.1.as_deref() == Some(label))
            .unwrap()
            .0
    };
    let everywhere = || {
        let agents = b.agents();
        let mut ids: Vec<String> = agents["user_tabs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_string())
            .collect();
        for a in agents["agents"].as_array().unwrap() {
            for t in a["tabs"].as_array().unwrap() {
                ids.push(t["id"].as_str().unwrap().to_string());
            }
        }
        (ids, agents["user_tabs"].clone())
    };
    b.ok("bob", &["tab-new", "--label", "kept", &b.page("bob")]);
    let kept = id_of("kept");
    b.ok("bob", &["release", "--tab", "kept", "--keep"]);
    let (ids, user) = everywhere();
    assert!(ids.contains(&kept), "{ids:?}");
    assert!(
        user.as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == kept.as_str()),
        "{user}"
    );
    b.ok("bob", &["tab-new", "--label", "closed", &b.page("bob")]);
    let closed = id_of("closed");
    b.ok("bob", &["release", "--tab", "closed"]);
    b.ok("bob", &["tab-list"]);
    let (ids, _) = everywhere();
    assert!(
        !ids.contains(&closed),
        "{closed} is still in the session: {ids:?}"
    );
    assert!(ids.contains(&kept), "{ids:?}");
}

#[test]
fn ids_of_an_earlier_session_and_a_broken_book_are_refused_with_the_way_out() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    let old = b.tabs("ann")[0].0.clone();
    b.ok("person", &["disconnect"]);
    b.ok("person", &["connect"]);
    // Its name ended with the session: under it now is a new registration,
    // which hears nothing of the earlier one's tabs; an old id is refused
    // as an earlier session's.
    let first = b.ok("ann", &["tab-list"]);
    assert!(
        !first.stderr.contains("earlier session"),
        "{}",
        first.stderr
    );
    assert!(!first.stderr.contains(&old), "{}", first.stderr);
    refused(
        &b,
        "ann",
        &["snapshot", "--tab", &old],
        2,
        "belongs to an earlier session",
    );
    b.ok("ann", &["goto", &b.page("ann")]);
    let new = b.tabs("ann")[0].0.clone();
    assert!(
        new[1..].parse::<u64>().unwrap() > old[1..].parse::<u64>().unwrap(),
        "{old} {new}"
    );
    // A book that is not ours — or an empty one, or one of another
    // session — stops every command, its content unquoted, with the way
    // back: never a fresh book that forgets every owner.
    let book = b.sandbox().runtime.join("tabs.json");
    let good = std::fs::read(&book).unwrap();
    let mut other: serde_json::Value = serde_json::from_slice(&good).unwrap();
    other["session"] = "0:0:0.0".into();
    for (content, said) in [
        (
            br#"{"version":1,"CANARY":true}"#.to_vec(),
            "is not a tab book of my-chrome",
        ),
        (Vec::new(), "is not a tab book of my-chrome (it is empty"),
        (vec![0; 64], "is not a tab book of my-chrome (it is empty"),
        (other.to_string().into_bytes(), "describes another session"),
    ] {
        write_private(&book, &content);
        let run = run_as(b.sandbox(), "ann", &["snapshot"]);
        run.expect(6, said);
        // The way back is the user's (every agent's tabs go with it): the
        // agent is told to ask, and handed no command for it.
        assert!(
            run.stderr.contains("Ask the user to recover it"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("A broken tab book"), "{}", run.stderr);
        assert!(!run.stderr.contains("rm "), "{}", run.stderr);
        assert!(
            !run.stderr.contains("my-chrome disconnect"),
            "{}",
            run.stderr
        );
        assert!(!run.stderr.contains("CANARY"));
        assert_eq!(std::fs::read(&book).unwrap(), content, "left as it was");
    }
    std::fs::remove_file(&book).unwrap();
    // Rebuilt from the session: every tab the user's until the user gives
    // it.
    b.ok("ann", &["tab-list"]);
    assert!(b.tabs("ann").is_empty());
    let mut agents = b.agents();
    assert_eq!(agents["agents"].as_array().unwrap().len(), 1, "{agents}");
    let taken = first_user_tab(&agents).unwrap();
    // Ids go on from where the removed book stopped: never one given before.
    let number = |id: &str| id[1..].parse::<u64>().unwrap();
    assert!(number(&taken) > number(&new), "{taken} after {new}");
    refused(
        &b,
        "ann",
        &["tab-claim", &taken],
        7,
        "only the user can give it",
    );
    b.ok("person", &["tab-give", &taken, "ann"]);
    // An agent without a command for the gone time (the user's setting)
    // is gone: its tabs are held for it. (Its last command is moved back
    // in the book, as the hours would have.)
    let mut written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&book).unwrap()).unwrap();
    written["agents"]["ann"]["last_at"] = 0.into();
    write_private(&book, written.to_string().as_bytes());
    // `agents` shows it as the next command will find it.
    let held_for_ann = |agents: &serde_json::Value| common::browser::held_for(agents, "ann");
    agents = b.agents();
    assert_eq!(
        held_for_ann(&agents),
        std::slice::from_ref(&taken),
        "{agents}"
    );
    b.ok("bob", &["tab-list"]);
    agents = b.agents();
    assert_eq!(
        held_for_ann(&agents),
        std::slice::from_ref(&taken),
        "{agents}"
    );
    // No other agent takes it; ann is told, and takes it again.
    refused(&b, "bob", &["tab-claim", &taken], 7, "held for agent ann");
    refused(&b, "ann", &["snapshot"], 8, "are held for you");
    b.ok("ann", &["tab-claim", &taken]);
    assert_eq!(b.tabs("ann")[0].0, taken);
    let log = std::fs::read_to_string(b.sandbox().runtime.join("lease.log")).unwrap();
    assert!(log.contains(" GONE agent=ann idle="), "{log}");
}

/// Writes a private state file as my-chrome writes them (0600).
fn write_private(path: &std::path::Path, content: &[u8]) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, content).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
fn a_command_killed_mid_flight_leaves_every_tab_with_its_owner() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["goto", &b.page("bob")]);
    let ids = |agent: &str| -> Vec<String> { b.tabs(agent).into_iter().map(|t| t.0).collect() };
    let (ann, bob) = (ids("ann"), ids("bob"));
    // ann's command waits on a slow page; my-chrome is killed mid-flight,
    // after it selected her tab and sent her request.
    let mut slow = Running::start(as_agent(
        b.sandbox(),
        "ann",
        &["goto", &b.site.url("/slow")],
    ));
    let mut in_flight = false;
    for _ in 0..100 {
        if b.agents()["running"]["agent"] == "ann" && b.site.was_requested("/slow") {
            in_flight = true;
            break;
        }
        thread::sleep(Duration::from_millis(100));
    }
    assert!(in_flight, "ann's goto never reached the page");
    slow.child.kill().unwrap();
    slow.child.wait().unwrap();
    // bob reads his own page on his own tab; nothing of his moved.
    let title = b.ok("bob", &["eval", "document.title"]);
    assert!(title.stdout.contains("Agent bob"), "{}", title.stdout);
    assert_eq!(ids("bob"), bob);
    // ann's tab is still hers, and her next command runs on it.
    assert_eq!(ids("ann"), ann);
    b.ok("ann", &["goto", &b.page("ann")]);
    let title = b.ok("ann", &["eval", "document.title"]);
    assert!(title.stdout.contains("Agent ann"), "{}", title.stdout);
    assert_eq!(ids("bob"), bob);
}

/// A small deterministic generator (xorshift): the same pauses and choices
/// on every run, different for each agent.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

#[test]
fn six_agents_by_forty_commands_with_tabs_opening_and_closing_never_cross() {
    let b = Arc::new(browser());
    let names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
    let workers: Vec<_> = names
        .into_iter()
        .enumerate()
        .map(|(n, agent)| {
            let b = Arc::clone(&b);
            thread::spawn(move || {
                let mut dice = Dice(0x9e37_79b9_7f4a_7c15 ^ ((n as u64 + 1) * 0x1234_5677));
                let mut wrong = Vec::new();
                let mut done = 0;
                // Its main page, and (at times) a second tab on a page of
                // its own that shows another text: a command on the wrong
                // one of its own tabs shows too.
                let more = format!("{agent}-more");
                b.ok(agent, &["goto", &b.page(agent)]);
                let mut extra = false;
                let mut on_more = false;
                for step in 0..40 {
                    thread::sleep(Duration::from_millis(dice.roll(60)));
                    // The page a read must show: `--tab more` at times.
                    let named = extra && dice.roll(3) == 0;
                    let expect = if named || on_more { &more } else { agent };
                    let tab: &[&str] = if named { &["--tab", "more"] } else { &[] };
                    let run = match dice.roll(10) {
                        0 if !extra => {
                            extra = true;
                            on_more = true;
                            b.ok(agent, &["tab-new", "--label", "more", &b.page(&more)])
                        }
                        1 if extra => {
                            extra = false;
                            on_more = false;
                            // Closed, or (another's tab after it) left
                            // open as the user's: gone from its tabs.
                            let run = run_as(b.sandbox(), agent, &["tab-close", "more"]);
                            if run.code != 0 {
                                run.expect(7, "was not closed");
                            }
                            run
                        }
                        2 if extra => {
                            on_more = false;
                            b.ok(agent, &["tab-select", "0"])
                        }
                        3..=5 => {
                            let run = b.ok(agent, &[&["snapshot"][..], tab].concat());
                            let yaml = read_snapshot(b.sandbox(), &run.stdout);
                            if !shows_exactly(&yaml, expect) {
                                wrong.push(format!("step {step}: {agent} on {expect} read {yaml}"));
                            }
                            Run {
                                stdout: run.stdout + &yaml,
                                ..run
                            }
                        }
                        _ => {
                            let run = b.ok(agent, &[&["eval", "document.title"][..], tab].concat());
                            if !run.stdout.contains(&format!("\"Agent {expect}\"")) {
                                wrong.push(format!(
                                    "step {step}: {agent} on {expect} read {}",
                                    run.stdout
                                ));
                            }
                            run
                        }
                    };
                    if let Some(leak) = mentions_others(&run.stdout, agent, &names) {
                        wrong.push(leak);
                    }
                    done += 1;
                }
                (wrong, done)
            })
        })
        .collect();
    let mut wrong = Vec::new();
    for worker in workers {
        let (found, done) = worker.join().unwrap();
        assert_eq!(done, 40, "every command ran");
        wrong.extend(found);
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    for name in names {
        for (_, _, _, url) in b.tabs(name) {
            assert!(url.contains(&format!("/agent/{name}")), "{name}: {url}");
        }
    }
    // Every command ran once, and is logged once: each agent's goto, its
    // forty, and its tab list just now.
    let log = std::fs::read_to_string(b.sandbox().runtime.join("lease.log")).unwrap();
    for name in names {
        let ran = log
            .lines()
            .filter(|l| l.contains(" RAN ") && l.contains(&format!("agent={name} ")))
            .count();
        assert_eq!(ran, 42, "{name}: {log}");
    }
    assert!(!log.contains("/agent/"), "no address in the log");
}

/// Whether a snapshot shows `page`'s text, and not another page of the
/// same agent (`alpha` vs `alpha-more`).
fn shows_exactly(yaml: &str, page: &str) -> bool {
    let text = agent_text(page);
    yaml.match_indices(&text)
        .any(|(at, _)| !yaml[at + text.len()..].starts_with('-'))
}
