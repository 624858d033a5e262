//! The native session state against live sessions of the real CLI (through
//! the Chrome stand-in), compared with what `list --json` says.

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use common::pwcli::PwCli;
use common::standin::{Options, Standin};
use common::{Sandbox, fresh_token};
use my_chrome::config::RuntimeLocation;
use my_chrome::helper::pin::Pin;
use my_chrome::runtime::Runtime;
use my_chrome::session::state::{SessionState, session_state};

fn state(sandbox: &Sandbox, name: &str) -> SessionState {
    let location = RuntimeLocation {
        path: sandbox.runtime.clone(),
    };
    let runtime = Runtime::open(&location).unwrap();
    session_state(
        sandbox.home.path(),
        &runtime,
        name,
        Pin::shipped().core_version(),
    )
}

fn listed(cli: &PwCli, name: &str) -> Option<serde_json::Value> {
    let run = cli.ok(&["list", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    doc["browsers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .cloned()
}

#[test]
fn the_native_state_agrees_with_list_json() {
    let mut sandbox = Sandbox::installed();
    sandbox.set("MY_CHROME_SESSION", "t");
    let token = fresh_token();
    let chrome = Standin::start(
        sandbox.home.path(),
        Options {
            token: Some(&token),
            ..Default::default()
        },
    );
    let cli = PwCli::new(&sandbox, Some(&token), &chrome.exe());

    assert!(matches!(state(&sandbox, "t"), SessionState::Missing));
    assert!(listed(&cli, "t").is_none());

    cli.ok(&["attach", "--extension=chrome", "--session=t"]);
    match state(&sandbox, "t") {
        SessionState::Ready(entry) => assert!(entry.attached),
        other => panic!("expected ready, got {other:?}"),
    }
    assert_eq!(sandbox.doctor()["session"]["status"], "ready");
    let entry = listed(&cli, "t").expect("list shows it");
    assert_eq!(entry["status"], "open");
    assert_eq!(entry["version"], Pin::shipped().core_version());

    // A socket directory someone else could enter is not trusted.
    let SessionState::Ready(ready) = state(&sandbox, "t") else {
        unreachable!()
    };
    let socket_dir = ready.socket_path.parent().unwrap().to_path_buf();
    fs::set_permissions(&socket_dir, fs::Permissions::from_mode(0o755)).unwrap();
    match state(&sandbox, "t") {
        SessionState::Unavailable(why) => assert!(why.contains("has mode 0755"), "{why}"),
        other => panic!("expected unavailable, got {other:?}"),
    }
    fs::set_permissions(&socket_dir, fs::Permissions::from_mode(0o700)).unwrap();

    // The daemon dies without cleaning up: stale here; list drops it.
    let daemons = cli.leftovers();
    assert!(!daemons.is_empty(), "the daemon runs code from the CLI");
    for pid in &daemons {
        let pid = nix::unistd::Pid::from_raw(*pid as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).unwrap();
    }
    // Gone for good (not merely without a command line while it exits).
    for pid in &daemons {
        common::wait_gone(&pid.to_string());
    }
    match state(&sandbox, "t") {
        SessionState::Stale(why) => assert!(why.contains("does not answer"), "{why}"),
        other => panic!("expected stale, got {other:?}"),
    }
    let report = sandbox.doctor();
    assert_eq!(report["session"]["status"], "stale", "{report}");
    assert!(listed(&cli, "t").is_none());
    assert!(
        matches!(state(&sandbox, "t"), SessionState::Missing),
        "list removed the stale entry"
    );
}

#[test]
fn an_entry_from_another_version_or_outside_our_tmp_is_not_trusted() {
    let sandbox = Sandbox::installed();
    let dir =
        my_chrome::session::registry::daemon_dir(sandbox.home.path(), &sandbox.runtime).unwrap();
    fs::create_dir_all(&dir).unwrap();
    let write = |version: &str, socket: &str| {
        let entry = serde_json::json!({"name": "t", "version": version, "socketPath": socket, "attached": true});
        fs::write(dir.join("t.session"), entry.to_string()).unwrap();
    };
    let inside = sandbox.runtime.join("tmp/pw-1234/cli/x.sock");
    write("1.0.0", &inside.display().to_string());
    assert!(matches!(state(&sandbox, "t"), SessionState::Stale(why) if why.contains("1.0.0")));
    write(Pin::shipped().core_version(), "/tmp/pw-planted/cli/x.sock");
    assert!(
        matches!(state(&sandbox, "t"), SessionState::Unavailable(why) if why.contains("outside"))
    );
    fs::write(dir.join("t.session"), "{broken").unwrap();
    assert!(matches!(state(&sandbox, "t"), SessionState::Unavailable(_)));

    // `..` cannot walk a socket path out of the private tmp.
    let escaping = sandbox.runtime.join("tmp/../../elsewhere/x.sock");
    fs::create_dir_all(sandbox.home.path().join("elsewhere")).unwrap();
    write(
        Pin::shipped().core_version(),
        &escaping.display().to_string(),
    );
    assert!(
        matches!(state(&sandbox, "t"), SessionState::Unavailable(why) if why.contains("outside"))
    );

    // A live daemon that is not attached to Chrome is no session to use.
    let socket_dir = sandbox.runtime.join("tmp/pw-test/cli");
    fs::create_dir_all(&socket_dir).unwrap();
    for d in [sandbox.runtime.join("tmp/pw-test"), socket_dir.clone()] {
        fs::set_permissions(&d, fs::Permissions::from_mode(0o700)).unwrap();
    }
    let socket = socket_dir.join("t.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let entry = serde_json::json!({
        "name": "t", "version": Pin::shipped().core_version(),
        "socketPath": socket, "attached": false
    });
    fs::write(dir.join("t.session"), entry.to_string()).unwrap();
    assert!(
        matches!(state(&sandbox, "t"), SessionState::Stale(why) if why.contains("not attached"))
    );
}

/// Our session's daemon stops taking connections (its event loop stuck, its
/// backlog full): no command may hang on it. `doctor` and `ensure` find it
/// stale, a browser command ends at its bound (124), `disconnect` ends, and
/// `connect` gets on to its own checks (no Chrome here: exit 5).
#[test]
fn a_daemon_whose_backlog_is_full_holds_no_command() {
    use std::os::unix::fs::DirBuilderExt;
    let mut sandbox = Sandbox::installed();
    // No Chrome here: a browser named where there is none (not the one
    // installed on the machine, which another test may be running).
    let absent = sandbox.home.path().join("no-chrome/chrome");
    sandbox.browser_at(absent);
    // A browser command waits for the daemon up to its own bound.
    sandbox.set("MY_CHROME_COMMAND_TIMEOUT_SECS", "5");
    // A first command makes the private runtime (with its TMPDIR).
    sandbox.run(&["ensure"]).expect(4, "connect");
    let dir = sandbox.runtime.join("tmp/pw-stuck/cli");
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .unwrap();
    let socket = dir.join("mychrome.sock");
    let _stuck = common::stuck_socket::StuckSocket::bind(&socket);
    let registry =
        my_chrome::session::registry::daemon_dir(sandbox.home.path(), &sandbox.runtime).unwrap();
    fs::create_dir_all(&registry).unwrap();
    let entry = serde_json::json!({
        "name": "mychrome",
        "version": Pin::shipped().core_version(),
        "socketPath": socket,
        "workspaceDir": fs::canonicalize(&sandbox.runtime).unwrap(),
        "attached": true,
        "timestamp": 1,
    });
    fs::write(registry.join("mychrome.session"), entry.to_string()).unwrap();
    for (args, code) in [
        (&["doctor", "--json"][..], None),
        (&["ensure"], Some(4)),
        (&["tab-list"], Some(124)),
        (&["disconnect"], None),
        (&["connect"], Some(5)),
    ] {
        let mut running = common::Running::start(sandbox.command(args));
        let mut waited = 0;
        while running.child.try_wait().unwrap().is_none() {
            if waited >= 600 {
                let _ = running.child.kill();
                panic!("my-chrome {args:?} hung on a daemon that never accepts");
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            waited += 1;
        }
        let run = running.wait();
        if let Some(code) = code {
            assert_eq!(run.code, code, "{args:?}: {}{}", run.stdout, run.stderr);
        }
    }
}
