//! The book's model: what `tabs.json` holds (the session's tabs, their
//! owners and why, every agent's state), a book made for a session, and
//! what it says of a tab or an agent. Pure data and lookups; no words for
//! people (those are `tabs::view`'s).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::policy::holds::Hold;
use crate::policy::tabs::TabRef;
use crate::tabs::align::Seen;
use crate::tabs::notice::{Named, Notice};

/// 2: tabs held for an agent, and why a tab is no agent's. A book of 1 is
/// read as it is (it has neither).
const VERSION: u32 = 2;
const VERSIONS_READ: [u32; 2] = [1, 2];

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
    /// Browser-wide state an agent started that reaches every tab (whom
    /// it keeps out: `policy::holds`).
    pub holds: Vec<Hold>,
    /// The daemon keeps a closed current tab current (`tabs::stay`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub current_stays: bool,
    /// The daemon numbers its tabs (`tabs::number`), by the same request:
    /// until it does, a number in a listed title is a page's, not read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub numbered: bool,
    /// Tabs a command still runs on, stepped aside or past its bound
    /// (`lease::late`): what happens to each meanwhile is that command's
    /// doing, as for the tab a command acts on. Read from `late.json`,
    /// never stored.
    #[serde(skip)]
    pub busy: Vec<u64>,
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
    /// Why a tab is held, or the user's (`my-chrome agents` says so).
    #[serde(default)]
    pub why: Option<Why>,
    /// The daemon's number for it (`tabs::number`), once listed with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Owner {
    /// The user's: added by the user, of unknown origin, or given back.
    /// No agent's until the user gives it (`tab-give`).
    User,
    /// The blank tab `connect` leaves: the first agent without a tab takes it.
    Spare,
    Agent(String),
    /// It left this agent (in doubt, moved to another site, the agent gone
    /// quiet): the agent may take it again, no other agent can.
    Held(String),
}

impl Owner {
    /// The agent it belongs to.
    pub fn agent(&self) -> Option<&str> {
        match self {
            Owner::Agent(name) => Some(name),
            _ => None,
        }
    }

    /// The agent it belongs to or is held for: the one agent whose pages
    /// it may show.
    pub fn agent_or_held(&self) -> Option<&str> {
        match self {
            Owner::Agent(name) | Owner::Held(name) => Some(name),
            Owner::User | Owner::Spare => None,
        }
    }
}

/// Why a tab is held for an agent, or the user's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Why {
    /// Open before my-chrome first saw the session.
    Found,
    /// It appeared between commands (a popup a page opened, a tab the
    /// user added).
    Appeared,
    /// It appeared during this agent's command while other pages (another
    /// agent's, the user's) were open, any of which could have opened it.
    AppearedDuring(String),
    /// It could not be told apart from another tab after tabs changed.
    InDoubt,
    /// Its page went to another site between commands (or it closed and a
    /// tab that appeared took its place).
    Moved,
    /// Its agent had no command for the gone time.
    OwnerGone,
    /// Its agent gave it back (`release`).
    Released,
    /// Its agent closed it, and it was left open: a tab after it was
    /// another's, which a close could have reached instead.
    LeftOpen,
    /// It appeared from its agent's page while the agent already had the
    /// most tabs the user allows one agent.
    PastCap(String),
    /// Its agent's name ended (its key's gone time, or its process
    /// exited) and was registered anew: the new holder is not its agent.
    NameEnded,
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
    pub notices: Vec<Notice>,
    /// The registration of its name this book knows it by
    /// (`identity::registry`): a name registered anew is another agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<u64>,
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
    /// Whether a tab appearing meanwhile may be its (a popup of its page).
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
    /// It is someone else's (another agent's, held for another agent,
    /// the user's).
    Foreign { id: u64, owner: Owner },
    /// It is held for the agent asking: `tab-claim` takes it again.
    HeldForYou(u64),
    /// The user gives it: an agent does not take it (`tab-claim`).
    UsersToGive(u64),
    /// An agent has it: it gives it back itself (`tab-give` gives only
    /// what no agent has).
    Owned { id: u64, agent: String },
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
            current_stays: false,
            numbered: false,
            busy: Vec::new(),
        };
        for tab in seen {
            let (owner, why) = if blank_is_spare && tab.header == BLANK {
                (Owner::Spare, None)
            } else {
                (Owner::User, Some(Why::Found))
            };
            let id = book.add(owner, tab, false);
            book.tabs.last_mut().expect("just added").why = why;
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
            let tabs: Vec<Named> = earlier.own(name).into_iter().map(named).collect();
            let mut notices = agent.notices.clone();
            if !tabs.is_empty() {
                notices.push(Notice::Reconnected { tabs });
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
        VERSIONS_READ.contains(&self.version)
            && self.agents.keys().all(|n| name_ok(n))
            && self
                .tabs
                .iter()
                .all(|t| label_ok(&t.label) && t.owner.agent_or_held().is_none_or(name_ok))
            && self.holds.iter().all(|h| name_ok(&h.agent))
            && ids.len() == self.tabs.len()
            && self
                .tabs
                .iter()
                .all(|t| t.id >= self.first_id && t.id < self.next_id)
            && self.first_id <= self.next_id
    }

    pub(super) fn add(&mut self, owner: Owner, seen: &Seen, opened: bool) -> u64 {
        let id = self.take_id();
        self.tabs.push(Tab {
            id,
            owner,
            label: None,
            header: seen.header.clone(),
            opened,
            why: None,
            number: seen.number.filter(|_| self.numbered),
        });
        id
    }

    /// The next id, taken.
    pub(super) fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A command past its bound ended on tab `id` showing `header`, the
    /// daemon's tab `number` (its answer says so, `lease::late::Ended`):
    /// what it did there is its doing, read in as its list after would
    /// have. Not if the tab is another (its number differs).
    pub fn answered_on(&mut self, id: u64, number: u64, header: &str) {
        if let Some(tab) = self
            .tabs
            .iter_mut()
            .find(|t| t.id == id && t.number == Some(number))
        {
            tab.header = header.to_string();
        }
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

    /// Other agents with a tab of the session (or one held for them), by
    /// name.
    pub fn others_with_tabs(&self, agent: &str) -> Vec<String> {
        let mut names: Vec<String> = self
            .tabs
            .iter()
            .filter_map(|t| t.owner.agent_or_held())
            .filter(|name| *name != agent)
            .map(String::from)
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The tabs held for `agent`.
    pub fn held_for(&self, agent: &str) -> Vec<&Tab> {
        self.tabs
            .iter()
            .filter(|t| matches!(&t.owner, Owner::Held(name) if name == agent))
            .collect()
    }

    /// The notes for `agent`, taken.
    pub fn take_notices(&mut self, agent: &str) -> Vec<Notice> {
        self.agents
            .get_mut(agent)
            .map(|a| std::mem::take(&mut a.notices))
            .unwrap_or_default()
    }
}

/// A tab as a notice names it (`t3`, `t3 (cart)`).
pub(super) fn named(tab: &Tab) -> Named {
    Named {
        id: tab.id,
        label: tab.label.clone(),
    }
}
