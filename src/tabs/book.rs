//! The tab book (`<runtime>/tabs.json`): every tab of the session, in the
//! daemon's order, with its id, its owner and its label, and every agent's
//! current tab. Pure: the daemon's lists come in, the decisions go out, so
//! every ownership rule is tested directly.
//!
//! A tab passes from one agent to another only through its owner (who
//! gives it back: `release`) and the user (who gives it: `tab-give`). A
//! tab that leaves its owner for any reason — in doubt, moved to another
//! site, its owner gone quiet — is *held* for it: its former owner may take
//! it again (`tab-claim`), no other agent can. A tab nobody can account for
//! (a popup that appeared between commands, or while other agents' or the
//! user's pages were open, a tab the user dragged in) is *the user's*, and
//! goes to an agent only when the user gives it.
//!
//! Ids (`t<N>`) are never reused: a book for a new session (a new daemon)
//! starts where the last one stopped, and ids below its first belong to
//! earlier sessions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::align::{self, Match, Rules, Seen};
use super::notice::{Named, Notice, Whose};
pub use crate::policy::holds::HoldKind;
use crate::policy::holds::{self, Hold, HoldChange};
use crate::policy::tabs::TabRef;

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

    /// "agent X", "the user", "nobody yet", "held for agent X".
    pub fn describe(&self) -> String {
        match self {
            Owner::User => "the user".into(),
            Owner::Spare => "nobody yet".into(),
            Owner::Agent(name) => format!("agent {name}"),
            Owner::Held(name) => format!("held for agent {name}"),
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

impl Why {
    pub fn describe(&self) -> String {
        match self {
            Why::Found => "open before my-chrome first saw the session".into(),
            Why::Appeared => "appeared between commands (a popup, or a tab you added)".into(),
            Why::AppearedDuring(agent) => format!(
                "appeared during agent {agent}'s command while other pages were open, any of \
                 which could have opened it"
            ),
            Why::InDoubt => "could not be told apart from another tab after tabs changed".into(),
            Why::Moved => "its page went to another site between commands".into(),
            Why::OwnerGone => "its agent had no command for the gone time".into(),
            Why::Released => "its agent gave it back".into(),
            Why::LeftOpen => {
                "its agent closed it; left open, as a tab after it was another's".into()
            }
            Why::PastCap(agent) => format!(
                "a page of agent {agent}'s opened it while that agent had the most tabs you allow \
                 one agent"
            ),
            Why::NameEnded => "its agent's name ended and was registered anew".into(),
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

    fn add(&mut self, owner: Owner, seen: &Seen, opened: bool) -> u64 {
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
    fn take_id(&mut self) -> u64 {
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

    /// Takes in what the daemon lists now. `during`: the command that ran
    /// since the book was last written (none: only time passed). Tabs that
    /// went, or that can no longer be told apart, are noted for their
    /// agents; the notes for `during`'s own agent are returned instead.
    pub fn sync(&mut self, seen: &[Seen], during: Option<&During>) -> Vec<Notice> {
        let unnumbered: Vec<Seen>;
        let seen = if self.numbered {
            seen
        } else {
            unnumbered = seen
                .iter()
                .map(|s| Seen {
                    number: None,
                    ..s.clone()
                })
                .collect();
            &unnumbered
        };
        let closed = during.and_then(|d| d.closed);
        let was_current = self.current;
        let known: Vec<Tab> = self
            .tabs
            .iter()
            .filter(|t| Some(t.id) != closed)
            .cloned()
            .collect();
        let headers: Vec<&str> = known.iter().map(|t| t.header.as_str()).collect();
        let numbers: Vec<Option<u64>> = known.iter().map(|t| t.number).collect();
        let position = |id: Option<u64>| id.and_then(|id| known.iter().position(|t| t.id == id));
        let busy: Vec<usize> = self
            .busy
            .iter()
            .filter_map(|id| position(Some(*id)))
            .collect();
        let rules = Rules {
            known: &headers,
            numbers: &numbers,
            current: position(self.current)
                .filter(|_| closed != self.current && !during.is_some_and(|d| d.moves_current)),
            acted_on: position(during.and_then(|d| d.acted_on)),
            busy: &busy,
        };
        let matches = align::align(&rules, seen);
        let opener = during.and_then(|d| self.sole_opener(&known, &matches, d));
        let mut notes: Vec<(String, Notice)> = Vec::new();
        let mut tabs = Vec::new();
        let mut current = None;
        for (tab, matched) in seen.iter().zip(&matches) {
            let now = match matched {
                Match::Kept {
                    known: i,
                    moved: false,
                } => Tab {
                    header: tab.header.clone(),
                    number: tab.number,
                    ..known[*i].clone()
                },
                Match::Kept {
                    known: i,
                    moved: true,
                } => self.moved(&known[*i], tab, &mut notes),
                Match::InDoubt {
                    candidates,
                    maybe_new,
                    moved,
                } => self.in_doubt(&known, candidates, (*maybe_new, *moved), tab, &mut notes),
                Match::New => {
                    let new = self.appeared(tab, during, opener.as_deref());
                    if let (Some(d), Some(Why::AppearedDuring(_))) = (during, &new.why) {
                        notes.push((
                            d.agent.into(),
                            Notice::AppearedDuring {
                                tab: new.id,
                                agent: d.agent.into(),
                            },
                        ));
                    }
                    new
                }
            };
            if tab.current {
                current = Some(now.id);
            }
            tabs.push(now);
        }
        let accounted: Vec<usize> = matches.iter().flat_map(Match::known).collect();
        for (i, tab) in known.iter().enumerate() {
            if accounted.contains(&i) {
                continue;
            }
            if let Some(agent) = tab.owner.agent_or_held() {
                notes.push((agent.into(), Notice::Closed { tab: named(tab) }));
            }
        }
        self.tabs = tabs;
        self.current = current;
        // The daemon makes a tab current only when asked (`tabs::stay`):
        // after any other request, a current tab that went leaves none,
        // whatever a lone `### Page` (which marks no tab current) implies.
        if !during.is_some_and(|d| d.moves_current)
            && was_current.is_some_and(|id| !self.tabs.iter().any(|t| t.id == id))
        {
            self.current = None;
        }
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

    /// The agent whose page opened the tabs that appeared during `during`,
    /// when that can be known: its command may open tabs, nothing else
    /// changed, and no page but its own was open to open one (every other
    /// tab is the spare, blank, that `connect` left and no command ran in).
    /// A blank tab of anyone else's counts: an agent's runs its scripts
    /// (a timer there opened a popup during another's command), and a
    /// page can script a blank popup it opened.
    fn sole_opener(&self, known: &[Tab], matches: &[Match], during: &During) -> Option<String> {
        let settled = matches
            .iter()
            .all(|m| matches!(m, Match::Kept { moved: false, .. } | Match::New))
            && matches
                .iter()
                .filter(|m| matches!(m, Match::Kept { .. }))
                .count()
                == known.len();
        let only_its_pages = known.iter().all(|t| {
            t.owner.agent_or_held() == Some(during.agent)
                || (t.owner == Owner::Spare && t.header == BLANK)
        });
        (during.opens && settled && only_its_pages).then(|| during.agent.to_string())
    }

    /// A tab that appeared: its opener's when known, else the user's.
    fn appeared(&mut self, seen: &Seen, during: Option<&During>, opener: Option<&str>) -> Tab {
        let (owner, why) = match (opener, during) {
            (Some(agent), _) => (Owner::Agent(agent.into()), None),
            (None, Some(d)) if d.opens => (Owner::User, Some(Why::AppearedDuring(d.agent.into()))),
            (None, _) => (Owner::User, Some(Why::Appeared)),
        };
        Tab {
            id: self.take_id(),
            opened: owner.agent().is_some(),
            owner,
            label: None,
            header: seen.header.clone(),
            why,
            number: seen.number,
        }
    }

    /// A known tab that went to another site: a new id, the user's. It may
    /// also be a tab that appeared in its place, and no place proves
    /// otherwise: the tabs after it may be new too (an attack closed two
    /// of bob's popups while his page opened one showing exactly what the
    /// last had shown, and ann's opened one of another site: ann's read as
    /// his first popup gone elsewhere, held for him, and he claimed it).
    /// Its agent hears so, and asks the user for it.
    fn moved(&mut self, was: &Tab, seen: &Seen, notes: &mut Vec<(String, Notice)>) -> Tab {
        let id = self.take_id();
        if let Owner::Agent(name) | Owner::Held(name) = &was.owner {
            notes.push((
                name.clone(),
                Notice::Moved {
                    tab: named(was),
                    now: id,
                },
            ));
        }
        Tab {
            id,
            owner: Owner::User,
            label: None,
            header: seen.header.clone(),
            opened: false,
            why: Some(Why::Moved),
            number: seen.number,
        }
    }

    /// A seen tab that could be any of `candidates` (or, `maybe_new`, a
    /// new one; `moved`: as one of them, it went to another site): a new
    /// id, and the one agent they share's when nothing else can be it
    /// (held for it when they were not all its own, or it may be one it
    /// had given up), else the user's. A tab that may be new, or went to
    /// another site, is the user's whoever the candidates are: a new tab
    /// in the place of one that closed (an agent's page may close its own
    /// popup at the moment another page opens one) is no candidate's to
    /// claim. An attack took ann's popup that way, held for bob.
    fn in_doubt(
        &mut self,
        known: &[Tab],
        candidates: &[usize],
        (maybe_new, moved): (bool, bool),
        seen: &Seen,
        notes: &mut Vec<(String, Notice)>,
    ) -> Tab {
        let uncertain = maybe_new || moved;
        let first = &known[candidates[0]].owner;
        let one_agent = first.agent_or_held().filter(|a| {
            candidates
                .iter()
                .all(|&i| known[i].owner.agent_or_held() == Some(a))
        });
        let all_owned = candidates.iter().all(|&i| known[i].owner == *first);
        // Only agents among the candidates hear of it: with one agent, it
        // alone, so what it hears follows from the owner.
        let (owner, whose) = match one_agent {
            Some(a) if all_owned && !uncertain && first.agent().is_some() => {
                (Owner::Agent(a.into()), Whose::Yours)
            }
            Some(a) if !uncertain => (Owner::Held(a.into()), Whose::HeldForYou),
            _ => (Owner::User, Whose::TheUsers),
        };
        let id = self.take_id();
        let mut agents: Vec<&str> = candidates
            .iter()
            .filter_map(|&i| known[i].owner.agent_or_held())
            .collect();
        agents.sort_unstable();
        agents.dedup();
        // Each agent hears of its own tabs only: another's ids and labels
        // are not its to see.
        for agent in agents {
            let tabs: Vec<Named> = candidates
                .iter()
                .filter(|&&i| known[i].owner.agent_or_held() == Some(agent))
                .map(|&i| named(&known[i]))
                .collect();
            notes.push((
                agent.into(),
                Notice::InDoubt {
                    tabs,
                    now: id,
                    whose,
                },
            ));
        }
        Tab {
            id,
            why: match owner {
                Owner::Agent(_) => None,
                _ => Some(Why::InDoubt),
            },
            owner,
            label: None,
            header: seen.header.clone(),
            opened: false,
            number: seen.number,
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
                match &tab.owner {
                    Owner::Agent(name) if name == agent => {}
                    Owner::Held(name) if name == agent => return Err(Refused::HeldForYou(*id)),
                    owner => {
                        return Err(Refused::Foreign {
                            id: *id,
                            owner: owner.clone(),
                        });
                    }
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

    /// The tab `id`, or why there is none by that id.
    fn find(&self, id: u64) -> Result<&Tab, Refused> {
        self.tab(id).ok_or(if id < self.first_id {
            Refused::Earlier(id)
        } else if id < self.next_id {
            Refused::Gone(id)
        } else {
            Refused::Unknown(TabRef::Id(id))
        })
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

    /// The tabs held for `agent`.
    pub fn held_for(&self, agent: &str) -> Vec<&Tab> {
        self.tabs
            .iter()
            .filter(|t| matches!(&t.owner, Owner::Held(name) if name == agent))
            .collect()
    }

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

    /// The notes for `agent`, taken.
    pub fn take_notices(&mut self, agent: &str) -> Vec<Notice> {
        self.agents
            .get_mut(agent)
            .map(|a| std::mem::take(&mut a.notices))
            .unwrap_or_default()
    }
}

/// A tab as a notice names it (`t3`, `t3 (cart)`).
fn named(tab: &Tab) -> Named {
    Named {
        id: tab.id,
        label: tab.label.clone(),
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
                number: None,
            })
            .collect()
    }

    const A: &str = "[A](https://a.test/)";
    const B: &str = "[B](https://b.test/)";
    const C: &str = "[C](https://c.test/)";
    const X: &str = "[X](https://evil.test/)";

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
    fn ran(book: &mut Book, during: &During, after: &[Seen]) -> Vec<Notice> {
        if let Some(id) = during.acted_on {
            book.current = Some(id);
        }
        book.sync(after, Some(during))
    }

    fn owners(book: &Book) -> Vec<(u64, Owner)> {
        book.tabs.iter().map(|t| (t.id, t.owner.clone())).collect()
    }

    fn agent(name: &str) -> Owner {
        Owner::Agent(name.into())
    }

    fn held(name: &str) -> Owner {
        Owner::Held(name.into())
    }

    /// Notices as they are printed.
    fn words(notices: Vec<Notice>) -> Vec<String> {
        notices.iter().map(Notice::to_string).collect()
    }

    /// A tab as a notice names it.
    fn tab_named(id: u64, label: Option<&str>) -> Named {
        Named {
            id,
            label: label.map(String::from),
        }
    }

    /// A book where "a" owns t1 (A) and "b" owns t2 (B), t1 current.
    fn two_agents() -> Book {
        let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
        assert_eq!(book.default_tab("a"), Some(1));
        ran(&mut book, &opens("a", 1), &seen(&[A], 0));
        book.sync(&seen(&[A, BLANK], 0), None);
        // The tab that appeared between commands is the user's, and b
        // gets it only from the user.
        assert_eq!(book.tabs[1].owner, Owner::User);
        assert_eq!(book.tabs[1].why, Some(Why::Appeared));
        assert_eq!(book.claim("b", 2, None), Err(Refused::UsersToGive(2)));
        book.give(2, "b").unwrap();
        book.claim("b", 2, Some("mine")).unwrap();
        ran(&mut book, &opens("b", 2), &seen(&[A, B], 1));
        book
    }

    /// `two_agents`, with the daemon's numbers: t1 is 1, t2 is 2.
    fn two_numbered_agents() -> Book {
        let mut book = two_agents();
        book.numbered = true;
        let mut now = seen(&[A, B], 1);
        now[0].number = Some(1);
        now[1].number = Some(2);
        book.sync(&now, None);
        assert_eq!(book.tabs[1].number, Some(2));
        book
    }

    #[test]
    fn a_busy_tab_that_went_to_another_site_stays_its_agents() {
        // b's command stepped aside (or went past its bound) on t2, and
        // took it to another site while a's command ran: its doing, so
        // t2 stays b's. Once b's command is done, the same is the user's.
        for (busy, id, owner) in [(vec![2], 2, agent("b")), (vec![], 3, Owner::User)] {
            let mut book = two_numbered_agents();
            book.busy = busy;
            let mut now = seen(&[A, X], 0);
            now[0].number = Some(1);
            now[1].number = Some(2);
            book.sync(&now, None);
            assert_eq!((book.tabs[1].id, &book.tabs[1].owner), (id, &owner));
        }
    }

    #[test]
    fn a_new_tab_of_the_same_page_in_a_closed_ones_place_is_the_users() {
        let mut book = two_numbered_agents();
        let mut now = seen(&[A, B], 1);
        now[0].number = Some(1);
        now[1].number = Some(3);
        // By place and header, t2 would be kept; by number, it closed.
        book.sync(&now, None);
        assert_eq!(owners(&book)[0], (1, agent("a")));
        assert_eq!(book.tabs[1].owner, Owner::User);
        assert_eq!(book.tabs[1].number, Some(3));
        assert_ne!(book.tabs[1].id, 2);
        let told = words(book.take_notices("b"));
        assert!(told.iter().any(|w| w.contains("t2")), "{told:?}");
    }

    #[test]
    fn a_pages_number_is_not_read_before_the_daemon_numbers() {
        let mut book = two_agents();
        assert!(!book.numbered);
        let mut now = seen(&[A, B], 1);
        now[1].number = Some(9);
        book.sync(&now, None);
        assert_eq!(book.tabs[1].number, None);
        assert_eq!(owners(&book)[1], (2, agent("b")));
    }

    #[test]
    fn a_name_registered_anew_gets_nothing_of_the_earlier_holders() {
        let mut book = two_agents();
        // Known by registration 7 from here; the tabs it has are kept.
        book.agents.get_mut("b").unwrap().registration = Some(7);
        assert!(book.registered("b", 7, 50).is_empty());
        assert_eq!(book.tab(2).unwrap().owner, agent("b"));
        book.start_hold("b", HoldKind::Tracing, 1);
        book.agents
            .get_mut("b")
            .unwrap()
            .notices
            .push(Notice::Gone {
                gone_after_ms: 1,
                tabs: vec![],
            });
        // b's name ended and someone registered it again (8): b's tab is
        // the user's, its hold nobody's, its notes gone; a keeps its own.
        assert_eq!(book.registered("b", 8, 60), vec![2]);
        let t2 = book.tab(2).unwrap();
        assert_eq!(t2.owner, Owner::User);
        assert_eq!(t2.why, Some(Why::NameEnded));
        assert_eq!(t2.label, None);
        assert!(book.take_notices("b").is_empty());
        assert!(
            book.held_by_other("b").is_some(),
            "the hold keeps the new b out too"
        );
        assert_eq!(book.claim("b", 2, None), Err(Refused::UsersToGive(2)));
        assert_eq!(book.own("a").len(), 1);
        // A tab held for the earlier holder goes the same way.
        book.agents.get_mut("a").unwrap().last_at = 0;
        book.expire(10_000, 1_000, Vec::new);
        assert_eq!(book.tab(1).unwrap().owner, held("a"));
        assert_eq!(book.registered("a", 3, 20_000), vec![1]);
        assert_eq!(book.tab(1).unwrap().owner, Owner::User);
        assert_eq!(book.agents["a"].registration, Some(3));
    }

    #[test]
    fn an_agent_registered_now_or_holding_state_outlives_the_sweep() {
        let mut book = two_agents();
        // Just registered: it counts as active now, so the gone time runs
        // from here, and its registration is kept.
        book.registered("c", 9, 1_000);
        book.expire(1_500, 1_000, Vec::new);
        assert_eq!(book.agents["c"].registration, Some(9));
        // Gone, with nothing: its entry goes.
        book.expire(2_000, 1_000, Vec::new);
        assert!(!book.agents.contains_key("c"));
        // Gone with no tab but browser-wide state it started: kept, so the
        // hold stays its own to end.
        book.registered("d", 4, 1_000);
        book.start_hold("d", HoldKind::Routes, 1);
        book.expire(5_000, 1_000, Vec::new);
        assert_eq!(book.agents["d"].registration, Some(4));
        // A hold of another agent's keeps nobody else's entry.
        book.registered("e", 5, 1_000);
        book.expire(6_000, 1_000, Vec::new);
        assert!(!book.agents.contains_key("e"));
    }

    #[test]
    fn why_a_tab_is_the_users_is_said_in_words() {
        assert_eq!(
            Why::NameEnded.describe(),
            "its agent's name ended and was registered anew"
        );
        assert_eq!(Why::Released.describe(), "its agent gave it back");
        assert!(
            Why::AppearedDuring("ann".into())
                .describe()
                .contains("agent ann's command")
        );
    }

    #[test]
    fn the_blank_tab_goes_to_the_first_agent_and_a_popup_to_its_sole_opener() {
        // a alone: its click opened a popup, which only its page can have.
        let mut alone = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
        alone.default_tab("a");
        ran(&mut alone, &opens("a", 1), &seen(&[A], 0));
        ran(&mut alone, &opens("a", 1), &seen(&[A, C], 0));
        assert_eq!(alone.tabs[1].owner, agent("a"));
        assert!(alone.tabs[1].opened);
        // With b's page open too, b's page (a timer of its own) may have
        // opened it just as well: the user's, who gives it.
        let mut book = two_agents();
        assert_eq!(book.own("a").len(), 1);
        assert_eq!(book.own("b")[0].label.as_deref(), Some("mine"));
        let notes = ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
        assert_eq!(book.tabs[2].owner, Owner::User);
        assert_eq!(book.tabs[2].why, Some(Why::AppearedDuring("b".into())));
        assert_eq!(
            notes,
            [Notice::AppearedDuring {
                tab: 3,
                agent: "b".into()
            }],
            "b hears the tab waits for the user"
        );
        assert!(book.take_notices("a").is_empty());
        // A read opens nothing: a tab appearing meanwhile is the user's.
        let read = During {
            opens: false,
            ..opens("a", 1)
        };
        ran(&mut book, &read, &seen(&[A, B, C, C], 0));
        assert_eq!(book.tabs[3].owner, Owner::User);
        assert_eq!(book.tabs[3].why, Some(Why::Appeared));
        assert_eq!(book.default_tab("c"), None, "no spare left");
    }

    #[test]
    fn only_the_spare_blank_tab_opens_no_popup() {
        // b has only a blank tab, which runs b's scripts all the same: the
        // tab that appears during a's click is the user's.
        let mut book = Book::fresh("s", 1, &seen(&[BLANK, BLANK], 0), false);
        book.give(1, "a").unwrap();
        book.give(2, "b").unwrap();
        ran(&mut book, &opens("a", 1), &seen(&[A, BLANK], 0));
        ran(&mut book, &opens("a", 1), &seen(&[A, BLANK, C], 0));
        assert_eq!(book.tabs[2].owner, Owner::User);
        // Beside connect's spare, untouched, a's popup is a's.
        let mut book = Book::fresh("s", 1, &seen(&[BLANK, BLANK], 0), true);
        book.give(1, "a").unwrap();
        assert_eq!(book.tabs[1].owner, Owner::Spare);
        ran(&mut book, &opens("a", 1), &seen(&[A, BLANK], 0));
        ran(&mut book, &opens("a", 1), &seen(&[A, BLANK, C], 0));
        assert_eq!(book.tabs[2].owner, agent("a"));
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
                owner: agent("b")
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
        let told = words(book.take_notices("b"));
        assert_eq!(
            told,
            ["tab t2 (mine) was closed (by the user, or by its page)"]
        );
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
    fn tabs_in_doubt_stay_with_the_one_agent_that_had_them_all() {
        let mut book = two_agents();
        // b opens two tabs on the same page (alone... a's page is open: the
        // user gives them to b); a third of the user's too.
        ran(&mut book, &opens("b", 2), &seen(&[A, B, C, C], 1));
        book.give(3, "b").unwrap();
        book.give(4, "b").unwrap();
        book.sync(&seen(&[A, B, C, C, C], 1), None);
        assert_eq!(book.tabs[4].owner, Owner::User);
        // One of the three C tabs closes: the first left is one of b's two
        // (still b's, under a new id); the second b's or the user's: the
        // user's, who gives it.
        book.sync(&seen(&[A, B, C, C], 1), None);
        assert_eq!(book.tabs[2].owner, agent("b"), "{book:#?}");
        assert_eq!(book.tabs[3].owner, Owner::User);
        assert_eq!(book.tabs[3].why, Some(Why::InDoubt));
        assert_eq!((book.tabs[2].id, book.tabs[3].id), (6, 7), "new ids");
        assert_eq!(book.take_notices("b").len(), 2);
    }

    #[test]
    fn a_tab_that_may_be_an_agents_or_new_is_the_users() {
        // b's last tab goes to another site: it moved, or it closed and a
        // new tab came (a popup of a's page, say). No agent may take it:
        // not a, and not b, whose claim would take another page's tab; the
        // user gives it. An attack took ann's popup that way.
        let mut book = two_agents();
        book.sync(&seen(&[A, X], 1), None);
        let t = &book.tabs[1];
        assert_eq!(
            (t.id, &t.owner, &t.why),
            (3, &Owner::User, &Some(Why::InDoubt))
        );
        for agent in ["a", "b"] {
            assert_eq!(book.claim(agent, 3, None), Err(Refused::UsersToGive(3)));
        }
        assert_eq!(
            book.take_notices("b"),
            [Notice::InDoubt {
                tabs: vec![tab_named(2, Some("mine"))],
                now: 3,
                whose: Whose::TheUsers
            }]
        );
        assert!(book.take_notices("a").is_empty());
        book.give(3, "b").unwrap();
        assert_eq!(book.tab(3).unwrap().owner, agent("b"));
        assert_eq!(book.tab(3).unwrap().why, None);
    }

    #[test]
    fn a_page_that_went_to_another_site_is_the_users() {
        // b's t2 sits between a's t1 and c's t3: the tab at t2's place is
        // t2 gone to another site, or t2 closed and a new tab came while
        // t3 closed and another new one showing what it showed came too
        // (an attack did that with popups). It is the user's: b hears so,
        // and neither b nor a may take it.
        let mut book = two_agents();
        book.sync(&seen(&[A, B, C], 1), None);
        book.give(3, "c").unwrap();
        book.sync(&seen(&[A, X, C], 1), None);
        assert_eq!(
            owners(&book),
            [(1, agent("a")), (4, Owner::User), (3, agent("c"))]
        );
        assert_eq!(book.tab(4).unwrap().why, Some(Why::Moved));
        for agent in ["a", "b"] {
            assert_eq!(book.claim(agent, 4, None), Err(Refused::UsersToGive(4)));
        }
        assert_eq!(
            book.take_notices("b"),
            [Notice::Moved {
                tab: tab_named(2, Some("mine")),
                now: 4
            }]
        );
        assert!(book.take_notices("c").is_empty());
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
        book.adopt("c", 3, None).unwrap();
        assert_eq!(book.tab(1).unwrap().owner, agent("a"));
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
        b.give(2, "b").unwrap();
        ran(&mut b, &opens("b", 2), &seen(&[x, y], 1));
        b.current = Some(1);
        b.sync(&seen(&[y, x], 0), None);
        assert!(
            b.tabs
                .iter()
                .all(|t| t.owner == Owner::User || t.owner == held("b")),
            "{b:#?}"
        );
        assert_eq!(b.tabs[0].owner, Owner::User, "t1 or t2: nobody's");
        // Each hears of its own tab, and of nobody else's.
        let told_a = words(b.take_notices("a")).join("\n");
        let told_b = words(b.take_notices("b")).join("\n");
        assert!(told_a.contains("t1") && !told_a.contains("t2"), "{told_a}");
        assert!(told_b.contains("t2") && !told_b.contains("t1"), "{told_b}");
        assert!(told_a.contains("the user's"), "{told_a}");
    }

    #[test]
    fn twins_of_two_agents_one_of_which_closed_are_nobodys() {
        // a's and b's tabs show the same page; a's (current) closes and
        // the daemon makes b's current: the survivor may be either.
        let mut book = Book::fresh("s", 1, &seen(&[BLANK, BLANK], 0), false);
        book.give(1, "a").unwrap();
        book.give(2, "b").unwrap();
        ran(&mut book, &opens("a", 1), &seen(&[A, BLANK], 0));
        book.current = Some(2);
        ran(&mut book, &opens("b", 2), &seen(&[A, A], 1));
        book.current = Some(1);
        book.sync(&seen(&[A], 0), None);
        assert_eq!(owners(&book), [(3, Owner::User)]);
        assert!(book.own("a").is_empty() && book.own("b").is_empty());
    }

    #[test]
    fn a_current_tab_that_closed_leaves_none_current() {
        // b's tab (current) closed during b's command: the reply's lone
        // `### Page` is a's tab, which the daemon did not make current.
        let mut book = two_agents();
        book.current = Some(2);
        let mut during = During {
            opens: false,
            ..opens("b", 2)
        };
        ran(&mut book, &during, &seen(&[A], 0));
        assert_eq!(book.current, None);
        // A request that moves it (a select, a new tab) is believed.
        during.moves_current = true;
        book.sync(&seen(&[A], 0), Some(&during));
        assert_eq!(book.current, Some(1));
        // Nothing went: the list's mark stands.
        book.sync(&seen(&[A], 0), None);
        assert_eq!(book.current, Some(1));
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
        let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
        book.default_tab("b");
        ran(&mut book, &opens("b", 1), &seen(&[B], 0));
        book.claim("b", 1, Some("mine")).unwrap();
        ran(&mut book, &opens("b", 1), &seen(&[B, C], 0));
        assert_eq!(
            book.adopt("b", 2, Some("mine")),
            Err(Refused::LabelTaken("mine".into()))
        );
        book.adopt("b", 2, Some("other")).unwrap();
        assert_eq!(book.resolve("b", &TabRef::Label("other".into())), Ok(2));
        assert_eq!(
            book.claim("a", 2, None),
            Err(Refused::Foreign {
                id: 2,
                owner: agent("b")
            })
        );
    }

    #[test]
    fn release_closes_what_the_agent_opened_but_never_the_last_tab() {
        let mut book = two_agents();
        ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
        book.give(3, "b").unwrap();
        book.tabs[2].opened = true;
        // b was given t2 (the user's): it goes back; t3 it opened: closed.
        assert_eq!(book.release("b", None, false), vec![3]);
        assert_eq!(book.tab(2).unwrap().owner, Owner::User);
        assert_eq!(book.tab(2).unwrap().why, Some(Why::Released));
        // t3 stays b's until it is closed (a failed close leaves it b's,
        // for `release` again).
        assert_eq!(book.tab(3).unwrap().owner, Owner::Agent("b".into()));
        assert!(!book.released_all("b") && book.agents.contains_key("b"));
        book.tabs.retain(|t| t.id != 3);
        assert!(book.released_all("b"));
        assert!(book.own("b").is_empty() && !book.agents.contains_key("b"));
        // A given-back tab is the user's to give again, not an agent's to
        // take.
        assert_eq!(book.claim("a", 2, None), Err(Refused::UsersToGive(2)));
        // a alone, with the session's only tab besides the user's.
        let mut alone = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
        alone.default_tab("a");
        assert_eq!(alone.release("a", None, false), Vec::<u64>::new());
        assert_eq!(alone.tabs[0].owner, Owner::User, "kept: the last tab");
        let mut kept = two_agents();
        ran(&mut kept, &opens("b", 2), &seen(&[A, B, C], 1));
        kept.give(3, "b").unwrap();
        assert!(kept.release("b", None, true).is_empty());
        assert_eq!(kept.tab(3).unwrap().owner, Owner::User);
        // What is held for it goes back to the user too.
        let mut gone = two_agents();
        gone.agents.get_mut("b").unwrap().last_at = 0;
        gone.expire(10_000, 1_000, Vec::new);
        assert_eq!(gone.tab(2).unwrap().owner, held("b"));
        assert!(
            gone.release("b", None, false).is_empty(),
            "nothing it opened"
        );
        let t2 = gone.tab(2).unwrap();
        assert_eq!((&t2.owner, &t2.why), (&Owner::User, &Some(Why::Released)));
    }

    #[test]
    fn an_agent_at_work_is_not_gone_however_quiet_the_book_says_it_is() {
        let mut book = two_agents();
        book.agents.get_mut("a").unwrap().last_at = 1_000;
        book.agents.get_mut("b").unwrap().last_at = 1_000;
        assert_eq!(
            book.expire(6_000, 4_000, || vec!["a".into()]),
            vec!["b".to_string()]
        );
        assert_eq!(book.tab(1).unwrap().owner, Owner::Agent("a".into()));
        for name in ["a", "b"] {
            book.agents.get_mut(name).unwrap().last_at = 5_000;
        }
        book.expire(6_000, 4_000, || panic!("asked with nobody to go"));
    }

    #[test]
    fn an_agent_gone_quiet_has_its_tabs_held_for_it() {
        let mut book = two_agents();
        book.agents.get_mut("a").unwrap().last_at = 1_000;
        book.agents.get_mut("b").unwrap().last_at = 5_000;
        assert_eq!(book.expire(6_000, 4_000, Vec::new), vec!["a".to_string()]);
        let t1 = book.tab(1).unwrap();
        assert_eq!((&t1.owner, &t1.why), (&held("a"), &Some(Why::OwnerGone)));
        assert_eq!(
            book.take_notices("a"),
            [Notice::Gone {
                gone_after_ms: 4_000,
                tabs: vec![tab_named(1, None)]
            }]
        );
        assert_eq!(book.tab(2).unwrap().owner, agent("b"));
        // No other agent takes it; its own may, and the user may give it.
        assert_eq!(
            book.resolve("b", &TabRef::Id(1)).unwrap_err(),
            Refused::Foreign {
                id: 1,
                owner: held("a")
            }
        );
        assert_eq!(book.others_with_tabs("b"), ["a"]);
        assert_eq!(
            book.resolve("a", &TabRef::Id(1)),
            Err(Refused::HeldForYou(1))
        );
        let mut claimed = book.clone();
        claimed.claim("a", 1, None).unwrap();
        assert_eq!(claimed.tab(1).unwrap().owner, agent("a"));
        book.give(1, "b").unwrap();
        assert_eq!(book.tab(1).unwrap().owner, agent("b"));
        assert_eq!(
            words(book.take_notices("a")),
            ["tab t1, held for you, was given to agent b by the user"]
        );
    }

    #[test]
    fn the_user_gives_what_no_agent_has() {
        let mut book = two_agents();
        book.sync(&seen(&[A, B, C], 1), None);
        assert_eq!(book.tab(3).unwrap().owner, Owner::User);
        assert_eq!(
            book.give(1, "b"),
            Err(Refused::Owned {
                id: 1,
                agent: "a".into()
            })
        );
        assert_eq!(book.give(9, "b"), Err(Refused::Unknown(TabRef::Id(9))));
        let before = book.clone();
        assert_eq!(
            book.give(1, "b").unwrap_err(),
            Refused::Owned {
                id: 1,
                agent: "a".into()
            }
        );
        assert_eq!(book, before, "a refused gift changes nothing");
        book.give(3, "a").unwrap();
        let t3 = book.tab(3).unwrap();
        assert_eq!((&t3.owner, &t3.why, t3.opened), (&agent("a"), &None, false));
        assert_eq!(book.resolve("a", &TabRef::Id(3)), Ok(3));
        // An agent's own tab given to it again: nothing changes of it.
        book.claim("a", 3, Some("docs")).unwrap();
        book.give(3, "a").unwrap();
        assert_eq!(book.tab(3).unwrap().label.as_deref(), Some("docs"));
    }

    #[test]
    fn browser_wide_state_keeps_other_agents_out_until_it_ends() {
        let mut book = two_agents();
        book.start_hold("a", HoldKind::Tracing, 1);
        book.start_hold("a", HoldKind::Routes, 1);
        book.start_hold("a", HoldKind::Routes, 1);
        assert_eq!(book.holds.len(), 2, "one hold of a kind per agent");
        assert_eq!(book.held_by_other("b").unwrap().what, HoldKind::Tracing);
        assert!(book.held_by_other("a").is_none());
        book.end_hold("a", HoldKind::Tracing);
        assert_eq!(book.held_by_other("b").unwrap().what, HoldKind::Routes);
        book.end_hold("b", HoldKind::Routes);
        assert_eq!(
            book.held_by_other("b").unwrap().what,
            HoldKind::Routes,
            "b ends no hold of a's"
        );
        book.end_hold("a", HoldKind::Routes);
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
        for (agent, tab) in [("a", tab_named(1, None)), ("b", tab_named(2, Some("mine")))] {
            assert_eq!(
                next.agents[agent].notices,
                [Notice::Reconnected { tabs: vec![tab] }]
            );
        }
        // A blank tab is spare only in a book `connect` makes.
        let other = Book::fresh("s3", 9, &seen(&[BLANK], 0), false);
        assert_eq!(other.tabs[0].owner, Owner::User);
        assert_eq!(other.tabs[0].why, Some(Why::Found));
    }

    #[test]
    fn a_book_is_checked_before_it_is_believed() {
        let book = two_agents();
        assert!(book.well_formed());
        let mut first = book.clone();
        first.version = 1;
        assert!(first.well_formed(), "a book of the release before is read");
        let mut later = book.clone();
        later.version = 3;
        assert!(!later.well_formed());
        let mut twice = book.clone();
        twice.tabs[1].id = 1;
        assert!(!twice.well_formed());
        let mut ahead = book.clone();
        ahead.tabs[0].id = ahead.next_id;
        assert!(!ahead.well_formed());
        let mut named = book.clone();
        named.tabs[0].owner = Owner::Held("a\u{1b}[31m".into());
        assert!(!named.well_formed());
        let mut labelled = book.clone();
        labelled.tabs[0].label = Some("two words".into());
        assert!(!labelled.well_formed());
        // A book written before `why` existed reads without it.
        let old = r#"{"version":1,"session":"s","first_id":1,"next_id":2,"tabs":[{"id":1,"owner":"user","label":null,"header":"[](about:blank)","opened":false}],"current":1,"agents":{},"holds":[]}"#;
        let read: Book = serde_json::from_str(old).unwrap();
        assert!(read.well_formed() && read.tabs[0].why.is_none());
    }

    #[test]
    fn a_book_of_the_release_before_reads_its_worded_notices_as_they_are() {
        // Notices were stored as words: they are shown as they were, and a
        // new one is stored as data beside them.
        let old = r#"{"version":2,"session":"s","first_id":1,"next_id":2,"tabs":[{"id":1,"owner":{"held":"a"},"label":null,"header":"[](about:blank)","opened":false,"why":"owner-gone"}],"current":1,"agents":{"a":{"current":null,"last_command":"snapshot","last_at":5,"notices":["tab t2 (mine) was closed (by the user, or by its page)","you had no command for 4 s, so your tabs (t1) are held for you: `my-chrome tab-claim <id>` takes one again"]}},"holds":[{"agent":"a","what":"tracing"}]}"#;
        let mut read: Book = serde_json::from_str(old).unwrap();
        assert!(read.well_formed());
        assert_eq!(
            read.agents["a"].notices,
            [
                Notice::Said("tab t2 (mine) was closed (by the user, or by its page)".into()),
                Notice::Said(
                    "you had no command for 4 s, so your tabs (t1) are held for you: \
                     `my-chrome tab-claim <id>` takes one again"
                        .into()
                ),
            ]
        );
        assert_eq!(
            read.holds,
            [Hold {
                agent: "a".into(),
                what: HoldKind::Tracing,
                since: 0,
            }]
        );
        // Written back unchanged.
        let again: serde_json::Value = serde_json::to_value(&read).unwrap();
        assert_eq!(
            again,
            serde_json::from_str::<serde_json::Value>(old).unwrap()
        );
        read.give(1, "b").unwrap();
        let written = serde_json::to_string(&read).unwrap();
        assert!(
            written.contains(
                r#"held for you: `my-chrome tab-claim <id>` takes one again",{"kind":"given-away","tab":1,"to":"b"}]"#
            ),
            "{written}"
        );
        assert_eq!(
            words(read.take_notices("a")),
            [
                "tab t2 (mine) was closed (by the user, or by its page)",
                "you had no command for 4 s, so your tabs (t1) are held for you: `my-chrome \
                 tab-claim <id>` takes one again",
                "tab t1, held for you, was given to agent b by the user",
            ]
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
        // b's t2 is current; the user closes it (the daemon makes no tab
        // current, `tabs::stay`) and opens b's page again: that tab is
        // new, the user's.
        let mut book = two_agents();
        assert_eq!(book.current, Some(2));
        assert!(book.sync(&seen(&[A, B], usize::MAX), None).is_empty());
        assert_eq!(owners(&book), [(1, agent("a")), (3, Owner::User)]);
        assert_eq!(book.current, None);
        assert_eq!(book.resolve("b", &TabRef::Id(2)), Err(Refused::Gone(2)));
        assert_eq!(
            book.resolve("b", &TabRef::Id(3)),
            Err(Refused::Foreign {
                id: 3,
                owner: Owner::User
            })
        );
        assert_eq!(
            words(book.take_notices("b")),
            ["tab t2 (mine) was closed (by the user, or by its page)"]
        );
        assert!(book.take_notices("a").is_empty());
    }

    #[test]
    fn an_agents_current_tab_stays_its_current_while_it_lives() {
        let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
        book.default_tab("b");
        ran(&mut book, &opens("b", 1), &seen(&[B], 0));
        // b's click opened a popup (t2, b's): b's commands still run on t1.
        ran(&mut book, &opens("b", 1), &seen(&[B, C], 0));
        assert_eq!(book.tab(2).unwrap().owner, agent("b"));
        assert_eq!(book.agents["b"].current, Some(1));
        assert_eq!(book.default_tab("b"), Some(1));
        // The user closes t1 (the daemon makes t2 current): b's current is
        // forgotten, and its next command runs on its latest tab, t2.
        book.sync(&seen(&[C], 0), None);
        assert_eq!(book.agents["b"].current, None);
        assert_eq!(book.default_tab("b"), Some(2));
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
        for (id, refused) in expected.clone() {
            assert_eq!(
                claimed.claim("a", id, Some("x")),
                Err(refused.clone()),
                "t{id}"
            );
            assert_eq!(claimed.give(id, "a"), Err(refused), "t{id}");
            assert_eq!(claimed, book, "a refused claim changes nothing");
        }
        // t4 is the user's: the user gives it, then a labels it.
        assert_eq!(
            claimed.claim("a", 4, Some("x")),
            Err(Refused::UsersToGive(4))
        );
        claimed.give(4, "a").unwrap();
        claimed.claim("a", 4, Some("x")).unwrap();
        assert_eq!(claimed.tab(4).unwrap().owner, agent("a"));
        assert_eq!(claimed.tab(4).unwrap().label.as_deref(), Some("x"));
        assert_eq!(claimed.resolve("a", &TabRef::Id(4)), Ok(4));
    }

    #[test]
    fn an_agent_may_claim_its_own_tab_again_to_label_it() {
        let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
        book.default_tab("b");
        ran(&mut book, &opens("b", 1), &seen(&[B], 0));
        ran(&mut book, &opens("b", 1), &seen(&[B, C], 0));
        assert_eq!(book.claim("b", 2, Some("popup")), Ok(()));
        let tab = book.tab(2).unwrap();
        assert_eq!(tab.owner, agent("b"));
        assert_eq!(tab.label.as_deref(), Some("popup"));
        assert!(tab.opened, "still b's to close on release");
        assert_eq!(book.agents["b"].current, Some(2));
        // Without a label, the one it has stays.
        book.claim("b", 1, Some("mine")).unwrap();
        assert_eq!(book.claim("b", 1, None), Ok(()));
        assert_eq!(book.tab(1).unwrap().label.as_deref(), Some("mine"));
        assert_eq!(book.agents["b"].current, Some(1));
        assert_eq!(book.release("b", None, false), vec![1]);
    }

    #[test]
    fn release_of_one_tab_touches_that_tab_only() {
        // (t1 is connect's spare: b's popup is b's.)
        let mut book = Book::fresh("s", 1, &seen(&[BLANK, BLANK], 0), true);
        book.give(2, "b").unwrap();
        book.claim("b", 2, Some("mine")).unwrap();
        ran(&mut book, &opens("b", 2), &seen(&[BLANK, B], 1));
        ran(&mut book, &opens("b", 2), &seen(&[BLANK, B, C], 1));
        assert_eq!(book.tab(3).unwrap().owner, agent("b"));
        // b releases its popup t3: to close (b's until it is); t2 stays
        // b's, labelled, current.
        let mut one = book.clone();
        assert_eq!(one.release("b", Some(3), false), vec![3]);
        assert_eq!(one.tab(3).unwrap().owner, agent("b"));
        assert_eq!(one.tab(2).unwrap().owner, agent("b"));
        assert_eq!(one.tab(2).unwrap().label.as_deref(), Some("mine"));
        assert_eq!(one.agents["b"].current, Some(2));
        assert_eq!(one.default_tab("b"), Some(2));
        // b releases t2, its current (given by the user: not closed),
        // keeping t3: its next command runs on t3, never on the user's t2.
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
        // t1, to close, is a's until it is; the last one left, the user's.
        assert_eq!(got, vec![(1, agent("a"), true), (2, Owner::User, false)]);
        assert!(book.agents.contains_key("a"));
        book.tabs.retain(|t| t.id != 1);
        assert!(book.released_all("a") && !book.agents.contains_key("a"));
    }

    #[test]
    fn tabs_past_the_cap_go_to_the_user_newest_first_never_the_one_acted_on() {
        let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
        assert_eq!(book.default_tab("a"), Some(1));
        ran(&mut book, &opens("a", 1), &seen(&[A, B, C], 0));
        assert_eq!(book.own("a").len(), 3);
        assert_eq!(book.cap("a", 3, Some(1)), Vec::<u64>::new());
        // The newest first; t3 is the one its command ran on: kept.
        assert_eq!(book.cap("a", 1, Some(3)), vec![2, 1]);
        assert_eq!(book.tab(3).unwrap().owner, agent("a"));
        for id in [1, 2] {
            let tab = book.tab(id).unwrap();
            assert_eq!(tab.owner, Owner::User);
            assert_eq!(tab.why, Some(Why::PastCap("a".into())));
        }
    }
}
