//! How long a session may stay attached: the user's idle and lifetime
//! limits (`src/settings.rs`), fixed for a session when `connect` makes it
//! (`<runtime>/session-limits.json`, with the watcher it started), and the
//! record of an end (`<runtime>/session-ended.json`, kept until the next
//! `connect` or `disconnect`) that lets every later command say why the
//! session ended. The decisions are pure (`due`, `left`); the watcher
//! (`command/watch.rs`) and every command's start act on them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::exit::Exit;
use crate::procs::ProcessId;
use crate::runtime::{Runtime, RuntimeError, StateFile};

const VERSION: u32 = 1;
/// How long the daemon's own idle timer waits past the idle limit: the
/// longest a command can run within my-chrome's accounting (its bound, at
/// most an hour, and the wait for its abandoned end, ten minutes). The
/// daemon pokes its timer only when a request starts, so a shorter margin
/// would cut a long command half-way.
const BACKSTOP_MARGIN: Duration = Duration::from_secs(70 * 60);

/// Why a session ended by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reason {
    /// No browser command for the idle limit.
    Idle,
    /// The lifetime granted at `connect` is over.
    Lifetime,
}

impl Reason {
    /// The word the lease log and `--json` use.
    pub fn word(self) -> &'static str {
        match self {
            Reason::Idle => "idle",
            Reason::Lifetime => "lifetime",
        }
    }
}

/// A session's limits, as `connect` fixed them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    version: u32,
    /// When the session was connected, in milliseconds since the epoch.
    pub connected_at: u64,
    /// The idle limit in milliseconds; `None`: never.
    pub idle_ms: Option<u64>,
    /// When the session ends whatever it does, in milliseconds since the epoch.
    pub ends_at: u64,
    /// The process that ends the session on time (`my-chrome watch-session`).
    pub watcher: Option<ProcessId>,
}

/// How long a session has left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Left {
    /// Until the idle end if no browser command comes (`None`: never;
    /// a command in flight counts as one that just ended).
    pub idle: Option<Duration>,
    /// Until the lifetime end.
    pub lifetime: Duration,
}

impl Left {
    /// One line for `ensure`, `doctor` and `agents`.
    pub fn describe(&self) -> String {
        let round = |d: Duration| humantime::format_duration(Duration::from_secs(d.as_secs()));
        let idle = match self.idle {
            Some(idle) => format!("ends after {} more without a browser command", round(idle)),
            None => "has no idle limit".to_string(),
        };
        format!(
            "the session {idle}, and in {} at the latest (the user's limits)",
            round(self.lifetime)
        )
    }
}

impl Limits {
    /// The limits of a session connected `now` with `idle` (none: never)
    /// and `lifetime`.
    pub fn new(now: u64, idle: Option<Duration>, lifetime: Duration) -> Limits {
        Limits {
            version: VERSION,
            connected_at: now,
            idle_ms: idle.map(|d| d.as_millis() as u64),
            ends_at: now.saturating_add(lifetime.as_millis() as u64),
            watcher: None,
        }
    }

    /// The limit that is reached at `now`, if one is: `last` is the last
    /// browser command's end (or its start, while `busy`: one runs now,
    /// which no idle end interrupts).
    pub fn due(&self, last: Option<u64>, busy: bool, now: u64) -> Option<Reason> {
        if now >= self.ends_at {
            return Some(Reason::Lifetime);
        }
        let idle = self.idle_ms?;
        let since = last.unwrap_or(self.connected_at).max(self.connected_at);
        (!busy && now >= since.saturating_add(idle)).then_some(Reason::Idle)
    }

    /// What is left at `now` (as [`Limits::due`] reads `last` and `busy`).
    pub fn left(&self, last: Option<u64>, busy: bool, now: u64) -> Left {
        let since = last.unwrap_or(self.connected_at).max(self.connected_at);
        let ms = |end: u64| Duration::from_millis(end.saturating_sub(now));
        Left {
            idle: self.idle_ms.map(|idle| {
                if busy {
                    Duration::from_millis(idle)
                } else {
                    ms(since.saturating_add(idle))
                }
            }),
            lifetime: ms(self.ends_at),
        }
    }

    /// The limit the session was given for `reason`.
    pub fn limit(&self, reason: Reason) -> Duration {
        match reason {
            Reason::Idle => Duration::from_millis(self.idle_ms.unwrap_or(0)),
            Reason::Lifetime => Duration::from_millis(self.ends_at - self.connected_at),
        }
    }
}

/// What `ensure`, `doctor` and `agents` say of the session's limits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Status {
    /// Seconds until the idle end, if no command comes (`None`: never).
    pub idle_left_secs: Option<u64>,
    /// Seconds until the lifetime end.
    pub lifetime_left_secs: u64,
    /// Whether the watcher that ends it on time runs.
    pub watcher: bool,
    /// All of it in one line.
    pub status: String,
}

