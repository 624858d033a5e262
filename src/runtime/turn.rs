//! The session's lock, taken in the order asked: each waiter's ticket
//! and its own file, the waiter before it waited for, and who waits in
//! line behind the holder.

use std::fs::{self, File};
use std::io::{self, Read, Seek, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use super::lock::FileLock;
use super::{Runtime, RuntimeError, SESSION_LOCK_FILE, TURN_PREFIX, TURN_TICKETS_FILE, io_error};

/// The process that holds a waiter's ticket file, as it wrote it ("pid
/// start agent"); none when unreadable (then it is waited for, as before).
pub(super) fn ticket_holder(path: &Path) -> Option<crate::procs::ProcessId> {
    ticket_of(path).map(|(process, _)| process)
}

/// A waiter's ticket file: its process, and the agent it waits for.
pub(super) fn ticket_of(path: &Path) -> Option<(crate::procs::ProcessId, String)> {
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
pub(super) fn turn_ticket(name: &str) -> Option<u64> {
    name.strip_prefix(TURN_PREFIX)?
        .strip_suffix(".lock")?
        .parse()
        .ok()
}

impl Runtime {
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
    pub(super) fn take_ticket(
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
}
