//! A stand-in npm beside a link to the real node, and the system node.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A directory standing in for a node installation: `node` is a link to the
/// system's real node; `npm` is the given shell script.
pub struct FakeNpm {
    pub dir: tempfile::TempDir,
}

impl FakeNpm {
    pub fn new(script: &str) -> FakeNpm {
        let dir = tempfile::tempdir().unwrap();
        symlink(system_node(), dir.path().join("node")).unwrap();
        let npm = dir.path().join("npm");
        let body = script.replace("@DIR@", &dir.path().to_string_lossy());
        fs::write(&npm, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&npm, fs::Permissions::from_mode(0o755)).unwrap();
        FakeNpm { dir }
    }

    pub fn node(&self) -> PathBuf {
        self.dir.path().join("node")
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Waits for the script to write `name`, and returns its content.
    pub fn wait_for(&self, name: &str) -> String {
        let path = self.file(name);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(text) = fs::read_to_string(&path)
                && text.ends_with('\n')
            {
                return text.trim().to_string();
            }
            assert!(
                Instant::now() < deadline,
                "{} never appeared",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

pub fn system_node() -> PathBuf {
    ["/usr/local/bin/node", "/usr/bin/node"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("tests need Node.js at /usr/local/bin/node or /usr/bin/node (scripts/test.sh installs it)")
}