/// The limits of the session in `runtime` and what is left of them now
/// (`None`: no session has any); `in_turn`: the caller holds the turn,
/// which counts as a command that just ended.
pub fn status(
    runtime: &Runtime,
    in_turn: bool,
) -> Result<Option<Status>, Box<dyn std::error::Error>> {
    let Some(limits) = read(runtime)? else {
        return Ok(None);
    };
    let (last, busy) = crate::lease::activity(runtime)?;
    let left = limits.left(last, busy || in_turn, crate::lease::now_ms());
    let watcher = watcher_runs(&limits, &crate::procs::ProcessTable::read()?);
    let mut status = left.describe();
    if !watcher {
        status.push_str(
            "; its watcher is not running: the session ends at the next command past a limit, \
             or by the daemon's own idle timer (`my-chrome connect` starts the watcher again)",
        );
    }
    Ok(Some(Status {
        idle_left_secs: left.idle.map(|d| d.as_secs()),
        lifetime_left_secs: left.lifetime.as_secs(),
        watcher,
        status,
    }))
}

/// Whether the session's watcher runs, found as the daemon is: the
/// process the record names (pid and start time), of our user, running
/// this program's `watch-session`. The one test of it (doctor, a reusing
/// connect, a command that finds the session gone).
pub fn watcher_runs(limits: &Limits, table: &crate::procs::ProcessTable) -> bool {
    let Some(watcher) = limits.watcher else {
        return false;
    };
    let me = nix::unistd::Uid::current().as_raw();
    // Alive (not a zombie nobody reaped), and what it should be.
    watcher.is_running()
        && table.iter().any(|p| {
            watcher.same_as(&ProcessId {
                pid: p.pid,
                start: p.start_time,
            }) && p.uid == Some(me)
                && p.cmd.get(1).is_some_and(|a| a == "watch-session")
        })
}

/// The daemon's own idle timer (the pinned CLI's `timeouts.idle`), for a
/// session whose watcher was killed: 70 minutes past the idle limit, so it
/// never cuts a command or what the watcher waits for.
pub fn backstop(idle: Duration) -> Duration {
    idle + BACKSTOP_MARGIN
}

/// A session's end, for every command after it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ended {
    pub reason: Reason,
    /// When, in milliseconds since the epoch.
    pub at: u64,
    /// The limit that was reached, in seconds.
    pub limit_secs: u64,
}

