//! The tab book (`<runtime>/tabs.json`): every tab of the session, in the
//! daemon's order, with its id, its owner and its label, and every agent's
//! current tab. Pure: the daemon's lists come in, the decisions go out, so
//! every ownership rule is tested directly.
//!
//! Ids (`t<N>`) are never reused: a book for a new session (a new daemon)
//! starts where the last one stopped, and ids below its first belong to
//! earlier sessions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::align::{self, Rules, Seen};
use crate::policy::tabs::TabRef;

const VERSION: u32 = 1;

/// The header of a blank tab, as the daemon lists it.
pub const BLANK: &str = "[](about:blank)";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Book {
    pub version: u32,
    /// The daemon this book describes (`tabs::session_key`).
    pub session: String,
    /// Ids below this one were given in earlier sessions.
    pub first_id: u64,
    pub next_id: u64,
    /// In the daemon's order.
    pub tabs: Vec<Tab>,
    /// The daemon's current tab when last seen; `None` while a request
    /// that may move it is out (then it pins nothing).
    pub current: Option<u64>,
    pub agents: BTreeMap<String, Agent>,
    /// Browser-wide state an agent started that reaches every tab.
    pub holds: Vec<Hold>,
}

/// Browser-wide state an agent started: while it lasts, no other agent's
/// command runs (it would record or rewrite that agent's pages).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hold {
    pub agent: String,
    pub what: HoldKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HoldKind {
    /// `tracing-start` (records every tab) until `tracing-stop`.
    Tracing,
    /// `route` (rewrites every tab's requests) until a bare `unroute`.
    Routes,
    /// `network-state-set offline` until `network-state-set online`.
    Network,
}

