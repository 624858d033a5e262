//! The real browser behind the stand-in: Debian's headless Chromium with a
//! private, throw-away profile, in its own process group. Stopped gently
//! (SIGTERM, so it removes its own temporary files), then its whole group
//! killed; it also dies with the stand-in (parent-death signal).

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tempfile::TempDir;

pub struct Chromium {
    child: Child,
    profile: Option<TempDir>,
    /// `ws://127.0.0.1:<port>/devtools/browser/<id>`
    pub endpoint: String,
}

impl Chromium {
    pub fn launch(executable: &Path) -> Result<Chromium, String> {
        let profile = tempfile::Builder::new()
            .prefix("standin-chromium.")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let mut command = Command::new(executable);
        command
            .arg("--headless=new")
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args([
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "about:blank",
            ])
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            command.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)
            });
        }
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", executable.display()))?;
        let port_file = profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        let endpoint = loop {
            if let Ok(text) = fs::read_to_string(&port_file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                    break format!("ws://127.0.0.1:{port}{path}");
                }
            }
            if Instant::now() > deadline {
                return Err("Chromium did not report its DevTools endpoint within 30 s".into());
            }
            thread::sleep(Duration::from_millis(10));
        };
        Ok(Chromium {
            child,
            profile: Some(profile),
            endpoint,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let pid = Pid::from_raw(self.child.id() as i32);
        let _ = kill(pid, Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
            thread::sleep(Duration::from_millis(20));
        }
        // Helpers that outlived the browser still write into the profile.
        let _ = killpg(pid, Signal::SIGKILL);
        let _ = self.child.wait();
        while killpg(pid, None).is_ok() && Instant::now() < deadline + Duration::from_secs(5) {
            thread::sleep(Duration::from_millis(20));
        }
        drop(self.profile.take());
    }
}
