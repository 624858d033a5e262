//! `my-chrome ensure`: is our session ready? It never attaches: a missing or
//! stale session is exit 4, and the user's approval of a fresh `connect`.

use crate::config::Config;
use crate::error::Error;
use crate::helper::check::Check;
use crate::operation::start::{Need, Start};

pub fn ensure(config: &Config) -> Result<(), Error> {
    // It may close and open tabs (`connect_tab::close_all`): that is acting on
    // the browser, in its turn. No session: exit 4, and no turn taken.
    let started = Start::new(config, Check::Supported).on_session().open()?;
    let (mut started, session) = started.take_turn("ensure", Need::Ready)?;
    started.lease().mark_ran();
    crate::session::keep::make_sure(
        &session,
        &started.daemon_cwd()?,
        &started.runtime,
        &config.home,
        config.command_timeout,
        &started.cli()?,
    )?;
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
