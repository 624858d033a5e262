//! `my-chrome ensure`: is our session ready? It never attaches: a missing or
//! stale session is exit 4, and the user's approval of a fresh `connect`.

use crate::command::start::Start;
use crate::config::Config;
use crate::error::Error;
use crate::helper::check::Check;
use crate::session::SessionError;
use crate::session::bound;
use crate::session::connect_tab::{self, ConnectTabError};
use crate::session::pinned;

pub fn ensure(config: &Config) -> Result<(), Error> {
    // It may close and open tabs (`connect_tab::close_all`): that is acting on
    // the browser, in its turn.
    let started = Start::new(config, Check::Supported).turn("ensure").open()?;
    let session = started.require_ready()?;
    let budget = pinned::housekeeping(config.command_timeout);
    match connect_tab::close_all(&session.socket_path, &started.daemon_cwd()?, &budget) {
        Ok(()) => {}
        Err(ConnectTabError::Daemon(crate::daemon::DaemonError::Unreachable(why))) => {
            return Err(crate::command::start::stale(why));
        }
        // Nothing answers: a detach would wait the same way (disconnect
        // stops such a daemon), and nothing is known of its tabs.
        Err(ConnectTabError::Daemon(e)) => return Err(SessionError::NoAnswer(e).into()),
        // Fail closed: no agent may keep a session that may show the token.
        Err(ConnectTabError::Unlisted(why)) => {
            let detached = started.cli()?.detach();
            return Err(SessionError::Unlisted { why, detached }.into());
        }
        Err(ConnectTabError::Seen(why)) => {
            let detached = started.cli()?.detach();
            return Err(SessionError::ConnectTab { why, detached }.into());
        }
    }
    if let Err(error) = bound::close(&started.runtime, &config.home) {
        let detached = started.cli()?.detach();
        return Err(SessionError::Bound { error, detached }.into());
    }
    println!("my-chrome: ready (session {})", config.session);
    Ok(())
}
