//! The one way my-chrome starts a child process. Every child gets:
//! - a cleared environment plus an explicit allowlist (see [`ChildEnv`]), so
//!   caller variables such as `NODE_OPTIONS`, `PLAYWRIGHT_*`, `PWTEST_*` or
//!   `XDG_CACHE_HOME` never reach it;
//! - a fixed working directory (the runtime, or a directory inside it);
//! - its own process group, so a timeout or an interrupt kills exactly what
//!   we started and nothing else;
//! - on Linux, death with my-chrome (`PR_SET_PDEATHSIG`): a my-chrome killed
//!   outright (SIGKILL) leaves no child of its own running;
//! - a bounded wait.
//!
//! The umask (077) is set once for the whole process in `main` and inherited.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use zeroize::Zeroizing;

use crate::config::Config;
use crate::exit::Exit;
use crate::signals;

/// Fixed system directories: the only `PATH` a child sees (plus, for npm,
/// the trusted node's own directory).
pub const SYSTEM_PATH: &str = "/usr/bin:/bin:/usr/sbin:/sbin";

/// Captured output beyond this is read and dropped.
const CAPTURE_LIMIT: usize = 1 << 20;

/// The complete environment of a child.
#[derive(Clone, Debug)]
pub struct ChildEnv {
    vars: Vec<(OsString, OsString)>,
}

impl ChildEnv {
    /// The allowlist: `HOME`, `USER`, `LOGNAME`, `LANG`, `LC_*` from the
    /// caller; `TMPDIR` = our private temporary directory; `PATH` = fixed
    /// system directories; `NO_UPDATE_NOTIFIER=1` so the CLI never phones
    /// home; and the five variables below.
    pub fn new(config: &Config, private_tmp: &Path) -> ChildEnv {
        let mut vars = config.child_vars.clone();
        vars.push(("TMPDIR".into(), private_tmp.into()));
        vars.push(("PATH".into(), SYSTEM_PATH.into()));
        vars.push(("NO_UPDATE_NOTIFIER".into(), "1".into()));
        // Code the daemon would load from outside the verified tree, where a
        // forwarded command may write files: the global CLI config (its
        // `browser.initPage` is `require`d) is looked for in the private
        // TMPDIR instead of HOME, and the WebSocket library's optional native
        // add-ons are not looked for at all.
        vars.push(("PWTEST_CLI_GLOBAL_CONFIG".into(), private_tmp.into()));
        vars.push(("WS_NO_BUFFER_UTIL".into(), "1".into()));
        vars.push(("WS_NO_UTF_8_VALIDATE".into(), "1".into()));
        // Programs Playwright looks up at run time (ffmpeg for `video-start`,
        // browsers) come from `<playwright-core>/.local-browsers`: inside the
        // verified tree, sealed and recorded, so nothing is there unless a
        // full check saw it. Never from the user's `ms-playwright` cache,
        // where any process of the user (or a forwarded command, before the
        // file roots) could plant one.
        vars.push(("PLAYWRIGHT_BROWSERS_PATH".into(), "0".into()));
        // The browser the daemon binds is registered inside the private
        // TMPDIR, never in the user's cache where any process finds it
        // (src/session/bound.rs).
        vars.push((
            "PWTEST_SERVER_REGISTRY".into(),
            crate::runtime::bound_registry(private_tmp).into(),
        ));
        ChildEnv { vars }
    }

    /// Puts `dir` in front of `PATH`, for tools (npm) whose launcher looks
    /// for `node` on `PATH`: they must find the trusted one.
    pub fn with_path_prefix(mut self, dir: &Path) -> ChildEnv {
        let mut path = dir.as_os_str().to_owned();
        path.push(":");
        path.push(SYSTEM_PATH);
        self.set("PATH", path);
        self
    }

    /// Adds or replaces one variable.
    pub fn with(mut self, name: &str, value: impl Into<OsString>) -> ChildEnv {
        self.set(name, value.into());
        self
    }

    fn set(&mut self, name: &str, value: OsString) {
        self.vars.retain(|(k, _)| k != name);
        self.vars.push((name.into(), value));
    }

    pub fn vars(&self) -> &[(OsString, OsString)] {
        &self.vars
    }
}

/// What happens to a child's stdout or stderr.
pub enum Output {
    Discard,
    /// Kept (up to 1 MiB) and returned in [`Finished`].
    Capture,
    /// Written to the sink read by read, as it arrives, and the sink
    /// dropped when the pipe closes. What shows a child's output to the
    /// user is `output::Relay::sink` (through the redactor to our stdout
    /// or stderr): this module starts processes and prints nothing.
    Streamed(Box<dyn Write + Send>),
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Output::Discard => f.write_str("Discard"),
            Output::Capture => f.write_str("Capture"),
            Output::Streamed(_) => f.write_str("Streamed"),
        }
    }
}

