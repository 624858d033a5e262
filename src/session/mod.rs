//! The shared Playwright session `mychrome`, read natively from the CLI's
//! own registry.

pub mod bootstrap;
pub mod bound;
pub mod connect_tab;
pub mod daemon_process;
pub mod daemon_start;
pub mod keep;
pub mod leftovers;
pub mod limits;
pub mod pinned;
pub mod registry;
pub mod state;

use crate::exit::Exit;

/// What a fresh session needs: the user's approval, then `connect`.
const APPROVAL: &str = "no my-chrome session is connected. Ask the user to approve taking their \
                        browser, then run `my-chrome connect`";

/// Why the session cannot be used, or another one stands in the way.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The socket takes connections, nothing answers, and no process of
    /// ours is its daemon (a detach).
    #[error(
        "the session's daemon does not answer (nothing within {} s), and no process of yours is \
         that daemon; nothing was stopped. Look for what holds the session's socket",
        .waited.as_secs()
    )]
    NoDaemon { waited: std::time::Duration },
    /// A detach killed the daemon, and it stayed.
    #[error(
        "the session's daemon (pids {pids:?}) was sent SIGKILL and is still there, so the \
         session may still be attached. Run `my-chrome disconnect` again"
    )]
    Unstoppable { pids: Vec<u32> },
    #[error("{APPROVAL}")]
    Missing,
    #[error("the session is stale ({0}); {APPROVAL}")]
    Stale(String),
    /// Something about it we must not trust or cannot read; `nothing_was`
    /// says what the refusing command did not do.
    #[error("the session cannot be used ({why}); nothing was {nothing_was}")]
    Unavailable {
        why: String,
        nothing_was: &'static str,
    },
    #[error(
        "the Playwright session registry cannot be read ({0}); nothing was attached. If no \
         Playwright session is open, remove that entry, then retry"
    )]
    Registry(String),
    #[error(
        "another Playwright session is attached to the browser: {0}; detach it first. Nothing was \
         attached"
    )]
    OtherAttached(String),
    /// The extension's connect tab (its address carries the token) was seen
    /// and stayed.
    #[error(
        "the session shows the extension's connect tab, whose address carries the token, and it \
         could not be closed ({why}); {}. Close that tab in the browser, then ask the user to \
         approve `my-chrome connect`",
        if *.detached {
            "the session was detached"
        } else {
            "the session could not be detached: run `my-chrome disconnect`"
        }
    )]
    ConnectTab { why: String, detached: bool },
    /// The daemon does not answer: nothing is known of its tabs.
    #[error("{0}")]
    NoAnswer(crate::daemon::DaemonError),
    /// The daemon answered, but its tabs could not be listed.
    #[error(
        "the session's tabs could not be listed ({why}), and a session whose tabs cannot be \
         checked is not kept: {}. Ask the user to approve `my-chrome connect`",
        if *.detached {
            "the session was detached"
        } else {
            "the session could not be detached: run `my-chrome disconnect`"
        }
    )]
    Unlisted { why: String, detached: bool },
    /// The browser the daemon bound (src/session/bound.rs) could not be
    /// shut, so the session was let go.
    #[error(
        "the browser the session's daemon bound, through which another process could attach to \
         the session, could not be shut: {error} {}",
        if *.detached {
            "The session was detached."
        } else {
            "The session could not be detached either: run `my-chrome disconnect`."
        }
    )]
    Bound {
        error: bound::BoundError,
        detached: bool,
    },
    #[error("cannot resolve the runtime directory: {0}")]
    RuntimePath(std::io::Error),
    /// The session reached one of the user's limits and was detached.
    #[error(
        "{}; nothing was run. Ask the user to approve taking their browser again, then run \
         `my-chrome connect`",
        .0.sentence()
    )]
    Ended(limits::Ended),
    #[error(transparent)]
    Limits(#[from] limits::LimitsError),
}

impl SessionError {
    /// A session whose daemon did not answer: stale, as for any command.
    pub fn unanswered(why: impl std::fmt::Display) -> SessionError {
        SessionError::Stale(format!("its daemon does not answer: {why}"))
    }

    pub fn exit(&self) -> Exit {
        match self {
            SessionError::Missing | SessionError::Stale(_) | SessionError::Ended(_) => {
                Exit::NoSession
            }
            SessionError::Limits(e) => e.exit(),
            SessionError::Bound { error, .. } => error.exit(),
            SessionError::NoAnswer(e) => e.exit(),
            SessionError::Unavailable { .. }
            | SessionError::Registry(_)
            | SessionError::OtherAttached(_)
            | SessionError::ConnectTab { .. }
            | SessionError::Unlisted { .. }
            | SessionError::RuntimePath(_)
            | SessionError::NoDaemon { .. }
            | SessionError::Unstoppable { .. } => Exit::Failure,
        }
    }
}
