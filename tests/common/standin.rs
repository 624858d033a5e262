//! The Chrome-and-extension stand-in (tests/chrome-standin) as a fixture:
//! built once, copied to a path of the test's choosing (so its processes
//! are "the user's Chrome" at that path), started with a private token file.

use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The stand-in binary, built once per test run, with the profile the
/// tests were built with (its folder is the one my-chrome's binary is in:
/// `debug` for `cargo test`, `release` for scripts/test.sh), and the
/// workspace's features, as `cargo build --workspace` built it: built
/// alone, its dependencies would take other features and be built again.
pub fn binary() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let folder = Path::new(super::BIN).parent().unwrap();
        let profile = match folder.file_name().unwrap().to_str().unwrap() {
            "debug" => "dev",
            other => other,
        };
        super::per_run::once_per_run(&format!("chrome-standin-{profile}"), || {
            let status = Command::new(env!("CARGO"))
                .args(["build", "--quiet", "--workspace", "--bin", "chrome-standin"])
                .args(["--profile", profile])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .unwrap();
            assert!(status.success(), "cannot build chrome-standin");
        });
        folder.join("chrome-standin")
    })
}

/// Debian's Chromium, as the stand-in runs it: its executable linked (or
/// copied) into a folder of Cargo's target, beside links to everything it
/// loads from its own folder. Its processes then run from that path, not
/// `/usr/lib/chromium/chromium`, so a test that chooses Chromium by name
/// (tests/real_extension.rs) never counts them as the user's browser, and
/// can run beside the stand-in's tests (common::isolation). One folder per
/// installed executable (its inode, size and time), made once.
pub fn chromium() -> &'static Path {
    static PLACED: OnceLock<PathBuf> = OnceLock::new();
    PLACED.get_or_init(|| {
        use std::os::unix::fs::MetadataExt;
        let source = Path::new("/usr/lib/chromium");
        let installed = fs::metadata(source.join("chromium")).expect(
            "/usr/lib/chromium/chromium is missing: scripts/test.sh installs Debian's chromium",
        );
        let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
        let folder = target.join("standin-chromium").join(format!(
            "{}-{}-{}",
            installed.ino(),
            installed.size(),
            installed.mtime()
        ));
        let executable = folder.join("chromium");
        super::per_run::once_per_run("standin-chromium", || {
            if executable.is_file() {
                return;
            }
            // Those of other Chromiums, and one left half made, go.
            let _ = fs::remove_dir_all(folder.parent().unwrap());
            let making = folder.with_extension("making");
            fs::create_dir_all(&making).unwrap();
            for entry in fs::read_dir(source).unwrap() {
                let entry = entry.unwrap();
                let to = making.join(entry.file_name());
                if entry.file_name() == "chromium" {
                    if fs::hard_link(entry.path(), &to).is_err() {
                        fs::copy(entry.path(), &to).unwrap();
                    }
                } else {
                    std::os::unix::fs::symlink(entry.path(), &to).unwrap();
                }
            }
            fs::rename(&making, &folder).unwrap();
        });
        executable
    })
}

#[derive(Default)]
pub struct Options<'a> {
    /// The token the "extension" accepts; `None` accepts nothing.
    pub token: Option<&'a str>,
    /// Keep the connect tab out of Playwright's view.
    pub hide_helper: bool,
    /// `STANDIN_FAULTS`.
    pub faults: &'a str,
    /// `STANDIN_PERSON`: what the person at the keyboard does with a
    /// consent page; empty is `confirm` (the user approves what the test
    /// asks, as a user who asked for it does).
    pub person: &'a str,
}

pub struct Standin {
    dir: tempfile::TempDir,
    child: Child,
    pub pid: u32,
    /// The real Chromium behind it (its process-group leader).
    pub chromium_pid: u32,
    /// `ws://127.0.0.1:<port>/devtools/browser/<id>` of the real Chromium.
    pub endpoint: String,
    /// How long it took to be ready.
    pub startup: Duration,
}

