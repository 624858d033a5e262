//! The lease as `lease --json` and `doctor` show it: who holds it, for
//! how long, who waits. Reading it changes nothing.

use serde::Serialize;

use super::{LeaseError, agent, alive, now_ms, read};
use crate::config::Config;
use crate::runtime::Runtime;

/// The lease as `lease --json` and `doctor --json` show it.
#[derive(Debug, Serialize)]
pub struct Status {
    /// The caller's agent name (as its commands would take the lease).
    pub you: String,
    pub idle_limit_secs: u64,
    pub holder: Option<HolderView>,
    /// In the order they will be served.
    pub waiters: Vec<WaiterView>,
}

#[derive(Debug, Serialize)]
pub struct HolderView {
    pub agent: String,
    /// The name of its latest command.
    pub command: String,
    pub held_secs: u64,
    pub idle_secs: u64,
    /// A command of its is running now.
    pub running: bool,
    /// Idle past the limit: the next command of any agent takes it.
    pub expired: bool,
}

#[derive(Debug, Serialize)]
pub struct WaiterView {
    pub agent: String,
    pub command: String,
    pub waiting_secs: u64,
}

impl Status {
    pub fn gather(config: &Config) -> Result<Status, LeaseError> {
        let you = agent::identify(config);
        let idle_limit = config.lease_idle.as_millis() as u64;
        let lease = match Runtime::inspect(&config.runtime)? {
            Some(runtime) => read(&runtime)?,
            None => super::record::Lease::new(),
        };
        let now = now_ms();
        let secs = |since: u64| now.saturating_sub(since) / 1000;
        let holder = lease.holder.as_ref().map(|h| {
            let idle = lease.holder_idle(now, &alive);
            HolderView {
                agent: h.agent.clone(),
                command: h.command.clone(),
                held_secs: secs(h.since_ms),
                idle_secs: idle.map_or(0, |ms| ms.min(now) / 1000),
                running: idle.is_none(),
                expired: idle.is_some_and(|ms| ms >= idle_limit),
            }
        });
        let waiters = lease
            .waiters
            .iter()
            .filter(|w| alive(&w.process))
            .map(|w| WaiterView {
                agent: w.agent.clone(),
                command: w.command.clone(),
                waiting_secs: secs(w.since_ms),
            })
            .collect();
        Ok(Status {
            you,
            idle_limit_secs: config.lease_idle.as_secs(),
            holder,
            waiters,
        })
    }

    /// One line: who has the browser, for how long, and who waits.
    pub fn summary(&self) -> String {
        let holder = match &self.holder {
            None => "free".to_string(),
            Some(h) if h.expired => format!(
                "free (agent {} expired after {} s idle)",
                h.agent, h.idle_secs
            ),
            Some(h) if h.running => format!(
                "held by agent {} for {} s, running `{}`",
                h.agent, h.held_secs, h.command
            ),
            Some(h) => format!(
                "held by agent {} for {} s, idle {} s (expires after {} s idle)",
                h.agent, h.held_secs, h.idle_secs, self.idle_limit_secs
            ),
        };
        if self.waiters.is_empty() {
            return holder;
        }
        let waiting: Vec<String> = self
            .waiters
            .iter()
            .map(|w| format!("{} ({} s)", w.agent, w.waiting_secs))
            .collect();
        format!("{holder}; waiting: {}", waiting.join(", "))
    }
}
