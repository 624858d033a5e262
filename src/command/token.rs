//! `my-chrome token store|migrate|forget` and the rotation commands.

use std::ffi::OsString;

use crate::child::ChildEnv;
use crate::config::{Config, keychain_field};
use crate::error::{Error, lifts_core};
use crate::exit::Exit;
use crate::output::{self, Stream};
use crate::runtime::Runtime;
use crate::token::input::{Prompt, clear_clipboard, read_clipboard, read_stdin};
use crate::token::keyring;
use crate::token::rotation::{self, RotationError, Status};
use crate::token::{Token, TokenError};
use crate::token_shape::redact_runs;

/// Why a token command did nothing.
#[derive(Debug, thiserror::Error)]
pub enum TokenCommandError {
    /// What it met below it.
    #[error(transparent)]
    Core(Error),
    /// An input that is not a token; nothing was stored.
    #[error(
        "{0}; nothing was stored. Copy the token from the Playwright Extension again and rerun \
         `my-chrome token store`"
    )]
    Token(TokenError),
    /// Said without echoing what was given.
    #[error(
        "the token is never accepted as an argument: command lines are visible to every local \
         user and end up in shell history and agent logs. Nothing was stored. Copy the token to \
         the clipboard and run `my-chrome token store`, or pipe it: `… | my-chrome token store \
         --stdin`"
    )]
    Argument,
    #[error(
        "the source item is our own item; nothing to migrate. The token is already where \
         `my-chrome connect` reads it"
    )]
    OwnItem,
    /// The item to migrate from, described with token-like runs redacted.
    #[error(
        "{} does not exist; nothing was copied. Name the item the token is stored under with \
         `--from-service` (and `--from-account`)",
        redact_runs(.0)
    )]
    NoSource(String),
    /// A token appeared while this command checked there was none.
    #[error(
        "a token was stored meanwhile, by another command; nothing was changed. Replacing or \
         deleting it is the user's step: run the command again to ask them"
    )]
    StoredMeanwhile,
    /// `token restore` with nothing to put back.
    #[error(
        "no previous token is kept ({}); nothing was changed. A token replaced by `my-chrome \
         token store` or `migrate` is kept until a `connect` with the new one succeeds",
        redact_runs(.0)
    )]
    NoPrevious(String),
}

impl TokenCommandError {
    pub fn exit(&self) -> Exit {
        match self {
            TokenCommandError::Core(e) => e.exit(),
            TokenCommandError::Token(e) => e.exit(),
            TokenCommandError::NoSource(_) | TokenCommandError::NoPrevious(_) => Exit::Token,
            TokenCommandError::StoredMeanwhile => Exit::Busy,
            TokenCommandError::Argument | TokenCommandError::OwnItem => Exit::Usage,
        }
    }
}

lifts_core!(TokenCommandError);

/// The token is never accepted as an argument; say why without echoing it.
fn refuse_arguments(extra: &[OsString]) -> Result<(), TokenCommandError> {
    if extra.is_empty() {
        return Ok(());
    }
    Err(TokenCommandError::Argument)
}

/// What `token store --stdin` says on a terminal, around the token typed
/// without echo.
struct AskToPaste;

impl Prompt for AskToPaste {
    fn ask(&self) {
        output::text(
            Stream::Err,
            &["Paste the extension token (it will not be shown), then press Enter: "],
        );
    }

    fn answered(&self) {
        output::notice("");
    }
}

/// `token store [--stdin]`.
pub fn store(
    config: &Config,
    from_stdin: bool,
    extra: &[OsString],
) -> Result<(), TokenCommandError> {
    refuse_arguments(extra)?;
    let runtime = Runtime::open(&config.runtime)?;
    let env = ChildEnv::new(config, &runtime.tmp_dir());
    let (raw, source) = if from_stdin {
        (read_stdin(&AskToPaste)?, "standard input")
    } else {
        (read_clipboard(config, &env)?, "the clipboard")
    };
    let token = Token::parse(&raw, source).map_err(TokenCommandError::Token)?;
    drop(raw);
    let ours = keyring::configured(config);
    let _lock = replacing(config, &ours, &format!("the token from {source}"))?;
    let kept = keep_previous(config, &ours)?;
    ours.write(&token)?;
    crate::output::line(&format!(
        "my-chrome: stored the token in {}",
        ours.describe()
    ));
    say_kept(kept);
    if !from_stdin {
        match clear_clipboard(config, &env) {
            Ok(()) => crate::output::line("my-chrome: cleared the clipboard"),
            Err(e) => crate::output::notice(&format!(
                "my-chrome: warning: the token is stored, but {e}; clear the clipboard yourself"
            )),
        }
    }
    Ok(())
}