/// A copy of the stand-in at `<dir>/chrome`, with its token file beside it.
/// `cp` writes the copy in a process of its own: a file this process had open
/// for writing could be inherited by another test thread's fork, and then
/// fail to start with ETXTBSY.
pub fn install(dir: &Path, token: Option<&str>) -> PathBuf {
    let exe = dir.join("chrome");
    let copied = Command::new("/bin/cp")
        .arg(binary())
        .arg(&exe)
        .status()
        .unwrap();
    assert!(copied.success());
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
    let tmp = dir.join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o700)).unwrap();
    let token_file = dir.join("token");
    fs::write(&token_file, token.unwrap_or("")).unwrap();
    fs::set_permissions(&token_file, fs::Permissions::from_mode(0o600)).unwrap();
    exe
}

/// The environment a stand-in needs: its HOME (for the profile), the token
/// file, a log, and the options.
pub fn env(dir: &Path, home: &Path, options: &Options) -> Vec<(String, String)> {
    let mut env = vec![
        ("HOME".to_string(), home.display().to_string()),
        ("PATH".to_string(), "/usr/bin:/bin".to_string()),
        (
            "STANDIN_TOKEN_FILE".to_string(),
            dir.join("token").display().to_string(),
        ),
        (
            "STANDIN_LOG".to_string(),
            dir.join("standin.log").display().to_string(),
        ),
        ("STANDIN_FAULTS".to_string(), options.faults.to_string()),
        (
            "STANDIN_PERSON".to_string(),
            match options.person {
                "" => "confirm".to_string(),
                person => person.to_string(),
            },
        ),
        // Its singleton socket directory and Chromium's temporary files stay
        // inside the fixture, and go with it.
        ("TMPDIR".to_string(), dir.join("tmp").display().to_string()),
        // How long a second "Chrome" retries an unreachable one (Chrome: 20 s).
        ("STANDIN_SINGLETON_WAIT_MS".to_string(), "1000".to_string()),
        (
            "STANDIN_CHROMIUM".to_string(),
            chromium().display().to_string(),
        ),
    ];
    env.push((
        "STANDIN_PERSON_FILE".into(),
        dir.join("person").display().to_string(),
    ));
    if options.hide_helper {
        env.push(("STANDIN_HELPER_TAB".into(), "hidden".into()));
    }
    env
}

impl crate::common::World {
    /// "The user's Chrome" for this world, its extension accepting the stored
    /// token, and MY_CHROME_CHROME pointing at it.
    pub fn chrome(&mut self) -> Standin {
        let token = self.token.clone();
        self.chrome_with(Options {
            token: Some(&token),
            ..Default::default()
        })
    }

    /// The same, with the stand-in's `STANDIN_FAULTS`.
    pub fn chrome_with_faults(&mut self, faults: &str) -> Standin {
        let token = self.token.clone();
        self.chrome_with(Options {
            token: Some(&token),
            faults,
            ..Default::default()
        })
    }

    /// The same with other options (another token, faults).
    pub fn chrome_with(&mut self, options: Options) -> Standin {
        let chrome = Standin::start(self.sandbox.home.path(), options);
        self.sandbox.browser_at(chrome.exe());
        chrome
    }
}

impl Standin {
    /// Starts "the user's Chrome" for `home` and waits until it is ready.
    pub fn start(home: &Path, options: Options) -> Standin {
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let exe = install(dir.path(), options.token);
        let started = Instant::now();
        let mut child = Command::new(&exe)
            .env_clear()
            .envs(env(dir.path(), home, &options))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let mut words = line.split_whitespace();
        assert_eq!(
            words.next(),
            Some("READY"),
            "the stand-in did not start: {line:?}"
        );
        let pid = child.id();
        let endpoint = words.nth(1).expect("no endpoint").to_string();
        let chromium_pid = words
            .next()
            .and_then(|p| p.parse().ok())
            .expect("no Chromium pid");
        let startup = started.elapsed();
        eprintln!(
            "stand-in (with Chromium) ready in {} ms",
            startup.as_millis()
        );
        Standin {
            dir,
            child,
            pid,
            chromium_pid,
            endpoint,
            startup,
        }
    }

