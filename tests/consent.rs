//! The user's consent, asked in the user's browser (docs/DESIGN.md, "Asking
//! the user"). Agent bob, with ordinary `my-chrome` commands only, asks for
//! what only the user may grant: another agent's held tab, wider settings,
//! a connect. Each is a request the person at the keyboard answers on a page
//! my-chrome opens in the browser; refused, closed, unanswered, or answered
//! by anyone but that page, nothing changes. The real binary, the real
//! pinned CLI, the Chrome stand-in (a real Chromium, whose person clicks
//! with real mouse input: tests/chrome-standin/PROTOCOL.md).

mod common;

use std::time::Duration;

use common::browser::{Browser, as_agent, browser, held_for, run_as};
use common::site::agent_text;
use common::{Run, Running};

/// A step of bob's, answered as the stand-in's person now does.
fn bob(b: &Browser, args: &[&str]) -> Run {
    run_as(b.sandbox(), "bob", args)
}

/// The same, with the user's answer awaited for 5 s only.
fn bob_briefly(b: &Browser, args: &[&str]) -> Run {
    let mut cmd = as_agent(b.sandbox(), "bob", args);
    cmd.env("MY_CHROME_CONSENT_WAIT_SECS", "5");
    Running::start(cmd).wait()
}

/// The ways a person does not confirm, and what bob is told of each.
const NOT_CONFIRMED: [(&str, &str); 3] = [
    ("refuse", "the user refused in the browser"),
    (
        "close",
        "the user closed the consent page without answering",
    ),
    ("away", "the user did not confirm within 5 s"),
];

fn settings(b: &Browser) -> serde_json::Value {
    b.sandbox().doctor()["settings"].clone()
}

/// A tab held for ann (she went quiet past the gone time) reaches bob
/// only once the person confirms it in the browser.
#[test]
fn a_tab_held_for_another_agent_is_given_only_by_the_users_click() {
    let b = browser();
    b.ok("person", &["setup", "--agent-gone", "10s"]);
    b.ok("ann", &["goto", &b.page("ann")]);
    let tab = b.tabs("ann")[0].0.clone();
    common::wait::until(
        "ann's tab to be held after the gone time",
        Duration::from_secs(40),
        || match held_for(&b.agents(), "ann").as_slice() {
            [held] if *held == tab => Ok(()),
            _ => Err(b.agents().to_string()),
        },
    );
    let mut runs = Vec::new();
    for (person, said) in NOT_CONFIRMED {
        b.chrome.person_will(person);
        let asked = bob_briefly(&b, &["tab-give", &tab, "bob"]);
        asked.expect(7, said);
        assert!(asked.stderr.contains("Nothing changed"), "{}", asked.stderr);
        assert_eq!(
            held_for(&b.agents(), "ann"),
            std::slice::from_ref(&tab),
            "{person}"
        );
        let read = bob(&b, &["snapshot", "--tab", &tab]);
        assert_eq!(read.code, 7, "{}", read.stderr);
        runs.push(asked);
        runs.push(read);
    }
    for run in &runs {
        assert!(
            !run.stdout.contains(&agent_text("ann")) && !run.stdout.contains("/agent/ann"),
            "{}",
            run.stdout
        );
        assert!(!run.stderr.contains("http://127.0.0.1"), "{}", run.stderr);
    }
    b.chrome.person_will("confirm");
    let given = bob(&b, &["tab-give", &tab, "bob"]);
    given.expect(0, "asked the user in");
    assert!(
        given
            .stdout
            .contains(&format!("the user gave {tab} to agent bob")),
        "{}",
        given.stdout
    );
    let read = b.ok("bob", &["snapshot", "--tab", &tab]);
    assert!(read.stdout.contains("/agent/ann"), "{}", read.stdout);
    assert!(
        b.tabs("bob").iter().any(|t| t.0 == tab),
        "{:?}",
        b.tabs("bob")
    );
    assert!(held_for(&b.agents(), "ann").is_empty());
}

