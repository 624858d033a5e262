//! A real Secret Service per test: a private D-Bus session and GNOME Keyring.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A real Secret Service: a private D-Bus session bus and a GNOME Keyring
/// daemon whose login keyring is unlocked with a test password.
pub struct Keyring {
    dir: tempfile::TempDir,
    home: PathBuf,
    bus: std::process::Child,
    keyring: std::process::Child,
}

impl Keyring {
    pub fn start(home: &Path) -> Keyring {
        for tool in [
            "/usr/bin/dbus-daemon",
            "/usr/bin/gnome-keyring-daemon",
            "/usr/bin/secret-tool",
        ] {
            assert!(
                Path::new(tool).exists(),
                "{tool} is missing: scripts/test.sh installs dbus, gnome-keyring and libsecret-tools"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("bus");
        let bus = Command::new("/usr/bin/dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile"])
            .arg(format!("--address=unix:path={}", socket.display()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !socket.exists() {
            assert!(Instant::now() < deadline, "dbus-daemon did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut keyring = Command::new("/usr/bin/gnome-keyring-daemon")
            .args(["--unlock", "--foreground", "--components=secrets"])
            .env_clear()
            .env("HOME", home)
            .env("PATH", "/usr/bin:/bin")
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                format!("unix:path={}", socket.display()),
            )
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut stdin = keyring.stdin.take().unwrap();
            stdin.write_all(b"test-keyring-password").unwrap();
        }
        let ring = Keyring {
            dir,
            home: home.to_path_buf(),
            bus,
            keyring,
        };
        while !ring
            .dbus_call(&[
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner",
                "string:org.freedesktop.secrets",
            ])
            .contains("true")
        {
            assert!(
                Instant::now() < deadline,
                "gnome-keyring-daemon did not take the bus name"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        ring
    }

    pub fn address(&self) -> String {
        format!("unix:path={}", self.dir.path().join("bus").display())
    }

    fn tool(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/bin:/bin")
            .env("DBUS_SESSION_BUS_ADDRESS", self.address());
        cmd
    }

    fn dbus_call(&self, args: &[&str]) -> String {
        let out = self
            .tool("/usr/bin/dbus-send")
            .args(["--session", "--print-reply"])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The secret of an item, read independently with `secret-tool`.
    pub fn lookup(&self, service: &str, account: &str) -> Option<String> {
        let out = self
            .tool("/usr/bin/secret-tool")
            .args(["lookup", "service", service, "account", account])
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8(out.stdout).unwrap())
    }

    /// How many items carry these attributes.
    pub fn count(&self, service: &str, account: &str) -> usize {
        let out = self
            .tool("/usr/bin/secret-tool")
            .args([
                "search", "--all", "--unlock", "service", service, "account", account,
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .chain(String::from_utf8_lossy(&out.stdout).lines())
            .filter(|l| l.starts_with('['))
            .count()
    }

    /// Stores an item with `secret-tool`, value on its stdin.
    pub fn store(&self, service: &str, account: &str, value: &str) {
        let mut cmd = self.tool("/usr/bin/secret-tool");
        cmd.args([
            "store",
            "--label=test item",
            "service",
            service,
            "account",
            account,
        ]);
        super::run::run_with_stdin(cmd, value.as_bytes());
    }

    /// Deletes the item, as the user can in their keyring's own app.
    pub fn clear(&self, service: &str, account: &str) {
        let status = self
            .tool("/usr/bin/secret-tool")
            .args(["clear", "service", service, "account", account])
            .status()
            .unwrap();
        assert!(status.success(), "secret-tool clear failed");
    }

    /// Locks the login collection, as a screen lock or a timeout would.
    pub fn lock(&self) {
        let reply = self.dbus_call(&[
            "--dest=org.freedesktop.secrets",
            "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service.Lock",
            "array:objpath:/org/freedesktop/secrets/collection/login",
        ]);
        assert!(
            reply.contains("collection/login"),
            "could not lock: {reply}"
        );
    }
}

impl Drop for Keyring {
    fn drop(&mut self) {
        let _ = self.keyring.kill();
        let _ = self.keyring.wait();
        let _ = self.bus.kill();
        let _ = self.bus.wait();
    }
}
