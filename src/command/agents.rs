//! `my-chrome agents [--json] [--log [N]]` (changes nothing),
//! `my-chrome tab-claim <id>` and `my-chrome release`: the agents and
//! their tabs (src/tabs/).

use crate::config::Config;
use crate::error::Error;
use crate::helper::check::Check;
use crate::lease::log::Event;
use crate::policy::tabs::{TabRef, label};
use crate::runtime::Runtime;
use crate::session::SessionError;
use crate::tabs::book::{HoldKind, Owner, Tab};
use crate::tabs::view::Agents;
use crate::tabs::{Closing, Desk, TabsError, listing};

use crate::operation::start::{Need, Start, Turn};

/// `my-chrome agents`.
pub fn show(config: &Config, json: bool, log: Option<usize>) -> Result<(), Error> {
    // Changes nothing, so it registers no name; a registered one still
    // needs its key.
    let runtime = Runtime::inspect(&config.runtime)?;
    let gone_after = match &runtime {
        Some(runtime) => crate::settings::load(runtime)?.agent_gone,
        None => crate::settings::DEFAULT_AGENT_GONE,
    };
    let you = crate::identity::verified(config, runtime.as_ref(), gone_after)?;
    if let Some(n) = log {
        if let Some(runtime) = &runtime {
            for line in crate::lease::log::tail(runtime, n)? {
                crate::output::line(&line);
            }
        }
        return Ok(());
    }
    let agents = Agents::gather(config, &you.name)?;
    if json {
        crate::output::json(&agents);
    } else {
        crate::output::text(crate::output::Stream::Out, &[&agents.text()]);
    }
    Ok(())
}

/// The agent's turn, and the session's tabs as it finds them.
fn turn(config: &Config, command: &str) -> Result<(Turn, Desk), Error> {
    let started = Start::new(config, Check::Supported).on_session().open()?;
    let (turn, session) = started.take_turn(command, Need::Registered)?;
    let desk = turn.desk(&session.socket_path, crate::tabs::After::Command)?;
    Ok((turn, desk))
}

/// `my-chrome tab-claim <id> [--label NAME]`.
pub fn claim(config: &Config, raw: &str, name: Option<&str>) -> Result<(), Error> {
    let TabRef::Id(id) = TabRef::parse(raw)? else {
        return Err(crate::policy::tabs::TabArgError::BadRef(raw.into()).into());
    };
    let name = name.map(label).transpose()?;
    // No session: nothing to claim, and no turn taken for it.
    let (mut turn, mut desk) = turn(config, "tab-claim")?;
    desk.touch("tab-claim");
    let agent = desk.agent.clone();
    let claimed = desk.book.claim(&agent, id, name.as_deref());
    if let Err(refused) = claimed {
        desk.save()?;
        return Err(desk.refused(refused).into());
    }
    desk.save()?;
    let held = turn.lease();
    held.mark_ran();
    held.on_tab(id);
    held.log(None, &[Event::Claimed { tab: id }])?;
    // Titles are the pages' words: printed as any reply.
    desk.printer().text(
        crate::output::Stream::Out,
        &[&format!("### Result\n{}", listing::render(&desk.shown()))],
    );
    Ok(())
}

