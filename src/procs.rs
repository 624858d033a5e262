//! A snapshot of the process table, read with `sysinfo`. If the table cannot
//! be read, callers get an error, never an empty answer that looks safe.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, System, UpdateKind};

#[derive(Debug, thiserror::Error)]
#[error(
    "cannot read the process table ({0}), so my-chrome cannot tell what is running; nothing was \
     changed. Run it where /proc (Linux) or the process list (macOS) is readable"
)]
pub struct ProcError(String);

/// What we read of one process.
#[derive(Debug)]
pub struct Proc<'a> {
    pub pid: u32,
    /// Seconds since the epoch: with the pid, tells a restarted process apart.
    pub start_time: u64,
    pub uid: Option<u32>,
    pub exe: Option<&'a Path>,
    pub cwd: Option<&'a Path>,
    /// argv, including argv[0].
    pub cmd: &'a [OsString],
    pub environ: &'a [OsString],
}

/// One process, told apart from a later one that reuses its pid by its
/// start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcessId {
    pub pid: u32,
    /// Seconds since the epoch.
    pub start: u64,
}

impl ProcessId {
    /// This process.
    pub fn current() -> Result<ProcessId, ProcError> {
        let pid = std::process::id();
        one_process(pid)
            .map(|p| ProcessId {
                pid,
                start: p.start,
            })
            .ok_or_else(|| ProcError("this process is not visible in it".into()))
    }

    /// The process `pid`, when it runs.
    pub fn of(pid: u32) -> Result<ProcessId, ProcError> {
        one_process(pid)
            .map(|p| ProcessId {
                pid,
                start: p.start,
            })
            .ok_or_else(|| ProcError(format!("process {pid} is not visible in it")))
    }

    /// Whether `other` names this same process: the same pid, and a start
    /// time within the slack two readings of it may differ by.
    pub fn same_as(&self, other: &ProcessId) -> bool {
        self.pid == other.pid && self.start.abs_diff(other.start) <= START_SLACK_SECS
    }

    /// Is it still running (the same process, not a reused pid)? Start
    /// times are whole seconds derived from the boot time, which moves by a
    /// second now and then: a little slack keeps a live process alive.
    pub fn is_running(&self) -> bool {
        use nix::errno::Errno;
        let pid = nix::unistd::Pid::from_raw(self.pid as i32);
        match nix::sys::signal::kill(pid, None) {
            // Gone, or another user's: not one of ours any more.
            Err(Errno::ESRCH) | Err(Errno::EPERM) => return false,
            _ => {}
        }
        match one_process(self.pid) {
            Some(p) => !p.zombie && p.start.abs_diff(self.start) <= START_SLACK_SECS,
            // Ours and present, but unreadable: keep it rather than guess.
            None => true,
        }
    }
}

impl ProcessId {
    /// Whether it is this same process, stopped by a signal.
    pub fn is_stopped(&self) -> bool {
        one_process(self.pid)
            .is_some_and(|p| p.stopped && p.start.abs_diff(self.start) <= START_SLACK_SECS)
    }
}

/// What [`lineage`] reports of each ancestor.
#[derive(Clone, Debug)]
pub struct Ancestor {
    pub pid: u32,
    /// The kernel's short name for it (`comm` on Linux).
    pub name: String,
    pub cmd: Vec<OsString>,
}

/// `pid`'s parent, grandparent, … up to pid 1 (in a container, that may be
/// the agent's host itself), read one process at a time and only as far as
/// the caller reads: far cheaper than the whole table when only a few are
/// needed.
pub fn lineage(pid: u32, limit: usize) -> Lineage {
    Lineage {
        next: one_process(pid).and_then(|p| p.parent),
        seen: Vec::new(),
        limit,
    }
}

/// The ancestors of a process, nearest first ([`lineage`]).
pub struct Lineage {
    next: Option<u32>,
    /// The pids read so far: a loop in the table ends the walk.
    seen: Vec<u32>,
    limit: usize,
}

impl Iterator for Lineage {
    type Item = Ancestor;

    fn next(&mut self) -> Option<Ancestor> {
        let parent = self.next.take()?;
        if parent == 0 || self.seen.len() >= self.limit || self.seen.contains(&parent) {
            return None;
        }
        let found = one_process(parent)?;
        self.seen.push(parent);
        self.next = found.parent;
        Some(Ancestor {
            pid: parent,
            name: found.name,
            cmd: found.cmd,
        })
    }
}

const START_SLACK_SECS: u64 = 2;

struct OneProcess {
    start: u64,
    zombie: bool,
    /// Stopped by a signal (SIGSTOP, SIGTSTP): it runs nothing until
    /// continued.
    stopped: bool,
    parent: Option<u32>,
    name: String,
    cmd: Vec<OsString>,
}

/// One process, read alone. The reader (whose set-up reads the boot time
/// and CPU counters) is made once per my-chrome run: a lineage walk and the
/// lease's checks read a dozen processes.
fn one_process(pid: u32) -> Option<OneProcess> {
    static READER: OnceLock<Option<Mutex<System>>> = OnceLock::new();
    let reader = READER.get_or_init(|| System::new().ok().map(Mutex::new));
    let mut system = reader.as_ref()?.lock().unwrap_or_else(|e| e.into_inner());
    let target = sysinfo::Pid::from_u32(pid);
    let kind = ProcessRefreshKind::nothing()
        .with_cmd(UpdateKind::Always)
        .without_tasks();
    system.refresh_processes_specifics(ProcessesToUpdate::Some(&[target]), true, kind);
    let p = system.process(target)?;
    Some(OneProcess {
        start: p.start_time(),
        // It has finished: it holds nothing any more.
        zombie: p.status() == sysinfo::ProcessStatus::Zombie,
        stopped: p.status() == sysinfo::ProcessStatus::Stop,
        parent: p.parent().map(|p| p.as_u32()),
        name: p.name().to_string_lossy().into_owned(),
        cmd: p.cmd().to_vec(),
    })
}

