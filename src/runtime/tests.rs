//! The runtime's rules, tested: the claim, the private checks, state
//! files and logs, the locks and the session's lock in the order asked.

use super::turn::{ticket_holder, ticket_of, turn_ticket};
use super::*;
use crate::config::RuntimeLocation;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

fn is_unsafe(result: Result<impl std::fmt::Debug, RuntimeError>) -> bool {
    matches!(result, Err(RuntimeError::Unsafe { .. }))
}

#[test]
fn every_state_file_is_listed_once_and_every_name_made_here_is_known() {
    let source = include_str!("state.rs");
    let body = &source[source.find("pub enum StateFile {").unwrap()..];
    let body = &body[..body.find("\n}").unwrap()];
    let variants = body
        .lines()
        .filter(|l| l.starts_with("    ") && l.trim_end().ends_with(',') && !l.contains("//"))
        .count();
    assert_eq!(StateFile::ALL.len(), variants, "StateFile::ALL is stale");
    let names: std::collections::BTreeSet<_> =
        StateFile::ALL.iter().map(|f| f.file_name()).collect();
    assert_eq!(names.len(), StateFile::ALL.len());
    for name in names {
        assert!(made_here(name), "{name}");
    }
    for name in [
        CLAIM_FILE,
        ".lock",
        ".session.lock",
        "cli",
        "tmp",
        ".playwright",
        "lease.log",
        "lease.log.1",
        "session-output",
        ".cli-setup.x1",
        ".cli-old.77",
        ".state.Ab12",
        ".turn-12.lock",
        ".turn-tickets.lock",
        ".late.lock",
    ] {
        assert!(made_here(name), "{name}");
    }
    for name in [".turn-x.lock", ".turn-12.lockx", ".turn-.lock"] {
        assert!(!made_here(name), "{name}");
    }
    for name in [
        "id_rsa",
        "notes.txt",
        "config",
        "lease.log.2",
        ".bashrc",
        "Cli",
        "",
    ] {
        assert!(!made_here(name), "{name}");
    }
}

/// A waiter's ticket file names its process as "pid start agent" (what
/// the waiter after it checks for a stop, and the holder for whom it
/// waits); anything else names none.
#[test]
fn a_ticket_names_its_waiter() {
    let (_home, runtime) = scratch();
    let path = runtime.root().join(".turn-7.lock");
    fs::write(&path, "4242 99887766 ann").unwrap();
    assert_eq!(
        ticket_of(&path),
        Some((
            crate::procs::ProcessId {
                pid: 4242,
                start: 99_887_766
            },
            "ann".to_string()
        ))
    );
    assert!(ticket_holder(&path).is_some());
    for other in ["", "4242", "4242 x", "x 1", "4242 x ann"] {
        fs::write(&path, other).unwrap();
        assert_eq!(ticket_holder(&path), None, "{other:?}");
    }
    assert_eq!(ticket_holder(&runtime.root().join(".turn-8.lock")), None);
}

/// The holder's question: does another agent's command wait behind
/// its ticket? Its own agent's, a stopped or ended one's, an earlier
/// ticket's, or a file that names no process, do not count.
#[test]
fn only_another_agents_living_waiter_behind_counts_as_in_line() {
    let (_home, runtime) = scratch();
    let held = runtime
        .session_lock(Some("ann"), Duration::ZERO, &mut |_| {})
        .unwrap();
    let mine = held.ticket().unwrap();
    assert!(!runtime.others_in_line(mine, "ann"));
    let me = crate::procs::ProcessId::current().unwrap();
    let ticket = |t: u64, text: String| {
        fs::write(runtime.root().join(format!(".turn-{t}.lock")), text).unwrap();
        fs::write(runtime.root().join(TURN_TICKETS_FILE), t.to_string()).unwrap();
    };
    ticket(mine + 1, format!("{} {} ann", me.pid, me.start));
    assert!(!runtime.others_in_line(mine, "ann"));
    ticket(
        mine + 2,
        format!("{} {} bob", me.pid, me.start.wrapping_add(1000)),
    );
    assert!(!runtime.others_in_line(mine, "ann"));
    ticket(mine + 3, "not a ticket".into());
    assert!(!runtime.others_in_line(mine, "ann"));
    // A waiter that is no browser command (disconnect, uninstall).
    ticket(mine + 5, format!("{} {} ", me.pid, me.start));
    assert!(!runtime.others_in_line(mine, "ann"));
    ticket(mine + 4, format!("{} {} bob", me.pid, me.start));
    assert!(runtime.others_in_line(mine, "ann"));
    assert!(!runtime.others_in_line(mine + 4, "ann"));
    // However many tickets were given before it (an attack spent a
    // thousand under the holder's name), a waiter is found.
    fs::write(runtime.root().join(TURN_TICKETS_FILE), "5000").unwrap();
    ticket(mine + 4000, format!("{} {} bob", me.pid, me.start));
    fs::remove_file(runtime.root().join(format!(".turn-{}.lock", mine + 4))).unwrap();
    assert!(runtime.others_in_line(mine, "ann"));
    drop(held);
}

