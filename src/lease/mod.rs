//! The session's turn: the daemon keeps one current tab and runs requests
//! side by side, so one browser command runs at a time, for its whole run
//! (select its tab, run, read the tabs again): the session's lock. Commands
//! of different agents interleave one by one; a command waits only for the
//! one in flight, up to `MY_CHROME_LEASE_WAIT_SECS`, then fails with exit 7
//! naming it. `lease.json` says which command holds the turn (for that
//! message and `my-chrome agents`); `lease.log` records every command.

pub mod finish;
pub mod late;
pub mod log;

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::exit::Exit;
use crate::procs::{ProcError, ProcessId};
use crate::runtime::{FileLock, Runtime, RuntimeError, StateFile};
use log::Event;

/// `lease.json`'s version; 1 was the idle lease of earlier releases (read
/// as free).
const VERSION: u32 = 2;
/// How long a command waits before it says whom it waits for.
const TELL_AFTER: Duration = Duration::from_secs(1);
/// How long a command waits after one that was killed mid-run.
const SETTLE: Duration = Duration::from_millis(300);

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error(
        "the browser is busy: agent {holder}'s `{command}` has been running for {running} s{}; \
         waited {waited} s as agent {you} (MY_CHROME_LEASE_WAIT_SECS) and ran nothing. Try again \
         when it is done",
        if *.aside {
            " (it stepped aside for another agent's command: the daemon still runs it, and its \
             reply is shown once it has the turn back)"
        } else if *.abandoned {
            " (past its bound: the daemon still runs it, and my-chrome waits for its end)"
        } else {
            ""
        }
    )]
    Busy {
        holder: String,
        command: String,
        running: u64,
        waited: u64,
        you: String,
        abandoned: bool,
        /// The command it waits for stepped aside (and is not past its
        /// bound).
        aside: bool,
    },
    #[error(
        "{path}: is not a lease file of my-chrome ({detail}); nothing was run. It only records \
         which command is running on the browser: remove it (rm {path}) and run the command again"
    )]
    Malformed { path: PathBuf, detail: String },
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Processes(#[from] ProcError),
    #[error("interrupted by {0} while waiting for the browser; nothing was run")]
    Interrupted(Signal),
    #[error(
        "your `{command}` ran (it stepped aside for another agent's command while the browser \
         ran it), but the browser's turn did not come back to it within {waited} s \
         (MY_CHROME_LEASE_WAIT_SECS; agent {holder}'s `{holding}` has it): its reply is not \
         shown, and what it wrote stays private. Run `my-chrome agents` to see what runs, then \
         run it again if you still need its output"
    )]
    ReplyUnshown {
        command: String,
        waited: u64,
        holder: String,
        holding: String,
    },
    #[error(
        "interrupted by {signal} while your `{command}`, which ran (it stepped aside for another \
         agent's command while the browser ran it), waited for the browser's turn to show its \
         reply: its reply is not shown, and what it wrote stays private"
    )]
    ReplyInterrupted { command: String, signal: Signal },
    #[error(
        "{0}; the turn ends now, while the daemon may still run the command. Run `my-chrome \
         agents` to see what runs"
    )]
    Handover(String),
    #[error(
        "no command of this runtime was handed to this process: `wait-abandoned` is my-chrome's \
         own, started for a command past its bound; never run it by hand (`my-chrome agents` \
         shows what runs)"
    )]
    NotHandedOver,
}

impl LeaseError {
    pub fn exit(&self) -> Exit {
        match self {
            LeaseError::Busy { .. } | LeaseError::ReplyUnshown { .. } => Exit::Busy,
            LeaseError::Malformed { .. } => Exit::Security,
            LeaseError::Runtime(e) => e.exit(),
            LeaseError::Processes(_) => Exit::Failure,
            LeaseError::Interrupted(signal) | LeaseError::ReplyInterrupted { signal, .. } => {
                Exit::from(*signal)
            }
            LeaseError::Handover(_) => Exit::Failure,
            LeaseError::NotHandedOver => Exit::Usage,
        }
    }
}

/// What `lease.json` holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lease {
    pub version: u32,
    pub holder: Option<Holder>,
    /// When the turn last changed hands (a command took it or ended), in
    /// milliseconds since the epoch: the session's last activity, which
    /// its idle limit counts from (`session::limits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<u64>,
}

/// The command holding the turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Holder {
    pub agent: String,
    /// Its name (never its arguments).
    pub command: String,
    /// When it started, in milliseconds since the Unix epoch.
    pub since: u64,
    /// The process holding the turn: the command's, or, once it was
    /// abandoned, the one waiting for the daemon to finish it.
    pub process: ProcessId,
    /// The command went past its bound (or was interrupted) and the daemon
    /// runs it on: `process` waits for its end (`finish.rs`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub abandoned: bool,
}

/// Milliseconds since the Unix epoch: what the lease and the tab book
/// record, and what `agents` shows as "when".
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The command holding the turn, if one is running. A file left by a
/// killed command (its process gone), by an earlier release, or cut short
/// by a power loss (empty, zero-filled) holds nothing; one that is not ours
/// is refused (exit 6).
pub fn holder(runtime: &Runtime) -> Result<Option<Holder>, LeaseError> {
    Ok(recorded(runtime)?.filter(|h| h.process.is_running()))
}

