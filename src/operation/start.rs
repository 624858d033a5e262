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
use crate::config::Config;
use crate::error::Error;
use crate::helper::check::Check;
use crate::helper::node::{self, Node};
use crate::helper::pin::Pin;
use crate::helper::{Helper, HelperError, known_node, trusted_node};
use crate::identity::{self, Identity};
use crate::lease::{self, HeldLease, Kind};
use crate::operation::detach::Detach;
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
    on_session: bool,
    ends_waits: bool,
}

impl<'a> Start<'a> {
    /// A start that checks the helper at `check` and takes no turn.
    pub fn new(config: &'a Config, check: Check) -> Start<'a> {
        Start {
            config,
            check,
            on_session: false,
            ends_waits: false,
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

    /// Ends the wait for an abandoned command before taking the turn
    /// (`disconnect`: letting the session go ends that too).
    pub fn ending_waits(self) -> Start<'a> {
        Start {
            ends_waits: true,
            ..self
        }
    }

    /// The start of a command that takes no turn now.
    pub fn open(self) -> Result<Started, Error> {
        let runtime = self.runtime()?;
        let mut started = self.checked(runtime, None)?;
        if self.on_session {
            started.connect_under_way = !started.recover(Wait::NotAtAll)?;
        }
        Ok(started)
    }

    /// The start of a command that changes the session itself (connect,
    /// disconnect, uninstall, the watcher): it takes the session's turn as
    /// `command` at once, then the wrapper lock for the whole command, so
    /// that every check below is under both; it recovers a connect that
    /// died, and decides itself about a session past the user's limits.
    pub fn open_turn(self, command: &str, kind: Kind) -> Result<Turn, Error> {
        let config = self.config;
        let runtime = self.runtime()?;
        // These register no name (the session starts or ends with them),
        // but a registered one still needs its key; the watcher is
        // my-chrome's own.
        let identity = match kind {
            Kind::Watcher => Identity {
                name: "my-chrome".into(),
                registration: None,
                issued: None,
            },
            _ => identity::verified(
                config,
                Some(&runtime),
                crate::settings::load(&runtime)?.agent_gone,
            )?,
        };
        let lease = lease::acquire(config, &runtime, &identity.name, command, kind)?;
        let lock = runtime.wrapper_lock(config.lock_wait, &crate::output::waiting_for_another)?;
        let started = self.checked(runtime, Some(lock))?;
        let turn = Turn {
            started,
            lease,
            identity,
        };
        turn.recover(Wait::ForLock)?;
        Ok(turn)
    }

    fn runtime(&self) -> Result<Runtime, Error> {
        let runtime = Runtime::open(&self.config.runtime)?;
        if self.ends_waits {
            crate::lease::finish::stop(&runtime)?;
        }
        Ok(runtime)
    }

    /// The helper checked as far as the command needs.
    fn checked(&self, runtime: Runtime, lock: Option<FileLock>) -> Result<Started, Error> {
        let config = self.config;
        let pin = Pin::shipped();
        let helper = Helper::at(runtime.cli_dir());
        // The files first (nothing run): a verified copy is a supported one
        // whose whole tree the last full check, or this one, vouches for.
        helper.check(pin, self.check.min(Check::Supported))?;
        let env = ChildEnv::new(config, &runtime.tmp_dir());
        let settings = crate::settings::load(&runtime)?;
        let started = Started {
            settings,
            runtime,
            helper,
            node: OnceCell::new(),
            env,
            config: config.clone(),
            lock,
            connect_under_way: false,
        };
        let (helper, runtime) = (&started.helper, &started.runtime);
        match self.check {
            // Before any of its code runs: the tree must be what the last
            // full check recorded (exit 6 otherwise). Without a record (an
            // install of an older release), a command that needs a
            // supported copy verifies it and records it; a detach makes do
            // with intact.
            Check::Intact => {
                helper.unchanged(runtime)?;
            }
            Check::Supported => {
                if !helper.unchanged(runtime)? {
                    helper.verify_and_record(pin, started.node()?, &started.env, runtime)?;
                }
            }
            // To attach: the tree digest and `--version` ran with this very
            // node when the record was taken, and the record shows every
            // entry and the node's file unchanged since, so neither runs
            // again. Anything else (no record, any difference, another
            // node) is checked in full, before any of the tree runs.
            Check::Verified => {
                let node = started.recorded_node()?;
                let proven = node::recalled_version(runtime, &node.path).is_some()
                    && matches!(helper.unchanged(runtime), Ok(true));
                if !proven {
                    helper.verify_and_record(pin, node, &started.env, runtime)?;
                }
            }
        }
        Ok(started)
    }
}

/// Which state of our session a command needs once it holds its turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Registered: the command's own connection to the daemon tells
    /// whether it answers (if not, [`stale`]: exit 4).
    Registered,
    /// Registered, and its daemon answers (`ensure`).
    Ready,
}

/// How long recovering a connect that died waits for the wrapper lock.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Before the turn: a connect holding it is under way (or recovering);
    /// the turn waits for it, and recovers under it.
    NotAtAll,
    /// Under the turn, as long as any command waits for the lock.
    ForLock,
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
    /// The wrapper lock, held for the whole command by a command that
    /// changes the session ([`Start::open_turn`]).
    lock: Option<FileLock>,
    /// A connect held the wrapper lock with its record out when this
    /// command started: it decides about the session under its turn.
    connect_under_way: bool,
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

