//! `my-chrome ensure`: is our session ready? It never attaches: a missing or
//! stale session is exit 4, and the user's approval of a fresh `connect`.

use crate::command::start::Start;
use crate::config::Config;
use crate::daemon::DaemonError;
use crate::error::Error;
use crate::helper::check::Check;
use crate::session::SessionError;
use crate::session::bound;
use crate::session::connect_tab::{self, ConnectTabError};
use crate::session::pinned::{self, PinnedCli};

pub fn ensure(config: &Config) -> Result<(), Error> {
    // It may close and open tabs (`connect_tab::close_all`): that is acting on
    // the browser, in its turn. No session: exit 4, and no turn taken.
    let started = Start::new(config, Check::Supported).on_session().open()?;
    started.session_before_turn()?;
    let mut started = started.take_turn("ensure")?;
    let held = started.lease_mut().expect("ensure holds the turn");
    held.set_ran(false);
    let session = started.require_ready()?;
    started
        .lease_mut()
        .expect("ensure holds the turn")
        .set_ran(true);
    let budget = pinned::housekeeping(config.command_timeout);
    if let Err(e) = connect_tab::close_all(&session.socket_path, &started.daemon_cwd()?, &budget) {
        return Err(not_kept(e, &started.cli()?));
    }
    if let Err(error) = bound::close(&started.runtime, &config.home) {
        let detached = started.cli()?.detach();
        return Err(SessionError::Bound { error, detached }.into());
    }
    let left = match crate::session::limits::status(&started.runtime, true) {
        Ok(Some(status)) => format!("; {}", status.status),
        Ok(None) => String::new(),
        Err(e) => format!("; the session's limits could not be read ({e})"),
    };
    crate::output::line(&format!(
        "my-chrome: ready (session {}){left}",
        config.session
    ));
    Ok(())
}

/// A session found ready whose connect tab could not be made sure of: its
/// daemon gone (stale), not answering, or its tabs not listed or the
/// connect tab seen (then detached: no agent may keep a session that may
/// show the token). `ensure` and a reusing `connect` alike.
pub fn not_kept(e: ConnectTabError, cli: &PinnedCli) -> Error {
    match e {
        ConnectTabError::Daemon(DaemonError::Unreachable(why)) => crate::command::start::stale(why),
        // Nothing answers: a detach would wait the same way (disconnect
        // stops such a daemon), and nothing is known of its tabs.
        ConnectTabError::Daemon(e) => SessionError::NoAnswer(e).into(),
        ConnectTabError::Unlisted(why) => SessionError::Unlisted {
            why,
            detached: cli.detach(),
        }
        .into(),
        ConnectTabError::Seen(why) => SessionError::ConnectTab {
            why,
            detached: cli.detach(),
        }
        .into(),
    }
}
