//! The token store against a real Secret Service (GNOME Keyring on a private
//! D-Bus session), a real X clipboard (Xvfb + xclip) and real processes.
//! Every test ends with a canary scan: the token is in no output and no file.

mod common;

use std::time::Duration;

use common::standin::{Options, Standin};
use common::{Display, FakeChrome, Keyring, Run, Sandbox, assert_nowhere, fresh_token};

const SERVICE: &str = "my-chrome.extension-token";

struct Setup {
    sandbox: Sandbox,
    keyring: Keyring,
    account: String,
}

fn setup() -> Setup {
    let mut sandbox = Sandbox::new();
    let keyring = Keyring::start(sandbox.home.path());
    sandbox.set("DBUS_SESSION_BUS_ADDRESS", keyring.address());
    let account = common::user_name();
    Setup {
        sandbox,
        keyring,
        account,
    }
}

impl Setup {
    fn stored(&self) -> Option<String> {
        self.keyring.lookup(SERVICE, &self.account)
    }

    /// The user's browser, where the user is asked; `person` is what they
    /// do with the question (`confirm`, `refuse`, `close`, `away`).
    fn browser(&mut self, person: &str) -> Standin {
        let chrome = Standin::start(
            self.sandbox.home.path(),
            Options {
                person,
                ..Default::default()
            },
        );
        self.sandbox.browser_at(chrome.exe());
        chrome
    }

    fn store(&self, token: &str) -> Run {
        let run = self
            .sandbox
            .run_input(&["token", "store", "--stdin"], &format!("{token}\n"));
        assert_eq!(run.code, 0, "{}", run.stderr);
        run
    }
}

#[test]
fn store_replace_and_forget_for_real() {
    let mut s = setup();
    let (first, second) = (fresh_token(), fresh_token());
    let report = s.sandbox.doctor();
    assert_eq!(report["token"]["status"], "missing");

    let one = s.store(&first);
    assert!(
        one.stdout
            .contains("stored the token in the Secret Service item"),
        "{}",
        one.stdout
    );
    assert_eq!(s.stored().as_deref(), Some(first.as_str()));
    assert_eq!(s.sandbox.doctor()["token"]["status"], "stored");
    // The first token replaces nothing: nobody is asked.
    assert!(!one.stderr.contains("asked the user"), "{}", one.stderr);

    // Replacing and forgetting are the user's: confirmed in the browser.
    let _browser = s.browser("confirm");
    let two = s.store(&format!("PLAYWRIGHT_MCP_EXTENSION_TOKEN={second}"));
    assert!(
        two.stderr
            .contains("asked the user in the browser MY_CHROME_CHROME names"),
        "{}",
        two.stderr
    );
    assert_eq!(s.stored().as_deref(), Some(second.as_str()));
    assert_eq!(
        s.keyring.count(SERVICE, &s.account),
        1,
        "replaced, not added"
    );

    let forget = s.sandbox.run(&["token", "forget"]);
    assert_eq!(forget.code, 0, "{}", forget.stderr);
    assert!(
        forget.stderr.contains("asked the user"),
        "{}",
        forget.stderr
    );
    assert_eq!(s.stored(), None);
    let again = s.sandbox.run(&["token", "forget"]);
    assert!(
        again.stdout.contains("there was no stored token"),
        "{}",
        again.stdout
    );
    assert_eq!(s.sandbox.doctor()["token"]["status"], "missing");

    let doctor = s.sandbox.run(&["doctor"]);
    for token in [&first, &second] {
        assert_nowhere(
            token,
            s.sandbox.home.path(),
            &[&one, &two, &forget, &again, &doctor],
        );
    }
}

