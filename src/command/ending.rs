//! A step that ends the session (`disconnect`, `uninstall`, a `connect
//! --for` that ends it sooner) ends every agent's work in it. While another
//! agent has tabs in it (or tabs held for it) or a command running, that is
//! the user's step: asked in the user's browser (docs/DESIGN.md, "Asking
//! the user"), before the turn is taken, and checked again under it. An
//! agent alone in the session ends it as before.

use crate::config::Config;
use crate::consent::{Asked, ConsentError};
use crate::runtime::Runtime;
use crate::tabs::book::Book;

/// Who would lose work if the session ended now, by name (sorted), and
/// what; `unknown` when the tab book cannot be read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AtWork {
    pub agents: Vec<(String, String)>,
    /// The tab book cannot be read: whose tabs are whose is not known.
    pub unknown: bool,
}

impl AtWork {
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty() && !self.unknown
    }

    fn names(&self) -> Vec<&str> {
        self.agents.iter().map(|(name, _)| name.as_str()).collect()
    }

    /// What is at work now that was not when the user was asked.
    fn beyond(&self, asked: &AtWork) -> Vec<String> {
        let mut new: Vec<String> = self
            .names()
            .into_iter()
            .filter(|name| !asked.names().contains(name))
            .map(|name| format!("agent {name}"))
            .collect();
        if self.unknown && !asked.unknown {
            new.push("a tab book that cannot be read".into());
        }
        new
    }
}

/// Who other than the caller is at work in the session of the configured
/// runtime now. A session that is not open (none, or its daemon or browser
/// gone) holds nobody's work any more.
pub fn at_work_now(config: &Config) -> AtWork {
    match Runtime::inspect(&config.runtime) {
        Ok(Some(runtime)) => {
            let state = crate::session::state::session_state(
                &config.home,
                &runtime,
                &config.session,
                crate::helper::pin::Pin::shipped().core_version(),
            );
            let ready = matches!(state, crate::session::state::SessionState::Ready(_));
            if ready || session_open(&runtime) {
                at_work(config, &runtime)
            } else {
                AtWork::default()
            }
        }
        Ok(None) => AtWork::default(),
        // A runtime that cannot be read: the step itself says why.
        Err(_) => AtWork {
            agents: Vec::new(),
            unknown: true,
        },
    }
}

/// Whether the runtime itself records an open session: its limits name a
/// watcher that runs (every `connect` starts one). Whatever session name
/// or `HOME` the caller gives (the daemon's registry is found through
/// both): a step under another name still clears this runtime's records,
/// which every agent of it shares. Limits that cannot be read count as
/// open. (A command holding the turn with no session is no session: the
/// step waits for the turn as ever.)
pub fn session_open(runtime: &Runtime) -> bool {
    match crate::session::limits::read(runtime) {
        Ok(Some(limits)) => crate::procs::ProcessTable::read()
            .map(|table| crate::session::limits::watcher_runs(&limits, &table))
            .unwrap_or(true),
        Ok(None) => false,
        Err(_) => true,
    }
}

/// Who other than the caller is at work in the session at `runtime`, by
/// its records. The caller counts as itself only when its name is proven (a name anyone
/// may write would otherwise let any agent end another's work as that one).
fn at_work(config: &Config, runtime: &Runtime) -> AtWork {
    let gone_after = crate::settings::load(runtime)
        .map(|s| s.agent_gone)
        .unwrap_or(crate::settings::DEFAULT_AGENT_GONE);
    let me = crate::identity::verified(config, Some(runtime), gone_after)
        .ok()
        .filter(|me| me.registration.is_some());
    // This very command, once it holds the turn, is nobody's other work;
    // a command past its bound that the daemon still runs is its agent's.
    let mut running: Vec<(String, String)> = crate::lease::holder(runtime)
        .ok()
        .flatten()
        .filter(|h| h.process.pid != std::process::id())
        .map(|h| (h.agent, h.command))
        .into_iter()
        .collect();
    let late = crate::lease::late::read(runtime).unwrap_or_default();
    running.extend(late.into_iter().map(|l| (l.agent, l.command)));
    let running: Vec<(&str, &str)> = running
        .iter()
        .map(|(a, c)| (a.as_str(), c.as_str()))
        .collect();
    match crate::tabs::load(runtime) {
        Ok(book) => others(
            book.as_ref(),
            me.as_ref().map(|m| (m.name.as_str(), m.registration)),
            &running,
        ),
        Err(_) => AtWork {
            agents: Vec::new(),
            unknown: true,
        },
    }
}

