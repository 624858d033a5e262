//! The private runtime directory: where the pinned CLI, its workspace, our
//! temporary files, state files and the wrapper lock live.
//!
//! Rules (invariant 5): the runtime is a real directory (not a symlink), owned
//! by us, mode exactly 0700, and carries our claim file (0600, fixed content).
//! A non-empty directory without our claim is never adopted, and we never
//! change the permissions of a directory we did not create. Any violation is
//! reported with the path and the rule, exit 6, and nothing is touched.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};
use nix::sys::signal::Signal;

use crate::config::RuntimeLocation;
use crate::exit::Exit;
use crate::signals;

pub const CLAIM_FILE: &str = ".my-chrome-runtime";
/// The claim file's exact content; anything else is a foreign or corrupted claim.
pub const CLAIM: &[u8] = b"my-chrome runtime v1: private to my-chrome; do not add files by hand\n";
const LOCK_FILE: &str = ".lock";
/// The session's lock: one browser command at a time, never waiting behind
/// a `setup` holding the wrapper lock.
const SESSION_LOCK_FILE: &str = ".session.lock";
/// The queue to the session's lock: the next ticket is in this file (read
/// and written under its own lock), and each waiter holds a lock file of
/// its own, `.turn-<ticket>.lock`, until it has the session's lock.
const TURN_TICKETS_FILE: &str = ".turn-tickets.lock";
const TURN_PREFIX: &str = ".turn-";
/// The registry of agent names' lock (src/identity/registry.rs).
const NAMES_LOCK_FILE: &str = ".names.lock";
/// The lock of `late.json` (src/lease/late.rs): its waiters write it
/// without the session's turn.
const LATE_LOCK_FILE: &str = ".late.lock";
/// Its presence makes the runtime the Playwright CLI's workspace.
pub const WORKSPACE_DIR: &str = ".playwright";
/// Handed to every child as `TMPDIR`, so the CLI daemon's socket is private.
pub const TMP_DIR: &str = "tmp";
/// Inside the private TMPDIR: the output files of a command in flight.
const OUTPUTS_DIR: &str = "outputs";
pub const CLI_DIR: &str = "cli";
/// Where the daemon registers the browser it binds (`PWTEST_SERVER_REGISTRY`),
/// inside the private TMPDIR (src/session/bound.rs).
const BOUND_REGISTRY_DIR: &str = "bound-browsers";
const STATE_LIMIT: u64 = 64 * 1024;
/// Where a setup stages a new copy, and sets the old one aside, in the
/// runtime (`command/setup.rs`).
pub const STAGING_PREFIX: &str = ".cli-setup.";
pub const ASIDE_PREFIX: &str = ".cli-old.";
/// The pinned CLI's own output of the session (src/session/bootstrap.rs).
pub const SESSION_OUTPUT: &str = "session-output";
/// The temporary files of an atomic state write.
const STATE_TEMP_PREFIX: &str = ".state.";

/// Whether `name`, directly in the runtime, is one my-chrome makes there:
/// the claim, the locks, the workspace, the private TMPDIR, the pinned CLI
/// (and a setup's staged or set-aside copy), a state file or log, the
/// session's output. Uninstall removes a runtime only when every name in
/// it is one of these (a claim copied into another folder does not make
/// that folder ours).
pub fn made_here(name: &str) -> bool {
    [
        CLAIM_FILE,
        LOCK_FILE,
        SESSION_LOCK_FILE,
        TURN_TICKETS_FILE,
        NAMES_LOCK_FILE,
        LATE_LOCK_FILE,
        WORKSPACE_DIR,
        TMP_DIR,
        CLI_DIR,
    ]
    .contains(&name)
        || StateFile::ALL.iter().any(|f| f.file_name() == name)
        || [LogFile::Lease]
            .iter()
            .any(|log| log.file_name() == name || log.older() == name)
        || [
            STAGING_PREFIX,
            ASIDE_PREFIX,
            SESSION_OUTPUT,
            STATE_TEMP_PREFIX,
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        || turn_ticket(name).is_some()
}

/// The process that holds a waiter's ticket file, as it wrote it ("pid
/// start agent"); none when unreadable (then it is waited for, as before).
fn ticket_holder(path: &Path) -> Option<crate::procs::ProcessId> {
    ticket_of(path).map(|(process, _)| process)
}

/// A waiter's ticket file: its process, and the agent it waits for.
fn ticket_of(path: &Path) -> Option<(crate::procs::ProcessId, String)> {
    let text = fs::read_to_string(path).ok()?;
    let mut words = text.trim().splitn(3, ' ');
    let (pid, start) = (words.next()?, words.next()?);
    let agent = words.next().unwrap_or_default();
    let process = crate::procs::ProcessId {
        pid: pid.parse().ok()?,
        start: start.parse().ok()?,
    };
    Some((process, agent.to_string()))
}

/// The ticket a waiter's lock file `.turn-<ticket>.lock` is named for.
fn turn_ticket(name: &str) -> Option<u64> {
    name.strip_prefix(TURN_PREFIX)?
        .strip_suffix(".lock")?
        .parse()
        .ok()
}

/// Whether `rel` (a path inside the runtime) lies where setup seals
/// read-only: the installed copy, and a copy a setup set aside or staged.
pub fn sealed_place(rel: &Path) -> bool {
    let Some(std::path::Component::Normal(first)) = rel.components().next() else {
        return false;
    };
    let first = first.to_string_lossy();
    first == CLI_DIR || first.starts_with(STAGING_PREFIX) || first.starts_with(ASIDE_PREFIX)
}

/// Whether `dir` carries my-chrome's intact claim (a foreign or corrupted
/// one is refused, exit 6).
pub fn claimed(dir: &Path) -> Result<bool, RuntimeError> {
    check_claim(dir)
}

/// The server registry our children use, inside the private TMPDIR `tmp`.
pub fn bound_registry(tmp: &Path) -> PathBuf {
    tmp.join(BOUND_REGISTRY_DIR)
}

/// The fixed list of private state files; nothing else is ever written by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateFile {
    /// SHA-256 of the token before a rotation began.
    RotationBaseline,
    /// The Chrome PID recorded when the user marked the token regenerated.
    RotationMarker,
    /// Where a connect's private bootstrap output lives, until it is scrubbed.
    Bootstrap,
    /// Which command is running on the shared browser session now.
    Lease,
    /// Commands past their bound that the daemon may still answer
    /// (src/lease/late.rs).
    Late,
    /// Every tab of the session: its id, owner and label (src/tabs/).
    Tabs,
    /// The helper tree as its last full check found it.
    HelperManifest,
    /// The stored token's salted fingerprint, for the redactor.
    TokenFingerprint,
    /// The node the last full check ran, and its file as it was then.
    NodeRecord,
    /// The browser `setup --browser NAME` chose.
    Browser,
    /// The artifacts folders our daemons made (src/session/leftovers.rs).
    Artifacts,
    /// The executable of the browser the session is attached to.
    SessionBrowser,
    /// The next tab id (src/tabs/): ids go on from it even when the book
    /// is removed.
    TabIds,
    /// The user's settings, written by `my-chrome setup` (src/settings.rs).
    Settings,
    /// The session's idle and lifetime limits and its watcher
    /// (src/session/limits.rs).
    SessionLimits,
    /// Why the session ended by itself, until the next connect or disconnect.
    SessionEnded,
    /// The agent names registered in the session (src/identity/registry.rs).
    AgentNames,
    /// Which agent's command made which file or folder in the roots
    /// (src/file_owners.rs); it outlives sessions, as the files do.
    FileOwners,
}

