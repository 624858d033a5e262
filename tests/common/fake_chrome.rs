//! A process that looks like a normal Chrome to the process table.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// A stand-in for a Chrome executable: a copy of `/bin/sh` at a path of the
/// test's choosing, so that its processes' executable is that path.
pub struct FakeChrome {
    pub dir: tempfile::TempDir,
    started: std::sync::Mutex<Vec<std::process::Child>>,
}

impl FakeChrome {
    pub fn new() -> FakeChrome {
        let dir = tempfile::tempdir().unwrap();
        fs::copy("/bin/sh", dir.path().join("chrome")).unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        FakeChrome {
            dir,
            started: std::sync::Mutex::new(Vec::new()),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("chrome")
    }

    /// Starts one process of it with these arguments (and extra environment).
    pub fn start_with(&self, args: &[&str], env: &[(&str, &str)], uid: Option<u32>) -> u32 {
        self.spawn(Command::new(self.path()), args, env, uid)
    }

    /// Starts one whose argv[0] reads like a Chrome helper's rewritten
    /// command line (`<path> --type=gpu-process …`, one space-joined string).
    pub fn start_rewritten(&self, words: &str) -> u32 {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(self.path());
        cmd.arg0(format!("{} {words}", self.path().display()));
        self.spawn(cmd, &[], &[], None)
    }

    fn spawn(
        &self,
        mut cmd: Command,
        args: &[&str],
        env: &[(&str, &str)],
        uid: Option<u32>,
    ) -> u32 {
        use std::os::unix::process::CommandExt;
        super::isolation::check_carried(args.iter().copied(), env.iter().copied());
        // It waits on a pipe we keep open (with the child), and never
        // forks: a forked copy would carry its command line too, for a
        // moment, and a scan would see two of it.
        cmd.args(["-c", "read -r _", "chrome"])
            .args(args)
            .envs(env.iter().copied())
            .process_group(0)
            .stdin(std::process::Stdio::piped());
        if let Some(uid) = uid {
            cmd.uid(uid);
        }
        // Another test thread forking while our copy was open for writing
        // holds it briefly: exec then fails with ETXTBSY. That passes.
        let mut tries = 0;
        let child = loop {
            match cmd.spawn() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
                other => break other.unwrap(),
            }
        };
        let pid = child.id();
        self.started.lock().unwrap().push(child);
        pid
    }

    pub fn start(&self, args: &[&str]) -> u32 {
        self.start_with(args, &[], None)
    }

    /// Ends one process (and its group).
    pub fn stop(&self, pid: u32) {
        let mut started = self.started.lock().unwrap();
        let at = started
            .iter()
            .position(|c| c.id() == pid)
            .expect("not started here");
        let mut child = started.remove(at);
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = child.wait();
    }
}

impl Drop for FakeChrome {
    fn drop(&mut self) {
        let pids: Vec<u32> = self
            .started
            .lock()
            .unwrap()
            .iter()
            .map(|c| c.id())
            .collect();
        for pid in pids {
            self.stop(pid);
        }
    }
}
