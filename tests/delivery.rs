//! Delivering a URL to the running Chrome through its process singleton,
//! against the Chrome stand-in: what passes every check arrives; anything
//! else is refused before a single byte is sent.

mod common;

use std::fs;
use std::io::Read;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::time::Duration;

use common::site::Site;
use common::standin::{Options, Standin};
use common::{Sandbox, fresh_token};
use my_chrome::exit::Exit;
use my_chrome::singleton::{DeliveryError, Opened, deliver};

const BOUND: Duration = Duration::from_secs(8);

fn profile(sandbox: &Sandbox) -> PathBuf {
    sandbox.home.path().join(".config/google-chrome")
}

fn send(sandbox: &Sandbox, chrome: &Standin, pid: u32, url: &str) -> Result<(), DeliveryError> {
    deliver(
        &profile(sandbox),
        pid,
        &chrome.exe(),
        url.as_bytes(),
        Opened::InFrontWindow,
        BOUND,
    )
}

/// Points `SingletonSocket` at a socket of the test's own, in a directory
/// with `mode`, with the profile's cookie beside it.
fn plant(sandbox: &Sandbox, mode: u32) -> (tempfile::TempDir, UnixListener) {
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(mode)).unwrap();
    let socket = dir.path().join("SingletonSocket");
    let listener = UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let cookie = fs::read_link(profile(sandbox).join("SingletonCookie")).unwrap();
    symlink(cookie, dir.path().join("SingletonCookie")).unwrap();
    let link = profile(sandbox).join("SingletonSocket");
    fs::remove_file(&link).unwrap();
    symlink(&socket, &link).unwrap();
    (dir, listener)
}

fn untrusted(result: Result<(), DeliveryError>, why: &str) {
    match result {
        Err(e @ DeliveryError::Untrusted(_)) => {
            assert!(e.to_string().contains(why), "{e}");
            assert_eq!(e.exit(), Exit::Security);
        }
        other => panic!("expected a refusal ({why}), got {other:?}"),
    }
}

#[test]
fn a_url_reaches_the_chrome_that_was_checked() {
    let sandbox = Sandbox::new();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    let site = Site::start();
    let url = site.url("/second");
    send(&sandbox, &chrome, chrome.pid, &url).unwrap();
    assert!(
        chrome.pages().iter().any(|(u, _)| *u == url),
        "{:?}",
        chrome.pages()
    );
}

#[test]
fn a_token_bearing_url_reaches_chrome_and_no_process_holds_it() {
    let sandbox = Sandbox::new();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    let token = fresh_token();
    let url = format!(
        "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?protocolVersion=2&token={token}"
    );
    send(&sandbox, &chrome, chrome.pid, &url).unwrap();
    // The extension page fails to load in Chromium; its tab keeps the URL as its title.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !chrome
        .pages()
        .iter()
        .any(|(u, t)| u.contains(&token) || t.contains(&token))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "Chrome never opened it: {:?}",
            chrome.pages()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        for part in ["cmdline", "environ"] {
            let bytes = fs::read(entry.path().join(part)).unwrap_or_default();
            let found = bytes.windows(token.len()).any(|w| w == token.as_bytes());
            assert!(
                !found,
                "{} holds the token in its {part}",
                entry.path().display()
            );
        }
    }
}

/// Nothing new opens in Chrome (it opens tabs asynchronously: give it time).
fn nothing_opened(chrome: &Standin, before: usize) {
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        chrome.pages().len(),
        before,
        "something reached Chrome: {:?}",
        chrome.pages()
    );
}

fn not_chrome(result: Result<(), DeliveryError>, why: &str) {
    match result {
        Err(e @ DeliveryError::NotChrome(_)) => {
            assert!(e.to_string().contains(why), "{e}");
            assert_eq!(e.exit(), Exit::Chrome);
            assert!(!e.sent());
        }
        other => panic!("expected a refusal ({why}), got {other:?}"),
    }
}

#[test]
fn a_lock_naming_another_pid_or_host_sends_nothing() {
    let sandbox = Sandbox::new();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    let before = chrome.pages().len();
    let why = format!("lock names pid {}", chrome.pid);
    not_chrome(
        send(&sandbox, &chrome, chrome.pid + 1, "about:blank#other-pid"),
        &why,
    );
    let lock = profile(&sandbox).join("SingletonLock");
    fs::remove_file(&lock).unwrap();
    symlink(format!("elsewhere.example-{}", chrome.pid), &lock).unwrap();
    not_chrome(
        send(&sandbox, &chrome, chrome.pid, "about:blank#other-host"),
        "another host",
    );
    nothing_opened(&chrome, before);
}

