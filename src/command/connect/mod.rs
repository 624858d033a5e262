//! `my-chrome connect`: the one path to a fresh attachment (docs/DESIGN.md,
//! "Delivering the connect URL"). The CLI's attach runs without the token,
//! with this binary as the relay's "browser"; the courier hands us the
//! connect URL; we re-check Chrome's PID set, append the token, and deliver
//! the URL straight to the checked Chrome through its own singleton socket.
//! Then the PID set and every process's command line and environment are
//! checked again. Any failure after the attach started kills the attach,
//! detaches without the token, and scrubs the private bootstrap output
//! (`attempt.rs`: the preflight, then an attempt that is either abandoned
//! or committed). A session that is ready is reused instead, made sure of
//! as `ensure` makes sure of it (`session/keep.rs`).

mod attempt;

use std::process::Stdio;
use std::time::Duration;

use attempt::{Launch, Preflight};

use crate::browser;
use crate::child::ChildCommand;
use crate::command::ending;
use crate::config::Config;
use crate::error::{Error, lifts_core};
use crate::exit::Exit;
use crate::helper::check::Check;
use crate::lease::Kind;
use crate::operation::start::{Start, Started, Turn};
use crate::procs::{ProcessId, ProcessTable};
use crate::session::SessionError;
use crate::session::limits::{self, Limits};
use crate::session::pinned::PinnedCli;
use crate::session::registry::SessionEntry;
use crate::session::state::SessionState;
use crate::settings::Settings;
use crate::singleton;

/// Why `connect` stopped, with what it cleaned up and the next step.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// What it met below it.
    #[error(transparent)]
    Core(Error),
    #[error("no token is stored; store it with `my-chrome token store`")]
    NoToken,
    #[error(
        "--for {}: more than your lifetime limit of {}; nothing was read or attached. Ask for at \
         most that, or ask the user to raise the limit (their setting)",
        humantime::format_duration(*.asked),
        humantime::format_duration(*.limit)
    )]
    LongerThanLimit { asked: Duration, limit: Duration },
    /// The process that ends the session at its limits could not start.
    #[error(
        "the session's watcher, which ends it at your limits, could not start ({why}), and a \
         session without one is not kept: {}",
        if *.detached {
            "the session was detached. Run `my-chrome connect` again"
        } else {
            "it could not be detached either: run `my-chrome disconnect`"
        }
    )]
    Unwatched { why: String, detached: bool },
    /// Attached, but the private bootstrap output stayed: the next command
    /// deletes it and detaches.
    #[error("attached, but {0}; then run `my-chrome connect` again")]
    Unscrubbed(String),
    /// The relay needs this program's own path.
    #[error(
        "cannot find this program's own path ({0}), which the extension's relay needs; nothing \
         was read or attached. Run `my-chrome connect` again from the installed binary"
    )]
    ThisProgram(std::io::Error),
    /// The attach failed: what happened, what was cleaned, what to do.
    #[error("{what} {cleaned}{next}")]
    Attach {
        exit: Exit,
        what: String,
        cleaned: String,
        next: &'static str,
    },
    /// Attached, but which browser could not be recorded.
    #[error(
        "which browser the session is attached to could not be recorded ({why}), so {}; run \
         `my-chrome connect` again",
        if *.detached {
            "the session was detached"
        } else {
            "the session could not be detached either: run `my-chrome disconnect` first"
        }
    )]
    Unrecorded { why: String, detached: bool },
    /// The session is attached to another browser than the one chosen, or
    /// to one nobody recorded.
    #[error(
        "the session is attached to {}, not to {chosen}; nothing was changed. `my-chrome \
         disconnect`, then `my-chrome connect` (with the user's approval) to use {chosen}",
        match .attached {
            Some(path) => format!("the browser at {}", path.display()),
            None => "a browser my-chrome did not record".to_string(),
        }
    )]
    OtherBrowser {
        attached: Option<std::path::PathBuf>,
        chosen: String,
    },
    /// The user data directory is not the running browser's.
    #[error(
        "{}: {why}. Nothing was read from the keyring or attached.{hint}",
        if matches!(.why, singleton::DeliveryError::Untrusted(_)) {
            format!("the process singleton in {} is not safe to use", .user_data.display())
        } else {
            format!(
                "{} is not where {browser} (pid {pid}) keeps its process singleton",
                .user_data.display()
            )
        }
    )]
    NotItsProfile {
        browser: String,
        pid: u32,
        user_data: std::path::PathBuf,
        why: singleton::DeliveryError,
        hint: &'static str,
    },
}

