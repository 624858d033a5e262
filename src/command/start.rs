//! Where every command that runs the pinned CLI starts (docs/DESIGN.md,
//! "One start-up path"), in this order: the runtime opened and checked once;
//! the command's turn with the browser (the lease), when it acts on the
//! session; the wrapper lock, when it changes the session, taken before
//! anything is checked; the helper checked as far as the command needs; a
//! connect that died recovered. What is left is the session's state, read
//! from the same start. A trusted node is found only when the pinned CLI is
//! to run: a browser command spoken natively to the daemon starts no child.

use std::cell::OnceCell;

use crate::child::ChildEnv;
use crate::command::detach::Detach;
use crate::config::Config;
use crate::error::Error;
use crate::helper::check::Check;
use crate::helper::node::Node;
use crate::helper::pin::Pin;
use crate::helper::{Helper, HelperError, trusted_node};
use crate::lease::{self, HeldLease};
use crate::runtime::{FileLock, Runtime, StateFile};
use crate::session::pinned::PinnedCli;
use crate::session::registry::SessionEntry;
use crate::session::state::{self, SessionState};
use crate::session::{SessionError, bootstrap, limits};

/// What a command asks of its start.
#[must_use]
pub struct Start<'a> {
    config: &'a Config,
    check: Check,
    turn: Option<&'a str>,
    on_session: bool,
    locked: bool,
    ends_waits: bool,
    within_limits: bool,
}

impl<'a> Start<'a> {
    /// A start that checks the helper at `check`, takes no lease and no lock.
    pub fn new(config: &'a Config, check: Check) -> Start<'a> {
        Start {
            config,
            check,
            turn: None,
            on_session: false,
            locked: false,
            ends_waits: false,
            within_limits: true,
        }
    }

    /// The command will act on our session once it knows it runs
    /// something (then it takes its turn, [`Started::take_turn`]): a
    /// connect that died is recovered first all the same.
    pub fn on_session(self) -> Start<'a> {
        Start {
            on_session: true,
            ..self
        }
    }

    /// Waits for the session's turn (the command in flight) as `command`,
    /// and recovers a connect that died: the command acts on our session.
    pub fn turn(self, command: &'a str) -> Start<'a> {
        Start {
            turn: Some(command),
            ..self
        }
    }

    /// Ends the wait for an abandoned command before taking the turn
    /// (`disconnect`: letting the session go ends that too).
    pub fn ending_waits(self) -> Start<'a> {
        Start {
            ends_waits: true,
            ..self
        }
    }

    /// The command decides itself about a session past the user's limits
    /// (connect, disconnect, the watcher): its turn does not end it.
    pub fn beyond_limits(self) -> Start<'a> {
        Start {
            within_limits: false,
            ..self
        }
    }

    /// Holds the wrapper lock for the whole command (connect, disconnect).
    pub fn locked(self) -> Start<'a> {
        Start {
            locked: true,
            ..self
        }
    }

    pub fn open(self) -> Result<Started, Error> {
        let config = self.config;
        let runtime = Runtime::open(&config.runtime)?;
        if self.ends_waits {
            crate::lease::finish::stop(&runtime)?;
        }
        let lease = match self.turn {
            Some(command) => Some(lease::acquire(config, &runtime, command)?),
            None => None,
        };
        let lock = if self.locked {
            Some(runtime.wrapper_lock(config.lock_wait, &crate::output::waiting_for_another)?)
        } else {
            None
        };
        let pin = Pin::shipped();
        let helper = Helper::at(runtime.cli_dir());
        if self.check < Check::Verified {
            helper.check(pin, self.check)?;
        }
        let env = ChildEnv::new(config, &runtime.tmp_dir());
        let settings = crate::settings::load(&runtime)?;
        let mut started = Started {
            settings,
            runtime,
            helper,
            node: OnceCell::new(),
            env,
            config: config.clone(),
            lease,
            lock,
            connect_under_way: false,
            within_limits: self.within_limits,
        };
        // Before any of its code runs: the tree must be what the last full
        // check recorded (exit 6 otherwise). Without a record (an install of
        // an older release), a command that needs a supported copy verifies
        // it and records it; a detach makes do with intact.
        let recorded =
            self.check < Check::Verified && started.helper.unchanged(&started.runtime)?;
        if self.check == Check::Verified || (self.check == Check::Supported && !recorded) {
            let node = started.node()?;
            let (helper, runtime) = (&started.helper, &started.runtime);
            helper.verify(pin, node, &started.env, runtime.root())?;
            helper.record(runtime, node)?;
        }
        if self.turn.is_some() {
            started.recover()?;
            started.within_limits()?;
        } else if self.on_session {
            started.connect_under_way = !started.recover_if_free()?;
        }
        Ok(started)
    }
}