impl StateFile {
    /// Every state file (a unit test holds it to the enum).
    pub const ALL: [StateFile; 18] = [
        StateFile::RotationBaseline,
        StateFile::RotationMarker,
        StateFile::Bootstrap,
        StateFile::Lease,
        StateFile::Late,
        StateFile::Tabs,
        StateFile::HelperManifest,
        StateFile::TokenFingerprint,
        StateFile::NodeRecord,
        StateFile::Browser,
        StateFile::Artifacts,
        StateFile::SessionBrowser,
        StateFile::TabIds,
        StateFile::Settings,
        StateFile::SessionLimits,
        StateFile::SessionEnded,
        StateFile::AgentNames,
        StateFile::FileOwners,
    ];

    pub fn file_name(self) -> &'static str {
        match self {
            StateFile::RotationBaseline => "rotation-baseline.json",
            StateFile::RotationMarker => "rotation-marker.json",
            StateFile::Bootstrap => "bootstrap.json",
            StateFile::Lease => "lease.json",
            StateFile::Late => "late.json",
            StateFile::Tabs => "tabs.json",
            StateFile::HelperManifest => "cli-manifest.txt",
            StateFile::TokenFingerprint => "token-fingerprint.txt",
            StateFile::NodeRecord => "node-record.txt",
            StateFile::Browser => "browser.txt",
            StateFile::Artifacts => "daemon-artifacts.json",
            StateFile::SessionBrowser => "session-browser.txt",
            StateFile::TabIds => "tab-ids.txt",
            StateFile::Settings => "settings.json",
            StateFile::SessionLimits => "session-limits.json",
            StateFile::SessionEnded => "session-ended.json",
            StateFile::AgentNames => "agent-names.json",
            StateFile::FileOwners => "file-owners.json",
        }
    }

    /// Whether a write must reach the disk before it counts. The lease and
    /// the tab book are rewritten by every browser command and mean nothing
    /// after a restart (the session is gone then), so they are not synced:
    /// after a power loss either may be gone, empty or zero-filled (a lease
    /// reads as none; a book stops commands until the user reconnects). The
    /// next tab id is (it is written only when a new tab appears): ids
    /// given before a power loss are not given again. The agent names end
    /// with the session, as the book does.
    /// The most a state file may hold: the record of agents' files holds
    /// thousands of paths, every other file far less.
    pub fn limit(self) -> u64 {
        match self {
            StateFile::FileOwners => 16 * STATE_LIMIT,
            _ => STATE_LIMIT,
        }
    }

    fn durable(self) -> bool {
        !matches!(
            self,
            StateFile::Lease | StateFile::Late | StateFile::Tabs | StateFile::AgentNames
        )
    }
}

/// The private logs. Appended to, never rewritten; one older generation
/// (`<name>.1`) is kept when a log outgrows its bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFile {
    /// Which agent ran which command on which tab, waited, claimed or gave tabs back.
    Lease,
}

impl LogFile {
    pub fn file_name(self) -> &'static str {
        match self {
            LogFile::Lease => "lease.log",
        }
    }

    fn older(self) -> String {
        format!("{}.1", self.file_name())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(
        "unsafe runtime: {path}: {rule}. Nothing was changed. Fix or remove it yourself, \
         or point MY_CHROME_RUNTIME_DIR at a new directory."
    )]
    Unsafe { path: PathBuf, rule: String },
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error(
        "interrupted by {0} while waiting for another my-chrome command to finish; nothing was done"
    )]
    Interrupted(Signal),
    #[error(
        "another my-chrome command held the lock {} for {} s; nothing was done. \
         Let it finish and try again (MY_CHROME_LOCK_WAIT_SECS sets how long to wait)",
        .path.display(), .waited.as_secs()
    )]
    LockTimeout { path: PathBuf, waited: Duration },
    #[error(
        "the runtime was removed or replaced while this command waited for {} (by `my-chrome \
         uninstall`?); nothing was done. Run `my-chrome setup` if my-chrome is to be used again, \
         then this command",
        .0.display()
    )]
    Gone(PathBuf),
}

impl RuntimeError {
    pub fn exit(&self) -> Exit {
        match self {
            RuntimeError::Unsafe { .. } => Exit::Security,
            RuntimeError::Io { .. } => Exit::Failure,
            RuntimeError::Interrupted(signal) => Exit::from(*signal),
            RuntimeError::LockTimeout { .. } => Exit::Timeout,
            RuntimeError::Gone(_) => Exit::Failure,
        }
    }
}

