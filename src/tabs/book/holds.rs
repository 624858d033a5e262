//! Browser-wide state an agent started (tracing, routes, an offline
//! network), kept in the book: recorded, ended, and found orphaned.

use super::Book;
use crate::policy::holds::{self, Hold, HoldChange, HoldKind};

impl Book {
    /// Another agent's browser-wide state, which keeps `agent` out.
    pub fn held_by_other(&self, agent: &str) -> Option<&Hold> {
        holds::keeping_out(&self.holds, agent)
    }

    /// `agent` may have started `kind` at `now` (recorded before its
    /// command is sent: it holds whatever the command's fate).
    pub fn start_hold(&mut self, agent: &str, kind: HoldKind, now: u64) {
        holds::apply(&mut self.holds, agent, HoldChange::Starts(kind), now);
    }

    /// `agent`'s command that ends `kind` ran.
    pub fn end_hold(&mut self, agent: &str, kind: HoldKind) {
        holds::apply(&mut self.holds, agent, HoldChange::Ends(kind), 0);
    }

    /// Holds no agent is there to end: their agent gave everything back
    /// (`release`), had no command for `gone_after_ms` by `now`, or its
    /// name ended (registered anew).
    pub fn orphaned_holds(&self, now: u64, gone_after_ms: u64) -> Vec<Hold> {
        self.holds
            .iter()
            .filter(|h| {
                self.agents
                    .get(&h.agent)
                    .is_none_or(|a| a.last_at.saturating_add(gone_after_ms) <= now)
            })
            .cloned()
            .collect()
    }

    /// A hold that was ended for its agent.
    pub fn drop_hold(&mut self, hold: &Hold) {
        self.holds.retain(|h| h != hold);
    }
}