impl ConnectError {
    pub fn exit(&self) -> Exit {
        match self {
            ConnectError::Core(e) => e.exit(),
            ConnectError::NoToken => Exit::Token,
            ConnectError::LongerThanLimit { .. } => Exit::Usage,
            ConnectError::Attach { exit, .. } => *exit,
            ConnectError::NotItsProfile { why, .. } => why.exit(),
            ConnectError::OtherBrowser { .. } => Exit::Chrome,
            ConnectError::Unwatched { .. }
            | ConnectError::ThisProgram(_)
            | ConnectError::Unrecorded { .. }
            | ConnectError::Unscrubbed(_) => Exit::Failure,
        }
    }
}

lifts_core!(ConnectError);

pub fn connect(config: &Config, asked_for: Option<&str>) -> Result<(), ConnectError> {
    let asked = asked_to_end_sooner(config, asked_for)?;
    // Another agent's turn with the browser is not interrupted by a
    // (re)connect; the helper is verified in full before its attach runs.
    let started = Start::new(config, Check::Verified).open_turn("connect", Kind::Session)?;
    // The user's limits, and no more: before anything is read or attached.
    let lifetime = granted(&started.settings, asked_for)?;
    let cli = started.cli()?;
    match state_within_limits(&started)? {
        SessionState::Ready(entry) => {
            if asked_for.is_some() && ends_sooner(&started.runtime, lifetime) {
                ending::still_as_asked(&ending::at_work_now(config), &asked)
                    .map_err(Error::from)?;
            }
            return reuse(&started, &cli, &entry, lifetime, asked_for.is_some());
        }
        SessionState::Unavailable(why) => {
            return Err(SessionError::Unavailable {
                why,
                nothing_was: "attached",
            }
            .into());
        }
        // What the stale daemon bound goes with this attach's own (below).
        SessionState::Stale(_) => {
            cli.detach();
        }
        // None under this name (or this HOME), while the runtime records
        // an open session: what follows would clear its records, shared by
        // every agent in it.
        SessionState::Missing if ending::session_open(&started.runtime) => {
            return Err(SessionError::Unavailable {
                why: "a session of this runtime is open (its watcher runs) under another session \
                      name or HOME (MY_CHROME_SESSION, HOME): use the ones it was connected with"
                    .into(),
                nothing_was: "attached or removed",
            }
            .into());
        }
        SessionState::Missing => {}
    }
    // No daemon of ours is attached: what earlier ones left goes, and so
    // do the last session's limits and its end.
    let runtime = &started.runtime;
    limits::forget(runtime).map_err(SessionError::from)?;
    crate::session::leftovers::remove_recorded(runtime)?;
    crate::session::leftovers::remove_dead_socket(runtime, &config.home, &config.session);

    // The user is asked about a browser that can be used (as connect would
    // say it can not), and before anything starts.
    let asked = if started.settings.connect_consent {
        let checked = Preflight::check(config, &started)?;
        ask_the_user(config, lifetime)?;
        Some(checked)
    } else {
        None
    };
    // The daemon loads (about half a second of Node) while the browser and
    // the token are checked; nothing reaches the browser before both are.
    let launch = Launch::start(&started, &cli)?;
    let checked = match asked {
        Some(checked) => Ok(checked),
        None => Preflight::check(config, &started),
    };
    let preflight = match checked.and_then(|checked| checked.with_token(config, &started)) {
        Ok(preflight) => preflight,
        Err(e) => {
            launch.withdraw();
            return Err(e);
        }
    };
    let mut attempt = launch.attempt(&preflight);
    let (browser, chrome_pid) = attempt.browser();
    let name = browser.display();
    let limits = match attempt.deliver(preflight) {
        Ok(()) => attempt.commit(lifetime)?,
        Err(error) => return Err(attempt.abandon(error)),
    };
    forget_previous_token(config);
    crate::output::line(&format!(
        "my-chrome: connected to {name} (pid {chrome_pid}) as session {}; the token went straight \
         to {name}; {}",
        config.session,
        limits.left(None, false, limits.connected_at).describe()
    ));
    Ok(())
}

/// The stored token connected: the one it replaced (`token store` kept it
/// for a way back) is no longer needed. Failing to delete it loses
/// nothing: it is said.
fn forget_previous_token(config: &Config) {
    let previous = crate::token::keyring::previous(config);
    match previous.delete() {
        Ok(false) => {}
        Ok(true) => crate::output::line(&format!(
            "my-chrome: the token connected, so the one it replaced is no longer kept ({})",
            previous.describe()
        )),
        Err(e) => crate::output::notice(&format!(
            "my-chrome: warning: the previous token ({}) could not be deleted ({e}); `my-chrome \
             token forget` deletes both",
            previous.describe()
        )),
    }
}