/// Every setting that lets agents do more, or a session live longer, is a
/// request; one that only tightens needs no one (and no browser).
#[test]
fn a_wider_setting_is_the_users_click_a_tighter_one_is_anyones() {
    let b = browser();
    let before = settings(&b);
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap().to_string();
    let widening: [&[&str]; 6] = [
        &["setup", "--agent-gone", "10s"],
        &["setup", "--idle-limit", "0"],
        &["setup", "--idle-limit", "2h"],
        &["setup", "--lifetime-limit", "2d"],
        &["setup", "--file-root", &root],
        &["setup", "--connect-consent", "off"],
    ];
    for (person, said) in NOT_CONFIRMED {
        b.chrome.person_will(person);
        for step in widening {
            let run = bob_briefly(&b, step);
            run.expect(7, said);
            assert_eq!(settings(&b), before, "{person}: {step:?}");
        }
    }
    // Tightening asks nobody: it works with the person away.
    b.chrome.person_will("away");
    let tighter = bob(&b, &["setup", "--agent-gone", "1h", "--idle-limit", "10m"]);
    tighter.expect(0, "");
    assert!(
        !tighter.stderr.contains("asked the user"),
        "{}",
        tighter.stderr
    );
    assert_eq!(settings(&b)["agent_gone_secs"], 3600, "{}", settings(&b));
    // Confirmed, it happens.
    b.chrome.person_will("confirm");
    let wider = bob(&b, &["setup", "--lifetime-limit", "2d"]);
    wider.expect(0, "asked the user in");
    assert_eq!(
        settings(&b)["lifetime_limit_secs"],
        172800,
        "{}",
        settings(&b)
    );
}

/// `connect` asks the person first: refused, nothing is attached and the
/// token goes nowhere. Turned off with their consent, it asks no more.
#[test]
fn connect_attaches_only_after_the_users_click_unless_they_turned_that_off() {
    let b = browser();
    b.ok("person", &["disconnect"]);
    let delivered = || {
        b.chrome
            .log()
            .matches("opening chrome-extension://")
            .count()
    };
    let before = delivered();
    for (person, said) in NOT_CONFIRMED {
        b.chrome.person_will(person);
        bob_briefly(&b, &["connect"]).expect(7, said);
        assert_eq!(
            b.sandbox().doctor()["session"]["status"],
            "missing",
            "{person}"
        );
        assert_eq!(delivered(), before, "{person}: the token went nowhere");
    }
    b.chrome.person_will("confirm");
    bob(&b, &["setup", "--connect-consent", "off"]).expect(0, "asked the user in");
    b.chrome.person_will("away");
    let connected = bob(&b, &["connect"]);
    connected.expect(0, "");
    assert!(
        !connected.stderr.contains("asked the user"),
        "{}",
        connected.stderr
    );
    assert_eq!(delivered(), before + 1);
    // Turning it on again is tightening: anyone, no browser click.
    bob(&b, &["setup", "--connect-consent", "on"]).expect(0, "");
    assert_eq!(settings(&b)["connect_consent"], true, "{}", settings(&b));
}

/// bob's `setup --lifetime-limit 2d`, under way, and the address of the
/// consent page it opened (the test looks into Chromium for it: no output
/// of my-chrome's names it), not one of `earlier`.
/// Waits until a consent page shows in the stand-in browser.
fn consent_page_opens(b: &Browser) {
    common::wait::until(
        "the consent page to open",
        Duration::from_secs(20),
        || match b
            .chrome
            .pages()
            .iter()
            .any(|(_, t)| t == "my-chrome asks you")
        {
            true => Ok(()),
            false => Err(format!("{:?}", b.chrome.pages())),
        },
    );
}

fn bob_asks_for_a_longer_session(b: &Browser, earlier: &[String]) -> (Running, String) {
    let asking = Running::start(as_agent(
        b.sandbox(),
        "bob",
        &["setup", "--lifetime-limit", "2d"],
    ));
    let mut url = None;
    common::wait::until("the consent page to open", Duration::from_secs(20), || {
        url = b
            .chrome
            .pages()
            .into_iter()
            .find(|(u, title)| title == "my-chrome asks you" && !earlier.contains(u))
            .map(|(u, _)| u);
        url.as_ref()
            .map(|_| ())
            .ok_or_else(|| format!("{:?}", b.chrome.pages()))
    });
    (asking, url.unwrap())
}

