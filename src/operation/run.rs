//! A forwarded command run for its agent on the agent's own tab
//! (src/tabs/): a tab command answered from the agent's tabs
//! (`tab_command`), any other on a tab of the agent's (`page_command`),
//! its reply shown by `reply` (invariants 8, 9 and 14); then the book kept
//! and the turn handed on.

use std::path::Path;

use super::forwarded::{ForwardError, Forwarded, Outcome, Sent};
use super::start::{Reopen, Turn};
use super::{page_command, tab_command};
use crate::config::Config;
use crate::lease::HeldLease;
use crate::pinned_commands::{self, Scope};
use crate::staged_files::Outputs;
use crate::tabs::{Desk, TabsError};

/// Runs `asked` for its agent on the agent's own tab (`desk`, under the
/// turn `held`), through the daemon at `socket`; `outputs`: its staged
/// output files; `reopen`: the desk again after stepping aside.
pub fn for_agent(
    config: &Config,
    desk: &mut Desk,
    held: &mut HeldLease,
    socket: &Path,
    asked: &Forwarded,
    (outputs, reopen): (Outputs, &Reopen),
) -> Result<Outcome, ForwardError> {
    desk.touch(asked.entry.name);
    desk.check_notices()?;
    // What no agent is left to end keeps nobody out for good.
    desk.end_orphaned_holds()?;
    desk.check_holds()?;
    let Some((id, sent)) = place(desk, held, asked)? else {
        return Ok(Outcome::Done);
    };
    page_command::run_on(
        config,
        desk,
        held,
        (socket, asked, &sent),
        id,
        (outputs, reopen),
    )
}

/// The agent's tab `asked` runs on, selected, and what it sends there; or
/// nothing more to send: a tab command answered from the agent's tabs.
fn place<'a>(
    desk: &mut Desk,
    held: &mut HeldLease,
    asked: &'a Forwarded,
) -> Result<Option<(u64, Sent<'a>)>, ForwardError> {
    // `tab-new <url>`: its blank tab, then the load of its address there.
    if let Some(load) = &asked.load {
        held.mark_ran();
        let (id, _) = desk.open_tab_with(&asked.request, asked.line.label.as_deref())?;
        held.on_tab(id);
        return Ok(Some((id, Sent::now(pinned_commands::goto(), load, true))));
    }
    if let Some(tab) = asked.entry.tab {
        tab_command::run(desk, held, asked, tab)?;
        return Ok(None);
    }
    if matches!(asked.entry.scope, Scope::Context | Scope::Session) {
        let others = desk.book.others_with_tabs(&desk.agent);
        if !others.is_empty() {
            return Err(TabsError::OthersHaveTabs {
                command: asked.name().into(),
                agents: others,
            }
            .into());
        }
    }
    // Every command runs on a tab of the agent's (a browser-wide one too:
    // its reply may describe the current page).
    let named = asked
        .line
        .tab
        .as_ref()
        .map(|named| desk.resolve(named))
        .transpose()?;
    // From here it sends the browser something.
    held.mark_ran();
    let id = match named {
        Some(id) => id,
        // The agent's own tab, or a new one opened for it.
        None => desk.target(None)?,
    };
    desk.select(id)?;
    held.on_tab(id);
    Ok(Some((id, Sent::now(asked.entry, &asked.request, false))))
}

/// After its command: the agent was here until it ended (a command longer
/// than the gone time does not leave it gone), and the book is kept
/// whatever happened: what a command saw counts. (A command that stood
/// aside and has not the turn back keeps nothing: the book was the
/// others'.) A command the daemon runs on is handed over: the next command
/// waits for its end.
pub fn finish(
    config: &Config,
    mut turn: Turn,
    mut desk: Desk,
    name: &str,
    done: Result<Outcome, ForwardError>,
) -> Result<(), ForwardError> {
    desk.touch(name);
    if turn.lease().holds() {
        desk.save()?;
    }
    if let Some(registration) = turn.registration() {
        crate::identity::touch(config, &turn.runtime, &desk.agent, registration)?;
    }
    match done? {
        Outcome::Done => Ok(()),
        Outcome::Abandoned { connection, error } => {
            turn.hand_over(connection)?;
            Err(error.into())
        }
    }
}
