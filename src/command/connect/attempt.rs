//! One attach, as steps: the [`Launch`] (the session's daemon starting,
//! token-free), the [`Preflight`] beside it (everything checked before the
//! token is read: the browser, its PID set and singleton, no other session
//! attached; then the token), then the [`Attempt`], which owns what was
//! started (the daemon, the private bootstrap output, the hand-off socket)
//! and ends in exactly one of two ways: [`Attempt::abandon`] (detach, or
//! stop a daemon that does not answer; scrub; shut the bound browser) or
//! [`Attempt::commit`] (scrub, record, the tab book, the watcher). A
//! preflight that fails withdraws the launch ([`Launch::withdraw`]).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use zeroize::Zeroizing;

use super::{ConnectError, start_watcher};
use crate::browser::{self, Chosen};
use crate::chrome::{self, Exposure};
use crate::config::Config;
use crate::daemon::{DaemonError, Housekeeping};
use crate::exit::Exit;
use crate::handoff::{Handoff, HandoffError};
use crate::helper::DAEMON_ENTRY;
use crate::operation::start::Turn;
use crate::procs::ProcessTable;
use crate::session::SessionError;
use crate::session::bootstrap::Bootstrap;
use crate::session::daemon_process::{self, Silenced};
use crate::session::daemon_start::{Progress, Starting};
use crate::session::limits::{self, Limits};
use crate::session::pinned::PinnedCli;
use crate::session::state::SessionState;
use crate::session::{bound, connect_tab, leftovers, registry};
use crate::signals;
use crate::singleton;
use crate::token::{Token, keyring};

const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// How an attach that started can fail. What reached Chrome decides the
/// advice: the token only ever goes to the user's own Chrome, so only a
/// changed Chrome or a process holding the token calls for a rotation.
#[derive(Debug)]
pub(super) enum AttachError {
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
                 `my-chrome connect` again (or, if the token was replaced since the last \
                 connect that worked, `my-chrome token restore` puts the one before it back). \
                 The token went only to your own browser: no rotation is needed.",
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

/// What is checked before the token is read, and the token.
pub(super) struct Preflight {
    browser: Chosen,
    /// The browser's normal main processes, before.
    before: Vec<u32>,
    chrome_pid: u32,
    token: Token,
}

impl Preflight {
    /// The user's browser: exactly one normal main process of it,
    /// recognised by an executable no other user can replace, whose
    /// singleton is in the user data directory named; no other session
    /// attached. Only then ([`Checked::with_token`]) the token.
    pub(super) fn check(config: &Config, started: &Turn) -> Result<Checked, ConnectError> {
        let runtime = &started.runtime;
        let browser = browser::resolve(config)?;
        let name = browser.display();
        let table = ProcessTable::read()?;
        let (chrome_pid, before) = chrome::the_one_running(&table, &name, &browser.executable)?;
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
        // Under the user's own home too: a caller's `HOME` moves where the
        // CLI keeps its registry, not which browser is attached.
        for home in config.homes() {
            let other = registry::other_attached(home, runtime.root(), &config.session)
                .map_err(|e| SessionError::Registry(e.to_string()))?;
            if let Some(other) = other {
                return Err(SessionError::OtherAttached(other).into());
            }
        }
        Ok(Checked {
            browser,
            before,
            chrome_pid,
        })
    }
}

/// The browser checked, before the token is read (and before the user is
/// asked, so that a browser that cannot be used is said as connect says it).
pub(super) struct Checked {
    browser: Chosen,
    before: Vec<u32>,
    chrome_pid: u32,
}

impl Checked {
    /// The token, and its fingerprint recorded for the redactor.
    pub(super) fn with_token(
        self,
        config: &Config,
        started: &Turn,
    ) -> Result<Preflight, ConnectError> {
        let token = keyring::configured(config)
            .read()?
            .ok_or(ConnectError::NoToken)?;
        // While the token is held anyway: what lets the redactor hide its
        // bare value in every later command's output, and in this one's
        // own messages from here on (an error quoting the daemon's words).
        let known = crate::redact::fingerprint::record(&started.runtime, &token)?;
        crate::output::remember(&known);
        Ok(Preflight {
            browser: self.browser,
            before: self.before,
            chrome_pid: self.chrome_pid,
            token,
        })
    }
}

/// The session's daemon starting, token-free, with this program as the
/// relay's "browser" (the courier), and what it needs: it loads while the
/// browser and the token are checked (`connect` joins them in an
/// [`Attempt`]).
pub(super) struct Launch<'s> {
    started: &'s Turn,
    cli: &'s PinnedCli<'s>,
    bootstrap: Bootstrap,
    handoff: Handoff,
    /// Started as the pinned session code starts it (src/session/daemon_start.rs).
    daemon: Starting,
}