/// The session's last activity (when a command last took or ended its
/// turn) and whether a command holds the turn now, or is past its bound
/// with a process waiting for it: what the idle limit goes by.
pub fn activity(runtime: &Runtime) -> Result<(Option<u64>, bool), LeaseError> {
    // A command past its bound that a process still waits for is at work.
    let waited = late::read(runtime)?.iter().any(late::Late::waited);
    let Some(lease) = read(runtime)? else {
        return Ok((None, waited));
    };
    // A command killed mid-run was active until it was killed, at least
    // since it started.
    let (last, busy) = match lease.holder {
        Some(h) if h.process.is_running() => (lease.last, true),
        Some(h) => (lease.last.max(Some(h.since)), false),
        None => (lease.last, false),
    };
    Ok((last, busy || waited))
}

/// What `lease.json` names, running or not.
fn recorded(runtime: &Runtime) -> Result<Option<Holder>, LeaseError> {
    Ok(read(runtime)?.and_then(|lease| lease.holder))
}

/// `lease.json`, if it holds anything.
fn read(runtime: &Runtime) -> Result<Option<Lease>, LeaseError> {
    let Some(bytes) = runtime
        .read_state(StateFile::Lease)?
        .filter(|bytes| !bytes.iter().all(|b| *b == 0 || b.is_ascii_whitespace()))
    else {
        return Ok(None);
    };
    let malformed = |detail: String| LeaseError::Malformed {
        path: runtime.root().join(StateFile::Lease.file_name()),
        detail,
    };
    // Where and what kind of error, never the text: it may quote the file.
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| malformed(crate::runtime::json_fault(&e)))?;
    if value["version"] == 1 {
        return Ok(None);
    }
    let lease: Lease =
        serde_json::from_value(value).map_err(|_| malformed("unexpected fields".into()))?;
    let name_ok = |s: &str| !s.is_empty() && s.len() <= 64 && !s.contains(char::is_control);
    if lease.version != VERSION
        || lease
            .holder
            .as_ref()
            .is_some_and(|h| !name_ok(&h.agent) || !name_ok(&h.command))
    {
        return Err(malformed("unexpected version or names".into()));
    }
    Ok(Some(lease))
}

/// Writes `lease.json`: `holder` holds the turn (none: it is free), and
/// `last` is when the last command's turn ended.
pub(crate) fn write(
    runtime: &Runtime,
    holder: Option<Holder>,
    last: Option<u64>,
) -> Result<(), RuntimeError> {
    let lease = Lease {
        version: VERSION,
        holder,
        last,
    };
    let bytes = serde_json::to_vec(&lease).expect("the lease serialises");
    runtime.write_state(StateFile::Lease, &bytes)
}

fn event(agent: &str, command: Option<&str>, event: &Event) -> String {
    log::line(SystemTime::now(), agent, command, event)
}

/// The session's turn, held for one command; its end is recorded and the
/// turn passed on when dropped.
#[must_use = "the turn is held only while this lives"]
pub struct HeldLease {
    runtime: Runtime,
    pub agent: String,
    command: String,
    waited: Option<Duration>,
    /// The tab the command ran on, for the log.
    tab: Option<u64>,
    /// Whether it sent the browser anything (else the log says REFUSED).
    ran: bool,
    /// When the last command's turn ended, as this turn found it.
    last_before: Option<u64>,
    /// Whether this turn's end is the session's activity (a command's).
    activity: bool,
    /// The command stepped aside (`step_aside`): its entry in `late.json`
    /// goes when this ends (after its reply, or in place of a waiter's).
    stood_aside: bool,
    /// Dropped after the drop's own work: the log line is written first.
    /// `None` once handed over to the process that waits for an abandoned
    /// command (which then records and ends the turn), and while the
    /// command stands aside (`step_aside`).
    _lock: Option<FileLock>,
}

impl HeldLease {
    /// When the last command's turn before this one ended (`None`: none
    /// recorded).
    pub fn last_before(&self) -> Option<u64> {
        self.last_before
    }

    /// Names the tab the command runs on, for the log.
    pub fn on_tab(&mut self, id: u64) {
        self.tab = Some(id);
    }

    /// A browser command is about to send the browser something: from
    /// here its end is logged as run, not refused.
    pub fn mark_ran(&mut self) {
        self.ran = true;
    }

    /// Whether the turn is held (not handed over, not stood aside).
    pub fn holds(&self) -> bool {
        self._lock.is_some()
    }

    /// Whether a command of another agent waits in line for this turn.
    pub fn others_waiting(&self) -> bool {
        match (&self._lock, self._lock.as_ref().and_then(FileLock::ticket)) {
            (Some(_), Some(ticket)) => self.runtime.others_in_line(ticket, &self.agent),
            _ => false,
        }
    }