impl HoldKind {
    /// What it is and what ends it.
    pub fn describe(self) -> &'static str {
        match self {
            HoldKind::Tracing => "tracing running (it records every tab; `tracing-stop` ends it)",
            HoldKind::Routes => {
                "routes set (they rewrite every tab's requests; a bare `unroute` ends them)"
            }
            HoldKind::Network => {
                "the network set offline for every tab (`network-state-set online` ends it)"
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tab {
    pub id: u64,
    pub owner: Owner,
    pub label: Option<String>,
    /// `[title](url)` when last seen (never written to a log).
    pub header: String,
    /// Opened by its agent's command: `release` closes it.
    pub opened: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Owner {
    /// Added by the user, or of unknown origin: no agent's until claimed.
    User,
    /// The blank tab `connect` leaves: the first agent without a tab takes it.
    Spare,
    Agent(String),
}

impl Owner {
    pub fn agent(&self) -> Option<&str> {
        match self {
            Owner::Agent(name) => Some(name),
            _ => None,
        }
    }

    /// "agent X", "the user", "nobody yet".
    pub fn describe(&self) -> String {
        match self {
            Owner::User => "the user".into(),
            Owner::Spare => "nobody yet".into(),
            Owner::Agent(name) => format!("agent {name}"),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// The tab its commands run on when they name none.
    pub current: Option<u64>,
    /// Its latest command's name (never its arguments).
    pub last_command: String,
    /// When that command ran (milliseconds since the Unix epoch).
    pub last_at: u64,
    /// What happened to its tabs since: shown, once, by its next command.
    pub notices: Vec<String>,
}

/// What the command that just ran had to do with the tabs.
pub struct During<'a> {
    pub agent: &'a str,
    /// The tab it ran on.
    pub acted_on: Option<u64>,
    /// A tab it closed on purpose (`tab-close`, `release`).
    pub closed: Option<u64>,
    /// Whether it may have made another tab current (`tab-new`): the
    /// current tab then pins nothing.
    pub moves_current: bool,
    /// Whether a tab appearing meanwhile is its (a popup of its page).
    pub opens: bool,
}

/// Why a tab may not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// No tab by that id, label or index among the agent's.
    Unknown(TabRef),
    /// It was closed, or could not be followed.
    Gone(u64),
    /// It belongs to an earlier session (before a reconnect).
    Earlier(u64),
    /// It is someone else's.
    Foreign { id: u64, owner: Owner },
    /// The label is already one of the agent's tabs'.
    LabelTaken(String),
}

impl Book {
    /// A book for a session seen for the first time: every tab is the
    /// user's, but for a blank one `connect` just left (`blank_is_spare`).
    pub fn fresh(session: &str, next_id: u64, seen: &[Seen], blank_is_spare: bool) -> Book {
        let mut book = Book {
            version: VERSION,
            session: session.into(),
            first_id: next_id,
            next_id,
            tabs: Vec::new(),
            current: None,
            agents: BTreeMap::new(),
            holds: Vec::new(),
        };
        for tab in seen {
            let owner = if blank_is_spare && tab.header == BLANK {
                Owner::Spare
            } else {
                Owner::User
            };
            let id = book.add(owner, &tab.header, false);
            if tab.current {
                book.current = Some(id);
            }
        }
        book
    }

    /// A book for the session that follows `earlier` (a reconnect): ids go
    /// on from where it stopped (or from `next_id`, when later), and its
    /// agents hear, once, that their tabs went with it.
    pub fn after(
        earlier: &Book,
        next_id: u64,
        session: &str,
        seen: &[Seen],
        blank_is_spare: bool,
    ) -> Book {
        let mut book = Book::fresh(session, next_id.max(earlier.next_id), seen, blank_is_spare);
        for (name, agent) in &earlier.agents {
            let ids: Vec<String> = earlier.own(name).iter().map(|t| name_of(t)).collect();
            let mut notices = agent.notices.clone();
            if !ids.is_empty() {
                notices.push(format!(
                    "the browser was connected again, and your tabs of the earlier session ({}) \
                     went with it",
                    ids.join(", ")
                ));
            }
            if !notices.is_empty() {
                book.agents.insert(
                    name.clone(),
                    Agent {
                        notices,
                        ..agent.clone()
                    },
                );
            }
        }
        book
    }

    /// Whether the content is a book of ours.
    pub fn well_formed(&self) -> bool {
        let mut ids: Vec<u64> = self.tabs.iter().map(|t| t.id).collect();
        ids.sort_unstable();
        ids.dedup();
        let name_ok = |s: &str| !s.is_empty() && s.len() <= 64 && !s.contains(char::is_control);
        let label_ok = |l: &Option<String>| {
            l.as_deref()
                .is_none_or(|l| crate::policy::tabs::label(l).is_ok())
        };
        self.version == VERSION
            && self.agents.keys().all(|n| name_ok(n))
            && self
                .tabs
                .iter()
                .all(|t| label_ok(&t.label) && t.owner.agent().is_none_or(name_ok))
            && self.holds.iter().all(|h| name_ok(&h.agent))
            && ids.len() == self.tabs.len()
            && self
                .tabs
                .iter()
                .all(|t| t.id >= self.first_id && t.id < self.next_id)
            && self.first_id <= self.next_id
    }

    fn add(&mut self, owner: Owner, header: &str, opened: bool) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.tabs.push(Tab {
            id,
            owner,
            label: None,
            header: header.into(),
            opened,
        });
        id
    }

    pub fn tab(&self, id: u64) -> Option<&Tab> {
        self.tabs.iter().find(|t| t.id == id)
    }

    /// The daemon's index of a tab.
    pub fn index_of(&self, id: u64) -> Option<usize> {
        self.tabs.iter().position(|t| t.id == id)
    }

    /// The agent's tabs, in the daemon's order.
    pub fn own(&self, agent: &str) -> Vec<&Tab> {
        self.tabs
            .iter()
            .filter(|t| t.owner.agent() == Some(agent))
            .collect()
    }

    /// Other agents with a tab of the session, by name.
    pub fn others_with_tabs(&self, agent: &str) -> Vec<String> {
        let mut names: Vec<String> = self
            .tabs
            .iter()
            .filter_map(|t| t.owner.agent())
            .filter(|name| *name != agent)
            .map(String::from)
            .collect();
        names.dedup();
        names.sort();
        names.dedup();
        names
    }

    /// Takes in what the daemon lists now. `during`: the command that ran
    /// since the book was last written (none: only time passed). Tabs that
    /// went, or that can no longer be told apart, are noted for their
    /// agents; the notes for `during`'s own agent are returned instead.
    pub fn sync(&mut self, seen: &[Seen], during: Option<&During>) -> Vec<String> {
        let closed = during.and_then(|d| d.closed);
        let known: Vec<Tab> = self
            .tabs
            .iter()
            .filter(|t| Some(t.id) != closed)
            .cloned()
            .collect();
        let headers: Vec<&str> = known.iter().map(|t| t.header.as_str()).collect();
        let position = |id: Option<u64>| id.and_then(|id| known.iter().position(|t| t.id == id));
        let rules = Rules {
            known: &headers,
            current: position(self.current)
                .filter(|_| closed != self.current && !during.is_some_and(|d| d.moves_current)),
            acted_on: position(during.and_then(|d| d.acted_on)),
        };
        let alignment = align::align(&rules, seen);
        let mut notes: Vec<(String, String)> = Vec::new();
        let mut tabs = Vec::new();
        let mut current = None;
        for (j, tab) in seen.iter().enumerate() {
            let kept = if j < alignment.kept {
                match alignment.certain(j) {
                    Some(i) => Tab {
                        header: tab.header.clone(),
                        ..known[i].clone()
                    },
                    None => self.in_doubt(
                        &known,
                        &alignment.candidates[j],
                        alignment.maybe_new[j],
                        tab,
                        &mut notes,
                    ),
                }
            } else {
                // A tab is the command's only when nothing else moved: with
                // a known tab gone, what appeared may be a shifted one.
                let settled = alignment.kept == known.len() && !alignment.maybe_new.contains(&true);
                let owner = match during {
                    Some(d) if d.opens && settled => Owner::Agent(d.agent.into()),
                    _ => Owner::User,
                };
                let opened = owner.agent().is_some();
                let id = self.next_id;
                self.next_id += 1;
                Tab {
                    id,
                    owner,
                    label: None,
                    header: tab.header.clone(),
                    opened,
                }
            };
            if tab.current {
                current = Some(kept.id);
            }
            tabs.push(kept);
        }
        let in_doubt: Vec<usize> = (0..alignment.kept)
            .filter(|&j| alignment.certain(j).is_none())
            .flat_map(|j| alignment.candidates[j].iter().copied())
            .collect();
        for (i, tab) in known.iter().enumerate() {
            let still = tabs.iter().any(|t| t.id == tab.id);
            if still || in_doubt.contains(&i) {
                continue;
            }
            if let Some(agent) = tab.owner.agent() {
                notes.push((
                    agent.into(),
                    format!(
                        "tab {} was closed (by the user, or by its page), or its page left for \
                         another site, so it is no longer yours",
                        name_of(tab)
                    ),
                ));
            }
        }
        self.tabs = tabs;
        self.current = current;
        for agent in self.agents.values_mut() {
            if agent
                .current
                .is_some_and(|id| !self.tabs.iter().any(|t| t.id == id))
            {
                agent.current = None;
            }
        }
        let mine = during.map(|d| d.agent);
        let mut returned = Vec::new();
        for (agent, note) in notes {
            if Some(agent.as_str()) == mine {
                returned.push(note);
            } else {
                self.agents.entry(agent).or_default().notices.push(note);
            }
        }
        returned
    }

    /// A seen tab that could be any of `candidates` (or, `maybe_new`, a
    /// new one): a new id; the one owner they share, or the user's.
    fn in_doubt(
        &mut self,
        known: &[Tab],
        candidates: &[usize],
        maybe_new: bool,
        seen: &Seen,
        notes: &mut Vec<(String, String)>,
    ) -> Tab {
        let first = &known[candidates[0]].owner;
        let owner = if !maybe_new && candidates.iter().all(|&i| known[i].owner == *first) {
            first.clone()
        } else {
            Owner::User
        };
        let id = self.next_id;
        self.next_id += 1;
        let mut agents: Vec<&str> = candidates
            .iter()
            .filter_map(|&i| known[i].owner.agent())
            .collect();
        agents.sort_unstable();
        agents.dedup();
        // Each agent hears of its own tabs only: another's ids and labels
        // are not its to see.
        for agent in agents {
            let own: Vec<String> = candidates
                .iter()
                .filter(|&&i| known[i].owner.agent() == Some(agent))
                .map(|&i| name_of(&known[i]))
                .collect();
            let whose = if owner.agent() == Some(agent) {
                "still yours".to_string()
            } else {
                format!("{}'s", owner.describe())
            };
            notes.push((
                agent.into(),
                format!(
                    "{} could not be told apart from another tab after a tab closed or opened, \
                     so it is now t{id}, {whose}",
                    own.join(" or "),
                ),
            ));
        }
        Tab {
            id,
            owner: owner.clone(),
            label: None,
            header: seen.header.clone(),
            opened: false,
        }
    }

    /// The tab `reference` names for `agent`: one of its own.
    pub fn resolve(&self, agent: &str, reference: &TabRef) -> Result<u64, Refused> {
        let own = self.own(agent);
        let found = match reference {
            TabRef::Id(id) => {
                let Some(tab) = self.tab(*id) else {
                    return Err(if *id < self.first_id {
                        Refused::Earlier(*id)
                    } else if *id < self.next_id {
                        Refused::Gone(*id)
                    } else {
                        Refused::Unknown(reference.clone())
                    });
                };
                if tab.owner.agent() != Some(agent) {
                    return Err(Refused::Foreign {
                        id: *id,
                        owner: tab.owner.clone(),
                    });
                }
                Some(tab)
            }
            TabRef::Index(i) => own.get(*i).copied(),
            TabRef::Label(label) => own
                .iter()
                .find(|t| t.label.as_deref() == Some(label))
                .copied(),
        };
        found
            .map(|t| t.id)
            .ok_or_else(|| Refused::Unknown(reference.clone()))
    }

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

    /// `agent` takes the user's tab `id` (one the user added to the session).
    pub fn claim(&mut self, agent: &str, id: u64, label: Option<&str>) -> Result<(), Refused> {
        match self.tab(id) {
            None if id < self.first_id => return Err(Refused::Earlier(id)),
            None if id < self.next_id => return Err(Refused::Gone(id)),
            None => return Err(Refused::Unknown(TabRef::Id(id))),
            Some(tab) if tab.owner.agent() == Some(agent) => {}
            Some(tab) if tab.owner != Owner::User && tab.owner != Owner::Spare => {
                return Err(Refused::Foreign {
                    id,
                    owner: tab.owner.clone(),
                });
            }
            Some(_) => {}
        }
        if let Some(label) = label {
            self.check_label(agent, label)?;
        }
        let tab = self.tabs.iter_mut().find(|t| t.id == id).expect("found");
        tab.owner = Owner::Agent(agent.into());
        if label.is_some() {
            tab.label = label.map(String::from);
        }
        self.agents.entry(agent.into()).or_default().current = Some(id);
        Ok(())
    }

    /// Gives `agent`'s tabs (or one of them) back to the user; those it
    /// opened are returned to close, unless `keep`. The
    /// session keeps at least one tab (closing the last would end it): a
    /// tab that would be the last is left to the user instead.
    pub fn release(&mut self, agent: &str, only: Option<u64>, keep: bool) -> Vec<u64> {
        let mut close = Vec::new();
        let mut left = self.tabs.len();
        for tab in self.tabs.iter_mut() {
            if tab.owner.agent() != Some(agent) || only.is_some_and(|id| id != tab.id) {
                continue;
            }
            tab.label = None;
            if tab.opened && !keep && left > 1 {
                close.push(tab.id);
                left -= 1;
            }
            // Until it is closed (or if it cannot be), the user's.
            tab.owner = Owner::User;
            tab.opened = false;
        }
        if let Some(state) = self.agents.get_mut(agent)
            && state.current.is_some_and(|id| only.is_none_or(|o| o == id))
        {
            state.current = None;
        }
        if only.is_none() {
            self.agents.remove(agent);
        }
        close
    }

    /// Agents without a command for `gone_after_ms` leave their tabs to the
    /// user (and hear so, once, if they come back). Returns their names.
    pub fn expire(&mut self, now: u64, gone_after_ms: u64) -> Vec<String> {
        let gone: Vec<String> = self
            .agents
            .iter()
            .filter(|(_, a)| a.last_at.saturating_add(gone_after_ms) <= now)
            .map(|(name, _)| name.clone())
            .collect();
        let mut left = Vec::new();
        for name in gone {
            let ids: Vec<String> = self.own(&name).iter().map(|t| name_of(t)).collect();
            for tab in self.tabs.iter_mut() {
                if tab.owner.agent() == Some(&name) {
                    tab.owner = Owner::User;
                    tab.opened = false;
                    tab.label = None;
                }
            }
            if ids.is_empty() {
                self.agents.remove(&name);
                continue;
            }
            let agent = self.agents.get_mut(&name).expect("listed");
            agent.current = None;
            agent.notices.push(format!(
                "you had no command for {} s, so your tabs ({}) are the user's now",
                gone_after_ms / 1000,
                ids.join(", ")
            ));
            left.push(name);
        }
        left
    }

    /// Another agent's browser-wide state, which keeps `agent` out.
    pub fn held_by_other(&self, agent: &str) -> Option<&Hold> {
        self.holds.iter().find(|h| h.agent != agent)
    }

    /// What a browser-wide command that ran for `agent` started or ended.
    pub fn note_hold(&mut self, agent: &str, command: &str, argument: Option<&str>) {
        let (kind, starts) = match (command, argument) {
            ("tracing-start", _) => (HoldKind::Tracing, true),
            ("tracing-stop", _) => (HoldKind::Tracing, false),
            ("route", _) => (HoldKind::Routes, true),
            // A pattern removes some routes only: the hold stays.
            ("unroute", Some(_)) => return,
            ("unroute", None) => (HoldKind::Routes, false),
            ("network-state-set", Some("online")) => (HoldKind::Network, false),
            ("network-state-set", _) => (HoldKind::Network, true),
            _ => return,
        };
        self.holds.retain(|h| !(h.agent == agent && h.what == kind));
        if starts {
            self.holds.push(Hold {
                agent: agent.into(),
                what: kind,
            });
        }
    }

    /// The notes for `agent`, taken.
    pub fn take_notices(&mut self, agent: &str) -> Vec<String> {
        self.agents
            .get_mut(agent)
            .map(|a| std::mem::take(&mut a.notices))
            .unwrap_or_default()
    }
}

/// `t3` or `t3 (cart)`.
pub fn name_of(tab: &Tab) -> String {
    match &tab.label {
        Some(label) => format!("t{} ({label})", tab.id),
        None => format!("t{}", tab.id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(headers: &[&str], current: usize) -> Vec<Seen> {
        headers
            .iter()
            .enumerate()
            .map(|(i, h)| Seen {
                header: h.to_string(),
                current: i == current,
            })
            .collect()
    }

    const A: &str = "[A](https://a.test/)";
    const B: &str = "[B](https://b.test/)";
    const C: &str = "[C](https://c.test/)";

    fn opens(agent: &str, on: u64) -> During<'_> {
        During {
            agent,
            acted_on: Some(on),
            closed: None,
            opens: true,
            moves_current: false,
        }
    }

    /// A command of `during.agent` on its tab, as `Desk` runs it: the tab
    /// selected first, the list read after.
    fn ran(book: &mut Book, during: &During, after: &[Seen]) -> Vec<String> {
        if let Some(id) = during.acted_on {
            book.current = Some(id);
        }
        book.sync(after, Some(during))
    }

    /// A book where "a" owns t1 (A) and "b" owns t2 (B), t1 current.
    fn two_agents() -> Book {
        let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
        assert_eq!(book.default_tab("a"), Some(1));
        ran(&mut book, &opens("a", 1), &seen(&[A], 0));
        book.sync(&seen(&[A, BLANK], 0), None);
        // The tab that appeared between commands is the user's.
        assert_eq!(book.tabs[1].owner, Owner::User);
        book.claim("b", 2, Some("mine")).unwrap();
        ran(&mut book, &opens("b", 2), &seen(&[A, B], 1));
        book
    }

    #[test]
    fn the_blank_tab_goes_to_the_first_agent_and_new_ones_to_their_opener() {
        let mut book = two_agents();
        assert_eq!(book.own("a").len(), 1);
        assert_eq!(book.own("b")[0].label.as_deref(), Some("mine"));
        // b's click opened a popup: b's, opened by it.
        ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
        assert_eq!(book.tabs[2].owner, Owner::Agent("b".into()));
        assert!(book.tabs[2].opened);
        // A read opens nothing: a tab appearing meanwhile is the user's.
        let read = During {
            opens: false,
            ..opens("a", 1)
        };
        ran(&mut book, &read, &seen(&[A, B, C, C], 0));
        assert_eq!(book.tabs[3].owner, Owner::User);
        assert_eq!(book.default_tab("c"), None, "no spare left");
    }

    #[test]
    fn ids_are_never_reused_and_refusals_say_why() {
        let mut book = two_agents();
        assert_eq!(book.resolve("a", &TabRef::Id(1)), Ok(1));
        assert_eq!(book.resolve("a", &TabRef::Index(0)), Ok(1));
        assert_eq!(book.resolve("b", &TabRef::Label("mine".into())), Ok(2));
        assert_eq!(
            book.resolve("a", &TabRef::Id(2)),
            Err(Refused::Foreign {
                id: 2,
                owner: Owner::Agent("b".into())
            })
        );
        assert_eq!(
            book.resolve("a", &TabRef::Index(1)),
            Err(Refused::Unknown(TabRef::Index(1)))
        );
        // b's tab is closed by the user: b is told, once; a is not.
        let notes = book.sync(&seen(&[A], 0), None);
        assert!(notes.is_empty());
        assert_eq!(book.resolve("b", &TabRef::Id(2)), Err(Refused::Gone(2)));
        let told = book.take_notices("b");
        assert_eq!(told.len(), 1);
        assert!(told[0].contains("t2 (mine) was closed"), "{told:?}");
        assert!(book.take_notices("b").is_empty());
        assert!(book.take_notices("a").is_empty());
        assert_eq!(book.default_tab("b"), None, "b has no tab and no spare");
        // A new session starts after the last id.
        let next = Book::fresh("s2", book.next_id, &seen(&[BLANK], 0), true);
        assert_eq!(next.tabs[0].id, 3);
        assert_eq!(next.resolve("a", &TabRef::Id(1)), Err(Refused::Earlier(1)));
        assert_eq!(
            next.resolve("a", &TabRef::Id(9)),
            Err(Refused::Unknown(TabRef::Id(9)))
        );
    }

    #[test]
    fn tabs_in_doubt_go_to_the_user_unless_one_agent_had_them_all() {
        let mut book = two_agents();
        // b opens two tabs on the same page; a third of the user's too.
        ran(&mut book, &opens("b", 2), &seen(&[A, B, C, C], 1));
        book.sync(&seen(&[A, B, C, C, C], 1), None);
        assert_eq!(book.tabs[4].owner, Owner::User);
        // One of the three C tabs closes: the first left is one of b's two
        // (still b's, under a new id), the second b's or the user's (the
        // user's).
        book.sync(&seen(&[A, B, C, C], 1), None);
        assert_eq!(book.tabs[2].owner, Owner::Agent("b".into()), "{book:#?}");
        assert_eq!(book.tabs[3].owner, Owner::User);
        assert_eq!((book.tabs[2].id, book.tabs[3].id), (6, 7), "new ids");
        assert_eq!(book.take_notices("b").len(), 2);
    }

    #[test]
    fn a_new_tab_is_nobodys_when_the_list_also_lost_one() {
        // tab-new by c: the daemon makes the new tab current.
        let mut book = two_agents();
        let new = During {
            acted_on: None,
            moves_current: true,
            ..opens("c", 0)
        };
        book.sync(&seen(&[A, B, BLANK], 2), Some(&new));
        assert_eq!(book.tabs[2].owner, Owner::Agent("c".into()));
        assert_eq!(book.tab(1).unwrap().owner, Owner::Agent("a".into()));
        // The user closed b's tab while c's click ran, and c's page opened
        // a popup: the popup is not c's to have (it could be a shifted tab).
        let click = opens("c", 3);
        ran(&mut book, &click, &seen(&[A, BLANK, C], 1));
        assert_eq!(book.tabs[2].owner, Owner::User, "{book:#?}");
    }

    #[test]
    fn two_agents_tabs_of_one_site_that_trade_places_are_nobodys() {
        // a's t1 and b's t2 on one site; the extension re-attaches t1 (the
        // daemon sees it close and come back last).
        let x = "[X](https://a.test/x)";
        let y = "[Y](https://a.test/y)";
        let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
        book.default_tab("a");
        ran(&mut book, &opens("a", 1), &seen(&[x], 0));
        let mut b = book.clone();
        b.sync(&seen(&[x, BLANK], 0), None);
        b.claim("b", 2, None).unwrap();
        ran(&mut b, &opens("b", 2), &seen(&[x, y], 1));
        b.current = Some(1);
        b.sync(&seen(&[y, x], 0), None);
        assert!(b.tabs.iter().all(|t| t.owner == Owner::User), "{b:#?}");
        // Each hears of its own tab, and of nobody else's.
        let told_a = b.take_notices("a").join("\n");
        let told_b = b.take_notices("b").join("\n");
        assert!(told_a.contains("t1") && !told_a.contains("t2"), "{told_a}");
        assert!(told_b.contains("t2") && !told_b.contains("t1"), "{told_b}");
        assert!(told_a.contains("the user's"), "{told_a}");
    }

    #[test]
    fn a_tab_closed_on_purpose_is_not_news() {
        let mut book = two_agents();
        let close = During {
            closed: Some(2),
            opens: false,
            ..opens("b", 2)
        };
        let notes = ran(&mut book, &close, &seen(&[A], 0));
        assert!(notes.is_empty());
        assert!(book.take_notices("b").is_empty());
    }

    #[test]
    fn labels_are_one_per_tab_of_an_agent() {
        let mut book = two_agents();
        ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
        assert_eq!(
            book.adopt("b", 3, Some("mine")),
            Err(Refused::LabelTaken("mine".into()))
        );
        book.adopt("b", 3, Some("other")).unwrap();
        assert_eq!(book.resolve("b", &TabRef::Label("other".into())), Ok(3));
        assert_eq!(
            book.claim("a", 3, None),
            Err(Refused::Foreign {
                id: 3,
                owner: Owner::Agent("b".into())
            })
        );
    }

    #[test]
    fn release_closes_what_the_agent_opened_but_never_the_last_tab() {
        let mut book = two_agents();
        ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
        // b claimed t2 (the user's): it goes back; t3 it opened: closed.
        assert_eq!(book.release("b", None, false), vec![3]);
        assert_eq!(book.tab(2).unwrap().owner, Owner::User);
        assert!(book.own("b").is_empty() && !book.agents.contains_key("b"));
        // a alone, with the session's only tab besides the user's.
        let mut alone = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
        alone.default_tab("a");
        assert_eq!(alone.release("a", None, false), Vec::<u64>::new());
        assert_eq!(alone.tabs[0].owner, Owner::User, "kept: the last tab");
        let mut kept = two_agents();
        ran(&mut kept, &opens("b", 2), &seen(&[A, B, C], 1));
        assert!(kept.release("b", None, true).is_empty());
        assert_eq!(kept.tab(3).unwrap().owner, Owner::User);
    }

    #[test]
    fn an_agent_gone_quiet_leaves_its_tabs_to_the_user() {
        let mut book = two_agents();
        book.agents.get_mut("a").unwrap().last_at = 1_000;
        book.agents.get_mut("b").unwrap().last_at = 5_000;
        assert_eq!(book.expire(6_000, 4_000), vec!["a".to_string()]);
        assert_eq!(book.tab(1).unwrap().owner, Owner::User);
        assert!(book.take_notices("a")[0].contains("no command for 4 s"));
        assert_eq!(book.tab(2).unwrap().owner, Owner::Agent("b".into()));
        assert_eq!(book.others_with_tabs("a"), vec!["b".to_string()]);
    }

    #[test]
    fn browser_wide_state_keeps_other_agents_out_until_it_ends() {
        let mut book = two_agents();
        book.note_hold("a", "tracing-start", None);
        book.note_hold("a", "route", Some("**/x"));
        assert_eq!(book.held_by_other("b").unwrap().what, HoldKind::Tracing);
        assert!(book.held_by_other("a").is_none());
        book.note_hold("a", "tracing-stop", None);
        book.note_hold("a", "unroute", Some("**/x"));
        assert_eq!(book.held_by_other("b").unwrap().what, HoldKind::Routes);
        book.note_hold("a", "unroute", None);
        book.note_hold("a", "network-state-set", Some("offline"));
        assert_eq!(book.held_by_other("b").unwrap().what, HoldKind::Network);
        book.note_hold("a", "network-state-set", Some("online"));
        assert!(book.held_by_other("b").is_none());
    }

    #[test]
    fn a_reconnect_tells_every_agent_its_tabs_went() {
        let book = two_agents();
        let next = Book::after(&book, 1, "s2", &seen(&[BLANK], 0), true);
        assert_eq!(next.first_id, book.next_id);
        // A later id recorded apart wins.
        let later = Book::after(&book, book.next_id + 5, "s2", &seen(&[BLANK], 0), true);
        assert_eq!(later.first_id, book.next_id + 5);
        for agent in ["a", "b"] {
            let told = &next.agents[agent].notices;
            assert!(told[0].contains("connected again"), "{told:?}");
        }
        // A blank tab is spare only in a book `connect` makes.
        let other = Book::fresh("s3", 9, &seen(&[BLANK], 0), false);
        assert_eq!(other.tabs[0].owner, Owner::User);
    }

    #[test]
    fn a_book_is_checked_before_it_is_believed() {
        let book = two_agents();
        assert!(book.well_formed());
        let mut twice = book.clone();
        twice.tabs[1].id = 1;
        assert!(!twice.well_formed());
        let mut ahead = book.clone();
        ahead.tabs[0].id = ahead.next_id;
        assert!(!ahead.well_formed());
        let mut named = book.clone();
        named.tabs[0].owner = Owner::Agent("a\u{1b}[31m".into());
        assert!(!named.well_formed());
        let mut labelled = book.clone();
        labelled.tabs[0].label = Some("two words".into());
        assert!(!labelled.well_formed());
    }

    #[test]
    fn each_hold_says_what_it_is_and_what_ends_it() {
        assert_eq!(
            HoldKind::Tracing.describe(),
            "tracing running (it records every tab; `tracing-stop` ends it)"
        );
        assert_eq!(
            HoldKind::Routes.describe(),
            "routes set (they rewrite every tab's requests; a bare `unroute` ends them)"
        );
        assert_eq!(
            HoldKind::Network.describe(),
            "the network set offline for every tab (`network-state-set online` ends it)"
        );
    }

    #[test]
    fn the_daemons_index_of_a_tab_is_its_place_now() {
        let mut book = two_agents();
        ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
        assert_eq!(
            (book.index_of(1), book.index_of(2), book.index_of(3)),
            (Some(0), Some(1), Some(2))
        );
        assert_eq!(book.index_of(4), None, "one past the last: no index");
        // The user closes a's t1: b's tabs move down, t1 has no index.
        book.sync(&seen(&[B, C], 0), None);
        assert_eq!(
            (book.index_of(1), book.index_of(2), book.index_of(3)),
            (None, Some(0), Some(1))
        );
    }

    #[test]
    fn a_current_tab_no_longer_listed_as_current_was_closed() {
        // b's t2 is current; the user closes it (the daemon makes a's t1
        // current) and opens b's page again: that tab is new, the user's.
        let mut book = two_agents();
        assert_eq!(book.current, Some(2));
        assert!(book.sync(&seen(&[A, B], 0), None).is_empty());
        let got: Vec<(u64, Owner)> = book.tabs.iter().map(|t| (t.id, t.owner.clone())).collect();
        assert_eq!(got, vec![(1, Owner::Agent("a".into())), (3, Owner::User)]);
        assert_eq!(book.current, Some(1));
        assert_eq!(book.resolve("b", &TabRef::Id(2)), Err(Refused::Gone(2)));
        assert_eq!(
            book.resolve("b", &TabRef::Id(3)),
            Err(Refused::Foreign {
                id: 3,
                owner: Owner::User
            })
        );
        assert_eq!(
            book.take_notices("b"),
            vec![
                "tab t2 (mine) was closed (by the user, or by its page), or its page left for \
                 another site, so it is no longer yours"
                    .to_string()
            ]
        );
        assert!(book.take_notices("a").is_empty());
    }

    #[test]
    fn an_agents_current_tab_stays_its_current_while_it_lives() {
        let mut book = two_agents();
        assert_eq!(book.agents["a"].current, Some(1));
        assert_eq!(book.agents["b"].current, Some(2));
        // b's click opened a popup (t3): b's commands still run on t2.
        ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
        assert_eq!(book.agents["b"].current, Some(2));
        assert_eq!(book.default_tab("b"), Some(2));
        assert_eq!(book.default_tab("a"), Some(1));
        // The user closes t2 (the daemon makes t3 current): b's current is
        // forgotten, and its next command runs on its latest tab, t3.
        book.sync(&seen(&[A, C], 1), None);
        assert_eq!(book.agents["b"].current, None);
        assert_eq!(book.agents["a"].current, Some(1));
        assert_eq!(book.default_tab("b"), Some(3));
        assert_eq!(book.default_tab("a"), Some(1));
    }

    /// The book of a second session, after `two_agents`' (ids 1 and 2):
    /// t3 (blank) closed, t4 the user's; `first_id` 3, `next_id` 5.
    fn second_session() -> Book {
        let earlier = two_agents();
        let mut book = Book::after(&earlier, 1, "s2", &seen(&[BLANK, A], 0), true);
        book.sync(&seen(&[A], 0), None);
        assert_eq!((book.first_id, book.next_id), (3, 5));
        let ids: Vec<u64> = book.tabs.iter().map(|t| t.id).collect();
        assert_eq!(ids, vec![4]);
        book
    }

    #[test]
    fn an_id_is_refused_as_earlier_gone_or_unknown_at_the_exact_bounds() {
        let book = second_session();
        let expected = [
            (1, Refused::Earlier(1)),
            (2, Refused::Earlier(2)),
            // The first id of this session: closed, not an earlier one's.
            (3, Refused::Gone(3)),
            // The next id: not given yet.
            (5, Refused::Unknown(TabRef::Id(5))),
            (6, Refused::Unknown(TabRef::Id(6))),
        ];
        for (id, refused) in &expected {
            assert_eq!(
                book.resolve("a", &TabRef::Id(*id)),
                Err(refused.clone()),
                "t{id}"
            );
        }
        let mut claimed = book.clone();
        for (id, refused) in expected {
            assert_eq!(claimed.claim("a", id, Some("x")), Err(refused), "t{id}");
            assert_eq!(claimed, book, "a refused claim changes nothing");
        }
        claimed.claim("a", 4, Some("x")).unwrap();
        assert_eq!(claimed.tab(4).unwrap().owner, Owner::Agent("a".into()));
        assert_eq!(claimed.tab(4).unwrap().label.as_deref(), Some("x"));
        assert_eq!(claimed.resolve("a", &TabRef::Id(4)), Ok(4));
    }

    #[test]
    fn an_agent_may_claim_its_own_tab_again_to_label_it() {
        let mut book = two_agents();
        ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
        assert_eq!(book.claim("b", 3, Some("popup")), Ok(()));
        let tab = book.tab(3).unwrap();
        assert_eq!(tab.owner, Owner::Agent("b".into()));
        assert_eq!(tab.label.as_deref(), Some("popup"));
        assert!(tab.opened, "still b's to close on release");
        assert_eq!(book.agents["b"].current, Some(3));
        // Without a label, the one it has stays.
        assert_eq!(book.claim("b", 2, None), Ok(()));
        assert_eq!(book.tab(2).unwrap().label.as_deref(), Some("mine"));
        assert_eq!(book.agents["b"].current, Some(2));
        assert_eq!(book.release("b", None, false), vec![3]);
    }

    #[test]
    fn release_of_one_tab_touches_that_tab_only() {
        let mut book = two_agents();
        ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
        // b releases its popup t3: closed; t2 stays b's, labelled, current.
        assert_eq!(book.release("b", Some(3), false), vec![3]);
        assert_eq!(book.tab(3).unwrap().owner, Owner::User);
        assert_eq!(book.tab(2).unwrap().owner, Owner::Agent("b".into()));
        assert_eq!(book.tab(2).unwrap().label.as_deref(), Some("mine"));
        assert_eq!(book.agents["b"].current, Some(2));
        assert_eq!(book.default_tab("b"), Some(2));
        // b releases t2, its current (claimed from the user: not closed),
        // keeping t3: its next command runs on t3, never on the user's t2.
        let mut book = two_agents();
        ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
        assert_eq!(book.release("b", Some(2), false), Vec::<u64>::new());
        let t2 = book.tab(2).unwrap();
        assert_eq!((&t2.owner, t2.label.as_deref()), (&Owner::User, None));
        assert_eq!(book.agents["b"].current, None);
        assert_eq!(book.default_tab("b"), Some(3));
        assert_eq!(
            book.resolve("b", &TabRef::Id(2)),
            Err(Refused::Foreign {
                id: 2,
                owner: Owner::User
            })
        );
        assert_eq!(book.tab(1).unwrap().owner, Owner::Agent("a".into()));
    }

    #[test]
    fn release_of_every_tab_of_the_session_keeps_the_last() {
        // a took the spare tab and its page opened t2: a opened both.
        let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
        assert_eq!(book.default_tab("a"), Some(1));
        ran(&mut book, &opens("a", 1), &seen(&[A, B], 0));
        assert!(book.tabs.iter().all(|t| t.opened));
        assert_eq!(book.release("a", None, false), vec![1]);
        let got: Vec<(u64, Owner, bool)> = book
            .tabs
            .iter()
            .map(|t| (t.id, t.owner.clone(), t.opened))
            .collect();
        assert_eq!(got, vec![(1, Owner::User, false), (2, Owner::User, false)]);
        assert!(!book.agents.contains_key("a"));
    }
}