impl<'s> Launch<'s> {
    pub(super) fn start(
        started: &'s Turn,
        cli: &'s PinnedCli<'s>,
    ) -> Result<Launch<'s>, ConnectError> {
        let (config, runtime) = (started.config(), &started.runtime);
        let bootstrap =
            Bootstrap::create(runtime, started.settings.idle_limit.map(limits::backstop))?;
        let handoff = Handoff::open(runtime)?;
        let me = std::env::current_exe().map_err(ConnectError::ThisProgram)?;
        let daemon_env = started
            .env
            .clone()
            .with("PLAYWRIGHT_MCP_EXECUTABLE_PATH", &me)
            .with("MY_CHROME_HANDOFF", handoff.socket_path());
        // Named by its real path, as the pinned client names it (Node
        // resolves its own modules' links): how `daemon_process` knows it.
        let real = started.daemon_cwd()?;
        let daemon = Starting::spawn(
            &started.node()?.path,
            &real.join(crate::runtime::CLI_DIR).join(DAEMON_ENTRY),
            &config.session,
            &bootstrap.config(),
            &real,
            &daemon_env,
            &bootstrap.output()?,
        )?;
        Ok(Launch {
            started,
            cli,
            bootstrap,
            handoff,
            daemon,
        })
    }

    /// Given up before the token went anywhere (a check before it
    /// failed): the daemon, which cannot have been asked anything, stops,
    /// and what it left goes with the bootstrap output and the hand-off.
    pub(super) fn withdraw(mut self) {
        self.daemon.stop(Duration::from_secs(5));
        let runtime = &self.started.runtime;
        if leftovers::record_new(runtime, self.bootstrap.artifacts_before()).is_ok() {
            let _ = leftovers::remove_recorded(runtime);
        }
    }

    /// The attach, for the browser and the token checked.
    pub(super) fn attempt(self, preflight: &Preflight) -> Attempt<'s> {
        let config = self.started.config();
        Attempt {
            started: self.started,
            cli: self.cli,
            browser: preflight.browser.clone(),
            before: preflight.before.clone(),
            chrome_pid: preflight.chrome_pid,
            bootstrap: self.bootstrap,
            handoff: self.handoff,
            daemon: self.daemon,
            budget: crate::session::pinned::housekeeping(config.command_timeout),
            silent: false,
            rules_kept: false,
        }
    }
}

/// An attach under way, and everything it started.
pub(super) struct Attempt<'s> {
    started: &'s Turn,
    cli: &'s PinnedCli<'s>,
    browser: Chosen,
    before: Vec<u32>,
    chrome_pid: u32,
    bootstrap: Bootstrap,
    handoff: Handoff,
    daemon: Starting,
    /// One housekeeping bound for all that follows delivery (the connect
    /// tab, the tab book).
    budget: Housekeeping,
    /// Set only when the daemon itself does not answer: the one case in
    /// which connect stops it (invariant 11).
    silent: bool,
    /// The daemon answered that its rules for the tabs are in place.
    rules_kept: bool,
}

