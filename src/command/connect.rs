//! `my-chrome connect`: the one path to a fresh attachment (docs/DESIGN.md,
//! "Delivering the connect URL"). The CLI's attach runs without the token,
//! with this binary as the relay's "browser"; the courier hands us the
//! connect URL; we re-check Chrome's PID set, append the token, and deliver
//! the URL straight to the checked Chrome through its own singleton socket.
//! Then the PID set and every process's command line and environment are
//! checked again. Any failure after the attach started kills the attach,
//! detaches without the token, and scrubs the private bootstrap output.

use std::time::{Duration, Instant};

use zeroize::Zeroizing;

use crate::browser::{self, Chosen};
use crate::child::{ChildCommand, Spawned};
use crate::chrome::{self, Exposure};
use crate::command::start::{Start, Started};
use crate::config::Config;
use crate::daemon::DaemonError;
use crate::error::{CommandRefusal, Error};
use crate::exit::Exit;
use crate::handoff::{Handoff, HandoffError};
use crate::helper::check::Check;
use crate::procs::{ProcessId, ProcessTable};
use crate::session::SessionError;
use crate::session::bootstrap::Bootstrap;
use crate::session::bound;
use crate::session::connect_tab;
use crate::session::limits::{self, Limits};
use crate::session::registry;
use crate::session::state::SessionState;
use crate::settings::Settings;
use crate::signals;
use crate::singleton;
use crate::token::keyring;
use std::process::Stdio;

const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// How an attach that started can fail. What reached Chrome decides the
/// advice: the token only ever goes to the user's own Chrome, so only a
/// changed Chrome or a process holding the token calls for a rotation.
#[derive(Debug)]
enum AttachError {
    /// Nothing was sent to Chrome.
    NotSent { exit: Exit, message: String },
    /// Chrome has the connect page, and the extension never connected: it
    /// refused the token, or it is not there.
    NoAnswer { waited: Duration, browser: String },
    /// Chrome has the connect page (and the token), then something failed.
    AfterDelivery { exit: Exit, message: String },
    /// Chrome's processes changed, or a process carries the token.
    Exposed(String),
}

impl AttachError {
    fn not_sent(exit: Exit, message: impl Into<String>) -> AttachError {
        AttachError::NotSent {
            exit,
            message: message.into(),
        }
    }

    /// A failure after delivery is only what it seems once the processes
    /// are checked: a changed Chrome or a process with the token (or a table
    /// that cannot be read) makes it an exposure.
    fn confirmed(self, browser: &Chosen, before: &[u32]) -> AttachError {
        match self {
            AttachError::NoAnswer { .. } | AttachError::AfterDelivery { .. } => {
                match exposure_check(browser, before) {
                    Ok(()) => self,
                    Err(why) => AttachError::Exposed(format!("{} Then: {why}", self.explain().0)),
                }
            }
            other => other,
        }
    }

    fn exit(&self) -> Exit {
        match self {
            AttachError::NotSent { exit, .. } | AttachError::AfterDelivery { exit, .. } => *exit,
            AttachError::NoAnswer { .. } => Exit::Timeout,
            AttachError::Exposed(_) => Exit::Security,
        }
    }

    /// What happened, then (after the cleanup is said) the next step.
    fn explain(&self) -> (String, &'static str) {
        match self {
            AttachError::NotSent { message, .. } => (message.clone(), ""),
            AttachError::NoAnswer { waited, browser } => (
                format!(
                    "{browser} opened the Playwright Extension's connect page, but the extension \
                     never connected within {} s. Most likely the stored token is not the \
                     extension's current one (that tab then says \"Invalid token provided.\"), or \
                     the extension is not installed or not enabled in {browser}.",
                    waited.as_secs()
                ),
                " Open the extension's status page (its toolbar icon), copy the token shown \
                 there, store it with `my-chrome token store`, close that connect tab, and run \
                 `my-chrome connect` again. The token went only to your own browser: no \
                 rotation is needed.",
            ),
            AttachError::AfterDelivery { message, .. } => (
                message.clone(),
                " The token went only to your own browser; close the extension's connect tab \
                 there if it is still open.",
            ),
            AttachError::Exposed(message) => (message.clone(), ROTATE_ADVICE),
        }
    }
}

const ROTATE_ADVICE: &str = " Treat the token as exposed: run `my-chrome begin-token-rotation` \
                             and follow `my-chrome rotation-status`";

