//! Commands past their bound (or killed mid-run) that the daemon may still
//! answer: `late.json`. Such a command costs the others nothing more: the
//! session's turn goes on at its bound, and only its own agent's next
//! command waits for its end. While one may still answer, the daemon may
//! build its late reply in the middle of another command, and a reply it
//! builds takes note of every tab's header: no reply then proves what the
//! tabs are (the tabs are listed after each command), and a tab that
//! appears meanwhile is the user's, not the running command's agent's.
//!
//! Written under its own lock (`Runtime::late_lock`): a turn adds an
//! entry, and a command's waiter (`finish.rs`) takes its own out once the
//! daemon has answered it. An entry nobody took out — its waiter killed or
//! stopped, or a command killed mid-run (nobody waits for its answer) —
//! may answer until [`CAP`] (and the waiter's last moments) after it was
//! sent; the session's end (`end_all`) ends them all.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::LeaseError;
use crate::procs::ProcessId;
use crate::runtime::{Runtime, RuntimeError, StateFile};

const VERSION: u32 = 1;

/// How long a command past its bound is waited for at most: then it is
/// given up (the daemon may still run it; the log says so). A command
/// killed outright counts as answering until then.
pub const CAP: Duration = Duration::from_secs(600);
/// Past [`CAP`], the moment a waiter takes to log its end and go.
const SLACK: Duration = Duration::from_secs(10);
/// How long a write waits for the late file's lock (held for a read and a
/// write only).
const LOCK_WAIT: Duration = Duration::from_secs(5);

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LateFile {
    version: u32,
    late: Vec<Late>,
    /// The pages commands answered since the tabs were last kept under
    /// the turn ended on, as their answers describe them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    ended: Vec<Ended>,
}

/// The page a command past its bound left its tab on, as its answer
/// describes it (the call's own tab, `tabs::stay`): what it did there
/// until then (a page loaded past the bound, to another site) was its
/// doing, read into the book by the next desk (`Book::answered_on`), as
/// the command would have on its list after. What the tab shows at
/// another site since is not its doing: its tab goes to the user then.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ended {
    pub tab: u64,
    /// The daemon's number of that tab (`tabs::number`): the book's tab
    /// only if its number is the same.
    pub number: u64,
    /// `[title](url)`, redacted as any header the book keeps.
    pub header: String,
}

/// A command the daemon may still be running.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Late {
    pub agent: String,
    /// Its name (never its arguments).
    pub command: String,
    /// When it was sent, in milliseconds since the Unix epoch.
    pub since: u64,
    /// The process of my-chrome's waiting for its answer (`handed`), or the
    /// command's own, which was killed.
    pub process: ProcessId,
    /// Whether a process waits for its answer (and takes the entry out
    /// once it came): then the agent's next command waits for that process.
    pub handed: bool,
    /// The tab it runs on: busy, so what happens to it meanwhile is read
    /// as that command's doing (`Book::busy`), not another tab's or the
    /// user's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<u64>,
    /// It stepped aside for another agent's command in line (`process` is
    /// its own, which takes the turn again for its reply), rather than
    /// going past its bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aside: bool,
}

impl Late {
    /// Whether the daemon may still answer it at `now`: until its entry is
    /// taken out, at most [`CAP`] (and [`SLACK`]) after it was sent. A
    /// waiter that was killed or stopped does not end it sooner: the
    /// daemon may still be running the command.
    pub fn may_answer(&self, now: u64) -> bool {
        // One that stepped aside waits for its answer up to its bound, which
        // may be longer than the cap: while its process does.
        let longest = if self.aside && self.process.is_running() {
            crate::settings::COMMAND_BOUND_RANGE.1 + CAP + SLACK
        } else {
            CAP + SLACK
        };
        now < self.since.saturating_add(longest.as_millis() as u64)
    }

    /// Whether a process of my-chrome's still waits for its answer.
    pub fn waited(&self) -> bool {
        self.handed && self.process.is_running()
    }

