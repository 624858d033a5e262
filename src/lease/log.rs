//! The lease's event log, `<runtime>/lease.log`: one line per event with a
//! timestamp, the agent and the command's name. Never arguments, URLs or
//! output: nothing that could carry a page's content or the token.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use crate::runtime::{LogFile, Runtime, RuntimeError};

/// Past this size the log becomes `lease.log.1` (one older generation kept).
pub const LOG_LIMIT: u64 = 256 * 1024;

#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// Took a free lease, or one that expired; `waited` when it queued
    /// first; `previous`: the other agent whose turn came just before.
    Acquired {
        waited: Option<Duration>,
        previous: Option<&'a str>,
    },
    /// Ran another command under the lease it already held.
    Refreshed,
    /// Found another agent ahead and joined the queue.
    Blocked {
        holder: &'a str,
    },
    /// Gave up waiting.
    Timeout {
        holder: &'a str,
        waited: Duration,
    },
    /// `agent`'s lease lapsed after `idle` without a command.
    Expired {
        idle: Duration,
    },
    Released,
}

/// The wrapper commands that take the lease; with the pinned CLI's
/// documented commands (`crate::pinned_commands`), the only words the log writes
/// in the command's place. Anything else is `other`: it may be a URL or
/// text typed in the wrong place.
const WRAPPERS: [&str; 3] = ["connect", "ensure", "disconnect"];

/// A command's name as the log and the lease file keep it: a documented
/// command of the pinned CLI, one of [`WRAPPERS`], or `other`.
pub fn command_name(raw: &str) -> &str {
    if WRAPPERS.contains(&raw) || crate::pinned_commands::find(raw).is_some() {
        raw
    } else {
        "other"
    }
}

/// One line: `<UTC time> <EVENT> agent=<name> [command=<name>] [holder=…]
/// [waited=…] [idle=…] [previous=…]`.
pub fn line(at: SystemTime, agent: &str, command: Option<&str>, event: &Event) -> String {
    let mut out = format!("{} ", humantime::format_rfc3339_millis(at));
    match event {
        Event::Acquired { waited: None, .. } => out.push_str("ACQUIRED"),
        Event::Acquired {
            waited: Some(waited),
            ..
        } => {
            let _ = write!(out, "ACQUIRED after {:.1}s", waited.as_secs_f64());
        }
        Event::Refreshed => out.push_str("REFRESHED"),
        Event::Blocked { .. } => out.push_str("BLOCKED"),
        Event::Timeout { .. } => out.push_str("TIMEOUT"),
        Event::Expired { .. } => out.push_str("EXPIRED"),
        Event::Released => out.push_str("RELEASED"),
    }
    let _ = write!(out, " agent={agent}");
    if let Some(command) = command {
        let _ = write!(out, " command={}", command_name(command));
    }
    match event {
        Event::Blocked { holder } => {
            let _ = write!(out, " holder={holder}");
        }
        Event::Timeout { holder, waited } => {
            let _ = write!(out, " holder={holder} waited={}s", waited.as_secs());
        }
        Event::Expired { idle } => {
            let _ = write!(out, " idle={}s", idle.as_secs());
        }
        Event::Acquired {
            previous: Some(previous),
            ..
        } => {
            let _ = write!(out, " previous={previous}");
        }
        _ => {}
    }
    out.push('\n');
    out
}

/// Appends events (the caller holds the lease lock, so lines never mix).
pub fn append(runtime: &Runtime, lines: &[String]) -> Result<(), RuntimeError> {
    if lines.is_empty() {
        return Ok(());
    }
    runtime.append_log(LogFile::Lease, lines.concat().as_bytes(), LOG_LIMIT)
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
    fn lines_carry_names_and_times_only() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_451_200_250);
        assert_eq!(
            line(
                at,
                "alpha",
                Some("goto"),
                &Event::Acquired {
                    waited: None,
                    previous: None
                }
            ),
            "2025-11-29T21:20:00.250Z ACQUIRED agent=alpha command=goto\n"
        );
        assert_eq!(
            line(
                at,
                "beta",
                Some("snapshot"),
                &Event::Acquired {
                    waited: Some(Duration::from_millis(2_340)),
                    previous: Some("alpha")
                }
            ),
            "2025-11-29T21:20:00.250Z ACQUIRED after 2.3s agent=beta command=snapshot previous=alpha\n"
        );
        assert_eq!(
            line(
                at,
                "beta",
                Some("goto"),
                &Event::Timeout {
                    holder: "alpha",
                    waited: Duration::from_secs(2)
                }
            ),
            "2025-11-29T21:20:00.250Z TIMEOUT agent=beta command=goto holder=alpha waited=2s\n"
        );
        assert_eq!(
            line(
                at,
                "alpha",
                None,
                &Event::Expired {
                    idle: Duration::from_secs(31)
                }
            ),
            "2025-11-29T21:20:00.250Z EXPIRED agent=alpha idle=31s\n"
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
