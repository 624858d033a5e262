//! The top-level error: each module's typed error, a refusal that carries
//! its own exit code, or a silent status whose output already said why.
//! Only the commands at the top (connect, forward, audit, ...) return it, and
//! none of the modules it gathers imports it back.

use crate::child::ChildError;
use crate::chrome::ChromeError;
use crate::config::ConfigError;
use crate::daemon::DaemonError;
use crate::exit::Exit;
use crate::handoff::HandoffError;
use crate::helper::HelperError;
use crate::helper::setup::SetupError;
use crate::lease::LeaseError;
use crate::procs::ProcError;
use crate::runtime::RuntimeError;
use crate::token::TokenError;
use crate::token::fingerprint::FingerprintError;
use crate::token::input::InputError;
use crate::token::rotation::RotationError;
use crate::token::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Helper(#[from] HelperError),
    #[error(transparent)]
    Setup(#[from] SetupError),
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
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Rotation(#[from] RotationError),
    #[error(transparent)]
    Handoff(#[from] HandoffError),
    #[error(transparent)]
    Processes(#[from] ProcError),
    #[error(transparent)]
    Lease(#[from] LeaseError),
    #[error(transparent)]
    Daemon(#[from] DaemonError),
    #[error(transparent)]
    Fingerprint(#[from] FingerprintError),
    /// A command refused or failed, with the reason and the next step.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// A status whose output already said why (a forwarded command's own
    /// exit status): nothing more is printed.
    #[error("exit status {}", .0.code())]
    Silent(Exit),
}

/// A refusal (or a failure) that explains itself, with its exit code.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    pub exit: Exit,
    pub message: String,
}

impl Error {
    /// A refusal or failure, said in `message`, ending with `exit`.
    pub fn refused(exit: Exit, message: impl Into<String>) -> Error {
        Error::Refused(Refusal {
            exit,
            message: message.into(),
        })
    }

    /// A refused command line (exit 2).
    pub fn usage(message: impl Into<String>) -> Error {
        Error::refused(Exit::Usage, message)
    }

    /// Whether the message was already said (by a forwarded command).
    pub fn is_silent(&self) -> bool {
        matches!(self, Error::Silent(_))
    }

    pub fn exit(&self) -> Exit {
        match self {
            Error::Config(_) => Exit::Usage,
            Error::Runtime(e) => e.exit(),
            Error::Helper(e) => e.exit(),
            Error::Setup(e) => e.exit(),
            Error::Child(e) => e.exit(),
            Error::Interrupted(signal) => Exit::from(*signal),
            Error::Chrome(e) => e.exit(),
            Error::Token(e) => e.exit(),
            Error::Store(e) => e.exit(),
            Error::Input(e) => e.exit(),
            Error::Rotation(e) => e.exit(),
            Error::Handoff(e) => e.exit(),
            Error::Processes(_) => Exit::Failure,
            Error::Lease(e) => e.exit(),
            Error::Daemon(e) => e.exit(),
            Error::Fingerprint(e) => e.exit(),
            Error::Refused(refusal) => refusal.exit,
            Error::Silent(exit) => *exit,
        }
    }
}