    /// Seconds since it was sent.
    pub fn secs(&self, now: u64) -> u64 {
        now.saturating_sub(self.since) / 1000
    }
}

/// The commands the daemon may still answer. A file that is not ours is
/// refused (exit 6), as the lease file is.
pub fn read(runtime: &Runtime) -> Result<Vec<Late>, LeaseError> {
    let now = super::now_ms();
    Ok(recorded(runtime)?
        .late
        .into_iter()
        .filter(|l| l.may_answer(now))
        .collect())
}

/// The pages commands answered since the tabs were last kept ended on.
pub fn ended(runtime: &Runtime) -> Result<Vec<Ended>, LeaseError> {
    Ok(recorded(runtime)?.ended)
}

/// The book that read the pages of `tabs` was kept: they are read (a tab
/// answered meanwhile stays). A file that is not ours is left as it is:
/// every reader refuses it.
pub fn ended_listed(runtime: &Runtime, tabs: &[u64]) -> Result<(), RuntimeError> {
    if tabs.is_empty() {
        return Ok(());
    }
    let _lock = runtime.late_lock(LOCK_WAIT)?;
    let mut file = match recorded(runtime) {
        Ok(file) => file,
        Err(LeaseError::Runtime(e)) => return Err(e),
        Err(_) => return Ok(()),
    };
    let before = file.ended.len();
    file.ended.retain(|e| !tabs.contains(&e.tab));
    if file.ended.len() != before {
        write(runtime, file.late, file.ended)?;
    }
    Ok(())
}

/// Whether the daemon may still answer a command of an agent other than
/// `agent` (then a tab that appears is not `agent`'s by its command).
pub fn others(late: &[Late], agent: &str) -> bool {
    late.iter().any(|l| l.agent != agent)
}

/// `agent`'s own command the daemon still runs, with a process waiting
/// for it: its next command waits for that. (One whose waiter was killed
/// is not waited for: the agent's next command runs beside it, as after
/// a command killed mid-run.)
pub fn own_waited(runtime: &Runtime, agent: &str) -> Result<Option<Late>, LeaseError> {
    Ok(read(runtime)?
        .into_iter()
        .find(|l| l.agent == agent && l.waited()))
}

/// Adds `late`, under the turn (what answers no more goes), in place of
/// any entry of the process `from` (a command that stepped aside, handed
/// over at its bound).
pub fn add(runtime: &Runtime, late: Late, from: Option<&ProcessId>) -> Result<(), LeaseError> {
    let _lock = runtime.late_lock(LOCK_WAIT)?;
    let ended = recorded(runtime)?.ended;
    let mut all = read(runtime)?;
    all.retain(|l| !from.is_some_and(|from| l.process.same_as(from)));
    all.push(late);
    Ok(write(runtime, all, ended)?)
}

/// The tabs commands the daemon may still answer run on.
pub fn busy_tabs(late: &[Late]) -> Vec<u64> {
    late.iter().filter_map(|l| l.tab).collect()
}

/// Takes out the entry whose waiter is `me`: the daemon answered it, its
/// answer describing `page` (the daemon's number and header), which the
/// next desk reads in as that command's doing.
pub fn answered(
    runtime: &Runtime,
    me: &ProcessId,
    page: Option<(u64, String)>,
) -> Result<(), LeaseError> {
    let _lock = runtime.late_lock(LOCK_WAIT)?;
    let mut ended = recorded(runtime)?.ended;
    let all = read(runtime)?;
    let (done, left): (Vec<Late>, Vec<Late>) = all
        .into_iter()
        .partition(|l| l.handed && l.process.same_as(me));
    if done.is_empty() {
        return Ok(());
    }
    if let (Some(tab), Some((number, header))) = (done.iter().find_map(|l| l.tab), page) {
        ended.retain(|e| e.tab != tab);
        ended.push(Ended {
            tab,
            number,
            header,
        });
    }
    Ok(write(runtime, left, ended)?)
}

