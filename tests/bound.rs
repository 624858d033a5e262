//! The bound browser (docs/DESIGN.md, invariant 13): from @playwright/cli
//! 0.1.20 the daemon publishes the browser it attaches to through a socket
//! and a descriptor, and `playwright-cli attach mychrome` from any process
//! that finds them gets the whole Playwright protocol. After `connect` no
//! such door exists; the pinned CLI run from outside my-chrome cannot
//! attach; doctor and safety-audit say so; disconnect leaves nothing.

mod common;

use std::fs;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::time::Duration;

use common::pwcli::PwCli;
use common::{Sandbox, assert_nowhere, entries, world};

fn users_registry(sandbox: &Sandbox) -> PathBuf {
    sandbox.home.path().join(".cache/ms-playwright/b")
}

/// No door anywhere, though the daemon did bind (its folders exist).
fn shut(sandbox: &Sandbox) {
    assert!(
        !sandbox.bound_socket_dirs().is_empty(),
        "the daemon bound no browser"
    );
    assert!(sandbox.bound_registry().is_dir(), "no registry was used");
    assert!(
        sandbox.bound_leftovers().is_empty(),
        "{:?}",
        sandbox.bound_leftovers()
    );
    assert!(entries(&users_registry(sandbox)).is_empty());
}

