//! Running the real my-chrome binary and what one run left behind.

use std::fs;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_my-chrome");

/// The result of one my-chrome run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Asserts the exit code and that the output (either stream) says `needle`.
pub fn says(run: &Run, code: i32, needle: &str) {
    assert_eq!(run.code, code, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(needle) || run.stderr.contains(needle),
        "should say {needle:?}; it says:\n{}{}",
        run.stdout,
        run.stderr
    );
}

impl Run {
    pub fn from_output(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Asserts the exit code and that stderr says `needle`.
    pub fn expect(&self, code: i32, needle: &str) -> &Run {
        assert_eq!(
            self.code, code,
            "exit code; stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        assert!(
            self.stderr.contains(needle),
            "stderr should say {needle:?}; it says:\n{}",
            self.stderr
        );
        self
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}

/// A my-chrome process whose output goes to files, not pipes: a grandchild
/// that outlived it (the bug a test is looking for) must not keep the test
/// waiting for end-of-file.
pub struct Running {
    pub child: std::process::Child,
    stdout: fs::File,
    stderr: fs::File,
    /// Its HOME and arguments: what its end tells of agent keys
    /// (`agent_keys`).
    home: Option<std::ffi::OsString>,
    args: Vec<String>,
}

impl Running {
    pub fn start(cmd: Command) -> Running {
        Running::start_with_input(cmd, None)
    }

    /// Starts it with `input` on its stdin (then closed), or no stdin at all.
    pub fn start_with_input(cmd: Command, input: Option<&[u8]>) -> Running {
        use std::io::Write;
        let stdin = match input {
            Some(_) => std::process::Stdio::piped(),
            None => std::process::Stdio::null(),
        };
        let mut running = Running::start_with_stdin(cmd, stdin);
        if let Some(bytes) = input {
            let written = running.child.stdin.take().unwrap().write_all(bytes);
            // A process that ended before reading says why in its output,
            // which the caller's assertions show (a bare panic here did not).
            if let Err(e) = written {
                assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
            }
        }
        running
    }

    /// Starts it with the given stdin (a terminal, say).
    pub fn start_with_stdin(mut cmd: Command, stdin: std::process::Stdio) -> Running {
        let stdout = tempfile::tempfile().unwrap();
        let stderr = tempfile::tempfile().unwrap();
        let home = cmd
            .get_envs()
            .find(|(k, _)| *k == "HOME")
            .and_then(|(_, v)| v.map(|v| v.to_os_string()));
        let args = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let child = cmd
            .stdin(stdin)
            .stdout(stdout.try_clone().unwrap())
            .stderr(stderr.try_clone().unwrap())
            .spawn()
            .unwrap();
        Running {
            child,
            stdout,
            stderr,
            home,
            args,
        }
    }

    /// Waits (up to 60 s) until the process has written `needle` to stderr.
    pub fn wait_for_stderr(&self, needle: &str) {
        use std::io::{Read, Seek};
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let mut text = String::new();
            let mut file = &self.stderr;
            file.rewind().unwrap();
            file.read_to_string(&mut text).unwrap();
            if text.contains(needle) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "stderr never said {needle:?}: {text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn wait(mut self) -> Run {
        use std::io::{Read, Seek};
        let status = self.child.wait().unwrap();
        let read = |f: &mut fs::File| {
            let mut text = String::new();
            f.rewind().unwrap();
            f.read_to_string(&mut text).unwrap();
            text
        };
        let run = Run {
            code: status.code().unwrap_or(-1),
            stdout: read(&mut self.stdout),
            stderr: read(&mut self.stderr),
        };
        super::agent_keys::after_run(self.home.as_deref(), &self.args, run.code, &run.stderr);
        run
    }
}

/// Runs a tool with `input` on its stdin and requires success.
pub fn run_with_stdin(mut cmd: Command, input: &[u8]) {
    use std::io::Write;
    let mut child = cmd.stdin(std::process::Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    assert!(child.wait().unwrap().success());
}
