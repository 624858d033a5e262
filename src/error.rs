//! The top-level error: each module's typed error (every refusal is a
//! variant that names its exit code and next step), or a silent status
//! whose output already said why. Only the commands (`src/command/`) and
//! `main` use it; nothing below them imports it (tests/layout.rs).

use crate::browser::BrowserError;
use crate::child::ChildError;
use crate::chrome::ChromeError;
use crate::command::setup::SetupError;
use crate::config::ConfigError;
use crate::daemon::DaemonError;
use crate::exit::Exit;
use crate::handoff::HandoffError;
use crate::helper::HelperError;
use crate::lease::LeaseError;
use crate::outputs::OutputsError;
use crate::policy::Refusal as LineRefusal;
use crate::policy::tabs::TabArgError;
use crate::procs::ProcError;
use crate::removal::RemovalError;
use crate::runtime::RuntimeError;
use crate::session::SessionError;
use crate::session::bootstrap::BootstrapError;
use crate::session::bound::BoundError;
use crate::settings::SettingsError;
use crate::tabs::TabsError;
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
    #[error(transparent)]
    Browser(#[from] BrowserError),
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
    #[error(transparent)]
    Bootstrap(#[from] BootstrapError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Bound(#[from] BoundError),
    #[error(transparent)]
    Tabs(#[from] TabsError),
    #[error(transparent)]
    TabArg(#[from] TabArgError),
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Outputs(#[from] OutputsError),
    #[error(transparent)]
    Removal(#[from] RemovalError),
    /// A command's own refusal (`src/command/`).
    #[error("{0}")]
    Command(Box<dyn CommandRefusal>),
    /// A forwarded command line the policy refuses.
    #[error(transparent)]
    Line(#[from] LineRefusal),
    /// A status whose output already said why (a forwarded command's own
    /// exit status): nothing more is printed.
    #[error("exit status {}", .0.code())]
    Silent(Exit),
}

/// The refusals of the commands themselves (`ConnectError`, `AuditError`,
/// …): each says what happened and the next step, and names its exit code.
/// error.rs knows them through this trait only, so that no command is
/// imported here (the commands import this module).
pub trait CommandRefusal: std::error::Error + Send + Sync + 'static {
    fn exit(&self) -> Exit;
}

impl<R: CommandRefusal> From<R> for Error {
    fn from(refusal: R) -> Error {
        Error::Command(Box::new(refusal))
    }
}

impl Error {
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
            Error::Browser(e) => e.exit(),
            Error::Token(e) => e.exit(),
            Error::Store(e) => e.exit(),
            Error::Input(e) => e.exit(),
            Error::Rotation(e) => e.exit(),
            Error::Handoff(e) => e.exit(),
            Error::Processes(_) => Exit::Failure,
            Error::Lease(e) => e.exit(),
            Error::Daemon(e) => e.exit(),
            Error::Fingerprint(e) => e.exit(),
            Error::Bootstrap(e) => e.exit(),
            Error::Session(e) => e.exit(),
            Error::Bound(e) => e.exit(),
            Error::Tabs(e) => e.exit(),
            Error::TabArg(e) => e.exit(),
            Error::Settings(e) => e.exit(),
            Error::Outputs(e) => e.exit(),
            Error::Removal(e) => e.exit(),
            Error::Command(e) => e.exit(),
            Error::Line(e) => e.exit(),
            Error::Silent(exit) => *exit,
        }
    }
}
