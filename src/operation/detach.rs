//! Detaching the session, as `disconnect` does and as a session that
//! reached one of the user's limits ends (`end_by_limit`): its daemon asked
//! to stop through the pinned CLI (stopped, found by exactly what it is,
//! when it does not answer or let go), then what it left in the runtime
//! removed. The browser keeps running (invariant 11). Built from a
//! command's start (`Started::detaching`).

use std::fs;
use std::path::PathBuf;

use crate::chrome::{self, ChromeState};
use crate::config::Config;
use crate::daemon::DaemonError;
use crate::daemon::request::{Plan, plan_words};
use crate::error::Error;
use crate::procs::ProcessTable;
use crate::runtime::{Runtime, StateFile};
use crate::session::daemon_process::Silenced;
use crate::session::limits::{self, Ended, Limits, Reason};
use crate::session::pinned::PinnedCli;
use crate::session::state::SessionState;
use crate::session::{SessionError, bound, daemon_process, leftovers, pinned};

/// What a detach needs of a command's start: `cli` gives the pinned CLI
/// (a trusted node is found only then).
pub struct Detach<'s, C: Fn() -> Result<PinnedCli<'s>, Error>> {
    pub config: &'s Config,
    pub runtime: &'s Runtime,
    /// The session as the command's start found it.
    pub state: SessionState,
    /// The runtime's real path, the daemon's working directory.
    pub real: PathBuf,
    /// Whether the command holds the wrapper lock already.
    pub holds_lock: bool,
    pub cli: C,
}

/// A daemon of ours that was stopped, and why.
struct Stopped {
    pids: Vec<u32>,
    why: String,
}

impl<'s, C: Fn() -> Result<PinnedCli<'s>, Error>> Detach<'s, C> {
    /// Ends the session because it reached the user's `reason` limit, as
    /// `disconnect` ends it (the browser keeps running, the runtime's
    /// leftovers go), under the turn the command holds; the end is recorded for every
    /// later command and logged. Takes the wrapper lock unless it is held.
    pub fn end_by_limit(&self, limits: &Limits, reason: Reason) -> Result<Ended, Error> {
        let (config, runtime) = (self.config, self.runtime);
        let _lock = if self.holds_lock {
            None
        } else {
            Some(runtime.wrapper_lock(config.lock_wait, &crate::output::waiting_for_another)?)
        };
        self.run()?;
        let end = Ended {
            reason,
            at: crate::lease::now_ms(),
            limit_secs: limits.limit(reason).as_secs(),
        };
        limits::record_end(runtime, &end).map_err(SessionError::from)?;
        let line = crate::lease::log::line(
            std::time::SystemTime::now(),
            "my-chrome",
            Some("session-end"),
            &crate::lease::log::Event::Ended {
                reason: reason.word(),
                limit: limits.limit(reason),
            },
        );
        let _ = crate::lease::log::append(runtime, &[line]);
        Ok(end)
    }

    /// Detaches the session and removes what it left; what became of it, in
    /// one line.
    pub fn run(&self) -> Result<String, Error> {
        let (config, runtime, real) = (self.config, self.runtime, &self.real);
        // A daemon that does not answer would hold a detach for its whole
        // bound and then be reported as not attached: it is stopped instead,
        // found by exactly what it is.
        let mut stopped = self.stop_if_unanswering()?;
        let detached = (self.cli)()?.detach();
        // One that answered but did not let go is stopped too.
        // (A daemon left after one was stopped is stopped too: nothing of
        // ours may run on while what it left is removed.)
        let left = daemon_process::left_after_stop(real, &config.session)?;
        if !left.is_empty() {
            if !daemon_process::kill_all(&left) {
                return Err(SessionError::Unstoppable { pids: left }.into());
            }
            stopped = Some(match stopped {
                Some(mut earlier) => {
                    earlier.pids.extend(left);
                    earlier
                }
                None => Stopped {
                    pids: left,
                    why: "it did not detach".into(),
                },
            });
        }
        for entry in fs::read_dir(runtime.root()).into_iter().flatten().flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(crate::session::bootstrap::SESSION_OUTPUT)
            {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
        runtime.remove_state(StateFile::Bootstrap)?;
        // What became of the browser, said by its name; nothing here needs it.
        let chrome = match crate::browser::resolve(config) {
            Ok(browser) => {
                let name = browser.display();
                match ProcessTable::read().map(|t| chrome::state(&t, &browser.executable)) {
                    Ok(ChromeState::Running(pid)) => format!("{name} is still running (pid {pid})"),
                    Ok(ChromeState::Ambiguous(pids)) => {
                        format!("{name} is still running (pids {pids:?})")
                    }
                    Ok(ChromeState::Missing) => format!("{name} is not running"),
                    Err(_) => format!("{name} was left alone"),
                }
            }
            Err(_) => "the browser was left alone".to_string(),
        };
        // Its daemon is gone: so is what it left in the runtime.
        leftovers::remove_recorded(runtime)?;
        leftovers::remove_dead_socket(runtime, &config.home, &config.session);
        runtime.remove_state(StateFile::SessionBrowser)?;
        // Every agent name ends with the session, and every late command.
        crate::identity::registry::remove(runtime)?;
        crate::lease::late::end_all(runtime)?;
        let said = if let Some(Stopped { pids, why }) = stopped {
            format!(
                "my-chrome: session {}'s daemon (pid {}) was stopped: {why}; {chrome}",
                config.session,
                pids.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else if detached {
            format!(
                "my-chrome: disconnected session {}; {chrome}",
                config.session
            )
        } else {
            format!(
                "my-chrome: session {} was not attached; {chrome}",
                config.session
            )
        };
        // What a daemon of ours that died left bound (connect removes it).
        bound::close(runtime, &config.home)?;
        Ok(said)
    }

    /// Asks our session's daemon for its tabs within the housekeeping bound; one
    /// that does not answer is stopped (SIGKILL to exactly our daemon process).
    fn stop_if_unanswering(&self) -> Result<Option<Stopped>, Error> {
        let (config, real) = (self.config, &self.real);
        let SessionState::Ready(entry) = &self.state else {
            return Ok(None);
        };
        let Plan::Run(request) = plan_words(&["tab-list".to_string()], real) else {
            unreachable!("tab-list goes to the daemon");
        };
        let budget = pinned::housekeeping(config.command_timeout);
        let Err(DaemonError::NoAnswer(bound)) =
            budget.run(&entry.socket_path, &request.bytes, 4 << 20)
        else {
            return Ok(None);
        };
        match daemon_process::stop_silent(real, &config.session)? {
            Silenced::NoneOfOurs => Err(SessionError::NoDaemon { waited: bound }.into()),
            Silenced::StillThere(pids) => Err(SessionError::Unstoppable { pids }.into()),
            Silenced::Stopped(pids) => Ok(Some(Stopped {
                pids,
                why: format!("it did not answer within {} s", bound.as_secs()),
            })),
        }
    }
}