pub struct ProcessTable {
    system: System,
}

impl ProcessTable {
    /// Reads every process's owner, command line, executable, working
    /// directory and environment.
    pub fn read() -> Result<ProcessTable, ProcError> {
        let mut system = System::new().map_err(|e| ProcError(e.to_string()))?;
        let kind = ProcessRefreshKind::nothing()
            .with_cmd(UpdateKind::Always)
            .with_exe(UpdateKind::Always)
            .with_cwd(UpdateKind::Always)
            .with_environ(UpdateKind::Always)
            .with_user(UpdateKind::Always)
            // sysinfo lists Linux threads as processes unless told not to: a
            // multithreaded Chrome would otherwise count once per thread.
            .without_tasks();
        system.refresh_processes_specifics(ProcessesToUpdate::All, true, kind);
        // We can always see ourselves; if we cannot, nothing we see is trustworthy.
        let me = sysinfo::Pid::from_u32(std::process::id());
        match system.process(me) {
            Some(p) if !p.cmd().is_empty() => Ok(ProcessTable { system }),
            _ => Err(ProcError("this process is not visible in it".into())),
        }
    }

    /// `pid`'s parent, grandparent, … up to the root (pid 1 excluded).
    pub fn ancestors(&self, pid: u32) -> Vec<u32> {
        let mut chain = Vec::new();
        let mut current = sysinfo::Pid::from_u32(pid);
        while let Some(parent) = self.system.process(current).and_then(|p| p.parent()) {
            if parent.as_u32() <= 1 || chain.contains(&parent.as_u32()) {
                break;
            }
            chain.push(parent.as_u32());
            current = parent;
        }
        chain
    }

    /// PIDs of processes with an argument that mentions `dir/` anywhere
    /// (`--config=<dir>/file`, say). For a unique, private directory of ours
    /// this names exactly the processes we started with it. A path that is
    /// not one (empty, relative, `/` or a folder at the root) names none:
    /// it would name nearly every process of the machine. Never this one.
    pub fn mentioning(&self, dir: &Path) -> Vec<u32> {
        if !dir.is_absolute() || dir.components().count() < 3 {
            return Vec::new();
        }
        let mut needle = dir.as_os_str().as_bytes().to_vec();
        needle.push(b'/');
        let me = std::process::id();
        let mut pids: Vec<u32> = self
            .iter()
            .filter(|p| p.pid != me)
            .filter(|p| {
                p.cmd.iter().any(|a| {
                    a.as_bytes()
                        .windows(needle.len())
                        .any(|w| w == needle.as_slice())
                })
            })
            .map(|p| p.pid)
            .collect();
        pids.sort_unstable();
        pids
    }

    /// When `pid` started, if it is in the table.
    pub fn start_time(&self, pid: u32) -> Option<u64> {
        self.system
            .process(sysinfo::Pid::from_u32(pid))
            .map(|p| p.start_time())
    }

    pub fn iter(&self) -> impl Iterator<Item = Proc<'_>> {
        let processes = self.system.processes().values();
        processes
            .filter(|p| p.thread_kind().is_none())
            .map(|p| Proc {
                pid: p.pid().as_u32(),
                start_time: p.start_time(),
                uid: p.user_id().map(|u| **u),
                exe: p.exe(),
                cwd: p.cwd(),
                cmd: p.cmd(),
                environ: p.environ(),
            })
    }

    /// PIDs of processes whose executable, working directory or any
    /// argument lies inside `dir` (or is `dir`), sorted.
    pub fn using_path(&self, dir: &Path) -> Vec<u32> {
        let prefix = dir.as_os_str().as_bytes();
        let inside = |arg: &[u8]| {
            arg.starts_with(prefix) && matches!(arg.get(prefix.len()), None | Some(b'/'))
        };
        let mut pids: Vec<u32> = self
            .iter()
            .filter(|p| {
                p.exe.is_some_and(|e| e.starts_with(dir))
                    || p.cwd.is_some_and(|c| c.starts_with(dir))
                    || p.cmd.iter().any(|a| inside(a.as_bytes()))
            })
            .map(|p| p.pid)
            .collect();
        pids.sort_unstable();
        pids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_folder_deep_in_the_tree_names_the_processes_that_mention_it() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("bootstrap");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("attach-config.json"), "").unwrap();
        let mut child = std::process::Command::new("tail")
            .arg("-f")
            .arg(folder.join("attach-config.json"))
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while std::fs::read_to_string(format!("/proc/{}/comm", child.id())).unwrap() != "tail\n" {
            assert!(started.elapsed().as_secs() < 10, "tail never started");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let table = ProcessTable::read().unwrap();
        // The table is a snapshot: the child can go before any assertion.
        let pid = child.id();
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(table.mentioning(&folder), [pid]);
        // Its parent is mentioned as a folder too; a sibling is not.
        assert_eq!(table.mentioning(dir.path()), [pid]);
        assert!(table.mentioning(&dir.path().join("boot")).is_empty());
        // This process is never named, though its own path mentions the
        // folder it runs from.
        let argv0 = std::env::args_os().next().unwrap();
        let ours = Path::new(&argv0).parent().unwrap();
        assert!(
            ours.is_absolute() && ours.components().count() >= 3,
            "{ours:?}"
        );
        assert!(!table.mentioning(ours).contains(&std::process::id()));
        for none in ["", "/", "/tmp", "relative/folder/deep"] {
            assert!(table.mentioning(Path::new(none)).is_empty(), "{none:?}");
        }
    }
}
