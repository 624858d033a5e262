//! Every change of a tab's owner: the default tab taken, a new tab
//! adopted, claimed, given by the user, past the cap, released, left
//! open, its agent gone quiet or its name registered anew.

use super::model::named;
use super::{Agent, Book, Owner, Refused, Why};
use crate::tabs::notice::{Named, Notice};

impl Book {
    /// The tab a command of `agent` runs on when it names none: its
    /// current, else its latest, else the spare one (which becomes its).
    /// `None`: it has none (a new one must be opened).
    pub fn default_tab(&mut self, agent: &str) -> Option<u64> {
        let state = self.agents.entry(agent.into()).or_default();
        if let Some(id) = state.current {
            return Some(id);
        }
        let latest = self
            .tabs
            .iter()
            .filter(|t| t.owner.agent() == Some(agent))
            .map(|t| t.id)
            .max();
        let id = latest.or_else(|| {
            let spare = self.tabs.iter_mut().find(|t| t.owner == Owner::Spare)?;
            spare.owner = Owner::Agent(agent.into());
            spare.opened = true;
            Some(spare.id)
        })?;
        self.agents.entry(agent.into()).or_default().current = Some(id);
        Some(id)
    }

    /// The tab just opened for `agent` (by `tab-new`): its current, labelled.
    pub fn adopt(&mut self, agent: &str, id: u64, label: Option<&str>) -> Result<(), Refused> {
        if let Some(label) = label {
            self.check_label(agent, label)?;
        }
        if let Some(tab) = self.tabs.iter_mut().find(|t| t.id == id) {
            tab.owner = Owner::Agent(agent.into());
            tab.opened = true;
            tab.label = label.map(String::from);
            tab.why = None;
        }
        self.agents.entry(agent.into()).or_default().current = Some(id);
        Ok(())
    }

    fn check_label(&self, agent: &str, label: &str) -> Result<(), Refused> {
        if self
            .own(agent)
            .iter()
            .any(|t| t.label.as_deref() == Some(label))
        {
            return Err(Refused::LabelTaken(label.into()));
        }
        Ok(())
    }

    /// `agent` takes tab `id` (again): its own (to label it), one held for
    /// it, or the blank one `connect` left. A tab of the user's is the
    /// user's to give (`give`), another agent's or one held for another
    /// is not its to take.
    pub fn claim(&mut self, agent: &str, id: u64, label: Option<&str>) -> Result<(), Refused> {
        match &self.find(id)?.owner {
            Owner::Agent(name) | Owner::Held(name) if name == agent => {}
            Owner::Spare => {}
            Owner::User => return Err(Refused::UsersToGive(id)),
            owner => {
                return Err(Refused::Foreign {
                    id,
                    owner: owner.clone(),
                });
            }
        }
        if let Some(label) = label {
            self.check_label(agent, label)?;
        }
        let tab = self.tabs.iter_mut().find(|t| t.id == id).expect("found");
        tab.owner = Owner::Agent(agent.into());
        tab.why = None;
        if label.is_some() {
            tab.label = label.map(String::from);
        }
        self.agents.entry(agent.into()).or_default().current = Some(id);
        Ok(())
    }

    /// The user gives tab `id` to `agent`: a tab of the user's, one held
    /// for an agent (which hears so), or the blank one. A tab an agent has
    /// is its to give back first (`release`).
    pub fn give(&mut self, id: u64, agent: &str) -> Result<(), Refused> {
        let was = match &self.find(id)?.owner {
            Owner::Agent(name) if name != agent => {
                return Err(Refused::Owned {
                    id,
                    agent: name.clone(),
                });
            }
            owner => owner.clone(),
        };
        if let Owner::Held(name) = &was
            && name != agent
        {
            self.agents
                .entry(name.clone())
                .or_default()
                .notices
                .push(Notice::GivenAway {
                    tab: id,
                    to: agent.into(),
                });
        }
        let tab = self.tabs.iter_mut().find(|t| t.id == id).expect("found");
        if tab.owner.agent() != Some(agent) {
            tab.label = None;
            tab.opened = false;
        }
        tab.owner = Owner::Agent(agent.into());
        tab.why = None;
        Ok(())
    }

    /// The tabs of `agent` past `cap`, newest first, go to the user (a page
    /// of its opened them: popups; `tab-new` refuses before it opens one).
    /// Never `keep`, the tab its command ran on. Which went.
    pub fn cap(&mut self, agent: &str, cap: usize, keep: Option<u64>) -> Vec<u64> {
        let mut own: Vec<u64> = self.own(agent).iter().map(|t| t.id).collect();
        if own.len() <= cap {
            return Vec::new();
        }
        own.sort_unstable();
        let over = own.len() - cap;
        let went: Vec<u64> = own
            .into_iter()
            .rev()
            .filter(|id| Some(*id) != keep)
            .take(over)
            .collect();
        for tab in self.tabs.iter_mut().filter(|t| went.contains(&t.id)) {
            tab.owner = Owner::User;
            tab.opened = false;
            tab.label = None;
            tab.why = Some(Why::PastCap(agent.into()));
        }
        if let Some(state) = self.agents.get_mut(agent)
            && state.current.is_some_and(|id| went.contains(&id))
        {
            state.current = None;
        }
        went
    }

