//! chrome-standin: test support only, never shipped. It stands in for the
//! user's Google Chrome with the Playwright Extension installed, backed by a
//! real headless Chromium. What it speaks (command line, `READY` line,
//! singleton, the extension's protocol 2, `STANDIN_*` settings and faults)
//! is described once, in `PROTOCOL.md` beside this crate.

mod bridge;
mod cdp;
mod chromium;
mod faults;
mod link;
mod person;
mod singleton;

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use cdp::Cdp;
use chromium::Chromium;
use faults::{Faults, SingletonFault};
use person::Person;
use singleton::{Existing, Server};

pub const EXTENSION_ID: &str = "mmlmfjhmonkocbjadbfplnigmagldckm";
pub const CONNECT_PAGE: &str = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html";
/// Where my-chrome's consent pages are served (a random port).
pub const CONSENT_PAGES: &str = "http://127.0.0.1:";

/// Headless Chromium renders only the active tab of each window, so every
/// tab gets a window of its own: the one Playwright drives is always
/// painted, as the user's active tab is in their Chrome.
pub fn new_tab(url: &str) -> serde_json::Value {
    serde_json::json!({"url": url, "newWindow": true})
}

pub fn log(message: &str) {
    if let Some(path) = std::env::var_os("STANDIN_LOG")
        && let Ok(mut file) = OpenOptions::new().create(true).append(true).open(path)
    {
        let _ = writeln!(file, "[{}] {message}", std::process::id());
    }
}

/// A URL for the log: scheme, host and path, never the query; of a
/// consent page (whose path is its secret), the port alone.
fn shown(url: &str) -> String {
    if let Some(rest) = url.strip_prefix(CONSENT_PAGES) {
        let port = rest.split('/').next().unwrap_or_default();
        return format!("{CONSENT_PAGES}{port}/ (a consent page)");
    }
    url.split('?').next().unwrap_or_default().to_string()
}

fn main() {
    if std::env::var_os("STANDIN_IDLE").is_some() {
        // The "second main process" fault: a normal main that does nothing.
        loop {
            thread::sleep(Duration::from_secs(3600));
        }
    }
    let argv: Vec<String> = std::env::args().collect();
    let urls: Vec<String> = argv[1..]
        .iter()
        .filter(|a| !a.starts_with("--"))
        .cloned()
        .collect();
    let profile = singleton::profile_dir();
    hand_over_or_take(&profile, &argv);
    if let Err(e) = run_main(&profile, &urls) {
        eprintln!("chrome-standin: {e}");
        std::process::exit(1);
    }
}

