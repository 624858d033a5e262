//! The agents as `my-chrome agents` and `doctor` show them: each agent's
//! tab ids and labels, the tabs held for it and why, its last command and
//! when, the user's tabs and why they are the user's, and the command
//! running now. Never a title or an address: any agent may run `agents`.
//! Reading changes nothing.

use serde::Serialize;

use super::book::{Book, Owner, Refused, Why};
use super::{TabsError, load};
use crate::config::Config;
use crate::lease;
use crate::runtime::Runtime;

#[derive(Debug, Serialize)]
pub struct Agents {
    /// The caller's agent name.
    pub you: String,
    pub running: Option<Running>,
    /// Commands past their bound that the daemon may still run: only
    /// their own agents' next commands wait for them.
    pub late: Vec<Running>,
    pub agents: Vec<AgentView>,
    /// Tabs no agent owns: the user's (to give: `tab-give`), and the blank
    /// one `connect` left.
    pub user_tabs: Vec<Waiting>,
    pub spare_tabs: Vec<String>,
    /// Seconds without a command after which an agent is gone.
    pub gone_after_secs: u64,
    /// What is left of the session's idle and lifetime limits (none: no
    /// session has them).
    pub session_limits: Option<crate::session::limits::Status>,
    /// Browser-wide state an agent left on (tracing, routes, an offline
    /// network), which keeps the others out while it lasts.
    pub holds: Vec<HoldView>,
}

#[derive(Debug, Serialize)]
pub struct HoldView {
    pub agent: String,
    pub what: &'static str,
    /// Seconds since it was recorded (none: a book from before that).
    pub secs: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct Running {
    pub agent: String,
    pub command: String,
    pub secs: u64,
    /// It stepped aside for another agent's command: it runs on, and its
    /// reply is shown once it has the turn back.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub aside: bool,
}

impl Running {
    /// How a command the daemon still runs without the turn came to.
    fn late_word(&self) -> &'static str {
        if self.aside {
            "stepped aside for another agent's command"
        } else {
            "past its bound"
        }
    }
}

#[derive(Debug, Serialize)]
pub struct AgentView {
    pub name: String,
    pub tabs: Vec<TabView>,
    /// Tabs that left it, which it may take again (`tab-claim`).
    pub held: Vec<Waiting>,
    pub last_command: String,
    pub last_secs_ago: u64,
}

/// A tab no agent has, and why.
#[derive(Debug, Serialize)]
pub struct Waiting {
    pub id: String,
    pub why: String,
}