/// A child to run: program, arguments, working directory and bound.
#[derive(Debug)]
pub struct ChildCommand {
    what: String,
    program: PathBuf,
    args: Vec<OsString>,
    cwd: PathBuf,
    timeout: Duration,
    stdout: Output,
    stderr: Output,
    /// Cleanup that must run even after an interrupting signal.
    despite_signals: bool,
}

/// Captured output is zeroed when dropped: a clipboard tool's stdout is the token.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Zeroizing<Vec<u8>>,
    pub stderr: Zeroizing<Vec<u8>>,
}

impl Finished {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    #[error("could not start {what} ({program}): {source}")]
    Spawn {
        what: String,
        program: PathBuf,
        source: std::io::Error,
    },
    #[error("{what} did not finish within {} s; its process group was killed", .after.as_secs())]
    TimedOut { what: String, after: Duration },
    #[error("interrupted by {signal}; {what} and its process group were killed")]
    Interrupted { what: String, signal: Signal },
    #[error("could not wait for {what}: {source}")]
    Wait {
        what: String,
        source: std::io::Error,
    },
}

impl ChildError {
    pub fn exit(&self) -> Exit {
        match self {
            ChildError::TimedOut { .. } => Exit::Timeout,
            ChildError::Interrupted { signal, .. } => Exit::from(*signal),
            ChildError::Spawn { .. } | ChildError::Wait { .. } => Exit::Failure,
        }
    }
}