impl<'s> Attempt<'s> {
    /// Hands the connect URL, with the token, straight to the checked
    /// browser, checks the processes again, then shuts the browser the
    /// daemon bound and takes the connect tab (whose address carries the
    /// token) out of the session.
    pub(super) fn deliver(&mut self, preflight: Preflight) -> Result<(), AttachError> {
        let (config, runtime) = (self.started.config(), &self.started.runtime);
        let outcome = attach_and_check(
            config,
            &self.browser,
            &self.handoff,
            &mut self.daemon,
            &self.before,
            self.chrome_pid,
            &preflight.token,
        )
        .map_err(|error| error.confirmed(&self.browser, &self.before));
        drop(preflight);
        // A daemon that never came to serve the session stops here; one
        // that listens is detached by `abandon`, or kept.
        self.daemon.stop(Duration::from_secs(5));
        // What the daemon leaves when it ends, recorded for whoever ends it
        // (no reason to leave a session half made: it is only a folder).
        if let Err(e) = leftovers::record_new(runtime, self.bootstrap.artifacts_before()) {
            crate::output::notice(&format!(
                "my-chrome: the daemon's artifacts folder was not recorded ({e}); it may stay"
            ));
        }
        outcome?;
        // The processes are checked beside the tab swap (neither waits on
        // the other), and an exposure outweighs whatever the swap found.
        // So are the daemon's rules for the session's tabs (`tabs::stay`),
        // whose request waits out the daemon's fixed settle, once the swap
        // has its first list (`connect_tab::Listed`).
        let (browser, before) = (self.browser.clone(), self.before.clone());
        std::thread::scope(|beside| {
            let exposure = beside.spawn(|| exposure_check(&browser, &before));
            let mut kept = None;
            let swapped = self.close_bound().and_then(|()| {
                self.take_out_connect_tab(|rules| {
                    kept = Some(beside.spawn(move || {
                        let (socket, cwd, budget) = rules;
                        crate::tabs::put_rules_in_place(&socket, &cwd, &budget)
                    }));
                })
            });
            self.rules_kept = kept.is_some_and(|kept| kept.join().unwrap_or(false));
            let exposure = exposure.join().unwrap_or_else(|_| {
                Err(
                    "the process check after delivery failed, so an exposure cannot be ruled out."
                        .into(),
                )
            });
            exposure.map_err(AttachError::Exposed).and(swapped)
        })
    }

    /// The daemon bound the browser: no other process may attach through
    /// it, least of all while the connect tab still carries the token.
    fn close_bound(&self) -> Result<(), AttachError> {
        let (config, runtime) = (self.started.config(), &self.started.runtime);
        bound::close(runtime, &config.home).map_err(|e| AttachError::AfterDelivery {
            exit: e.exit(),
            message: format!(
                "the browser the daemon bound, through which another process could attach to the \
                 session, could not be shut ({e})."
            ),
        })
    }

    /// The connect tab keeps the token in its address: no session page may.
    /// `listed`: given what the daemon's rules request needs (the socket,
    /// the daemon's working directory, a bound of its own) once the first
    /// list is read, and only then.
    fn take_out_connect_tab(
        &mut self,
        listed: impl FnOnce((PathBuf, PathBuf, Housekeeping)),
    ) -> Result<(), AttachError> {
        let after_delivery =
            |exit: Exit, message: String| AttachError::AfterDelivery { exit, message };
        let socket = match self.started.session_state() {
            SessionState::Ready(entry) => entry.socket_path,
            other => {
                return Err(after_delivery(
                    Exit::Failure,
                    format!("the session is {} after the attach.", other.name()),
                ));
            }
        };
        let cwd = self
            .started
            .daemon_cwd()
            .map_err(|e| after_delivery(Exit::Failure, format!("{e}.")))?;
        // The token this connect recorded (fail closed without it).
        let known = crate::redact::fingerprint::recorded(&self.started.runtime)
            .ok()
            .flatten();
        let swapped = connect_tab::first_list(&socket, &cwd, &self.budget, known.as_ref())
            .and_then(|first| {
                let rules_budget =
                    crate::session::pinned::housekeeping(self.started.config().command_timeout);
                listed((socket.clone(), cwd.clone(), rules_budget));
                connect_tab::replace(&socket, &cwd, &self.budget, known.as_ref(), first)
            });
        swapped.map_err(|e| match e {
            connect_tab::ConnectTabError::Seen(why) => after_delivery(
                Exit::Failure,
                format!(
                    "the extension's connect tab, whose address carries the token, could not be \
                     taken out of the session ({why})."
                ),
            ),
            // Nothing was seen of the tabs: only that.
            connect_tab::ConnectTabError::Daemon(e) => {
                self.silent = matches!(e, DaemonError::NoAnswer(_));
                after_delivery(e.exit(), format!("{e}."))
            }
            e @ connect_tab::ConnectTabError::Unlisted(_) => after_delivery(
                Exit::Failure,
                format!("{e}, and a session whose tabs cannot be checked is not kept."),
            ),
        })
    }

