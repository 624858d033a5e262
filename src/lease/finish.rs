//! A command past its bound. A browser command that went past its bound
//! (or was interrupted) once sent is run on by the daemon to its end; only
//! its reply is lost (research of the pinned daemon: closing the connection
//! stops none of its tools). Its connection is handed to a process of
//! my-chrome's (`HeldLease::hand_over` starts `my-chrome` itself, with the
//! connection for standard input), recorded in `late.json` (`late.rs`),
//! which waits for the daemon's answer, at most [`CAP`], then logs the end
//! and exits. The session's turn has gone on meanwhile: the others'
//! commands run beside it (each on its own tab: the daemon keeps a command
//! on the tab it started on), and only its agent's next command waits for
//! this process. `disconnect` ends the wait ([`stop`]). The waiting
//! process holds no token and keeps one thing of the answer: the page its
//! command's tab ended on (its `### Page` section's address and title,
//! redacted as the book's headers are), for the next desk to read in as
//! that command's doing (`late::Ended`). It does nothing unless `late.json` names it (pid and start
//! time) as a command's waiter, and takes the agent and command it logs
//! from there: run by hand, it can write no log.

use std::io::Read;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::Signal;

use super::LeaseError;
use super::late::{self, Late};
use super::log::{self, Event};
use crate::config::RuntimeLocation;
use crate::procs::ProcessId;
use crate::runtime::Runtime;
use crate::signals;

/// How long the wait lasts at most (`late::CAP`).
pub use super::late::CAP;
/// How often the wait looks for a signal.
const POLL: Duration = Duration::from_millis(100);
/// How long the waiter waits for `late.json` to name it (`hand_over`
/// writes it once the waiter has started).
const NAMED_WITHIN: Duration = Duration::from_secs(5);

/// What ended the wait.
#[derive(Debug, PartialEq, Eq)]
pub enum End {
    /// The daemon answered (or closed the connection): the command ended.
    Answered,
    /// [`CAP`] passed.
    GaveUp,
    /// `disconnect` (or the user) stopped the wait.
    Stopped(Signal),
}

/// The waiting process: once `late.json` of `runtime` names it, reads
/// the late command's answer from standard input (its connection), then
/// logs the end; its record answers no more once it has exited.
pub fn wait(runtime: &RuntimeLocation) -> Result<End, LeaseError> {
    let runtime = Runtime::open(runtime)?;
    let me = ProcessId::current()?;
    let Some(holder) = named(&runtime, me, NAMED_WITHIN)? else {
        return Err(LeaseError::NotHandedOver);
    };
    let started = Instant::now();
    let (end, said) = answer(std::io::stdin(), CAP);
    let line = log::line(
        std::time::SystemTime::now(),
        &holder.agent,
        Some(&holder.command),
        &Event::Finished {
            after: started.elapsed(),
            answered: end == End::Answered,
        },
    );
    let _ = log::append(&runtime, &[line]);
    // Answered, its record goes. Stopped or given up, the daemon may still
    // run the command: the record stays until the cap or the session's end.
    if end == End::Answered {
        late::answered(
            &runtime,
            &me,
            said.and_then(|said| ended_on(&runtime, &said)),
        )?;
    }
    Ok(end)
}

/// The page an answer describes its tab on: the daemon's number and the
/// header, redacted as the book's are. Nothing from an answer that is not
/// the daemon's reply, or describes no page.
fn ended_on(runtime: &Runtime, line: &[u8]) -> Option<(u64, String)> {
    let crate::daemon::Reply::Text {
        text: Some(text), ..
    } = crate::daemon::parse_reply(line).ok()?
    else {
        return None;
    };
    let page = crate::tabs::proof::page_of(&text)?;
    let known = crate::redact::fingerprint::recorded(runtime).ok()?;
    let header = crate::redact::redact_value(&page.header, known.as_ref());
    Some((page.number?, header))
}

/// The late command whose waiter `late.json` names `me`, once (within
/// `within`) it does.
fn named(runtime: &Runtime, me: ProcessId, within: Duration) -> Result<Option<Late>, LeaseError> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(holder) = late::read(runtime)?
            .into_iter()
            .find(|l| l.handed && l.process.same_as(&me))
        {
            return Ok(Some(holder));
        }
        if Instant::now() >= deadline || signals::pending().is_some() {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The most of an answer kept to read its page from: a longer one is
/// dropped as it comes (its tab is then read as any other's).
const KEPT: usize = 32 << 20;

/// Reads `connection` until the daemon's answer has ended (a line, or the
/// connection closed), within `cap` and until a signal; the answer's line
/// when it came whole and within [`KEPT`].
fn answer(mut connection: impl Read + AsFd, cap: Duration) -> (End, Option<Vec<u8>>) {
    let deadline = Instant::now() + cap;
    let mut chunk = [0u8; 64 * 1024];
    let mut line = Some(Vec::new());
    loop {
        if let Some(signal) = signals::pending() {
            return (End::Stopped(signal), None);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (End::GaveUp, None);
        }
        let wait = PollTimeout::try_from(POLL.min(left)).unwrap_or(PollTimeout::ZERO);
        let mut ready = [PollFd::new(connection.as_fd(), PollFlags::POLLIN)];
        match poll(&mut ready, wait) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return (End::Answered, None),
        }
        let read = match connection.read(&mut chunk) {
            Ok(n) => &chunk[..n],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return (End::Answered, None),
        };
        // Closed before its line ended: no whole answer to read.
        if read.is_empty() {
            return (End::Answered, None);
        }
        // The answer ends its line; the rest of it is of no interest.
        let end = read.iter().position(|b| *b == b'\n');
        let part = &read[..end.unwrap_or(read.len())];
        line = line.filter(|l| l.len() + part.len() <= KEPT).map(|mut l| {
            l.extend_from_slice(part);
            l
        });
        if end.is_some() {
            return (End::Answered, line);
        }
    }
}

