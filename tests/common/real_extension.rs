//! The real Playwright Extension in a real Chromium, as a user has it: the
//! extension built from `../shared/real-extension/` (never copied into this
//! repository), loaded into Debian's Chromium, headed under Xvfb, in the
//! default profile of a private HOME, with no debugging port. Its token is
//! read once through a throw-away debugging session and stored with
//! `my-chrome token store --stdin` in a private keyring.
//!
//! Each world runs Debian's Chromium itself (`/usr/lib/chromium/chromium`)
//! and names it as a user does, `my-chrome setup --browser chromium`, with
//! no path override. my-chrome then counts every normal main process of
//! that executable, so worlds run one at a time (and no Chromium of yours
//! may run meanwhile).

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Display, Keyring, Sandbox, World};

/// The extension versions every real-extension scenario runs against.
pub const VERSIONS: [&str; 3] = ["0.2.1", "0.3.0", "main-2026-08-21"];

const CHROMIUM: &str = "/usr/lib/chromium/chromium";
const EXTENSION_ID: &str = "mmlmfjhmonkocbjadbfplnigmagldckm";

/// The extension's source (`$REAL_EXTENSION_DIR`, else `../shared/real-extension`
/// beside the repository). Missing, a test is skipped loudly, or fails
/// under CI, which must run it.
pub fn source() -> Option<PathBuf> {
    let dir = std::env::var_os("REAL_EXTENSION_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real-extension"));
    if dir.join("build.sh").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must run the real-extension tests, and {} has no build.sh",
        dir.display()
    );
    eprintln!(
        "\n*** SKIPPED: the real Playwright Extension's source is not at {} (set REAL_EXTENSION_DIR); \
         these tests run against it under CI ***\n",
        dir.display()
    );
    None
}