/// Why `connect` stopped, with what it cleaned up and the next step.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("no token is stored; store it with `my-chrome token store`")]
    NoToken,
    #[error(
        "--for {}: more than your lifetime limit of {}; nothing was read or attached. Ask for at \
         most that, or raise the limit with `my-chrome setup --lifetime-limit`",
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
    /// The relay needs this program's own path.
    #[error("cannot find this program: {0}")]
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
    /// Attached, but the private bootstrap output stayed.
    #[error("attached, but {0}")]
    Unscrubbed(String),
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

impl CommandRefusal for ConnectError {
    fn exit(&self) -> Exit {
        match self {
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

pub fn connect(config: &Config, asked_for: Option<&str>) -> Result<(), Error> {
    // Another agent's turn with the browser is not interrupted by a
    // (re)connect; the helper is verified in full before its attach runs.
    let started = Start::new(config, Check::Verified)
        .turn("connect")
        .locked()
        .beyond_limits()
        .open()?;
    // The user's limits, and no more: before anything is read or attached.
    let lifetime = granted(&started.settings, asked_for)?;
    let (runtime, helper, node, env) = (
        &started.runtime,
        &started.helper,
        started.node()?,
        &started.env,
    );
    let cli = started.cli()?;

    let mut state = started.session_state();
    // A session past the user's limits is ended as its watcher would end
    // it, and this connect attaches afresh (the user approved it).
    if let SessionState::Ready(_) = state
        && let Some(limits) = limits::read(runtime).map_err(SessionError::from)?
        && let Some(reason) = limits.due(started.last_before(), false, crate::lease::now_ms())
    {
        started.detaching()?.end_by_limit(&limits, reason)?;
        state = started.session_state();
    }
    match state {
        SessionState::Ready(entry) => {
            // Reused only for the browser chosen now, and recorded: never
            // another quietly.
            let chosen = browser::resolve(config)?;
            match browser::attached(runtime)? {
                Some(attached) if attached == chosen.executable => {}
                attached => {
                    return Err(ConnectError::OtherBrowser {
                        attached,
                        chosen: chosen.display(),
                    }
                    .into());
                }
            }
            // A daemon that takes connections but does not answer (stopped,
            // stuck) is no session to reuse.
            let budget = crate::session::pinned::housekeeping(config.command_timeout);
            if let Err(e) =
                connect_tab::close_all(&entry.socket_path, &started.daemon_cwd()?, &budget)
            {
                return Err(super::ensure::not_kept(e, &cli));
            }
            // A session attached before the door was shut has it open.
            if let Err(error) = bound::close(runtime, &config.home) {
                let detached = cli.detach();
                return Err(SessionError::Bound { error, detached }.into());
            }
            // A session made before the limits, or whose watcher is gone,
            // gets its watcher back (and limits, from now).
            let unwatched = |why: String| {
                let detached = cli.detach();
                let _ = limits::forget(runtime);
                ConnectError::Unwatched { why, detached }
            };
            // `--for` may shorten the session's lifetime, never lengthen it.
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
            if asked_for.is_some() {
                limits.ends_at = limits
                    .ends_at
                    .min(now.saturating_add(lifetime.as_millis() as u64));
            }
            let limits = if watched {
                limits::write(runtime, &limits).map_err(SessionError::from)?;
                limits
            } else {
                start_watcher(&started, limits).map_err(unwatched)?
            };
            crate::output::line(&format!(
                "my-chrome: already connected as session {}; reusing it: {}",
                config.session,
                limits.left(None, true, crate::lease::now_ms()).describe()
            ));
            return Ok(());
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
        SessionState::Missing => {}
    }
    // No daemon of ours is attached: what earlier ones left goes, and so
    // do the last session's limits and its end.
    limits::forget(runtime).map_err(SessionError::from)?;
    crate::session::leftovers::remove_recorded(runtime)?;
    crate::session::leftovers::remove_dead_socket(runtime, &config.home, &config.session);

    // The user's browser: exactly one normal main process of it, recognised
    // by an executable no other user can replace, whose singleton is in the
    // user data directory named, before the token is read.
    let browser = browser::resolve(config)?;
    let name = browser.display();
    let missing = || chrome::ChromeError::Missing {
        browser: name.clone(),
        path: browser.executable.clone(),
    };
    if !chrome::executable_is_trusted(&browser.executable)? {
        // No file there: a process still running a deleted one is no
        // browser whose executable was checked.
        return Err(missing().into());
    }
    let table = ProcessTable::read()?;
    let before = chrome::normal_chrome_pids(&table, &browser.executable);
    let chrome_pid = chrome::require_single(&before).single(&name, &browser.executable)?;
    for (other, pids) in browser::others_running(&table, &browser) {
        crate::output::notice(&format!(
            "my-chrome: {} is running too (pids {pids:?}) and was ignored: the session uses \
             {name}{}",
            other.display(),
            match browser.how {
                browser::How::Paths => String::new(),
                how => format!(" ({})", how.describe()),
            }
        ));
    }
    singleton::precheck(&browser.user_data, chrome_pid).map_err(|why| {
        ConnectError::NotItsProfile {
            browser: name.clone(),
            pid: chrome_pid,
            user_data: browser.user_data.clone(),
            why,
            hint: if config.chrome_user_data.is_some() {
                " MY_CHROME_USER_DATA_DIR must name the folder that browser runs with"
            } else {
                ""
            },
        }
    })?;
    let other = registry::other_attached(&config.home, runtime.root(), &config.session)
        .map_err(|e| SessionError::Registry(e.to_string()))?;
    if let Some(other) = other {
        return Err(SessionError::OtherAttached(other).into());
    }
    let token = keyring::configured(config)
        .read()?
        .ok_or(ConnectError::NoToken)?;
    // While the token is held anyway: what lets the redactor hide its bare
    // value in every later command's output.
    crate::token::fingerprint::record(runtime, &token)?;

    let bootstrap = Bootstrap::create(runtime, started.settings.idle_limit.map(limits::backstop))?;
    let handoff = Handoff::open(runtime)?;
    let me = std::env::current_exe().map_err(ConnectError::ThisProgram)?;
    let attach_env = env
        .clone()
        .with("PLAYWRIGHT_MCP_EXECUTABLE_PATH", &me)
        .with("MY_CHROME_HANDOFF", handoff.socket_path());
    let session_arg = format!("--session={}", config.session);
    let config_arg = format!("--config={}", bootstrap.config().display());
    let mut attach = ChildCommand::new(
        "playwright-cli attach",
        &node.path,
        runtime.root(),
        config.attach_timeout,
    )
    .arg(helper.entry())
    .args(["attach", &session_arg, "--extension=chrome", &config_arg])
    .spawn_to(&attach_env, &bootstrap.output()?)?;

    let outcome = attach_and_check(
        config,
        &browser,
        &handoff,
        &mut attach,
        &before,
        chrome_pid,
        &token,
    )
    .map_err(|error| error.confirmed(&browser, &before));
    drop(token);
    // The CLI stops the daemon it started only when interrupted, not killed.
    attach.stop_group(Duration::from_secs(5));
    // What the daemon leaves when it ends, recorded for whoever ends it
    // (no reason to leave a session half made: it is only a folder).
    if let Err(e) = crate::session::leftovers::record_new(runtime, bootstrap.artifacts_before()) {
        crate::output::notice(&format!(
            "my-chrome: the daemon's artifacts folder was not recorded ({e}); it may stay"
        ));
    }
    // The daemon bound the browser: no other process may attach through it,
    // least of all while the connect tab still carries the token.
    let outcome = outcome.and_then(|()| {
        bound::close(runtime, &config.home).map_err(|e| AttachError::AfterDelivery {
            exit: e.exit(),
            message: format!(
                "the browser the daemon bound, through which another process could attach to the \
                 session, could not be shut ({e})."
            ),
        })
    });
    // The connect tab keeps the token in its address: no session page may.
    // One housekeeping bound for all that follows (the connect tab, the
    // tab book).
    let budget = crate::session::pinned::housekeeping(config.command_timeout);
    // Set only when the daemon itself does not answer there: the one case in
    // which connect stops it (invariant 11).
    let unanswering = std::cell::Cell::new(false);
    let outcome = outcome.and_then(|()| {
        let after_delivery =
            |exit: Exit, message: String| AttachError::AfterDelivery { exit, message };
        let socket = match started.session_state() {
            SessionState::Ready(entry) => entry.socket_path,
            other => {
                return Err(after_delivery(
                    Exit::Failure,
                    format!("the session is {} after the attach.", other.name()),
                ));
            }
        };
        let cwd = started
            .daemon_cwd()
            .map_err(|e| after_delivery(Exit::Failure, format!("{e}.")))?;
        connect_tab::close_all(&socket, &cwd, &budget).map_err(|e| match e {
            connect_tab::ConnectTabError::Seen(why) => after_delivery(
                Exit::Failure,
                format!(
                    "the extension's connect tab, whose address carries the token, could not be \
                     taken out of the session ({why})."
                ),
            ),
            // Nothing was seen of the tabs: only that.
            connect_tab::ConnectTabError::Daemon(e) => {
                unanswering.set(matches!(e, DaemonError::NoAnswer(_)));
                after_delivery(e.exit(), format!("{e}."))
            }
            e @ connect_tab::ConnectTabError::Unlisted(_) => after_delivery(
                Exit::Failure,
                format!("{e}, and a session whose tabs cannot be checked is not kept."),
            ),
        })
    });
    if let Err(error) = outcome {
        // A daemon that does not answer would hold a detach for its whole
        // bound: it is stopped instead, found by exactly what it is.
        let detached = if unanswering.get() {
            stop_unanswering(&started, &config.session) || cli.detach()
        } else {
            cli.detach()
        };
        // The daemon is gone: so is what it left (a failure leaves the
        // record, for the next connect).
        if detached {
            let _ = crate::session::leftovers::remove_recorded(runtime);
        }
        let scrubbed = match bootstrap.scrub() {
            Ok(()) => " and the private bootstrap output deleted".to_string(),
            Err(why) => format!("; {why}"),
        };
        // Whatever failed, the daemon may have bound the browser first.
        let scrubbed = match bound::close(runtime, &config.home) {
            Ok(()) => format!("{scrubbed}."),
            Err(e) => format!("{scrubbed}; the bound browser was not shut: {e}."),
        };
        let (what, next) = error.explain();
        let cleaned = if detached {
            "The session was detached"
        } else {
            "Nothing stayed attached"
        };
        return Err(ConnectError::Attach {
            exit: error.exit(),
            what,
            cleaned: format!("{cleaned}{scrubbed}"),
            next,
        }
        .into());
    }
    bootstrap.scrub().map_err(ConnectError::Unscrubbed)?;
    // Which browser the session is attached to: a reusing connect and a
    // rotation go by it, so a session without it is not kept.
    if let Err(e) = browser::record_attached(runtime, &browser) {
        let detached = cli.detach();
        return Err(ConnectError::Unrecorded {
            why: e.to_string(),
            detached,
        }
        .into());
    }
    // The new session's tab book, within what is left of the bound.
    if let SessionState::Ready(entry) = started.session_state() {
        match started.desk_within(&entry.socket_path, true, budget) {
            Ok(desk) => {
                let _ = desk.save();
            }
            // Still the new session's: no command then reads an earlier
            // one's as its own (which it refuses, exit 6).
            Err(_) => {
                let _ = crate::tabs::begin_without_tabs(&started.runtime, &entry.socket_path);
            }
        }
    }
    // The session ends at the user's limits with no command run: its
    // watcher, or no session at all.
    let connected = Limits::new(
        crate::lease::now_ms(),
        started.settings.idle_limit,
        lifetime,
    );
    let limits = match start_watcher(&started, connected) {
        Ok(limits) => limits,
        Err(why) => {
            let detached = cli.detach();
            let _ = limits::forget(runtime);
            return Err(ConnectError::Unwatched { why, detached }.into());
        }
    };
    crate::output::line(&format!(
        "my-chrome: connected to {name} (pid {chrome_pid}) as session {}; the token went straight \
         to {name}; {}",
        config.session,
        limits.left(None, false, limits.connected_at).describe()
    ));
    Ok(())
}

/// The lifetime this connect grants: the user's limit, or less when asked
/// (`--for`); more is refused before anything is read or attached.
fn granted(settings: &Settings, asked: Option<&str>) -> Result<Duration, Error> {
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
        }
        .into());
    }
    Ok(asked)
}

/// Records `limits` and starts the session's watcher (`my-chrome
/// watch-session`, configured as this connect was), then records it: the
/// limits in force.
fn start_watcher(started: &Started, mut limits: Limits) -> Result<Limits, String> {
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

/// Stops our session's daemon, found by exactly what it is (invariant 11),
/// and removes the socket it leaves; whether one was stopped.
fn stop_unanswering(started: &Started, session: &str) -> bool {
    let Ok(real) = started.daemon_cwd() else {
        return false;
    };
    let Ok(table) = ProcessTable::read() else {
        return false;
    };
    let pids = crate::session::daemon_process::ours(&table, &real, session);
    let stopped = !pids.is_empty() && crate::session::daemon_process::kill_all(&pids);
    if stopped {
        crate::session::leftovers::remove_dead_socket(
            &started.runtime,
            &started.config().home,
            session,
        );
    }
    stopped
}

/// Everything between starting the attach and the last check.
fn attach_and_check(
    config: &Config,
    browser: &Chosen,
    handoff: &Handoff,
    attach: &mut Spawned,
    before: &[u32],
    chrome_pid: u32,
    token: &crate::token::Token,
) -> Result<(), AttachError> {
    let failed = |e: Error| AttachError::not_sent(e.exit(), e.to_string());
    let deadline = Instant::now() + config.attach_timeout;
    let courier = loop {
        if let Some(status) = attach.try_status().map_err(|e| failed(e.into()))? {
            return Err(AttachError::not_sent(
                Exit::Failure,
                format!(
                    "the attach ended ({status}) before the browser was asked; nothing was sent to the browser."
                ),
            ));
        }
        if Instant::now() >= deadline {
            return Err(AttachError::not_sent(
                Exit::Timeout,
                "the attach did not ask for the browser in time; nothing was sent to the browser.",
            ));
        }
        match handoff.accept(attach.pid(), Duration::from_millis(100)) {
            Ok(courier) => break courier,
            Err(HandoffError::TimedOut(_)) => continue,
            // A token was in the CLI's environment and the courier's
            // command line: exposed, though not by us.
            Err(e @ HandoffError::RefusedToken) => {
                return Err(AttachError::Exposed(format!("{e}.")));
            }
            Err(e) => return Err(AttachError::not_sent(e.exit(), format!("{e}."))),
        }
    };
    let table = ProcessTable::read().map_err(|e| failed(e.into()))?;
    let now = chrome::normal_chrome_pids(&table, &browser.executable);
    if now != before {
        courier.answer(false);
        return Err(AttachError::not_sent(
            Exit::Chrome,
            format!(
                "the main processes of {name} changed before delivery ({before:?} → {now:?}); \
                 nothing was sent to it.",
                name = browser.display()
            ),
        ));
    }
    let mut url = Zeroizing::new(courier.url.as_str().as_bytes().to_vec());
    url.extend_from_slice(b"&token=");
    url.extend_from_slice(token.expose_for_delivery());
    let delivery = singleton::deliver(
        &browser.user_data,
        chrome_pid,
        &browser.executable,
        &url,
        DELIVERY_TIMEOUT,
    );
    drop(url);
    courier.answer(delivery.is_ok());
    if let Err(e) = delivery {
        // An interrupt cuts a wait on the browser's socket short: say so.
        let name = browser.display();
        let (exit, message) = match signals::pending() {
            Some(signal) => (
                Exit::from(signal),
                format!("interrupted by {signal} while handing {name} the URL ({e})."),
            ),
            None => (e.exit(), format!("handing {name} the URL: {e}.")),
        };
        return Err(if e.sent() {
            AttachError::AfterDelivery { exit, message }
        } else {
            AttachError::not_sent(exit, message)
        });
    }
    let after_delivery = |exit: Exit, message: String| AttachError::AfterDelivery { exit, message };

    loop {
        let status = attach
            .try_status()
            .map_err(|e| after_delivery(Exit::Failure, format!("{e}.")))?;
        if let Some(status) = status {
            if !status.success() {
                return Err(after_delivery(
                    Exit::Failure,
                    format!("the attach failed ({status}) after the URL was delivered."),
                ));
            }
            break;
        }
        if let Some(signal) = signals::pending() {
            return Err(after_delivery(
                Exit::from(signal),
                format!("interrupted by {signal} during the attach."),
            ));
        }
        if Instant::now() >= deadline {
            return Err(AttachError::NoAnswer {
                waited: config.attach_timeout,
                browser: browser.display(),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }

    exposure_check(browser, before).map_err(AttachError::Exposed)
}

/// After delivery, whatever the outcome: the PID set must be the one
/// checked and no process may carry the token. A table that cannot be read
/// rules nothing out, so it counts as an exposure too.
fn exposure_check(browser: &Chosen, before: &[u32]) -> Result<(), String> {
    let table = ProcessTable::read().map_err(|e| {
        format!("the process table could not be read after delivery, so an exposure cannot be ruled out ({e}).")
    })?;
    let after = chrome::normal_chrome_pids(&table, &browser.executable);
    if after != before {
        return Err(format!(
            "the main processes of {} changed during the attach ({before:?} → {after:?}).",
            browser.display()
        ));
    }
    if let Exposure::Exposed(pids) = chrome::token_exposure(&table) {
        return Err(format!(
            "processes {pids:?} carry an extension token in their command line or environment."
        ));
    }
    Ok(())
}
