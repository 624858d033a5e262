//! `my-chrome disconnect` (also `detach`, `close`): detaches our session
//! and removes its private output. Chrome keeps running: we never close it
//! and never kill processes by name (invariant 11). Needs only an intact
//! helper, so a copy that is no longer supported can still let go.

use std::fs;

use crate::chrome::{self, ChromeState};
use crate::command::start::{Start, Started};
use crate::config::Config;
use crate::daemon::DaemonError;
use crate::daemon::request::{Plan, plan_words};
use crate::error::{CommandRefusal, Error};
use crate::exit::Exit;
use crate::helper::HelperError;
use crate::helper::check::Check;
use crate::procs::ProcessTable;
use crate::runtime::{Runtime, StateFile};
use crate::session::state::SessionState;
use crate::session::{bound, daemon_process, leftovers, pinned};

/// Why `disconnect` could not detach as usual.
#[derive(Debug, thiserror::Error)]
pub enum DisconnectError {
    /// The helper is not what its last check recorded: its code did not
    /// run; `session` says what became of the session.
    #[error("{changed}. {session}")]
    HelperChanged {
        changed: HelperError,
        session: &'static str,
    },
    /// The socket takes connections, nothing answers, and no process of
    /// ours is its daemon.
    #[error(
        "the session's daemon does not answer (nothing within {} s), and no process of yours is \
         that daemon; nothing was stopped. Look for what holds the session's socket",
        .waited.as_secs()
    )]
    NoDaemon { waited: std::time::Duration },
    #[error(
        "the session's daemon (pids {pids:?}) was sent SIGKILL and is still there, so the \
         session may still be attached. Run `my-chrome disconnect` again"
    )]
    Unstoppable { pids: Vec<u32> },
}

impl CommandRefusal for DisconnectError {
    fn exit(&self) -> Exit {
        match self {
            DisconnectError::HelperChanged { .. } => Exit::Security,
            DisconnectError::NoDaemon { .. } | DisconnectError::Unstoppable { .. } => Exit::Failure,
        }
    }
}

pub fn disconnect(config: &Config) -> Result<(), Error> {
    // Never pull the session from under another agent's turn; an intact
    // copy is enough to let go.
    let start = Start::new(config, Check::Intact)
        .ending_waits()
        .turn("disconnect")
        .locked()
        .open();
    let started = match start {
        Err(Error::Helper(changed @ HelperError::Changed { .. })) => {
            return Err(stop_without_helper(config, changed));
        }
        other => other?,
    };
    // The tab book stays: the next session's ids start after its last.
    detach(config, &started)
}

fn detach(config: &Config, started: &Started) -> Result<(), Error> {
    let runtime = &started.runtime;
    let real = started.daemon_cwd()?;
    // A daemon that does not answer would hold a detach for its whole
    // bound and then be reported as not attached: it is stopped instead,
    // found by exactly what it is.
    let mut stopped = stop_if_unanswering(config, started, &real)?;
    let detached = started.cli()?.detach();
    // One that answered but did not let go is stopped too.
    // (A daemon left after one was stopped is stopped too: nothing of
    // ours may run on while what it left is removed.)
    let left = daemon_process::left_after_stop(&real, &config.session)?;
    if !left.is_empty() {
        if !daemon_process::kill_all(&left) {
            return Err(DisconnectError::Unstoppable { pids: left }.into());
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
    if let Some(Stopped { pids, why }) = stopped {
        crate::output::line(&format!(
            "my-chrome: session {}'s daemon (pid {}) was stopped: {why}; {chrome}",
            config.session,
            pids.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    } else if detached {
        crate::output::line(&format!(
            "my-chrome: disconnected session {}; {chrome}",
            config.session
        ));
    } else {
        crate::output::line(&format!(
            "my-chrome: session {} was not attached; {chrome}",
            config.session
        ));
    }
    // What a daemon of ours that died left bound (connect removes it).
    bound::close(runtime, &config.home)?;
    Ok(())
}

/// A daemon of ours that was stopped, and why.
struct Stopped {
    pids: Vec<u32>,
    why: String,
}

/// Asks our session's daemon for its tabs within the housekeeping bound; one
/// that does not answer is stopped (SIGKILL to exactly our daemon process).
fn stop_if_unanswering(
    config: &Config,
    started: &Started,
    real: &std::path::Path,
) -> Result<Option<Stopped>, Error> {
    let SessionState::Ready(entry) = started.session_state() else {
        return Ok(None);
    };
    let Plan::Run(request) = plan_words(&["tab-list".to_string()], real) else {
        unreachable!("tab-list goes to the daemon");
    };
    let budget = pinned::housekeeping(config.command_timeout);
    let Err(DaemonError::NoAnswer(bound)) = budget.run(&entry.socket_path, &request.bytes, 4 << 20)
    else {
        return Ok(None);
    };
    let pids = daemon_process::ours(&ProcessTable::read()?, real, &config.session);
    if pids.is_empty() {
        return Err(DisconnectError::NoDaemon { waited: bound }.into());
    }
    if !daemon_process::kill_all(&pids) {
        return Err(DisconnectError::Unstoppable { pids }.into());
    }
    Ok(Some(Stopped {
        pids,
        why: format!("it did not answer within {} s", bound.as_secs()),
    }))
}

/// The helper changed after it was verified, so none of its code may run:
/// the session's daemon is asked to stop through its own socket instead.
fn stop_without_helper(config: &Config, changed: HelperError) -> Error {
    let stopped = Runtime::open(&config.runtime).ok().and_then(|runtime| {
        // Any daemon of ours that answers (attached or not: setup would
        // refuse while it runs), under the wrapper lock as any detach.
        let _lock = runtime
            .wrapper_lock(config.lock_wait, &crate::output::waiting_for_another)
            .ok()?;
        let socket = crate::session::state::open_socket(&config.home, &runtime, &config.session)?;
        Some(crate::daemon::stop(&socket, crate::session::pinned::HOUSEKEEPING_TIMEOUT).is_ok())
    });
    let session = match stopped {
        Some(true) => {
            "The session was stopped through its daemon's socket instead; the browser keeps running."
        }
        Some(false) => "The session's daemon could not be stopped through its socket either.",
        None => "No session was open.",
    };
    DisconnectError::HelperChanged { changed, session }.into()
}
