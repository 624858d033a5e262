//! A private HOME and runtime per test, and the one real install of the
//! pinned CLI (made by `my-chrome setup` once per test run) that tests copy
//! and tamper with.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::*;

/// What messages call a browser given by `Sandbox::browser_at` (the
/// stand-in, a fake Chrome): none of the named ones.
pub const UNNAMED: &str = "the browser MY_CHROME_CHROME names";

/// A private HOME with a custom runtime directory inside it, and a folder
/// of the agent's files in `/tmp` (the one root every agent has; the HOME,
/// a hidden folder of `/tmp`, is none).
pub struct Sandbox {
    pub home: tempfile::TempDir,
    pub runtime: PathBuf,
    files: tempfile::TempDir,
    env: Vec<(String, String)>,
}

/// The name of the agent's folder of files beside `home`, in `/tmp`:
/// named after it, so that a canary scan of the home scans it too.
pub fn files_of(home: &Path) -> String {
    let name = home.file_name().unwrap().to_string_lossy();
    format!("mc-files{name}")
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let home = tempfile::tempdir().unwrap();
        let runtime = home.path().join("runtime");
        let files = tempfile::Builder::new()
            .prefix(&files_of(home.path()))
            .rand_bytes(0)
            .tempdir_in("/tmp")
            .unwrap();
        Sandbox {
            home,
            runtime,
            files,
            env: Vec::new(),
        }
    }

    /// The agent's own folder of `/tmp`, where its files may be.
    pub fn files(&self) -> &Path {
        self.files.path()
    }

    /// `name` in that folder.
    pub fn file(&self, name: &str) -> PathBuf {
        self.files.path().join(name)
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

    /// Where the pinned daemon binds its browser (`<tmp>/pw-*/browser/`),
    /// those that exist.
    pub fn bound_socket_dirs(&self) -> Vec<PathBuf> {
        entries(&self.runtime.join(my_chrome::runtime::TMP_DIR))
            .into_iter()
            .filter(|d| d.file_name().unwrap().to_string_lossy().starts_with("pw-"))
            .map(|d| d.join("browser"))
            .filter(|d| d.is_dir())
            .collect()
    }

    /// The server registry every child is given, inside the private TMPDIR.
    pub fn bound_registry(&self) -> PathBuf {
        my_chrome::runtime::bound_registry(&self.runtime.join(my_chrome::runtime::TMP_DIR))
    }

    /// What another process could attach through: every bound socket and
    /// every descriptor in the private registry.
    pub fn bound_leftovers(&self) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = self
            .bound_socket_dirs()
            .iter()
            .flat_map(|d| entries(d))
            .collect();
        found.extend(entries(&self.bound_registry()));
        found
    }

    /// The escape hatch a user of an unnamed browser takes: its executable
    /// (`MY_CHROME_CHROME`) and the profile it runs with
    /// (`MY_CHROME_USER_DATA_DIR`, here Google Chrome's default under HOME,
    /// where the stand-in takes its singleton).
    pub fn browser_at(&mut self, exe: impl AsRef<Path>) -> &mut Sandbox {
        let profile = self.home.path().join(".config/google-chrome");
        self.set("MY_CHROME_CHROME", exe)
            .set("MY_CHROME_USER_DATA_DIR", profile)
    }

    /// Sets a variable for every later run.
    pub fn set(&mut self, name: &str, value: impl AsRef<Path>) -> &mut Sandbox {
        let value = value.as_ref().to_string_lossy().into_owned();
        isolation::check_carried([], [(name, value.as_str())]);
        self.env.push((name.into(), value));
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
        self.build(wrapper, args, true)
    }

    /// The binary with `args` exactly as typed: no agent key added to a
    /// name (`agent_keys`), as an agent that has none would run it.
    pub fn typed(&self, args: &[&str]) -> Command {
        self.build(&[], args, false)
    }

    fn build(&self, wrapper: &[&str], args: &[&str], with_keys: bool) -> Command {
        isolation::check_carried(args.iter().copied(), []);
        isolation::check_browser_name(
            args.iter().copied(),
            self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        );
        let mut cmd = match wrapper {
            [] => Command::new(BIN),
            [program, rest @ ..] => {
                let mut cmd = Command::new(program);
                cmd.args(rest).arg(BIN);
                cmd
            }
        };
        // An agent carries the key its name's registration printed.
        let home = self.home.path().to_string_lossy().into_owned();
        let keyed = |name: &str| match with_keys {
            true => super::agent_keys::with_key(&home, name),
            false => name.to_string(),
        };
        let args: Vec<String> = args
            .iter()
            .enumerate()
            .map(
                |(i, arg)| match i.checked_sub(1).map(|before| args[before]) {
                    Some("--agent") => keyed(arg),
                    _ => arg.to_string(),
                },
            )
            .collect();
        let env = self.env.iter().map(|(k, v)| match k.as_str() {
            "MY_CHROME_AGENT" => (k.clone(), keyed(v)),
            _ => (k.clone(), v.clone()),
        });
        // The agent's working directory: its project, here the sandbox's
        // home (no root for the files of forwarded commands).
        cmd.args(args)
            .current_dir(self.home.path())
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", "/usr/bin:/bin")
            .env("MY_CHROME_RUNTIME_DIR", &self.runtime)
            .envs(env);
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

/// The entries of `dir` (none when it does not exist).
pub fn entries(dir: &Path) -> Vec<PathBuf> {
    match fs::read_dir(dir) {
        Ok(list) => list.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
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
/// confirmed) by `my-chrome setup` once per run (`per_run`), with the
/// caller's HOME so npm's cache is reused.
pub fn golden_runtime() -> &'static Path {
    static GOLDEN: OnceLock<PathBuf> = OnceLock::new();
    GOLDEN.get_or_init(|| {
        let runtime = Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden-runtime");
        super::per_run::once_per_run("golden-runtime", || {
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
        });
        runtime
    })
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

impl Sandbox {
    /// `args` sent straight to the session's daemon, past my-chrome's
    /// forwarder (as any process of the user could): what the daemon
    /// itself answers.
    pub fn daemon_says(&self, args: &[&str]) -> String {
        use my_chrome::daemon::{self, Reply, request};
        use my_chrome::session::state::{SessionState, session_state};
        let location = my_chrome::config::RuntimeLocation {
            path: self.runtime.clone(),
        };
        let runtime = my_chrome::runtime::Runtime::open(&location).unwrap();
        let core = my_chrome::helper::pin::Pin::shipped().core_version();
        let state = session_state(self.home.path(), &runtime, "mychrome", core);
        let SessionState::Ready(entry) = state else {
            panic!("no ready session: {state:?}");
        };
        let words: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let cwd = fs::canonicalize(&self.runtime).unwrap();
        let request::Plan::Run(request) = request::plan_words(&words, &cwd) else {
            panic!("{args:?} is no daemon command");
        };
        let timeout = std::time::Duration::from_secs(30);
        match daemon::run(&entry.socket_path, &request.bytes, timeout, 1 << 20).unwrap() {
            Reply::Text { text, .. } => text.unwrap_or_default(),
            Reply::Error(message) => message,
        }
    }
}

/// An ffmpeg planted where Playwright looks by default (the user's
/// `~/.cache/ms-playwright`, for every revision the pin names): run, it
/// writes `marker`.
pub fn plant_ffmpeg(sandbox: &Sandbox, marker: &Path) {
    let browsers = sandbox
        .cli()
        .join("node_modules/playwright-core/browsers.json");
    let doc: serde_json::Value = serde_json::from_slice(&fs::read(browsers).unwrap()).unwrap();
    let ffmpeg = doc["browsers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "ffmpeg")
        .expect("the pin has an ffmpeg entry");
    let revisions = ffmpeg["revisionOverrides"]
        .as_object()
        .into_iter()
        .flat_map(|o| o.values())
        .chain([&ffmpeg["revision"]]);
    for revision in revisions {
        let dir = sandbox.home.path().join(format!(
            ".cache/ms-playwright/ffmpeg-{}",
            revision.as_str().unwrap()
        ));
        fs::create_dir_all(&dir).unwrap();
        let planted = dir.join("ffmpeg-linux");
        let script = format!(
            "#!/bin/sh\necho ran > '{}'\nexec cat > /dev/null\n",
            marker.display()
        );
        fs::write(&planted, script).unwrap();
        fs::set_permissions(&planted, fs::Permissions::from_mode(0o755)).unwrap();
    }
}
