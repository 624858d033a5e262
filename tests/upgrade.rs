//! Upgrading users (issue 20): a machine where the previous my-chrome
//! installed @playwright/cli 0.1.17 and a session of that copy is attached
//! to the user's Chrome. The new my-chrome (another pin) says what to do —
//! `disconnect`, `setup`, `connect`, in that order — from every command;
//! `disconnect` lets the old session go with the old copy, `setup` moves
//! the copy, `connect` attaches again, and nothing the user has is lost.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::pwcli::PwCli;
use common::{Run, Sandbox, assert_nowhere, world};
use my_chrome::helper::pin::Pin;

const OLD: &str = "0.1.17";

/// The shipped lock of the previous pin, as that release installed it.
fn old_pin() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pin-0.1.17")
}

/// `<runtime>/cli` becomes a real `npm ci` of the 0.1.17 lock.
fn install_old_copy(sandbox: &Sandbox) {
    let cli = sandbox.cli();
    let chmod = Command::new("chmod")
        .args(["-R", "u+w"])
        .arg(&cli)
        .status()
        .unwrap();
    assert!(chmod.success());
    fs::remove_dir_all(&cli).unwrap();
    fs::create_dir(&cli).unwrap();
    for file in ["package.json", "package-lock.json"] {
        fs::copy(old_pin().join(file), cli.join(file)).unwrap();
    }
    let lock = fs::read(old_pin().join("package-lock.json")).unwrap();
    assert!(
        Pin::shipped().was_released(&lock),
        "the fixture is the lock that release shipped"
    );
    let npm = Command::new(common::system_node().with_file_name("npm"))
        .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"])
        .current_dir(&cli)
        .env("NO_UPDATE_NOTIFIER", "1")
        .output()
        .unwrap();
    assert!(
        npm.status.success(),
        "{}",
        String::from_utf8_lossy(&npm.stderr)
    );
    let version =
        fs::read_to_string(cli.join("node_modules/@playwright/cli/package.json")).unwrap();
    assert!(
        version.contains(&format!("\"version\": \"{OLD}\"")),
        "{version}"
    );
    // As that release's setup left it: sealed read-only.
    my_chrome::helper::Helper::at(cli).seal().unwrap();
}

/// `first`, then `second`, then `third` appear in `text`, in that order.
fn in_order(text: &str, words: [&str; 3]) -> bool {
    let mut from = 0;
    for word in words {
        match text[from..].find(word) {
            Some(at) => from += at + word.len(),
            None => return false,
        }
    }
    true
}

fn says_the_way_up(run: &Run) {
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        in_order(
            &all,
            [
                "my-chrome disconnect",
                "my-chrome setup",
                "my-chrome connect"
            ]
        ),
        "{all}"
    );
}

#[test]
fn a_machine_on_the_previous_pin_is_told_the_way_and_loses_nothing() {
    let mut w = world();
    let chrome = w.chrome();
    install_old_copy(&w.sandbox);
    // The previous release's session: a 0.1.17 daemon attached to Chrome
    // (attached here by that CLI itself, with the token in its environment
    // as the raw CLI takes it; my-chrome delivered it to Chrome instead,
    // and the session is the same).
    let old = PwCli::new(&w.sandbox, Some(&w.token), &chrome.exe());
    old.ok(&["attach", "--extension=chrome", "--session=mychrome"]);
    let daemons = old.leftovers();
    assert!(!daemons.is_empty());

    // Every command says the way, in order, and runs nothing.
    let tabs = w.sandbox.run(&["tab-list"]);
    tabs.expect(2, "installed by an earlier my-chrome");
    says_the_way_up(&tabs);
    let connect = w.sandbox.run(&["connect"]);
    connect.expect(2, &format!("this one pins {}", Pin::shipped().version));
    says_the_way_up(&connect);
    let doctor = w.sandbox.run(&["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("compatibility: older: @playwright/cli 0.1.17 from an earlier my-chrome"),
        "{}",
        doctor.stdout
    );
    says_the_way_up(&doctor);
    let early_setup = w.sandbox.run(&["setup"]);
    early_setup.expect(1, "is open; setup was not started");
    says_the_way_up(&early_setup);
    assert!(
        daemons
            .iter()
            .all(|pid| !common::process_gone(&pid.to_string()))
    );

    // The way: the old copy lets the session go, setup moves the copy,
    // connect attaches again to the same Chrome with the stored token.
    let gone = w.sandbox.run(&["disconnect"]);
    assert_eq!(gone.code, 0, "{}", gone.stderr);
    assert!(
        gone.stdout.contains(&format!(
            "disconnected session mychrome; {} is still running (pid {})",
            common::UNNAMED,
            chrome.pid
        )),
        "{}",
        gone.stdout
    );
    for pid in &daemons {
        common::wait_gone(&pid.to_string());
    }
    let setup = w.sandbox.run(&["setup"]);
    assert_eq!(setup.code, 0, "{}", setup.stderr);
    assert!(
        setup.stdout.contains(&format!(
            "installed @playwright/cli {}",
            Pin::shipped().version
        )),
        "{}",
        setup.stdout
    );
    let connected = w.sandbox.run(&["connect"]);
    assert_eq!(connected.code, 0, "{}", connected.stderr);
    assert!(
        connected.stdout.contains(&format!(
            "connected to {} (pid {})",
            common::UNNAMED,
            chrome.pid
        )),
        "{}",
        connected.stdout
    );
    let after = w.sandbox.run(&["tab-list"]);
    assert_eq!(after.code, 0, "{}", after.stderr);
    assert_eq!(w.sandbox.doctor()["cli"]["compatibility"], "supported");
    let account = common::user_name();
    assert_eq!(
        w.keyring.count("my-chrome.extension-token", &account),
        1,
        "the stored token stays"
    );
    let gone_again = w.sandbox.run(&["disconnect"]);
    assert_eq!(gone_again.code, 0, "{}", gone_again.stderr);
    assert!(chrome.alive());
    assert_nowhere(
        &w.token,
        w.sandbox.home.path(),
        &[
            &tabs,
            &connect,
            &doctor,
            &early_setup,
            &gone,
            &setup,
            &connected,
            &after,
            &gone_again,
        ],
    );
}