/// The session's end: its daemon answers nothing more.
pub fn end_all(runtime: &Runtime) -> Result<(), LeaseError> {
    let _lock = runtime.late_lock(LOCK_WAIT)?;
    Ok(runtime.remove_state(StateFile::Late)?)
}

/// Every entry, answering or not.
fn recorded(runtime: &Runtime) -> Result<LateFile, LeaseError> {
    let Some(bytes) = runtime
        .read_state(StateFile::Late)?
        .filter(|bytes| !bytes.iter().all(|b| *b == 0 || b.is_ascii_whitespace()))
    else {
        return Ok(LateFile {
            version: VERSION,
            late: Vec::new(),
            ended: Vec::new(),
        });
    };
    let malformed = |detail: String| LeaseError::Malformed {
        path: runtime.root().join(StateFile::Late.file_name()),
        detail,
    };
    let file: LateFile =
        serde_json::from_slice(&bytes).map_err(|e| malformed(crate::runtime::json_fault(&e)))?;
    if file.version != VERSION {
        return Err(malformed("unexpected version".into()));
    }
    Ok(file)
}

fn write(runtime: &Runtime, late: Vec<Late>, ended: Vec<Ended>) -> Result<(), RuntimeError> {
    let file = LateFile {
        version: VERSION,
        late,
        ended,
    };
    let bytes = serde_json::to_vec(&file).expect("the late file serialises");
    runtime.write_state(StateFile::Late, &bytes)
}