/// `my-chrome tab-give <id> <agent>`: the user's step, asked of the user
/// in the browser whoever runs it. It gives a tab no agent has (the
/// user's, one held for an agent, the blank one) to an agent; never one
/// another agent has. No turn is held while the user is asked: the tab
/// must be as it was shown to them when the answer comes.
pub fn give(config: &Config, raw: &str, to: &str) -> Result<(), Error> {
    let TabRef::Id(id) = TabRef::parse(raw)? else {
        return Err(crate::policy::tabs::TabArgError::BadRef(raw.into()).into());
    };
    let to = crate::config::agent_name("AGENT", to)?;
    // Whom the user is asked to give it to: the name as the book knows it
    // now (registered anew meanwhile, it is another agent).
    let recipient = |desk: &Desk| desk.book.agents.get(&to).and_then(|a| a.registration);
    // No session: nothing to give, and no turn taken for it.
    let (asked, shown, whom, config) = {
        let (first, mut desk) = turn(config, "tab-give")?;
        // What would be refused after the answer is refused before asking.
        let refused = desk.book.clone().give(id, &to).err();
        desk.save()?;
        if let Some(refused) = refused {
            return Err(TabsError::NotGiven { refused }.into());
        }
        let tab = desk.book.tab(id).cloned().expect("give found it");
        (
            asking_to_give(&tab, &to, &desk.agent),
            tab,
            recipient(&desk),
            first.config_again(),
        )
    };
    crate::consent::ask(&config, asked)?;
    let (mut turn, mut desk) = turn(&config, "tab-give")?;
    let unchanged = recipient(&desk) == whom
        && desk
            .book
            .tab(id)
            .is_some_and(|now| now.owner == shown.owner && now.header == shown.header);
    if !unchanged {
        desk.save()?;
        return Err(TabsError::ChangedWhileAsked { id }.into());
    }
    if let Err(refused) = desk.book.give(id, &to) {
        desk.save()?;
        return Err(TabsError::NotGiven { refused }.into());
    }
    desk.save()?;
    let held = turn.lease();
    held.mark_ran();
    held.on_tab(id);
    held.log(None, &[Event::Given { tab: id, to: &to }])?;
    crate::output::line(&format!(
        "my-chrome: the user gave t{id} to agent {to}; its commands name it with `--tab t{id}`"
    ));
    Ok(())
}

/// What the user is shown for a tab to give: its page as last seen (the
/// page's own words, labelled so), whose it is now, and who asks.
fn asking_to_give(tab: &Tab, to: &str, asker: &str) -> crate::consent::Asked {
    use crate::consent::page::shown;
    let (title, address) = crate::tabs::align::split_header(&tab.header);
    let now = match &tab.owner {
        Owner::User => "yours (no agent has it)".to_string(),
        Owner::Spare => "the blank tab my-chrome opened at connect".to_string(),
        Owner::Held(agent) => format!("held for agent {agent}, which would lose it"),
        Owner::Agent(agent) => format!("agent {agent}'s"),
    };
    crate::consent::Asked {
        heading: format!("give tab t{} to agent {to}?", tab.id),
        rows: vec![
            ("Agent that gets it".into(), shown(to)),
            ("Tab title (the page's own words)".into(), shown(title)),
            (
                "Site".into(),
                crate::tabs::align::origin(&tab.header).unwrap_or_else(|| shown(address)),
            ),
            ("The tab is now".into(), now),
            ("Asked by".into(), format!("agent {}", shown(asker))),
        ],
    }
}

