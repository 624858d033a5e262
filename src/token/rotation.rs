//! Token rotation, for when the token may have leaked (into a Chrome command
//! line, say). The walk: quit the exposed processes; `begin-token-rotation`
//! records the SHA-256 of the current token; the user regenerates the token in
//! the extension and stores it; `mark-token-regenerated` records the Chrome
//! that was running then; the user restarts Chrome; `rotation-status` verifies
//! that the stored token changed, Chrome was restarted, and no process
//! carries a token — then clears the state.

use serde::{Deserialize, Serialize};

use super::store::{Store, StoreError};
use crate::chrome::{self, ChromeError, ChromeState, Exposure};
use crate::config::Config;
use crate::exit::Exit;
use crate::procs::{ProcError, ProcessTable};
use crate::runtime::{Runtime, RuntimeError, StateFile};

const STATE_VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Baseline {
    version: u32,
    token_sha256: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Marker {
    version: u32,
    token_sha256: String,
    chrome_pid: u32,
    /// With the pid: a restarted Chrome that got the same pid back is still new.
    chrome_started: u64,
    /// The browser marked (its executable): only its restart counts.
    chrome: std::path::PathBuf,
}

/// Where a rotation stands.
#[derive(Debug, PartialEq, Eq)]
pub enum Status {
    NotStarted,
    /// Begun; the stored token is still the old one.
    Pending,
    /// A new token is stored but not yet marked.
    RegeneratedUnmarked,
    /// Marked; the Chrome that ran then (this pid) is still running.
    AwaitingRestart(u32),
    /// Marked; no Chrome is running now.
    AwaitingReopen,
    AmbiguousChrome(Vec<u32>),
    /// Chrome was restarted but a process still carries a token.
    RotatedProcessExposed(Vec<u32>),
    TokenMissing,
    InvalidBaseline(Invalid),
    InvalidRegenerationMarker(Invalid),
    /// Done: the state files were cleared.
    Verified,
}

/// Why a state file was not believed.
#[derive(Debug, PartialEq, Eq)]
pub struct Invalid {
    pub why: String,
    /// Unsafe (a link, shared, not ours) rather than merely malformed.
    pub unsafe_file: bool,
}

impl Status {
    pub fn name(&self) -> &'static str {
        match self {
            Status::NotStarted => "not started",
            Status::Pending => "pending",
            Status::RegeneratedUnmarked => "regenerated-unmarked",
            Status::AwaitingRestart(_) => "awaiting-restart",
            Status::AwaitingReopen => "awaiting-reopen",
            Status::AmbiguousChrome(_) => "ambiguous-chrome",
            Status::RotatedProcessExposed(_) => "rotated-process-exposed",
            Status::TokenMissing => "token-missing",
            Status::InvalidBaseline(_) => "invalid-baseline",
            Status::InvalidRegenerationMarker(_) => "invalid-regeneration-marker",
            Status::Verified => "VERIFIED",
        }
    }

    /// What the user should do next, with `browser` (its name) the one
    /// the rotation is for.
    pub fn next_step(&self, browser: &str) -> String {
        match self {
            Status::NotStarted => "nothing to do; start with `my-chrome begin-token-rotation` if the token may have leaked".into(),
            Status::Pending => "regenerate the token in the Playwright Extension, then `my-chrome token store`".into(),
            Status::RegeneratedUnmarked => format!("run `my-chrome mark-token-regenerated` with {browser} open"),
            Status::AwaitingRestart(pid) => format!("quit {browser} (pid {pid}) completely and open it again"),
            Status::AwaitingReopen => format!("open {browser} again"),
            Status::AmbiguousChrome(pids) => format!("several {browser} main processes run ({pids:?}); quit the extra ones"),
            Status::RotatedProcessExposed(pids) => format!("processes {pids:?} still carry a token: quit them"),
            Status::TokenMissing => "store the regenerated token with `my-chrome token store`".into(),
            Status::InvalidBaseline(invalid) | Status::InvalidRegenerationMarker(invalid) => {
                format!("{}; start over with `my-chrome begin-token-rotation`", invalid.why)
            }
            Status::Verified => "the rotation is complete".into(),
        }
    }

    /// How `rotation-status` exits: 0 while the walk is on track, otherwise
    /// the code of what stands in the way.
    pub fn exit(&self) -> Option<Exit> {
        match self {
            Status::InvalidBaseline(invalid) | Status::InvalidRegenerationMarker(invalid) => {
                Some(if invalid.unsafe_file {
                    Exit::Security
                } else {
                    Exit::Usage
                })
            }
            Status::RotatedProcessExposed(_) => Some(Exit::Security),
            Status::TokenMissing => Some(Exit::Token),
            Status::AmbiguousChrome(_) => Some(Exit::Chrome),
            Status::NotStarted
            | Status::Pending
            | Status::RegeneratedUnmarked
            | Status::AwaitingRestart(_)
            | Status::AwaitingReopen
            | Status::Verified => None,
        }
    }

    /// The one-line text `rotation-status` and `doctor` show.
    pub fn line(&self) -> String {
        match self {
            Status::InvalidBaseline(invalid) | Status::InvalidRegenerationMarker(invalid) => {
                format!("{}: {}", self.name(), invalid.why)
            }
            _ => self.name().to_string(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RotationError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Processes(#[from] ProcError),
    #[error(transparent)]
    Chrome(#[from] ChromeError),
    #[error(transparent)]
    Browser(#[from] crate::browser::BrowserError),
    #[error("no token is stored; store one with `my-chrome token store` first")]
    TokenMissing,
    #[error(
        "processes {0:?} carry an extension token in their command line or environment; nothing was \
         recorded. Quit them first (they hold the old token), then run `my-chrome begin-token-rotation`"
    )]
    Exposed(Vec<u32>),
    #[error("no rotation was begun; run `my-chrome begin-token-rotation` first")]
    NotStarted,
    #[error(
        "the rotation state is invalid ({}); start over with `my-chrome begin-token-rotation`",
        .0.why
    )]
    Invalid(Invalid),
    #[error(
        "a rotation is under way and a new token is already stored; nothing was changed. \
         Run `my-chrome rotation-status` for the next step"
    )]
    UnderWay,
    /// `rotation-status` found something in the way (it printed the
    /// status); the browser's name, for the next step.
    #[error("rotation is {}: {}", .0.line(), .0.next_step(.1))]
    Blocked(Status, String),
    #[error(
        "the stored token is still the one recorded when the rotation began; regenerate it in the \
         Playwright Extension and store it with `my-chrome token store`, then mark it"
    )]
    Unchanged,
}