/// How long a command waits, at most, for its agent's command past its
/// bound before saying so: the caller's wait for the turn.
pub fn wait_for_own(
    runtime: &Runtime,
    agent: &str,
    wait: Duration,
) -> Result<Option<Late>, LeaseError> {
    let deadline = std::time::Instant::now() + wait;
    let mut told = false;
    loop {
        let Some(late) = own_waited(runtime, agent)? else {
            return Ok(None);
        };
        if std::time::Instant::now() >= deadline {
            return Ok(Some(late));
        }
        if let Some(signal) = crate::signals::pending() {
            return Err(LeaseError::Interrupted(signal));
        }
        if !told {
            crate::output::notice(&format!(
                "my-chrome: your `{}` {} and the daemon still runs it; waiting up to {} s for \
                 its end as agent {agent}...",
                late.command,
                if late.aside {
                    "stepped aside for another agent's command"
                } else {
                    "is past its bound"
                },
                wait.as_secs()
            ));
            told = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn late(handed: bool, since: u64, process: ProcessId) -> Late {
        Late {
            agent: "bob".into(),
            command: "eval".into(),
            since,
            process,
            handed,
            tab: None,
            aside: false,
        }
    }

    #[test]
    fn a_late_command_answers_until_taken_out_or_the_cap_whatever_its_waiter() {
        let me = ProcessId::current().unwrap();
        let now = super::super::now_ms();
        let gone = ProcessId {
            pid: me.pid,
            start: me.start.wrapping_add(1000),
        };
        let cap = (CAP + SLACK).as_millis() as u64;
        for handed in [true, false] {
            for process in [me, gone] {
                assert!(late(handed, now - cap + 1, process).may_answer(now));
                assert!(!late(handed, now - cap, process).may_answer(now));
            }
        }
        // How long ago it was sent, in whole seconds (what `agents` shows).
        assert_eq!(late(true, now - 5_500, me).secs(now), 5);
        assert_eq!(late(true, now + 1, me).secs(now), 0);
        // One that stepped aside answers up to the longest bound while its
        // process waits for it (its bound may pass the cap); killed, until
        // the cap.
        let aside = |process| Late {
            aside: true,
            ..late(true, now - cap, process)
        };
        assert!(aside(me).may_answer(now));
        assert!(!aside(gone).may_answer(now));
        // Only a living waiter is waited for by its agent.
        assert!(late(true, now, me).waited());
        assert!(!late(true, now, gone).waited());
        assert!(!late(false, now, me).waited());
    }

    #[test]
    fn the_waiter_takes_out_its_own_entry_and_the_end_takes_out_all() {
        let (_home, runtime) = crate::runtime::scratch();
        let me = ProcessId::current().unwrap();
        let other = ProcessId {
            pid: me.pid,
            start: me.start.wrapping_add(1000),
        };
        let now = super::super::now_ms();
        add(&runtime, late(true, now, me), None).unwrap();
        add(&runtime, late(true, now, other), None).unwrap();
        assert_eq!(
            own_waited(&runtime, "bob").unwrap(),
            Some(late(true, now, me))
        );
        answered(&runtime, &me, None).unwrap();
        // The other's waiter is gone (killed): it is not waited for, and
        // still may answer.
        assert_eq!(read(&runtime).unwrap(), vec![late(true, now, other)]);
        assert_eq!(own_waited(&runtime, "bob").unwrap(), None);
        end_all(&runtime).unwrap();
        assert!(read(&runtime).unwrap().is_empty());
        // A file cut short by a power loss (blank, or zero-filled) holds
        // nothing; anything else that is not ours is refused.
        for blank in [&b"\n \n"[..], &[0u8; 8][..]] {
            runtime.write_state(StateFile::Late, blank).unwrap();
            assert!(read(&runtime).unwrap().is_empty());
        }
        runtime.write_state(StateFile::Late, b"{}").unwrap();
        assert!(matches!(read(&runtime), Err(LeaseError::Malformed { .. })));
    }

    #[test]
    fn an_answered_commands_page_waits_for_the_next_kept_book() {
        let (_home, runtime) = crate::runtime::scratch();
        let me = ProcessId::current().unwrap();
        let now = super::super::now_ms();
        let on = |tab: u64, process: ProcessId| Late {
            tab: Some(tab),
            ..late(true, now, process)
        };
        let page = |n: u64| (n, format!("[P{n}](https://p.test/{n})"));
        add(&runtime, on(4, me), None).unwrap();
        assert_eq!(busy_tabs(&read(&runtime).unwrap()), vec![4]);
        assert!(ended(&runtime).unwrap().is_empty());
        // Answered (its page came past the bound): no longer late, nor
        // busy; the page it ended on is kept for the next desk.
        answered(&runtime, &me, Some(page(7))).unwrap();
        assert!(read(&runtime).unwrap().is_empty());
        let ended_on = |tab: u64, n: u64| Ended {
            tab,
            number: n,
            header: page(n).1,
        };
        assert_eq!(ended(&runtime).unwrap(), vec![ended_on(4, 7)]);
        // Another command past its bound meanwhile keeps it; one answered
        // without a page adds nothing.
        let other = ProcessId {
            pid: me.pid,
            start: me.start.wrapping_add(1000),
        };
        add(&runtime, on(6, other), None).unwrap();
        assert_eq!(ended(&runtime).unwrap(), vec![ended_on(4, 7)]);
        add(&runtime, on(5, me), None).unwrap();
        answered(&runtime, &me, None).unwrap();
        assert_eq!(ended(&runtime).unwrap(), vec![ended_on(4, 7)]);
        // A book kept that read another tab keeps it; the one that read it
        // takes it out.
        ended_listed(&runtime, &[5]).unwrap();
        assert_eq!(ended(&runtime).unwrap(), vec![ended_on(4, 7)]);
        ended_listed(&runtime, &[4]).unwrap();
        assert!(ended(&runtime).unwrap().is_empty());
        assert_eq!(busy_tabs(&read(&runtime).unwrap()), vec![6]);
    }

    #[test]
    fn only_another_agents_command_makes_new_tabs_nobodys() {
        let me = ProcessId::current().unwrap();
        let bobs = [late(true, 0, me)];
        assert!(others(&bobs, "ann"));
        assert!(!others(&bobs, "bob"));
        assert!(!others(&[], "ann"));
    }
}