    /// The trusted node, where one the last full check ran, its file
    /// unchanged, is not run again to learn its version (connect: the
    /// record vouches for both it and the tree).
    fn recorded_node(&self) -> Result<&Node, Error> {
        if let Some(node) = self.node.get() {
            return Ok(node);
        }
        let node = known_node(&self.config, Pin::shipped(), &self.env, &self.runtime)
            .map_err(HelperError::from)?;
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

    /// Our session as it is now, read natively (no Node process): what a
    /// command that changes the session decides on.
    pub fn session_state(&self) -> SessionState {
        state::session_state(
            &self.config.home,
            &self.runtime,
            &self.config.session,
            Pin::shipped().core_version(),
        )
    }

    /// Our session as `need` asks: a missing or stale one is exit 4, the
    /// user's approval of a fresh `connect`, said with the limit that
    /// ended it, if one did.
    fn session(&self, need: Need) -> Result<SessionEntry, Error> {
        let state = match need {
            Need::Ready => self.session_state(),
            Need::Registered => state::registered_state(
                &self.config.home,
                &self.runtime,
                &self.config.session,
                Pin::shipped().core_version(),
            ),
        };
        ready(state).map_err(|e| self.or_ended(e))
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
        match self.ended() {
            Ok(Some(end)) => SessionError::Ended(end).into(),
            Ok(None) => error,
            Err(e) => e,
        }
    }

    fn ended(&self) -> Result<Option<limits::Ended>, Error> {
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
    }

    /// Takes the session's turn as the browser command `command`, for a
    /// command that first made sure it will run something in the browser
    /// (a refusal costs the agents waiting nothing). Before the turn, no
    /// session (or one whose daemon is gone) is refused at once, exit 4,
    /// with no turn taken — unless a connect is under way, whose turn this
    /// waits for. Under the turn: a connect that died is recovered, a
    /// session past the user's limits is ended, and the session is read
    /// again as `need` asks. The turn is logged as refused until the
    /// command marks that it ran ([`HeldLease::mark_ran`]).
    ///
    /// The caller's name is proven (or registered) first, before the turn,
    /// so a refused name costs the agents waiting nothing and is never
    /// logged as that agent's; when a connect was under way, under the
    /// turn, once the session is known.
    pub fn take_turn(self, command: &str, need: Need) -> Result<(Turn, SessionEntry), Error> {
        let mut proven = None;
        if !self.connect_under_way {
            let entry = self.session(Need::Registered)?;
            if let Some(why) = entry.refused() {
                return Err(self.or_ended(stale(why)));
            }
            proven = Some(self.establish(&entry)?);
        }
        let name = match &proven {
            Some(identity) => identity.name.clone(),
            None => {
                identity::verified(&self.config, Some(&self.runtime), self.settings.agent_gone)?
                    .name
            }
        };
        let lease = lease::acquire(&self.config, &self.runtime, &name, command, Kind::Browser)?;
        let mut turn = Turn {
            started: self,
            lease,
            identity: Identity {
                name,
                registration: None,
                issued: None,
            },
        };
        turn.recover(Wait::ForLock)?;
        turn.within_limits()?;
        let entry = turn.session(need)?;
        turn.identity = match proven {
            Some(identity) => identity,
            None => match turn.establish(&entry) {
                Ok(identity) => identity,
                Err(refused) => {
                    // Refused under the turn: its end is logged, but as no
                    // agent's (the name was not proven).
                    turn.lease.agent = "(a name not proven)".into();
                    return Err(refused);
                }
            },
        };
        Ok((turn, entry))
    }

    /// The caller's name in the session `entry` names, proven or
    /// registered (`identity::establish`).
    fn establish(&self, entry: &SessionEntry) -> Result<Identity, Error> {
        let session = crate::tabs::session_key(&entry.socket_path)?;
        Ok(identity::establish(
            &self.config,
            &self.runtime,
            &session,
            self.settings.agent_gone,
        )?)
    }

    /// A connect that died left its record: its attach is stopped and its
    /// output scrubbed under the wrapper lock, before anything else runs.
    /// `false`: the lock was not free at once ([`Wait::NotAtAll`]), and
    /// nothing was recovered.
    fn recover(&self, wait: Wait) -> Result<bool, Error> {
        let recover = || {
            bootstrap::recover(
                &self.runtime,
                &self.config.home,
                &self.config.session,
                || self.cli(),
            )
        };
        if self.lock.is_some() {
            recover()?;
            return Ok(true);
        }
        if self.runtime.read_state(StateFile::Bootstrap)?.is_none() {
            return Ok(true);
        }
        let patience = match wait {
            Wait::NotAtAll => std::time::Duration::ZERO,
            Wait::ForLock => self.config.lock_wait,
        };
        let _lock = match self
            .runtime
            .wrapper_lock(patience, &crate::output::waiting_for_another)
        {
            Ok(lock) => lock,
            Err(crate::runtime::RuntimeError::LockTimeout { .. }) if wait == Wait::NotAtAll => {
                return Ok(false);
            }
            Err(e) => return Err(e.into()),
        };
        recover()?;
        Ok(true)
    }
}

/// A command's start with the session's turn held: the turn ends (and is
/// logged) when this is dropped.
pub struct Turn {
    started: Started,
    lease: HeldLease,
    /// Whom the turn is for.
    identity: Identity,
}

impl std::ops::Deref for Turn {
    type Target = Started;