impl RotationError {
    pub fn exit(&self) -> Exit {
        match self {
            RotationError::Store(e) => e.exit(),
            RotationError::Runtime(e) => e.exit(),
            RotationError::Chrome(e) => e.exit(),
            RotationError::Browser(e) => e.exit(),
            RotationError::Processes(_) => Exit::Failure,
            RotationError::TokenMissing | RotationError::Unchanged => Exit::Token,
            RotationError::Exposed(_) => Exit::Security,
            RotationError::Invalid(invalid) if invalid.unsafe_file => Exit::Security,
            RotationError::NotStarted | RotationError::Invalid(_) | RotationError::UnderWay => {
                Exit::Usage
            }
            RotationError::Blocked(status, _) => status.exit().unwrap_or(Exit::Failure),
        }
    }
}

/// `begin-token-rotation`: records the current token's digest.
pub fn begin(runtime: &Runtime, store: &Store) -> Result<(), RotationError> {
    if let Exposure::Exposed(pids) = chrome::token_exposure(&ProcessTable::read()?) {
        return Err(RotationError::Exposed(pids));
    }
    let token = store.read()?.ok_or(RotationError::TokenMissing)?;
    // A sound baseline with a different token stored means the walk is past
    // "pending": starting over would forget which token leaked.
    if let Ok(Some(existing)) = read::<Baseline>(runtime, StateFile::RotationBaseline)
        && existing.token_sha256 != token.sha256()
    {
        return Err(RotationError::UnderWay);
    }
    let baseline = Baseline {
        version: STATE_VERSION,
        token_sha256: token.sha256(),
    };
    runtime.write_state(StateFile::RotationBaseline, &to_json(&baseline))?;
    runtime.remove_state(StateFile::RotationMarker)?;
    Ok(())
}

/// `mark-token-regenerated`: the stored token changed; records the one
/// running Chrome, which must then be restarted.
pub fn mark(config: &Config, runtime: &Runtime, store: &Store) -> Result<u32, RotationError> {
    let baseline: Baseline = match read(runtime, StateFile::RotationBaseline) {
        Ok(Some(b)) => b,
        Ok(None) => return Err(RotationError::NotStarted),
        Err(invalid) => return Err(RotationError::Invalid(invalid)),
    };
    // Which browser first: a choice that cannot be made reads no token.
    let browser = crate::browser::resolve(config)?;
    let token = store.read()?.ok_or(RotationError::TokenMissing)?;
    if token.sha256() == baseline.token_sha256 {
        return Err(RotationError::Unchanged);
    }
    let table = ProcessTable::read()?;
    let pid = chrome::state(&table, &browser.executable)
        .single(&browser.display(), &browser.executable)?;
    let marker = Marker {
        version: STATE_VERSION,
        token_sha256: token.sha256(),
        chrome_pid: pid,
        // A start time of 0 would make this very Chrome look restarted.
        chrome_started: table.start_time(pid).ok_or_else(|| ChromeError::Missing {
            browser: browser.display(),
            path: browser.executable.clone(),
        })?,
        chrome: browser.executable.clone(),
    };
    runtime.write_state(StateFile::RotationMarker, &to_json(&marker))?;
    Ok(pid)
}

