//! The session's daemon as a process, for the one time my-chrome signals
//! it: a daemon that does not answer (stopped, stuck) is stopped by
//! `disconnect`. It is found by exactly what it is, never by name: a
//! process of ours, working in our runtime, running the pinned CLI's
//! daemon entry of our runtime for our session (invariant 11: nothing else
//! is ever signalled).

use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::procs::{Proc, ProcessTable};

/// The daemon's entry inside the verified tree of `runtime`.
fn entry_in(runtime: &Path) -> std::path::PathBuf {
    runtime
        .join(crate::runtime::CLI_DIR)
        .join(crate::helper::DAEMON_ENTRY)
}

/// How long a killed daemon may take to be gone.
const GONE_WITHIN: Duration = Duration::from_secs(3);

/// The daemons of `session` that `runtime` (its real path) runs.
pub fn ours(table: &ProcessTable, runtime: &Path, session: &str) -> Vec<u32> {
    let me = nix::unistd::geteuid().as_raw();
    let mut pids: Vec<u32> = table
        .iter()
        .filter(|p| is_our_daemon(p, me, runtime, session))
        .map(|p| p.pid)
        .collect();
    pids.sort_unstable();
    pids
}

/// A process of user `me`, working in `runtime`, running the runtime's
/// daemon entry for `session`: all four, or it is not ours to signal.
fn is_our_daemon(p: &Proc, me: u32, runtime: &Path, session: &str) -> bool {
    let entry = entry_in(runtime);
    p.uid == Some(me)
        && p.cwd == Some(runtime)
        && p.cmd.get(1).is_some_and(|a| Path::new(a) == entry)
        && p.cmd.get(2).is_some_and(|a| a == session)
}

/// The daemons of `session` still running once a stopped one had
/// [`GONE_WITHIN`] to exit (a detached daemon takes a moment to go).
pub fn left_after_stop(runtime: &Path, session: &str) -> Result<Vec<u32>, crate::procs::ProcError> {
    let deadline = Instant::now() + GONE_WITHIN;
    loop {
        let left = ours(&ProcessTable::read()?, runtime, session);
        if left.is_empty() || Instant::now() >= deadline {
            return Ok(left);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// SIGKILL to each (a stopped process takes it too), then waits until they
/// are gone. `false`: one is still there.
pub fn kill_all(pids: &[u32]) -> bool {
    let alive = |pid: &u32| kill(Pid::from_raw(*pid as i32), None).is_ok();
    for pid in pids {
        let _ = kill(Pid::from_raw(*pid as i32), Signal::SIGKILL);
    }
    let deadline = Instant::now() + GONE_WITHIN;
    while pids.iter().any(alive) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// What became of a daemon that does not answer.
#[derive(Debug, PartialEq, Eq)]
pub enum Silenced {
    /// These daemons of ours were stopped.
    Stopped(Vec<u32>),
    /// No process of ours is the session's daemon.
    NoneOfOurs,
    /// SIGKILL did not end these.
    StillThere(Vec<u32>),
}

/// Stops the session's daemon that does not answer (stopped, stuck),
/// found by exactly what it is (invariant 11): `connect` and `disconnect`
/// alike. `runtime` is the runtime's real path.
pub fn stop_silent(runtime: &Path, session: &str) -> Result<Silenced, crate::procs::ProcError> {
    let pids = ours(&ProcessTable::read()?, runtime, session);
    Ok(if pids.is_empty() {
        Silenced::NoneOfOurs
    } else if kill_all(&pids) {
        Silenced::Stopped(pids)
    } else {
        Silenced::StillThere(pids)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn proc<'a>(uid: Option<u32>, cwd: Option<&'a Path>, cmd: &'a [OsString]) -> Proc<'a> {
        Proc {
            pid: 7,
            start_time: 0,
            uid,
            exe: None,
            cwd,
            cmd,
            environ: &[],
        }
    }

    fn argv(entry: &Path, session: &str) -> Vec<OsString> {
        vec!["node".into(), entry.into(), session.into()]
    }

    #[test]
    fn only_our_users_daemon_of_our_session_in_our_runtime_is_ours() {
        let runtime = Path::new("/home/u/.cache/my-chrome");
        let ours = argv(&entry_in(runtime), "mychrome");
        let is = |p: &Proc| is_our_daemon(p, 1000, runtime, "mychrome");
        assert!(is(&proc(Some(1000), Some(runtime), &ours)));
        // Another user's, another folder's, another session's, another
        // program's, or one whose owner or folder cannot be read: never.
        assert!(!is(&proc(Some(1001), Some(runtime), &ours)));
        assert!(!is(&proc(None, Some(runtime), &ours)));
        assert!(!is(&proc(Some(1000), Some(Path::new("/tmp")), &ours)));
        assert!(!is(&proc(Some(1000), None, &ours)));
        let other_session = argv(&entry_in(runtime), "other");
        assert!(!is(&proc(Some(1000), Some(runtime), &other_session)));
        let elsewhere = argv(Path::new("/opt/cli/lib/entry/cliDaemon.js"), "mychrome");
        assert!(!is(&proc(Some(1000), Some(runtime), &elsewhere)));
        let bare = vec![OsString::from("node")];
        assert!(!is(&proc(Some(1000), Some(runtime), &bare)));
    }
}
