//! Shared test fixtures: a private HOME and runtime per test, the real
//! my-chrome binary, and one real installed copy of the pinned CLI (made by
//! `my-chrome setup` once per test run) that tests copy and tamper with.

#![allow(dead_code)] // each test binary uses a different part of this module

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_my-chrome");

/// The result of one my-chrome run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
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
}

impl Running {
    pub fn start(mut cmd: Command) -> Running {
        let stdout = tempfile::tempfile().unwrap();
        let stderr = tempfile::tempfile().unwrap();
        let child = cmd
            .stdin(std::process::Stdio::null())
            .stdout(stdout.try_clone().unwrap())
            .stderr(stderr.try_clone().unwrap())
            .spawn()
            .unwrap();
        Running {
            child,
            stdout,
            stderr,
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
        Run {
            code: status.code().unwrap_or(-1),
            stdout: read(&mut self.stdout),
            stderr: read(&mut self.stderr),
        }
    }
}

/// A private HOME with a custom runtime directory inside it.
pub struct Sandbox {
    pub home: tempfile::TempDir,
    pub runtime: PathBuf,
    env: Vec<(String, String)>,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let home = tempfile::tempdir().unwrap();
        let runtime = home.path().join("runtime");
        Sandbox {
            home,
            runtime,
            env: Vec::new(),
        }
    }

    /// A sandbox whose runtime holds a copy of the golden, supported install.
    pub fn installed() -> Sandbox {
        let sandbox = Sandbox::new();
        copy_tree(golden_runtime(), &sandbox.runtime);
        sandbox
    }

    pub fn cli(&self) -> PathBuf {
        self.runtime.join("cli")
    }

    /// Sets a variable for every later run.
    pub fn set(&mut self, name: &str, value: impl AsRef<Path>) -> &mut Sandbox {
        self.env
            .push((name.into(), value.as_ref().to_string_lossy().into_owned()));
        self
    }

    /// The binary with a cleared environment: HOME, a plain PATH, the
    /// runtime directory, and whatever the test set.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", "/usr/bin:/bin")
            .env("MY_CHROME_RUNTIME_DIR", &self.runtime)
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Run {
        Running::start(self.command(args)).wait()
    }

    pub fn doctor(&self) -> serde_json::Value {
        let run = self.run(&["doctor", "--json"]);
        assert_eq!(run.code, 0, "doctor must not fail: {}", run.stderr);
        run.json()
    }

    /// The digest of the installed tree, through the library.
    pub fn cli_digest(&self) -> String {
        my_chrome::helper::tree::tree_digest(&self.cli()).unwrap()
    }

    /// Names in the runtime that a setup left behind.
    pub fn leftovers(&self) -> Vec<String> {
        fs::read_dir(&self.runtime)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".cli-"))
            .collect()
    }

    /// Makes the installed copy unsupported but intact (one file edited),
    /// so that `setup` goes on to run npm.
    pub fn tamper(&self) {
        let file = self.cli().join("node_modules/@playwright/cli/README.md");
        let mut text = fs::read(&file).unwrap();
        text.extend_from_slice(b"\nedited after setup\n");
        fs::write(file, text).unwrap();
    }
}

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

/// Whether a process is gone (or only a zombie awaiting its reaper).
pub fn process_gone(pid: &str) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

pub fn wait_gone(pid: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !process_gone(pid) {
        assert!(Instant::now() < deadline, "process {pid} is still running");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

pub fn copy_tree(from: &Path, to: &Path) {
    let status = Command::new("/bin/cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cp -a {} {}",
        from.display(),
        to.display()
    );
}

/// One real install per test run, shared by every test binary: made (or
/// confirmed) by `my-chrome setup` under a file lock in Cargo's test
/// scratch directory, with the caller's HOME so npm's cache is reused.
pub fn golden_runtime() -> &'static Path {
    static GOLDEN: OnceLock<PathBuf> = OnceLock::new();
    GOLDEN.get_or_init(|| {
        let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
        fs::create_dir_all(scratch).unwrap();
        let runtime = scratch.join("golden-runtime");
        let lock = fs::File::create(scratch.join("golden.lock")).unwrap();
        let _guard = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive).unwrap();
        let home = std::env::var_os("HOME").expect("tests need HOME");
        let out = Command::new(BIN)
            .arg("setup")
            .env_clear()
            .env("HOME", home)
            .env("PATH", "/usr/bin:/bin")
            .env("MY_CHROME_RUNTIME_DIR", &runtime)
            .output()
            .unwrap();
        let run = Run::from_output(out);
        assert_eq!(run.code, 0, "golden setup failed:\n{}", run.stderr);
        runtime
    })
}
