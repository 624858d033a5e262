//! `safety-audit`: every row it reports as a safeguard is a check of the
//! machine as it is, so each one can fail. Each step below breaks one row's
//! condition and sees that row fail (exit 6), then mends it.
//! (`process-token` and `targeted-cleanup` fail in tests/chrome.rs and
//! tests/connect.rs, with a real carrier process and a planted record.)

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::Sandbox;
use my_chrome::helper::pin::Pin;

/// The audit's rows: name → (holds, detail).
fn rows(sandbox: &Sandbox) -> (i32, Vec<(String, bool, String)>) {
    let run = sandbox.run(&["safety-audit", "--json"]);
    let report = run.json();
    let rows = report["safeguards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["name"].as_str().unwrap().to_string(),
                row["holds"].as_bool().unwrap(),
                row["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (run.code, rows)
}

/// Only `name` fails, with exit 6, and its detail says `why`; the rows in
/// `unchecked` fail too, as not checked.
fn fails(sandbox: &Sandbox, name: &str, why: &str, unchecked: &[&str]) {
    let (code, rows) = rows(sandbox);
    assert_eq!(code, 6, "{rows:?}");
    for (row, holds, detail) in &rows {
        if row == name {
            assert!(!holds && detail.contains(why), "{rows:?}");
        } else if unchecked.contains(&row.as_str()) {
            assert!(!holds && detail.starts_with("not checked"), "{rows:?}");
        } else {
            assert!(holds, "{rows:?}");
        }
    }
    assert!(rows.iter().any(|r| r.0 == name), "{rows:?}");
}

fn only_fails(sandbox: &Sandbox, name: &str, why: &str) {
    fails(sandbox, name, why, &[]);
}

fn all_hold(sandbox: &Sandbox) {
    let (code, rows) = rows(sandbox);
    assert_eq!(code, 0, "{rows:?}");
    assert!(rows.iter().all(|r| r.1), "{rows:?}");
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// An installed sandbox whose Chrome is `<home>/browser/chrome`, a copy of
/// `program` (folder and file with the given modes); the path is returned.
fn sandbox_with_chrome(folder_mode: u32, program: &str) -> (Sandbox, std::path::PathBuf) {
    let mut sandbox = Sandbox::installed();
    let folder = sandbox.home.path().join("browser");
    fs::create_dir(&folder).unwrap();
    chmod(&folder, folder_mode);
    let chrome = folder.join("chrome");
    // Copied by a process of its own: a file this one had open for writing
    // could be inherited by another test thread's fork (ETXTBSY).
    let copied = std::process::Command::new("/bin/cp")
        .arg(program)
        .arg(&chrome)
        .status()
        .unwrap();
    assert!(copied.success());
    chmod(&chrome, 0o755);
    sandbox.browser_at(&chrome);
    (sandbox, chrome)
}

#[test]
fn each_safeguard_row_fails_when_its_condition_is_broken() {
    let (sandbox, chrome) = sandbox_with_chrome(0o755, "/bin/true");
    let folder = chrome.parent().unwrap().to_path_buf();
    all_hold(&sandbox);

    // The executable Chrome is recognised by, or a folder on its way, that
    // another user could replace.
    chmod(&chrome, 0o775);
    only_fails(&sandbox, "chrome-executable", "mode 775");
    chmod(&chrome, 0o755);
    chmod(&folder, 0o777);
    only_fails(&sandbox, "chrome-executable", "mode 777");
    chmod(&folder, 0o755);
    all_hold(&sandbox);

    // A runtime other users can enter: what lies in it is not checked.
    chmod(&sandbox.runtime, 0o755);
    fails(
        &sandbox,
        "runtime-private",
        "mode 0755",
        &[
            "helper-supported",
            "socket-directory-private",
            "targeted-cleanup",
            "bound-browser-shut",
        ],
    );
    chmod(&sandbox.runtime, 0o700);

    // A session entry whose socket lies outside the private TMPDIR.
    let registry =
        my_chrome::session::registry::daemon_dir(sandbox.home.path(), &sandbox.runtime).unwrap();
    fs::create_dir_all(&registry).unwrap();
    let entry = serde_json::json!({
        "name": "mychrome", "version": Pin::shipped().core_version(),
        "socketPath": "/tmp/pw-planted/cli/mychrome.sock", "attached": true
    });
    let file = registry.join("mychrome.session");
    fs::write(&file, entry.to_string()).unwrap();
    only_fails(&sandbox, "socket-directory-private", "outside");
    fs::remove_file(&file).unwrap();
    all_hold(&sandbox);

    // A browser a daemon bound and nobody shut: its socket in the private
    // TMPDIR, or a descriptor in the user's own server registry naming one
    // in the runtime (where `playwright-cli attach mychrome` looks).
    let bound = sandbox.runtime.join("tmp/pw-0123abcd/browser");
    fs::create_dir_all(&bound).unwrap();
    let socket = bound.join("0123456789abcd.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    only_fails(&sandbox, "bound-browser-shut", "0123456789abcd.sock");
    drop(listener);
    fs::remove_file(&socket).unwrap();
    all_hold(&sandbox);
    let outside = sandbox.home.path().join(".cache/ms-playwright/b");
    fs::create_dir_all(&outside).unwrap();
    let descriptor = serde_json::json!({
        "title": "mychrome", "endpoint": socket.to_string_lossy(),
    });
    fs::write(outside.join("guid-1"), descriptor.to_string()).unwrap();
    // Another tool's descriptor is not ours to judge.
    let theirs = serde_json::json!({ "title": "x", "endpoint": "/tmp/pw-x/browser/y.sock" });
    fs::write(outside.join("guid-2"), theirs.to_string()).unwrap();
    only_fails(&sandbox, "bound-browser-shut", "guid-1");
    fs::remove_file(outside.join("guid-1")).unwrap();
    all_hold(&sandbox);

    // A helper tree that is no longer what setup verified (checked last:
    // it cannot be mended).
    sandbox.tamper();
    only_fails(
        &sandbox,
        "helper-supported",
        "installed files differ from the pin",
    );
}

#[test]
fn connect_refuses_a_chrome_another_user_could_replace_before_the_token() {
    let (sandbox, _chrome) = sandbox_with_chrome(0o757, "/bin/true");
    // No keyring is configured: a connect that went on would fail on it.
    let run = sandbox.run(&["connect"]);
    run.expect(6, "can be replaced by another user");
    assert!(run.stderr.contains("nothing was read"), "{}", run.stderr);
}

#[test]
fn connect_refuses_a_chrome_whose_executable_is_gone() {
    let (sandbox, chrome) = sandbox_with_chrome(0o755, "/bin/sleep");
    // A process still running the executable, which is then deleted: no
    // file is left whose trust could be checked.
    let mut running = std::process::Command::new(&chrome)
        .arg("30")
        .spawn()
        .unwrap();
    // Deleted only once the child runs the copy.
    let copy = fs::canonicalize(&chrome).unwrap();
    let exe = format!("/proc/{}/exe", running.id());
    common::wait::until(
        "the child runs the copy",
        std::time::Duration::from_secs(10),
        || match fs::read_link(&exe) {
            Ok(path) if path == copy => Ok(()),
            other => Err(format!("{exe} reads {other:?}")),
        },
    );
    fs::remove_file(&chrome).unwrap();
    let run = sandbox.run(&["connect"]);
    running.kill().unwrap();
    running.wait().unwrap();
    run.expect(5, "not running");
    assert!(!sandbox.runtime.join("token-fingerprint.txt").exists());
}