impl Waiting {
    fn of(tab: &super::book::Tab) -> Waiting {
        Waiting {
            id: format!("t{}", tab.id),
            why: tab
                .why
                .as_ref()
                .map_or_else(|| "no agent's".into(), super::book::Why::describe),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct TabView {
    pub id: String,
    pub label: Option<String>,
    pub current: bool,
}

impl Agents {
    /// What `you` (the caller, its identity shown) and every agent have.
    pub fn gather(config: &Config, you: &str) -> Result<Agents, TabsError> {
        let mut out = Agents {
            you: you.to_string(),
            running: None,
            late: Vec::new(),
            agents: Vec::new(),
            user_tabs: Vec::new(),
            spare_tabs: Vec::new(),
            gone_after_secs: 0,
            session_limits: None,
            holds: Vec::new(),
        };
        let Some(runtime) = Runtime::inspect(&config.runtime)? else {
            out.gone_after_secs = crate::settings::DEFAULT_AGENT_GONE.as_secs();
            return Ok(out);
        };
        let gone_after = crate::settings::load(&runtime)?.agent_gone;
        // Shown as far as it can be read: the tabs are what this is for.
        out.session_limits = crate::session::limits::status(&runtime, false)
            .ok()
            .flatten();
        out.gone_after_secs = gone_after.as_secs();
        let now = lease::now_ms();
        out.running = lease::holder(&runtime)?.map(|h| Running {
            agent: h.agent,
            command: h.command,
            secs: now.saturating_sub(h.since) / 1000,
            aside: false,
        });
        out.late = lease::late::read(&runtime)?
            .into_iter()
            .map(|l| Running {
                secs: l.secs(now),
                agent: l.agent,
                command: l.command,
                aside: l.aside,
            })
            .collect();
        if let Some(mut book) = load(&runtime)? {
            // As the next browser command will find it: an agent gone quiet
            // has its tabs held for it (nothing is written here).
            book.expire(now, gone_after.as_millis() as u64, || {
                crate::identity::present(&runtime, now)
            });
            out.fill(&book, now);
        }
        Ok(out)
    }

    fn fill(&mut self, book: &Book, now: u64) {
        for (name, state) in &book.agents {
            let tabs = book
                .own(name)
                .iter()
                .map(|t| TabView {
                    id: format!("t{}", t.id),
                    label: t.label.clone(),
                    current: state.current == Some(t.id),
                })
                .collect();
            self.agents.push(AgentView {
                name: name.clone(),
                tabs,
                held: book.held_for(name).into_iter().map(Waiting::of).collect(),
                last_command: state.last_command.clone(),
                last_secs_ago: now.saturating_sub(state.last_at) / 1000,
            });
        }
        for hold in &book.holds {
            self.holds.push(HoldView {
                agent: hold.agent.clone(),
                what: hold.what.word(),
                secs: (hold.since > 0).then(|| now.saturating_sub(hold.since) / 1000),
            });
        }
        for tab in &book.tabs {
            match tab.owner {
                Owner::User => self.user_tabs.push(Waiting::of(tab)),
                Owner::Spare => self.spare_tabs.push(format!("t{}", tab.id)),
                Owner::Agent(_) | Owner::Held(_) => {}
            }
        }
    }

    /// One line, for `doctor`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if self.agents.is_empty() {
            parts.push("no agent has a tab".to_string());
        }
        for a in &self.agents {
            let ids: Vec<&str> = a.tabs.iter().map(|t| t.id.as_str()).collect();
            parts.push(format!(
                "{}: {} (last `{}` {} s ago)",
                a.name,
                if ids.is_empty() {
                    "no tab".into()
                } else {
                    ids.join(" ")
                },
                a.last_command,
                a.last_secs_ago
            ));
        }
        let held: Vec<String> = self
            .agents
            .iter()
            .flat_map(|a| a.held.iter().map(|t| format!("{} for {}", t.id, a.name)))
            .collect();
        if !held.is_empty() {
            parts.push(format!("held: {}", held.join(" ")));
        }
        if !self.user_tabs.is_empty() {
            let ids: Vec<&str> = self.user_tabs.iter().map(|t| t.id.as_str()).collect();
            parts.push(format!("user: {}", ids.join(" ")));
        }
        for h in &self.holds {
            parts.push(format!("{} left {} on", h.agent, h.what));
        }
        if let Some(r) = &self.running {
            parts.push(format!(
                "running: {} `{}` ({} s)",
                r.agent, r.command, r.secs
            ));
        }
        for r in &self.late {
            parts.push(format!(
                "{}: {} `{}` ({} s)",
                r.late_word(),
                r.agent,
                r.command,
                r.secs
            ));
        }
        parts.join("; ")
    }

    /// The text `my-chrome agents` prints.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for a in &self.agents {
            out.push_str(&format!(
                "agent {}: last `{}` {} s ago{}\n",
                a.name,
                a.last_command,
                a.last_secs_ago,
                if a.name == self.you { " (you)" } else { "" }
            ));
            if a.tabs.is_empty() && a.held.is_empty() {
                out.push_str("  (no tab)\n");
            }
            for t in &a.tabs {
                out.push_str(&format!(
                    "  {}{}{}\n",
                    t.id,
                    t.label
                        .as_deref()
                        .map(|l| format!(" {l}"))
                        .unwrap_or_default(),
                    if t.current { " (current)" } else { "" }
                ));
            }
            for t in &a.held {
                out.push_str(&format!(
                    "  {} held for it ({}): `my-chrome tab-claim {}` takes it again\n",
                    t.id, t.why, t.id
                ));
            }
        }
        if self.agents.is_empty() {
            out.push_str("no agent has used the browser in this session\n");
        }
        let list = |ids: &[String]| {
            if ids.is_empty() {
                "none".to_string()
            } else {
                ids.join(" ")
            }
        };
        if self.user_tabs.is_empty() {
            out.push_str("user's tabs: none\n");
        } else {
            out.push_str("user's tabs (an agent gets one only when the user gives it):\n");
            for t in &self.user_tabs {
                out.push_str(&format!("  {} ({})\n", t.id, t.why));
            }
        }
        if !self.spare_tabs.is_empty() {
            out.push_str(&format!(
                "blank tab for the next agent: {}\n",
                list(&self.spare_tabs)
            ));
        }
        for h in &self.holds {
            out.push_str(&format!(
                "agent {} left {} on for every tab{}: no other agent's command runs until it ends \
                 (when it ends it, releases, or is gone)\n",
                h.agent,
                h.what,
                h.secs.map(|s| format!(" ({s} s ago)")).unwrap_or_default()
            ));
        }
        match &self.running {
            Some(r) => out.push_str(&format!(
                "running now: agent {}'s `{}` ({} s)\n",
                r.agent, r.command, r.secs
            )),
            None => out.push_str("running now: nothing\n"),
        }
        for r in &self.late {
            out.push_str(&format!(
                "{}: agent {}'s `{}` ({} s; the daemon may still run it: only agent {}'s next \
                 command waits for it)\n",
                r.late_word(),
                r.agent,
                r.command,
                r.secs,
                r.agent
            ));
        }
        out.push_str(&format!(
            "you: agent {}; an agent without a command for {} s is gone and its tabs are held \
             for it (the gone time is the user's setting)\n",
            self.you, self.gone_after_secs
        ));
        if let Some(limits) = &self.session_limits {
            out.push_str(&format!("session: {}\n", limits.status));
        }
        out
    }
}