/// An agent runs the token's steps: each is a request the user answers in
/// the browser. Refused, closed, unanswered or with no browser to ask in,
/// the stored token stays exactly as it was.
#[test]
fn replacing_or_forgetting_the_token_asks_the_user_and_nothing_else_changes_it() {
    let mut s = setup();
    let users = fresh_token();
    s.store(&users);
    let planted = fresh_token();
    s.keyring.store("agents.item", &s.account, &planted);
    let steps: [&[&str]; 3] = [
        &["token", "store", "--stdin"],
        &["token", "forget"],
        &["token", "migrate", "--from-service", "agents.item"],
    ];
    let mut runs = Vec::new();
    // No browser running: nobody can be asked.
    s.sandbox.browser_at("/nonexistent/chrome");
    for step in steps {
        let run = s.sandbox.run_input(step, &planted);
        run.expect(5, "nothing was asked and nothing changed");
        assert_eq!(s.stored().as_deref(), Some(users.as_str()), "{step:?}");
        runs.push(run);
    }
    for (person, said) in [
        ("refuse", "the user refused in the browser"),
        (
            "close",
            "the user closed the consent page without answering",
        ),
        ("away", "the user did not confirm within 5 s"),
    ] {
        let _browser = s.browser(person);
        s.sandbox.set("MY_CHROME_CONSENT_WAIT_SECS", "5");
        for step in steps {
            let run = s.sandbox.run_input(step, &planted);
            run.expect(7, said);
            assert!(run.stderr.contains("Nothing changed"), "{}", run.stderr);
            assert_eq!(
                s.stored().as_deref(),
                Some(users.as_str()),
                "{person}: {step:?}"
            );
            runs.push(run);
        }
    }
    let refs: Vec<&Run> = runs.iter().collect();
    assert_nowhere(&users, s.sandbox.home.path(), &refs);
    assert_nowhere(&planted, s.sandbox.home.path(), &refs);
}

#[test]
fn bad_input_is_refused_and_the_stored_token_stays() {
    let s = setup();
    let good = fresh_token();
    s.store(&good);
    let other = fresh_token();
    let cases = [
        (String::new(), "standard input is empty"),
        (
            format!("chrome-extension://x/connect.html?token={other}"),
            "holds a URL",
        ),
        (other[..20].to_string(), "holds 20 characters"),
        (other.repeat(5), "holds 215 characters"),
        (format!("{}\n{}", &other[..21], &other[21..]), "line break"),
        (format!("{other}!"), "characters other than"),
    ];
    let mut runs = Vec::new();
    for (input, needle) in cases {
        let run = s.sandbox.run_input(&["token", "store", "--stdin"], &input);
        run.expect(3, needle);
        assert!(run.stderr.contains("nothing was stored"), "{}", run.stderr);
        assert_eq!(s.stored().as_deref(), Some(good.as_str()), "after {needle}");
        runs.push(run);
    }
    let refs: Vec<&Run> = runs.iter().collect();
    assert_nowhere(&other[..20], s.sandbox.home.path(), &refs);
    assert_nowhere(&good, s.sandbox.home.path(), &refs);
}

#[test]
fn the_token_is_never_taken_from_the_command_line() {
    let s = setup();
    let token = fresh_token();
    let positional = s.sandbox.run(&["token", "store", &token]);
    positional.expect(2, "never accepted as an argument");
    let flag = s
        .sandbox
        .run(&["token", "store", "--stdin", "--token", &token]);
    flag.expect(2, "never accepted as an argument");
    let glued = s
        .sandbox
        .run(&["token", "store", &format!("--stdin={token}")]);
    assert_eq!(glued.code, 2, "{}", glued.stderr);
    let bare = s.sandbox.run(&[&token]);
    bare.expect(2, "looks like the extension token; it was not passed on");
    assert_eq!(s.stored(), None);
    assert_nowhere(
        &token,
        s.sandbox.home.path(),
        &[&positional, &flag, &glued, &bare],
    );
}