    fn deref(&self) -> &Started {
        &self.started
    }
}

impl Turn {
    /// The turn itself: what the command ran, on which tab, and its log.
    pub fn lease(&mut self) -> &mut HeldLease {
        &mut self.lease
    }

    /// The registration of the agent whose turn this is (its name proven
    /// or registered under it: always, once the turn is taken).
    pub fn registration(&self) -> Option<u64> {
        self.identity.registration
    }

    /// The configuration a later turn of this same command runs with: the
    /// key, if this turn registered the name (it was printed, not given).
    pub fn config_again(&self) -> Config {
        let mut config = self.config().clone();
        if let Some(key) = &self.identity.issued {
            config.agent = Some(crate::config::Claim {
                name: self.identity.name.clone(),
                key: Some(key.clone()),
            });
        }
        config
    }

    /// When the last command's turn before this one ended.
    pub fn last_before(&self) -> Option<u64> {
        self.lease.last_before()
    }

    /// Under the turn: a session past one of the user's limits is ended
    /// now, as `disconnect` ends it, when its watcher has not yet (it was
    /// killed, or waits for this turn), and the command runs nothing
    /// (exit 4, saying why).
    fn within_limits(&self) -> Result<(), Error> {
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

    /// The command went past its bound with the daemon still running it
    /// (`connection` is its): a process of my-chrome's waits for the
    /// daemon's answer (`lease::finish`), so that the agent's next command
    /// waits for it too; the turn ends now.
    pub fn hand_over(self, connection: std::os::unix::net::UnixStream) -> Result<(), Error> {
        let Turn { started, lease, .. } = self;
        let me = std::env::current_exe();
        let runtime = started.runtime.root().to_path_buf();
        let env = &started.env;
        Ok(lease.hand_over(connection, |stdin| {
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
            .spawn_detached(env, stdin, std::process::Stdio::null())
            .map_err(|e| e.to_string())
        })?)
    }

    /// The session's tabs as the agent of this turn finds them (a new
    /// session gets its book: the blank tab `connect` left is the first
    /// agent's to take).
    pub fn desk(
        &self,
        socket: &std::path::Path,
        after: crate::tabs::After,
    ) -> Result<crate::tabs::Desk, Error> {
        // Neither the caller nor the command bound shortens it: a page may
        // take 5 s to answer the probe of a selection, and a selection the
        // daemon finished after its budget would make that tab current in
        // the middle of another agent's command.
        let budget =
            crate::session::pinned::housekeeping(crate::session::pinned::HOUSEKEEPING_TIMEOUT);
        self.desk_within(socket, after, budget)
    }

    /// What opens the session's tabs again for this turn's agent, once a
    /// command that stepped aside has the turn back (the others' commands
    /// changed the book meanwhile).
    pub fn reopener(&self, socket: &std::path::Path) -> Result<Reopen, Error> {
        Ok(Reopen {
            runtime: self.runtime.clone(),
            socket: socket.to_path_buf(),
            cwd: self.daemon_cwd()?,
            registration: self.identity.registration,
            command: self.settings.command_bound_for(self.config.command_timeout),
            gone_after: self.settings.agent_gone,
            caps: (self.settings.agent_tabs, self.settings.session_tabs),
        })
    }

    /// The same, within what is left of a housekeeping bound the command
    /// already spent some of.
    pub fn desk_within(
        &self,
        socket: &std::path::Path,
        after: crate::tabs::After,
        budget: crate::daemon::Housekeeping,
    ) -> Result<crate::tabs::Desk, Error> {
        Ok(crate::tabs::Desk::open(
            &self.lease,
            self.identity.registration,
            &self.runtime,
            socket,
            &self.daemon_cwd()?,
            crate::tabs::Bounds {
                housekeeping: budget,
                command: self.settings.command_bound_for(self.config.command_timeout),
                gone_after: self.settings.agent_gone,
                caps: (self.settings.agent_tabs, self.settings.session_tabs),
            },
            after,
        )?)
    }
}

/// The session's tabs, opened again for the agent of a turn
/// ([`Turn::reopener`]).
pub struct Reopen {
    runtime: crate::runtime::Runtime,
    socket: std::path::PathBuf,
    cwd: std::path::PathBuf,
    registration: Option<u64>,
    command: std::time::Duration,
    gone_after: std::time::Duration,
    caps: (usize, usize),
}

impl Reopen {
    /// The tabs as they are now, for the agent holding `held`.
    pub fn open(&self, held: &HeldLease) -> Result<crate::tabs::Desk, Error> {
        Ok(crate::tabs::Desk::open(
            held,
            self.registration,
            &self.runtime,
            &self.socket,
            &self.cwd,
            crate::tabs::Bounds {
                housekeeping: crate::session::pinned::housekeeping(
                    crate::session::pinned::HOUSEKEEPING_TIMEOUT,
                ),
                command: self.command,
                gone_after: self.gone_after,
                caps: self.caps,
            },
            crate::tabs::After::Command,
        )?)
    }
}
