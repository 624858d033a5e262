//! The lease file (`<runtime>/lease.json`) and the rules that decide whose
//! turn it is. Pure: no clock, no locks, no process table (liveness is
//! asked through a function), so every rule is tested directly.

use serde::{Deserialize, Serialize};

use crate::procs::ProcessId;

const VERSION: u32 = 1;

/// Times are milliseconds of a system-wide clock that only moves forward
/// (see `lease::now_ms`): differences between processes are meaningful.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lease {
    pub version: u32,
    pub holder: Option<Holder>,
    /// In arrival order: the first is served first.
    pub waiters: Vec<Waiter>,
    /// The agent whose turn ended last (released, or taken over after it
    /// expired): whoever comes next may find its page current.
    pub last: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Holder {
    pub agent: String,
    /// The name of its latest command (never its arguments).
    pub command: String,
    pub since_ms: u64,
    /// When its latest command started or finished.
    pub last_ms: u64,
    /// Its commands still running: while one is, the lease is not idle.
    pub running: Vec<ProcessId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Waiter {
    pub agent: String,
    pub command: String,
    pub since_ms: u64,
    pub process: ProcessId,
}

/// Whose turn it is, for one command of `agent` run by process `me`.
#[derive(Debug, PartialEq, Eq)]
pub enum Turn {
    /// Go ahead: take or refresh the lease.
    Go(Previous),
    /// Someone else goes first.
    Wait(Blocker),
}

/// What the lease was before this command took it.
#[derive(Debug, PartialEq, Eq)]
pub enum Previous {
    Free,
    /// The same agent already held it.
    Ours,
    /// An agent held it (possibly this one), but not for `idle_ms`.
    Expired {
        agent: String,
        idle_ms: u64,
    },
}

#[derive(Debug, PartialEq, Eq)]
pub enum Blocker {
    /// Another agent holds the lease.
    Holder {
        agent: String,
        idle_ms: u64,
        running: Option<String>,
    },
    /// The lease is free, but another agent's command arrived first.
    Ahead { agent: String },
}

impl Blocker {
    pub fn agent(&self) -> &str {
        match self {
            Blocker::Holder { agent, .. } | Blocker::Ahead { agent } => agent,
        }
    }

    /// How the blocker stands, for messages ("idle 3 s", "running goto").
    pub fn describe(&self) -> String {
        match self {
            Blocker::Holder {
                running: Some(command),
                ..
            } => format!("running `{command}`"),
            Blocker::Holder { idle_ms, .. } => format!("idle {} s", idle_ms / 1000),
            Blocker::Ahead { .. } => "next in line".into(),
        }
    }
}

impl Lease {
    pub fn new() -> Lease {
        Lease {
            version: VERSION,
            ..Lease::default()
        }
    }

    /// Whether the file's content is a lease of ours: the version we write,
    /// names and times that make sense.
    pub fn well_formed(&self) -> bool {
        let name_ok = |s: &str| !s.is_empty() && s.len() <= 64 && !s.contains(char::is_control);
        self.version == VERSION
            && self.last.as_deref().is_none_or(name_ok)
            && self
                .holder
                .as_ref()
                .is_none_or(|h| name_ok(&h.agent) && name_ok(&h.command) && h.since_ms <= h.last_ms)
            && self
                .waiters
                .iter()
                .all(|w| name_ok(&w.agent) && name_ok(&w.command))
    }

    /// How long the holder has gone without a command at `now`, or `None`
    /// when it is running one (or there is no holder). A time ahead of `now`
    /// was written before a reboot: as idle as can be.
    pub fn holder_idle(&self, now: u64, alive: &dyn Fn(&ProcessId) -> bool) -> Option<u64> {
        let holder = self.holder.as_ref()?;
        if holder.running.iter().any(alive) {
            return None;
        }
        Some(if holder.last_ms > now {
            u64::MAX
        } else {
            now - holder.last_ms
        })
    }

    /// Decides whose turn it is. Waiters that are no longer running leave
    /// the queue here (a killed waiter must not hold up the line).
    pub fn turn(
        &mut self,
        agent: &str,
        me: ProcessId,
        now: u64,
        idle_limit_ms: u64,
        alive: &dyn Fn(&ProcessId) -> bool,
    ) -> Turn {
        let mut previous = Previous::Free;
        self.waiters
            .retain(|w| w.process == me || alive(&w.process));
        let others_wait = self.waiters.iter().any(|w| w.agent != agent);
        if let Some(holder) = self.holder.as_mut().filter(|h| h.agent == agent) {
            // Commands of ours that were killed leave the record here.
            holder.running.retain(|p| alive(p));
            let lapsed = holder.running.is_empty()
                && now
                    .checked_sub(holder.last_ms)
                    .is_none_or(|idle| idle >= idle_limit_ms);
            // Our own lapsed lease is no way past those already waiting.
            if !(lapsed && others_wait) {
                return Turn::Go(Previous::Ours);
            }
        }
        if let Some(holder) = &self.holder {
            // A running command is never idle; otherwise the holder has been
            // idle since its last command (a time ahead of `now` was written
            // before a reboot: expired).
            let idle = now.checked_sub(holder.last_ms);
            if holder.running.iter().any(alive) {
                return Turn::Wait(Blocker::Holder {
                    agent: holder.agent.clone(),
                    idle_ms: 0,
                    running: Some(holder.command.clone()),
                });
            }
            match idle {
                Some(idle_ms) if idle_ms < idle_limit_ms => {
                    return Turn::Wait(Blocker::Holder {
                        agent: holder.agent.clone(),
                        idle_ms,
                        running: None,
                    });
                }
                _ => {
                    previous = Previous::Expired {
                        agent: holder.agent.clone(),
                        idle_ms: idle.unwrap_or(0),
                    }
                }
            }
        }
        let ahead = self
            .waiters
            .iter()
            .take_while(|w| w.process != me)
            .find(|w| w.agent != agent);
        match ahead {
            Some(w) => Turn::Wait(Blocker::Ahead {
                agent: w.agent.clone(),
            }),
            None => Turn::Go(previous),
        }
    }

    /// `me` (of `agent`) takes or refreshes the lease and leaves the queue.
    /// Returns the other agent whose turn came between this agent's turns
    /// (or before its first): the current page may be that agent's.
    pub fn take(&mut self, agent: &str, command: &str, me: ProcessId, now: u64) -> Option<String> {
        self.waiters.retain(|w| w.process != me);
        match &mut self.holder {
            Some(holder) if holder.agent == agent => {
                holder.last_ms = holder.last_ms.max(now);
                holder.command = command.to_string();
                holder.running.push(me);
                None
            }
            _ => {
                if let Some(old) = self.holder.take() {
                    self.last = Some(old.agent);
                }
                self.holder = Some(Holder {
                    agent: agent.to_string(),
                    command: command.to_string(),
                    since_ms: now,
                    last_ms: now,
                    running: vec![me],
                });
                self.last.clone().filter(|last| last != agent)
            }
        }
    }

    /// Joins the end of the queue, once. `true` when it was not queued yet.
    pub fn queue(&mut self, agent: &str, command: &str, me: ProcessId, now: u64) -> bool {
        if self.waiters.iter().any(|w| w.process == me) {
            return false;
        }
        self.waiters.push(Waiter {
            agent: agent.to_string(),
            command: command.to_string(),
            since_ms: now,
            process: me,
        });
        true
    }

    pub fn leave_queue(&mut self, me: ProcessId) {
        self.waiters.retain(|w| w.process != me);
    }

    /// `me`'s command is over: the holder's idle time starts now. Nothing
    /// changes when the lease has passed to someone else meanwhile.
    pub fn finish(&mut self, agent: &str, me: ProcessId, now: u64) {
        if let Some(holder) = self.holder.as_mut().filter(|h| h.agent == agent) {
            holder.running.retain(|p| *p != me);
            holder.last_ms = holder.last_ms.max(now);
        }
    }

    /// Gives up `agent`'s lease; `false` when it did not hold it.
    pub fn release(&mut self, agent: &str) -> bool {
        if self.holder.as_ref().is_some_and(|h| h.agent == agent) {
            self.holder = None;
            self.last = Some(agent.to_string());
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid(n: u32) -> ProcessId {
        ProcessId { pid: n, start: 7 }
    }

    const LIMIT: u64 = 30_000;

    fn everyone_alive(_: &ProcessId) -> bool {
        true
    }

    #[test]
    fn free_or_own_lease_goes_at_once() {
        let mut lease = Lease::new();
        assert_eq!(
            lease.turn("a", pid(1), 1_000, LIMIT, &everyone_alive),
            Turn::Go(Previous::Free)
        );
        lease.take("a", "goto", pid(1), 1_000);
        lease.finish("a", pid(1), 1_500);
        assert_eq!(
            lease.turn("a", pid(2), 2_000, LIMIT, &everyone_alive),
            Turn::Go(Previous::Ours)
        );
    }

    #[test]
    fn another_agent_waits_until_idle_expiry() {
        let mut lease = Lease::new();
        lease.take("a", "goto", pid(1), 1_000);
        lease.finish("a", pid(1), 2_000);
        match lease.turn("b", pid(2), 3_000, LIMIT, &everyone_alive) {
            Turn::Wait(Blocker::Holder { agent, idle_ms, .. }) => {
                assert_eq!((agent.as_str(), idle_ms), ("a", 1_000));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            lease.turn("b", pid(2), 2_000 + LIMIT, LIMIT, &everyone_alive),
            Turn::Go(Previous::Expired {
                agent: "a".into(),
                idle_ms: LIMIT
            })
        );
    }

    #[test]
    fn a_running_command_is_never_idle_but_a_dead_one_is() {
        let mut lease = Lease::new();
        lease.take("a", "goto", pid(1), 1_000);
        let later = 1_000 + 10 * LIMIT;
        assert!(matches!(
            lease.turn("b", pid(2), later, LIMIT, &everyone_alive),
            Turn::Wait(Blocker::Holder { running: Some(ref c), .. }) if c == "goto"
        ));
        // Killed mid-command: idle since the command started.
        let dead = |p: &ProcessId| p.pid != 1;
        assert!(matches!(
            lease.turn("b", pid(2), 1_000 + LIMIT - 1, LIMIT, &dead),
            Turn::Wait(Blocker::Holder { running: None, .. })
        ));
        assert!(matches!(
            lease.turn("b", pid(2), 1_000 + LIMIT, LIMIT, &dead),
            Turn::Go(Previous::Expired { .. })
        ));
        // The holder's own next command drops the dead record.
        assert_eq!(
            lease.turn("a", pid(3), 2_000, LIMIT, &dead),
            Turn::Go(Previous::Ours)
        );
        assert!(lease.holder.as_ref().unwrap().running.is_empty());
    }

    #[test]
    fn waiters_are_served_in_arrival_order_and_dead_ones_leave() {
        let mut lease = Lease::new();
        lease.take("a", "goto", pid(1), 0);
        lease.finish("a", pid(1), 0);
        assert!(lease.queue("b", "snapshot", pid(2), 10));
        assert!(lease.queue("c", "snapshot", pid(3), 20));
        assert!(!lease.queue("c", "snapshot", pid(3), 30), "queued once");
        lease.release("a");
        assert_eq!(
            lease.turn("c", pid(3), 40, LIMIT, &everyone_alive),
            Turn::Wait(Blocker::Ahead { agent: "b".into() })
        );
        // A newcomer queues behind both.
        assert!(matches!(
            lease.turn("d", pid(4), 40, LIMIT, &everyone_alive),
            Turn::Wait(Blocker::Ahead { ref agent }) if agent == "b"
        ));
        assert_eq!(
            lease.turn("b", pid(2), 40, LIMIT, &everyone_alive),
            Turn::Go(Previous::Free)
        );
        // b was killed while waiting: c is next.
        let b_dead = |p: &ProcessId| p.pid != 2;
        assert_eq!(
            lease.turn("c", pid(3), 50, LIMIT, &b_dead),
            Turn::Go(Previous::Free)
        );
        assert_eq!(lease.take("c", "snapshot", pid(3), 50), Some("a".into()));
        assert!(lease.waiters.is_empty(), "{:?}", lease.waiters);
    }

    #[test]
    fn a_lapsed_holder_queues_behind_those_already_waiting() {
        let mut lease = Lease::new();
        lease.take("a", "goto", pid(1), 0);
        lease.finish("a", pid(1), 0);
        lease.queue("b", "goto", pid(2), 10);
        // Within its time, a's next command goes ahead of b.
        assert_eq!(
            lease.turn("a", pid(3), LIMIT - 1, LIMIT, &everyone_alive),
            Turn::Go(Previous::Ours)
        );
        // Past it, b (already in line) goes first.
        assert_eq!(
            lease.turn("a", pid(3), LIMIT, LIMIT, &everyone_alive),
            Turn::Wait(Blocker::Ahead { agent: "b".into() })
        );
        assert!(matches!(
            lease.turn("b", pid(2), LIMIT, LIMIT, &everyone_alive),
            Turn::Go(Previous::Expired { ref agent, .. }) if agent == "a"
        ));
        assert_eq!(lease.take("b", "goto", pid(2), LIMIT), Some("a".into()));
    }

    #[test]
    fn an_agent_is_not_queued_behind_itself() {
        let mut lease = Lease::new();
        lease.queue("b", "goto", pid(2), 0);
        assert_eq!(
            lease.turn("b", pid(3), 0, LIMIT, &everyone_alive),
            Turn::Go(Previous::Free)
        );
    }

    #[test]
    fn times_from_before_a_reboot_count_as_expired() {
        let mut lease = Lease::new();
        lease.take("a", "goto", pid(1), 9_000_000);
        lease.finish("a", pid(1), 9_000_000);
        let dead = |_: &ProcessId| false;
        assert!(matches!(
            lease.turn("b", pid(2), 5, LIMIT, &dead),
            Turn::Go(Previous::Expired { .. })
        ));
        assert_eq!(lease.holder_idle(5, &dead), Some(u64::MAX));
    }

    #[test]
    fn finishing_and_releasing_touch_only_ones_own_lease() {
        let mut lease = Lease::new();
        lease.take("a", "goto", pid(1), 100);
        lease.take("a", "snapshot", pid(5), 200);
        lease.finish("a", pid(1), 300);
        assert_eq!(lease.holder.as_ref().unwrap().running, vec![pid(5)]);
        lease.finish("b", pid(5), 400);
        assert_eq!(lease.holder.as_ref().unwrap().last_ms, 300);
        assert!(!lease.release("b"));
        assert!(lease.release("a"));
        assert!(lease.holder.is_none());
    }

    #[test]
    fn only_our_shape_is_well_formed() {
        let mut lease = Lease::new();
        lease.take("a", "goto", pid(1), 100);
        assert!(lease.well_formed());
        let json = serde_json::to_string(&lease).unwrap();
        let back: Lease = serde_json::from_str(&json).unwrap();
        assert_eq!(back, lease);
        lease.version = 9;
        assert!(!lease.well_formed());
        assert!(
            serde_json::from_str::<Lease>(r#"{"version":1,"holder":null,"waiters":[],"x":1}"#)
                .is_err()
        );
    }
}
