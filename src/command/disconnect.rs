//! `my-chrome disconnect` (also `detach`, `close`): detaches our session
//! and removes its private output. Chrome keeps running: we never close it
//! and never kill processes by name (invariant 11). Needs only an intact
//! helper, so a copy that is no longer supported can still let go.

use crate::command::ending;
use crate::config::Config;
use crate::error::{Error, lifts_core};
use crate::exit::Exit;
use crate::helper::HelperError;
use crate::helper::check::Check;
use crate::lease::Kind;
use crate::operation::start::Start;
use crate::runtime::Runtime;
use crate::session::SessionError;
use crate::session::limits::{self};

/// Why `disconnect` could not detach as usual.
#[derive(Debug, thiserror::Error)]
pub enum DisconnectError {
    /// What it met below it.
    #[error(transparent)]
    Core(Error),
    /// The helper is not what its last check recorded: its code did not
    /// run; `session` says what became of the session.
    #[error("{changed}. {session}")]
    HelperChanged {
        changed: HelperError,
        session: &'static str,
    },
}

impl DisconnectError {
    pub fn exit(&self) -> Exit {
        match self {
            DisconnectError::Core(e) => e.exit(),
            DisconnectError::HelperChanged { .. } => Exit::Security,
        }
    }
}

lifts_core!(DisconnectError);

pub fn disconnect(config: &Config) -> Result<(), DisconnectError> {
    // Other agents' work ends with the session: the user's step then,
    // asked before the turn is taken.
    let asked = ending::at_work_now(config);
    ending::ask(config, "disconnect", &asked).map_err(Error::from)?;
    // Never pull the session from under another agent's turn; an intact
    // copy is enough to let go.
    let start = Start::new(config, Check::Intact)
        .ending_waits()
        .open_turn("disconnect", Kind::Session);
    let started = match start {
        Err(Error::Helper(changed @ HelperError::Changed { .. })) => {
            return Err(stop_without_helper(config, changed));
        }
        other => other?,
    };
    ending::still_as_asked(&ending::at_work_now(config), &asked).map_err(Error::from)?;
    // The tab book stays: the next session's ids start after its last.
    let said = started.detaching()?.run()?;
    // The user let the session go: no limit of it, nor its end, is kept.
    limits::forget(&started.runtime).map_err(SessionError::from)?;
    crate::output::line(&said);
    Ok(())
}

/// The helper changed after it was verified, so none of its code may run:
/// the session's daemon is asked to stop through its own socket instead.
fn stop_without_helper(config: &Config, changed: HelperError) -> DisconnectError {
    let stopped = Runtime::open(&config.runtime).ok().and_then(|runtime| {
        // Any daemon of ours that answers (attached or not: setup would
        // refuse while it runs), under the wrapper lock as any detach.
        let _lock = runtime
            .wrapper_lock(config.lock_wait, &crate::output::waiting_for_another)
            .ok()?;
        stop_through_socket(config, &runtime)
    });
    let session = match stopped {
        Some(true) => {
            "The session was stopped through its daemon's socket instead; the browser keeps running."
        }
        Some(false) => "The session's daemon could not be stopped through its socket either.",
        None => "No session was open.",
    };
    DisconnectError::HelperChanged { changed, session }
}

/// Asks the session's daemon to stop through its own socket, running none
/// of the helper's code; the caller holds the wrapper lock. `None` when no
/// daemon has a socket, else whether it stopped.
pub(crate) fn stop_through_socket(config: &Config, runtime: &Runtime) -> Option<bool> {
    let socket = crate::session::state::open_socket(&config.home, runtime, &config.session)?;
    Some(crate::daemon::stop(&socket, crate::session::pinned::HOUSEKEEPING_TIMEOUT).is_ok())
}
