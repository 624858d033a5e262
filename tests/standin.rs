//! The Chrome-and-extension stand-in, tested with the real pinned CLI and a
//! real headless Chromium (no my-chrome connect yet): the attach works end to
//! end, the hazards are reproducible, the singleton behaves like Chrome's,
//! and each fault produces its failure.

mod common;

use std::fs;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use common::pwcli::PwCli;
use common::site::{HOME_TEXT, SECOND_TEXT, Site};
use common::standin::{self, Options, Standin};
use common::{Sandbox, fresh_token};
use my_chrome::chrome::{Exposure, normal_chrome_pids, token_exposure};
use my_chrome::procs::ProcessTable;

const PAGE: &str = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html";

fn attach(cli: &PwCli) -> common::Run {
    let started = Instant::now();
    let run = cli.ok(&["attach", "--extension=chrome", "--session=t"]);
    eprintln!("attach completed in {} ms", started.elapsed().as_millis());
    run
}

#[test]
fn the_real_cli_attaches_and_drives_a_real_chromium() {
    let sandbox = Sandbox::installed();
    let token = fresh_token();
    let chrome = Standin::start(
        sandbox.home.path(),
        Options {
            token: Some(&token),
            ..Default::default()
        },
    );
    let site = Site::start();
    let cli = PwCli::new(&sandbox, Some(&token), &chrome.exe());

    let attached = attach(&cli);
    assert!(
        attached.stdout.contains("attached to `chrome`"),
        "{}",
        attached.stdout
    );
    // Worst case by default: the helper tab is exposed with its token.
    let tabs = cli.ok(&["-s=t", "tab-list"]).stdout;
    assert!(
        tabs.contains(PAGE) && tabs.contains(&format!("token={token}")),
        "{tabs}"
    );

    cli.ok(&["-s=t", "goto", &site.url("/")]);
    let snapshot = cli.ok(&["-s=t", "snapshot"]).stdout;
    let snapshot = read_snapshot(&sandbox, &snapshot);
    assert!(snapshot.contains(HOME_TEXT), "{snapshot}");

    let name_ref = reference(&snapshot, "Name");
    cli.ok(&["-s=t", "fill", &name_ref, "typed by the test"]);
    let password_ref = reference(&snapshot, "Password");
    cli.ok(&["-s=t", "type", "secret-in-page"]);
    cli.ok(&["-s=t", "fill", &password_ref, "pw"]);
    let link = reference(&snapshot, "Go to the second page");
    cli.ok(&["-s=t", "click", &link]);
    let second = read_snapshot(&sandbox, &cli.ok(&["-s=t", "snapshot"]).stdout);
    assert!(second.contains(SECOND_TEXT), "{second}");

    let shot = sandbox.home.path().join("shot.png");
    let shot_run = cli.ok(&[
        "-s=t",
        "screenshot",
        &format!("--filename={}", shot.display()),
    ]);
    let png = fs::read(&shot).unwrap_or_else(|e| panic!("{}: {e}; {shot_run:?}", shot.display()));
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 1000,
        "{} bytes",
        png.len()
    );

    // A page that opens a popup: the popup joins the exposed tabs.
    cli.ok(&["-s=t", "goto", &site.url("/")]);
    let home = read_snapshot(&sandbox, &cli.ok(&["-s=t", "snapshot"]).stdout);
    cli.ok(&["-s=t", "click", &reference(&home, "Open popup")]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cli.ok(&["-s=t", "tab-list"]).stdout.contains("Popup") {
        assert!(
            Instant::now() < deadline,
            "the popup never showed up in tab-list"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    let before = chrome.pages().len();
    cli.ok(&["-s=t", "tab-new"]);
    assert_eq!(
        chrome.pages().len(),
        before + 1,
        "tab-new opens a tab in the real Chromium"
    );

    cli.ok(&["-s=t", "detach"]);
    assert!(cli.ok(&["list"]).stdout.contains("no browsers"));
    assert!(chrome.alive(), "detach leaves the browser running");
    assert!(cli.leftovers().is_empty(), "{:?}", cli.leftovers());
}

/// The snapshot's YAML: inline, or in the file the CLI points at.
fn read_snapshot(sandbox: &Sandbox, output: &str) -> String {
    if let Some(start) = output.find("[Snapshot](") {
        let rest = &output[start + "[Snapshot](".len()..];
        let file = &rest[..rest.find(')').unwrap()];
        return fs::read_to_string(sandbox.runtime.join(file)).unwrap();
    }
    output.to_string()
}

/// The `[ref=…]` of the first snapshot line that mentions `label`.
fn reference(snapshot: &str, label: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(label) && l.contains("[ref="))
        .unwrap_or_else(|| panic!("no {label} in {snapshot}"));
    let start = line.find("[ref=").unwrap() + 5;
    line[start..start + line[start..].find(']').unwrap()].to_string()
}

#[test]
fn a_hidden_helper_tab_stays_out_of_view() {
    let sandbox = Sandbox::installed();
    let token = fresh_token();
    let chrome = Standin::start(
        sandbox.home.path(),
        Options {
            token: Some(&token),
            hide_helper: true,
            ..Default::default()
        },
    );
    let cli = PwCli::new(&sandbox, Some(&token), &chrome.exe());
    let attached = attach(&cli);
    let tabs = cli.ok(&["-s=t", "tab-list"]).stdout;
    assert!(!tabs.contains(PAGE), "{tabs}");
    assert!(!format!("{}{tabs}", attached.stdout).contains(&token));
    assert!(
        chrome.pages().iter().any(|(url, _)| url.starts_with(PAGE)),
        "the real tab still exists"
    );
    cli.ok(&["-s=t", "detach"]);
}

#[test]
fn a_wrong_token_never_completes_the_attach() {
    let sandbox = Sandbox::installed();
    let chrome = Standin::start(
        sandbox.home.path(),
        Options {
            token: Some(&fresh_token()),
            ..Default::default()
        },
    );
    let cli = PwCli::new(&sandbox, Some(&fresh_token()), &chrome.exe());
    let run = cli.run_within(
        &["attach", "--extension=chrome", "--session=t"],
        Duration::from_secs(6),
    );
    assert!(
        run.is_none(),
        "the attach completed with a wrong token: {run:?}"
    );
    assert!(
        chrome.log().contains("no matching token"),
        "{}",
        chrome.log()
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        cli.leftovers().is_empty(),
        "left running: {:?}",
        cli.leftovers()
    );
    assert!(chrome.alive());
}

#[test]
fn with_no_browser_running_the_spawned_one_keeps_the_token_in_its_command_line() {
    let sandbox = Sandbox::installed();
    let token = fresh_token();
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let exe = standin::install(dir.path(), Some(&token));
    let mut cli = PwCli::new(&sandbox, Some(&token), &exe);
    for (k, v) in standin::env(dir.path(), sandbox.home.path(), &Options::default()) {
        if k.starts_with("STANDIN_") {
            cli = cli.with(&k, &v);
        }
    }
    attach(&cli);
    let table = ProcessTable::read().unwrap();
    let spawned = normal_chrome_pids(&table, &exe);
    // Whatever happens below, the browser this test caused is stopped.
    let _stop = StopOnDrop(spawned.clone());
    assert_eq!(spawned.len(), 1, "{spawned:?}");
    let cmdline = fs::read(format!("/proc/{}/cmdline", spawned[0])).unwrap();
    let found = cmdline.windows(token.len()).any(|w| w == token.as_bytes());
    assert!(
        found,
        "the upstream hazard: the token is in the spawned browser's command line"
    );
    match token_exposure(&table) {
        Exposure::Exposed(pids) => assert!(pids.contains(&spawned[0]), "{pids:?}"),
        Exposure::Absent => panic!("my-chrome's scan must see it"),
    }
    cli.ok(&["-s=t", "detach"]);
}

/// Sends SIGTERM to these processes and waits for them, when dropped.
struct StopOnDrop(Vec<u32>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        for pid in &self.0 {
            common::wait_gone(&pid.to_string());
        }
    }
}