#[test]
fn a_lock_got_after_the_runtime_went_is_refused_not_held() {
    let (home, runtime) = scratch();
    let quiet = || {};
    for (name, take) in [
        (
            LOCK_FILE,
            &(|r: &Runtime| r.wrapper_lock(Duration::from_secs(10), &quiet).map(drop))
                as &(dyn Fn(&Runtime) -> Result<(), RuntimeError> + Sync),
        ),
        (SESSION_LOCK_FILE, &|r: &Runtime| {
            r.session_lock(None, Duration::from_secs(10), &mut |_| {})
                .map(drop)
        }),
    ] {
        let held = match name {
            LOCK_FILE => runtime.wrapper_lock(Duration::ZERO, &quiet).unwrap(),
            _ => runtime
                .session_lock(None, Duration::ZERO, &mut |_| {})
                .unwrap(),
        };
        let waiter = runtime.clone();
        let waiting = std::thread::scope(|scope| {
            let waiting = scope.spawn(|| take(&waiter));
            std::thread::sleep(Duration::from_millis(300));
            // The runtime goes (uninstall), then the holder lets go.
            fs::remove_file(runtime.root().join(name)).unwrap();
            drop(held);
            waiting.join().unwrap()
        });
        assert!(
            matches!(&waiting, Err(RuntimeError::Gone(path)) if path.ends_with(name)),
            "{name}: {waiting:?}"
        );
        assert_eq!(waiting.unwrap_err().exit(), Exit::Failure);
        // A lock on the file that is there is taken as before.
        take(&runtime).unwrap();
    }
    drop(home);
}

#[test]
fn the_session_lock_goes_to_its_waiters_in_the_order_they_asked() {
    let (_home, runtime) = scratch();
    for _round in 0..2 {
        let held = runtime
            .session_lock(None, Duration::ZERO, &mut |_| {})
            .unwrap();
        let order = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for who in ["a", "b", "c", "d"] {
                let (runtime, order) = (&runtime, &order);
                scope.spawn(move || {
                    let lock = runtime
                        .session_lock(None, Duration::from_secs(20), &mut |_| {})
                        .unwrap();
                    order.lock().unwrap().push(who);
                    std::thread::sleep(Duration::from_millis(20));
                    drop(lock);
                });
                // Each is waiting before the next asks; the first
                // waits past a second (a wait split there, to say
                // whom it waits for, lost its place).
                std::thread::sleep(Duration::from_millis(400));
            }
            drop(held);
        });
        assert_eq!(*order.lock().unwrap(), ["a", "b", "c", "d"]);
    }
    // One waiter's file at most is left behind, and it is ours.
    let left: Vec<String> = fs::read_dir(runtime.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| turn_ticket(n).is_some())
        .collect();
    assert!(left.len() <= 1, "{left:?}");
    assert!(left.iter().all(|n| made_here(n)));
}