impl Ended {
    /// The one sentence every command after the end starts with.
    pub fn sentence(&self) -> String {
        let limit = humantime::format_duration(Duration::from_secs(self.limit_secs));
        match self.reason {
            Reason::Idle => format!(
                "the session ended by itself after {limit} without a browser command (the idle \
                 limit)"
            ),
            Reason::Lifetime => format!(
                "the session ended by itself {limit} after it was connected (the lifetime limit)"
            ),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LimitsError {
    #[error(
        "{path}: is not my-chrome's record of the session's limits ({detail}); nothing was run. \
         Run `my-chrome disconnect`, then ask the user to approve `my-chrome connect`"
    )]
    Malformed {
        path: std::path::PathBuf,
        detail: String,
    },
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl LimitsError {
    pub fn exit(&self) -> Exit {
        match self {
            LimitsError::Malformed { .. } => Exit::Security,
            LimitsError::Runtime(e) => e.exit(),
        }
    }
}

fn read_json<T: serde::de::DeserializeOwned>(
    runtime: &Runtime,
    file: StateFile,
) -> Result<Option<T>, LimitsError> {
    let Some(bytes) = runtime.read_state(file)? else {
        return Ok(None);
    };
    // Where and what kind of error, never the text.
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| LimitsError::Malformed {
            path: runtime.root().join(file.file_name()),
            detail: crate::runtime::json_fault(&e),
        })
}

/// The limits of the session `connect` made, if one did.
pub fn read(runtime: &Runtime) -> Result<Option<Limits>, LimitsError> {
    let limits: Option<Limits> = read_json(runtime, StateFile::SessionLimits)?;
    match limits {
        Some(l) if l.version != VERSION || l.ends_at < l.connected_at => {
            Err(LimitsError::Malformed {
                path: runtime.root().join(StateFile::SessionLimits.file_name()),
                detail: "unexpected version or values".into(),
            })
        }
        other => Ok(other),
    }
}

pub fn write(runtime: &Runtime, limits: &Limits) -> Result<(), LimitsError> {
    let bytes = serde_json::to_vec(limits).expect("the limits serialise");
    Ok(runtime.write_state(StateFile::SessionLimits, &bytes)?)
}

/// The session's end, when it ended by itself.
pub fn ended(runtime: &Runtime) -> Result<Option<Ended>, LimitsError> {
    read_json(runtime, StateFile::SessionEnded)
}

/// Records the end (for the commands after it) and forgets the limits.
pub fn record_end(runtime: &Runtime, end: &Ended) -> Result<(), LimitsError> {
    let bytes = serde_json::to_vec(end).expect("the end serialises");
    runtime.write_state(StateFile::SessionEnded, &bytes)?;
    Ok(runtime.remove_state(StateFile::SessionLimits)?)
}

/// Forgets the session's limits and its end (`connect`, `disconnect`).
pub fn forget(runtime: &Runtime) -> Result<(), LimitsError> {
    runtime.remove_state(StateFile::SessionLimits)?;
    Ok(runtime.remove_state(StateFile::SessionEnded)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: u64 = 60_000;

    #[test]
    fn the_idle_end_counts_from_the_last_command_and_never_cuts_one() {
        let limits = Limits::new(
            1_000,
            Some(Duration::from_secs(600)),
            Duration::from_secs(3600),
        );
        assert_eq!(limits.due(None, false, 1_000 + 10 * MIN - 1), None);
        assert_eq!(
            limits.due(None, false, 1_000 + 10 * MIN),
            Some(Reason::Idle)
        );
        // A command 5 minutes in moves the end.
        let last = Some(1_000 + 5 * MIN);
        assert_eq!(limits.due(last, false, 1_000 + 14 * MIN), None);
        assert_eq!(
            limits.due(last, false, 1_000 + 15 * MIN),
            Some(Reason::Idle)
        );
        // One in flight is never idle; a record from before the session
        // counts as its start.
        assert_eq!(limits.due(last, true, 1_000 + 50 * MIN), None);
        assert_eq!(limits.due(Some(0), false, 1_000 + 10 * MIN - 1), None);
        let left = limits.left(last, false, 1_000 + 7 * MIN);
        assert_eq!(left.idle, Some(Duration::from_secs(8 * 60)));
        assert_eq!(left.lifetime, Duration::from_secs(53 * 60));
        assert_eq!(limits.limit(Reason::Idle), Duration::from_secs(600));
    }

    #[test]
    fn the_lifetime_ends_whatever_runs_and_never_is_only_for_idle() {
        let limits = Limits::new(0, None, Duration::from_secs(3600));
        assert_eq!(limits.due(Some(60 * MIN - 1), true, 60 * MIN - 1), None);
        assert_eq!(
            limits.due(Some(60 * MIN), true, 60 * MIN),
            Some(Reason::Lifetime)
        );
        assert_eq!(limits.left(None, false, 0).idle, None);
        assert_eq!(limits.limit(Reason::Lifetime), Duration::from_secs(3600));
        assert!(
            limits
                .left(None, false, 0)
                .describe()
                .contains("no idle limit")
        );
    }

    #[test]
    fn the_daemons_own_timer_waits_past_every_command() {
        assert_eq!(
            backstop(Duration::from_secs(10)),
            Duration::from_secs(10 + 70 * 60)
        );
        assert_eq!(
            backstop(Duration::from_secs(3 * 3600)),
            Duration::from_secs(3 * 3600 + 70 * 60)
        );
    }

    #[test]
    fn records_are_kept_private_and_a_foreign_one_is_refused() {
        let (_home, runtime) = crate::runtime::scratch();
        assert_eq!(read(&runtime).unwrap(), None);
        let limits = Limits::new(5, Some(Duration::from_secs(30)), Duration::from_secs(60));
        write(&runtime, &limits).unwrap();
        assert_eq!(read(&runtime).unwrap(), Some(limits));
        let end = Ended {
            reason: Reason::Idle,
            at: 9,
            limit_secs: 30,
        };
        record_end(&runtime, &end).unwrap();
        assert_eq!(
            (read(&runtime).unwrap(), ended(&runtime).unwrap()),
            (None, Some(end.clone()))
        );
        assert!(
            end.sentence().contains("30s without a browser command"),
            "{}",
            end.sentence()
        );
        forget(&runtime).unwrap();
        assert_eq!(ended(&runtime).unwrap(), None);
        for bad in [
            &b"{}"[..],
            b"{\"version\":1,\"connected_at\":9,\"idle_ms\":null,\"ends_at\":1,\"watcher\":null}",
        ] {
            runtime.write_state(StateFile::SessionLimits, bad).unwrap();
            let err = read(&runtime).unwrap_err();
            assert_eq!(err.exit(), Exit::Security, "{err}");
        }
    }
}