    /// The executable path: point MY_CHROME_CHROME and
    /// PLAYWRIGHT_MCP_EXECUTABLE_PATH at it.
    pub fn exe(&self) -> PathBuf {
        self.dir.path().join("chrome")
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("standin.log")).unwrap_or_default()
    }

    pub fn alive(&self) -> bool {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid as i32), None).is_ok()
            && !crate::common::process_gone(&self.pid.to_string())
    }

    /// The real Chromium's DevTools address.
    fn devtools(&self) -> String {
        let port = self
            .endpoint
            .split(':')
            .nth(2)
            .unwrap()
            .split('/')
            .next()
            .unwrap();
        format!("127.0.0.1:{port}")
    }

    /// The DevTools target of the page whose address ends with `suffix`.
    fn page_target(&self, suffix: &str) -> serde_json::Value {
        let body = http_get(&self.devtools(), "/json/list");
        let list: serde_json::Value = serde_json::from_str(&body).unwrap();
        list.as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "page" && t["url"].as_str().unwrap().ends_with(suffix))
            .unwrap_or_else(|| panic!("no page at {suffix} in {body}"))
            .clone()
    }

    /// Closes the page whose address ends with `suffix`, as the user
    /// closing its tab in the browser would.
    pub fn close_page(&self, suffix: &str) {
        let target = self.page_target(suffix);
        let id = target["id"].as_str().unwrap();
        http_get(&self.devtools(), &format!("/json/close/{id}"));
    }

    /// Takes the page whose address ends with `suffix` to `to`, as the
    /// user typing it into the address bar would (`Page.navigate`), and
    /// waits until the browser lists the page there.
    pub fn navigate_page(&self, suffix: &str, to: &str) {
        let target = self.page_target(suffix);
        let ws = target["webSocketDebuggerUrl"].as_str().unwrap();
        let stream = std::net::TcpStream::connect(self.devtools()).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        let (mut socket, _) = tungstenite::client(ws, stream).unwrap();
        let go = serde_json::json!({"id": 1, "method": "Page.navigate", "params": {"url": to}});
        socket
            .send(tungstenite::Message::text(go.to_string()))
            .unwrap();
        loop {
            let Ok(text) = socket.read().unwrap().into_text() else {
                continue;
            };
            let answer: serde_json::Value = serde_json::from_str(text.as_str()).unwrap_or_default();
            if answer["id"] == 1 {
                assert!(answer.get("error").is_none(), "{answer}");
                break;
            }
        }
        crate::common::wait::until(
            "the page's new address",
            std::time::Duration::from_secs(20),
            || {
                let body = http_get(&self.devtools(), "/json/list");
                let list: serde_json::Value = serde_json::from_str(&body).unwrap();
                if list.as_array().unwrap().iter().any(|t| t["url"] == to) {
                    Ok(())
                } else {
                    Err(body)
                }
            },
        );
    }

    /// What the person at the keyboard does with the next consent pages
    /// (`confirm`, `refuse`, `close`, `away`; `,read-ms=N`).
    pub fn person_will(&self, spec: &str) {
        fs::write(self.dir().join("person"), spec).unwrap();
    }

    /// The page targets of the real Chromium, as (url, title).
    pub fn pages(&self) -> Vec<(String, String)> {
        let body = http_get(&self.devtools(), "/json/list");
        let list: serde_json::Value = serde_json::from_str(&body).unwrap();
        list.as_array()
            .unwrap()
            .iter()
            .filter(|t| t["type"] == "page")
            .map(|t| {
                (
                    t["url"].as_str().unwrap().to_string(),
                    t["title"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// Waits until the stand-in has exited (or 10 s).
    pub fn wait_gone(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Standin {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.pid as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        if !self.wait_gone() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A plain HTTP GET on loopback (Chromium's DevTools list). Chromium keeps
/// the connection open, so the body is read by its Content-Length.
pub fn http_get(address: &str, path: &str) -> String {
    use std::io::{BufRead, Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {address}\r\n\r\n").unwrap();
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    String::from_utf8(body).unwrap()
}