#[test]
fn a_waiter_that_gives_up_lets_the_next_one_go_ahead() {
    let (_home, runtime) = scratch();
    let held = runtime
        .session_lock(None, Duration::ZERO, &mut |_| {})
        .unwrap();
    std::thread::scope(|scope| {
        let quitter = scope.spawn(|| {
            runtime
                .session_lock(None, Duration::from_millis(300), &mut |_| {})
                .map(drop)
        });
        std::thread::sleep(Duration::from_millis(100));
        let next = scope.spawn(|| {
            runtime
                .session_lock(None, Duration::from_secs(20), &mut |_| {})
                .map(drop)
        });
        let quit = quitter.join().unwrap();
        assert!(
            matches!(quit, Err(RuntimeError::LockTimeout { .. })),
            "{quit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
        drop(held);
        next.join().unwrap().unwrap();
    });
}

#[test]
fn a_lock_whose_file_was_replaced_is_no_longer_here() {
    let (_home, runtime) = scratch();
    let held = runtime
        .session_lock(None, Duration::ZERO, &mut |_| {})
        .unwrap();
    assert!(held.still_here());
    // Another file at its path, on the same file system (a runtime put
    // back in its place): not the one locked.
    let path = runtime.root().join(SESSION_LOCK_FILE);
    fs::remove_file(&path).unwrap();
    fs::write(&path, b"").unwrap();
    assert!(!held.still_here());
    fs::remove_file(&path).unwrap();
    assert!(!held.still_here());
}

#[test]
fn only_the_copies_setup_seals_are_sealed_places() {
    for sealed in [
        "cli",
        "cli/node_modules/x",
        ".cli-old.12/a",
        ".cli-setup.Ab3",
    ] {
        assert!(sealed_place(Path::new(sealed)), "{sealed}");
    }
    for not in ["", "tmp/cli", "clix", ".playwright", "tmp", "../cli"] {
        assert!(!sealed_place(Path::new(not)), "{not}");
    }
}

#[test]
fn the_bound_registry_is_a_folder_of_the_private_tmpdir() {
    let (_home, runtime) = scratch();
    let registry = bound_registry(&runtime.tmp_dir());
    assert_eq!(registry.parent(), Some(runtime.tmp_dir().as_path()));
}

#[test]
fn only_the_lease_and_the_tab_book_may_be_lost_at_a_power_loss() {
    use StateFile::*;
    let lost = [Lease, Tabs];
    for file in [
        RotationBaseline,
        RotationMarker,
        Bootstrap,
        Lease,
        Tabs,
        HelperManifest,
        TokenFingerprint,
        NodeRecord,
        Browser,
        Artifacts,
        SessionBrowser,
        TabIds,
    ] {
        assert_eq!(file.durable(), !lost.contains(&file), "{file:?}");
    }
}

#[test]
fn a_runtime_that_cannot_be_inspected_is_an_error_not_a_new_one() {
    // Under a plain file: ENOTDIR, which is no "does not exist".
    let home = tempfile::tempdir().unwrap();
    fs::write(home.path().join("file"), "x").unwrap();
    let location = RuntimeLocation {
        path: home.path().join("file/runtime"),
    };
    assert!(matches!(
        Runtime::open(&location),
        Err(RuntimeError::Io {
            action: "inspect",
            ..
        })
    ));
    assert!(matches!(
        Runtime::inspect(&location),
        Err(RuntimeError::Io {
            action: "inspect",
            ..
        })
    ));
    let missing = RuntimeLocation {
        path: home.path().join("none"),
    };
    assert!(Runtime::inspect(&missing).unwrap().is_none());
}

#[test]
fn a_runtime_someone_made_meanwhile_is_checked_not_claimed_and_a_failed_one_is_an_error() {
    // The race create_root allows: the folder appeared after the look.
    let home = tempfile::tempdir().unwrap();
    let made = home.path().join("made");
    fs::create_dir(&made).unwrap();
    create_root(&made).unwrap();
    assert!(!made.join(CLAIM_FILE).exists());
    // mkdir in /proc fails (ENOENT): an error, never taken for made.
    let cannot = Path::new("/proc/my-chrome-runtime");
    for result in [create_root(cannot), ensure_private_subdir(cannot)] {
        assert!(matches!(
            result,
            Err(RuntimeError::Io {
                action: "create",
                ..
            })
        ));
    }
}

#[test]
fn the_private_subfolders_are_made_private_and_a_shared_or_linked_one_refused() {
    let (home, runtime) = scratch();
    let location = RuntimeLocation {
        path: runtime.root().to_path_buf(),
    };
    for sub in [WORKSPACE_DIR, TMP_DIR] {
        let meta = fs::symlink_metadata(runtime.root().join(sub)).unwrap();
        assert!(meta.is_dir() && meta.mode() & 0o7777 == 0o700, "{sub}");
    }
    let tmp = runtime.tmp_dir();
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755)).unwrap();
    assert!(is_unsafe(Runtime::open(&location)));
    fs::remove_dir(&tmp).unwrap();
    symlink(home.path(), &tmp).unwrap();
    assert!(is_unsafe(Runtime::open(&location)));
}

#[test]
fn a_claim_with_anything_after_it_is_not_ours() {
    let (_home, runtime) = scratch();
    let location = RuntimeLocation {
        path: runtime.root().to_path_buf(),
    };
    let claim = runtime.root().join(CLAIM_FILE);
    let mut longer = fs::read(&claim).unwrap();
    longer.push(b'x');
    fs::write(&claim, longer).unwrap();
    assert!(is_unsafe(Runtime::open(&location)));
}