    /// The command, sent at `since` and started by the daemon on its tab,
    /// gives the turn up to the command in line while the daemon runs it
    /// (docs/DESIGN.md, "A command steps aside"): recorded in `late.json`
    /// as its own process's (its tab busy, no reply proving the tabs, its
    /// agent's next command waiting for it), logged, and the turn passed
    /// on. It takes the turn again (`retake`) to show its reply.
    pub fn step_aside(&mut self, since: u64) -> Result<(), LeaseError> {
        late::add(
            &self.runtime,
            late::Late {
                agent: self.agent.clone(),
                command: self.command.clone(),
                since,
                process: ProcessId::current()?,
                handed: true,
                tab: self.tab,
                aside: true,
            },
            None,
        )?;
        let _ = log::append(
            &self.runtime,
            &[event(
                &self.agent,
                Some(&self.command),
                &Event::SteppedAside { tab: self.tab },
            )],
        );
        let _ = write(&self.runtime, None, Some(now_ms()));
        self._lock = None;
        self.stood_aside = true;
        Ok(())
    }

    /// Takes the turn again for the reply of the command that stepped
    /// aside, waiting in line up to `wait`.
    pub fn retake(&mut self, wait: Duration) -> Result<(), LeaseError> {
        let started = Instant::now();
        let lock = self
            .runtime
            .session_lock(Some(&self.agent), wait, &mut |_| {})
            .map_err(
                |e| match busy_or(e, &self.runtime, &self.agent, &self.command, started) {
                    // It ran: what did not happen is its reply being shown.
                    LeaseError::Busy {
                        holder,
                        command,
                        waited,
                        ..
                    } => LeaseError::ReplyUnshown {
                        command: self.command.clone(),
                        waited,
                        holder,
                        holding: command,
                    },
                    LeaseError::Interrupted(signal) => LeaseError::ReplyInterrupted {
                        command: self.command.clone(),
                        signal,
                    },
                    other => other,
                },
            )?;
        // The session's last activity as the turns meanwhile left it.
        let last = read(&self.runtime)?.and_then(|l| l.last);
        write(
            &self.runtime,
            Some(Holder {
                agent: self.agent.clone(),
                command: self.command.clone(),
                since: now_ms(),
                process: ProcessId::current()?,
                abandoned: false,
            }),
            last,
        )?;
        self.last_before = last;
        self._lock = Some(lock);
        Ok(())
    }

    /// The command was sent and is not answered, and the daemon runs it
    /// on (`connection`, still open, is its): a process of my-chrome's
    /// takes the connection and waits for the answer (at most
    /// [`finish::CAP`]), recorded in `late.json` (`late`, in place of the
    /// command's own entry if it stepped aside); this turn ends now, so
    /// the others' commands go on at once, and only this agent's next
    /// command waits for that process. No token, no page: it holds the
    /// connection, and writes one line.
    pub fn hand_over(
        self,
        connection: std::os::unix::net::UnixStream,
        spawn: impl FnOnce(std::process::Stdio) -> Result<u32, String>,
    ) -> Result<(), LeaseError> {
        let connection = std::os::fd::OwnedFd::from(connection);
        let pid = spawn(connection.into()).map_err(LeaseError::Handover)?;
        late::add(
            &self.runtime,
            late::Late {
                agent: self.agent.clone(),
                command: self.command.clone(),
                since: now_ms(),
                process: ProcessId::of(pid)?,
                handed: true,
                tab: self.tab,
                aside: false,
            },
            Some(&ProcessId::current()?),
        )?;
        log::append(
            &self.runtime,
            &[event(
                &self.agent,
                Some(&self.command),
                &Event::Abandoned { tab: self.tab },
            )],
        )?;
        // Its end is recorded, and the turn passed on, as any command's.
        Ok(())
    }

    /// The command's end, in the log and the lease file.
    fn record_end(&self) {
        // Best effort, even after a signal: a record left behind is ignored
        // once its process is gone.
        let done = if self.ran {
            Event::Ran {
                tab: self.tab,
                waited: self.waited,
            }
        } else {
            Event::Refused {
                waited: self.waited,
            }
        };
        let _ = log::append(
            &self.runtime,
            &[event(&self.agent, Some(&self.command), &done)],
        );
        // A command's end is the session's latest activity; a turn that
        // is not a command's (the watcher's) leaves it as it was.
        let last = if self.activity {
            Some(now_ms())
        } else {
            self.last_before
        };
        let _ = write(&self.runtime, None, last);
    }

    /// Writes events while the turn is held.
    pub fn log(&self, command: Option<&str>, events: &[Event]) -> Result<(), RuntimeError> {
        let lines: Vec<String> = events
            .iter()
            .map(|e| event(&self.agent, command, e))
            .collect();
        log::append(&self.runtime, &lines)
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        // A turn handed over is the waiting process's to end; one whose
        // runtime went meanwhile (uninstall) has nothing left to write to,
        // and must not write into what is at its place now.
        if self._lock.as_ref().is_some_and(|lock| lock.still_here()) {
            self.record_end();
        }
        // Answered, or handed to a waiter (whose entry is its own): the
        // daemon runs it no more for this process. (Under the turn when
        // it has it back.)
        if self.stood_aside
            && let Ok(me) = ProcessId::current()
        {
            let _ = late::answered(&self.runtime, &me, None);
        }
    }
}