/// A `--for` that ends the open session sooner ends every other agent's
/// work in it sooner: the user's step while one is at work (`ending`),
/// asked before the turn. What was asked about, to check under the turn.
fn asked_to_end_sooner(
    config: &Config,
    asked_for: Option<&str>,
) -> Result<ending::AtWork, ConnectError> {
    let lifetime = asked_for.and_then(|raw| {
        crate::settings::duration(
            "--for",
            raw,
            crate::settings::LIFETIME_LIMIT_RANGE,
            crate::settings::LIFETIME_FORMS,
        )
        .ok()
    });
    // A `--for` that does not read is refused under the turn, as ever.
    let Some(lifetime) = lifetime else {
        return Ok(ending::AtWork::default());
    };
    let Ok(Some(runtime)) = crate::runtime::Runtime::inspect(&config.runtime) else {
        return Ok(ending::AtWork::default());
    };
    if !ends_sooner(&runtime, lifetime) {
        return Ok(ending::AtWork::default());
    }
    let at_work = ending::at_work_now(config);
    let step = format!(
        "connect --for {}, sooner than it would",
        humantime::format_duration(lifetime)
    );
    ending::ask(config, &step, &at_work).map_err(Error::from)?;
    Ok(at_work)
}

/// Whether a session of `lifetime` from now ends before the recorded one.
fn ends_sooner(runtime: &crate::runtime::Runtime, lifetime: Duration) -> bool {
    let end = crate::lease::now_ms().saturating_add(lifetime.as_millis() as u64);
    limits::read(runtime)
        .ok()
        .flatten()
        .is_some_and(|recorded| end < recorded.ends_at)
}

/// "Only after the user approved", made true: the person confirms this
/// connect in the browser itself (they may turn this off, with consent).
fn ask_the_user(config: &Config, lifetime: Duration) -> Result<(), ConnectError> {
    let browser = browser::resolve(config)?;
    let asked = asking_to_connect(config, &browser.display(), lifetime);
    crate::consent::ask(config, asked).map_err(Error::from)?;
    Ok(())
}

/// What the person reads: the browser, for how long, where the session's
/// state is kept, who asks, and when that place or the home folder is not
/// the account's usual one.
fn asking_to_connect(config: &Config, browser: &str, lifetime: Duration) -> crate::consent::Asked {
    let asked = crate::consent::Asked {
        heading: format!("let agents drive {browser}?"),
        rows: vec![
            (
                "my-chrome connects to".into(),
                format!("{browser}, signed in as you"),
            ),
            (
                "For at most".into(),
                humantime::format_duration(lifetime).to_string(),
            ),
            (
                "Its settings and session are kept in".into(),
                crate::consent::page::shown(&config.runtime.path.display().to_string()),
            ),
            crate::consent::asked_by(config),
        ],
    };
    let mut asked = asked;
    let usual = config
        .account_home
        .join(crate::platform::DEFAULT_RUNTIME_UNDER_HOME);
    if config.runtime.path != usual {
        asked.rows.push((
            "Note".into(),
            format!(
                "that is not your usual place ({}): its settings, agent names and record of \
                 whose files are whose are its own; confirm only if you set that up",
                crate::consent::page::shown(&usual.display().to_string())
            ),
        ));
    }
    if config.home != config.account_home {
        asked.rows.push((
            "Warning".into(),
            format!(
                "this command runs with a home folder that is not yours ({}); confirm only if \
                 you set that up",
                crate::consent::page::shown(&config.home.display().to_string())
            ),
        ));
    }
    asked
}

/// The session as this connect finds it; one past the user's limits is
/// ended as its watcher would end it, and this connect attaches afresh
/// (the user approved it).
fn state_within_limits(started: &Turn) -> Result<SessionState, Error> {
    let state = started.session_state();
    if let SessionState::Ready(_) = state
        && let Some(limits) = limits::read(&started.runtime).map_err(SessionError::from)?
        && let Some(reason) = limits.due(started.last_before(), false, crate::lease::now_ms())
    {
        started.detaching()?.end_by_limit(&limits, reason)?;
        return Ok(started.session_state());
    }
    Ok(state)
}

