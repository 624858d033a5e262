//! The real browser behind the stand-in: Debian's headless Chromium with a
//! private, throw-away profile. It dies with the stand-in (parent-death
//! signal), even when the stand-in is killed.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

pub struct Chromium {
    child: Child,
    _profile: TempDir,
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
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            command.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                    .map_err(std::io::Error::from)
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
            _profile: profile,
            endpoint,
        })
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
