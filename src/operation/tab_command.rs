//! `tab-list`, `tab-new`, `tab-select`, `tab-close`, on the agent's own
//! tabs: indexes, ids and labels are the agent's; the tab a command names
//! is the agent's, or nothing is sent.

use super::forwarded::{ForwardError, Forwarded};
use super::reply;
use crate::daemon::request::Mode;
use crate::lease::HeldLease;
use crate::output::Stream;
use crate::pinned_commands::TabCommand;
use crate::policy::tabs::{TabArgError, TabRef};
use crate::session_output;
use crate::staged_files::Outputs;
use crate::tabs::listing;
use crate::tabs::{Closing, Desk, TabsError};

/// What a tab command does, its tab resolved.
enum TabAct {
    New,
    Select(u64),
    /// The tab named, if one was.
    Close(Option<u64>),
    List,
}

/// `tab-list`, `tab-new`, `tab-select`, `tab-close`, on the agent's own
/// tabs: indexes, ids and labels are the agent's.
pub(super) fn run(
    desk: &mut Desk,
    held: &mut HeldLease,
    asked: &Forwarded,
    tab: TabCommand,
) -> Result<(), ForwardError> {
    // tab-select and tab-close name a tab of the agent's; tab-new an address.
    let named = match tab {
        TabCommand::Select | TabCommand::Close => {
            asked.line.argument(1).map(TabRef::parse).transpose()?
        }
        TabCommand::New | TabCommand::List => None,
    };
    let named = named.as_ref().or(asked.line.tab.as_ref());
    // The tab it names is the agent's, or nothing is sent.
    let act = match tab {
        TabCommand::New => TabAct::New,
        TabCommand::Select => {
            let reference = named.ok_or(TabArgError::Missing("tab-select <tab>"))?;
            TabAct::Select(desk.resolve(reference)?)
        }
        TabCommand::Close => TabAct::Close(named.map(|r| desk.resolve(r)).transpose()?),
        TabCommand::List => TabAct::List,
    };
    held.mark_ran();
    match act {
        TabAct::New => {
            let before = session_output::Before::read(desk.runtime().root(), desk.any_late());
            let (id, reply) = desk.open_tab_with(&asked.request, asked.line.label.as_deref())?;
            held.on_tab(id);
            let shown = desk.current_is_own();
            return reply::print_reply(
                desk,
                reply,
                asked,
                (true, shown),
                (Outputs::none(), &before),
            );
        }
        TabAct::Select(id) => {
            desk.select(id)?;
            desk.set_current(id);
            held.on_tab(id);
        }
        TabAct::Close(named) => {
            // Unnamed: the agent's current tab (a blank one opened for it
            // when it has none).
            let id = match named {
                Some(id) => id,
                None => desk.target(None)?,
            };
            held.on_tab(id);
            let ours: Vec<u64> = desk.book.own(&desk.agent).iter().map(|t| t.id).collect();
            if desk.close(id, &ours)? == Closing::LeftOpen {
                let agent = desk.agent.clone();
                desk.book.left_open(&agent, id);
                desk.save()?;
                return Err(TabsError::LeftOpen(id).into());
            }
        }
        TabAct::List => {}
    }
    // Titles are the pages' words: through the redactor, as any reply.
    let printer = desk.printer();
    let own = desk.shown();
    match asked.mode() {
        Mode::Json => printer.json_text(Stream::Out, &listing::render_json(&own), "\n"),
        Mode::Raw => printer.text(Stream::Out, &[&listing::render(&own)]),
        Mode::Text => printer.text(Stream::Out, &["### Result\n", &listing::render(&own)]),
    }
    Ok(())
}