/// The unpacked extension `version`, built once and cached under
/// `target/real-extension/<version>`, keyed by its commit.
pub fn build(source: &Path, version: &str) -> PathBuf {
    static BUILDING: Mutex<()> = Mutex::new(());
    let _one_at_a_time = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("real-extension");
    fs::create_dir_all(&cache).unwrap();
    let lock = fs::File::create(cache.join(".lock")).unwrap();
    let _across_binaries =
        nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive).unwrap();
    let commits = fs::read_to_string(source.join("COMMITS")).unwrap();
    let commit = commits
        .lines()
        .find(|l| l.split_whitespace().next() == Some(version))
        .unwrap_or_else(|| panic!("{version} is not in COMMITS"))
        .to_string();
    let out = cache.join(version);
    let stamp = cache.join(format!("{version}.commit"));
    if out.join("manifest.json").is_file()
        && fs::read_to_string(&stamp).ok() == Some(commit.clone())
    {
        return out;
    }
    let started = Instant::now();
    let built = Command::new(source.join("build.sh"))
        .arg(version)
        .arg(&out)
        .env("REAL_EXTENSION_CACHE", cache.join("tools"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "build.sh {version} failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    fs::write(&stamp, commit).unwrap();
    eprintln!(
        "built the real extension {version} in {} ms",
        started.elapsed().as_millis()
    );
    out
}

/// The user's Chromium: one running browser, or none.
pub struct RealChrome {
    exe: PathBuf,
    home: PathBuf,
    extension: Option<PathBuf>,
    display: String,
    child: Option<Child>,
}

impl RealChrome {
    pub fn new(
        exe: PathBuf,
        home: &Path,
        extension: Option<PathBuf>,
        display: &Display,
    ) -> RealChrome {
        RealChrome {
            exe,
            home: home.to_path_buf(),
            extension,
            display: display.name.clone(),
            child: None,
        }
    }

    /// Chromium's default profile in this HOME.
    pub fn user_data(&self) -> PathBuf {
        self.home.join(".config/chromium")
    }

    pub fn exe(&self) -> &Path {
        &self.exe
    }

    fn command(&self, extra: &[&str]) -> Command {
        let mut cmd = Command::new(&self.exe);
        cmd.args([
            "--no-sandbox",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--password-store=basic",
        ])
        .args(extra)
        .env_clear()
        .env("HOME", &self.home)
        .env("PATH", "/usr/bin:/bin")
        .env("DISPLAY", &self.display)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        if let Some(extension) = &self.extension {
            cmd.arg(format!("--load-extension={}", extension.display()));
        }
        cmd
    }

    /// Starts the browser as the user runs it (no debugging port) and waits
    /// until it holds its process singleton and, when loaded, the
    /// extension's service worker runs.
    pub fn start(&mut self) -> u32 {
        assert!(self.child.is_none(), "Chromium is already running");
        let child = self.command(&[]).spawn().unwrap();
        let pid = child.id();
        self.child = Some(child);
        let lock = self.user_data().join("SingletonLock");
        eventually("Chromium never took its singleton lock", || {
            fs::read_link(&lock)
                .is_ok_and(|target| target.to_string_lossy().ends_with(&format!("-{pid}")))
        });
        if self.extension.is_some() {
            eventually("the extension's service worker never started", || {
                descendants_with(pid, "--extension-process")
            });
        }
        pid
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Quits the browser as a user does (SIGTERM: it saves its session and
    /// local storage), then makes sure nothing of it is left. Says whether
    /// it exited by itself: one killed after the wait may not have saved
    /// its last session state (a busy machine has slowed a quit to many
    /// seconds).
    pub fn quit(&mut self) -> Quit {
        let Some(mut child) = self.child.take() else {
            return Quit::NotRunning;
        };
        let started = Instant::now();
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let quit = match child.try_wait() {
            Ok(Some(_)) => Quit::ByItself(started.elapsed()),
            _ => Quit::Killed,
        };
        let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
        let _ = child.wait();
        while nix::sys::signal::killpg(pid, None).is_ok() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        quit
    }

    /// A throw-away debugging session: starts the browser with a debugging
    /// port, runs `work` on a browser-level CDP connection, closes the
    /// browser with `Browser.close` (so that local storage reaches the disk)
    /// and waits for it to exit.
    fn debugging<T>(&mut self, extra: &[&str], work: impl FnOnce(&mut Cdp) -> T) -> T {
        assert!(self.child.is_none(), "Chromium is already running");
        let port_file = self.user_data().join("DevToolsActivePort");
        let _ = fs::remove_file(&port_file);
        let mut args = vec!["--remote-debugging-port=0"];
        args.extend_from_slice(extra);
        let mut child = self.command(&args).spawn().unwrap();
        let mut endpoint = None;
        // A Chromium restoring its last session on a busy machine can take
        // longer than the usual wait; one that exited says so at once.
        let deadline = Instant::now() + Duration::from_secs(90);
        while endpoint.is_none() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("Chromium exited ({status}) before it reported its debugging port");
            }
            assert!(
                Instant::now() < deadline,
                "Chromium never reported its debugging port"
            );
            let text = fs::read_to_string(&port_file).unwrap_or_default();
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                endpoint = Some(format!("ws://127.0.0.1:{port}{path}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut cdp = Cdp::connect(&endpoint.unwrap());
        let result = work(&mut cdp);
        let _ = cdp.call("Browser.close", json!({}), None);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
        let _ = child.wait();
        result
    }

    /// The extension's own token, from its status page.
    pub fn read_token(&mut self) -> String {
        self.debugging(&[], |cdp| {
            let page = format!("chrome-extension://{EXTENSION_ID}/status.html");
            let target = cdp.call("Target.createTarget", json!({"url": page}), None);
            let attach = json!({"targetId": target["targetId"], "flatten": true});
            let session = cdp.call("Target.attachToTarget", attach, None)["sessionId"]
                .as_str()
                .unwrap()
                .to_string();
            let read = json!({
                "expression": "document.querySelector('.auth-token-code')?.textContent ?? ''",
                "returnByValue": true,
            });
            let mut shown = String::new();
            eventually("the status page never showed the token", || {
                let value = cdp.call("Runtime.evaluate", read.clone(), Some(&session));
                shown = value["result"]["value"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                !shown.is_empty()
            });
            shown
                .strip_prefix("PLAYWRIGHT_MCP_EXTENSION_TOKEN=")
                .expect("the status page shows the variable")
                .to_string()
        })
    }

    /// The addresses of every tab Chrome restores from its last session: what
    /// the user would find open after quitting. Needs the browser quit.
    pub fn restored_tabs(&mut self) -> Vec<String> {
        self.debugging(&["--restore-last-session"], |cdp| {
            let pages = |cdp: &mut Cdp| -> Vec<String> {
                cdp.call("Target.getTargets", json!({}), None)["targetInfos"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|t| t["type"] == "page")
                    .map(|t| t["url"].as_str().unwrap_or_default().to_string())
                    .collect()
            };
            // Restored tabs appear one by one after start: read until the
            // list holds still for a second.
            let mut seen = pages(cdp);
            let mut still_since = Instant::now();
            eventually("the restored tabs never settled", || {
                let now = pages(cdp);
                if now != seen {
                    seen = now;
                    still_since = Instant::now();
                }
                still_since.elapsed() >= Duration::from_secs(1) && !seen.is_empty()
            });
            seen
        })
    }
}

/// How [`RealChrome::quit`] ended the browser.
#[derive(Debug, PartialEq)]
pub enum Quit {
    NotRunning,
    ByItself(Duration),
    Killed,
}

impl Drop for RealChrome {
    fn drop(&mut self) {
        let _ = self.quit();
    }
}

/// Whether a descendant of `pid` has `flag` in its command line.
fn descendants_with(pid: u32, flag: &str) -> bool {
    let table = my_chrome::procs::ProcessTable::read().unwrap();
    table.iter().any(|p| {
        p.cmd.iter().any(|a| a.to_string_lossy().contains(flag))
            && table.ancestors(p.pid).contains(&pid)
    })
}

/// Waits (up to 30 s) until `condition` holds.
pub fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !condition() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A browser-level DevTools connection, for the test's own eyes only.
struct Cdp {
    socket: tungstenite::WebSocket<std::net::TcpStream>,
    next: u64,
}

impl Cdp {
    fn connect(endpoint: &str) -> Cdp {
        let address = endpoint
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let stream = std::net::TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let (socket, _) = tungstenite::client(endpoint, stream).unwrap();
        Cdp { socket, next: 0 }
    }

    /// One command; events in between are dropped.
    fn call(&mut self, method: &str, params: Value, session: Option<&str>) -> Value {
        self.next += 1;
        let mut message = json!({"id": self.next, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket
            .send(tungstenite::Message::text(message.to_string()))
            .unwrap();
        loop {
            let frame = match self.socket.read() {
                Ok(frame) => frame,
                // Browser.close may end the connection before it answers.
                Err(_) if method == "Browser.close" => return Value::Null,
                Err(e) => panic!("{method}: {e}"),
            };
            let Ok(text) = frame.into_text() else {
                continue;
            };
            let answer: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
            if answer["id"] == json!(self.next) {
                assert!(answer.get("error").is_none(), "{method}: {answer}");
                return answer["result"].clone();
            }
        }
    }
}

/// What the person at the keyboard does with a consent page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Confirm,
    Refuse,
    /// Nobody at the keyboard: it stays unanswered.
    Away,
}

/// The person at the real Chromium's keyboard: when my-chrome's consent
/// page is the front tab of a window (the window's title is the page's),
/// they read it, press Tab to reach Confirm (or Tab twice for Refuse) and
/// Enter, as X delivers a real keyboard's keys (xdotool); once the page
/// says what happened they close the tab (ctrl+w).
pub struct Person {
    answer: std::sync::Arc<Mutex<Answer>>,
    answered: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// From the moment they see a consent page until it is closed.
    busy: std::sync::Arc<std::sync::atomic::AtomicBool>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The consent page's title (Chromium titles the window after its front tab).
const ASKING: &str = "my-chrome asks you";

fn xdotool(display: &str, args: &[&str]) -> String {
    let out = Command::new("/usr/bin/xdotool")
        .env_clear()
        .env("DISPLAY", display)
        .args(args)
        .output()
        .expect("xdotool is missing: scripts/test.sh installs it");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Person {
    fn at(display: &str) -> Person {
        use std::sync::atomic::Ordering;
        let answer = std::sync::Arc::new(Mutex::new(Answer::Confirm));
        let answered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let busy = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (display, their_answer, count, stopped, reading) = (
            display.to_string(),
            answer.clone(),
            answered.clone(),
            stop.clone(),
            busy.clone(),
        );
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(200));
                let choice = *their_answer.lock().unwrap();
                if choice == Answer::Away {
                    continue;
                }
                let found = xdotool(&display, &["search", "--name", &format!("^{ASKING}")]);
                let Some(window) = found.lines().next().map(str::to_string) else {
                    continue;
                };
                reading.store(true, Ordering::SeqCst);
                // Read it first: the buttons take keys a moment after it shows.
                std::thread::sleep(Duration::from_millis(1500));
                xdotool(&display, &["windowfocus", &window]);
                let keys: &[&str] = match choice {
                    Answer::Refuse => &["Tab", "Tab", "Return"],
                    _ => &["Tab", "Return"],
                };
                let mut args = vec!["key", "--clearmodifiers"];
                args.extend_from_slice(keys);
                xdotool(&display, &args);
                let deadline = Instant::now() + Duration::from_secs(10);
                while Instant::now() < deadline {
                    let title = xdotool(&display, &["getwindowname", &window]);
                    if title.starts_with("Confirmed") || title.starts_with("Refused") {
                        count.fetch_add(1, Ordering::SeqCst);
                        xdotool(&display, &["key", "--clearmodifiers", "ctrl+w"]);
                        // Until its window is gone (`wait_done`).
                        while Instant::now() < deadline
                            && xdotool(&display, &["getwindowname", &window]).starts_with(&title)
                        {
                            std::thread::sleep(Duration::from_millis(50));
                        }
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                reading.store(false, Ordering::SeqCst);
            }
        });
        Person {
            answer,
            answered,
            busy,
            stop,
            thread: Some(thread),
        }
    }

    /// What they do with the next consent pages.
    pub fn will(&self, answer: Answer) {
        *self.answer.lock().unwrap() = answer;
    }

    /// Whether a consent page is the front tab of a window now.
    pub fn sees_a_question(&self, display: &str) -> bool {
        !xdotool(display, &["search", "--name", &format!("^{ASKING}")])
            .trim()
            .is_empty()
    }

    /// Waits until the consent page they answered is closed, as a person
    /// closes it before the agent goes on. (A command right after would
    /// otherwise race their ctrl+w: Chromium opens a `tab-new` in the last
    /// focused window, the consent page's, and the key closed that tab:
    /// CI, the real extension 0.3.0, twice.)
    pub fn wait_done(&self) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.busy.load(std::sync::atomic::Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// How many consent pages they answered.
    pub fn answered(&self) -> usize {
        self.answered.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for Person {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What a user of the real extension has after `setup` and `token store`:
/// an installed runtime, a keyring holding the extension's own token, and
/// their Chromium running with the extension (or without it).
pub struct RealWorld {
    /// Dropped first: nobody is at the keyboard once the world goes.
    pub person: Person,
    /// Then Chromium quits, before its display and HOME go.
    pub chrome: RealChrome,
    _display: Display,
    pub world: World,
    /// Dropped last: the next world's Chromium starts once this one's quit,
    /// in this process or another (a lock on a file in Cargo's scratch
    /// directory: nextest runs each test as a process of its own).
    _alone: nix::fcntl::Flock<fs::File>,
}

impl RealWorld {
    /// `extension`: the built extension, or `None` for a Chromium without it
    /// (then a throw-away token is stored).
    pub fn start(extension: Option<PathBuf>) -> RealWorld {
        super::isolation::check_runs_chromium(Path::new(CHROMIUM));
        let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
        fs::create_dir_all(scratch).unwrap();
        let lock = fs::File::create(scratch.join("real-chromium.lock")).unwrap();
        let alone = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
            .unwrap_or_else(|(_, e)| panic!("cannot lock {}: {e}", scratch.display()));
        assert!(
            Path::new(CHROMIUM).exists(),
            "{CHROMIUM} is missing: scripts/test.sh installs Debian's chromium"
        );
        let mut sandbox = Sandbox::installed();
        let keyring = Keyring::start(sandbox.home.path());
        sandbox.set("DBUS_SESSION_BUS_ADDRESS", keyring.address());
        let display = Display::start();
        let exe = PathBuf::from(CHROMIUM);
        let mut chrome = RealChrome::new(exe, sandbox.home.path(), extension, &display);
        let token = if chrome.extension.is_some() {
            chrome.read_token()
        } else {
            super::fresh_token()
        };
        let stored = sandbox.run_input(&["token", "store", "--stdin"], &token);
        assert_eq!(stored.code, 0, "{}", stored.stderr);
        // The browser by its name, as a user chooses it.
        let chosen = sandbox.run(&["setup", "--browser", "chromium"]);
        assert_eq!(chosen.code, 0, "{}", chosen.stderr);
        assert!(
            chosen.stdout.contains("Chromium (chromium) is the browser"),
            "{}",
            chosen.stdout
        );
        sandbox.set("MY_CHROME_ATTACH_TIMEOUT_SECS", "30");
        sandbox.set("MY_CHROME_COMMAND_TIMEOUT_SECS", "60");
        chrome.start();
        let person = Person::at(&display.name);
        RealWorld {
            person,
            chrome,
            _display: display,
            world: World {
                sandbox,
                keyring,
                token,
            },
            _alone: alone,
        }
    }

    pub fn sandbox(&self) -> &Sandbox {
        &self.world.sandbox
    }

    /// Whether my-chrome's consent page is in front in a window of the
    /// user's Chromium.
    pub fn asks(&self) -> bool {
        self.person.sees_a_question(&self._display.name)
    }

    /// The user presses `keys` (`ctrl+w`) at the keyboard: X sends them to
    /// the browser's focused window, whose front tab takes them.
    pub fn user_presses(&self, keys: &str) {
        let status = Command::new("/usr/bin/xdotool")
            .env_clear()
            .env("DISPLAY", &self._display.name)
            .args(["key", "--clearmodifiers", keys])
            .status()
            .expect("xdotool is missing: scripts/test.sh installs it");
        assert!(status.success(), "xdotool key {keys}: {status}");
    }
}