impl ChildCommand {
    /// `what` names the child in messages ("npm ci", "node --version").
    pub fn new(
        what: &str,
        program: impl AsRef<Path>,
        cwd: &Path,
        timeout: Duration,
    ) -> ChildCommand {
        ChildCommand {
            what: what.to_string(),
            program: program.as_ref().to_path_buf(),
            args: Vec::new(),
            cwd: cwd.to_path_buf(),
            timeout,
            stdout: Output::Capture,
            stderr: Output::Capture,
            despite_signals: false,
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> ChildCommand {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> ChildCommand {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn stdout(mut self, output: Output) -> ChildCommand {
        self.stdout = output;
        self
    }

    /// Runs even when an interrupting signal is pending (bounded by its
    /// timeout only): the token-free detach after an interrupt.
    pub fn despite_signals(mut self) -> ChildCommand {
        self.despite_signals = true;
        self
    }

    pub fn stderr(mut self, output: Output) -> ChildCommand {
        self.stderr = output;
        self
    }

    /// The process as every child starts: its program, arguments and cwd,
    /// a cleared environment plus the allowlist, its own process group, no
    /// stdin.
    fn command(&self, env: &ChildEnv) -> Command {
        let mut command = self.detached(env);
        crate::platform::die_with_parent(&mut command);
        command
    }

    /// The same, without dying with my-chrome.
    fn detached(&self, env: &ChildEnv) -> Command {
        let mut command = self.plain(env);
        command.process_group(0);
        command
    }

    /// Its program, arguments and cwd, a cleared environment plus the
    /// allowlist, no stdin: what every child has, whatever its group.
    fn plain(&self, env: &ChildEnv) -> Command {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .current_dir(&self.cwd)
            .env_clear()
            .envs(env.vars().iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null());
        command
    }

    /// Starts the child to outlive my-chrome (in its own process group,
    /// not dying with it, nothing of the caller's terminal or pipes: the
    /// caller's command ends when my-chrome does), with `stdin` and
    /// `stdout` handed to it; its pid. Only my-chrome itself is started so
    /// (`lease::finish`: it waits for the answer to a command past its
    /// bound; the session's watcher).
    pub fn spawn_detached(
        self,
        env: &ChildEnv,
        stdin: Stdio,
        stdout: Stdio,
    ) -> Result<u32, ChildError> {
        if let Some(error) = self.interrupted() {
            return Err(error);
        }
        let child = self
            .detached(env)
            .stdin(stdin)
            .stdout(stdout)
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| self.spawn_error(source))?;
        Ok(child.id())
    }

    /// Starts the session's daemon as the pinned CLI's own session code
    /// starts it: in a session of its own (it outlives my-chrome, and no
    /// terminal's hangup reaches it), no stdin (a stdin that closes stops
    /// it), its stdout a pipe to read its readiness from, its stderr
    /// `errors` (a private file). It is not killed when the handle goes:
    /// `session::daemon_start` decides that.
    pub fn spawn_daemon(
        self,
        env: &ChildEnv,
        errors: &std::fs::File,
    ) -> Result<std::process::Child, ChildError> {
        if let Some(error) = self.interrupted() {
            return Err(error);
        }
        let spawn_error = |source| self.spawn_error(source);
        // Not `detached`: a process group leader cannot start a session.
        let mut command = self.plain(env);
        command
            .stdout(Stdio::piped())
            .stderr(errors.try_clone().map_err(spawn_error)?);
        crate::platform::own_session(&mut command);
        command.spawn().map_err(spawn_error)
    }

    /// The refusal to start (or go on) once SIGINT, SIGTERM or SIGHUP has
    /// arrived, unless this child is cleanup that runs despite them.
    fn interrupted(&self) -> Option<ChildError> {
        let signal = signals::pending().filter(|_| !self.despite_signals)?;
        Some(ChildError::Interrupted {
            what: self.what.clone(),
            signal,
        })
    }

    fn spawn_error(&self, source: std::io::Error) -> ChildError {
        ChildError::Spawn {
            what: self.what.clone(),
            program: self.program.clone(),
            source,
        }
    }

    /// Runs the child to completion, or kills its process group when the
    /// bound passes or an interrupting signal arrives.
    pub fn run(mut self, env: &ChildEnv) -> Result<Finished, ChildError> {
        if let Some(error) = self.interrupted() {
            return Err(error);
        }
        let out = std::mem::replace(&mut self.stdout, Output::Discard);
        let err = std::mem::replace(&mut self.stderr, Output::Discard);
        let spawn_error = |source| self.spawn_error(source);
        let mut command = self.command(env);
        command
            .stdout(stdio(&out).map_err(spawn_error)?)
            .stderr(stdio(&err).map_err(spawn_error)?);
        let mut child = command.spawn().map_err(spawn_error)?;
        let stdout = child.stdout.take().map(|pipe| read(pipe, out));
        let stderr = child.stderr.take().map(|pipe| read(pipe, err));

        let wait_error = |source| ChildError::Wait {
            what: self.what.clone(),
            source,
        };
        let started = Instant::now();
        let mut pause = Duration::from_millis(2);
        let status = loop {
            if let Some(status) = child.try_wait().map_err(wait_error)? {
                break status;
            }
            // The child is not reaped yet, so its process group id cannot
            // have been reused: killing the group kills exactly our child
            // and whatever it started in that group.
            let stop = if let Some(error) = self.interrupted() {
                Some(error)
            } else if started.elapsed() >= self.timeout {
                Some(ChildError::TimedOut {
                    what: self.what.clone(),
                    after: self.timeout,
                })
            } else {
                None
            };
            if let Some(error) = stop {
                let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
                let _ = child.wait();
                return Err(error);
            }
            thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(25));
        };
        Ok(Finished {
            status,
            stdout: stdout.map(finish).unwrap_or_default(),
            stderr: stderr.map(finish).unwrap_or_default(),
        })
    }
}

fn stdio(output: &Output) -> std::io::Result<Stdio> {
    Ok(match output {
        Output::Discard => Stdio::null(),
        Output::Capture | Output::Streamed(_) => Stdio::piped(),
    })
}

/// Reads a pipe on a thread, as `output` says.
fn read(pipe: impl Read + Send + 'static, output: Output) -> mpsc::Receiver<Zeroizing<Vec<u8>>> {
    match output {
        Output::Streamed(sink) => stream(pipe, sink),
        Output::Discard | Output::Capture => collect(pipe),
    }
}

/// Reads a pipe on a thread; the answer arrives when the pipe closes.
fn collect(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<Zeroizing<Vec<u8>>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        // Reserved so that small outputs (a token is at most 128 bytes) never
        // grow the buffer and leave an unzeroed copy behind.
        let mut kept = Zeroizing::new(Vec::with_capacity(64 * 1024));
        let mut buf = Zeroizing::new([0u8; 8192]);
        while let Ok(n) = pipe.read(&mut buf[..]) {
            if n == 0 {
                break;
            }
            let room = CAPTURE_LIMIT.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
        }
        let _ = tx.send(kept);
    });
    rx
}

/// Streams a pipe into `sink`, read by read (a sink that takes no more,
/// its output closed, does not stop the reading: the child is never left
/// blocked on a full pipe), then drops it, which ends it; the receiver
/// gets an empty answer when the pipe closes.
fn stream(
    mut pipe: impl Read + Send + 'static,
    mut sink: Box<dyn Write + Send>,
) -> mpsc::Receiver<Zeroizing<Vec<u8>>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut buf = Zeroizing::new([0u8; 8192]);
        while let Ok(n) = pipe.read(&mut buf[..]) {
            if n == 0 {
                break;
            }
            let _ = sink.write_all(&buf[..n]);
        }
        drop(sink);
        let _ = tx.send(Zeroizing::new(Vec::new()));
    });
    rx
}

/// A grandchild that left our process group could hold the pipe open
/// forever; after the child itself is gone, wait for its output only briefly.
fn finish(rx: mpsc::Receiver<Zeroizing<Vec<u8>>>) -> Zeroizing<Vec<u8>> {
    rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default()
}
