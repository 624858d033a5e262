//! Every other command is a Playwright CLI command: checked by the policy
//! (its line) and against the disk (its files), then run for the agent on
//! its own tab (src/tabs/) by our session's daemon, and its reply printed
//! through the redactor, narrowed to the agent's tabs (invariants 8, 9
//! and 14). The steps are the operations core's (src/operation/).

use std::ffi::OsString;

use crate::config::Config;
use crate::file_args::FileRules;
use crate::helper::check::Check;
use crate::operation::forwarded::{self, Forwarded, Planned};
use crate::operation::run;
use crate::operation::start::{Need, Start};
use crate::operation::{client, print_client_refusal};
use crate::pinned_commands::Scope;
use crate::policy::line::Line;

pub use crate::operation::client::cli_help;
pub use crate::operation::forwarded::ForwardError;

pub fn forward(config: &Config, raw: &[OsString]) -> Result<(), ForwardError> {
    let words: Vec<String> = raw
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // The one reading every decision below is taken from.
    let line = Line::read(&words, &config.session)?;
    let settings = crate::settings::of(&config.runtime)?;
    let bound = settings.command_bound_for(config.command_timeout);
    if let Some(refusal) = FileRules::new(config, &settings).line_refusal(&line) {
        return Err(refusal.into());
    }
    let start = Start::new(config, Check::Supported);
    // `list` reports every session and needs none of ours; a line without a
    // command only prints the CLI's usage: the pinned client answers both.
    let Some(entry) = line.entry.filter(|entry| entry.scope != Scope::None) else {
        return client::run(config, &start.open()?, &line, false);
    };
    // What runs nothing in the browser is decided before the session's
    // turn is taken: a refusal, or no session, costs the agents waiting
    // for the turn nothing.
    let started = start.on_session().open()?;
    let cwd = started.daemon_cwd()?;
    let mut asked = match Forwarded::plan(line, entry, &cwd, bound)? {
        Planned::Run(asked) => asked,
        Planned::Refused(said) => return Err(print_client_refusal(&started.runtime, &said)),
        Planned::ClientOnly(line) => return client::run(config, &started, &line, true),
    };
    // One browser command at a time: it waits for the one in flight, and
    // the session is read again once it has its turn. Until it sends the
    // browser something, the log calls it refused.
    let (mut turn, session) = started.take_turn(entry.name, Need::Registered)?;
    let socket = &session.socket_path;
    let mut desk = turn
        .desk(socket, crate::tabs::After::Command)
        .map_err(forwarded::stale_unless_listed)?;
    let me = turn.registration().ok_or_else(forwarded::nameless)?;
    let reopen = turn.reopener(socket)?;
    let runtime = turn.runtime.clone();
    let held = turn.lease();
    // Its output files are written where nobody sees them first, and no
    // file it names is another agent's.
    let outputs = asked.stage(&runtime, me, &cwd)?;
    let done = run::for_agent(config, &mut desk, held, socket, &asked, (outputs, &reopen));
    run::finish(config, turn, desk, entry.name, done)
}