/// A ready session, reused: only for the browser chosen now, made sure of
/// as `ensure` makes sure of it, and watched at the user's limits (`--for`
/// may shorten its lifetime, never lengthen it).
fn reuse(
    started: &Started,
    cli: &PinnedCli,
    entry: &SessionEntry,
    lifetime: Duration,
    shorten: bool,
) -> Result<(), ConnectError> {
    let (config, runtime) = (started.config(), &started.runtime);
    // Reused only for the browser chosen now, and recorded: never another
    // quietly.
    let chosen = browser::resolve(config)?;
    match browser::attached(runtime)? {
        Some(attached) if attached == chosen.executable => {}
        attached => {
            return Err(ConnectError::OtherBrowser {
                attached,
                chosen: chosen.display(),
            });
        }
    }
    crate::session::keep::make_sure(
        entry,
        &started.daemon_cwd()?,
        runtime,
        &config.home,
        config.command_timeout,
        cli,
    )?;
    // A session made before the limits, or whose watcher is gone, gets its
    // watcher back (and limits, from now).
    let now = crate::lease::now_ms();
    let (mut limits, watched) = match limits::read(runtime).map_err(SessionError::from)? {
        Some(limits) => {
            let watched = limits::watcher_runs(&limits, &ProcessTable::read()?);
            (limits, watched)
        }
        None => (
            Limits::new(now, started.settings.idle_limit, lifetime),
            false,
        ),
    };
    if shorten {
        limits.ends_at = limits
            .ends_at
            .min(now.saturating_add(lifetime.as_millis() as u64));
    }
    let limits = if watched {
        limits::write(runtime, &limits).map_err(SessionError::from)?;
        limits
    } else {
        start_watcher(started, limits).map_err(|why| {
            let detached = cli.detach();
            let _ = limits::forget(runtime);
            ConnectError::Unwatched { why, detached }
        })?
    };
    crate::output::line(&format!(
        "my-chrome: already connected as session {}; reusing it: {}",
        config.session,
        limits.left(None, true, crate::lease::now_ms()).describe()
    ));
    Ok(())
}

/// The lifetime this connect grants: the user's limit, or less when asked
/// (`--for`); more is refused before anything is read or attached.
fn granted(settings: &Settings, asked: Option<&str>) -> Result<Duration, ConnectError> {
    let Some(raw) = asked else {
        return Ok(settings.lifetime_limit);
    };
    let asked = crate::settings::duration(
        "--for",
        raw,
        crate::settings::LIFETIME_LIMIT_RANGE,
        crate::settings::LIFETIME_FORMS,
    )?;
    if asked > settings.lifetime_limit {
        return Err(ConnectError::LongerThanLimit {
            asked,
            limit: settings.lifetime_limit,
        });
    }
    Ok(asked)
}

/// Records `limits` and starts the session's watcher (`my-chrome
/// watch-session`, configured as this connect was), then records it: the
/// limits in force.
pub(super) fn start_watcher(started: &Started, mut limits: Limits) -> Result<Limits, String> {
    let runtime = &started.runtime;
    limits.watcher = None;
    limits::write(runtime, &limits).map_err(|e| e.to_string())?;
    let me =
        std::env::current_exe().map_err(|e| format!("this program's path is unknown ({e})"))?;
    let mut env = started.env.clone();
    for (name, value) in &started.config().my_chrome_vars {
        if let Some(name) = name.to_str() {
            env = env.with(name, value.clone());
        }
    }
    let env = env.with("MY_CHROME_RUNTIME_DIR", runtime.root());
    let pid = ChildCommand::new(
        "my-chrome watch-session",
        &me,
        runtime.root(),
        Duration::MAX,
    )
    .arg("watch-session")
    .despite_signals()
    .spawn_detached(&env, Stdio::null(), Stdio::null())
    .map_err(|e| e.to_string())?;
    limits.watcher = Some(ProcessId::of(pid).map_err(|e| e.to_string())?);
    limits::write(runtime, &limits).map_err(|e| e.to_string())?;
    Ok(limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_person_is_told_when_the_runtime_or_the_home_is_not_the_usual_one() {
        let account = nix::unistd::User::from_uid(nix::unistd::getuid())
            .unwrap()
            .unwrap()
            .dir;
        let notes = |vars: &[(&str, &std::path::Path)]| {
            let vars = vars.iter().map(|(k, v)| (k.into(), v.into()));
            let config = Config::from_vars(vars).unwrap();
            asking_to_connect(&config, "Chromium", Duration::from_secs(3600))
                .rows
                .into_iter()
                .filter(|(what, _)| what == "Note" || what == "Warning")
                .map(|(what, _)| what)
                .collect::<Vec<_>>()
        };
        assert!(notes(&[("HOME", &account)]).is_empty());
        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(
            notes(&[
                ("HOME", &account),
                ("MY_CHROME_RUNTIME_DIR", &elsewhere.path().join("rt")),
            ]),
            ["Note"]
        );
        assert_eq!(notes(&[("HOME", elsewhere.path())]), ["Note", "Warning"]);
    }
}
