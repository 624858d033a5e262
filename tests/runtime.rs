//! The private runtime refuses every directory it cannot trust, with exit 6,
//! a message naming the path and the rule, and nothing touched.

mod common;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;

use common::{Sandbox, mode};
use my_chrome::config::RuntimeLocation;
use my_chrome::runtime::{CLAIM, CLAIM_FILE, Runtime, RuntimeError, StateFile};

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn mkdir(path: &Path, mode: u32) {
    fs::create_dir_all(path).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Both commands see the problem: setup refuses (exit 6), doctor reports it
/// (exit 0) and touches nothing either.
fn refused(sandbox: &Sandbox, rule: &str) {
    let run = sandbox.run(&["setup"]);
    run.expect(6, rule);
    assert!(
        run.stderr.contains(&sandbox.runtime.display().to_string()),
        "names the path: {}",
        run.stderr
    );
    assert!(run.stderr.contains("Nothing was changed"), "{}", run.stderr);
    let report = sandbox.doctor();
    let status = report["runtime"]["status"].as_str().unwrap();
    assert!(
        status.starts_with("unsafe: ") && status.contains(rule),
        "{status}"
    );
    assert_eq!(
        report["cli"]["compatibility"],
        "not checked: the runtime is unsafe"
    );
}

#[test]
fn a_symlinked_runtime_is_refused() {
    let sandbox = Sandbox::new();
    let real = sandbox.home.path().join("real");
    mkdir(&real, 0o700);
    symlink(&real, &sandbox.runtime).unwrap();
    refused(&sandbox, "is a symbolic link");
    assert_eq!(
        fs::read_dir(&real).unwrap().count(),
        0,
        "nothing was written through the link"
    );
}

#[test]
fn a_runtime_with_mode_0755_is_refused_and_keeps_its_mode() {
    let sandbox = Sandbox::new();
    mkdir(&sandbox.runtime, 0o755);
    refused(&sandbox, "has mode 0755; it must be 0700");
    assert_eq!(mode(&sandbox.runtime), 0o755);
    assert!(!sandbox.runtime.join(CLAIM_FILE).exists());

    // The same with a good install inside: it survives untouched.
    let sandbox = Sandbox::installed();
    let before = sandbox.cli_digest();
    fs::set_permissions(&sandbox.runtime, fs::Permissions::from_mode(0o755)).unwrap();
    refused(&sandbox, "has mode 0755; it must be 0700");
    assert_eq!(mode(&sandbox.runtime), 0o755);
    assert_eq!(sandbox.cli_digest(), before);
}

#[test]
fn a_runtime_owned_by_someone_else_is_refused() {
    if !common::can_give_files_away() {
        return;
    }
    let sandbox = Sandbox::new();
    mkdir(&sandbox.runtime, 0o700);
    nix::unistd::chown(
        &sandbox.runtime,
        Some(nix::unistd::Uid::from_raw(65534)),
        None,
    )
    .unwrap();
    refused(&sandbox, "is owned by uid 65534, not by you");
    assert!(!sandbox.runtime.join(CLAIM_FILE).exists());
}

#[test]
fn a_foreign_or_corrupted_claim_is_refused() {
    for (content, file_mode, rule) in [
        (&b"somebody else's\n"[..], 0o600, "foreign or corrupted"),
        (&CLAIM[..CLAIM.len() - 1], 0o600, "foreign or corrupted"),
        (CLAIM, 0o644, "has mode 0644; it must be 0600"),
    ] {
        let sandbox = Sandbox::new();
        mkdir(&sandbox.runtime, 0o700);
        let claim = sandbox.runtime.join(CLAIM_FILE);
        fs::write(&claim, content).unwrap();
        fs::set_permissions(&claim, fs::Permissions::from_mode(file_mode)).unwrap();
        refused(&sandbox, rule);
        assert_eq!(fs::read(&claim).unwrap(), content);
        assert_eq!(mode(&claim), file_mode);
    }
    let sandbox = Sandbox::new();
    mkdir(&sandbox.runtime, 0o700);
    let elsewhere = sandbox.home.path().join("claim");
    fs::write(&elsewhere, CLAIM).unwrap();
    fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o600)).unwrap();
    symlink(&elsewhere, sandbox.runtime.join(CLAIM_FILE)).unwrap();
    refused(&sandbox, "is a symbolic link");
}