/// A page of the session cannot answer the consent page, nor open it: its
/// answer carries the page's own origin, and the page is served once. Even
/// with the address (which only the test, looking into Chromium, knows),
/// bob's page ends the request refused, and nothing changes.
#[test]
fn a_page_of_the_session_can_neither_answer_nor_open_the_consent_page() {
    let b = browser();
    b.ok("bob", &["goto", &b.page("bob")]);
    let before = settings(&b);
    let forge = |url: &str| {
        format!(
            "fetch('{url}', {{method: 'POST', mode: 'no-cors', headers: {{'Content-Type': \
             'application/x-www-form-urlencoded'}}, body: 'nonce=0&answer=confirm'}}).then(() => \
             'sent', e => 'failed: ' + e)"
        )
    };
    type Attack = fn(&Browser, &str, &dyn Fn(&str) -> String) -> Run;
    let attacks: [(&str, Attack); 2] = [
        ("a cross-origin post", |b, url, forge| {
            bob(b, &["eval", &forge(url)])
        }),
        ("a second opening", |b, url, _| bob(b, &["goto", url])),
    ];
    let mut earlier = Vec::new();
    for (what, attack) in attacks {
        b.chrome.person_will("away");
        let (asking, url) = bob_asks_for_a_longer_session(&b, &earlier);
        earlier.push(url.clone());
        let listed = b.sandbox().daemon_says(&["tab-list"]);
        assert!(!listed.contains(&url), "{what}: in the session: {listed}");
        let attacked = attack(&b, &url, &forge);
        let ended = asking.wait();
        assert_eq!(attacked.code, 0, "{what}: {}", attacked.stderr);
        assert_eq!(ended.code, 6, "{what}: {}", ended.stderr);
        assert!(
            ended
                .stderr
                .contains("the request was ended and nothing changed"),
            "{}",
            ended.stderr
        );
        assert!(!ended.stderr.contains(&url), "{}", ended.stderr);
        assert_eq!(settings(&b), before, "{what}");
    }
    // Framed by bob's page while the person reads it, it shows bob nothing:
    // the browser refuses to frame it (or it ends the request, opened a
    // second time); the person's click is the only answer that counts.
    b.chrome.person_will("confirm,read-ms=5000");
    let (asking, url) = bob_asks_for_a_longer_session(&b, &earlier);
    let framed = bob(
        &b,
        &[
            "eval",
            &format!(
                "new Promise(done => {{ const f = document.createElement('iframe'); \
                 f.src = '{url}'; f.onload = () => {{ try {{ \
                 done(f.contentDocument ? f.contentDocument.body.innerText : 'nothing'); }} \
                 catch (e) {{ done('unreadable'); }} }}; document.body.append(f); \
                 setTimeout(() => done('no load'), 3000); }})"
            ),
        ],
    );
    assert_eq!(framed.code, 0, "{}", framed.stderr);
    assert!(
        !framed.stdout.contains("Confirm") && !framed.stdout.contains("asks you"),
        "{}",
        framed.stdout
    );
    let ended = asking.wait();
    match ended.code {
        0 => assert_eq!(settings(&b)["lifetime_limit_secs"], 172800),
        6 => assert_eq!(settings(&b), before),
        _ => panic!("{}", ended.stderr),
    }
}

/// What the person confirmed is what happens, or nothing: a setting that
/// changed while they read (here, by another command that only tightened)
/// makes bob's confirmed change something else, so it is not made.
#[test]
fn a_change_confirmed_for_settings_that_moved_meanwhile_is_not_made() {
    let b = browser();
    b.chrome.person_will("confirm,read-ms=4000");
    let asking = Running::start(as_agent(
        b.sandbox(),
        "bob",
        &["setup", "--agent-gone", "10s"],
    ));
    consent_page_opens(&b);
    b.ok("person", &["setup", "--agent-gone", "1h"]);
    let ended = asking.wait();
    ended.expect(7, "the settings changed while the user was asked");
    assert_eq!(settings(&b)["agent_gone_secs"], 3600, "{}", settings(&b));
}

/// What the person confirmed is given to the agent they were asked about,
/// or to nobody: a tab of the user's was asked for bob, and his name ended and
/// was registered anew (by another process, with another key) while the
/// person read, so the tab is not given to the new holder of the name.
#[test]
fn a_tab_confirmed_for_an_agent_whose_name_was_registered_anew_is_not_given() {
    let b = browser();
    b.ok("ann", &["goto", &b.page("ann")]);
    b.ok("bob", &["tab-list"]);
    let tab = b.tabs("ann")[0].0.clone();
    // Ann lets it go, open: the user's, to give.
    b.ok("ann", &["release", "--tab", &tab, "--keep"]);
    b.chrome.person_will("confirm,read-ms=4000");
    // Ann asks for it to go to bob (any agent may ask).
    let asking = Running::start(as_agent(b.sandbox(), "ann", &["tab-give", &tab, "bob"]));
    consent_page_opens(&b);
    b.ok("bob", &["release"]);
    b.ok("bob", &["tab-list"]);
    let ended = asking.wait();
    ended.expect(7, "its name registered anew");
    assert!(
        ended.stderr.contains("nothing was given"),
        "{}",
        ended.stderr
    );
    assert!(
        b.tabs("bob").iter().all(|t| t.0 != tab),
        "{:?}",
        b.tabs("bob")
    );
    let users = b.agents()["user_tabs"].to_string();
    assert!(users.contains(&tab), "{users}");
}
