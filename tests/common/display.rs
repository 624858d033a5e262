//! A real X display (Xvfb) with a real clipboard.

use std::path::Path;
use std::process::Command;

/// A virtual X display (Xvfb) for real clipboard tests.
pub struct Display {
    pub name: String,
    server: std::process::Child,
}

impl Display {
    pub fn start() -> Display {
        assert!(
            Path::new("/usr/bin/Xvfb").exists() && Path::new("/usr/bin/xclip").exists(),
            "Xvfb and xclip are missing: scripts/test.sh installs xvfb and xclip"
        );
        use std::io::BufRead;
        let mut server = Command::new("/usr/bin/Xvfb")
            .args([
                "-displayfd",
                "1",
                "-nolisten",
                "tcp",
                "-screen",
                "0",
                "640x480x24",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(server.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let number = line.trim();
        assert!(!number.is_empty(), "Xvfb did not report its display");
        Display {
            name: format!(":{number}"),
            server,
        }
    }

    fn xclip(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("/usr/bin/xclip");
        cmd.args(["-selection", "clipboard"])
            .args(args)
            .env_clear()
            .env("DISPLAY", &self.name);
        cmd
    }

    /// Puts `text` on the clipboard (xclip keeps serving it in the background).
    pub fn copy(&self, text: &str) {
        let mut cmd = self.xclip(&["-i"]);
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        super::run::run_with_stdin(cmd, text.as_bytes());
    }

    /// What the clipboard holds now ("" when empty or unowned).
    pub fn paste(&self) -> String {
        let out = self
            .xclip(&["-o"])
            .stderr(std::process::Stdio::null())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}
