//! The real pinned `@playwright/cli`, driven directly (no my-chrome): cleared
//! environment, cwd = the runtime (its `.playwright/` makes it the
//! workspace), private TMPDIR, and whatever the test adds.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::{Run, Running, Sandbox, system_node};

pub struct PwCli {
    runtime: PathBuf,
    env: Vec<(String, String)>,
    /// Whether its daemons get the token (then none may outlive it).
    with_token: bool,
}

impl PwCli {
    /// For `sandbox` (an installed runtime), with the extension token and the
    /// executable the relay spawns.
    pub fn new(sandbox: &Sandbox, token: Option<&str>, executable: &Path) -> PwCli {
        if let Some(token) = token {
            super::isolation::check_carried([], [(my_chrome::token_shape::VARIABLE, token)]);
        }
        let runtime = sandbox.runtime.clone();
        let mut env = vec![
            (
                "HOME".to_string(),
                sandbox.home.path().display().to_string(),
            ),
            ("PATH".to_string(), "/usr/bin:/bin".to_string()),
            (
                "TMPDIR".to_string(),
                runtime.join("tmp").display().to_string(),
            ),
            ("NO_UPDATE_NOTIFIER".to_string(), "1".to_string()),
            (
                "PLAYWRIGHT_MCP_EXECUTABLE_PATH".to_string(),
                executable.display().to_string(),
            ),
        ];
        if let Some(token) = token {
            env.push((
                "PLAYWRIGHT_MCP_EXTENSION_TOKEN".to_string(),
                token.to_string(),
            ));
        }
        PwCli {
            runtime,
            env,
            with_token: token.is_some(),
        }
    }

    /// Adds a variable (for the spawned stand-in, say).
    pub fn with(mut self, name: &str, value: &str) -> PwCli {
        super::isolation::check_carried([], [(name, value)]);
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// Runs it; `None` when it did not finish within `bound` (its process
    /// group is then killed).
    pub fn run_within(&self, args: &[&str], bound: Duration) -> Option<Run> {
        let mut cmd = Command::new(system_node());
        cmd.arg(
            self.runtime
                .join("cli/node_modules/@playwright/cli/playwright-cli.js"),
        )
        .args(args)
        .current_dir(&self.runtime)
        .env_clear()
        .envs(self.env.iter().map(|(k, v)| (k, v)))
        .process_group(0);
        // As under my-chrome: everything the CLI and its daemon create is private.
        // SAFETY: umask is async-signal-safe.
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o077));
                Ok(())
            });
        }
        let mut running = Running::start(cmd);
        let deadline = Instant::now() + bound;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = running.child.try_wait() {
                return Some(running.wait());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // As a user's Ctrl-C would: the CLI then stops the daemon it started.
        let group = nix::unistd::Pid::from_raw(running.child.id() as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGINT);
        let grace = Instant::now() + Duration::from_secs(5);
        while Instant::now() < grace && matches!(running.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = running.wait();
        None
    }

    /// Runs it and requires success within 60 s.
    pub fn ok(&self, args: &[&str]) -> Run {
        let run = self
            .run_within(args, Duration::from_secs(60))
            .unwrap_or_else(|| panic!("playwright-cli {args:?} did not finish in 60 s"));
        assert_eq!(
            run.code, 0,
            "playwright-cli {args:?}:\n{}\n{}",
            run.stdout, run.stderr
        );
        run
    }

    /// Processes still running code from this runtime's CLI (daemons).
    pub fn leftovers(&self) -> Vec<u32> {
        my_chrome::procs::ProcessTable::read()
            .unwrap()
            .using_path(&self.runtime.join("cli"))
    }
}

impl Drop for PwCli {
    /// A daemon this CLI left behind (a test that failed or timed out) holds
    /// the token in its environment: it must not outlive the test and trip
    /// every later exposure check. (One without the token leaves the
    /// runtime's other daemons, my-chrome's session among them, alone.)
    fn drop(&mut self) {
        if !self.with_token {
            return;
        }
        if let Ok(table) = my_chrome::procs::ProcessTable::read() {
            for pid in table.using_path(&self.runtime.join("cli")) {
                let pid = nix::unistd::Pid::from_raw(pid as i32);
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
        }
    }
}
