//! A snapshot of the process table, read with `sysinfo`. If the table cannot
//! be read, callers get an error, never an empty answer that looks safe.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, System, UpdateKind};

#[derive(Debug, thiserror::Error)]
#[error(
    "cannot read the process table ({0}), so my-chrome cannot tell what is running; nothing was changed. \
     Run it where /proc (Linux) or the process list (macOS) is readable"
)]
pub struct ProcError(String);

pub struct ProcessTable {
    system: System,
}

impl ProcessTable {
    /// Reads every process's command line, executable and working directory.
    pub fn read() -> Result<ProcessTable, ProcError> {
        let mut system = System::new().map_err(|e| ProcError(e.to_string()))?;
        let kind = ProcessRefreshKind::nothing()
            .with_cmd(UpdateKind::Always)
            .with_exe(UpdateKind::Always)
            .with_cwd(UpdateKind::Always)
            .with_user(UpdateKind::Always);
        system.refresh_processes_specifics(ProcessesToUpdate::All, true, kind);
        // We can always see ourselves; if we cannot, nothing we see is trustworthy.
        let me = sysinfo::Pid::from_u32(std::process::id());
        match system.process(me) {
            Some(p) if !p.cmd().is_empty() => Ok(ProcessTable { system }),
            _ => Err(ProcError("this process is not visible in it".into())),
        }
    }

    /// PIDs of processes whose executable, working directory or any
    /// argument lies inside `dir` (or is `dir`), sorted.
    pub fn using_path(&self, dir: &Path) -> Vec<u32> {
        let prefix = dir.as_os_str().as_bytes();
        let inside = |arg: &[u8]| {
            arg.starts_with(prefix) && matches!(arg.get(prefix.len()), None | Some(b'/'))
        };
        let mut pids: Vec<u32> = self
            .system
            .processes()
            .values()
            .filter(|p| {
                p.exe().is_some_and(|e| e.starts_with(dir))
                    || p.cwd().is_some_and(|c| c.starts_with(dir))
                    || p.cmd().iter().any(|a| inside(a.as_bytes()))
            })
            .map(|p| p.pid().as_u32())
            .collect();
        pids.sort_unstable();
        pids
    }
}
