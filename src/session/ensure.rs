//! `my-chrome ensure`: is our session ready? It never attaches: a missing or
//! stale session is exit 4, and the user's approval of a fresh `connect`.

use super::connect::fail;
use super::pinned::{Need, Prepared};
use super::state::{SessionState, session_state};
use crate::config::Config;
use crate::error::{Error, Exit};
use crate::helper::pin::Pin;
use crate::runtime::StateFile;

const APPROVAL: &str = "no my-chrome session is connected. Ask the user to approve taking their \
                        browser, then run `my-chrome connect`";

/// Checks the supported helper and the session; `Ok` when commands can be
/// forwarded. Shared by `ensure` and the forwarder. A connect that died left
/// its record: that is scrubbed first, under the lock.
pub fn require_ready(config: &Config) -> Result<Prepared, Error> {
    let prepared = Prepared::open(config, Need::Supported, false)?;
    if prepared.runtime.read_state(StateFile::Bootstrap)?.is_some() {
        let _lock = prepared.runtime.lock(config.lock_wait)?;
        super::connect::recover(&prepared.runtime, &prepared.cli())?;
    }
    let pin = Pin::shipped();
    match session_state(
        &config.home,
        &prepared.runtime,
        &config.session,
        pin.core_version(),
    ) {
        SessionState::Ready(_) => Ok(prepared),
        SessionState::Missing => Err(fail(Exit::NoSession, APPROVAL)),
        SessionState::Stale(why) => Err(fail(
            Exit::NoSession,
            format!("the session is stale ({why}); {APPROVAL}"),
        )),
        SessionState::Unavailable(why) => Err(fail(
            Exit::Failure,
            format!("the session cannot be used ({why}); nothing was run"),
        )),
    }
}

pub fn ensure(config: &Config) -> Result<(), Error> {
    // It may close and open tabs (`close_connect_tabs`): that is acting on
    // the browser.
    let _lease = crate::lease::acquire(config, "ensure")?;
    let prepared = require_ready(config)?;
    let cli = prepared.cli();
    if let Err(why) = cli.close_connect_tabs() {
        // Fail closed: no agent may keep a session that shows the token.
        let detached = cli.detach();
        return Err(fail(
            Exit::Failure,
            format!(
                "the session shows the extension's connect tab, whose address carries the token, \
                 and it could not be closed ({why}); {}. Close that tab in Chrome, then ask the \
                 user to approve `my-chrome connect`",
                if detached {
                    "the session was detached"
                } else {
                    "the session could not be detached: run `my-chrome disconnect`"
                }
            ),
        ));
    }
    println!("my-chrome: ready (session {})", config.session);
    Ok(())
}