/// `my-chrome release [--tab TAB] [--keep]`.
pub fn release(config: &Config, tab: Option<&str>, keep: bool) -> Result<(), Error> {
    let only = tab.map(TabRef::parse).transpose()?;
    // No session: nothing to release, and no turn taken for it.
    let (mut turn, mut desk) = match turn(config, "release") {
        Err(Error::Session(SessionError::Missing)) => {
            crate::output::line("my-chrome: no session is attached; nothing to release");
            return Ok(());
        }
        other => other?,
    };
    turn.lease().mark_ran();
    let agent = desk.agent.clone();
    let only = only.map(|r| desk.resolve(&r)).transpose()?;
    let mine: Vec<u64> = desk
        .book
        .own(&agent)
        .into_iter()
        .chain(desk.book.held_for(&agent))
        .map(|t| t.id)
        .filter(|id| only.is_none_or(|o| o == *id))
        .collect();
    let to_close = desk.book.release(&agent, only, keep);
    let mut closed = 0;
    let mut failed = None;
    // Last first: each one closed can leave the one before it last, and
    // a tab is closed only when every tab after it was the agent's
    // (`Desk::close`); one that is not stays open, the user's.
    // Each close has a bound of its own: many tabs never run one budget
    // out for all of them.
    for id in to_close.iter().rev() {
        desk.renew_budget();
        match desk.close(*id, &mine) {
            Ok(Closing::Closed) => closed += 1,
            Ok(Closing::LeftOpen) => desk.book.left_open(&agent, *id),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let all = only.is_none() && desk.book.released_all(&agent);
    // What it left on for every tab ends with it: its holds are no
    // agent's now, ended in the browser (or by the next command, if the
    // daemon did not confirm it now).
    let kept: Vec<HoldKind> = match all {
        false => Vec::new(),
        true => {
            let before: Vec<HoldKind> = desk
                .book
                .holds
                .iter()
                .filter(|h| h.agent == agent)
                .map(|h| h.what)
                .collect();
            // A daemon that fails now loses nothing given back: said below.
            let ended = desk.end_orphaned_holds().unwrap_or_default();
            before
                .into_iter()
                .filter(|what| !ended.iter().any(|h| h.agent == agent && h.what == *what))
                .collect()
        }
    };
    desk.renew_budget();
    desk.save()?;
    if all {
        crate::identity::end(config, &turn.runtime, &agent)?;
    }
    for what in kept {
        crate::output::notice(&format!(
            "my-chrome: {} could not be ended now; the next command of any agent ends it",
            what.describe()
        ));
    }
    turn.lease().log(
        None,
        &[Event::Released {
            tabs: &mine,
            closed,
        }],
    )?;
    if let Some(e) = failed {
        let left: Vec<String> = to_close
            .iter()
            .filter(|id| {
                desk.book
                    .tab(**id)
                    .is_some_and(|t| t.owner.agent_or_held() == Some(&agent))
            })
            .map(|id| format!("t{id}"))
            .collect();
        crate::output::notice(&format!(
            "my-chrome: release stopped before it closed {}, which are still agent {agent}'s; run \
             `my-chrome release` again to finish",
            left.join(" ")
        ));
        return Err(e.into());
    }
    let ids: Vec<String> = mine.iter().map(|id| format!("t{id}")).collect();
    match mine.len() {
        0 => crate::output::line(&format!(
            "my-chrome: agent {agent} has no tab; nothing to release"
        )),
        _ => crate::output::line(&format!(
            "my-chrome: agent {agent} gave back {} ({closed} closed, the rest are the user's)",
            ids.join(" ")
        )),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_is_shown_the_tab_whose_it_is_and_who_gets_it() {
        let tab = Tab {
            id: 7,
            owner: Owner::Held("ann".into()),
            label: None,
            header: "[Bank <b>statement</b>](https://bank.example/acct?id=1)".into(),
            opened: true,
            why: None,
            number: None,
        };
        let asked = asking_to_give(&tab, "bob", "carol");
        assert_eq!(asked.heading, "give tab t7 to agent bob?");
        let row = |label: &str| {
            asked
                .rows
                .iter()
                .find(|(l, _)| l == label)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("no {label}: {:?}", asked.rows))
        };
        assert_eq!(row("Agent that gets it"), "bob");
        assert_eq!(
            row("Tab title (the page's own words)"),
            "Bank <b>statement</b>"
        );
        assert_eq!(row("Site"), "https://bank.example");
        assert_eq!(
            row("The tab is now"),
            "held for agent ann, which would lose it"
        );
        assert_eq!(row("Asked by"), "agent carol");
        // A header that does not read one way shows its text, never a guess.
        let odd = Tab {
            header: "[a](b](https://x.example/)".into(),
            owner: Owner::User,
            ..tab
        };
        let asked = asking_to_give(&odd, "bob", "carol");
        assert!(
            asked.rows.iter().any(|(l, v)| l == "Site" && !v.is_empty()),
            "{:?}",
            asked.rows
        );
        assert!(
            asked
                .rows
                .iter()
                .any(|(_, v)| v == "yours (no agent has it)"),
            "{:?}",
            asked.rows
        );
    }
}