#[test]
fn migrate_copies_without_printing_or_deleting_the_source() {
    let s = setup();
    let token = fresh_token();
    s.keyring.store("old-wrapper.token", "someone", &token);
    let run = s.sandbox.run(&[
        "token",
        "migrate",
        "--from-service",
        "old-wrapper.token",
        "--from-account",
        "someone",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(s.stored().as_deref(), Some(token.as_str()));
    assert_eq!(
        s.keyring.lookup("old-wrapper.token", "someone").as_deref(),
        Some(token.as_str())
    );

    let missing = s
        .sandbox
        .run(&["token", "migrate", "--from-service", "no-such-service"]);
    missing.expect(3, "does not exist; nothing was copied");
    let same = s
        .sandbox
        .run(&["token", "migrate", "--from-service", SERVICE]);
    same.expect(2, "our own item");
    assert_nowhere(&token, s.sandbox.home.path(), &[&run, &missing, &same]);
}

#[test]
fn a_locked_keyring_is_an_error_never_a_prompt_or_a_fallback() {
    let mut s = setup();
    let token = fresh_token();
    s.store(&token);
    let _browser = s.browser("confirm");
    s.keyring.lock();
    let store = s
        .sandbox
        .run_input(&["token", "store", "--stdin"], &fresh_token());
    store.expect(3, "is locked");
    let begin = s.sandbox.run(&["begin-token-rotation"]);
    begin.expect(3, "is locked");
    // Existence is answered without unlocking anything.
    assert_eq!(s.sandbox.doctor()["token"]["status"], "stored");
    assert_nowhere(&token, s.sandbox.home.path(), &[&store, &begin]);
}

#[test]
fn no_secret_service_is_an_error_with_exit_3() {
    let mut sandbox = Sandbox::new();
    let token = fresh_token();
    let unset = sandbox.run_input(&["token", "store", "--stdin"], &token);
    unset.expect(3, "DBUS_SESSION_BUS_ADDRESS is not set");
    sandbox.set("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus");
    let gone = sandbox.run_input(&["token", "store", "--stdin"], &token);
    gone.expect(3, "the Secret Service is not available");
    let status = sandbox.doctor()["token"]["status"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        status.starts_with("error: the Secret Service is not available"),
        "{status}"
    );
    assert_nowhere(&token, sandbox.home.path(), &[&unset, &gone]);
}

#[test]
fn store_from_a_real_x_clipboard_and_clear_it() {
    let mut s = setup();
    let display = Display::start();
    s.sandbox.set("DISPLAY", &display.name);
    let token = fresh_token();

    display.copy(&other_than(&token));
    let short = s.sandbox.run(&["token", "store"]);
    short.expect(3, "the clipboard holds 20 characters");
    assert_eq!(
        display.paste(),
        other_than(&token),
        "not cleared after a failure"
    );

    display.copy(&format!("{token}\n"));
    let run = s.sandbox.run(&["token", "store"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("cleared the clipboard"),
        "{}",
        run.stdout
    );
    assert_eq!(s.stored().as_deref(), Some(token.as_str()));
    assert_eq!(display.paste(), "", "the clipboard still holds something");

    let empty = s.sandbox.run(&["token", "store"]);
    empty.expect(3, "the clipboard is empty");
    assert_eq!(s.stored().as_deref(), Some(token.as_str()));
    assert_nowhere(&token, s.sandbox.home.path(), &[&short, &run, &empty]);
}

fn other_than(token: &str) -> String {
    token[..20].chars().rev().collect()
}

#[test]
fn no_display_or_no_clipboard_tool_means_no_clipboard() {
    let mut s = setup();
    s.sandbox.run(&["token", "store"]).expect(3, "no display");
    // Wayland without wl-paste installed (this machine has none in /usr/bin).
    assert!(!std::path::Path::new("/usr/bin/wl-paste").exists());
    let runtime_dir = s.sandbox.home.path().to_path_buf();
    s.sandbox
        .set("WAYLAND_DISPLAY", "wayland-0")
        .set("XDG_RUNTIME_DIR", runtime_dir);
    s.sandbox
        .run(&["token", "store"])
        .expect(3, "/usr/bin/wl-paste is not installed");
}

#[test]
fn typed_on_a_terminal_the_token_is_not_echoed() {
    use std::io::{Read, Write};
    let s = setup();
    let token = fresh_token();
    let pty = nix::pty::openpty(None, None).unwrap();
    let mut master = std::fs::File::from(pty.master);
    let store = common::Running::start_with_stdin(
        s.sandbox.command(&["token", "store", "--stdin"]),
        std::process::Stdio::from(pty.slave),
    );
    store.wait_for_stderr("it will not be shown");
    master.write_all(format!("{token}\n").as_bytes()).unwrap();
    let run = store.wait();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(s.stored().as_deref(), Some(token.as_str()));
    // Whatever the terminal would have shown is readable from the master side.
    nix::fcntl::fcntl(
        &master,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
    )
    .unwrap();
    let mut shown = Vec::new();
    let _ = master.read_to_end(&mut shown);
    let shown = String::from_utf8_lossy(&shown);
    assert!(
        !shown.contains(&token),
        "the terminal echoed the token: {shown:?}"
    );
    assert_nowhere(&token, s.sandbox.home.path(), &[&run]);
}

/// `rotation-status`'s state name and exit code.
fn rotation(s: &Setup) -> (String, i32) {
    let run = s.sandbox.run(&["rotation-status"]);
    let line = run.stdout.lines().next().unwrap_or_default();
    let name = line
        .trim_start_matches("rotation: ")
        .split(':')
        .next()
        .unwrap()
        .to_string();
    (name, run.code)
}

fn state(name: &str, code: i32) -> (String, i32) {
    (name.to_string(), code)
}

#[test]
fn the_rotation_walk_through_with_real_processes() {
    let mut s = setup();
    let chrome = FakeChrome::new();
    s.sandbox.browser_at(chrome.path());
    let old = fresh_token();
    let new = fresh_token();
    assert_eq!(rotation(&s), state("not started", 0));
    s.sandbox
        .run(&["begin-token-rotation"])
        .expect(3, "no token is stored");
    s.store(&old);

    // The leaked Chrome still runs with the token on its command line.
    let leaked = chrome.start(&[&format!(
        "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?protocolVersion=2&token={old}"
    )]);
    let refused = s.sandbox.run(&["begin-token-rotation"]);
    refused.expect(6, &format!("processes [{leaked}]"));
    chrome.stop(leaked);

    let begun = s.sandbox.run(&["begin-token-rotation"]);
    assert_eq!(begun.code, 0, "{}", begun.stderr);
    assert_eq!(rotation(&s), state("pending", 0));
    assert_eq!(
        s.sandbox.doctor()["rotation"]["status"],
        "in progress (run `my-chrome rotation-status`)"
    );
    s.sandbox
        .run(&["mark-token-regenerated"])
        .expect(3, "still the one recorded");

    // Deleted mid-way (in the keyring's own app), then the regenerated
    // one stored.
    s.keyring.clear(SERVICE, &s.account);
    assert_eq!(rotation(&s), state("token-missing", 3));
    s.store(&new);
    assert_eq!(rotation(&s), state("regenerated-unmarked", 0));
    let again = s.sandbox.run(&["begin-token-rotation"]);
    again.expect(2, "a rotation is under way");
    assert_eq!(
        rotation(&s),
        state("regenerated-unmarked", 0),
        "the baseline was kept"
    );

    s.sandbox
        .run(&["mark-token-regenerated"])
        .expect(5, "not running");
    let first = chrome.start(&[]);
    let extra = chrome.start(&[]);
    s.sandbox
        .run(&["mark-token-regenerated"])
        .expect(5, "2 main processes of");
    chrome.stop(extra);
    let marked = s.sandbox.run(&["mark-token-regenerated"]);
    assert_eq!(marked.code, 0, "{}", marked.stderr);
    assert!(
        marked.stdout.contains(&format!("pid {first}")),
        "{}",
        marked.stdout
    );
    assert_eq!(rotation(&s), state("awaiting-restart", 0));

    chrome.stop(first);
    assert_eq!(rotation(&s), state("awaiting-reopen", 0));
    // Another browser, chosen and running now: its start proves nothing of
    // the one marked, and the rotation is not verified by it.
    let elsewhere = FakeChrome::new();
    let running = elsewhere.start(&[]);
    let mut asked = s.sandbox.command(&["rotation-status"]);
    asked.env("MY_CHROME_CHROME", elsewhere.path());
    let other = common::Running::start(asked).wait();
    assert!(
        other
            .stdout
            .starts_with("rotation: invalid-regeneration-marker")
            && other.stdout.contains("it was marked for the browser at"),
        "{}",
        other.stdout
    );
    elsewhere.stop(running);
    assert_eq!(
        rotation(&s),
        state("awaiting-reopen", 0),
        "nothing was cleared"
    );
    let a = chrome.start(&[]);
    let b = chrome.start(&[]);
    assert_eq!(rotation(&s), state("ambiguous-chrome", 5));
    chrome.stop(b);
    // Some other program of the user's still holds the new token.
    let other = FakeChrome::new();
    let exposed = other.start_with(&[], &[("PLAYWRIGHT_MCP_EXTENSION_TOKEN", &new)], None);
    assert_eq!(rotation(&s), state("rotated-process-exposed", 6));
    other.stop(exposed);
    let verified = s.sandbox.run(&["rotation-status"]);
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    assert!(
        verified.stdout.starts_with("rotation: VERIFIED"),
        "{}",
        verified.stdout
    );
    assert_eq!(
        rotation(&s),
        state("not started", 0),
        "verified clears the state"
    );
    chrome.stop(a);
    for token in [&old, &new] {
        assert_nowhere(
            token,
            s.sandbox.home.path(),
            &[&refused, &begun, &again, &marked, &verified],
        );
    }
}

#[test]
fn rotation_state_files_are_believed_only_when_sound() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let mut s = setup();
    let chrome = FakeChrome::new();
    s.sandbox.browser_at(chrome.path());
    s.store(&fresh_token());
    assert_eq!(s.sandbox.run(&["begin-token-rotation"]).code, 0);
    let baseline = s.sandbox.runtime.join("rotation-baseline.json");
    let good = std::fs::read(&baseline).unwrap();

    let check = |name: &str, rule: &str, code: i32| {
        let run = s.sandbox.run(&["rotation-status"]);
        assert_eq!(run.code, code, "{rule}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.starts_with(&format!("rotation: {name}")),
            "{rule}: {}",
            run.stdout
        );
        assert!(run.stdout.contains(rule), "{}", run.stdout);
        let doctor = s.sandbox.doctor()["rotation"]["status"]
            .as_str()
            .unwrap()
            .to_string();
        if name == "invalid-baseline" {
            assert!(
                doctor.starts_with(name) && doctor.contains(rule),
                "{doctor}"
            );
        }
    };
    std::fs::set_permissions(&baseline, std::fs::Permissions::from_mode(0o644)).unwrap();
    check("invalid-baseline", "has mode 0644", 6);
    s.sandbox
        .run(&["mark-token-regenerated"])
        .expect(6, "has mode 0644");
    std::fs::set_permissions(&baseline, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(
        &baseline,
        b"{\"version\":1,\"token_sha256\":\"not-a-digest\"}",
    )
    .unwrap();
    check("invalid-baseline", "malformed", 2);
    std::fs::write(&baseline, b"{\"version\":1}").unwrap();
    check("invalid-baseline", "malformed", 2);
    let elsewhere = s.sandbox.home.path().join("planted.json");
    std::fs::write(&elsewhere, &good).unwrap();
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::remove_file(&baseline).unwrap();
    symlink(&elsewhere, &baseline).unwrap();
    check("invalid-baseline", "symbolic link", 6);
    // Starting over replaces the bad file with a sound one.
    assert_eq!(s.sandbox.run(&["begin-token-rotation"]).code, 0);
    assert_eq!(rotation(&s), state("pending", 0));

    // The marker gets the same scrutiny. (The old token deleted in the
    // keyring's own app first: replacing it would ask the user in a
    // browser, and this one is a fake.)
    s.keyring.clear(SERVICE, &s.account);
    s.store(&fresh_token());
    let pid = chrome.start(&[]);
    assert_eq!(s.sandbox.run(&["mark-token-regenerated"]).code, 0);
    let marker = s.sandbox.runtime.join("rotation-marker.json");
    std::fs::write(&marker, b"{\"version\":1,\"chrome_pid\":0}").unwrap();
    check("invalid-regeneration-marker", "malformed", 2);
    std::fs::set_permissions(&marker, std::fs::Permissions::from_mode(0o640)).unwrap();
    check("invalid-regeneration-marker", "has mode 0640", 6);
    chrome.stop(pid);
}

#[test]
fn a_failed_store_keeps_the_clipboard_and_a_broken_display_is_not_empty() {
    let mut s = setup();
    let display = Display::start();
    s.sandbox.set("DISPLAY", &display.name);
    let token = fresh_token();
    display.copy(&token);
    s.keyring.lock();
    let locked = s.sandbox.run(&["token", "store"]);
    locked.expect(3, "is locked");
    assert_eq!(
        display.paste(),
        token,
        "the clipboard must keep the token when storing failed"
    );

    s.sandbox.set("DISPLAY", ":987");
    let broken = s.sandbox.run(&["token", "store"]);
    broken.expect(3, "cannot read the clipboard");
    assert!(!broken.stderr.contains("is empty"), "{}", broken.stderr);
    assert_nowhere(&token, s.sandbox.home.path(), &[&locked, &broken]);
}

/// A replaced token is kept until a `connect` with the new one works: a
/// wrong token confirmed by mistake costs nothing (`token restore`, asked
/// too, puts the one before it back), a second replacement keeps the one
/// that worked, a connect that works drops the kept one, and `forget`
/// deletes both.
#[test]
fn a_replaced_token_is_kept_until_a_connect_with_the_new_one_works() {
    let mut w = common::world();
    let account = common::user_name();
    let previous_account = format!("{account} (previous)");
    let kept = |w: &common::World| w.keyring.lookup(SERVICE, &previous_account);
    let stored = |w: &common::World| w.keyring.lookup(SERVICE, &account);
    let chrome = w.chrome();
    let good = w.token.clone();
    let mut runs = Vec::new();
    let nothing = w.sandbox.run(&["token", "restore"]);
    nothing.expect(3, "no previous token is kept");
    runs.push(nothing);
    // An agent cannot make the kept item its own item for one call, and
    // store a token there unasked (the first token asks nobody): it would
    // be what the user's next replacement keeps, and restore puts back.
    let planter = fresh_token();
    let mut cmd = w.sandbox.command(&["token", "store", "--stdin"]);
    cmd.env("MY_CHROME_KEYCHAIN_ACCOUNT", &previous_account);
    let planted = common::Running::start_with_input(cmd, Some(planter.as_bytes())).wait();
    planted.expect(2, "names the item my-chrome keeps a replaced token in");
    assert_eq!(kept(&w), None);
    runs.push(planted);

    let (wrong, wronger) = (fresh_token(), fresh_token());
    for token in [&wrong, &wronger] {
        let replaced = w.sandbox.run_input(&["token", "store", "--stdin"], token);
        replaced.expect(0, "");
        assert!(
            replaced.stdout.contains("the token before it is kept"),
            "{}",
            replaced.stdout
        );
        assert_eq!(kept(&w).as_deref(), Some(good.as_str()));
        runs.push(replaced);
    }
    // The extension does not take it: connect says the way back.
    w.sandbox.set("MY_CHROME_ATTACH_TIMEOUT_SECS", "5");
    let failed = w.sandbox.run(&["connect"]);
    failed.expect(124, "`my-chrome token restore` puts the one before it back");
    assert_eq!(kept(&w).as_deref(), Some(good.as_str()));
    runs.push(failed);
    // Putting it back is a replacement too: refused, nothing changes.
    chrome.person_will("refuse");
    let refused = w.sandbox.run(&["token", "restore"]);
    refused.expect(7, "the user refused in the browser");
    assert_eq!(stored(&w).as_deref(), Some(wronger.as_str()));
    assert_eq!(kept(&w).as_deref(), Some(good.as_str()));
    runs.push(refused);
    chrome.person_will("confirm");
    let restored = w.sandbox.run(&["token", "restore"]);
    restored.expect(0, "");
    assert_eq!(stored(&w).as_deref(), Some(good.as_str()));
    assert_eq!(kept(&w), None);
    runs.push(restored);

    // Stored again over itself: kept, then dropped by a connect that works.
    w.sandbox.set("MY_CHROME_ATTACH_TIMEOUT_SECS", "20");
    let again = w.sandbox.run_input(&["token", "store", "--stdin"], &good);
    again.expect(0, "");
    assert_eq!(kept(&w).as_deref(), Some(good.as_str()));
    let connected = w.sandbox.run(&["connect"]);
    connected.expect(0, "");
    assert!(
        connected.stdout.contains("no longer kept"),
        "{}",
        connected.stdout
    );
    assert_eq!(kept(&w), None);
    runs.extend([again, connected]);
    w.sandbox.run(&["disconnect"]).expect(0, "");

    // `forget` deletes the kept one with the stored one.
    let replaced = w.sandbox.run_input(&["token", "store", "--stdin"], &wrong);
    replaced.expect(0, "");
    let forgot = w.sandbox.run(&["token", "forget"]);
    forgot.expect(0, "");
    assert!(
        forgot.stdout.contains("deleted the previous token"),
        "{}",
        forgot.stdout
    );
    assert_eq!((stored(&w), kept(&w)), (None, None));
    runs.extend([replaced, forgot]);
    let refs: Vec<&Run> = runs.iter().collect();
    for token in [&good, &wrong, &wronger, &planter] {
        assert_nowhere(token, w.sandbox.home.path(), &refs);
    }
}

/// The first token asks nobody, so it is stored only if there is still
/// none once the runtime's lock is held: a token stored by another command
/// meanwhile is not replaced unasked (exit 7).
#[test]
fn a_first_token_does_not_replace_one_stored_meanwhile() {
    let s = setup();
    let runtime = my_chrome::runtime::Runtime::open(&my_chrome::config::RuntimeLocation {
        path: s.sandbox.runtime.clone(),
    })
    .unwrap();
    let held = runtime.wrapper_lock(Duration::ZERO, &|| {}).unwrap();
    let (first, meanwhile) = (fresh_token(), fresh_token());
    let storing = common::Running::start_with_input(
        s.sandbox.command(&["token", "store", "--stdin"]),
        Some(first.as_bytes()),
    );
    storing.wait_for_stderr("waiting for another my-chrome command");
    s.keyring.store(SERVICE, &s.account, &meanwhile);
    drop(held);
    let refused = storing.wait();
    refused.expect(7, "a token was stored meanwhile, by another command");
    assert_eq!(s.stored().as_deref(), Some(meanwhile.as_str()));
    assert_eq!(
        s.keyring
            .lookup(SERVICE, &format!("{} (previous)", s.account)),
        None
    );
    for token in [&first, &meanwhile] {
        assert_nowhere(token, s.sandbox.home.path(), &[&refused]);
    }
}