fn singleton_socket(sandbox: &Sandbox) -> std::path::PathBuf {
    fs::read_link(
        sandbox
            .home
            .path()
            .join(".config/google-chrome/SingletonSocket"),
    )
    .unwrap()
}

fn send(socket: &std::path::Path, message: &[u8]) -> String {
    let mut stream = UnixStream::connect(socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(message).unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

#[test]
fn the_singleton_opens_a_url_and_refuses_what_chrome_refuses() {
    let sandbox = Sandbox::installed();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    let site = Site::start();
    let socket = singleton_socket(&sandbox);
    let profile = sandbox.home.path().join(".config/google-chrome");
    let lock = fs::read_link(profile.join("SingletonLock")).unwrap();
    assert!(
        lock.to_string_lossy()
            .ends_with(&format!("-{}", chrome.pid)),
        "{lock:?}"
    );
    assert_eq!(
        fs::read_link(profile.join("SingletonCookie")).unwrap(),
        fs::read_link(socket.parent().unwrap().join("SingletonCookie")).unwrap()
    );
    assert_eq!(common::mode(socket.parent().unwrap()), 0o700);

    let url = site.url("/second");
    let answer = send(
        &socket,
        format!("START\0/tmp\0/opt/google/chrome/chrome\0{url}").as_bytes(),
    );
    assert_eq!(answer, "ACK");
    assert!(
        chrome.pages().iter().any(|(u, _)| *u == url),
        "{:?}",
        chrome.pages()
    );

    assert_eq!(
        send(&socket, b"HELLO\0/tmp\0chrome\0http://127.0.0.1:1/"),
        "",
        "malformed: no answer"
    );

    // A second "Chrome" started with a URL hands it over and exits 0.
    let popup = site.url("/popup");
    let client = std::process::Command::new(chrome.exe())
        .arg(&popup)
        .env_clear()
        .env("HOME", sandbox.home.path())
        .status()
        .unwrap();
    assert!(client.success());
    assert!(chrome.pages().iter().any(|(u, _)| *u == popup));

    // A bad cookie, and a lock naming a process that is not this browser: refused.
    let cookie = profile.join("SingletonCookie");
    let good_cookie = fs::read_link(&cookie).unwrap();
    fs::remove_file(&cookie).unwrap();
    std::os::unix::fs::symlink("12345", &cookie).unwrap();
    let refused = client_status(&chrome, &sandbox, &site.url("/?cookie"));
    assert_eq!(refused, Some(21), "bad cookie");
    fs::remove_file(&cookie).unwrap();
    std::os::unix::fs::symlink(&good_cookie, &cookie).unwrap();

    let lock_path = profile.join("SingletonLock");
    let host = lock
        .to_string_lossy()
        .rsplit_once('-')
        .unwrap()
        .0
        .to_string();
    fs::remove_file(&lock_path).unwrap();
    std::os::unix::fs::symlink(format!("{host}-{}", std::process::id()), &lock_path).unwrap();
    assert_eq!(
        client_status(&chrome, &sandbox, &site.url("/?lock")),
        Some(21),
        "lock names another pid"
    );
    assert!(
        !chrome
            .pages()
            .iter()
            .any(|(u, _)| u.contains("?cookie") || u.contains("?lock"))
    );
}

fn client_status(chrome: &Standin, sandbox: &Sandbox, url: &str) -> Option<i32> {
    std::process::Command::new(chrome.exe())
        .arg(url)
        .env_clear()
        .env("HOME", sandbox.home.path())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .code()
}

fn attach_with_fault(faults: &str) -> (Sandbox, Standin, PwCli, Option<common::Run>) {
    let sandbox = Sandbox::installed();
    let token = fresh_token();
    let chrome = Standin::start(
        sandbox.home.path(),
        Options {
            token: Some(&token),
            faults,
            ..Default::default()
        },
    );
    let cli = PwCli::new(&sandbox, Some(&token), &chrome.exe());
    let run = cli.run_within(
        &["attach", "--extension=chrome", "--session=t"],
        Duration::from_secs(20),
    );
    (sandbox, chrome, cli, run)
}

#[test]
fn a_refused_websocket_fails_the_attach() {
    let (_s, chrome, cli, run) = attach_with_fault("refuse-websocket");
    let run = run.expect("the attach must fail, not hang");
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        chrome.log().contains("closing the relay connection"),
        "{}",
        chrome.log()
    );
    assert!(cli.ok(&["list"]).stdout.contains("no browsers"));
}

#[test]
fn a_dropped_connection_fails_the_attach() {
    let (_s, chrome, _cli, run) = attach_with_fault("drop-after=2");
    let run = run.expect("the attach must fail, not hang");
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        chrome.log().contains("dropping the relay connection"),
        "{}",
        chrome.log()
    );
}

