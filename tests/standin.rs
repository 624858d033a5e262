//! The Chrome-and-extension stand-in, tested with the real pinned CLI and a
//! real headless Chromium (no my-chrome connect yet): the attach works end to
//! end, the hazards are reproducible, the singleton behaves like Chrome's,
//! and each fault produces its failure.

mod common;

use std::fs;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::pwcli::PwCli;
use common::site::{HOME_TEXT, SECOND_TEXT, Site};
use common::standin::{self, Options, Standin};
use common::{Sandbox, fresh_token, process_gone, read_snapshot, reference};
use my_chrome::chrome::{Exposure, normal_chrome_pids, token_exposure};
use my_chrome::procs::ProcessTable;

const PAGE: &str = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html";

fn attach(cli: &PwCli) -> common::Run {
    let started = Instant::now();
    let run = cli.ok(&["attach", "--extension=chrome", "--session=t"]);
    eprintln!("attach completed in {} ms", started.elapsed().as_millis());
    run
}

fn screenshot(cli: &PwCli, path: &Path) {
    let run = cli.ok(&[
        "-s=t",
        "screenshot",
        &format!("--filename={}", path.display()),
    ]);
    let png = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}; {run:?}", path.display()));
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 1000,
        "{} bytes",
        png.len()
    );
}

/// Waits until `condition` holds (10 s at most).
fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The exposure scan, limited to these processes.
fn exposed_among(pids: &[u32]) -> Vec<u32> {
    match token_exposure(&ProcessTable::read().unwrap()) {
        Exposure::Exposed(all) => all.into_iter().filter(|p| pids.contains(p)).collect(),
        Exposure::Absent => vec![],
    }
}

#[test]
fn the_real_cli_attaches_and_drives_a_real_chromium() {
    let sandbox = Sandbox::installed();
    let token = fresh_token();
    let options = Options {
        token: Some(&token),
        ..Default::default()
    };
    let chrome = Standin::start(sandbox.home.path(), options);
    let site = Site::start();
    let cli = PwCli::new(&sandbox, Some(&token), &chrome.exe());

    let attached = attach(&cli);
    assert!(
        attached.stdout.contains("attached to `chrome`"),
        "{}",
        attached.stdout
    );
    // As the real extension does with a token: the session is attached to
    // the connect tab alone, its address (token included) in plain view.
    let tabs = cli.ok(&["-s=t", "tab-list"]).stdout;
    assert!(
        tabs.contains(PAGE) && tabs.contains(&format!("token={token}")),
        "{tabs}"
    );
    assert_eq!(
        tabs.lines().filter(|l| l.starts_with("- ")).count(),
        1,
        "{tabs}"
    );
    // The stand-in was handed the token privately: neither it nor its
    // Chromium carries it in a command line or environment.
    assert_eq!(
        exposed_among(&[chrome.pid, chrome.chromium_pid]),
        Vec::<u32>::new()
    );

    cli.ok(&["-s=t", "goto", &site.url("/")]);
    let snapshot = read_snapshot(&sandbox, &cli.ok(&["-s=t", "snapshot"]).stdout);
    assert!(snapshot.contains(HOME_TEXT), "{snapshot}");
    cli.ok(&[
        "-s=t",
        "fill",
        &reference(&snapshot, "Name"),
        "typed by the test",
    ]);
    cli.ok(&["-s=t", "type", "more"]);
    cli.ok(&["-s=t", "fill", &reference(&snapshot, "Password"), "pw"]);
    cli.ok(&[
        "-s=t",
        "click",
        &reference(&snapshot, "Go to the second page"),
    ]);
    let second = read_snapshot(&sandbox, &cli.ok(&["-s=t", "snapshot"]).stdout);
    assert!(second.contains(SECOND_TEXT), "{second}");
    screenshot(&cli, &sandbox.home.path().join("second.png"));

    // A page that opens a popup: the popup joins the exposed tabs.
    cli.ok(&["-s=t", "goto", &site.url("/")]);
    let home = read_snapshot(&sandbox, &cli.ok(&["-s=t", "snapshot"]).stdout);
    cli.ok(&["-s=t", "click", &reference(&home, "Open popup")]);
    eventually("the popup never showed up in tab-list", || {
        cli.ok(&["-s=t", "tab-list"]).stdout.contains("Popup")
    });

    let before = chrome.pages().len();
    cli.ok(&["-s=t", "tab-new", &site.url("/second")]);
    assert_eq!(
        chrome.pages().len(),
        before + 1,
        "tab-new opens a tab in the real Chromium"
    );
    screenshot(&cli, &sandbox.home.path().join("new-tab.png"));

    cli.ok(&["-s=t", "detach"]);
    assert!(cli.ok(&["list"]).stdout.contains("no browsers"));
    assert!(chrome.alive(), "detach leaves the browser running");
    assert!(cli.leftovers().is_empty(), "{:?}", cli.leftovers());
}

