//! The session's lease: every agent of the user shares the one browser
//! session, and the Playwright CLI acts on its current tab, so one agent at a
//! time holds it. A holder keeps it while it runs commands and loses it after
//! `MY_CHROME_LEASE_IDLE_SECS` without one; others queue in arrival order for
//! up to `MY_CHROME_LEASE_WAIT_SECS`, then fail with exit 7. The state is the
//! private `lease.json`, changed only under its own lock (never the wrapper
//! lock, which a `setup` or `connect` holds for long).

pub mod agent;
pub mod log;
pub mod record;
pub mod status;

use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::Signal;

use crate::config::Config;
use crate::exit::Exit;
use crate::procs::{ProcError, ProcessId};
use crate::runtime::{Runtime, RuntimeError, StateFile};
use crate::signals;
use log::Event;
use record::{Blocker, Lease, Previous, Turn};

/// How often a waiter looks again.
const POLL: Duration = Duration::from_millis(100);
/// Bound on the lease lock when a command's end is recorded.
const FINISH_LOCK_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error(
        "the browser is busy: agent {holder} has it ({state}); waited {waited} s as agent {you} \
         (MY_CHROME_LEASE_WAIT_SECS) and ran nothing. Try again later: the lease frees itself \
         after {idle_limit} s without a command from {holder}, or when {holder} runs \
         `my-chrome release`"
    )]
    Busy {
        holder: String,
        state: String,
        waited: u64,
        you: String,
        idle_limit: u64,
    },
    #[error(
        "agent {you} does not hold the lease: {holder} does ({state}); nothing was released. Only \
         the holder releases it; it frees itself after {idle_limit} s without a command"
    )]
    NotHolder {
        holder: String,
        state: String,
        you: String,
        idle_limit: u64,
    },
    #[error(
        "{path}: is not a lease file of my-chrome ({detail}); nothing was run. It only records \
         which agent is using the browser: remove it (rm {path}) and run the command again"
    )]
    Malformed { path: PathBuf, detail: String },
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Processes(#[from] ProcError),
    #[error("interrupted by {0} while waiting for the browser; nothing was run")]
    Interrupted(Signal),
}

impl LeaseError {
    pub fn exit(&self) -> Exit {
        match self {
            LeaseError::Busy { .. } | LeaseError::NotHolder { .. } => Exit::Busy,
            LeaseError::Malformed { .. } => Exit::Security,
            LeaseError::Runtime(e) => e.exit(),
            LeaseError::Processes(_) => Exit::Failure,
            LeaseError::Interrupted(signal) => Exit::from(*signal),
        }
    }
}

/// Milliseconds of a clock shared by every process that never goes back
/// (and, on Linux, counts suspended time, so a lease idles through a
/// laptop's sleep: `platform::LEASE_CLOCK`).
pub fn now_ms() -> u64 {
    let t = nix::time::clock_gettime(crate::platform::LEASE_CLOCK)
        .expect("the monotonic clock is always readable");
    t.tv_sec() as u64 * 1000 + t.tv_nsec() as u64 / 1_000_000
}

/// The lease file, or a fresh one. A file that is not private is refused by
/// the runtime (exit 6); one that is not ours is refused here.
pub fn read(runtime: &Runtime) -> Result<Lease, LeaseError> {
    // An empty, blank or zero-filled file is what a power loss can leave
    // of an unsynced write.
    let Some(bytes) = runtime
        .read_state(StateFile::Lease)?
        .filter(|bytes| !bytes.iter().all(|b| *b == 0 || b.is_ascii_whitespace()))
    else {
        return Ok(Lease::new());
    };
    let malformed = |detail: String| LeaseError::Malformed {
        path: runtime.root().join(StateFile::Lease.file_name()),
        detail,
    };
    // Where and what kind of error, never the text: it may quote the file.
    let lease: Lease = serde_json::from_slice(&bytes).map_err(|e| {
        malformed(format!(
            "{:?} error at line {}, column {}",
            e.classify(),
            e.line(),
            e.column()
        ))
    })?;
    if !lease.well_formed() {
        return Err(malformed("unexpected version, names or times".into()));
    }
    Ok(lease)
}

fn write(runtime: &Runtime, lease: &Lease) -> Result<(), RuntimeError> {
    let bytes = serde_json::to_vec(lease).expect("the lease serialises");
    runtime.write_state(StateFile::Lease, &bytes)
}

pub fn alive(process: &ProcessId) -> bool {
    process.is_running()
}

fn event(agent: &str, command: Option<&str>, event: &Event) -> String {
    log::line(SystemTime::now(), agent, command, event)
}

/// The lease held for one command; its end is recorded when dropped.
#[must_use = "the lease is held only while this lives"]
pub struct HeldLease {
    runtime: Runtime,
    agent: String,
    command: String,
    me: ProcessId,
}

impl HeldLease {
    /// Gives the lease up entirely (after `disconnect`: nothing left to hold).
    pub fn release(self) -> Result<(), LeaseError> {
        let _lock = self.runtime.lease_lock(FINISH_LOCK_WAIT, false)?;
        let mut lease = read(&self.runtime)?;
        if lease.release(&self.agent) {
            let line = event(&self.agent, Some(&self.command), &Event::Released);
            log::append(&self.runtime, &[line])?;
            write(&self.runtime, &lease)?;
        }
        Ok(())
        // Drop then finds nothing of ours to finish.
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        // Best effort, even after a signal: if it fails, the record of a
        // command that no longer runs is ignored once its process is gone.
        if let Ok(_lock) = self.runtime.lease_lock(FINISH_LOCK_WAIT, false)
            && let Ok(mut lease) = read(&self.runtime)
        {
            let before = lease.clone();
            lease.finish(&self.agent, self.me, now_ms());
            if lease != before {
                let _ = write(&self.runtime, &lease);
            }
        }
    }
}