/// Whose turn it is: what its end records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A browser command: refused until it marks that it ran
    /// ([`HeldLease::mark_ran`]).
    Browser,
    /// A command that changes the session itself (connect, disconnect,
    /// uninstall): it always acts.
    Session,
    /// The session's watcher: no command, so its end leaves the session's
    /// idle time running.
    Watcher,
}

/// Takes the session's turn for `command` of `agent` (its identity shown
/// already: `identity`) in the opened `runtime`, waiting up to
/// `config.lease_wait` for the command in flight.
pub fn acquire(
    config: &Config,
    runtime: &Runtime,
    agent: &str,
    command: &str,
    kind: Kind,
) -> Result<HeldLease, LeaseError> {
    let agent = agent.to_string();
    let command = log::command_name(command).to_string();
    let started = Instant::now();
    let left = || config.lease_wait.saturating_sub(started.elapsed());
    let most = longest_turn(runtime);
    // Past a second, it says whom it waits for (once).
    let mut told = false;
    let mut tell = |waited: Duration| {
        end_stopped(runtime, most);
        if told || waited < TELL_AFTER {
            return;
        }
        told = true;
        if let Ok(Some(h)) = holder(runtime) {
            crate::output::notice(&format!(
                "my-chrome: agent {}'s `{}` is running on the browser; waiting up to {} s as \
                 agent {agent}...",
                h.agent,
                h.command,
                config.lease_wait.as_secs()
            ));
        }
    };
    let lock = loop {
        // The agent's own command past its bound (or stepped aside) runs
        // on in the daemon: its next one waits for that (nobody else's
        // does).
        if kind == Kind::Browser
            && let Some(own) = late::wait_for_own(runtime, &agent, left())?
        {
            return Err(waiting_for_own(agent, &own, started.elapsed()));
        }
        let lock = runtime
            .session_lock((kind == Kind::Browser).then_some(&agent), left(), &mut tell)
            .map_err(|e| busy_or(e, runtime, &agent, &command, started))?;
        // Under the turn, again: a command of the agent's that went past
        // its bound, or stepped aside, while this one waited for the turn
        // keeps it waiting too (one late command per agent at most): the
        // turn goes on to the next in line meanwhile.
        if kind == Kind::Browser && late::own_waited(runtime, &agent)?.is_some() {
            drop(lock);
            continue;
        }
        break lock;
    };
    let waited = started.elapsed();
    // A file that is not ours is refused, never overwritten; a log that
    // cannot keep this command's line stops it before it runs.
    let lease = read(runtime)?;
    let last_before = lease.as_ref().and_then(|l| l.last);
    let before = lease.and_then(|l| l.holder);
    log::check(runtime)?;
    // Named at once: a process stopped from here on (its agent may stop
    // its own) is one the next in line can end (`end_stopped`), which
    // goes by this record.
    write(
        runtime,
        Some(Holder {
            agent: agent.clone(),
            command: command.clone(),
            since: now_ms(),
            process: ProcessId::current()?,
            abandoned: false,
        }),
        last_before,
    )?;
    let held = HeldLease {
        runtime: runtime.clone(),
        agent,
        command,
        waited: (waited >= Duration::from_millis(100)).then_some(waited),
        tab: None,
        ran: kind != Kind::Browser,
        last_before,
        activity: kind != Kind::Watcher,
        stood_aside: false,
        _lock: Some(lock),
    };
    // A command killed mid-run may have left a request in the daemon (a
    // tab selected, opened or closed): it ends within moments, before this
    // command lists the tabs.
    if let Some(killed) = before.filter(|h| !h.process.is_running()) {
        // Nobody waits for its answer: the daemon may build it until the
        // cap, and no reply proves the tabs meanwhile. (Recorded first: this
        // one may be stopped, and ended, in the moment it then waits.)
        late::add(
            runtime,
            late::Late {
                agent: killed.agent,
                command: killed.command,
                since: killed.since,
                process: killed.process,
                handed: false,
                tab: None,
                aside: false,
            },
            None,
        )?;
        std::thread::sleep(SETTLE);
    }
    Ok(held)
}

/// `agent`'s own command past its bound, `own`, still runs in the daemon:
/// its next one waited `waited` and runs nothing.
fn waiting_for_own(agent: String, own: &late::Late, waited: Duration) -> LeaseError {
    LeaseError::Busy {
        holder: agent.clone(),
        command: own.command.clone(),
        running: own.secs(now_ms()),
        waited: waited.as_secs(),
        you: agent,
        abandoned: true,
        aside: own.aside,
    }
}

/// What any command's turn takes at most: the user's command bound and
/// the housekeeping around it. A turn held by a process its agent stopped
/// ends once it is past that (`end_stopped`).
fn longest_turn(runtime: &Runtime) -> Duration {
    crate::settings::load(runtime)
        .map_or(crate::settings::DEFAULT_COMMAND_BOUND, |s| s.command_bound)
        + crate::session::pinned::HOUSEKEEPING_TIMEOUT
}