/// A session whose daemon did not answer: stale, as for any command.
pub fn stale(why: impl std::fmt::Display) -> Error {
    SessionError::unanswered(why).into()
}

fn ready(state: SessionState) -> Result<SessionEntry, Error> {
    match state {
        SessionState::Ready(entry) => Ok(entry),
        SessionState::Missing => Err(SessionError::Missing.into()),
        SessionState::Stale(why) => Err(SessionError::Stale(why).into()),
        SessionState::Unavailable(why) => Err(SessionError::Unavailable {
            why,
            nothing_was: "run",
        }
        .into()),
    }
}

/// A command's start, done: everything it runs the pinned CLI with.
pub struct Started {
    pub runtime: Runtime,
    /// The user's settings (`my-chrome setup`).
    pub settings: crate::settings::Settings,
    pub helper: Helper,
    pub env: ChildEnv,
    node: OnceCell<Node>,
    config: Config,
    lease: Option<HeldLease>,
    lock: Option<FileLock>,
    /// A connect held the wrapper lock with its record out when this
    /// command started: it decides about the session under its turn.
    connect_under_way: bool,
    /// Its turn ends a session past the user's limits (every command but
    /// connect, disconnect and the watcher).
    within_limits: bool,
}

impl Started {
    /// The configuration this command started with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The trusted node, found (by running candidates' `--version`) the
    /// first time it is needed.
    pub fn node(&self) -> Result<&Node, Error> {
        if let Some(node) = self.node.get() {
            return Ok(node);
        }
        let node =
            trusted_node(&self.config, Pin::shipped(), &self.env).map_err(HelperError::from)?;
        Ok(self.node.get_or_init(|| node))
    }

