//! The exit codes of `my-chrome` and the top-level error that carries one.
//! Each module has its own typed error; this one only gathers them.

use crate::child::ChildError;
use crate::chrome::ChromeError;
use crate::config::ConfigError;
use crate::handoff::HandoffError;
use crate::helper::HelperError;
use crate::runtime::RuntimeError;
use crate::token::TokenError;
use crate::token::input::InputError;
use crate::token::rotation::RotationError;
use crate::token::store::StoreError;

/// The documented exit codes (README, "Exit codes").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// A check could not run, or a child failed.
    Failure,
    /// Usage error, blocked command, unsupported or missing helper.
    Usage,
    /// Token missing or invalid, or the token store unusable.
    Token,
    /// No owned session, or a stale one: a fresh `connect` needs approval.
    NoSession,
    /// Chrome missing, ambiguous, or changed.
    Chrome,
    /// Unsafe runtime or helper directory, or another security fault.
    Security,
    /// Another agent holds the session's lease past the wait bound.
    Busy,
    /// A bounded step ran out of time.
    Timeout,
    /// Interrupted by a signal, after cleaning up: 128 + the signal number.
    Signal(i32),
    /// A forwarded command's own status, passed through.
    Code(i32),
}

impl Exit {
    pub fn code(self) -> i32 {
        match self {
            Exit::Failure => 1,
            Exit::Usage => 2,
            Exit::Token => 3,
            Exit::NoSession => 4,
            Exit::Chrome => 5,
            Exit::Security => 6,
            Exit::Busy => 7,
            Exit::Timeout => 124,
            Exit::Signal(n) => 128 + n,
            Exit::Code(n) => n,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Helper(#[from] HelperError),
    #[error(transparent)]
    Child(#[from] ChildError),
    #[error("interrupted by {0}")]
    Interrupted(nix::sys::signal::Signal),
    #[error(transparent)]
    Chrome(#[from] ChromeError),
    /// An input that is not a token; nothing was stored.
    #[error(
        "{0}; nothing was stored. Copy the token from the Playwright Extension again and rerun \
         `my-chrome token store`"
    )]
    Token(TokenError),
    #[error("{0}")]
    TokenMissing(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Rotation(#[from] RotationError),
    /// A refused command line, with the reason.
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Handoff(#[from] HandoffError),
    #[error(transparent)]
    Connect(#[from] crate::session::connect::ConnectError),
    #[error(transparent)]
    Processes(#[from] crate::procs::ProcError),
    #[error(transparent)]
    Lease(#[from] crate::lease::LeaseError),
    /// A forwarded command's own exit status (its output said why).
    #[error("")]
    Forwarded(i32),
}

impl Error {
    pub fn exit(&self) -> Exit {
        match self {
            Error::Config(_) => Exit::Usage,
            Error::Runtime(e) => e.exit(),
            Error::Helper(e) => e.exit(),
            Error::Child(e) => e.exit(),
            Error::Interrupted(signal) => Exit::Signal(*signal as i32),
            Error::Chrome(e) => e.exit(),
            Error::Token(e) => e.exit(),
            Error::TokenMissing(_) => Exit::Token,
            Error::Store(e) => e.exit(),
            Error::Input(e) => e.exit(),
            Error::Rotation(e) => e.exit(),
            Error::Usage(_) => Exit::Usage,
            Error::Handoff(e) => e.exit(),
            Error::Connect(e) => e.exit,
            Error::Processes(_) => Exit::Failure,
            Error::Lease(e) => e.exit(),
            Error::Forwarded(code) => Exit::Code(*code),
        }
    }
}