#[test]
fn a_missing_socket_is_no_chrome_not_a_fault() {
    let sandbox = Sandbox::new();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    fs::remove_file(profile(&sandbox).join("SingletonSocket")).unwrap();
    not_chrome(
        send(&sandbox, &chrome, chrome.pid, "about:blank#x"),
        "SingletonSocket cannot be read",
    );
}

#[test]
fn a_url_that_would_not_stay_one_argument_is_refused() {
    let sandbox = Sandbox::new();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    for url in [
        "about:blank\0--remote-debugging-port=9222",
        "--remote-debugging-port=9222",
    ] {
        match send(&sandbox, &chrome, chrome.pid, url) {
            Err(e @ DeliveryError::BadUrl(_)) => assert_eq!(e.exit(), Exit::Usage),
            other => panic!("{url:?}: expected a refusal, got {other:?}"),
        }
    }
}

#[test]
fn a_socket_in_a_directory_others_can_enter_is_never_connected_to() {
    let sandbox = Sandbox::new();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    let (_dir, planted) = plant(&sandbox, 0o755);
    untrusted(
        send(&sandbox, &chrome, chrome.pid, "about:blank#planted"),
        "has mode 0755",
    );
    assert!(
        planted.accept().is_err(),
        "the planted socket was connected to"
    );
}

#[test]
fn a_socket_directory_of_another_user_is_never_connected_to() {
    if !common::can_give_files_away() {
        return;
    }
    let sandbox = Sandbox::new();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    let (dir, planted) = plant(&sandbox, 0o700);
    nix::unistd::chown(dir.path(), Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    untrusted(
        send(&sandbox, &chrome, chrome.pid, "about:blank#foreign"),
        "owned by uid 65534",
    );
    assert!(
        planted.accept().is_err(),
        "the planted socket was connected to"
    );
}

#[test]
fn a_socket_served_by_another_process_gets_no_bytes() {
    let sandbox = Sandbox::new();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    let (_dir, planted) = plant(&sandbox, 0o700);
    planted.set_nonblocking(false).unwrap();
    let reader = std::thread::spawn(move || {
        let (mut stream, _) = planted.accept().unwrap();
        let mut got = Vec::new();
        stream.read_to_end(&mut got).unwrap();
        got
    });
    let why = format!("served by pid {}", std::process::id());
    untrusted(
        send(&sandbox, &chrome, chrome.pid, "about:blank#impostor"),
        &why,
    );
    assert_eq!(reader.join().unwrap(), b"", "bytes reached the impostor");
}

#[test]
fn cookies_that_differ_are_refused() {
    let sandbox = Sandbox::new();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    let before = chrome.pages().len();
    let cookie = profile(&sandbox).join("SingletonCookie");
    fs::remove_file(&cookie).unwrap();
    symlink("424242", &cookie).unwrap();
    untrusted(
        send(&sandbox, &chrome, chrome.pid, "about:blank#cookie"),
        "cookies differ",
    );
    nothing_opened(&chrome, before);
}

#[test]
fn anything_but_ack_fails_closed() {
    let sandbox = Sandbox::new();
    for (fault, why, exit) in [
        ("singleton=shutdown", "answered \"SHUTDOWN\"", Exit::Chrome),
        ("singleton=silent", "no answer", Exit::Chrome),
        ("singleton=hang", "did not answer within 1 s", Exit::Timeout),
    ] {
        let options = Options {
            faults: fault,
            ..Default::default()
        };
        let chrome = Standin::start(sandbox.home.path(), options);
        let exe = chrome.exe();
        let result = deliver(
            &profile(&sandbox),
            chrome.pid,
            &exe,
            b"about:blank#x",
            Opened::InFrontWindow,
            Duration::from_secs(1),
        );
        match result {
            Err(e) => {
                assert!(e.to_string().contains(why), "{fault}: {e}");
                assert_eq!(e.exit(), exit, "{fault}");
                assert!(e.sent(), "{fault}: the URL was sent");
            }
            Ok(()) => panic!("{fault}: delivered"),
        }
    }
}