/// `token migrate --from-service S [--from-account A]`: copies an existing
/// item into ours, without printing it or deleting the source. The names are
/// printed back only with token-shaped runs redacted, in case a token was
/// pasted into the wrong place.
pub fn migrate(
    config: &Config,
    service: &str,
    account: Option<&str>,
    extra: &[OsString],
) -> Result<(), TokenCommandError> {
    refuse_arguments(extra)?;
    let service = keychain_field("--from-service", service)?;
    let account = match account {
        Some(a) => keychain_field("--from-account", a)?,
        None => config.keychain_account.clone(),
    };
    if service == config.keychain_service && account == config.keychain_account {
        return Err(TokenCommandError::OwnItem);
    }
    let source = keyring::item(config, &service, &account);
    let token = source
        .read()?
        .ok_or_else(|| TokenCommandError::NoSource(source.describe()))?;
    let ours = keyring::configured(config);
    let _lock = replacing(config, &ours, &redact_runs(&source.describe()))?;
    let kept = keep_previous(config, &ours)?;
    ours.write(&token)?;
    crate::output::line(&redact_runs(&format!(
        "my-chrome: copied {} into {}; the source was left as it is",
        source.describe(),
        ours.describe()
    )));
    say_kept(kept);
    Ok(())
}

/// Before a stored token is replaced: kept as the previous one, unless one
/// is kept already (the token before every replacement since the last
/// `connect` that succeeded is the one worth going back to). A stored item
/// that holds no valid token has nothing to keep.
fn keep_previous(
    config: &Config,
    ours: &crate::token::store::Store,
) -> Result<Option<String>, TokenCommandError> {
    let previous = keyring::previous(config);
    if previous.exists()? {
        return Ok(Some(previous.describe()));
    }
    match ours.read() {
        Ok(Some(token)) => {
            previous.write(&token)?;
            Ok(Some(previous.describe()))
        }
        Ok(None) | Err(crate::token::store::StoreError::Invalid { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn say_kept(kept: Option<String>) {
    if let Some(previous) = kept {
        crate::output::line(&format!(
            "my-chrome: the token before it is kept in {previous} until a `my-chrome connect` \
             with the new one succeeds; `my-chrome token restore` puts it back (you confirm it \
             in your browser)"
        ));
    }
}

/// `token restore`: the previous token back in place of the stored one,
/// once the user confirmed it; the previous item goes.
pub fn restore(config: &Config) -> Result<(), TokenCommandError> {
    let ours = keyring::configured(config);
    let previous = keyring::previous(config);
    if !previous.exists()? {
        return Err(TokenCommandError::NoPrevious(previous.describe()));
    }
    ask(
        config,
        "put back the token my-chrome connected with before?",
        vec![
            ("Put back in".into(), ours.describe()),
            ("Taken from".into(), previous.describe()),
            ("The token stored now".into(), "is deleted".into()),
        ],
    )?;
    let _lock = locked_runtime(config)?;
    // Gone while the user read (a connect with the new one succeeded).
    let token = previous
        .read()?
        .ok_or_else(|| TokenCommandError::NoPrevious(previous.describe()))?;
    ours.write(&token)?;
    previous.delete()?;
    crate::output::line(&format!(
        "my-chrome: put the previous token back in {}",
        ours.describe()
    ));
    Ok(())
}

/// `token forget`.
pub fn forget(config: &Config) -> Result<(), TokenCommandError> {
    let ours = keyring::configured(config);
    let previous = keyring::previous(config);
    let _lock = asked_then_locked(
        config,
        || Ok(ours.exists()? || previous.exists()?),
        "delete the token my-chrome connects with?",
        vec![
            ("Deleted from".into(), ours.describe()),
            ("And the previous one from".into(), previous.describe()),
        ],
    )?;
    if previous.delete()? {
        crate::output::line(&format!(
            "my-chrome: deleted the previous token ({})",
            previous.describe()
        ));
    }
    if ours.delete()? {
        crate::output::line(&format!("my-chrome: deleted {}", ours.describe()));
    } else {
        crate::output::line(&format!(
            "my-chrome: there was no stored token ({})",
            ours.describe()
        ));
    }
    Ok(())
}

/// The token's own steps are the user's: asked in the browser.
fn ask(config: &Config, heading: &str, mut rows: Vec<(String, String)>) -> Result<(), Error> {
    rows.push(crate::consent::asked_by(config));
    let asked = crate::consent::Asked {
        heading: heading.into(),
        rows,
    };
    Ok(crate::consent::ask(config, asked)?)
}

/// The lock to write the token under: a token already stored is replaced
/// only once the user confirmed it; the first one needs no one's consent
/// (there is nothing to lose, and `connect` asks anyway).
fn replacing(
    config: &Config,
    ours: &crate::token::store::Store,
    from: &str,
) -> Result<crate::runtime::FileLock, TokenCommandError> {
    asked_then_locked(
        config,
        || ours.exists(),
        "replace the token my-chrome connects with?",
        vec![
            ("Replaced in".into(), ours.describe()),
            ("The new token comes from".into(), from.to_string()),
        ],
    )
}

/// The lock to change the stored token under. When there is a token to
/// lose (`present`), the user is asked first, before the lock is taken
/// (the answer may take minutes); when there is none, nobody is asked, so
/// one that appeared meanwhile, by another command, stops the step.
fn asked_then_locked(
    config: &Config,
    present: impl Fn() -> Result<bool, crate::token::store::StoreError>,
    heading: &str,
    rows: Vec<(String, String)>,
) -> Result<crate::runtime::FileLock, TokenCommandError> {
    let asked = present()?;
    if asked {
        ask(config, heading, rows)?;
    }
    let (_, lock) = locked_runtime(config)?;
    if !asked && present()? {
        return Err(TokenCommandError::StoredMeanwhile);
    }
    Ok(lock)
}

fn locked_runtime(
    config: &Config,
) -> Result<(Runtime, crate::runtime::FileLock), TokenCommandError> {
    let runtime = Runtime::open(&config.runtime)?;
    let lock = runtime.wrapper_lock(config.lock_wait, &crate::output::waiting_for_another)?;
    Ok((runtime, lock))
}

/// `begin-token-rotation`.
///
/// It and `mark-token-regenerated` change no token (the new one comes
/// with `token store`, which asks the user): they ask nobody.
pub fn begin_rotation(config: &Config) -> Result<(), TokenCommandError> {
    let (runtime, _lock) = locked_runtime(config)?;
    rotation::begin(&runtime, &keyring::configured(config))?;
    crate::output::line(
        "my-chrome: rotation begun. Next: regenerate the token in the Playwright Extension, store it \
         with `my-chrome token store`, then run `my-chrome mark-token-regenerated`",
    );
    Ok(())
}

/// `mark-token-regenerated`.
pub fn mark_regenerated(config: &Config) -> Result<(), TokenCommandError> {
    let (runtime, _lock) = locked_runtime(config)?;
    let pid = rotation::mark(config, &runtime, &keyring::configured(config))?;
    crate::output::line(&format!(
        "my-chrome: new token recorded. Next: quit {} (pid {pid}) completely, open it again, \
         then run `my-chrome rotation-status`",
        browser_name(config)
    ));
    Ok(())
}

/// `rotation-status`.
pub fn rotation_status(config: &Config) -> Result<(), TokenCommandError> {
    let (runtime, _lock) = locked_runtime(config)?;
    let status = rotation::status(config, &runtime, &keyring::configured(config))?;
    let browser = browser_name(config);
    crate::output::line(&format!("rotation: {}", status.line()));
    crate::output::line(&format!("next: {}", status.next_step(&browser)));
    if status == Status::Verified {
        crate::output::line("my-chrome: the rotation state was cleared");
    }
    match status.exit() {
        None => Ok(()),
        Some(_) => Err(RotationError::Blocked(status, browser).into()),
    }
}

/// The chosen browser's name for the user's next step (the rotation's
/// own checks resolved it already; a choice that cannot be made now is
/// "the browser").
fn browser_name(config: &Config) -> String {
    crate::browser::resolve(config).map_or_else(|_| "the browser".into(), |b| b.display())
}
