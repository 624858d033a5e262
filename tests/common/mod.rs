//! Shared test fixtures: a private HOME and runtime per test, the real
//! my-chrome binary, and one real installed copy of the pinned CLI (made by
//! `my-chrome setup` once per test run) that tests copy and tamper with.

#![allow(dead_code)] // each test binary uses a different part of this module

pub mod pwcli;
pub mod real_extension;
pub mod sampler;
pub mod site;
pub mod standin;

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
            running
                .child
                .stdin
                .take()
                .unwrap()
                .write_all(bytes)
                .unwrap();
        }
        running
    }

    /// Starts it with the given stdin (a terminal, say).
    pub fn start_with_stdin(mut cmd: Command, stdin: std::process::Stdio) -> Running {
        let stdout = tempfile::tempfile().unwrap();
        let stderr = tempfile::tempfile().unwrap();
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
    /// The copy has new inodes and times, so the golden record of the tree
    /// (`cli-manifest.txt`) is left out: the first command that needs the
    /// helper checks it in full and records it, as after an upgrade.
    pub fn installed() -> Sandbox {
        let sandbox = Sandbox::new();
        copy_tree(golden_runtime(), &sandbox.runtime);
        let _ = fs::remove_file(sandbox.runtime.join("cli-manifest.txt"));
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
        self.command_through(&[], args)
    }

    /// The same, started through `wrapper` (`unshare -m …`, say), which
    /// ends by running the binary with `args`.
    pub fn command_through(&self, wrapper: &[&str], args: &[&str]) -> Command {
        let mut cmd = match wrapper {
            [] => Command::new(BIN),
            [program, rest @ ..] => {
                let mut cmd = Command::new(program);
                cmd.args(rest).arg(BIN);
                cmd
            }
        };
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

    /// Runs with `input` on standard input.
    pub fn run_input(&self, args: &[&str], input: &str) -> Run {
        Running::start_with_input(self.command(args), Some(input.as_bytes())).wait()
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

/// Whether a process is gone: no longer in /proc, or a zombie whose every
/// thread has exited (a multithreaded process's leader turns zombie while its
/// other threads still hold its files).
pub fn process_gone(pid: &str) -> bool {
    let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) else {
        return true;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    field("State:").starts_with('Z') && field("Threads:").parse::<u32>().unwrap_or(0) <= 1
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

/// A throw-away token, fresh for each call: 43 characters of the token alphabet.
pub fn fresh_token() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    let mut bytes = [0u8; 43];
    use std::io::Read;
    fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut bytes)
        .unwrap();
    bytes
        .iter()
        .map(|b| ALPHABET[(*b as usize) % ALPHABET.len()] as char)
        .collect()
}

/// The canary scan: `secret` appears in none of `outputs` and in no file
/// under `home` except the keyring's own (encrypted) storage.
pub fn assert_nowhere(secret: &str, home: &Path, outputs: &[&Run]) {
    assert_nowhere_but(secret, home, outputs, &[]);
}

/// The same, also leaving out `exempt` directories (a browser profile that
/// keeps the token by design).
pub fn assert_nowhere_but(secret: &str, home: &Path, outputs: &[&Run], exempt: &[&Path]) {
    for run in outputs {
        assert!(
            !run.stdout.contains(secret),
            "the token leaked to stdout:\n{}",
            run.stdout
        );
        assert!(
            !run.stderr.contains(secret),
            "the token leaked to stderr:\n{}",
            run.stderr
        );
    }
    let keyrings = home.join(".local/share/keyrings");
    let mut stack = vec![home.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if path == keyrings || exempt.contains(&path.as_path()) {
                continue;
            }
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let bytes = fs::read(&path).unwrap_or_default();
                let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
                assert!(!found, "the token is written in {}", path.display());
            }
        }
    }
}

/// An installed runtime with a fresh throw-away token stored in a real
/// keyring: what a user has after `setup` and `token store`.
pub struct World {
    pub sandbox: Sandbox,
    pub keyring: Keyring,
    pub token: String,
}

pub fn world() -> World {
    let mut sandbox = Sandbox::installed();
    let keyring = Keyring::start(sandbox.home.path());
    sandbox.set("DBUS_SESSION_BUS_ADDRESS", keyring.address());
    sandbox.set("MY_CHROME_ATTACH_TIMEOUT_SECS", "20");
    let token = fresh_token();
    let stored = sandbox.run_input(&["token", "store", "--stdin"], &token);
    assert_eq!(stored.code, 0, "{}", stored.stderr);
    World {
        sandbox,
        keyring,
        token,
    }
}

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
        run_with_stdin(cmd, value.as_bytes());
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