/// As a second Chrome does: hand the arguments to the running browser and
/// exit, or return to become the browser.
fn hand_over_or_take(profile: &std::path::Path, argv: &[String]) {
    let wait = std::env::var("STANDIN_SINGLETON_WAIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(20));
    let deadline = std::time::Instant::now() + wait;
    loop {
        let holder = match singleton::find_running(profile) {
            Existing::Nobody => return,
            Existing::Orphaned(why) => {
                log(&format!("client: taking over an orphaned lock ({why})"));
                singleton::clear(profile);
                return;
            }
            Existing::OtherHost(host) => {
                eprintln!("chrome-standin: the profile is in use on another computer ({host})");
                std::process::exit(21);
            }
            Existing::Live(socket) => match singleton::notify(&socket, argv) {
                Ok(answer) if answer == "ACK" => std::process::exit(0),
                Ok(answer) => {
                    log(&format!("client: the browser answered {answer:?}"));
                    None
                }
                Err(e) => {
                    log(&format!("client: cannot reach the browser: {e}"));
                    None
                }
            },
            Existing::Unreachable(pid) => Some(pid),
        };
        if std::time::Instant::now() >= deadline {
            // Chrome kills a browser that holds the profile but never answers.
            if let Some(pid) = holder {
                log(&format!("client: killing the unreachable browser {pid}"));
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
                thread::sleep(Duration::from_millis(200));
            }
            singleton::clear(profile);
            return;
        }
        thread::sleep(Duration::from_millis(100));
    }
}

struct Main {
    chromium: Chromium,
    control: Cdp,
    token_file: Option<PathBuf>,
    hide_helper: bool,
    faults: Faults,
    person: Person,
    stopping: Arc<AtomicBool>,
}

fn run_main(profile: &std::path::Path, urls: &[String]) -> Result<(), String> {
    let stopping = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::clone(&stopping)).map_err(|e| e.to_string())?;
    }
    // The profile is ours before anything else happens: a second Chrome
    // arriving while Chromium starts waits in the socket's backlog.
    let server = Server::create(profile)?;
    let executable = std::env::var_os("STANDIN_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or("/usr/bin/chromium".into());
    let chromium = Chromium::launch(&executable)?;
    let (control, _events) = Cdp::connect(&chromium.endpoint)?;
    let main = Arc::new(Main {
        chromium,
        control,
        token_file: std::env::var_os("STANDIN_TOKEN_FILE").map(PathBuf::from),
        hide_helper: std::env::var("STANDIN_HELPER_TAB").is_ok_and(|v| v == "hidden"),
        faults: Faults::parse(&std::env::var("STANDIN_FAULTS").unwrap_or_default())?,
        person: Person::parse(&std::env::var("STANDIN_PERSON").unwrap_or_default())?,
        stopping,
    });
    println!(
        "READY {} {} {}",
        std::process::id(),
        main.chromium.endpoint,
        main.chromium.pid()
    );
    let _ = std::io::stdout().flush();
    log("main: ready");
    for url in urls {
        main.open(url);
    }
    while !main.stopping.load(Ordering::SeqCst) {
        match server.listener.accept() {
            Ok((stream, _)) => {
                let main = Arc::clone(&main);
                thread::spawn(move || main.serve(stream));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(5))
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    log("main: stopping");
    drop(server);
    Ok(())
}

impl Main {
    /// One singleton client: read its message, act on it, answer.
    fn serve(self: &Arc<Self>, mut stream: UnixStream) {
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut message = Vec::new();
        if stream.read_to_end(&mut message).is_err() {
            return;
        }
        let Ok((_cwd, argv)) = singleton::parse(&message) else {
            // Chrome drops a malformed message without an answer.
            log("main: malformed singleton message refused");
            return;
        };
        // Faults are for what a test delivers itself, or connect's URL: a
        // consent page before it (which the person answers) is served.
        let asking = argv.iter().any(|a| a.starts_with(CONSENT_PAGES));
        match self.faults.singleton.filter(|_| !asking) {
            Some(SingletonFault::Shutdown) => {
                log("fault: answering SHUTDOWN");
                let _ = stream.write_all(b"SHUTDOWN");
                return;
            }
            Some(SingletonFault::Silent) => {
                log("fault: closing without an answer");
                return;
            }
            Some(SingletonFault::Hang) => {
                log("fault: never answering");
                thread::sleep(Duration::from_secs(600));
                return;
            }
            None => {}
        }
        if self.stopping.load(Ordering::SeqCst) {
            let _ = stream.write_all(b"SHUTDOWN");
            return;
        }
        for url in argv.iter().skip(1).filter(|a| !a.starts_with("--")) {
            self.open(url);
        }
        let _ = stream.write_all(b"ACK");
    }

    /// What Chrome does with a URL: open it in a tab. The connect page is
    /// also where the extension takes over.
    fn open(self: &Arc<Self>, url: &str) {
        log(&format!("main: opening {}", shown(url)));
        let target = match self.control.call("Target.createTarget", new_tab(url), None) {
            Ok(created) => created["targetId"].as_str().unwrap_or_default().to_string(),
            Err(e) => {
                log(&format!("main: cannot open a tab: {e}"));
                String::new()
            }
        };
        if url.starts_with(CONNECT_PAGE) {
            self.extension(url, target);
        } else if url.starts_with(CONSENT_PAGES) {
            let (cdp, person) = (self.control.clone(), self.person_now());
            thread::spawn(move || {
                if let Err(e) = person::answer(&cdp, &target, person) {
                    log(&format!("person: {e}"));
                }
            });
        }
    }

    /// What the person does now: `STANDIN_PERSON_FILE`'s word when that
    /// file exists (a test changes their mind), else `STANDIN_PERSON`.
    fn person_now(&self) -> Person {
        std::env::var_os("STANDIN_PERSON_FILE")
            .and_then(|f| std::fs::read_to_string(f).ok())
            .and_then(|spec| Person::parse(spec.trim()).ok())
            .unwrap_or(self.person)
    }

    /// The extension's connect page (open in tab `helper`): only the right
    /// token connects.
    fn extension(self: &Arc<Self>, url: &str, helper: String) {
        let Ok(parsed) = url::Url::parse(url) else {
            return;
        };
        let query: std::collections::HashMap<String, String> =
            parsed.query_pairs().into_owned().collect();
        let expected = self
            .token_file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .map(|t| t.trim().to_string());
        let matches = matches!((&expected, query.get("token")), (Some(e), Some(t)) if !e.is_empty() && e == t);
        if !matches {
            log("extension: no matching token; waiting for approval that never comes");
            return;
        }
        if self.faults.spawn_second_main {
            spawn_second_main();
        }
        let Some(relay) = query.get("mcpRelayUrl").cloned() else {
            return;
        };
        let endpoint = self.chromium.endpoint.clone();
        // By target id, since a new tab's URL shows only once it loads.
        let seed = if self.hide_helper {
            bridge::Seed::AllBut(helper)
        } else {
            bridge::Seed::Helper(helper)
        };
        let faults = self.faults.clone();
        thread::spawn(move || {
            if let Err(e) = bridge::run(&endpoint, &relay, seed, faults) {
                log(&format!("extension: {e}"));
            }
        });
    }
}

/// Another normal Chrome main process, as if the user opened a second one.
/// Its parent-death signal follows the thread that forks it, so that thread
/// stays with it for its whole life; we return once it exists.
fn spawn_second_main() {
    let Ok(me) = std::env::current_exe() else {
        return;
    };
    let (started, spawned) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let mut command = std::process::Command::new(me);
        command.env("STANDIN_IDLE", "1");
        // SAFETY: prctl is async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                    .map_err(std::io::Error::from)
            });
        }
        match command.spawn() {
            Ok(mut child) => {
                log(&format!(
                    "fault: started a second main process {}",
                    child.id()
                ));
                let _ = started.send(());
                let _ = child.wait();
            }
            Err(_) => {
                let _ = started.send(());
            }
        }
    });
    let _ = spawned.recv();
}