    /// The pinned CLI, token-free, for our session.
    pub fn cli(&self) -> Result<PinnedCli<'_>, Error> {
        Ok(PinnedCli {
            node: self.node()?,
            helper: &self.helper,
            env: &self.env,
            runtime: &self.runtime,
            session: &self.config.session,
        })
    }

    /// The working directory the pinned client would report to the daemon
    /// (`process.cwd()`: the runtime's real path).
    pub fn daemon_cwd(&self) -> Result<std::path::PathBuf, Error> {
        std::fs::canonicalize(self.runtime.root()).map_err(|e| SessionError::RuntimePath(e).into())
    }

    /// Our session, read natively (no Node process).
    pub fn session_state(&self) -> SessionState {
        state::session_state(
            &self.config.home,
            &self.runtime,
            &self.config.session,
            Pin::shipped().core_version(),
        )
    }

    /// `Ok` when commands can be forwarded: a missing or stale session is
    /// exit 4, the user's approval of a fresh `connect`.
    pub fn require_ready(&self) -> Result<SessionEntry, Error> {
        ready(self.session_state()).map_err(|e| self.or_ended(e))
    }

    /// When the last command's turn before this one's ended.
    pub fn last_before(&self) -> Option<u64> {
        self.lease.as_ref().and_then(HeldLease::last_before)
    }

    /// The session's detach, as this start found the session
    /// (`disconnect`, and the end at a limit).
    pub fn detaching<'s>(
        &'s self,
    ) -> Result<Detach<'s, impl Fn() -> Result<PinnedCli<'s>, Error> + 's>, Error> {
        Ok(Detach {
            config: &self.config,
            runtime: &self.runtime,
            state: self.session_state(),
            real: self.daemon_cwd()?,
            holds_lock: self.lock.is_some(),
            cli: || self.cli(),
        })
    }

    /// A session that is gone (missing, stale) because it reached one of
    /// the user's limits is said so, with which: when it ended by itself,
    /// or when it is past a limit now and its watcher is gone (the daemon
    /// ended it by its own idle timer: the end is made whole here).
    fn or_ended(&self, error: Error) -> Error {
        if !matches!(
            error,
            Error::Session(SessionError::Missing | SessionError::Stale(_))
        ) {
            return error;
        }
        let ended = || -> Result<Option<limits::Ended>, Error> {
            if limits::read(&self.runtime)
                .map_err(SessionError::from)?
                .is_none()
            {
                return Ok(limits::ended(&self.runtime).map_err(SessionError::from)?);
            }
            // An end under way (the watcher's) holds the wrapper lock until
            // it is recorded: decide after it.
            let _lock = match &self.lock {
                Some(_) => None,
                None => Some(
                    self.runtime
                        .wrapper_lock(self.config.lock_wait, &crate::output::waiting_for_another)?,
                ),
            };
            if let Some(end) = limits::ended(&self.runtime).map_err(SessionError::from)? {
                return Ok(Some(end));
            }
            let Some(limits) = limits::read(&self.runtime).map_err(SessionError::from)? else {
                return Ok(None);
            };
            let (last, busy) = lease::activity(&self.runtime)?;
            let watched = limits::watcher_runs(&limits, &crate::procs::ProcessTable::read()?);
            match limits.due(last, busy, lease::now_ms()) {
                Some(reason) if !watched => {
                    let mut detach = self.detaching()?;
                    detach.holds_lock = true;
                    Ok(Some(detach.end_by_limit(&limits, reason)?))
                }
                _ => Ok(None),
            }
        };
        match ended() {
            Ok(Some(end)) => SessionError::Ended(end).into(),
            Ok(None) => error,
            Err(e) => e,
        }
    }

    /// Under the turn: a session past one of the user's limits is ended
    /// now, as `disconnect` ends it, when its watcher has not yet (it was
    /// killed, or waits for this turn), and the command runs nothing
    /// (exit 4, saying why).
    fn within_limits(&self) -> Result<(), Error> {
        if !self.within_limits {
            return Ok(());
        }
        let Some(limits) = limits::read(&self.runtime).map_err(SessionError::from)? else {
            return Ok(());
        };
        // This turn's own record is not activity: the last command's end is.
        let Some(reason) = limits.due(self.last_before(), false, lease::now_ms()) else {
            return Ok(());
        };
        let end = self.detaching()?.end_by_limit(&limits, reason)?;
        Err(SessionError::Ended(end).into())
    }

    /// What a command that has not taken its turn yet checks: the session
    /// registered and a daemon listening on its socket (none: stale, exit
    /// 4, with no turn taken). A daemon slow to accept is left to the
    /// command's own bound, which says it does not answer.
    pub fn require_live(&self) -> Result<SessionEntry, Error> {
        let entry = self.require_registered()?;
        match entry.refused() {
            Some(why) => Err(self.or_ended(stale(why))),
            None => Ok(entry),
        }
    }

    /// The same, from the registry alone: the caller's own connection to
    /// the daemon tells whether it answers (if not, [`stale`]: exit 4).
    pub fn require_registered(&self) -> Result<SessionEntry, Error> {
        ready(state::registered_state(
            &self.config.home,
            &self.runtime,
            &self.config.session,
            Pin::shipped().core_version(),
        ))
        .map_err(|e| self.or_ended(e))
    }

    /// Takes the session's turn now, for a command that first made sure
    /// it will run something in the browser (a refusal, or no session,
    /// costs the agents waiting nothing), and recovers a connect that died.
    pub fn take_turn(mut self, command: &str) -> Result<Started, Error> {
        if self.lease.is_none() {
            self.lease = Some(lease::acquire(&self.config, &self.runtime, command)?);
            self.recover()?;
            self.within_limits()?;
        }
        Ok(self)
    }

    /// The session's turn this command holds (a start with `turn`).
    pub fn lease_mut(&mut self) -> Option<&mut HeldLease> {
        self.lease.as_mut()
    }

    /// The command went past its bound with the daemon still running it
    /// (`connection` is its): the turn passes to a process of my-chrome's
    /// that waits for the daemon's answer (`lease::finish`), so that the
    /// next command waits for it too.
    pub fn hand_over_turn(
        &mut self,
        connection: std::os::unix::net::UnixStream,
    ) -> Result<(), Error> {
        let Some(held) = self.lease.take() else {
            return Ok(());
        };
        let me = std::env::current_exe();
        let runtime = self.runtime.root().to_path_buf();
        let env = &self.env;
        Ok(held.hand_over(connection, |stdin, stdout| {
            let me = me.map_err(|e| format!("this program's path is unknown ({e})"))?;
            crate::child::ChildCommand::new(
                "my-chrome wait-abandoned",
                &me,
                &runtime,
                crate::lease::finish::CAP,
            )
            .arg("wait-abandoned")
            .arg("--runtime")
            .arg(&runtime)
            .despite_signals()
            .spawn_detached(env, stdin, stdout)
            .map_err(|e| e.to_string())
        })?)
    }

    /// The session's tabs as the agent of this command's turn finds them
    /// (a new session gets its book: the blank tab `connect` left is the
    /// first agent's to take).
    pub fn desk(
        &self,
        socket: &std::path::Path,
        after_connect: bool,
    ) -> Result<crate::tabs::Desk, Error> {
        let budget = crate::session::pinned::housekeeping(self.config.command_timeout);
        self.desk_within(socket, after_connect, budget)
    }

    /// The same, within what is left of a housekeeping bound the command
    /// already spent some of.
    pub fn desk_within(
        &self,
        socket: &std::path::Path,
        after_connect: bool,
        budget: crate::daemon::Housekeeping,
    ) -> Result<crate::tabs::Desk, Error> {
        let held = self
            .lease
            .as_ref()
            .expect("a command on the session holds its turn");
        Ok(crate::tabs::Desk::open(
            held,
            &self.runtime,
            socket,
            &self.daemon_cwd()?,
            crate::tabs::Bounds {
                housekeeping: budget,
                command: self.config.command_timeout,
                gone_after: self.settings.agent_gone,
            },
            after_connect,
        )?)
    }

    /// Before the session's turn: a connect that died is recovered when
    /// the wrapper lock is free at once. `false`: a connect holds it with
    /// its record out (under way, or recovering): the turn waits for it,
    /// and recovers under it.
    fn recover_if_free(&self) -> Result<bool, Error> {
        if self.runtime.read_state(StateFile::Bootstrap)?.is_none() {
            return Ok(true);
        }
        let _lock = match self.runtime.wrapper_lock(
            std::time::Duration::ZERO,
            &crate::output::waiting_for_another,
        ) {
            Ok(lock) => lock,
            Err(crate::runtime::RuntimeError::LockTimeout { .. }) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        bootstrap::recover(
            &self.runtime,
            &self.config.home,
            &self.config.session,
            || self.cli(),
        )?;
        Ok(true)
    }

    /// What a command checks before it takes its turn: no session (or one
    /// whose daemon is gone) is refused at once, exit 4, with no turn taken
    /// — unless a connect is under way, whose turn it then waits for,
    /// deciding under it.
    pub fn session_before_turn(&self) -> Result<(), Error> {
        if self.connect_under_way {
            return Ok(());
        }
        self.require_live().map(|_| ())
    }

    /// A connect that died left its record: its attach is stopped and its
    /// output scrubbed under the wrapper lock, before anything else runs.
    fn recover(&self) -> Result<(), Error> {
        if self.lock.is_some() {
            return bootstrap::recover(
                &self.runtime,
                &self.config.home,
                &self.config.session,
                || self.cli(),
            );
        }
        if self.runtime.read_state(StateFile::Bootstrap)?.is_some() {
            let _lock = self
                .runtime
                .wrapper_lock(self.config.lock_wait, &crate::output::waiting_for_another)?;
            bootstrap::recover(
                &self.runtime,
                &self.config.home,
                &self.config.session,
                || self.cli(),
            )?;
        }
        Ok(())
    }
}