/// The agents of `book` with tabs (or tabs held for them), and the agents of
/// the commands `running` (agent, command), but `me` (a name and its
/// proven registration) when the book knows it by that registration.
fn others(
    book: Option<&Book>,
    me: Option<(&str, Option<u64>)>,
    running: &[(&str, &str)],
) -> AtWork {
    let is_me = |name: &str| {
        me.is_some_and(|(mine, registration)| {
            mine == name
                && registration.is_some()
                && book
                    .and_then(|b| b.agents.get(name))
                    .is_some_and(|a| a.registration == registration)
        })
    };
    let mut agents: Vec<(String, String)> = Vec::new();
    if let Some(book) = book {
        for name in book.others_with_tabs("") {
            if is_me(&name) {
                continue;
            }
            let tabs = book
                .tabs
                .iter()
                .filter(|t| t.owner.agent_or_held() == Some(name.as_str()))
                .count();
            let what = match tabs {
                1 => "1 tab".to_string(),
                n => format!("{n} tabs"),
            };
            agents.push((name, what));
        }
    }
    if let Some(book) = book {
        for hold in &book.holds {
            if is_me(&hold.agent) {
                continue;
            }
            let left = format!("{} left on for every tab", hold.what.word());
            match agents.iter_mut().find(|(n, _)| *n == hold.agent) {
                Some((_, what)) => *what = format!("{what}, {left}"),
                None => agents.push((hold.agent.clone(), left)),
            }
        }
    }
    for &(name, command) in running.iter().filter(|(name, _)| !is_me(name)) {
        let doing = format!("a command running (`{command}`)");
        match agents.iter_mut().find(|(n, _)| n == name) {
            Some((_, what)) => *what = format!("{what}, {doing}"),
            None => agents.push((name.to_string(), doing)),
        }
    }
    agents.sort();
    AtWork {
        agents,
        unknown: false,
    }
}

/// Asks the user to end the session for the agents `at_work` (nothing is
/// asked when none is): `step` says what ends it.
pub fn ask(config: &Config, step: &str, at_work: &AtWork) -> Result<(), ConsentError> {
    if at_work.is_empty() {
        return Ok(());
    }
    crate::consent::ask(config, asking(config, step, at_work))
}

/// Under the turn: refused when work began that the user was not asked
/// about.
pub fn still_as_asked(now: &AtWork, asked: &AtWork) -> Result<(), ConsentError> {
    let new = now.beyond(asked);
    if new.is_empty() {
        return Ok(());
    }
    Err(ConsentError::Meanwhile(format!(
        "{} began work in the session while the user was asked",
        new.join(", ")
    )))
}

/// What the person reads: what ends, whose work it ends, who asks.
fn asking(config: &Config, step: &str, at_work: &AtWork) -> Asked {
    let mut rows = vec![(
        "Ends".to_string(),
        format!(
            "the session every agent works in ({step}); the browser and its tabs stay open, but \
             no agent can use them until a new connect"
        ),
    )];
    rows.extend(self::rows(at_work));
    rows.push(crate::consent::asked_by(config));
    Asked {
        heading: format!("end the session for every agent ({step})?"),
        rows,
    }
}

