//! The session's event log, `<runtime>/lease.log`: one line per event with
//! a timestamp, the agent, the command's name and the tab's id. Never
//! arguments, titles, addresses or output: nothing that could carry a
//! page's content or the token.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use crate::runtime::{LogFile, Runtime, RuntimeError};

/// Past this size the log becomes `lease.log.1` (one older generation kept).
pub const LOG_LIMIT: u64 = 256 * 1024;

#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// Ran a command, on tab `tab` when it ran on one; `waited` when it
    /// waited for a command in flight first.
    Ran {
        tab: Option<u64>,
        waited: Option<Duration>,
    },
    /// Took its turn and ran nothing in the browser (its tab refused, news
    /// of its tabs, a session found gone).
    Refused { waited: Option<Duration> },
    /// Gave up waiting for `holder`'s command.
    Timeout { holder: &'a str, waited: Duration },
    /// Took a tab held for it (or the blank one), or labelled its own.
    Claimed { tab: u64 },
    /// The user gave tab `tab` to agent `to`.
    Given { tab: u64, to: &'a str },
    /// Gave its tabs back (closing `closed` of them).
    Released { tabs: &'a [u64], closed: usize },
    /// Had no command for `idle`: its tabs are held for it.
    Gone { idle: Duration },
    /// Ran, on tab `tab`, and was not answered within its bound (or was
    /// interrupted): the daemon runs it on, and its agent's next command
    /// waits for it.
    Abandoned { tab: Option<u64> },
    /// Ran, on tab `tab`, and gave the turn up while the daemon runs it,
    /// for another agent's command in line: it takes the turn again to
    /// show its reply (logged then as run, or as a timeout when the turn
    /// did not come back within its wait).
    SteppedAside { tab: Option<u64> },
    /// Its process was found stopped (SIGSTOP) holding the turn `held`
    /// after the turn began, past the user's bound: it was killed, which
    /// gave the turn up.
    StoppedEnded { held: Duration },
    /// The abandoned command's turn ends, `after` its hand-over: the
    /// daemon answered (`answered`), or the wait gave up or was stopped.
    Finished { after: Duration, answered: bool },
    /// The session reached the user's `reason` limit (`idle`, `lifetime`)
    /// of `limit` and was detached.
    Ended { reason: &'a str, limit: Duration },
    /// Its browser-wide state (`what`) was ended for it: it had released,
    /// gone quiet, or its name had ended.
    HoldEnded {
        what: crate::policy::holds::HoldKind,
    },
}

/// The wrapper commands that take the lease; with the pinned CLI's
/// documented commands (`crate::pinned_commands`), the only words the log writes
/// in the command's place. Anything else is `other`: it may be a URL or
/// text typed in the wrong place.
const WRAPPERS: [&str; 8] = [
    "connect",
    "session-end",
    "ensure",
    "disconnect",
    "release",
    "tab-claim",
    "tab-give",
    "uninstall",
];

/// A command's name as the log and the lease file keep it: a documented
/// command of the pinned CLI, one of [`WRAPPERS`], or `other`.
pub fn command_name(raw: &str) -> &str {
    if WRAPPERS.contains(&raw) || crate::pinned_commands::find(raw).is_some() {
        raw
    } else {
        "other"
    }
}

/// One line: `<UTC time> <EVENT> agent=<name> [command=<name>] [tab=t<N>]
/// [waited=…] [holder=…] [tabs=…] [idle=…]`.
pub fn line(at: SystemTime, agent: &str, command: Option<&str>, event: &Event) -> String {
    let mut out = format!("{} ", humantime::format_rfc3339_millis(at));
    out.push_str(match event {
        Event::Ran { .. } => "RAN",
        Event::Refused { .. } => "REFUSED",
        Event::Timeout { .. } => "TIMEOUT",
        Event::Claimed { .. } => "CLAIMED",
        Event::Given { .. } => "GIVEN",
        Event::Released { .. } => "RELEASED",
        Event::Gone { .. } => "GONE",
        Event::Abandoned { .. } => "ABANDONED",
        Event::SteppedAside { .. } => "ASIDE",
        Event::Finished { .. } => "FINISHED",
        Event::StoppedEnded { .. } => "STOPPED-ENDED",
        Event::Ended { .. } => "ENDED",
        Event::HoldEnded { .. } => "HOLD-ENDED",
    });
    let _ = write!(out, " agent={agent}");
    if let Some(command) = command {
        let _ = write!(out, " command={}", command_name(command));
    }
    match event {
        Event::Ran { tab, waited } => {
            if let Some(tab) = tab {
                let _ = write!(out, " tab=t{tab}");
            }
            if let Some(waited) = waited {
                let _ = write!(out, " waited={:.1}s", waited.as_secs_f64());
            }
        }
        Event::Refused { waited } => {
            if let Some(waited) = waited {
                let _ = write!(out, " waited={:.1}s", waited.as_secs_f64());
            }
        }
        Event::Timeout { holder, waited } => {
            let _ = write!(out, " holder={holder} waited={}s", waited.as_secs());
        }
        Event::Claimed { tab } => {
            let _ = write!(out, " tab=t{tab}");
        }
        Event::Given { tab, to } => {
            let _ = write!(out, " tab=t{tab} to={to}");
        }
        Event::Released { tabs, closed } => {
            let ids: Vec<String> = tabs.iter().map(|t| format!("t{t}")).collect();
            let _ = write!(out, " tabs={} closed={closed}", ids.join(","));
        }
        Event::Gone { idle } => {
            let _ = write!(out, " idle={}s", idle.as_secs());
        }
        Event::Abandoned { tab } | Event::SteppedAside { tab } => {
            if let Some(tab) = tab {
                let _ = write!(out, " tab=t{tab}");
            }
        }
        Event::StoppedEnded { held } => {
            let _ = write!(out, " held={}s", held.as_secs());
        }
        Event::Finished { after, answered } => {
            let _ = write!(
                out,
                " after={}s {}",
                after.as_secs(),
                if *answered { "answered" } else { "unanswered" }
            );
        }
        Event::Ended { reason, limit } => {
            let _ = write!(out, " reason={reason} limit={}s", limit.as_secs());
        }
        Event::HoldEnded { what } => {
            let _ = write!(out, " what={}", what.word());
        }
    }
    out.push('\n');
    out
}

/// Appends events (the caller holds the session's lock: lines never mix).
pub fn append(runtime: &Runtime, lines: &[String]) -> Result<(), RuntimeError> {
    if lines.is_empty() {
        return Ok(());
    }
    runtime.append_log(LogFile::Lease, lines.concat().as_bytes(), LOG_LIMIT)
}

/// Whether the log can be written (ours, private): checked when a command
/// takes its turn, so that a command whose line could not be kept does not
/// run.
pub fn check(runtime: &Runtime) -> Result<(), RuntimeError> {
    runtime.append_log(LogFile::Lease, b"", LOG_LIMIT)
}

/// The last `n` lines, oldest first.
pub fn tail(runtime: &Runtime, n: usize) -> Result<Vec<String>, RuntimeError> {
    let text = runtime.read_log(LogFile::Lease, LOG_LIMIT * 2)?;
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(n);
    Ok(lines[start..].iter().map(|l| l.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_carry_names_ids_and_times_only() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_451_200_250);
        let ran = Event::Ran {
            tab: Some(3),
            waited: Some(Duration::from_millis(2_340)),
        };
        assert_eq!(
            line(at, "beta", Some("snapshot"), &ran),
            "2025-11-29T21:20:00.250Z RAN agent=beta command=snapshot tab=t3 waited=2.3s\n"
        );
        let plain = Event::Ran {
            tab: None,
            waited: None,
        };
        assert_eq!(
            line(at, "alpha", Some("connect"), &plain),
            "2025-11-29T21:20:00.250Z RAN agent=alpha command=connect\n"
        );
        let timeout = Event::Timeout {
            holder: "alpha",
            waited: Duration::from_secs(2),
        };
        assert_eq!(
            line(at, "beta", Some("goto"), &timeout),
            "2025-11-29T21:20:00.250Z TIMEOUT agent=beta command=goto holder=alpha waited=2s\n"
        );
        let released = Event::Released {
            tabs: &[2, 5],
            closed: 1,
        };
        assert_eq!(
            line(at, "beta", None, &released),
            "2025-11-29T21:20:00.250Z RELEASED agent=beta tabs=t2,t5 closed=1\n"
        );
        assert_eq!(
            line(at, "beta", None, &Event::Claimed { tab: 9 }),
            "2025-11-29T21:20:00.250Z CLAIMED agent=beta tab=t9\n"
        );
        assert_eq!(
            line(at, "person", None, &Event::Given { tab: 9, to: "beta" }),
            "2025-11-29T21:20:00.250Z GIVEN agent=person tab=t9 to=beta\n"
        );
        let gone = Event::Gone {
            idle: Duration::from_secs(1801),
        };
        assert_eq!(
            line(at, "alpha", None, &gone),
            "2025-11-29T21:20:00.250Z GONE agent=alpha idle=1801s\n"
        );
        let stopped = Event::StoppedEnded {
            held: Duration::from_secs(11),
        };
        assert_eq!(
            line(at, "bob", Some("eval"), &stopped),
            "2025-11-29T21:20:00.250Z STOPPED-ENDED agent=bob command=eval held=11s\n"
        );
    }

    #[test]
    fn anything_but_a_plain_command_name_is_not_written() {
        for ok in ["goto", "tab-list", "snapshot", "connect"] {
            assert_eq!(command_name(ok), ok);
        }
        for not in [
            "https://example.test/?q=secret",
            "Goto",
            "-s",
            "",
            "a-command-name-that-is-too-long",
            "goto x",
            "hunter2",
        ] {
            assert_eq!(command_name(not), "other", "{not}");
        }
    }
}