#[test]
fn a_non_empty_unclaimed_directory_is_never_adopted() {
    let sandbox = Sandbox::new();
    mkdir(&sandbox.runtime, 0o700);
    fs::write(sandbox.runtime.join("notes.txt"), "mine").unwrap();
    refused(&sandbox, "is not empty and carries no my-chrome claim file");
    assert_eq!(fs::read_dir(&sandbox.runtime).unwrap().count(), 1);
    assert_eq!(
        fs::read_to_string(sandbox.runtime.join("notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn an_empty_private_directory_is_claimed() {
    let sandbox = Sandbox::new();
    mkdir(&sandbox.runtime, 0o700);
    Runtime::open(&location(&sandbox)).unwrap();
    assert_eq!(fs::read(sandbox.runtime.join(CLAIM_FILE)).unwrap(), CLAIM);
    assert_eq!(mode(&sandbox.runtime.join(CLAIM_FILE)), 0o600);
    assert_eq!(sandbox.doctor()["runtime"]["status"], "ok");
}

#[test]
fn a_cli_directory_that_is_a_link_a_file_or_shared_is_refused() {
    // A complete install elsewhere, a copy of the golden one: were the
    // refusal gone, setup would change the copy, never what other tests
    // copy while this one runs.
    let elsewhere = Sandbox::installed();
    let golden = elsewhere.cli();
    type Plant = fn(&Path, &Path);
    let cases: [(Plant, &str); 3] = [
        (
            |cli, golden| symlink(golden, cli).unwrap(),
            "is a symbolic link",
        ),
        (
            |cli, _| fs::write(cli, "not a directory").unwrap(),
            "is not a directory",
        ),
        (
            |cli, _| fs::set_permissions(cli, fs::Permissions::from_mode(0o755)).unwrap(),
            "has mode 0755",
        ),
    ];
    for (plant, rule) in cases {
        let sandbox = Sandbox::installed();
        let cli = sandbox.cli();
        if fs::symlink_metadata(&cli).unwrap().is_dir() && rule != "has mode 0755" {
            fs::remove_dir_all(&cli).unwrap();
        }
        plant(&cli, &golden);
        let planted = fs::symlink_metadata(&cli).unwrap();
        let run = sandbox.run(&["setup"]);
        run.expect(6, rule);
        let after = fs::symlink_metadata(&cli).unwrap();
        assert_eq!(
            (after.ino(), after.mode()),
            (planted.ino(), planted.mode()),
            "{rule}: touched"
        );
        if planted.is_symlink() {
            assert_eq!(fs::read_link(&cli).unwrap(), golden);
        }
        assert!(
            run.stderr.contains(&cli.display().to_string()),
            "{}",
            run.stderr
        );
        let report = sandbox.doctor();
        let compatibility = report["cli"]["compatibility"].as_str().unwrap();
        assert!(
            compatibility.starts_with("unsafe: ") && compatibility.contains(rule),
            "{compatibility}"
        );
        assert_eq!(
            report["runtime"]["status"], "ok",
            "the runtime itself is fine"
        );
    }
}

#[test]
fn a_bad_runtime_setting_is_a_usage_error() {
    let mut sandbox = Sandbox::new();
    sandbox.set("MY_CHROME_RUNTIME_DIR", "relative/runtime");
    sandbox
        .run(&["doctor"])
        .expect(2, "MY_CHROME_RUNTIME_DIR: must be an absolute path");
    let mut sandbox = Sandbox::new();
    let home = sandbox.home.path().to_path_buf();
    sandbox.set("MY_CHROME_RUNTIME_DIR", &home);
    sandbox
        .run(&["setup"])
        .expect(2, "must not be $HOME itself");
}

fn location(sandbox: &Sandbox) -> RuntimeLocation {
    RuntimeLocation {
        path: sandbox.runtime.clone(),
    }
}

fn assert_unsafe(result: Result<impl std::fmt::Debug, RuntimeError>, rule: &str) {
    match result {
        Err(RuntimeError::Unsafe { rule: got, .. }) => assert!(got.contains(rule), "{got}"),
        other => panic!("expected an unsafe-path refusal ({rule}), got {other:?}"),
    }
}

#[test]
fn state_files_are_private_and_written_atomically() {
    let sandbox = Sandbox::new();
    let runtime = Runtime::open(&location(&sandbox)).unwrap();
    assert_eq!(runtime.read_state(StateFile::Lease).unwrap(), None);
    runtime
        .write_state(StateFile::Lease, b"{\"holder\":1}")
        .unwrap();
    runtime
        .write_state(StateFile::Lease, b"{\"holder\":2}")
        .unwrap();
    let path = sandbox.runtime.join(StateFile::Lease.file_name());
    assert_eq!(mode(&path), 0o600);
    assert_eq!(
        runtime.read_state(StateFile::Lease).unwrap().unwrap(),
        b"{\"holder\":2}"
    );
    let strays: Vec<_> = fs::read_dir(&sandbox.runtime)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".state."))
        .collect();
    assert!(strays.is_empty(), "{strays:?}");
    runtime.remove_state(StateFile::Lease).unwrap();
    assert_eq!(runtime.read_state(StateFile::Lease).unwrap(), None);
}

#[test]
fn state_files_that_are_links_shared_foreign_or_huge_are_refused() {
    let sandbox = Sandbox::new();
    let runtime = Runtime::open(&location(&sandbox)).unwrap();
    let path = sandbox
        .runtime
        .join(StateFile::RotationBaseline.file_name());

    let target = sandbox.home.path().join("planted");
    fs::write(&target, "{}").unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).unwrap();
    symlink(&target, &path).unwrap();
    assert_unsafe(
        runtime.read_state(StateFile::RotationBaseline),
        "is a symbolic link",
    );
    fs::remove_file(&path).unwrap();

    fs::write(&path, "{}").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    assert_unsafe(
        runtime.read_state(StateFile::RotationBaseline),
        "has mode 0644",
    );

    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    fs::write(&path, vec![b' '; 64 * 1024 + 1]).unwrap();
    assert_unsafe(
        runtime.read_state(StateFile::RotationBaseline),
        "is larger than",
    );
    fs::remove_file(&path).unwrap();

    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    assert_unsafe(
        runtime.read_state(StateFile::RotationBaseline),
        "is not a regular file",
    );
    fs::remove_file(&path).unwrap();

    if is_root() {
        fs::write(&path, "{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
        assert_unsafe(
            runtime.read_state(StateFile::RotationBaseline),
            "owned by uid 65534",
        );
    }
}

#[test]
fn the_wrapper_lock_excludes_a_second_holder_until_released() {
    let sandbox = Sandbox::new();
    let runtime = Runtime::open(&location(&sandbox)).unwrap();
    let wait = std::time::Duration::from_secs(30);
    let first = runtime.wrapper_lock(wait, &|| {}).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let second = runtime.clone();
    let waiter = std::thread::spawn(move || {
        let _held = second.wrapper_lock(wait, &|| {}).unwrap();
        tx.send(()).unwrap();
    });
    assert!(
        rx.recv_timeout(std::time::Duration::from_millis(300))
            .is_err(),
        "second holder got the lock"
    );
    drop(first);
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("the lock was never handed over");
    waiter.join().unwrap();
    assert_eq!(mode(&sandbox.runtime.join(".lock")), 0o600);
}

#[test]
fn waiting_for_the_lock_is_bounded_and_interruptible() {
    let mut sandbox = Sandbox::installed();
    let runtime = Runtime::open(&location(&sandbox)).unwrap();
    let held = runtime
        .wrapper_lock(std::time::Duration::from_secs(1), &|| {})
        .unwrap();

    // Told once, after a second of waiting: a wait that ends at 1 s says
    // nothing, one of 3 s says it once.
    let waiting = "waiting for another my-chrome command";
    sandbox.set("MY_CHROME_LOCK_WAIT_SECS", "1");
    let short = sandbox.run(&["setup"]);
    short.expect(124, "held the lock");
    assert!(!short.stderr.contains(waiting), "{}", short.stderr);
    sandbox.set("MY_CHROME_LOCK_WAIT_SECS", "3");
    let long = sandbox.run(&["setup"]);
    long.expect(124, "held the lock");
    assert_eq!(long.stderr.matches(waiting).count(), 1, "{}", long.stderr);

    sandbox.set("MY_CHROME_LOCK_WAIT_SECS", "60");
    let setup = common::Running::start(sandbox.command(&["setup"]));
    let pid = nix::unistd::Pid::from_raw(setup.child.id() as i32);
    setup.wait_for_stderr("waiting for another my-chrome command");
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    setup
        .wait()
        .expect(130, "interrupted by SIGINT while waiting");
    drop(held);
}