#[test]
fn a_state_file_of_exactly_the_bound_is_read_and_one_byte_more_is_refused() {
    let (_home, runtime) = scratch();
    let at_bound = vec![b'x'; STATE_LIMIT as usize];
    runtime.write_state(StateFile::Lease, &at_bound).unwrap();
    assert_eq!(
        runtime.read_state(StateFile::Lease).unwrap(),
        Some(at_bound)
    );
    let over = vec![b'x'; STATE_LIMIT as usize + 1];
    runtime.write_state(StateFile::Lease, &over).unwrap();
    assert!(is_unsafe(runtime.read_state(StateFile::Lease)));
}

#[test]
fn removing_a_state_file_that_is_gone_is_done_and_one_that_cannot_go_is_an_error() {
    let (_home, runtime) = scratch();
    runtime.remove_state(StateFile::Lease).unwrap();
    runtime.write_state(StateFile::Lease, b"{}").unwrap();
    runtime.remove_state(StateFile::Lease).unwrap();
    assert_eq!(runtime.read_state(StateFile::Lease).unwrap(), None);
    fs::create_dir(runtime.root().join(StateFile::Lease.file_name())).unwrap();
    assert!(matches!(
        runtime.remove_state(StateFile::Lease),
        Err(RuntimeError::Io {
            action: "remove",
            ..
        })
    ));
}

#[test]
fn the_log_grows_to_its_bound_then_becomes_its_older_generation() {
    let (_home, runtime) = scratch();
    let log = |name: &str| fs::read_to_string(runtime.root().join(name)).ok();
    assert_eq!(runtime.read_log(LogFile::Lease, 1000).unwrap(), "");
    // A first line longer than the bound is still written, in place.
    runtime
        .append_log(LogFile::Lease, b"0123456789012345678901234\n", 20)
        .unwrap();
    assert_eq!(log("lease.log.1"), None);
    fs::remove_file(runtime.root().join("lease.log")).unwrap();
    // Up to the bound exactly, one file.
    runtime
        .append_log(LogFile::Lease, b"aaaaaaaaa\n", 20)
        .unwrap();
    runtime
        .append_log(LogFile::Lease, b"bbbbbbbbb\n", 20)
        .unwrap();
    assert_eq!(log("lease.log.1"), None);
    assert_eq!(log("lease.log").unwrap(), "aaaaaaaaa\nbbbbbbbbb\n");
    // One byte past it: the log moves aside, the line starts anew.
    runtime.append_log(LogFile::Lease, b"c\n", 20).unwrap();
    assert_eq!(log("lease.log.1").unwrap(), "aaaaaaaaa\nbbbbbbbbb\n");
    assert_eq!(log("lease.log").unwrap(), "c\n");
    assert_eq!(
        runtime.read_log(LogFile::Lease, 1000).unwrap(),
        "aaaaaaaaa\nbbbbbbbbb\nc\n"
    );
}

#[test]
fn a_log_that_is_a_link_is_neither_followed_nor_skipped() {
    let (home, runtime) = scratch();
    let elsewhere = home.path().join("elsewhere");
    fs::write(&elsewhere, "theirs\n").unwrap();
    fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o600)).unwrap();
    symlink(&elsewhere, runtime.root().join("lease.log")).unwrap();
    assert!(is_unsafe(runtime.append_log(LogFile::Lease, b"x\n", 1000)));
    assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "theirs\n");
    assert!(is_unsafe(runtime.read_log(LogFile::Lease, 1000)));
}

#[test]
fn a_runtime_is_claimed_only_with_my_chromes_own_claim() {
    let (home, runtime) = scratch();
    assert!(claimed(runtime.root()).unwrap(), "open() claims it");
    let bare = home.path().join("bare");
    fs::create_dir(&bare).unwrap();
    assert!(!claimed(&bare).unwrap(), "no claim file: not claimed");
    // A claim file with other words is refused, not taken as none.
    let foreign = home.path().join("foreign");
    fs::create_dir(&foreign).unwrap();
    let claim = foreign.join(CLAIM_FILE);
    fs::write(&claim, b"someone else's\n").unwrap();
    fs::set_permissions(&claim, fs::Permissions::from_mode(0o600)).unwrap();
    assert!(is_unsafe(claimed(&foreign)));
}

#[test]
fn a_json_fault_says_where_and_what_kind_never_the_text() {
    let error =
        serde_json::from_str::<serde_json::Value>("{\"secret-ish\": tru}").expect_err("not JSON");
    assert_eq!(json_fault(&error), "Syntax error at line 1, column 19");
}
