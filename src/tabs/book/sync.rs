//! The book follows the daemon: what it lists now, read against what the
//! book knew, after a command or only time passed (`Book::sync`): which
//! tab is which, which appeared and whose, which went, and who hears so.

use super::model::named;
use super::{BLANK, Book, During, Owner, Tab, Why};
use crate::tabs::align::{self, Match, Rules, Seen};
use crate::tabs::notice::{Named, Notice, Whose};

impl Book {
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
}
