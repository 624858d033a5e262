//! A tab named by an agent (an id, a label, an index among its own)
//! resolved to the one tab it names, or the refusal that says why none.

use super::{Book, Owner, Refused, Tab};
use crate::policy::tabs::TabRef;

impl Book {
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

    /// The tab `id`, or why there is none by that id.
    pub(super) fn find(&self, id: u64) -> Result<&Tab, Refused> {
        self.tab(id).ok_or(if id < self.first_id {
            Refused::Earlier(id)
        } else if id < self.next_id {
            Refused::Gone(id)
        } else {
            Refused::Unknown(TabRef::Id(id))
        })
    }
}