    /// The one way an attempt is given up: the session detached (a daemon
    /// that does not answer stopped instead, found by exactly what it is),
    /// what it left removed, the private bootstrap output scrubbed, the
    /// bound browser shut; the error says all that and the next step.
    pub(super) fn abandon(self, error: AttachError) -> ConnectError {
        let (config, runtime) = (self.started.config(), &self.started.runtime);
        let detached = if self.silent {
            self.stop_silent() || self.cli.detach()
        } else {
            self.cli.detach()
        };
        // The daemon is gone: so is what it left (a failure leaves the
        // record, for the next connect).
        if detached {
            let _ = leftovers::remove_recorded(runtime);
        }
        let scrubbed = match self.bootstrap.scrub() {
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
        ConnectError::Attach {
            exit: error.exit(),
            what,
            cleaned: format!("{cleaned}{scrubbed}"),
            next,
        }
    }

    /// Stops our session's daemon that does not answer, and removes the
    /// socket it leaves; whether one was stopped.
    fn stop_silent(&self) -> bool {
        let Ok(real) = self.started.daemon_cwd() else {
            return false;
        };
        let session = &self.started.config().session;
        let stopped = matches!(
            daemon_process::stop_silent(&real, session),
            Ok(Silenced::Stopped(_))
        );
        if stopped {
            leftovers::remove_dead_socket(
                &self.started.runtime,
                &self.started.config().home,
                session,
            );
        }
        stopped
    }

    /// The one way an attempt is kept: the bootstrap output scrubbed, the
    /// browser recorded, the session's tab book begun, its watcher started
    /// (without it, no session). The limits in force.
    pub(super) fn commit(self, lifetime: Duration) -> Result<Limits, ConnectError> {
        let started = self.started;
        let runtime = &started.runtime;
        self.bootstrap.scrub().map_err(ConnectError::Unscrubbed)?;
        // Which browser the session is attached to: a reusing connect and a
        // rotation go by it, so a session without it is not kept.
        if let Err(e) = browser::record_attached(runtime, &self.browser) {
            return Err(ConnectError::Unrecorded {
                why: e.to_string(),
                detached: self.cli.detach(),
            });
        }
        // The new session's tab book, within what is left of the bound.
        if let SessionState::Ready(entry) = started.session_state() {
            let after = crate::tabs::After::Connect {
                rules_kept: self.rules_kept,
            };
            match started.desk_within(&entry.socket_path, after, self.budget) {
                Ok(mut desk) => {
                    let _ = desk.save();
                }
                // Still the new session's: no command then reads an earlier
                // one's as its own (which it refuses, exit 6).
                Err(_) => {
                    let _ = crate::tabs::begin_without_tabs(runtime, &entry.socket_path);
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
        start_watcher(started, connected).map_err(|why| {
            let detached = self.cli.detach();
            let _ = limits::forget(runtime);
            ConnectError::Unwatched { why, detached }
        })
    }

    pub(super) fn browser(&self) -> (&Chosen, u32) {
        (&self.browser, self.chrome_pid)
    }
}

/// Everything between starting the daemon and its serving the session:
/// the courier, the PID set again, delivery.
fn attach_and_check(
    config: &Config,
    browser: &Chosen,
    handoff: &Handoff,
    daemon: &mut Starting,
    before: &[u32],
    chrome_pid: u32,
    token: &Token,
) -> Result<(), AttachError> {
    let deadline = Instant::now() + config.attach_timeout;
    let courier = loop {
        let progress = daemon
            .poll()
            .map_err(|e| AttachError::not_sent(Exit::Failure, format!("{e}.")))?;
        if let Progress::Ended(status) = progress {
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
        match handoff.accept(daemon.pid(), Duration::from_millis(100)) {
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
    // The table the courier was found in, read after it connected: still
    // after the token was read, and before it goes anywhere.
    let now = chrome::normal_chrome_pids(&courier.table, &browser.executable);
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
        singleton::Opened::InFrontWindow,
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
        let progress = daemon
            .poll()
            .map_err(|e| after_delivery(Exit::Failure, format!("{e}.")))?;
        match progress {
            Progress::Listening => break,
            Progress::Ended(status) => {
                return Err(after_delivery(
                    Exit::Failure,
                    format!("the attach failed ({status}) after the URL was delivered."),
                ));
            }
            Progress::Starting => {}
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
    Ok(())
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