/// Ends the turn of a process stopped (SIGSTOP, Ctrl+Z) while it holds it,
/// once the turn began longer ago than `most` (the user's command bound
/// and the housekeeping around it): a stopped process gives up nothing
/// until it is continued, so an agent could keep every other out for as
/// long as it liked. It is killed (found by the record only my-chrome
/// writes, pid and start time, and only while it is stopped); the kernel
/// frees its lock, and the next turn records what it may have left
/// running in the daemon (`late`).
fn end_stopped(runtime: &Runtime, most: Duration) {
    let Ok(Some(h)) = holder(runtime) else {
        return;
    };
    let held = Duration::from_millis(now_ms().saturating_sub(h.since));
    if held <= most || !h.process.is_stopped() {
        return;
    }
    let pid = nix::unistd::Pid::from_raw(h.process.pid as i32);
    if nix::sys::signal::kill(pid, Signal::SIGKILL).is_ok() {
        let _ = log::append(
            runtime,
            &[event(
                &h.agent,
                Some(&h.command),
                &Event::StoppedEnded { held },
            )],
        );
        crate::output::notice(&format!(
            "my-chrome: agent {}'s `{}` was stopped while it held the browser's turn, {} s \
             after it began (past the user's bound): it was ended",
            h.agent,
            h.command,
            held.as_secs()
        ));
    }
}

