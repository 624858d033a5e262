//! The runtime's locks: the wrapper's, the agent names', the late
//! commands', and the one wait every lock, the session's too, waits in
//! (bounded, given up on a signal).

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

use super::private::{check_private_file, refusal_or_io};
use super::{LATE_LOCK_FILE, LOCK_FILE, NAMES_LOCK_FILE, Runtime, RuntimeError, io_error};
use crate::signals;

impl Runtime {
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

    pub(super) fn lock_file(&self, name: &str) -> Result<(File, PathBuf), RuntimeError> {
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

    pub(super) fn lock_at(
        &self,
        name: &str,
        wait: Duration,
        waiting: &dyn Fn(),
    ) -> Result<FileLock, RuntimeError> {
        let (file, path) = self.lock_file(name)?;
        let started = Instant::now();
        let mut file = Some(file);
        let mut told = false;
        // Most holds are short: retry soon at first.
        let mut pause = Duration::from_millis(1);
        wait_for(
            &path,
            wait,
            started,
            || {
                let tried = file.take().expect("given back by every try that waits on");
                match Flock::lock(tried, FlockArg::LockExclusiveNonblock) {
                    Ok(lock) => still_linked(lock, &path).map(Some),
                    Err((back, nix::errno::Errno::EWOULDBLOCK)) => {
                        file = Some(back);
                        Ok(None)
                    }
                    Err((_, errno)) => Err(io_error("lock", &path)(errno.into())),
                }
            },
            |waited| {
                if !told && waited >= Duration::from_secs(1) {
                    waiting();
                    told = true;
                }
                thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
                None
            },
        )
    }

    /// Lock `name`, waiting in the kernel until `wait` after `started`;
    /// `None` once `give_up` says so (asked as it waits).
    pub(super) fn blocking_lock(
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
        wait_for(
            &path,
            wait,
            started,
            || match receive.recv_timeout(Duration::from_millis(50)) {
                Ok(Ok(lock)) => still_linked(lock, &path).map(|lock| Some(Some(lock))),
                Ok(Err(errno)) => Err(io_error("lock", &path)(errno.into())),
                Err(_) => Ok(None),
            },
            |_| {
                if give_up() {
                    return Some(None);
                }
                waiting(started.elapsed());
                None
            },
        )
    }
}

/// The one wait of every lock: `attempt` (a try, or a look at whether
/// the kernel gave it) until it has the lock, then, each time it has not,
/// a signal (SIGINT, SIGTERM, SIGHUP) ends the wait, so does `wait` past
/// `started`, and `between` (given the time waited so far) may end it
/// with its own answer.
fn wait_for<T>(
    path: &Path,
    wait: Duration,
    started: Instant,
    mut attempt: impl FnMut() -> Result<Option<T>, RuntimeError>,
    mut between: impl FnMut(Duration) -> Option<T>,
) -> Result<T, RuntimeError> {
    loop {
        if let Some(got) = attempt()? {
            return Ok(got);
        }
        if let Some(signal) = signals::pending() {
            return Err(RuntimeError::Interrupted(signal));
        }
        if started.elapsed() >= wait {
            return Err(RuntimeError::LockTimeout {
                path: path.to_path_buf(),
                waited: wait,
            });
        }
        if let Some(got) = between(started.elapsed()) {
            return Ok(got);
        }
    }
}

/// An exclusive lock on one of the runtime's lock files (the wrapper lock or
/// the lease's), held until dropped.
#[derive(Debug)]
pub struct FileLock {
    pub(super) _lock: Flock<File>,
    pub(super) path: PathBuf,
    /// The session's lock: the ticket it was waited for with.
    pub(super) ticket: Option<u64>,
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
pub(super) fn still_linked(lock: Flock<File>, path: &Path) -> Result<FileLock, RuntimeError> {
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