// The words for the book's owners and reasons: the book keeps them as
// data (`book::Owner`, `book::Why`), and they are worded here, at the edge.
impl Owner {
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

impl Why {
    /// Why a tab is held for an agent, or the user's, in words.
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

/// Why a tab may not be used by `agent`, with its tabs (`own`).
pub(super) fn refusal(agent: &str, refused: &Refused, own: &str) -> String {
    let why = match refused {
        Refused::Unknown(reference) => format!("no tab of agent {agent} has {reference}"),
        Refused::Gone(id) => format!("tab t{id} is closed"),
        Refused::Earlier(id) => format!(
            "tab t{id} belongs to an earlier session (before the last `my-chrome connect`); ids \
             are never reused"
        ),
        Refused::Foreign { id, owner } => format!(
            "tab t{id} is {}, not agent {agent}'s{}",
            match owner {
                Owner::Held(_) => owner.describe(),
                other => format!("{}'s", other.describe()),
            },
            match owner {
                Owner::User => {
                    "; only the user can give it to an agent: ask the user for it if you need it"
                }
                Owner::Spare | Owner::Agent(_) | Owner::Held(_) => "",
            }
        ),
        Refused::HeldForYou(id) => format!(
            "tab t{id} is held for agent {agent}: it left you (it could not be told apart from \
             another of your tabs, or you had no command for a while); `my-chrome tab-claim \
             t{id}` takes it again"
        ),
        Refused::UsersToGive(id) => format!(
            "tab t{id} is the user's: an agent does not take it; only the user can give it to \
             an agent: ask the user for it if you need it"
        ),
        Refused::Owned { id, agent: owner } => format!(
            "tab t{id} is agent {owner}'s: only that agent gives it back, or it is held for it \
             once it has been quiet for the gone time; only a tab no agent has can be given"
        ),
        Refused::LabelTaken(label) => format!("agent {agent} already has a tab labelled {label}"),
    };
    format!("{why}; nothing was run. Your tabs:\n{own}")
}

/// Why the user's `tab-give` gave nothing.
pub(super) fn given(refused: &Refused) -> String {
    let why = match refused {
        Refused::Owned { id, agent } => format!(
            "tab t{id} is agent {agent}'s: only a tab no agent has is given; the agent gives it \
             back itself (`my-chrome release --tab t{id}`), or it is held for it once the agent \
             has had no command for the gone time"
        ),
        Refused::Gone(id) => format!("tab t{id} is closed"),
        Refused::Earlier(id) => {
            format!("tab t{id} belongs to an earlier session (before the last `my-chrome connect`)")
        }
        Refused::Unknown(reference) => format!("no tab of the session has {reference}"),
        // What `give` never refuses for.
        Refused::Foreign { id, .. } | Refused::HeldForYou(id) | Refused::UsersToGive(id) => {
            format!("tab t{id} cannot be given")
        }
        Refused::LabelTaken(label) => format!("the label {label} is taken"),
    };
    format!("{why}; nothing was given. `my-chrome agents` lists the tabs no agent has")
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