/// `rotation-status`: where the rotation stands; clears the state once verified.
pub fn status(config: &Config, runtime: &Runtime, store: &Store) -> Result<Status, RotationError> {
    let baseline: Baseline = match read(runtime, StateFile::RotationBaseline) {
        Err(invalid) => return Ok(Status::InvalidBaseline(invalid)),
        Ok(Some(b)) => b,
        Ok(None) => {
            return Ok(match read::<Marker>(runtime, StateFile::RotationMarker) {
                Ok(None) => Status::NotStarted,
                Ok(Some(_)) => Status::InvalidRegenerationMarker(orphan_marker()),
                Err(why) => Status::InvalidRegenerationMarker(why),
            });
        }
    };
    let Some(token) = store.read()? else {
        return Ok(Status::TokenMissing);
    };
    let digest = token.sha256();
    if digest == baseline.token_sha256 {
        return Ok(Status::Pending);
    }
    let marker = match read::<Marker>(runtime, StateFile::RotationMarker) {
        Err(invalid) => return Ok(Status::InvalidRegenerationMarker(invalid)),
        Ok(None) => return Ok(Status::RegeneratedUnmarked),
        // Stored again after marking: the mark no longer describes this token.
        Ok(Some(m)) if m.token_sha256 != digest => return Ok(Status::RegeneratedUnmarked),
        Ok(Some(m)) => m,
    };
    let browser = crate::browser::resolve(config)?;
    // Another browser's restart proves nothing about the one marked.
    if marker.chrome != browser.executable {
        return Ok(Status::InvalidRegenerationMarker(Invalid {
            why: format!(
                "it was marked for the browser at {}, and the browser now is {} at {}",
                marker.chrome.display(),
                browser.display(),
                browser.executable.display()
            ),
            unsafe_file: false,
        }));
    }
    let table = ProcessTable::read()?;
    let status = match chrome::state(&table, &browser.executable) {
        ChromeState::Missing => Status::AwaitingReopen,
        ChromeState::Ambiguous(pids) => Status::AmbiguousChrome(pids),
        ChromeState::Running(pid)
            if pid == marker.chrome_pid && table.start_time(pid) == Some(marker.chrome_started) =>
        {
            Status::AwaitingRestart(pid)
        }
        ChromeState::Running(_) => match chrome::token_exposure(&table) {
            Exposure::Exposed(pids) => Status::RotatedProcessExposed(pids),
            Exposure::Absent => Status::Verified,
        },
    };
    if status == Status::Verified {
        runtime.remove_state(StateFile::RotationMarker)?;
        runtime.remove_state(StateFile::RotationBaseline)?;
    }
    Ok(status)
}

/// For `doctor`, which must not read the token: only whether a rotation is
/// under way, and whether its files are sound.
pub fn summary(runtime: &Runtime) -> String {
    match read::<Baseline>(runtime, StateFile::RotationBaseline) {
        Ok(None) => match read::<Marker>(runtime, StateFile::RotationMarker) {
            Ok(None) => "not started".into(),
            Ok(Some(_)) => Status::InvalidRegenerationMarker(orphan_marker()).line(),
            Err(invalid) => Status::InvalidRegenerationMarker(invalid).line(),
        },
        Ok(Some(_)) => "in progress (run `my-chrome rotation-status`)".into(),
        Err(invalid) => Status::InvalidBaseline(invalid).line(),
    }
}

fn orphan_marker() -> Invalid {
    Invalid {
        why: "a regeneration marker without a baseline".into(),
        unsafe_file: false,
    }
}

/// A state file is believed only when it is a private file of ours (the
/// runtime checks) with exactly the expected shape.
fn read<T: for<'de> Deserialize<'de> + HasShape>(
    runtime: &Runtime,
    which: StateFile,
) -> Result<Option<T>, Invalid> {
    let bytes = match runtime.read_state(which) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(None),
        Err(RuntimeError::Unsafe { path, rule }) => {
            return Err(Invalid {
                why: format!("{}: {rule}", path.display()),
                unsafe_file: true,
            });
        }
        Err(other) => {
            return Err(Invalid {
                why: other.to_string(),
                unsafe_file: false,
            });
        }
    };
    let name = which.file_name();
    let malformed = |detail: String| Invalid {
        why: format!("{name} is malformed ({detail})"),
        unsafe_file: false,
    };
    let value: T = serde_json::from_slice(&bytes).map_err(|e| malformed(e.to_string()))?;
    if !value.well_formed() {
        return Err(malformed("unexpected version or digest".into()));
    }
    Ok(Some(value))
}

trait HasShape {
    fn well_formed(&self) -> bool;
}

fn is_digest(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

impl HasShape for Baseline {
    fn well_formed(&self) -> bool {
        self.version == STATE_VERSION && is_digest(&self.token_sha256)
    }
}

impl HasShape for Marker {
    fn well_formed(&self) -> bool {
        self.version == STATE_VERSION && is_digest(&self.token_sha256) && self.chrome_pid > 0
    }
}

fn to_json(value: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(value).expect("state serialises")
}