fn unsafe_path(path: &Path, rule: impl Into<String>) -> RuntimeError {
    RuntimeError::Unsafe {
        path: path.to_path_buf(),
        rule: rule.into(),
    }
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> RuntimeError {
    let path = path.to_path_buf();
    move |source| RuntimeError::Io {
        action,
        path,
        source,
    }
}

/// Where and what kind of fault a state file's JSON has, never its text
/// (it may quote the file: an address, a name): for a message.
pub fn json_fault(e: &serde_json::Error) -> String {
    format!(
        "{:?} error at line {}, column {}",
        e.classify(),
        e.line(),
        e.column()
    )
}

/// A runtime whose checks have passed.
#[derive(Clone, Debug)]
pub struct Runtime {
    root: PathBuf,
}

impl Runtime {
    /// Opens the runtime, creating it (and its subdirectories) when missing.
    pub fn open(location: &RuntimeLocation) -> Result<Runtime, RuntimeError> {
        let root = &location.path;
        match fs::symlink_metadata(root) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => create_root(root)?,
            Err(e) => return Err(io_error("inspect", root)(e)),
            Ok(_) => {}
        }
        check_private_dir(root)?;
        if !check_claim(root)? {
            claim_if_empty(root)?;
        }
        for sub in [WORKSPACE_DIR, TMP_DIR] {
            ensure_private_subdir(&root.join(sub))?;
        }
        Ok(Runtime { root: root.clone() })
    }

    /// Checks the runtime without creating or changing anything (for
    /// `doctor`). `Ok(None)` when it does not exist yet.
    pub fn inspect(location: &RuntimeLocation) -> Result<Option<Runtime>, RuntimeError> {
        let root = &location.path;
        match fs::symlink_metadata(root) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("inspect", root)(e)),
            Ok(_) => {}
        }
        check_private_dir(root)?;
        if !check_claim(root)? && !is_empty_dir(root)? {
            return Err(unclaimed(root));
        }
        // `cli` is the helper's to check (it reports its own faults).
        for sub in [WORKSPACE_DIR, TMP_DIR] {
            let path = root.join(sub);
            if fs::symlink_metadata(&path).is_ok() {
                check_private_dir(&path)?;
            }
        }
        Ok(Some(Runtime { root: root.clone() }))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn cli_dir(&self) -> PathBuf {
        self.root.join(CLI_DIR)
    }

    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join(TMP_DIR)
    }

    /// `<runtime>/tmp/outputs`, made private when missing: where the daemon
    /// writes a command's output files before they are delivered
    /// (src/staged_files.rs).
    pub fn outputs_dir(&self) -> Result<PathBuf, RuntimeError> {
        let dir = self.tmp_dir().join(OUTPUTS_DIR);
        ensure_private_subdir(&dir)?;
        Ok(dir)
    }

    /// Takes the wrapper lock, waiting up to `wait` for other my-chrome
    /// commands (and giving up at once on SIGINT, SIGTERM or SIGHUP);
    /// `waiting` is called once, when the wait passes a second (to say so).
    /// The kernel frees it if we die.
    pub fn wrapper_lock(
        &self,
        wait: Duration,
        waiting: &dyn Fn(),
    ) -> Result<FileLock, RuntimeError> {
        self.lock_at(LOCK_FILE, wait, waiting)
    }

    /// The session's lock: held by one browser command at a time, for the
    /// whole command (docs/DESIGN.md, "Agents side by side"). Waits up to
    /// `wait`, giving up at once on SIGINT, SIGTERM or SIGHUP; a waiter
    /// gets it as soon as it is free (the kernel wakes it, no polling).
    /// Waiters get it in the order they asked (the kernel wakes a lock's
    /// waiters in no order): each takes a ticket and locks a file of its
    /// own for it, waits for the file of the ticket before it, then for the
    /// session's lock, and lets its own file go once it has that. So at
    /// most one waiter is at the session's lock, the next in line; one that
    /// gives up, dies or is stopped lets the one after it go ahead (a
    /// stopped one is passed, not ended: continued, it waits at the
    /// session's lock with the others). `waiting` is called
    /// with the time waited so far, now and then, while it waits.
    pub fn session_lock(
        &self,
        agent: Option<&str>,
        wait: Duration,
        waiting: &mut dyn FnMut(Duration),
    ) -> Result<FileLock, RuntimeError> {
        let started = Instant::now();
        let (ticket, mine) = self.take_ticket(agent, wait)?;
        if let Some(before) = ticket.checked_sub(1) {
            let name = format!("{TURN_PREFIX}{before}.lock");
            let path = self.root.join(&name);
            if path.exists() {
                // A waiter ahead that is stopped (SIGSTOP: its agent may
                // do that to its own process) keeps its place no longer:
                // this one goes on to the session's lock past it.
                let stopped = || ticket_holder(&path).is_some_and(|p| p.is_stopped());
                let ahead = self.blocking_lock(&name, wait, started, waiting, &stopped)?;
                if ahead.is_some() {
                    // Its only waiter was this one: nobody opens it again.
                    let _ = fs::remove_file(&path);
                }
                drop(ahead);
            }
        }
        let mut lock = self
            .blocking_lock(SESSION_LOCK_FILE, wait, started, waiting, &|| false)?
            .ok_or_else(|| {
                io_error("lock", &self.root.join(SESSION_LOCK_FILE))(io::ErrorKind::Other.into())
            })?;
        drop(mine);
        lock.ticket = Some(ticket);
        Ok(lock)
    }

    /// Whether a browser command of an agent other than `agent` waits in
    /// line for the session's lock behind `ticket` (the holder's; a waiter
    /// that is no browser command names no agent): a waiter's
    /// process that still runs and is not stopped. Asked by the holder, so
    /// every such waiter is waiting (or just gave up). Read from the
    /// waiters' files that are there, not from the ticket numbers given:
    /// each waiter removes the file of the one before it, so only a few
    /// are there, however many tickets were spent.
    pub fn others_in_line(&self, ticket: u64, agent: &str) -> bool {
        let Ok(names) = fs::read_dir(&self.root) else {
            return false;
        };
        names
            .flatten()
            .filter(|entry| {
                entry
                    .file_name()
                    .to_str()
                    .and_then(turn_ticket)
                    .is_some_and(|t| t > ticket)
            })
            .filter_map(|entry| ticket_of(&entry.path()))
            .any(|(process, who)| {
                !who.is_empty() && who != agent && process.is_running() && !process.is_stopped()
            })
    }

    /// A ticket for the session's lock, and the lock of its own file, made
    /// under the tickets' lock (so the file of every earlier ticket exists
    /// before a later ticket is given).
    fn take_ticket(
        &self,
        agent: Option<&str>,
        wait: Duration,
    ) -> Result<(u64, FileLock), RuntimeError> {
        let mut tickets = self.lock_at(TURN_TICKETS_FILE, wait, &|| {})?;
        let mut text = String::new();
        let file: &mut File = &mut tickets._lock;
        file.seek(io::SeekFrom::Start(0))
            .and_then(|_| file.read_to_string(&mut text))
            .map_err(io_error("read", &tickets.path))?;
        let ticket = text.trim().parse::<u64>().unwrap_or(0) + 1;
        let name = format!("{TURN_PREFIX}{ticket}.lock");
        let mut mine = self.lock_at(&name, Duration::ZERO, &|| {})?;
        // Whose ticket it is, for the waiter after it (`ticket_holder`)
        // and the holder (`others_in_line`).
        if let Ok(me) = crate::procs::ProcessId::current() {
            let file: &mut File = &mut mine._lock;
            let agent = agent.unwrap_or_default();
            let _ = file.set_len(0).and_then(|_| {
                file.write_all(format!("{} {} {agent}", me.pid, me.start).as_bytes())
            });
        }
        file.set_len(0)
            .and_then(|_| file.seek(io::SeekFrom::Start(0)))
            .and_then(|_| file.write_all(ticket.to_string().as_bytes()))
            .map_err(io_error("write", &tickets.path))?;
        Ok((ticket, mine))
    }

    /// Lock `name`, waiting in the kernel until `wait` after `started`;
    /// `None` once `give_up` says so (asked as it waits).
    fn blocking_lock(
        &self,
        name: &str,
        wait: Duration,
        started: Instant,
        waiting: &mut dyn FnMut(Duration),
        give_up: &dyn Fn() -> bool,
    ) -> Result<Option<FileLock>, RuntimeError> {
        let (file, path) = self.lock_file(name)?;
        let file = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return still_linked(lock, &path).map(Some),
            Err((file, nix::errno::Errno::EWOULDBLOCK)) => file,
            Err((_, errno)) => return Err(io_error("lock", &path)(errno.into())),
        };
        // A blocking lock in a thread of its own; if we give up, it ends
        // with the process (which then exits).
        let (send, receive) = std::sync::mpsc::channel();
        thread::spawn(move || {
            let _ = send.send(Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| e));
        });
        loop {
            match receive.recv_timeout(Duration::from_millis(50)) {
                Ok(Ok(lock)) => return still_linked(lock, &path).map(Some),
                Ok(Err(errno)) => return Err(io_error("lock", &path)(errno.into())),
                Err(_) => {}
            }
            if let Some(signal) = signals::pending() {
                return Err(RuntimeError::Interrupted(signal));
            }
            if started.elapsed() >= wait {
                return Err(RuntimeError::LockTimeout { path, waited: wait });
            }
            if give_up() {
                return Ok(None);
            }
            waiting(started.elapsed());
        }
    }

    /// The lock of the registry of agent names: held for one read and
    /// write, so a short wait.
    pub fn names_lock(&self, wait: Duration) -> Result<FileLock, RuntimeError> {
        self.lock_at(NAMES_LOCK_FILE, wait, &|| {})
    }

    /// The lock of the commands past their bound: held for a read and a
    /// write, never longer.
    pub fn late_lock(&self, wait: Duration) -> Result<FileLock, RuntimeError> {
        self.lock_at(LATE_LOCK_FILE, wait, &|| {})
    }

    fn lock_file(&self, name: &str) -> Result<(File, PathBuf), RuntimeError> {
        let path = self.root.join(name);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| refusal_or_io(e, &path, "open"))?;
        check_private_file(&file, &path)?;
        Ok((file, path))
    }

    fn lock_at(
        &self,
        name: &str,
        wait: Duration,
        waiting: &dyn Fn(),
    ) -> Result<FileLock, RuntimeError> {
        let (mut file, path) = self.lock_file(name)?;
        let started = Instant::now();
        let mut told = false;
        // Most holds are short: retry soon at first.
        let mut pause = Duration::from_millis(1);
        loop {
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(lock) => return still_linked(lock, &path),
                Err((back, nix::errno::Errno::EWOULDBLOCK)) => file = back,
                Err((_, errno)) => return Err(io_error("lock", &path)(errno.into())),
            }
            if let Some(signal) = signals::pending() {
                return Err(RuntimeError::Interrupted(signal));
            }
            if started.elapsed() >= wait {
                return Err(RuntimeError::LockTimeout { path, waited: wait });
            }
            if !told && started.elapsed() >= Duration::from_secs(1) {
                waiting();
                told = true;
            }
            thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// Reads a private state file. `Ok(None)` when it does not exist; a file
    /// that is a symlink, not ours, not 0600 or oversized is refused, exit 6.
    pub fn read_state(&self, which: StateFile) -> Result<Option<Vec<u8>>, RuntimeError> {
        let path = self.root.join(which.file_name());
        let mut file = match open_no_follow(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(refusal_or_io(e, &path, "open")),
        };
        check_private_file(&file, &path)?;
        let mut bytes = Vec::new();
        (&mut file)
            .take(which.limit() + 1)
            .read_to_end(&mut bytes)
            .map_err(io_error("read", &path))?;
        if bytes.len() as u64 > which.limit() {
            return Err(unsafe_path(
                &path,
                format!("is larger than {} bytes", which.limit()),
            ));
        }
        Ok(Some(bytes))
    }

    /// Writes a private state file atomically: a 0600 temporary file in the
    /// runtime, synced (when the file is durable), then renamed over the old
    /// one.
    pub fn write_state(&self, which: StateFile, bytes: &[u8]) -> Result<(), RuntimeError> {
        let path = self.root.join(which.file_name());
        let mut temp = tempfile::Builder::new()
            .prefix(STATE_TEMP_PREFIX)
            .tempfile_in(&self.root)
            .map_err(io_error("create a temporary file in", &self.root))?;
        temp.write_all(bytes)
            .map_err(io_error("write", temp.path()))?;
        if which.durable() {
            temp.as_file().sync_all().map_err(io_error("sync", &path))?;
        }
        // Removed when dropped: the old file after an exchange, or ours
        // when the replace failed.
        let temp = temp.into_temp_path();
        crate::platform::replace_file(&temp, &path).map_err(io_error("replace", &path))?;
        // Nothing is left at its name (the old file went with it).
        let _ = temp.keep();
        Ok(())
    }

    /// Appends `line` to a private log (created 0600; a link, another
    /// owner's file or a shared mode is refused, exit 6). When the log would
    /// outgrow `limit`, it first becomes `<name>.1`, replacing the older one.
    pub fn append_log(&self, which: LogFile, line: &[u8], limit: u64) -> Result<(), RuntimeError> {
        let path = self.root.join(which.file_name());
        let open = || {
            OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o600)
                .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
                .open(&path)
                .map_err(|e| refusal_or_io(e, &path, "open"))
        };
        let mut file = open()?;
        check_private_file(&file, &path)?;
        let size = file.metadata().map_err(io_error("inspect", &path))?.len();
        if size > 0 && size + line.len() as u64 > limit {
            fs::rename(&path, self.root.join(which.older())).map_err(io_error("rotate", &path))?;
            file = open()?;
            check_private_file(&file, &path)?;
        }
        file.write_all(line).map_err(io_error("write", &path))
    }

    /// A private log's lines, oldest first, the older generation included.
    /// Nothing when it does not exist; refused like a state file otherwise.
    pub fn read_log(&self, which: LogFile, limit: u64) -> Result<String, RuntimeError> {
        let mut text = String::new();
        for name in [which.older(), which.file_name().to_string()] {
            let path = self.root.join(name);
            let mut file = match open_no_follow(&path) {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(refusal_or_io(e, &path, "open")),
            };
            check_private_file(&file, &path)?;
            let mut bytes = Vec::new();
            (&mut file)
                .take(limit)
                .read_to_end(&mut bytes)
                .map_err(io_error("read", &path))?;
            text.push_str(&String::from_utf8_lossy(&bytes));
        }
        Ok(text)
    }

    pub fn remove_state(&self, which: StateFile) -> Result<(), RuntimeError> {
        let path = self.root.join(which.file_name());
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error("remove", &path)(e)),
            _ => Ok(()),
        }
    }
}