/// A stand-in for a Chrome executable: a copy of `/bin/sh` at a path of the
/// test's choosing, so that its processes' executable is that path.
pub struct FakeChrome {
    pub dir: tempfile::TempDir,
    started: std::sync::Mutex<Vec<std::process::Child>>,
}

impl FakeChrome {
    pub fn new() -> FakeChrome {
        let dir = tempfile::tempdir().unwrap();
        fs::copy("/bin/sh", dir.path().join("chrome")).unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        FakeChrome {
            dir,
            started: std::sync::Mutex::new(Vec::new()),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("chrome")
    }

    /// Starts one process of it with these arguments (and extra environment).
    pub fn start_with(&self, args: &[&str], env: &[(&str, &str)], uid: Option<u32>) -> u32 {
        self.spawn(Command::new(self.path()), args, env, uid)
    }

    /// Starts one whose argv[0] reads like a Chrome helper's rewritten
    /// command line (`<path> --type=gpu-process …`, one space-joined string).
    pub fn start_rewritten(&self, words: &str) -> u32 {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(self.path());
        cmd.arg0(format!("{} {words}", self.path().display()));
        self.spawn(cmd, &[], &[], None)
    }

    fn spawn(
        &self,
        mut cmd: Command,
        args: &[&str],
        env: &[(&str, &str)],
        uid: Option<u32>,
    ) -> u32 {
        use std::os::unix::process::CommandExt;
        cmd.args(["-c", "while :; do sleep 1; done", "chrome"])
            .args(args)
            .envs(env.iter().copied())
            .process_group(0)
            .stdin(std::process::Stdio::null());
        if let Some(uid) = uid {
            cmd.uid(uid);
        }
        // Another test thread forking while our copy was open for writing
        // holds it briefly: exec then fails with ETXTBSY. That passes.
        let mut tries = 0;
        let child = loop {
            match cmd.spawn() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
                other => break other.unwrap(),
            }
        };
        let pid = child.id();
        self.started.lock().unwrap().push(child);
        pid
    }

    pub fn start(&self, args: &[&str]) -> u32 {
        self.start_with(args, &[], None)
    }

    /// Ends one process (and its `sleep`).
    pub fn stop(&self, pid: u32) {
        let mut started = self.started.lock().unwrap();
        let at = started
            .iter()
            .position(|c| c.id() == pid)
            .expect("not started here");
        let mut child = started.remove(at);
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = child.wait();
    }
}

impl Drop for FakeChrome {
    fn drop(&mut self) {
        let pids: Vec<u32> = self
            .started
            .lock()
            .unwrap()
            .iter()
            .map(|c| c.id())
            .collect();
        for pid in pids {
            self.stop(pid);
        }
    }
}

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
        run_with_stdin(cmd, text.as_bytes());
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

/// Runs a tool with `input` on its stdin and requires success.
fn run_with_stdin(mut cmd: Command, input: &[u8]) {
    use std::io::Write;
    let mut child = cmd.stdin(std::process::Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    assert!(child.wait().unwrap().success());
}

/// Whether this run can chown files to another user (root). Outside CI a
/// non-root developer is told the test was skipped; CI runs as root and
/// must not skip.
pub fn can_give_files_away() -> bool {
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI runs as root and must run this test"
    );
    eprintln!("SKIPPED: giving a file to another user needs root");
    false
}

/// The snapshot's YAML: inline, or in the file the CLI points at.
pub fn read_snapshot(sandbox: &Sandbox, output: &str) -> String {
    if let Some(start) = output.find("[Snapshot](") {
        let rest = &output[start + "[Snapshot](".len()..];
        let file = &rest[..rest.find(')').unwrap()];
        return fs::read_to_string(sandbox.runtime.join(file)).unwrap();
    }
    output.to_string()
}

/// The `[ref=…]` of the first snapshot line that mentions `label`.
pub fn reference(snapshot: &str, label: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(label) && l.contains("[ref="))
        .unwrap_or_else(|| panic!("no {label} in {snapshot}"));
    let start = line.find("[ref=").unwrap() + 5;
    line[start..start + line[start..].find(']').unwrap()].to_string()
}