/// Takes (or refreshes) the lease for `command` in the opened `runtime`,
/// waiting in line behind other agents for up to `config.lease_wait`.
pub fn acquire(config: &Config, runtime: &Runtime, command: &str) -> Result<HeldLease, LeaseError> {
    let runtime = runtime.clone();
    let agent = agent::identify(config);
    let command = log::command_name(command).to_string();
    let me = ProcessId::current()?;
    let idle_limit = config.lease_idle.as_millis() as u64;
    let started = Instant::now();
    let mut queued = false;
    let mut told = false;
    loop {
        {
            let _lock = runtime.lease_lock(config.lock_wait, true)?;
            let mut lease = read(&runtime)?;
            let before = lease.clone();
            let now = now_ms();
            // Events are logged before the state changes: a log that cannot
            // be written (refused, say) leaves the lease as it was.
            let mut lines = Vec::new();
            match lease.turn(&agent, me, now, idle_limit, &alive) {
                Turn::Go(previous) => {
                    if let Previous::Expired {
                        agent: holder,
                        idle_ms,
                    } = &previous
                    {
                        let idle = Duration::from_millis(*idle_ms);
                        lines.push(event(holder, None, &Event::Expired { idle }));
                    }
                    let other = lease.take(&agent, &command, me, now);
                    lines.push(event(
                        &agent,
                        Some(&command),
                        &match previous {
                            Previous::Ours => Event::Refreshed,
                            _ => Event::Acquired {
                                waited: queued.then(|| started.elapsed()),
                                previous: other.as_deref(),
                            },
                        },
                    ));
                    log::append(&runtime, &lines)?;
                    write(&runtime, &lease)?;
                    if let Some(other) = other {
                        eprintln!(
                            "my-chrome: agent {other} used the browser before this command: the \
                             current tab may be the one it left. Check with `my-chrome tab-list` \
                             or go to your page again before relying on what it shows"
                        );
                    }
                    return Ok(HeldLease {
                        runtime,
                        agent,
                        command,
                        me,
                    });
                }
                Turn::Wait(blocker) => {
                    if lease.queue(&agent, &command, me, now) {
                        queued = true;
                        let holder = blocker.agent();
                        lines.push(event(&agent, Some(&command), &Event::Blocked { holder }));
                    }
                    let waited = started.elapsed();
                    let out_of_time = waited >= config.lease_wait;
                    if out_of_time {
                        lease.leave_queue(me);
                        let holder = blocker.agent();
                        lines.push(event(
                            &agent,
                            Some(&command),
                            &Event::Timeout { holder, waited },
                        ));
                    }
                    log::append(&runtime, &lines)?;
                    if lease != before {
                        write(&runtime, &lease)?;
                    }
                    if out_of_time {
                        return Err(busy(&blocker, &agent, waited, config));
                    }
                    if !told {
                        eprintln!(
                            "my-chrome: the browser is in use by agent {} ({}); waiting up to {} s \
                             as agent {agent}...",
                            blocker.agent(),
                            blocker.describe(),
                            config.lease_wait.as_secs()
                        );
                        told = true;
                    }
                }
            }
        }
        thread::sleep(POLL);
        if let Some(signal) = signals::pending() {
            let _lock = runtime.lease_lock(FINISH_LOCK_WAIT, false)?;
            let mut lease = read(&runtime)?;
            lease.leave_queue(me);
            write(&runtime, &lease)?;
            return Err(LeaseError::Interrupted(signal));
        }
    }
}

fn busy(blocker: &Blocker, you: &str, waited: Duration, config: &Config) -> LeaseError {
    LeaseError::Busy {
        holder: blocker.agent().to_string(),
        state: blocker.describe(),
        waited: waited.as_secs(),
        you: you.to_string(),
        idle_limit: config.lease_idle.as_secs(),
    }
}

/// `my-chrome release`: gives up the caller's own lease. `Ok(false)` when
/// it held none (and nobody else does either).
pub fn release(config: &Config) -> Result<(String, bool), LeaseError> {
    let agent = agent::identify(config);
    let Some(runtime) = Runtime::inspect(&config.runtime)? else {
        return Ok((agent, false));
    };
    let _lock = runtime.lease_lock(config.lock_wait, true)?;
    let mut lease = read(&runtime)?;
    if lease.release(&agent) {
        log::append(&runtime, &[event(&agent, None, &Event::Released)])?;
        write(&runtime, &lease)?;
        return Ok((agent, true));
    }
    let idle_limit = config.lease_idle.as_millis() as u64;
    let Some(holder) = &lease.holder else {
        return Ok((agent, false));
    };
    match lease.holder_idle(now_ms(), &alive) {
        Some(idle) if idle >= idle_limit => Ok((agent, false)),
        idle => Err(LeaseError::NotHolder {
            holder: holder.agent.clone(),
            state: match idle {
                Some(ms) => format!("idle {} s", ms / 1000),
                None => format!("running `{}`", holder.command),
            },
            you: agent,
            idle_limit: config.lease_idle.as_secs(),
        }),
    }
}
