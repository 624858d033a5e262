//! What a command meets below it: each core module's typed error (every
//! refusal a variant that names its exit code and next step), and an
//! interruption. A command's own refusals are its own enum, which wraps
//! this one (`Core`); the top-level error is one variant per command
//! (`command/failure.rs`). Only the commands use it; nothing below them
//! imports it (tests/layout.rs).

use crate::browser::BrowserError;
use crate::child::ChildError;
use crate::chrome::ChromeError;
use crate::config::ConfigError;
use crate::consent::ConsentError;
use crate::daemon::DaemonError;
use crate::exit::Exit;
use crate::handoff::HandoffError;
use crate::helper::HelperError;
use crate::identity::IdentityError;
use crate::lease::LeaseError;
use crate::policy::tabs::TabArgError;
use crate::procs::ProcError;
use crate::redact::fingerprint::FingerprintError;
use crate::runtime::RuntimeError;
use crate::session::SessionError;
use crate::session::bootstrap::BootstrapError;
use crate::session::bound::BoundError;
use crate::settings::SettingsError;
use crate::staged_files::OutputsError;
use crate::tabs::TabsError;
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
    Child(#[from] ChildError),
    #[error("interrupted by {0}")]
    Interrupted(nix::sys::signal::Signal),
    #[error(transparent)]
    Chrome(#[from] ChromeError),
    #[error(transparent)]
    Browser(#[from] BrowserError),
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
    Identity(#[from] IdentityError),
    #[error(transparent)]
    Consent(#[from] ConsentError),
}

impl Error {
    pub fn exit(&self) -> Exit {
        match self {
            Error::Config(e) => e.exit(),
            Error::Runtime(e) => e.exit(),
            Error::Helper(e) => e.exit(),
            Error::Child(e) => e.exit(),
            Error::Interrupted(signal) => Exit::from(*signal),
            Error::Chrome(e) => e.exit(),
            Error::Browser(e) => e.exit(),
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
            Error::Identity(e) => e.exit(),
            Error::Consent(e) => e.exit(),
        }
    }
}

/// Gives a command's own error enum, whose `Core(Error)` variant holds
/// what it met below it, every core error by `?`, as [`Error`] takes them.
macro_rules! lifts_core {
    ($command:ident) => {
        $crate::error::lifts_core!(
            @each $command:
            $crate::error::Error,
            $crate::config::ConfigError,
            $crate::runtime::RuntimeError,
            $crate::helper::HelperError,
            $crate::child::ChildError,
            $crate::chrome::ChromeError,
            $crate::browser::BrowserError,
            $crate::token::store::StoreError,
            $crate::token::input::InputError,
            $crate::token::rotation::RotationError,
            $crate::handoff::HandoffError,
            $crate::procs::ProcError,
            $crate::lease::LeaseError,
            $crate::daemon::DaemonError,
            $crate::redact::fingerprint::FingerprintError,
            $crate::session::bootstrap::BootstrapError,
            $crate::session::SessionError,
            $crate::session::bound::BoundError,
            $crate::tabs::TabsError,
            $crate::policy::tabs::TabArgError,
            $crate::settings::SettingsError,
            $crate::staged_files::OutputsError,
            $crate::identity::IdentityError,
            $crate::consent::ConsentError
        );
    };
    (@each $command:ident: $($core:ty),*) => {
        $(
            impl From<$core> for $command {
                fn from(error: $core) -> $command {
                    $command::Core(error.into())
                }
            }
        )*
    };
}
pub(crate) use lifts_core;