#[test]
fn no_other_process_can_attach_to_the_session_and_disconnect_leaves_nothing() {
    let mut w = world();
    let chrome = w.chrome();
    let connected = w.sandbox.run(&["connect"]);
    assert_eq!(connected.code, 0, "{}", connected.stderr);
    shut(&w.sandbox);

    // The pinned CLI itself, from outside my-chrome, in the same workspace
    // and TMPDIR: by name, through the user's registry or through ours.
    let outsider = PwCli::new(&w.sandbox, None, &chrome.exe());
    let bound = Duration::from_secs(60);
    let by_name = outsider
        .run_within(&["attach", "mychrome", "--session=outsider"], bound)
        .expect("it finishes");
    // It finds nothing by that name and falls back to a path: no such file.
    assert_ne!(by_name.code, 0, "{}\n{}", by_name.stdout, by_name.stderr);
    assert!(by_name.stderr.contains("ENOENT"), "{}", by_name.stderr);
    let ours = w.sandbox.bound_registry().display().to_string();
    let knowing = PwCli::new(&w.sandbox, None, &chrome.exe())
        .with("PWTEST_SERVER_REGISTRY", &ours)
        .run_within(&["attach", "mychrome", "--session=outsider"], bound)
        .expect("it finishes");
    assert_ne!(knowing.code, 0, "{}\n{}", knowing.stdout, knowing.stderr);
    assert!(knowing.stderr.contains("ENOENT"), "{}", knowing.stderr);
    // Our session is untouched by the attempts.
    let tabs = w.sandbox.run(&["tab-list"]);
    assert_eq!(tabs.code, 0, "{}", tabs.stderr);

    let doctor = w.sandbox.doctor();
    assert_eq!(doctor["bound_browser"]["status"], "shut", "{doctor}");
    let audit = w.sandbox.run(&["safety-audit", "--json"]);
    assert_eq!(audit.code, 0, "{}", audit.stdout);
    let row = audit.json()["safeguards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "bound-browser-shut")
        .cloned()
        .unwrap();
    assert_eq!(row["holds"], true, "{row}");

    // A door that appears while attached (a session from before the door
    // was shut): `ensure` and a `connect` that reuses the session shut it.
    for step in [&["ensure"][..], &["connect"]] {
        let (_listener, socket, descriptor) = plant_left_door(&w.sandbox);
        let run = w.sandbox.run(step);
        assert_eq!(run.code, 0, "{step:?}: {}", run.stderr);
        assert!(!socket.exists() && !descriptor.exists(), "{step:?}");
    }

    let gone = w.sandbox.run(&["disconnect"]);
    assert!(gone.stdout.contains("disconnected"), "{}", gone.stdout);
    shut(&w.sandbox);
    assert_nowhere(
        &w.token,
        w.sandbox.home.path(),
        &[&connected, &by_name, &knowing, &tabs, &audit, &gone],
    );
}

/// What a daemon killed before connect could shut it leaves: a listening
/// socket and the descriptor naming it.
fn plant_left_door(sandbox: &Sandbox) -> (UnixListener, PathBuf, PathBuf) {
    let dir = sandbox.runtime.join("tmp/pw-0badc0de/browser");
    fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("0123456789abcd.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    fs::create_dir_all(sandbox.bound_registry()).unwrap();
    let descriptor = sandbox.bound_registry().join("guid-left");
    let json = serde_json::json!({"title": "mychrome", "endpoint": socket.to_string_lossy()});
    fs::write(&descriptor, json.to_string()).unwrap();
    (listener, socket, descriptor)
}

#[test]
fn disconnect_removes_a_door_a_dead_daemon_left_and_names_a_foreign_one() {
    let sandbox = Sandbox::installed();
    let (_listener, socket, descriptor) = plant_left_door(&sandbox);
    assert_eq!(sandbox.doctor()["bound_browser"]["status"], "open");
    let text = sandbox.run(&["doctor"]);
    assert!(
        text.stdout.contains("bound-browser: open (") && text.stdout.contains("guid-left"),
        "{}",
        text.stdout
    );
    let gone = sandbox.run(&["disconnect"]);
    assert_eq!(gone.code, 0, "{}", gone.stderr);
    assert!(!socket.exists() && !descriptor.exists());
    assert_eq!(sandbox.doctor()["bound_browser"]["status"], "shut");

    // A descriptor naming anything but a bound socket in the private TMPDIR
    // (here the daemon's own socket, whose removal would end the session)
    // is no daemon's of ours: named and left, exit 6; the bound socket
    // beside it goes all the same.
    let (_listener, socket, descriptor) = plant_left_door(&sandbox);
    let foreign = sandbox.bound_registry().join("guid-foreign");
    let own = sandbox
        .runtime
        .join("tmp/pw-0badc0de/cli/0123-mychrome.sock");
    let json = serde_json::json!({"title": "mychrome", "endpoint": own.to_string_lossy()});
    fs::write(&foreign, json.to_string()).unwrap();
    let refused = sandbox.run(&["disconnect"]);
    refused.expect(6, "not what a daemon of ours leaves in the runtime");
    assert!(
        refused.stderr.contains("guid-foreign"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("remove it yourself"),
        "{}",
        refused.stderr
    );
    assert!(!socket.exists() && !descriptor.exists());
    assert!(foreign.exists());

    // A descriptor that is a link is not followed, even to one of ours.
    fs::remove_file(&foreign).unwrap();
    let (_listener, _socket, descriptor) = plant_left_door(&sandbox);
    let linked = sandbox.bound_registry().join("guid-linked");
    std::os::unix::fs::symlink(&descriptor, &linked).unwrap();
    let refused = sandbox.run(&["disconnect"]);
    refused.expect(6, "a link");
    assert!(refused.stderr.contains("guid-linked"), "{}", refused.stderr);
    assert!(fs::symlink_metadata(&linked).is_ok(), "the link is left");
}

#[test]
fn recovery_of_a_killed_connect_removes_the_door_its_daemon_left() {
    let sandbox = Sandbox::installed();
    let (_listener, socket, descriptor) = plant_left_door(&sandbox);
    // The record a connect killed after its attach started leaves.
    let output = sandbox.runtime.join("session-output.killed");
    fs::create_dir(&output).unwrap();
    let record = sandbox.runtime.join("bootstrap.json");
    fs::write(&record, serde_json::json!({"dir": output}).to_string()).unwrap();
    fs::set_permissions(&record, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let next = sandbox.run(&["tab-list"]);
    assert!(
        next.stderr.contains("an earlier connect was interrupted"),
        "{}",
        next.stderr
    );
    assert!(!socket.exists() && !descriptor.exists());
    assert!(!output.exists() && !record.exists());
}

#[test]
fn the_next_connect_shuts_a_door_a_killed_connect_left() {
    let mut w = world();
    let _chrome = w.chrome();
    let (_listener, socket, descriptor) = plant_left_door(&w.sandbox);
    // A descriptor in the user's own registry naming our runtime (a daemon
    // run without our environment), beside another tool's.
    let users = users_registry(&w.sandbox);
    fs::create_dir_all(&users).unwrap();
    let ours = serde_json::json!({"title": "mychrome", "endpoint": socket.to_string_lossy()});
    fs::write(users.join("guid-ours"), ours.to_string()).unwrap();
    let theirs = serde_json::json!({"title": "x", "endpoint": "/tmp/pw-x/browser/y.sock"});
    fs::write(users.join("guid-theirs"), theirs.to_string()).unwrap();
    let connected = w.sandbox.run(&["connect"]);
    assert_eq!(connected.code, 0, "{}", connected.stderr);
    assert!(!socket.exists() && !descriptor.exists());
    assert!(!users.join("guid-ours").exists());
    assert!(users.join("guid-theirs").exists(), "another tool's stays");
    fs::remove_file(users.join("guid-theirs")).unwrap();
    shut(&w.sandbox);
    let gone = w.sandbox.run(&["disconnect"]);
    assert_eq!(gone.code, 0, "{}", gone.stderr);
    assert_nowhere(
        w.token.as_str(),
        w.sandbox.home.path(),
        &[&connected, &gone],
    );
}