/// Whose work ends, a row each, for a consent page that asks more
/// (`uninstall`'s). None when nobody else is at work.
pub fn rows(at_work: &AtWork) -> Vec<(String, String)> {
    use crate::consent::page::shown;
    let mut rows: Vec<(String, String)> = at_work
        .agents
        .iter()
        .map(|(name, what)| (format!("Agent {}", shown(name)), format!("loses {what}")))
        .collect();
    if at_work.unknown {
        rows.push((
            "Other agents".into(),
            "unknown: the record of whose tabs are whose cannot be read".into(),
        ));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tabs::align::Seen;
    use crate::tabs::book::Owner;

    fn book() -> Book {
        let seen = |header: &str| Seen {
            header: header.into(),
            current: false,
            number: None,
        };
        let mut book = Book::fresh(
            "s",
            1,
            &[
                seen("[a](https://a.test/)"),
                seen("[b](https://b.test/)"),
                seen("[c](https://c.test/)"),
            ],
            false,
        );
        book.tabs[0].owner = Owner::Agent("ann".into());
        book.tabs[1].owner = Owner::Held("bob".into());
        book.tabs[2].owner = Owner::Agent("ann".into());
        book.agents.entry("ann".into()).or_default().registration = Some(7);
        book
    }

    #[test]
    fn the_records_count_another_command_running_or_late_never_this_one() {
        let (_home, runtime) = crate::runtime::scratch();
        let vars = [
            ("HOME", runtime.root().parent().unwrap().as_os_str()),
            ("MY_CHROME_RUNTIME_DIR", runtime.root().as_os_str()),
        ]
        .map(|(k, v)| (std::ffi::OsString::from(k), v.to_os_string()));
        let config = Config::from_vars(vars).unwrap();
        assert!(at_work(&config, &runtime).is_empty());
        // This very command holds the turn: nobody's other work.
        let held = crate::lease::acquire(
            &config,
            &runtime,
            "cid",
            "disconnect",
            crate::lease::Kind::Session,
        )
        .unwrap();
        assert!(at_work(&config, &runtime).is_empty());
        drop(held);
        // bob's command past its bound, which the daemon still runs.
        let late = crate::lease::late::Late {
            agent: "bob".into(),
            command: "eval".into(),
            since: crate::lease::now_ms(),
            process: crate::procs::ProcessId::current().unwrap(),
            handed: true,
            tab: None,
            aside: false,
        };
        crate::lease::late::add(&runtime, late, None).unwrap();
        assert_eq!(
            at_work(&config, &runtime).agents,
            [("bob".to_string(), "a command running (`eval`)".to_string())]
        );
    }

    #[test]
    fn every_other_agent_with_tabs_or_a_command_counts_and_a_proven_caller_does_not() {
        let book = book();
        let all = others(Some(&book), None, &[("cid", "eval")]);
        assert_eq!(
            all.agents,
            [
                ("ann".to_string(), "2 tabs".to_string()),
                ("bob".into(), "1 tab".into()),
                ("cid".into(), "a command running (`eval`)".into()),
            ]
        );
        // ann, proven by the registration the book knows her by.
        let anns = others(Some(&book), Some(("ann", Some(7))), &[("ann", "snapshot")]);
        assert_eq!(anns.agents, [("bob".to_string(), "1 tab".to_string())]);
        // The name alone, or another registration of it, is not ann.
        for claim in [None, Some(8)] {
            let claimed = others(Some(&book), Some(("ann", claim)), &[]);
            assert_eq!(claimed.names(), ["ann", "bob"]);
        }
        // Alone: nothing to ask.
        let mut alone = book.clone();
        alone.tabs[1].owner = Owner::User;
        assert!(others(Some(&alone), Some(("ann", Some(7))), &[]).is_empty());
        assert!(others(None, None, &[]).is_empty());
    }

    #[test]
    fn work_begun_while_the_user_was_asked_is_refused() {
        let book = book();
        let asked = others(Some(&book), None, &[]);
        assert!(still_as_asked(&asked, &asked).is_ok());
        let more = others(Some(&book), None, &[("dan", "goto")]);
        let refused = still_as_asked(&more, &asked).unwrap_err();
        assert!(
            refused.to_string().contains("agent dan began work"),
            "{refused}"
        );
        assert_eq!(refused.exit(), crate::exit::Exit::Busy);
        let unknown = AtWork {
            agents: Vec::new(),
            unknown: true,
        };
        assert!(still_as_asked(&unknown, &asked).is_err());
        // Less at work than asked about: as asked.
        assert!(still_as_asked(&AtWork::default(), &asked).is_ok());
    }

    #[test]
    fn the_user_reads_whose_work_ends() {
        let home = tempfile::tempdir().unwrap();
        let vars = [("HOME".into(), home.path().into())];
        let config = Config::from_vars(vars).unwrap();
        let asked = asking(&config, "disconnect", &others(Some(&book()), None, &[]));
        assert_eq!(
            asked.heading,
            "end the session for every agent (disconnect)?"
        );
        let text: Vec<String> = asked
            .rows
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        assert!(
            text.contains(&"Agent ann: loses 2 tabs".to_string()),
            "{text:?}"
        );
        assert!(
            text.contains(&"Agent bob: loses 1 tab".to_string()),
            "{text:?}"
        );
    }
}
