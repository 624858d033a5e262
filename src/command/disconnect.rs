//! `my-chrome disconnect` (also `detach`, `close`): detaches our session
//! and removes its private output. Chrome keeps running: we never close it
//! and never kill processes by name (invariant 11). Needs only an intact
//! helper, so a copy that is no longer supported can still let go.

use std::fs;

use crate::chrome::{self, ChromeState};
use crate::command::start::{Start, Started};
use crate::config::Config;
use crate::error::{CommandRefusal, Error};
use crate::exit::Exit;
use crate::helper::HelperError;
use crate::helper::check::Check;
use crate::procs::ProcessTable;
use crate::runtime::{Runtime, StateFile};
use crate::session::bound;

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
}

impl CommandRefusal for DisconnectError {
    fn exit(&self) -> Exit {
        Exit::Security
    }
}

pub fn disconnect(config: &Config) -> Result<(), Error> {
    // Never pull the session from under another agent's turn; an intact
    // copy is enough to let go.
    let start = Start::new(config, Check::Intact)
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
    let detached = started.cli()?.detach();
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
    if detached {
        println!(
            "my-chrome: disconnected session {}; {chrome}",
            config.session
        );
    } else {
        println!(
            "my-chrome: session {} was not attached; {chrome}",
            config.session
        );
    }
    // What a daemon of ours that died left bound (connect removes it).
    bound::close(runtime, &config.home)?;
    Ok(())
}

/// The helper changed after it was verified, so none of its code may run:
/// the session's daemon is asked to stop through its own socket instead.
fn stop_without_helper(config: &Config, changed: HelperError) -> Error {
    let stopped = Runtime::open(&config.runtime).ok().and_then(|runtime| {
        // Any daemon of ours that answers (attached or not: setup would
        // refuse while it runs), under the wrapper lock as any detach.
        let _lock = runtime.wrapper_lock(config.lock_wait).ok()?;
        let socket = crate::session::state::open_socket(&config.home, &runtime, &config.session)?;
        Some(crate::daemon::stop(&socket, crate::session::pinned::HOUSEKEEPING_TIMEOUT).is_ok())
    });
    let session = match stopped {
        Some(true) => {
            "The session was stopped through its daemon's socket instead; Chrome keeps running."
        }
        Some(false) => "The session's daemon could not be stopped through its socket either.",
        None => "No session was open.",
    };
    DisconnectError::HelperChanged { changed, session }.into()
}