#[test]
fn closing_the_last_attached_tab_ends_the_connection_as_the_real_extension_does() {
    let (_sandbox, chrome, cli, run, _) = attach_with_fault("");
    assert_eq!(run.expect("the attach finishes").code, 0);
    cli.ok(&["-s=t", "tab-new"]);
    cli.ok(&["-s=t", "tab-close", "0"]);
    let left = cli.ok(&["-s=t", "tab-list"]).stdout;
    assert!(!left.contains(PAGE) && left.contains("- 0:"), "{left}");
    cli.ok(&["-s=t", "tab-close", "0"]);
    eventually("the connection outlived its last tab", || {
        chrome.log().contains("all controlled tabs detached")
    });
    eventually("the session stayed open", || {
        !cli.ok(&["list"]).stdout.contains("status: open")
    });
    assert!(chrome.alive());
}

#[test]
fn a_hidden_helper_tab_stays_out_of_view() {
    let sandbox = Sandbox::installed();
    let token = fresh_token();
    let options = Options {
        token: Some(&token),
        hide_helper: true,
        ..Default::default()
    };
    let chrome = Standin::start(sandbox.home.path(), options);
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

/// An attach the extension never approves: bounded by the test, and nothing
/// is left running but the stand-in.
fn never_approved(cli: &PwCli, chrome: &Standin) {
    let run = cli.run_within(
        &["attach", "--extension=chrome", "--session=t"],
        Duration::from_secs(6),
    );
    assert!(run.is_none(), "the attach completed: {run:?}");
    assert!(
        chrome.log().contains("no matching token"),
        "{}",
        chrome.log()
    );
    eventually("the CLI left processes running", || {
        cli.leftovers().is_empty()
    });
    assert!(chrome.alive());
}

#[test]
fn a_wrong_token_never_completes_the_attach() {
    let sandbox = Sandbox::installed();
    let options = Options {
        token: Some(&fresh_token()),
        ..Default::default()
    };
    let chrome = Standin::start(sandbox.home.path(), options);
    never_approved(
        &PwCli::new(&sandbox, Some(&fresh_token()), &chrome.exe()),
        &chrome,
    );
}

#[test]
fn no_token_never_completes_the_attach() {
    let sandbox = Sandbox::installed();
    let options = Options {
        token: Some(&fresh_token()),
        ..Default::default()
    };
    let chrome = Standin::start(sandbox.home.path(), options);
    never_approved(&PwCli::new(&sandbox, None, &chrome.exe()), &chrome);
}

/// Sends SIGTERM to these processes and waits for them, when dropped.
struct StopOnDrop(Vec<u32>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        for pid in &self.0 {
            let pid = nix::unistd::Pid::from_raw(*pid as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        }
        for pid in &self.0 {
            common::wait_gone(&pid.to_string());
        }
    }
}

/// The normal mains of `exe` other than `except`, stopped when the guard drops.
fn new_mains(exe: &Path, except: &[u32]) -> (Vec<u32>, StopOnDrop) {
    let pids: Vec<u32> = normal_chrome_pids(&ProcessTable::read().unwrap(), exe)
        .into_iter()
        .filter(|p| !except.contains(p))
        .collect();
    (pids.clone(), StopOnDrop(pids))
}

fn cmdline_has(pid: u32, needle: &str) -> bool {
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    cmdline
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
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
    let (spawned, _stop) = new_mains(&exe, &[]);
    assert_eq!(spawned.len(), 1, "{spawned:?}");
    assert!(
        cmdline_has(spawned[0], &token),
        "the upstream hazard: the token is in its command line"
    );
    assert_eq!(exposed_among(&spawned), spawned, "my-chrome's scan sees it");
    cli.ok(&["-s=t", "detach"]);
}

fn profile(sandbox: &Sandbox) -> PathBuf {
    sandbox.home.path().join(".config/google-chrome")
}

fn singleton_socket(sandbox: &Sandbox) -> PathBuf {
    fs::read_link(profile(sandbox).join("SingletonSocket")).unwrap()
}

/// Sends a raw singleton message; the answer ("" when none came in 3 s).
fn send(socket: &Path, message: &[u8]) -> String {
    let mut stream = UnixStream::connect(socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    stream.write_all(message).unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

/// Runs the stand-in as a second "Chrome" with a URL; its exit code.
#[allow(clippy::zombie_processes)] // one that became the browser is stopped by pid
fn second_chrome(chrome: &Standin, sandbox: &Sandbox, url: &str) -> Option<i32> {
    let mut cmd = std::process::Command::new(chrome.exe());
    cmd.arg(url).env_clear();
    for (k, v) in standin::env(chrome.dir(), sandbox.home.path(), &Options::default()) {
        cmd.env(k, v);
    }
    // A client exits at once; one that becomes the browser keeps running.
    let mut child = cmd
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn the_singleton_opens_a_url_like_chrome_and_drops_a_malformed_message() {
    let sandbox = Sandbox::installed();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    let site = Site::start();
    let socket = singleton_socket(&sandbox);
    let lock = fs::read_link(profile(&sandbox).join("SingletonLock")).unwrap();
    assert!(
        lock.to_string_lossy()
            .ends_with(&format!("-{}", chrome.pid)),
        "{lock:?}"
    );
    assert_eq!(
        fs::read_link(profile(&sandbox).join("SingletonCookie")).unwrap(),
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
    assert_eq!(second_chrome(&chrome, &sandbox, &popup), Some(0));
    assert!(chrome.pages().iter().any(|(u, _)| *u == popup));
}

#[test]
fn a_lock_from_another_host_is_refused_and_an_orphaned_one_taken_over() {
    let sandbox = Sandbox::installed();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    let lock = profile(&sandbox).join("SingletonLock");
    let original = fs::read_link(&lock).unwrap();

    fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink(format!("elsewhere.example-{}", chrome.pid), &lock).unwrap();
    assert_eq!(
        second_chrome(&chrome, &sandbox, "http://127.0.0.1:1/?host"),
        Some(21)
    );

    // A lock naming a live process that is not this browser is orphaned:
    // the second Chrome becomes the browser, URL and all in its command line.
    let host = original
        .to_string_lossy()
        .rsplit_once('-')
        .unwrap()
        .0
        .to_string();
    fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink(format!("{host}-{}", std::process::id()), &lock).unwrap();
    assert_eq!(
        second_chrome(&chrome, &sandbox, "http://127.0.0.1:1/?orphaned"),
        None,
        "it stays"
    );
    let (mains, _stop) = new_mains(&chrome.exe(), &[chrome.pid]);
    assert_eq!(mains.len(), 1, "{mains:?}");
    assert!(cmdline_has(mains[0], "?orphaned"));
}

#[test]
fn an_unreachable_browser_is_killed_and_replaced_after_the_wait() {
    let sandbox = Sandbox::installed();
    let mut chrome = Standin::start(sandbox.home.path(), Options::default());
    let cookie = profile(&sandbox).join("SingletonCookie");
    fs::remove_file(&cookie).unwrap();
    std::os::unix::fs::symlink("12345", &cookie).unwrap();
    let started = Instant::now();
    assert_eq!(
        second_chrome(&chrome, &sandbox, "http://127.0.0.1:1/?replaced"),
        None
    );
    assert!(chrome.wait_gone(), "the unreachable browser was not killed");
    eprintln!("replaced after {} ms", started.elapsed().as_millis());
    let (mains, _stop) = new_mains(&chrome.exe(), &[]);
    assert_eq!(mains.len(), 1, "{mains:?}");
    assert!(cmdline_has(mains[0], "?replaced"));
}

#[test]
fn singleton_faults_answer_shutdown_nothing_or_never() {
    let sandbox = Sandbox::installed();
    for (fault, expected, logged) in [
        ("singleton=shutdown", "SHUTDOWN", "answering SHUTDOWN"),
        ("singleton=silent", "", "closing without an answer"),
        ("singleton=hang", "", "never answering"),
    ] {
        let options = Options {
            faults: fault,
            ..Default::default()
        };
        let chrome = Standin::start(sandbox.home.path(), options);
        let socket = singleton_socket(&sandbox);
        let before = chrome.pages().len();
        let answer = send(&socket, b"START\0/tmp\0chrome\0about:blank#x");
        assert_eq!(answer, expected, "{fault}");
        assert_eq!(chrome.pages().len(), before, "{fault}: nothing was opened");
        assert!(chrome.log().contains(logged), "{fault}: {}", chrome.log());
    }
}

#[test]
fn stopping_the_fixture_leaves_nothing_behind() {
    let sandbox = Sandbox::installed();
    let chrome = Standin::start(sandbox.home.path(), Options::default());
    let (chromium, tmp) = (chrome.chromium_pid, chrome.dir().join("tmp"));
    assert!(
        fs::read_dir(&tmp).unwrap().count() > 0,
        "its temporary files live in the fixture"
    );
    drop(chrome);
    assert!(
        process_gone(&chromium.to_string()),
        "Chromium outlived the stand-in"
    );
    for name in ["SingletonLock", "SingletonCookie", "SingletonSocket"] {
        assert!(
            fs::symlink_metadata(profile(&sandbox).join(name)).is_err(),
            "{name} left behind"
        );
    }
    assert!(!tmp.exists());
}

fn attach_with_fault(faults: &str) -> (Sandbox, Standin, PwCli, Option<common::Run>, Duration) {
    let sandbox = Sandbox::installed();
    let token = fresh_token();
    let options = Options {
        token: Some(&token),
        faults,
        ..Default::default()
    };
    let chrome = Standin::start(sandbox.home.path(), options);
    let cli = PwCli::new(&sandbox, Some(&token), &chrome.exe());
    let started = Instant::now();
    let run = cli.run_within(
        &["attach", "--extension=chrome", "--session=t"],
        Duration::from_secs(20),
    );
    (sandbox, chrome, cli, run, started.elapsed())
}

#[test]
fn a_refused_websocket_fails_the_attach() {
    let (_s, chrome, cli, run, _) = attach_with_fault("refuse-websocket");
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
    let (_s, chrome, _cli, run, _) = attach_with_fault("drop-after=1");
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
    let (_s, chrome, cli, run, took) = attach_with_fault("delay-ms=150");
    let run = run.expect("a slow extension still attaches");
    assert_eq!(run.code, 0, "{}", run.stderr);
    eprintln!("attach with 150 ms per answer took {} ms", took.as_millis());
    // attach, then getTargetInfo, one after the other: at least two delays.
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(chrome.alive());
    cli.ok(&["-s=t", "detach"]);
}

#[test]
fn a_second_main_process_appears_before_the_url_is_acknowledged() {
    let (_s, chrome, cli, run, _) = attach_with_fault("spawn-second-main");
    assert!(run.is_some_and(|r| r.code == 0));
    let pids = normal_chrome_pids(&ProcessTable::read().unwrap(), &chrome.exe());
    assert_eq!(pids.len(), 2, "{pids:?}");
    assert!(pids.contains(&chrome.pid));
    let _ = cli.run_within(&["-s=t", "detach"], Duration::from_secs(20));
}

#[test]
fn an_abrupt_exit_takes_chromium_with_it() {
    let (_s, mut chrome, cli, run, _) = attach_with_fault("exit-after=1");
    assert!(chrome.wait_gone(), "the stand-in did not exit");
    let run = run.expect("the attach must fail, not hang");
    assert_ne!(run.code, 0, "{}", run.stdout);
    let chromium = chrome.chromium_pid.to_string();
    eventually("Chromium outlived the stand-in", || process_gone(&chromium));
    let _ = cli.run_within(&["-s=t", "close"], Duration::from_secs(20));
}
