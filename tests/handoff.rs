//! The hand-off between connect and the relay's "browser", with real
//! processes: the courier (`my-chrome <connect URL>`) is accepted only from
//! inside the attach child's process tree, run by us, with a token-free URL.

mod common;

use std::fs;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{BIN, Sandbox};
use my_chrome::config::RuntimeLocation;
use my_chrome::handoff::{Handoff, HandoffError};
use my_chrome::runtime::Runtime;

const URL: &str = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?mcpRelayUrl=ws%3A%2F%2F127.0.0.1%3A41234%2Fextension%2F0f8fad5b-d9cb-469f-a165-70867728950e&protocolVersion=2";

fn runtime(sandbox: &Sandbox) -> Runtime {
    Runtime::open(&RuntimeLocation {
        path: sandbox.runtime.clone(),
    })
    .unwrap()
}

/// A stand-in for the attach child: a shell that runs the courier, as the
/// CLI's daemon would, and records its exit code.
fn attach_child(sandbox: &Sandbox, handoff: &Handoff, url: &str) -> (Child, std::path::PathBuf) {
    let out = sandbox.home.path().join("courier.exit");
    common::isolation::check_carried([url], []);
    let child = Command::new("/bin/sh")
        .args(["-c", "\"$0\" \"$1\"; echo $? > \"$2\"", BIN, url])
        .arg(&out)
        .env_clear()
        .env("HOME", sandbox.home.path())
        .env("MY_CHROME_HANDOFF", handoff.socket_path())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (child, out)
}

fn courier_exit(mut child: Child, out: &std::path::Path) -> String {
    child.wait().unwrap();
    fs::read_to_string(out).unwrap().trim().to_string()
}

#[test]
fn a_courier_from_the_attach_tree_hands_over_the_url() {
    let sandbox = Sandbox::new();
    let handoff = Handoff::open(&runtime(&sandbox)).unwrap();
    assert_eq!(common::mode(handoff.socket_path().parent().unwrap()), 0o700);
    let (child, out) = attach_child(&sandbox, &handoff, URL);
    let courier = handoff.accept(child.id(), Duration::from_secs(20)).unwrap();
    assert_eq!(courier.url.as_str(), URL);
    courier.answer(true);
    assert_eq!(courier_exit(child, &out), "0");
}

#[test]
fn a_courier_told_no_exits_non_zero() {
    let sandbox = Sandbox::new();
    let handoff = Handoff::open(&runtime(&sandbox)).unwrap();
    let (child, out) = attach_child(&sandbox, &handoff, URL);
    handoff
        .accept(child.id(), Duration::from_secs(20))
        .unwrap()
        .answer(false);
    assert_eq!(courier_exit(child, &out), "1");
}

#[test]
fn a_courier_from_outside_the_attach_tree_is_an_impostor() {
    let sandbox = Sandbox::new();
    let handoff = Handoff::open(&runtime(&sandbox)).unwrap();
    let mut unrelated = Command::new("/bin/sleep").arg("30").spawn().unwrap();
    let (child, out) = attach_child(&sandbox, &handoff, URL);
    match handoff.accept(unrelated.id(), Duration::from_secs(20)) {
        Err(e @ HandoffError::Impostor(_)) => {
            assert!(
                e.to_string().contains("was not started by the attach"),
                "{e}"
            );
            assert_eq!(e.exit(), my_chrome::exit::Exit::Security);
        }
        Err(other) => panic!("expected an impostor, got {other}"),
        Ok(_) => panic!("expected an impostor, got a courier"),
    }
    assert_eq!(courier_exit(child, &out), "1", "the impostor got no OK");
    unrelated.kill().unwrap();
    unrelated.wait().unwrap();
}

#[test]
fn a_bare_or_token_bearing_courier_is_refused() {
    let sandbox = Sandbox::new();
    let bare = sandbox.run(&[URL]);
    bare.expect(2, "a bare connect URL is refused");

    // A courier handed a token-bearing URL refuses to carry it, and tells
    // the hand-off so, without the URL: connect stops at once.
    let handoff = Handoff::open(&runtime(&sandbox)).unwrap();
    let (child, out) = attach_child(
        &sandbox,
        &handoff,
        &format!("{URL}&token=canary-not-a-real-token-0123456789"),
    );
    match handoff.accept(child.id(), Duration::from_secs(20)) {
        Err(e @ HandoffError::RefusedToken) => {
            assert_eq!(e.exit(), my_chrome::exit::Exit::Security);
            assert!(!e.to_string().contains("canary-not"), "{e}");
        }
        Err(other) => panic!("expected the courier's refusal, got {other}"),
        Ok(_) => panic!("expected the courier's refusal, got a URL"),
    }
    assert_eq!(courier_exit(child, &out), "6");
    // What the courier itself says, without the token.
    let handoff = Handoff::open(&runtime(&sandbox)).unwrap();
    let mut cmd = sandbox.command(&[&format!("{URL}&token=canary-not-a-real-token-0123456789")]);
    cmd.env("MY_CHROME_HANDOFF", handoff.socket_path());
    let courier = common::Running::start(cmd);
    let refused = handoff.accept(std::process::id(), Duration::from_secs(20));
    assert!(matches!(refused, Err(HandoffError::RefusedToken)));
    let run = courier.wait();
    run.expect(6, "already carries a token");
    assert!(!run.stderr.contains("canary-not"), "{}", run.stderr);

    // Anything else goes to the forwarder: only documented commands, and
    // those need the pinned CLI first.
    sandbox
        .run(&["frobnicate"])
        .expect(2, "not a command my-chrome forwards");
    sandbox
        .run(&["tab-list"])
        .expect(2, "run `my-chrome setup`");
}

#[test]
fn a_courier_that_refuses_its_url_says_why_at_once() {
    let sandbox = Sandbox::new();
    let handoff = Handoff::open(&runtime(&sandbox)).unwrap();
    let elsewhere = URL.replace("127.0.0.1", "10.0.0.1");
    let (child, out) = attach_child(&sandbox, &handoff, &elsewhere);
    let started = std::time::Instant::now();
    match handoff.accept(child.id(), Duration::from_secs(20)) {
        Err(e @ HandoffError::Refused(_)) => {
            let message = e.to_string();
            assert!(
                message
                    .contains("host is 10.0.0.1; the extension accepts only 127.0.0.1 and [::1]"),
                "{message}"
            );
            assert!(
                message.contains("nothing was sent to the browser"),
                "{message}"
            );
        }
        Err(other) => panic!("expected the courier's refusal, got {other}"),
        Ok(_) => panic!("expected the courier's refusal, got a URL"),
    }
    // Told at once, not when the bound ran out.
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(courier_exit(child, &out), "2");
}

#[test]
fn a_relay_on_the_ipv6_loopback_is_handed_over() {
    let sandbox = Sandbox::new();
    let handoff = Handoff::open(&runtime(&sandbox)).unwrap();
    let ipv6 = URL.replace("127.0.0.1", "%5B%3A%3A1%5D");
    let (child, out) = attach_child(&sandbox, &handoff, &ipv6);
    let courier = handoff.accept(child.id(), Duration::from_secs(20)).unwrap();
    assert_eq!(courier.url.as_str(), ipv6);
    courier.answer(true);
    assert_eq!(courier_exit(child, &out), "0");
}