/// A runtime opened in a throw-away home, for unit tests (the home goes
/// when the returned directory is dropped).
#[cfg(test)]
pub(crate) fn scratch() -> (tempfile::TempDir, Runtime) {
    let home = tempfile::tempdir().unwrap();
    let location = RuntimeLocation {
        path: home.path().join("runtime"),
    };
    let runtime = Runtime::open(&location).unwrap();
    (home, runtime)
}

/// An exclusive lock on one of the runtime's lock files (the wrapper lock or
/// the lease's), held until dropped.
#[derive(Debug)]
pub struct FileLock {
    _lock: Flock<File>,
    path: PathBuf,
    /// The session's lock: the ticket it was waited for with.
    ticket: Option<u64>,
}

impl FileLock {
    /// The ticket the session's lock was taken with (`None` for any other
    /// lock).
    pub fn ticket(&self) -> Option<u64> {
        self.ticket
    }

    /// Whether the locked file is still the one at its path: not when the
    /// runtime was removed or replaced (`uninstall`) since it was taken.
    /// What a holder writes when it lets go is written only then.
    pub fn still_here(&self) -> bool {
        let Ok(held) = self._lock.metadata() else {
            return false;
        };
        fs::symlink_metadata(&self.path)
            .is_ok_and(|now| now.dev() == held.dev() && now.ino() == held.ino())
    }
}