/// A lock that timed out is the browser being busy: logged, and said with
/// whose command it was.
fn busy_or(
    error: RuntimeError,
    runtime: &Runtime,
    agent: &str,
    command: &str,
    started: Instant,
) -> LeaseError {
    let RuntimeError::LockTimeout { .. } = error else {
        return match error {
            RuntimeError::Interrupted(signal) => LeaseError::Interrupted(signal),
            other => other.into(),
        };
    };
    let waited = started.elapsed();
    // A command that ended just now has no record: say so plainly.
    let (name, what, running, abandoned) = match holder(runtime) {
        Ok(Some(h)) => (
            h.agent,
            h.command,
            now_ms().saturating_sub(h.since) / 1000,
            h.abandoned,
        ),
        _ => ("(unknown)".to_string(), "other".to_string(), 0, false),
    };
    // Not under the lock (another command holds it): one short line, written
    // with a single append.
    let _ = log::append(
        runtime,
        &[event(
            agent,
            Some(command),
            &Event::Timeout {
                holder: &name,
                waited,
            },
        )],
    );
    LeaseError::Busy {
        holder: name,
        command: what,
        running,
        waited: waited.as_secs(),
        you: agent.to_string(),
        abandoned,
        aside: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;
    use std::fs;

    /// A runtime of its own, and the configuration of `agent` waiting up
    /// to `wait` seconds for the turn.
    struct Place {
        _home: tempfile::TempDir,
        runtime: Runtime,
    }

    impl Place {
        fn new() -> Place {
            let (home, runtime) = crate::runtime::scratch();
            Place {
                _home: home,
                runtime,
            }
        }

        fn config(&self, agent: &str, wait: u64) -> Config {
            let vars = [
                ("HOME", self.runtime.root().parent().unwrap().as_os_str()),
                ("MY_CHROME_RUNTIME_DIR", self.runtime.root().as_os_str()),
                ("MY_CHROME_AGENT", agent.as_ref()),
                ("MY_CHROME_LEASE_WAIT_SECS", wait.to_string().as_ref()),
            ]
            .map(|(k, v)| (OsString::from(k), v.to_os_string()));
            Config::from_vars(vars).unwrap()
        }

        fn take(&self, agent: &str, wait: u64, command: &str) -> Result<HeldLease, LeaseError> {
            self.take_as(agent, wait, command, Kind::Session)
        }

        fn take_as(
            &self,
            agent: &str,
            wait: u64,
            command: &str,
            kind: Kind,
        ) -> Result<HeldLease, LeaseError> {
            acquire(
                &self.config(agent, wait),
                &self.runtime,
                agent,
                command,
                kind,
            )
        }

        fn record(&self, bytes: &[u8]) {
            self.runtime.write_state(StateFile::Lease, bytes).unwrap();
        }

        fn log(&self) -> Vec<String> {
            let text = fs::read_to_string(self.runtime.root().join("lease.log")).unwrap();
            // Each line without its time.
            text.lines()
                .map(|l| l.split_once(' ').unwrap().1.to_string())
                .collect()
        }
    }

    fn holder_named(agent: &str, command: &str, process: ProcessId) -> Holder {
        Holder {
            agent: agent.into(),
            command: command.into(),
            since: now_ms(),
            process,
            abandoned: false,
        }
    }

    /// A process that was and is no more.
    fn dead_process() -> ProcessId {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        ProcessId { pid, start: 0 }
    }

    #[test]
    fn a_turn_whose_runtime_went_writes_nothing_where_it_was() {
        let place = Place::new();
        let held = place.take("ann", 0, "snapshot").unwrap();
        // The runtime goes (uninstall), and another folder takes its place.
        let root = place.runtime.root().to_path_buf();
        fs::rename(&root, root.with_file_name("gone")).unwrap();
        fs::create_dir(&root).unwrap();
        drop(held);
        assert!(
            fs::read_dir(&root).unwrap().next().is_none(),
            "the turn's end was written into the folder now there"
        );
        // A turn whose runtime stays writes its end as before.
        fs::remove_dir(&root).unwrap();
        fs::rename(root.with_file_name("gone"), &root).unwrap();
        drop(place.take("ann", 0, "snapshot").unwrap());
        assert!(
            place
                .log()
                .iter()
                .any(|l| l.contains("RAN agent=ann") || l.contains("REFUSED agent=ann")),
            "{:?}",
            place.log()
        );
    }

    #[test]
    fn now_is_the_clocks_milliseconds_since_the_epoch() {
        let ms = |t: SystemTime| {
            t.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_millis()
        };
        let before = ms(SystemTime::now());
        let now = u128::from(now_ms());
        let after = ms(SystemTime::now());
        assert!(before <= now && now <= after, "{before} {now} {after}");
    }

    #[test]
    fn a_record_that_holds_nothing_leaves_the_turn_free() {
        let place = Place::new();
        assert!(holder(&place.runtime).unwrap().is_none(), "no file");
        for nothing in [
            &b""[..],
            b"\0\0\0\0",
            b" \n\t ",
            br#"{"version":1,"agent":"x"}"#,
        ] {
            place.record(nothing);
            assert!(holder(&place.runtime).unwrap().is_none(), "{nothing:?}");
        }
        // A killed command's record names it, and holds nothing.
        let killed = holder_named("alpha", "snapshot", dead_process());
        write(&place.runtime, Some(killed.clone()), None).unwrap();
        assert_eq!(recorded(&place.runtime).unwrap(), Some(killed));
        assert!(holder(&place.runtime).unwrap().is_none());
        // A running one holds the turn.
        let running = holder_named("alpha", "snapshot", ProcessId::current().unwrap());
        write(&place.runtime, Some(running.clone()), None).unwrap();
        assert_eq!(holder(&place.runtime).unwrap(), Some(running));
    }

    #[test]
    fn a_record_that_is_not_ours_is_refused_with_exit_6() {
        let place = Place::new();
        let pid = std::process::id();
        let with = |agent: &str, command: &str| {
            format!(
                r#"{{"version":2,"holder":{{"agent":"{agent}","command":"{command}","since":1,"process":{{"pid":{pid},"start":0}}}}}}"#
            )
        };
        let longest = "a".repeat(64);
        let too_long = "a".repeat(65);
        for bad in [
            "not json".to_string(),
            r#"{"version":3,"holder":null}"#.to_string(),
            r#"{"version":2,"holder":null,"more":1}"#.to_string(),
            with("", "snapshot"),
            with(&too_long, "snapshot"),
            with("alpha", ""),
            with("alpha", &too_long),
            with("al\\u001bpha", "snapshot"),
            with("alpha", "snap\\nshot"),
        ] {
            place.record(bad.as_bytes());
            let error = recorded(&place.runtime).unwrap_err();
            assert!(matches!(error, LeaseError::Malformed { .. }), "{bad}");
            assert_eq!(error.exit(), Exit::Security, "{bad}");
        }
        for good in [with(&longest, "snapshot"), with("alpha", &longest)] {
            place.record(good.as_bytes());
            assert!(recorded(&place.runtime).unwrap().is_some(), "{good}");
        }
    }

    #[test]
    fn a_turn_records_its_holder_while_it_lives_and_logs_what_it_did() {
        let place = Place::new();
        let mut held = place.take("alpha", 0, "snapshot").unwrap();
        let holding = holder(&place.runtime).unwrap().unwrap();
        assert_eq!(
            (holding.agent.as_str(), holding.command.as_str()),
            ("alpha", "snapshot")
        );
        assert_eq!(holding.process, ProcessId::current().unwrap());
        assert!(now_ms().abs_diff(holding.since) < 60_000);
        held.on_tab(3);
        held.log(Some("tab-claim"), &[Event::Claimed { tab: 4 }])
            .unwrap();
        drop(held);
        assert_eq!(recorded(&place.runtime).unwrap(), None, "the turn is free");
        // A command that sent the browser nothing says so; a name that is
        // not a command's is logged as `other`.
        let held = place
            .take_as("beta", 0, "https://example.test/", Kind::Browser)
            .unwrap();
        drop(held);
        // One that marks it sends something ran.
        let mut held = place.take_as("gamma", 0, "eval", Kind::Browser).unwrap();
        held.mark_ran();
        drop(held);
        assert_eq!(
            place.log(),
            [
                "CLAIMED agent=alpha command=tab-claim tab=t4",
                "RAN agent=alpha command=snapshot tab=t3",
                "REFUSED agent=beta command=other",
                "RAN agent=gamma command=eval",
            ]
        );
    }

    #[test]
    fn a_command_past_its_bound_keeps_only_its_own_agent_waiting() {
        use std::os::unix::net::UnixStream;
        let place = Place::new();
        let mut held = place.take_as("alpha", 0, "eval", Kind::Browser).unwrap();
        held.mark_ran();
        held.on_tab(2);
        let (ours, _daemon) = UnixStream::pair().unwrap();
        let waiter = std::process::id();
        held.hand_over(ours, |_connection| Ok(waiter)).unwrap();
        // The turn is free; late.json names the waiter.
        assert_eq!(recorded(&place.runtime).unwrap(), None, "the turn is free");
        let late = late::read(&place.runtime).unwrap();
        assert_eq!(late.len(), 1, "{late:?}");
        assert!(late[0].handed);
        assert_eq!(late[0].process, ProcessId::of(waiter).unwrap());
        assert_eq!(
            (late[0].agent.as_str(), late[0].command.as_str()),
            ("alpha", "eval")
        );
        assert_eq!(
            place.log(),
            [
                "ABANDONED agent=alpha command=eval tab=t2",
                "RAN agent=alpha command=eval tab=t2",
            ]
        );
        // Another agent takes the turn at once; alpha waits for its own.
        drop(place.take("beta", 0, "snapshot").unwrap());
        let Err(refused) = place.take_as("alpha", 0, "snapshot", Kind::Browser) else {
            panic!("alpha's next command did not wait for its own");
        };
        assert!(
            matches!(&refused, LeaseError::Busy { holder, abandoned: true, .. } if holder == "alpha"),
            "{refused}"
        );
        // A waiter that cannot start: nothing is late, the turn ends here.
        let place = Place::new();
        let mut held = place.take_as("beta", 0, "click", Kind::Browser).unwrap();
        held.mark_ran();
        let (ours, _daemon) = UnixStream::pair().unwrap();
        let refused = held
            .hand_over(ours, |_connection| Err("no such program".into()))
            .unwrap_err();
        assert!(
            matches!(&refused, LeaseError::Handover(why) if why == "no such program"),
            "{refused}"
        );
        assert_eq!(recorded(&place.runtime).unwrap(), None, "the turn is free");
        assert!(late::read(&place.runtime).unwrap().is_empty());
        assert_eq!(place.log(), ["RAN agent=beta command=click"]);
    }

    #[test]
    fn only_the_agents_next_browser_command_waits_for_its_late_one_and_then_runs() {
        use std::os::unix::net::UnixStream;
        let place = Place::new();
        let mut held = place.take_as("alpha", 0, "eval", Kind::Browser).unwrap();
        held.mark_ran();
        // A waiter that ends by itself a second from now.
        let mut waiter = std::process::Command::new("sleep")
            .arg("1")
            .spawn()
            .unwrap();
        let id = ProcessId::of(waiter.id()).unwrap();
        let (ours, _daemon) = UnixStream::pair().unwrap();
        held.hand_over(ours, |_connection| Ok(id.pid)).unwrap();
        // A command that is not a browser command does not wait for it.
        drop(place.take_as("alpha", 0, "release", Kind::Session).unwrap());
        assert!(id.is_running());
        // alpha's next browser command waits for it, then runs.
        drop(
            place
                .take_as("alpha", 10, "snapshot", Kind::Browser)
                .unwrap(),
        );
        assert!(!id.is_running());
        waiter.wait().unwrap();
    }

    #[test]
    fn a_stopped_holder_is_ended_only_past_the_longest_turn_and_only_while_stopped() {
        let place = Place::new();
        let most = longest_turn(&place.runtime);
        assert_eq!(
            most,
            crate::settings::DEFAULT_COMMAND_BOUND + crate::session::pinned::HOUSEKEEPING_TIMEOUT
        );
        let mut holder = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let id = ProcessId::of(holder.id()).unwrap();
        let held_for = |ago: Duration| {
            let since = now_ms() - ago.as_millis() as u64;
            let holding = Holder {
                agent: "alpha".into(),
                command: "eval".into(),
                since,
                process: id,
                abandoned: false,
            };
            write(&place.runtime, Some(holding), None).unwrap();
        };
        // Past the longest turn, but running: left alone.
        held_for(most + Duration::from_secs(5));
        end_stopped(&place.runtime, most);
        assert!(id.is_running());
        // Stopped, within the longest turn: left alone.
        let pid = nix::unistd::Pid::from_raw(id.pid as i32);
        nix::sys::signal::kill(pid, Signal::SIGSTOP).unwrap();
        // (A signal is delivered a moment after it is sent.)
        let deadline = Instant::now() + Duration::from_secs(10);
        while !id.is_stopped() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        held_for(most - Duration::from_secs(5));
        end_stopped(&place.runtime, most);
        assert!(id.is_running());
        // Stopped, past it: ended, and the log says so.
        held_for(most + Duration::from_secs(5));
        end_stopped(&place.runtime, most);
        let ended = !id.is_running() || {
            std::thread::sleep(Duration::from_millis(500));
            !id.is_running()
        };
        let _ = holder.kill();
        holder.wait().unwrap();
        assert!(ended, "the stopped holder was not ended");
        assert!(
            place
                .log()
                .iter()
                .any(|l| l.starts_with("STOPPED-ENDED agent=alpha")),
            "{:?}",
            place.log()
        );
    }

    #[test]
    fn a_command_killed_mid_run_may_answer_until_the_cap() {
        let place = Place::new();
        // A holder whose process is gone: killed mid-run.
        write(
            &place.runtime,
            Some(Holder {
                agent: "alpha".into(),
                command: "click".into(),
                since: now_ms(),
                process: ProcessId {
                    pid: std::process::id(),
                    start: 1,
                },
                abandoned: false,
            }),
            None,
        )
        .unwrap();
        drop(place.take("beta", 0, "snapshot").unwrap());
        let late = late::read(&place.runtime).unwrap();
        assert_eq!(late.len(), 1, "{late:?}");
        assert!(!late[0].handed && late[0].agent == "alpha");
        // Nobody waits for it: alpha's next command is not kept waiting.
        drop(
            place
                .take_as("alpha", 0, "snapshot", Kind::Browser)
                .unwrap(),
        );
    }

    #[test]
    fn the_idle_clock_counts_from_the_last_commands_end_never_from_a_watchers_turn() {
        let place = Place::new();
        assert_eq!(activity(&place.runtime).unwrap(), (None, false));
        let held = place.take("alpha", 0, "snapshot").unwrap();
        // A turn held is activity that has not ended.
        assert_eq!(activity(&place.runtime).unwrap(), (None, true));
        assert_eq!(held.last_before(), None);
        drop(held);
        let (ended, busy) = activity(&place.runtime).unwrap();
        let ended = ended.expect("the end is recorded");
        assert!(!busy && now_ms().abs_diff(ended) < 60_000);
        // The next turn finds it, keeps it while it runs, and a turn that
        // is not a command's leaves it as it was.
        std::thread::sleep(Duration::from_millis(5));
        let watcher = place
            .take_as("my-chrome", 0, "session-end", Kind::Watcher)
            .unwrap();
        assert_eq!(watcher.last_before(), Some(ended));
        assert_eq!(activity(&place.runtime).unwrap(), (Some(ended), true));
        drop(watcher);
        assert_eq!(activity(&place.runtime).unwrap(), (Some(ended), false));
        // A command's turn moves it on.
        drop(place.take("beta", 0, "tab-list").unwrap());
        let (later, _) = activity(&place.runtime).unwrap();
        assert!(later.unwrap() > ended);
        // A command killed mid-run was active until at least its start.
        let killed = Holder {
            since: later.unwrap() + 1_000,
            ..holder_named("gamma", "eval", dead_process())
        };
        write(&place.runtime, Some(killed), later).unwrap();
        assert_eq!(
            activity(&place.runtime).unwrap(),
            (Some(later.unwrap() + 1_000), false)
        );
    }

    #[test]
    fn a_busy_turn_is_refused_with_exit_7_naming_its_holder() {
        let place = Place::new();
        let _held = place.take("alpha", 0, "snapshot").unwrap();
        // The holder started 7 s ago.
        let mut earlier = holder(&place.runtime).unwrap().unwrap();
        earlier.since -= 7_000;
        write(&place.runtime, Some(earlier), None).unwrap();
        for wait in [0, 2] {
            let Err(error) = place.take("beta", wait, "click") else {
                panic!("beta took the turn alpha holds");
            };
            let LeaseError::Busy {
                holder,
                command,
                running,
                waited,
                you,
                ..
            } = &error
            else {
                panic!("{error}");
            };
            assert_eq!(
                (holder.as_str(), command.as_str(), *waited, you.as_str()),
                ("alpha", "snapshot", wait, "beta")
            );
            assert!((7..=9).contains(running), "{running}");
            assert_eq!(error.exit(), Exit::Busy);
        }
        assert_eq!(
            place.log(),
            [
                "TIMEOUT agent=beta command=click holder=alpha waited=0s",
                "TIMEOUT agent=beta command=click holder=alpha waited=2s",
            ]
        );
    }

    #[test]
    fn a_waiter_gets_the_turn_when_the_command_in_flight_ends() {
        let place = Place::new();
        let held = place.take("alpha", 0, "snapshot").unwrap();
        let ender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1_500));
            drop(held);
        });
        let waiter = place.take("beta", 30, "click").unwrap();
        ender.join().unwrap();
        drop(waiter);
        let log = place.log();
        assert_eq!(log[0], "RAN agent=alpha command=snapshot");
        assert!(
            log[1].starts_with("RAN agent=beta command=click waited="),
            "{log:?}"
        );
    }

    #[test]
    fn an_interrupted_wait_ends_with_the_signals_exit() {
        let error = LeaseError::Interrupted(Signal::SIGTERM);
        assert_eq!(error.exit(), Exit::from(Signal::SIGTERM));
        assert_ne!(error.exit(), Exit::Failure);
        assert!(error.to_string().contains("nothing was run"));
        // A command that stepped aside ran: its interrupted wait for the
        // turn back never says otherwise.
        let error = LeaseError::ReplyInterrupted {
            command: "eval".into(),
            signal: Signal::SIGINT,
        };
        assert_eq!(error.exit(), Exit::from(Signal::SIGINT));
        let said = error.to_string();
        assert!(said.contains("`eval`, which ran") && !said.contains("nothing was run"));
    }
}