#[test]
fn slow_answers_still_attach() {
    let started = Instant::now();
    let (_s, chrome, cli, run) = attach_with_fault("delay-ms=150");
    let run = run.expect("a slow extension still attaches");
    assert_eq!(run.code, 0, "{}", run.stderr);
    eprintln!(
        "attach with 150 ms per answer took {} ms",
        started.elapsed().as_millis()
    );
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert!(chrome.alive());
    cli.ok(&["-s=t", "detach"]);
}

#[test]
fn a_second_main_process_appears_during_attach() {
    let (_s, chrome, cli, run) = attach_with_fault("spawn-second-main");
    assert!(run.is_some());
    let pids = normal_chrome_pids(&ProcessTable::read().unwrap(), &chrome.exe());
    assert_eq!(pids.len(), 2, "{pids:?}");
    assert!(pids.contains(&chrome.pid));
    let _ = cli.run_within(&["-s=t", "detach"], Duration::from_secs(20));
}

#[test]
fn an_abrupt_exit_takes_chromium_with_it() {
    let (_s, mut chrome, cli, run) = attach_with_fault("exit-after=3");
    assert!(chrome.wait_gone(), "the stand-in did not exit");
    let run = run.expect("the attach must fail, not hang");
    assert_ne!(run.code, 0, "{}", run.stdout);
    let port = chrome
        .endpoint
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_err(),
        "Chromium outlived it"
    );
    let _ = cli.run_within(&["-s=t", "close"], Duration::from_secs(20));
}
