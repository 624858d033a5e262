//! The session's daemon, started by `connect` itself as the pinned CLI's
//! own session code starts it (`cli-client/session.js`, `startDaemon`):
//! `node <cli>/node_modules/playwright-core/lib/entry/cliDaemon.js
//! <session> --browser=chrome --config=<file> --extension`, ready once its
//! stdout says `Daemon listening on` (printed after the extension
//! connected, the session file was written and the socket listens). No
//! client process loads the CLI's bundles only to start it, and no
//! snapshot is taken of the tab whose address carries the token
//! (docs/DESIGN.md, "Delivering the connect URL").

use std::io::Read;
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::child::{ChildCommand, ChildEnv, ChildError};

/// What the daemon prints once it serves the session (`session.js` waits
/// for exactly this).
const READY: &[u8] = b"Daemon listening on";

/// Its stdout before that line is a few short lines: more is not a daemon.
const STDOUT_LIMIT: usize = 64 << 10;

/// How the start stands.
#[derive(Debug)]
pub enum Progress {
    Starting,
    Listening,
    Ended(ExitStatus),
}

/// A daemon starting. Dropped before it listens, it is stopped; once it
/// listens it is the session's, and outlives this handle.
pub struct Starting {
    child: Child,
    ready: mpsc::Receiver<()>,
    listening: bool,
    reaped: bool,
}

impl Starting {
    /// Starts `node <entry> <session> --browser=chrome --config=<config>
    /// --extension` in `cwd`, with `env`, its errors to `errors`.
    pub fn spawn(
        node: &Path,
        entry: &Path,
        session: &str,
        config: &Path,
        cwd: &Path,
        env: &ChildEnv,
        errors: &std::fs::File,
    ) -> Result<Starting, ChildError> {
        let mut child = ChildCommand::new("the session's daemon", node, cwd, Duration::ZERO)
            .arg(entry)
            .arg(session)
            .arg("--browser=chrome")
            .arg(format!("--config={}", config.display()))
            .arg("--extension")
            .spawn_daemon(env, errors)?;
        let (sender, ready) = mpsc::channel();
        let stdout = child.stdout.take();
        std::thread::spawn(move || {
            if let Some(stdout) = stdout
                && said_ready(stdout)
            {
                let _ = sender.send(());
            }
            // The pipe closes here, as the pinned client closes it.
        });
        Ok(Starting {
            child,
            ready,
            listening: false,
            reaped: false,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it listens now, ended, or is still starting.
    pub fn poll(&mut self) -> std::io::Result<Progress> {
        if self.listening || self.ready.try_recv().is_ok() {
            self.listening = true;
            return Ok(Progress::Listening);
        }
        match self.child.try_wait()? {
            Some(status) => {
                self.reaped = true;
                Ok(Progress::Ended(status))
            }
            None => Ok(Progress::Starting),
        }
    }

    /// Whether it said it listens.
    pub fn listening(&self) -> bool {
        self.listening
    }

    /// Stops a daemon that does not serve the session yet: SIGINT to its
    /// group (its own watchdog then closes what it opened), SIGKILL to
    /// what is left after `grace`. One that listens is left to `detach`.
    pub fn stop(&mut self, grace: Duration) {
        if self.listening || self.reaped {
            return;
        }
        // Unreaped, its pid (its group: it leads its own session) cannot
        // have been reused.
        let group = Pid::from_raw(self.child.id() as i32);
        let _ = killpg(group, Signal::SIGINT);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                self.reaped = true;
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = killpg(group, Signal::SIGKILL);
        let _ = self.child.wait();
        self.reaped = true;
    }
}

impl Drop for Starting {
    fn drop(&mut self) {
        if !self.listening && !self.reaped {
            let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
            let _ = self.child.wait();
        }
    }
}

/// Reads `stdout` until it shows [`READY`]; `false` if it closes (or runs
/// past the limit) first.
fn said_ready(mut stdout: impl Read) -> bool {
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stdout.read(&mut chunk) {
            Ok(0) | Err(_) => return false,
            Ok(n) => seen.extend_from_slice(&chunk[..n]),
        }
        if seen.windows(READY.len()).any(|w| w == READY) {
            return true;
        }
        if seen.len() > STDOUT_LIMIT {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::said_ready;

    #[test]
    fn ready_is_the_daemons_own_line_even_split_across_reads() {
        struct Chunks(Vec<&'static [u8]>);
        impl std::io::Read for Chunks {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if self.0.is_empty() {
                    return Ok(0);
                }
                let next = self.0.remove(0);
                buf[..next.len()].copy_from_slice(next);
                Ok(next.len())
            }
        }
        assert!(said_ready(Chunks(vec![
            b"### Config\n",
            b"Daemon list",
            b"ening on /tmp/x.sock\n"
        ])));
        assert!(!said_ready(Chunks(vec![b"Error: no browser\n"])));
        assert!(!said_ready(Chunks(vec![b"Daemon listening"])));
        assert!(!said_ready(Chunks(vec![&[b'x'; 4096]; 20])));
    }
}
