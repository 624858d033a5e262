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

use crate::procs::ProcessTable;

/// The daemon's entry inside the verified tree.
const DAEMON_ENTRY: &str = "cli/node_modules/playwright-core/lib/entry/cliDaemon.js";

/// How long a killed daemon may take to be gone.
const GONE_WITHIN: Duration = Duration::from_secs(3);

/// The daemons of `session` that `runtime` (its real path) runs.
pub fn ours(table: &ProcessTable, runtime: &Path, session: &str) -> Vec<u32> {
    let me = nix::unistd::geteuid().as_raw();
    let entry = runtime.join(DAEMON_ENTRY);
    let mut pids: Vec<u32> = table
        .iter()
        .filter(|p| p.uid == Some(me) && p.cwd == Some(runtime))
        .filter(|p| {
            p.cmd.get(1).is_some_and(|a| Path::new(a) == entry)
                && p.cmd.get(2).is_some_and(|a| a == session)
        })
        .map(|p| p.pid)
        .collect();
    pids.sort_unstable();
    pids
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