/// A lock taken on a file that is no longer the one at `path` (the runtime
/// was removed or replaced while we waited) locks nothing anyone else
/// takes: refused.
fn still_linked(lock: Flock<File>, path: &Path) -> Result<FileLock, RuntimeError> {
    let lock = FileLock {
        _lock: lock,
        path: path.to_path_buf(),
        ticket: None,
    };
    if lock.still_here() {
        Ok(lock)
    } else {
        Err(RuntimeError::Gone(path.to_path_buf()))
    }
}

/// A directory we rely on for privacy: a real directory (not a symlink),
/// owned by us, mode exactly 0700.
pub fn check_private_dir(path: &Path) -> Result<(), RuntimeError> {
    let meta = fs::symlink_metadata(path).map_err(io_error("inspect", path))?;
    if meta.file_type().is_symlink() {
        return Err(unsafe_path(
            path,
            "is a symbolic link; it must be a real directory",
        ));
    }
    if !meta.is_dir() {
        return Err(unsafe_path(path, "is not a directory"));
    }
    check_owner_and_mode(path, &meta, 0o700)
}

/// The helper's directory: like [`check_private_dir`], but sealed read-only
/// (0500) as setup leaves it, or 0700 as older releases did.
pub fn check_helper_dir(path: &Path) -> Result<(), RuntimeError> {
    let meta = fs::symlink_metadata(path).map_err(io_error("inspect", path))?;
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return check_private_dir(path);
    }
    let mode = if meta.mode() & 0o7777 == 0o500 {
        0o500
    } else {
        0o700
    };
    check_owner_and_mode(path, &meta, mode)
}

fn check_owner_and_mode(path: &Path, meta: &fs::Metadata, mode: u32) -> Result<(), RuntimeError> {
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(unsafe_path(
            path,
            format!("is owned by uid {}, not by you (uid {me})", meta.uid()),
        ));
    }
    let actual = meta.mode() & 0o7777;
    if actual != mode {
        return Err(unsafe_path(
            path,
            format!("has mode {actual:04o}; it must be {mode:04o}"),
        ));
    }
    Ok(())
}

fn check_private_file(file: &File, path: &Path) -> Result<(), RuntimeError> {
    let meta = file.metadata().map_err(io_error("inspect", path))?;
    if !meta.is_file() {
        return Err(unsafe_path(path, "is not a regular file"));
    }
    check_owner_and_mode(path, &meta, 0o600)
}

fn open_no_follow(path: &Path) -> io::Result<File> {
    // O_NONBLOCK: a planted FIFO must not hang us before the type check.
    OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
}

/// `O_NOFOLLOW` on a symlink fails with `ELOOP`: that is a refusal, not an I/O error.
fn refusal_or_io(e: io::Error, path: &Path, action: &'static str) -> RuntimeError {
    if e.raw_os_error() == Some(nix::libc::ELOOP) {
        unsafe_path(path, "is a symbolic link; it must be a regular file")
    } else {
        io_error(action, path)(e)
    }
}

fn create_root(root: &Path) -> Result<(), RuntimeError> {
    if let Some(parent) = root.parent() {
        fs::create_dir_all(parent).map_err(io_error("create", parent))?;
    }
    match DirBuilder::new().mode(0o700).create(root) {
        // Someone else created it meanwhile: it gets the checks of any existing directory.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io_error("create", root)(e)),
        Ok(()) => write_claim(root),
    }
}

/// `Ok(true)` when our claim is there and intact; `Ok(false)` when there is none.
fn check_claim(root: &Path) -> Result<bool, RuntimeError> {
    let path = root.join(CLAIM_FILE);
    let file = match open_no_follow(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(refusal_or_io(e, &path, "open")),
    };
    check_private_file(&file, &path)?;
    let mut content = Vec::new();
    file.take(CLAIM.len() as u64 + 1)
        .read_to_end(&mut content)
        .map_err(io_error("read", &path))?;
    if content != CLAIM {
        return Err(unsafe_path(
            &path,
            "is not my-chrome's claim (foreign or corrupted content)",
        ));
    }
    Ok(true)
}

