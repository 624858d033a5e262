//! The agents as `my-chrome agents` and `doctor` show them: each agent's
//! tab ids and labels, its last command and when, the user's tabs, and the
//! command running now. Never a title or an address: any agent may run
//! `agents`. Reading changes nothing.

use serde::Serialize;

use super::book::{Book, Owner};
use super::{TabsError, load};
use crate::config::Config;
use crate::lease::{self, agent};
use crate::runtime::Runtime;

#[derive(Debug, Serialize)]
pub struct Agents {
    /// The caller's agent name.
    pub you: String,
    pub running: Option<Running>,
    pub agents: Vec<AgentView>,
    /// Tabs no agent owns: the user's, and the blank one `connect` left.
    pub user_tabs: Vec<String>,
    pub spare_tabs: Vec<String>,
    /// Seconds without a command after which an agent is gone.
    pub gone_after_secs: u64,
}

#[derive(Debug, Serialize)]
pub struct Running {
    pub agent: String,
    pub command: String,
    pub secs: u64,
}

#[derive(Debug, Serialize)]
pub struct AgentView {
    pub name: String,
    pub tabs: Vec<TabView>,
    pub last_command: String,
    pub last_secs_ago: u64,
}

#[derive(Debug, Serialize)]
pub struct TabView {
    pub id: String,
    pub label: Option<String>,
    pub current: bool,
}

impl Agents {
    pub fn gather(config: &Config) -> Result<Agents, TabsError> {
        let mut out = Agents {
            you: agent::identify(config),
            running: None,
            agents: Vec::new(),
            user_tabs: Vec::new(),
            spare_tabs: Vec::new(),
            gone_after_secs: config.agent_gone.as_secs(),
        };
        let Some(runtime) = Runtime::inspect(&config.runtime)? else {
            return Ok(out);
        };
        let now = lease::now_ms();
        out.running = lease::holder(&runtime)?.map(|h| Running {
            agent: h.agent,
            command: h.command,
            secs: now.saturating_sub(h.since) / 1000,
        });
        if let Some(mut book) = load(&runtime)? {
            // As the next browser command will find it: an agent gone quiet
            // has left its tabs to the user (nothing is written here).
            book.expire(now, config.agent_gone.as_millis() as u64);
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
                last_command: state.last_command.clone(),
                last_secs_ago: now.saturating_sub(state.last_at) / 1000,
            });
        }
        for tab in &book.tabs {
            match tab.owner {
                Owner::User => self.user_tabs.push(format!("t{}", tab.id)),
                Owner::Spare => self.spare_tabs.push(format!("t{}", tab.id)),
                Owner::Agent(_) => {}
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
        if !self.user_tabs.is_empty() {
            parts.push(format!("user: {}", self.user_tabs.join(" ")));
        }
        if let Some(r) = &self.running {
            parts.push(format!(
                "running: {} `{}` ({} s)",
                r.agent, r.command, r.secs
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
            if a.tabs.is_empty() {
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
        out.push_str(&format!("user's tabs: {}\n", list(&self.user_tabs)));
        if !self.spare_tabs.is_empty() {
            out.push_str(&format!(
                "blank tab for the next agent: {}\n",
                list(&self.spare_tabs)
            ));
        }
        match &self.running {
            Some(r) => out.push_str(&format!(
                "running now: agent {}'s `{}` ({} s)\n",
                r.agent, r.command, r.secs
            )),
            None => out.push_str("running now: nothing\n"),
        }
        out.push_str(&format!(
            "you: agent {}; an agent without a command for {} s is gone and its tabs are the \
             user's (MY_CHROME_AGENT_GONE_SECS)\n",
            self.you, self.gone_after_secs
        ));
        out
    }
}
