//! A session made by `my-chrome connect` to the Chrome stand-in, with a
//! local site that has a page for each agent: what the tests of agents
//! side by side (tests/agents.rs, tests/isolation.rs) work on.

use std::process::Command;

use super::site::{Site, agent_text};
use super::standin::Standin;
use super::{Run, Running, Sandbox, World, world};

pub fn as_agent(sandbox: &Sandbox, agent: &str, args: &[&str]) -> Command {
    let mut full = vec!["--agent", agent];
    full.extend_from_slice(args);
    sandbox.command(&full)
}

pub fn run_as(sandbox: &Sandbox, agent: &str, args: &[&str]) -> Run {
    Running::start(as_agent(sandbox, agent, args)).wait()
}

/// A session made by `my-chrome connect` to the stand-in, and a site with a
/// page for each agent.
pub struct Browser {
    pub world: World,
    pub chrome: Standin,
    pub site: Site,
}

pub fn browser() -> Browser {
    let mut world = world();
    let chrome = world.chrome();
    let connected = world.sandbox.run(&["--agent", "person", "connect"]);
    assert_eq!(connected.code, 0, "{}", connected.stderr);
    Browser {
        world,
        chrome,
        site: Site::start(),
    }
}

impl Browser {
    pub fn sandbox(&self) -> &Sandbox {
        &self.world.sandbox
    }

    pub fn ok(&self, agent: &str, args: &[&str]) -> Run {
        let run = run_as(self.sandbox(), agent, args);
        assert_eq!(
            run.code, 0,
            "{agent} {args:?}: {}{}",
            run.stdout, run.stderr
        );
        run
    }

    pub fn page(&self, agent: &str) -> String {
        self.site.url(&format!("/agent/{agent}"))
    }

    /// The agent's own tab list, as (id, label, current, url).
    pub fn tabs(&self, agent: &str) -> Vec<(String, Option<String>, bool, String)> {
        let listed = self.ok(agent, &["tab-list", "--json"]).json();
        listed["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["id"].as_str().unwrap().to_string(),
                    t["label"].as_str().map(String::from),
                    t["current"].as_bool().unwrap(),
                    t["url"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    pub fn agents(&self) -> serde_json::Value {
        self.ok("person", &["agents", "--json"]).json()
    }

    /// The user's tabs now that were not among `before`.
    pub fn user_tabs_since(&self, before: &[String]) -> Vec<String> {
        self.user_tabs()
            .into_iter()
            .filter(|t| !before.contains(t))
            .collect()
    }

    /// The `user_tabs` of `agents --json`, as ids.
    pub fn user_tabs(&self) -> Vec<String> {
        self.agents()["user_tabs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_string())
            .collect()
    }
}

/// Whether `text` mentions any agent's page but `agent`'s.
pub fn mentions_others(text: &str, agent: &str, all: &[&str]) -> Option<String> {
    all.iter()
        .filter(|other| **other != agent)
        .find(|other| {
            text.contains(&format!("/agent/{other}")) || text.contains(&agent_text(other))
        })
        .map(|other| format!("{agent} saw {other}'s page in:\n{text}"))
}

pub fn refused(b: &Browser, agent: &str, args: &[&str], code: i32, needle: &str) -> Run {
    let run = run_as(b.sandbox(), agent, args);
    run.expect(code, needle);
    assert!(run.stderr.contains("nothing was run"), "{}", run.stderr);
    run
}

/// Asserts that `agents --json` (`agents`) holds no tab for `agent`.
pub fn nothing_held_for(agents: &serde_json::Value, agent: &str) {
    assert_eq!(held_for(agents, agent), Vec::<String>::new(), "{agents}");
}

/// The ids of the tabs `agents --json` says are held for `agent`.
pub fn held_for(agents: &serde_json::Value, agent: &str) -> Vec<String> {
    agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["name"] == agent)
        .flat_map(|a| a["held"].as_array().unwrap().clone())
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}