fn unclaimed(root: &Path) -> RuntimeError {
    unsafe_path(
        root,
        format!(
            "is not empty and carries no my-chrome claim file ({CLAIM_FILE}), so it is not ours to use"
        ),
    )
}

fn is_empty_dir(root: &Path) -> Result<bool, RuntimeError> {
    let mut entries = fs::read_dir(root).map_err(io_error("list", root))?;
    Ok(entries.next().is_none())
}

fn claim_if_empty(root: &Path) -> Result<(), RuntimeError> {
    if !is_empty_dir(root)? {
        return Err(unclaimed(root));
    }
    write_claim(root)
}

fn write_claim(root: &Path) -> Result<(), RuntimeError> {
    let path = root.join(CLAIM_FILE);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(io_error("create", &path))?;
    file.write_all(CLAIM).map_err(io_error("write", &path))?;
    file.sync_all().map_err(io_error("sync", &path))
}

fn ensure_private_subdir(path: &Path) -> Result<(), RuntimeError> {
    match DirBuilder::new().mode(0o700).create(path) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(io_error("create", path)(e)),
        _ => check_private_dir(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RuntimeLocation;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn is_unsafe(result: Result<impl std::fmt::Debug, RuntimeError>) -> bool {
        matches!(result, Err(RuntimeError::Unsafe { .. }))
    }

    #[test]
    fn every_state_file_is_listed_once_and_every_name_made_here_is_known() {
        let source = include_str!("runtime.rs");
        let body = &source[source.find("pub enum StateFile {").unwrap()..];
        let body = &body[..body.find("\n}").unwrap()];
        let variants = body
            .lines()
            .filter(|l| l.starts_with("    ") && l.trim_end().ends_with(',') && !l.contains("//"))
            .count();
        assert_eq!(StateFile::ALL.len(), variants, "StateFile::ALL is stale");
        let names: std::collections::BTreeSet<_> =
            StateFile::ALL.iter().map(|f| f.file_name()).collect();
        assert_eq!(names.len(), StateFile::ALL.len());
        for name in names {
            assert!(made_here(name), "{name}");
        }
        for name in [
            CLAIM_FILE,
            ".lock",
            ".session.lock",
            "cli",
            "tmp",
            ".playwright",
            "lease.log",
            "lease.log.1",
            "session-output",
            ".cli-setup.x1",
            ".cli-old.77",
            ".state.Ab12",
            ".turn-12.lock",
            ".turn-tickets.lock",
            ".late.lock",
        ] {
            assert!(made_here(name), "{name}");
        }
        for name in [".turn-x.lock", ".turn-12.lockx", ".turn-.lock"] {
            assert!(!made_here(name), "{name}");
        }
        for name in [
            "id_rsa",
            "notes.txt",
            "config",
            "lease.log.2",
            ".bashrc",
            "Cli",
            "",
        ] {
            assert!(!made_here(name), "{name}");
        }
    }

    /// A waiter's ticket file names its process as "pid start agent" (what
    /// the waiter after it checks for a stop, and the holder for whom it
    /// waits); anything else names none.
    #[test]
    fn a_ticket_names_its_waiter() {
        let (_home, runtime) = scratch();
        let path = runtime.root().join(".turn-7.lock");
        fs::write(&path, "4242 99887766 ann").unwrap();
        assert_eq!(
            ticket_of(&path),
            Some((
                crate::procs::ProcessId {
                    pid: 4242,
                    start: 99_887_766
                },
                "ann".to_string()
            ))
        );
        assert!(ticket_holder(&path).is_some());
        for other in ["", "4242", "4242 x", "x 1", "4242 x ann"] {
            fs::write(&path, other).unwrap();
            assert_eq!(ticket_holder(&path), None, "{other:?}");
        }
        assert_eq!(ticket_holder(&runtime.root().join(".turn-8.lock")), None);
    }

    /// The holder's question: does another agent's command wait behind
    /// its ticket? Its own agent's, a stopped or ended one's, an earlier
    /// ticket's, or a file that names no process, do not count.
    #[test]
    fn only_another_agents_living_waiter_behind_counts_as_in_line() {
        let (_home, runtime) = scratch();
        let held = runtime
            .session_lock(Some("ann"), Duration::ZERO, &mut |_| {})
            .unwrap();
        let mine = held.ticket().unwrap();
        assert!(!runtime.others_in_line(mine, "ann"));
        let me = crate::procs::ProcessId::current().unwrap();
        let ticket = |t: u64, text: String| {
            fs::write(runtime.root().join(format!(".turn-{t}.lock")), text).unwrap();
            fs::write(runtime.root().join(TURN_TICKETS_FILE), t.to_string()).unwrap();
        };
        ticket(mine + 1, format!("{} {} ann", me.pid, me.start));
        assert!(!runtime.others_in_line(mine, "ann"));
        ticket(
            mine + 2,
            format!("{} {} bob", me.pid, me.start.wrapping_add(1000)),
        );
        assert!(!runtime.others_in_line(mine, "ann"));
        ticket(mine + 3, "not a ticket".into());
        assert!(!runtime.others_in_line(mine, "ann"));
        // A waiter that is no browser command (disconnect, uninstall).
        ticket(mine + 5, format!("{} {} ", me.pid, me.start));
        assert!(!runtime.others_in_line(mine, "ann"));
        ticket(mine + 4, format!("{} {} bob", me.pid, me.start));
        assert!(runtime.others_in_line(mine, "ann"));
        assert!(!runtime.others_in_line(mine + 4, "ann"));
        // However many tickets were given before it (an attack spent a
        // thousand under the holder's name), a waiter is found.
        fs::write(runtime.root().join(TURN_TICKETS_FILE), "5000").unwrap();
        ticket(mine + 4000, format!("{} {} bob", me.pid, me.start));
        fs::remove_file(runtime.root().join(format!(".turn-{}.lock", mine + 4))).unwrap();
        assert!(runtime.others_in_line(mine, "ann"));
        drop(held);
    }

    #[test]
    fn a_lock_got_after_the_runtime_went_is_refused_not_held() {
        let (home, runtime) = scratch();
        let quiet = || {};
        for (name, take) in [
            (
                LOCK_FILE,
                &(|r: &Runtime| r.wrapper_lock(Duration::from_secs(10), &quiet).map(drop))
                    as &(dyn Fn(&Runtime) -> Result<(), RuntimeError> + Sync),
            ),
            (SESSION_LOCK_FILE, &|r: &Runtime| {
                r.session_lock(None, Duration::from_secs(10), &mut |_| {})
                    .map(drop)
            }),
        ] {
            let held = match name {
                LOCK_FILE => runtime.wrapper_lock(Duration::ZERO, &quiet).unwrap(),
                _ => runtime
                    .session_lock(None, Duration::ZERO, &mut |_| {})
                    .unwrap(),
            };
            let waiter = runtime.clone();
            let waiting = std::thread::scope(|scope| {
                let waiting = scope.spawn(|| take(&waiter));
                std::thread::sleep(Duration::from_millis(300));
                // The runtime goes (uninstall), then the holder lets go.
                fs::remove_file(runtime.root().join(name)).unwrap();
                drop(held);
                waiting.join().unwrap()
            });
            assert!(
                matches!(&waiting, Err(RuntimeError::Gone(path)) if path.ends_with(name)),
                "{name}: {waiting:?}"
            );
            assert_eq!(waiting.unwrap_err().exit(), Exit::Failure);
            // A lock on the file that is there is taken as before.
            take(&runtime).unwrap();
        }
        drop(home);
    }

    #[test]
    fn the_session_lock_goes_to_its_waiters_in_the_order_they_asked() {
        let (_home, runtime) = scratch();
        for _round in 0..2 {
            let held = runtime
                .session_lock(None, Duration::ZERO, &mut |_| {})
                .unwrap();
            let order = std::sync::Mutex::new(Vec::new());
            std::thread::scope(|scope| {
                for who in ["a", "b", "c", "d"] {
                    let (runtime, order) = (&runtime, &order);
                    scope.spawn(move || {
                        let lock = runtime
                            .session_lock(None, Duration::from_secs(20), &mut |_| {})
                            .unwrap();
                        order.lock().unwrap().push(who);
                        std::thread::sleep(Duration::from_millis(20));
                        drop(lock);
                    });
                    // Each is waiting before the next asks; the first
                    // waits past a second (a wait split there, to say
                    // whom it waits for, lost its place).
                    std::thread::sleep(Duration::from_millis(400));
                }
                drop(held);
            });
            assert_eq!(*order.lock().unwrap(), ["a", "b", "c", "d"]);
        }
        // One waiter's file at most is left behind, and it is ours.
        let left: Vec<String> = fs::read_dir(runtime.root())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| turn_ticket(n).is_some())
            .collect();
        assert!(left.len() <= 1, "{left:?}");
        assert!(left.iter().all(|n| made_here(n)));
    }

    #[test]
    fn a_waiter_that_gives_up_lets_the_next_one_go_ahead() {
        let (_home, runtime) = scratch();
        let held = runtime
            .session_lock(None, Duration::ZERO, &mut |_| {})
            .unwrap();
        std::thread::scope(|scope| {
            let quitter = scope.spawn(|| {
                runtime
                    .session_lock(None, Duration::from_millis(300), &mut |_| {})
                    .map(drop)
            });
            std::thread::sleep(Duration::from_millis(100));
            let next = scope.spawn(|| {
                runtime
                    .session_lock(None, Duration::from_secs(20), &mut |_| {})
                    .map(drop)
            });
            let quit = quitter.join().unwrap();
            assert!(
                matches!(quit, Err(RuntimeError::LockTimeout { .. })),
                "{quit:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
            drop(held);
            next.join().unwrap().unwrap();
        });
    }

    #[test]
    fn a_lock_whose_file_was_replaced_is_no_longer_here() {
        let (_home, runtime) = scratch();
        let held = runtime
            .session_lock(None, Duration::ZERO, &mut |_| {})
            .unwrap();
        assert!(held.still_here());
        // Another file at its path, on the same file system (a runtime put
        // back in its place): not the one locked.
        let path = runtime.root().join(SESSION_LOCK_FILE);
        fs::remove_file(&path).unwrap();
        fs::write(&path, b"").unwrap();
        assert!(!held.still_here());
        fs::remove_file(&path).unwrap();
        assert!(!held.still_here());
    }

    #[test]
    fn only_the_copies_setup_seals_are_sealed_places() {
        for sealed in [
            "cli",
            "cli/node_modules/x",
            ".cli-old.12/a",
            ".cli-setup.Ab3",
        ] {
            assert!(sealed_place(Path::new(sealed)), "{sealed}");
        }
        for not in ["", "tmp/cli", "clix", ".playwright", "tmp", "../cli"] {
            assert!(!sealed_place(Path::new(not)), "{not}");
        }
    }

    #[test]
    fn the_bound_registry_is_a_folder_of_the_private_tmpdir() {
        let (_home, runtime) = scratch();
        let registry = bound_registry(&runtime.tmp_dir());
        assert_eq!(registry.parent(), Some(runtime.tmp_dir().as_path()));
    }

    #[test]
    fn only_the_lease_and_the_tab_book_may_be_lost_at_a_power_loss() {
        use StateFile::*;
        let lost = [Lease, Tabs];
        for file in [
            RotationBaseline,
            RotationMarker,
            Bootstrap,
            Lease,
            Tabs,
            HelperManifest,
            TokenFingerprint,
            NodeRecord,
            Browser,
            Artifacts,
            SessionBrowser,
            TabIds,
        ] {
            assert_eq!(file.durable(), !lost.contains(&file), "{file:?}");
        }
    }

    #[test]
    fn a_runtime_that_cannot_be_inspected_is_an_error_not_a_new_one() {
        // Under a plain file: ENOTDIR, which is no "does not exist".
        let home = tempfile::tempdir().unwrap();
        fs::write(home.path().join("file"), "x").unwrap();
        let location = RuntimeLocation {
            path: home.path().join("file/runtime"),
        };
        assert!(matches!(
            Runtime::open(&location),
            Err(RuntimeError::Io {
                action: "inspect",
                ..
            })
        ));
        assert!(matches!(
            Runtime::inspect(&location),
            Err(RuntimeError::Io {
                action: "inspect",
                ..
            })
        ));
        let missing = RuntimeLocation {
            path: home.path().join("none"),
        };
        assert!(Runtime::inspect(&missing).unwrap().is_none());
    }

    #[test]
    fn a_runtime_someone_made_meanwhile_is_checked_not_claimed_and_a_failed_one_is_an_error() {
        // The race create_root allows: the folder appeared after the look.
        let home = tempfile::tempdir().unwrap();
        let made = home.path().join("made");
        fs::create_dir(&made).unwrap();
        create_root(&made).unwrap();
        assert!(!made.join(CLAIM_FILE).exists());
        // mkdir in /proc fails (ENOENT): an error, never taken for made.
        let cannot = Path::new("/proc/my-chrome-runtime");
        for result in [create_root(cannot), ensure_private_subdir(cannot)] {
            assert!(matches!(
                result,
                Err(RuntimeError::Io {
                    action: "create",
                    ..
                })
            ));
        }
    }

    #[test]
    fn the_private_subfolders_are_made_private_and_a_shared_or_linked_one_refused() {
        let (home, runtime) = scratch();
        let location = RuntimeLocation {
            path: runtime.root().to_path_buf(),
        };
        for sub in [WORKSPACE_DIR, TMP_DIR] {
            let meta = fs::symlink_metadata(runtime.root().join(sub)).unwrap();
            assert!(meta.is_dir() && meta.mode() & 0o7777 == 0o700, "{sub}");
        }
        let tmp = runtime.tmp_dir();
        fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(is_unsafe(Runtime::open(&location)));
        fs::remove_dir(&tmp).unwrap();
        symlink(home.path(), &tmp).unwrap();
        assert!(is_unsafe(Runtime::open(&location)));
    }

    #[test]
    fn a_claim_with_anything_after_it_is_not_ours() {
        let (_home, runtime) = scratch();
        let location = RuntimeLocation {
            path: runtime.root().to_path_buf(),
        };
        let claim = runtime.root().join(CLAIM_FILE);
        let mut longer = fs::read(&claim).unwrap();
        longer.push(b'x');
        fs::write(&claim, longer).unwrap();
        assert!(is_unsafe(Runtime::open(&location)));
    }

    #[test]
    fn a_state_file_of_exactly_the_bound_is_read_and_one_byte_more_is_refused() {
        let (_home, runtime) = scratch();
        let at_bound = vec![b'x'; STATE_LIMIT as usize];
        runtime.write_state(StateFile::Lease, &at_bound).unwrap();
        assert_eq!(
            runtime.read_state(StateFile::Lease).unwrap(),
            Some(at_bound)
        );
        let over = vec![b'x'; STATE_LIMIT as usize + 1];
        runtime.write_state(StateFile::Lease, &over).unwrap();
        assert!(is_unsafe(runtime.read_state(StateFile::Lease)));
    }

    #[test]
    fn removing_a_state_file_that_is_gone_is_done_and_one_that_cannot_go_is_an_error() {
        let (_home, runtime) = scratch();
        runtime.remove_state(StateFile::Lease).unwrap();
        runtime.write_state(StateFile::Lease, b"{}").unwrap();
        runtime.remove_state(StateFile::Lease).unwrap();
        assert_eq!(runtime.read_state(StateFile::Lease).unwrap(), None);
        fs::create_dir(runtime.root().join(StateFile::Lease.file_name())).unwrap();
        assert!(matches!(
            runtime.remove_state(StateFile::Lease),
            Err(RuntimeError::Io {
                action: "remove",
                ..
            })
        ));
    }

    #[test]
    fn the_log_grows_to_its_bound_then_becomes_its_older_generation() {
        let (_home, runtime) = scratch();
        let log = |name: &str| fs::read_to_string(runtime.root().join(name)).ok();
        assert_eq!(runtime.read_log(LogFile::Lease, 1000).unwrap(), "");
        // A first line longer than the bound is still written, in place.
        runtime
            .append_log(LogFile::Lease, b"0123456789012345678901234\n", 20)
            .unwrap();
        assert_eq!(log("lease.log.1"), None);
        fs::remove_file(runtime.root().join("lease.log")).unwrap();
        // Up to the bound exactly, one file.
        runtime
            .append_log(LogFile::Lease, b"aaaaaaaaa\n", 20)
            .unwrap();
        runtime
            .append_log(LogFile::Lease, b"bbbbbbbbb\n", 20)
            .unwrap();
        assert_eq!(log("lease.log.1"), None);
        assert_eq!(log("lease.log").unwrap(), "aaaaaaaaa\nbbbbbbbbb\n");
        // One byte past it: the log moves aside, the line starts anew.
        runtime.append_log(LogFile::Lease, b"c\n", 20).unwrap();
        assert_eq!(log("lease.log.1").unwrap(), "aaaaaaaaa\nbbbbbbbbb\n");
        assert_eq!(log("lease.log").unwrap(), "c\n");
        assert_eq!(
            runtime.read_log(LogFile::Lease, 1000).unwrap(),
            "aaaaaaaaa\nbbbbbbbbb\nc\n"
        );
    }

    #[test]
    fn a_log_that_is_a_link_is_neither_followed_nor_skipped() {
        let (home, runtime) = scratch();
        let elsewhere = home.path().join("elsewhere");
        fs::write(&elsewhere, "theirs\n").unwrap();
        fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o600)).unwrap();
        symlink(&elsewhere, runtime.root().join("lease.log")).unwrap();
        assert!(is_unsafe(runtime.append_log(LogFile::Lease, b"x\n", 1000)));
        assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "theirs\n");
        assert!(is_unsafe(runtime.read_log(LogFile::Lease, 1000)));
    }

    #[test]
    fn a_runtime_is_claimed_only_with_my_chromes_own_claim() {
        let (home, runtime) = scratch();
        assert!(claimed(runtime.root()).unwrap(), "open() claims it");
        let bare = home.path().join("bare");
        fs::create_dir(&bare).unwrap();
        assert!(!claimed(&bare).unwrap(), "no claim file: not claimed");
        // A claim file with other words is refused, not taken as none.
        let foreign = home.path().join("foreign");
        fs::create_dir(&foreign).unwrap();
        let claim = foreign.join(CLAIM_FILE);
        fs::write(&claim, b"someone else's\n").unwrap();
        fs::set_permissions(&claim, fs::Permissions::from_mode(0o600)).unwrap();
        assert!(is_unsafe(claimed(&foreign)));
    }

    #[test]
    fn a_json_fault_says_where_and_what_kind_never_the_text() {
        let error = serde_json::from_str::<serde_json::Value>("{\"secret-ish\": tru}")
            .expect_err("not JSON");
        assert_eq!(json_fault(&error), "Syntax error at line 1, column 19");
    }
}