    /// The agent's closed tab `id`, left open (`Desk::close`): the
    /// user's, out of every agent's hands.
    pub fn left_open(&mut self, agent: &str, id: u64) {
        self.release(agent, Some(id), true);
        if let Some(tab) = self.tabs.iter_mut().find(|t| t.id == id) {
            tab.why = Some(Why::LeftOpen);
        }
    }

    /// Gives `agent`'s tabs (or one of them) back to the user, and the
    /// tabs held for it; those it opened are returned to close, unless
    /// `keep`. The session keeps at least one tab (closing the last would
    /// end it): a tab that would be the last is left to the user instead.
    pub fn release(&mut self, agent: &str, only: Option<u64>, keep: bool) -> Vec<u64> {
        let mut close = Vec::new();
        let mut left = self.tabs.len();
        for tab in self.tabs.iter_mut() {
            if tab.owner.agent_or_held() != Some(agent) || only.is_some_and(|id| id != tab.id) {
                continue;
            }
            tab.label = None;
            if tab.opened && !keep && left > 1 {
                // The agent's until it is closed: a close that fails leaves
                // it to a `release` run again (`Desk::close` leaves one
                // that is not safe to close to the user).
                close.push(tab.id);
                left -= 1;
                continue;
            }
            tab.owner = Owner::User;
            tab.opened = false;
            tab.why = Some(Why::Released);
        }
        if let Some(state) = self.agents.get_mut(agent)
            && state.current.is_some_and(|id| only.is_none_or(|o| o == id))
        {
            state.current = None;
        }
        if only.is_none() && close.is_empty() {
            self.agents.remove(agent);
        }
        close
    }

    /// Whether `agent` has released everything: no tab of its own or held
    /// for it is left (a close that failed leaves one). Its entry goes.
    pub fn released_all(&mut self, agent: &str) -> bool {
        let done = !self
            .tabs
            .iter()
            .any(|t| t.owner.agent_or_held() == Some(agent));
        if done {
            self.agents.remove(agent);
        }
        done
    }

    /// Agents without a command for `gone_after_ms`, but those `at_work`
    /// names (asked only when one would go: a command of theirs waits,
    /// runs or may still be answered): their tabs are held for them (and
    /// they hear so, once, if they come back). Returns their names.
    pub fn expire(
        &mut self,
        now: u64,
        gone_after_ms: u64,
        at_work: impl FnOnce() -> Vec<String>,
    ) -> Vec<String> {
        let mut gone: Vec<String> = self
            .agents
            .iter()
            .filter(|(_, a)| a.last_at.saturating_add(gone_after_ms) <= now)
            .map(|(name, _)| name.clone())
            .collect();
        if !gone.is_empty() {
            let working = at_work();
            gone.retain(|name| !working.contains(name));
        }
        let mut left = Vec::new();
        for name in gone {
            let tabs: Vec<Named> = self.own(&name).into_iter().map(named).collect();
            if tabs.is_empty() {
                if self.held_for(&name).is_empty() && !self.holds.iter().any(|h| h.agent == name) {
                    self.agents.remove(&name);
                }
                continue;
            }
            for tab in self.tabs.iter_mut() {
                if tab.owner.agent() == Some(&name) {
                    tab.owner = Owner::Held(name.clone());
                    tab.why = Some(Why::OwnerGone);
                }
            }
            let agent = self.agents.get_mut(&name).expect("listed");
            agent.current = None;
            agent.notices.push(Notice::Gone {
                gone_after_ms,
                tabs,
            });
            left.push(name);
        }
        left
    }

    /// The agent of this name is the one registered as `registration`:
    /// what an earlier registration of the name had — its tabs, held or
    /// not, its notes, its browser-wide state — is not this one's. Its tabs
    /// become the user's (the user gives them, `tab-give`), and its holds
    /// no agent's (none ends them; `disconnect` does). Returns the tabs.
    pub fn registered(&mut self, agent: &str, registration: u64, now: u64) -> Vec<u64> {
        let known = self.agents.get(agent).and_then(|a| a.registration);
        if known == Some(registration) {
            return Vec::new();
        }
        let mut forgotten = Vec::new();
        for tab in self.tabs.iter_mut() {
            if tab.owner.agent_or_held() == Some(agent) {
                tab.owner = Owner::User;
                tab.label = None;
                tab.opened = false;
                tab.why = Some(Why::NameEnded);
                forgotten.push(tab.id);
            }
        }
        for hold in self.holds.iter_mut().filter(|h| h.agent == agent) {
            // No agent's name has a space: nobody's to end.
            hold.agent = format!("{agent} (ended)");
        }
        self.agents.insert(
            agent.to_string(),
            Agent {
                registration: Some(registration),
                last_at: now,
                ..Agent::default()
            },
        );
        forgotten
    }
}