/// Ends the waits for commands past their bound (for `disconnect`, which
/// lets the session go): each waiting process is sent SIGTERM (and
/// SIGCONT, should it be stopped) — found by the record only my-chrome
/// writes, pid and start time — and given a moment to log its end. Their
/// records stay until the session's end (`late::end_all`): the daemon may
/// still run those commands. Whether one was waiting.
pub fn stop(runtime: &Runtime) -> Result<bool, LeaseError> {
    // A command that stepped aside is its agent's own process, not a
    // waiter: it is not cut; it hears the session ended when it reads on.
    let waiting: Vec<Late> = late::read(runtime)?
        .into_iter()
        .filter(|l| l.waited() && !l.aside)
        .collect();
    for late in &waiting {
        let pid = nix::unistd::Pid::from_raw(late.process.pid as i32);
        let _ = nix::sys::signal::kill(pid, Signal::SIGTERM);
        let _ = nix::sys::signal::kill(pid, Signal::SIGCONT);
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while waiting.iter().any(|l| l.process.is_running()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(!waiting.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    /// `disconnect` ends the waits for commands past their bound, never a
    /// command that stepped aside (its agent's own process, in flight).
    #[test]
    fn ending_the_waits_cuts_no_command_that_stepped_aside() {
        let (_home, runtime) = crate::runtime::scratch();
        for aside in [true, false] {
            let mut child = std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .unwrap();
            let process = ProcessId::of(child.id()).unwrap();
            late::end_all(&runtime).unwrap();
            let entry = Late {
                agent: "bob".into(),
                command: "eval".into(),
                since: super::super::now_ms(),
                process,
                handed: true,
                tab: Some(2),
                aside,
            };
            late::add(&runtime, entry, None).unwrap();
            assert_eq!(stop(&runtime).unwrap(), !aside);
            let ended = child.try_wait().unwrap().is_some()
                || (
                    std::thread::sleep(Duration::from_millis(200)),
                    child.try_wait().unwrap(),
                )
                    .1
                    .is_some();
            assert_eq!(ended, !aside, "aside: {aside}");
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    #[test]
    fn the_wait_ends_with_the_answer_its_line_or_its_connection() {
        let (mut daemon, ours) = UnixStream::pair().unwrap();
        let reader = std::thread::spawn(move || answer(ours, Duration::from_secs(30)));
        daemon.write_all(b"{\"id\":1,\"result\":").unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(!reader.is_finished(), "half a line is no answer");
        daemon.write_all(b"{\"text\":\"x\"}}\nmore").unwrap();
        assert_eq!(
            reader.join().unwrap(),
            (
                End::Answered,
                Some(b"{\"id\":1,\"result\":{\"text\":\"x\"}}".to_vec())
            )
        );
        let (daemon, ours) = UnixStream::pair().unwrap();
        drop(daemon);
        assert_eq!(answer(ours, Duration::from_secs(30)), (End::Answered, None));
    }

    #[test]
    fn the_page_an_answer_ended_on_is_read_redacted_or_not_at_all() {
        let (_home, runtime) = crate::runtime::scratch();
        let reply = |text: &str| serde_json::json!({"id": 1, "result": {"text": text}}).to_string();
        let page = "### Result\n1\n### Page\n- Page URL: https://a.test/?token=";
        let secret = format!("{page}Zq3_secretTOKENvalue-0123456789abcdef\n- Page Title: <mc:3> A");
        let (number, header) = ended_on(&runtime, reply(&secret).as_bytes()).unwrap();
        assert_eq!(number, 3);
        assert!(
            header.starts_with("[A](https://a.test/?token=<redacted>"),
            "{header}"
        );
        // No page, another request's reply, or not the daemon's at all.
        assert_eq!(ended_on(&runtime, reply("### Result\n1").as_bytes()), None);
        let other = serde_json::json!({"id": 2, "result": {"text": secret}}).to_string();
        assert_eq!(ended_on(&runtime, other.as_bytes()), None);
        assert_eq!(ended_on(&runtime, b"not json"), None);
    }

    #[test]
    fn the_wait_gives_up_at_its_cap() {
        let (_daemon, ours) = UnixStream::pair().unwrap();
        let started = Instant::now();
        assert_eq!(answer(ours, Duration::from_millis(300)).0, End::GaveUp);
        assert!(started.elapsed() >= Duration::from_millis(300));
    }
}
