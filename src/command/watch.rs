//! `my-chrome watch-session` (hidden): the process `connect` leaves
//! behind so that a session ends at the user's limits with no command run
//! (docs/DESIGN.md, "A session that ends by itself"). It holds no token
//! and reads no page: it reads the session's limits and the lease's last
//! activity once a second, and when a limit is reached it takes the
//! session's turn like any command (so no command is cut half-way) and
//! detaches as `disconnect` does, recording why. It acts only while
//! `session-limits.json` names it (pid and start time): run by hand, it
//! refuses and changes nothing. A killed watcher leaves the end to the next
//! command and to the daemon's own idle timer (`limits::backstop`).

use std::time::{Duration, Instant};

use crate::config::Config;
use crate::error::{Error, lifts_core};
use crate::exit::Exit;
use crate::helper::check::Check;
use crate::lease::Kind;
use crate::lease::{self, LeaseError};
use crate::operation::start::Start;
use crate::procs::ProcessId;
use crate::runtime::Runtime;
use crate::session::SessionError;
use crate::session::limits::{self, Limits};
use crate::session::state::{self, SessionState};
use crate::signals;

/// How often the limits and the session are looked at.
const POLL: Duration = Duration::from_secs(1);
/// How long the watcher waits for `connect` to record it.
const NAMED_WITHIN: Duration = Duration::from_secs(5);
/// How long it waits before it tries the turn again, when a command held it
/// past the wait.
const RETRY: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// What it met below it.
    #[error(transparent)]
    Core(Error),
    #[error(
        "no session of this runtime was handed to this process: `watch-session` is my-chrome's \
         own, started by `connect` to end the session at your limits; never run it by hand \
         (`my-chrome doctor` says whether the session's watcher runs)"
    )]
    NotStarted,
}

impl WatchError {
    pub fn exit(&self) -> Exit {
        match self {
            WatchError::Core(e) => e.exit(),
            WatchError::NotStarted => Exit::Usage,
        }
    }
}

lifts_core!(WatchError);

pub fn watch(config: &Config) -> Result<(), WatchError> {
    let runtime = Runtime::open(&config.runtime)?;
    let me = ProcessId::current().map_err(LeaseError::from)?;
    let deadline = Instant::now() + NAMED_WITHIN;
    while named(&runtime, me)?.is_none() {
        if Instant::now() >= deadline || signals::pending().is_some() {
            return Err(WatchError::NotStarted);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    loop {
        if signals::pending().is_some() {
            return Ok(());
        }
        // Disconnected, or another connect's session: not this one's to end.
        let Some(limits) = named(&runtime, me)? else {
            return Ok(());
        };
        let (last, busy) = lease::activity(&runtime)?;
        if limits.due(last, busy, lease::now_ms()).is_some() {
            match end(config, me) {
                Ok(true) => return Ok(()),
                Ok(false) => continue,
                // A command held the turn past the wait: the end follows it.
                Err(WatchError::Core(Error::Lease(LeaseError::Busy { .. }))) => {
                    std::thread::sleep(RETRY)
                }
                Err(e) => return Err(e),
            }
            continue;
        }
        // The session went another way (the browser quit, the daemon
        // died) before a limit: its limits go with it, and so does this
        // watcher. (Gone past one, it was ended above: the end is said and
        // what it left removed.)
        if matches!(
            state::registered_state(
                &config.home,
                &runtime,
                &config.session,
                crate::helper::pin::Pin::shipped().core_version(),
            ),
            SessionState::Missing
        ) {
            let _ = limits::forget(&runtime);
            return Ok(());
        }
        std::thread::sleep(POLL);
    }
}

/// The limits, while they name `me` as the session's watcher.
fn named(runtime: &Runtime, me: ProcessId) -> Result<Option<Limits>, Error> {
    Ok(limits::read(runtime)
        .map_err(SessionError::from)?
        .filter(|l| l.watcher.is_some_and(|w| w.same_as(&me))))
}

/// Under the session's turn, ends the session if a limit is still reached
/// (a command that ran while the watcher waited moves the idle end):
/// whether it ended.
fn end(config: &Config, me: ProcessId) -> Result<bool, WatchError> {
    // The watcher's turn is no browser command: the idle time runs on.
    let started = Start::new(config, Check::Intact).open_turn("session-end", Kind::Watcher)?;
    let last = started.last_before();
    let Some(limits) = named(&started.runtime, me)? else {
        return Ok(true);
    };
    let Some(reason) = limits.due(last, false, lease::now_ms()) else {
        return Ok(false);
    };
    started.detaching()?.end_by_limit(&limits, reason)?;
    Ok(true)
}
