//! The native client (src/daemon/) against the pinned client it replaces.
//! A recording daemon stands behind a session entry of our own: for every
//! command my-chrome forwards, and for the option forms that matter, the
//! request bytes my-chrome sends equal those the pinned CLI sends, and the
//! same reply is rendered to the same stdout, stderr and exit code. Where
//! byte identity is impossible (the pinned client dies with a Node stack
//! trace on an `error` reply), the normalised form is its `Error: …` line.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::{Run, Running, Sandbox};
use my_chrome::helper::pin::Pin;
use my_chrome::pinned_commands as commands;

const ENTRY: &str = "cli/node_modules/@playwright/cli/playwright-cli.js";

/// A daemon that records each request line and answers it with the reply
/// set last; a connection that sends nothing (a liveness probe) is ignored.
/// The tab lists and selections my-chrome asks for around every command
/// (src/tabs/) are answered from a small list of blank tabs (`Tabs`), and
/// not recorded: the
/// agent's own command is what must match the pinned client's.
struct RecordingDaemon {
    requests: Arc<Mutex<Vec<Vec<u8>>>>,
    reply: Arc<Mutex<Vec<u8>>>,
}

impl RecordingDaemon {
    /// Registers session `mychrome` for the sandbox's runtime, as the CLI's
    /// daemon would, its socket in a private directory of the runtime's tmp.
    fn start(sandbox: &Sandbox) -> RecordingDaemon {
        let runtime = fs::canonicalize(&sandbox.runtime).unwrap();
        let dir = runtime.join("tmp/recording-daemon");
        fs::create_dir_all(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        let socket = dir.join("d.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let registry =
            my_chrome::session::registry::daemon_dir(sandbox.home.path(), &runtime).unwrap();
        fs::create_dir_all(&registry).unwrap();
        let entry = serde_json::json!({
            "name": "mychrome",
            "version": Pin::shipped().core_version(),
            "socketPath": socket,
            "workspaceDir": runtime,
            "attached": true,
            "timestamp": 1,
        });
        fs::write(registry.join("mychrome.session"), entry.to_string()).unwrap();
        let daemon = RecordingDaemon {
            requests: Arc::default(),
            reply: Arc::default(),
        };
        let (requests, reply) = (daemon.requests.clone(), daemon.reply.clone());
        let mut tabs = Tabs::default();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let mut reader = BufReader::new(stream);
                let mut line = Vec::new();
                if reader.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
                    continue;
                }
                let text = String::from_utf8_lossy(&line);
                if let Some(answer) = tabs.answer(&text) {
                    let _ = reader.get_mut().write_all(answer.as_bytes());
                    continue;
                }
                requests.lock().unwrap().push(line);
                let answer = reply.lock().unwrap().clone();
                let _ = reader.get_mut().write_all(&answer);
            }
        });
        daemon
    }

    fn answer_with(&self, reply: &str) {
        *self.reply.lock().unwrap() = reply.as_bytes().to_vec();
    }

    /// The request lines received since the last call.
    fn take(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.requests.lock().unwrap())
    }
}

/// The pinned CLI run as my-chrome ran it before the native client: in the
/// runtime, with our session, the children's environment.
fn pinned(sandbox: &Sandbox, args: &[String]) -> Run {
    let mut cmd = Command::new(common::system_node());
    cmd.arg(sandbox.runtime.join(ENTRY))
        .arg("-s=mychrome")
        .args(args)
        .current_dir(&sandbox.runtime)
        .env_clear()
        .env("HOME", sandbox.home.path())
        .env("PATH", my_chrome::child::SYSTEM_PATH)
        .env("NO_UPDATE_NOTIFIER", "1")
        .env("TMPDIR", sandbox.runtime.join("tmp"));
    Running::start(cmd).wait()
}

/// A Node stack trace for a rejected promise, reduced to its `Error:` line.
fn normalised(stderr: &str) -> String {
    if !stderr.contains("\n    at ") {
        return stderr.to_string();
    }
    let line = stderr
        .lines()
        .find(|l| l.starts_with("Error: "))
        .unwrap_or_else(|| panic!("no Error line in:\n{stderr}"));
    format!("{line}\n")
}

struct Bench {
    sandbox: Sandbox,
    daemon: RecordingDaemon,
}

fn bench() -> Bench {
    let mut sandbox = Sandbox::installed();
    // One agent throughout, however a command is started (strace, say).
    sandbox.set("MY_CHROME_AGENT", "native-test");
    let daemon = RecordingDaemon::start(&sandbox);
    daemon.answer_with("{\"id\":1,\"result\":{\"text\":\"### Result\\nready\"}}\n");
    // The first command verifies and records the copied tree.
    let first = sandbox.run(&["tab-list"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    daemon.take();
    // From here on no node can be found for my-chrome: a line the native
    // client wrongly left to the pinned client fails instead of passing
    // with the client's own bytes.
    sandbox.set("MY_CHROME_NODE", "/nonexistent/node");
    Bench { sandbox, daemon }
}

impl Bench {
    /// One line both ways, answered with `reply`: the same request bytes,
    /// stdout, stderr (normalised) and exit code.
    fn conforms(&self, line: &[String], reply: &str) -> Result<(), String> {
        self.daemon.answer_with(reply);
        let words: Vec<&str> = line.iter().map(String::as_str).collect();
        let ours = self.sandbox.run(&words);
        let our_request = self.daemon.take();
        let theirs = pinned(&self.sandbox, line);
        let their_request = self.daemon.take();
        let our_request = unstaged(&self.sandbox, &our_request, &their_request)?;
        let text = |r: &[Vec<u8>]| -> Vec<String> {
            r.iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect()
        };
        let mut differences = Vec::new();
        if our_request != their_request {
            differences.push(format!(
                "request: ours {:?}, pinned {:?}",
                text(&our_request),
                text(&their_request)
            ));
        }
        if ours.stdout != theirs.stdout {
            differences.push(format!(
                "stdout: ours {:?}, pinned {:?}",
                ours.stdout, theirs.stdout
            ));
        }
        if ours.stderr != normalised(&theirs.stderr) {
            differences.push(format!(
                "stderr: ours {:?}, pinned {:?}",
                ours.stderr, theirs.stderr
            ));
        }
        if ours.code != theirs.code {
            differences.push(format!("exit: ours {}, pinned {}", ours.code, theirs.code));
        }
        if differences.is_empty() {
            Ok(())
        } else {
            Err(format!("{line:?}:\n  {}", differences.join("\n  ")))
        }
    }
}

/// Our requests with every output file my-chrome staged (src/staged_files.rs:
/// the daemon writes into a private folder of the runtime, and the file
/// goes where the agent named it after the check) put back as the pinned
/// client names it: the only difference allowed. A staged name keeps the
/// agent's file's extension (a screenshot's format follows it).
fn unstaged(
    sandbox: &Sandbox,
    ours: &[Vec<u8>],
    theirs: &[Vec<u8>],
) -> Result<Vec<Vec<u8>>, String> {
    let staging = fs::canonicalize(&sandbox.runtime)
        .unwrap()
        .join("tmp/outputs/out.");
    let staging = staging.to_string_lossy();
    let mut out = Vec::new();
    for (at, request) in ours.iter().enumerate() {
        let mut text = String::from_utf8_lossy(request).into_owned();
        let mine: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let pinned: serde_json::Value = theirs
            .get(at)
            .and_then(|t| serde_json::from_slice(t).ok())
            .unwrap_or_default();
        let (mine, pinned) = (&mine["params"]["args"], &pinned["params"]["args"]);
        let mut pairs = Vec::new();
        if let Some(object) = mine.as_object() {
            for (key, value) in object {
                let values: Vec<&serde_json::Value> = match value {
                    serde_json::Value::Array(values) => values.iter().collect(),
                    single => vec![single],
                };
                for (n, value) in values.into_iter().enumerate() {
                    let Some(staged) = value.as_str().filter(|v| v.starts_with(&*staging)) else {
                        continue;
                    };
                    let theirs = match &pinned[key] {
                        serde_json::Value::Array(values) => values.get(n).cloned(),
                        single => Some(single.clone()),
                    };
                    let Some(theirs) = theirs.as_ref().and_then(|v| v.as_str()) else {
                        return Err(format!("{key}: staged {staged}, pinned names none"));
                    };
                    let extension = |p: &str| Path::new(p).extension().map(|e| e.to_owned());
                    if extension(staged) != extension(theirs) {
                        return Err(format!("{key}: staged {staged} for {theirs}"));
                    }
                    pairs.push((staged.to_string(), theirs.to_string()));
                }
            }
        }
        for (staged, theirs) in pairs {
            text = text.replace(
                &serde_json::Value::String(staged).to_string(),
                &serde_json::Value::String(theirs).to_string(),
            );
        }
        out.push(text.into_bytes());
    }
    Ok(out)
}

fn words(line: &[&str]) -> Vec<String> {
    line.iter().map(|w| w.to_string()).collect()
}

const TEXT: &str = "{\"id\":1,\"result\":{\"text\":\"### Result\\n- done\"}}\n";

/// The session's tabs as the recording daemon keeps them for my-chrome's
/// housekeeping: the blank tab a session starts with, and one more, blank
/// and current, for each `tab-new`; `tab-select` moves the current one.
struct Tabs {
    count: usize,
    current: usize,
}

impl Default for Tabs {
    fn default() -> Tabs {
        Tabs {
            count: 1,
            current: 0,
        }
    }
}

impl Tabs {
    /// The reply to a housekeeping request, `None` for any other request.
    fn answer(&mut self, request: &str) -> Option<String> {
        let args: serde_json::Value = serde_json::from_str(request).ok()?;
        let words = args["params"]["args"]["_"].as_array()?;
        match words.first()?.as_str()? {
            "tab-list" => {}
            "tab-new" => {
                self.count += 1;
                self.current = self.count - 1;
            }
            "tab-select" => {
                let index = &words.get(1)?;
                let index = index.as_u64().or_else(|| index.as_str()?.parse().ok())?;
                self.current = usize::try_from(index).ok().filter(|i| *i < self.count)?;
            }
            // my-chrome's rule of the current tab (src/tabs/stay.rs), once
            // per session, answered as the pinned daemon answers it.
            "run-code" => {
                let reply =
                    serde_json::json!({"id": 1, "result": {"text": "### Result\n\"kept\"\n"}});
                return Some(format!("{reply}\n"));
            }
            _ => return None,
        }
        // Distinct titles, so that each tab is told from the others.
        let list: Vec<String> = (0..self.count)
            .map(|i| {
                let mark = if i == self.current { " (current)" } else { "" };
                format!("- {i}:{mark} [tab {i}](about:blank)")
            })
            .collect();
        let reply = serde_json::json!({"id": 1, "result": {"text": format!("### Result\n{}", list.join("\n"))}});
        Some(format!("{reply}\n"))
    }
}

/// Every command my-chrome forwards to the daemon as it stands (the
/// documented ones, less the refused, the disconnect aliases, `list`, which
/// the client answers itself, and the tab commands, which my-chrome answers
/// from the agent's own tabs: tests/agents.rs).
fn forwarded() -> Vec<&'static str> {
    let refused: BTreeSet<&str> = my_chrome::policy::blocked_commands()
        .chain(["close", "detach", "list"])
        .chain(["tab-list", "tab-new", "tab-select", "tab-close"])
        .collect();
    commands::table()
        .iter()
        .map(|c| c.name)
        .filter(|name| !refused.contains(name))
        .collect()
}

/// A command line for `name` with every argument filled and, with
/// `options`, every option given: files outside the runtime, web addresses
/// where a navigation needs one.
fn line_for(name: &str, home: &Path, options: bool) -> Vec<String> {
    let entry = commands::help_entry(name).unwrap();
    let command = commands::find(name).unwrap();
    let names_file = |at: usize| {
        command.file_args.contains(&at) || command.file_rest.is_some_and(|from| at >= from)
    };
    let file = |what: &str| home.join(what).to_string_lossy().into_owned();
    let mut line = vec![name.to_string()];
    // A variadic argument gets three words.
    let count = entry.args + if entry.variadic { 2 } else { 0 };
    for at in 0..count {
        line.push(if names_file(at) {
            file(&format!("file-{at}"))
        } else if ["goto", "tab-new"].contains(&name) {
            "https://example.test/".to_string()
        } else {
            format!("a{at}")
        });
    }
    if options {
        let file_flags = &commands::find(name).unwrap().file_flags;
        for flag in &entry.flags {
            line.push(format!("--{flag}"));
            if !commands::booleans().contains(flag) {
                line.push(if file_flags.contains(flag) {
                    file(flag)
                } else {
                    format!("v-{flag}")
                });
            }
        }
    }
    line
}

/// Every forwarded command's line in one of its four forms (the bare
/// arguments, every option given, `--json` before the bare line, `--raw`
/// before the full one) conforms. Four tests, one a form: each is some 140
/// Node starts, which a loaded machine runs in minutes.
fn every_forwarded_command_conforms(form: fn(&str, &Path) -> Vec<String>) {
    let b = bench();
    let home = b.sandbox.files().to_path_buf();
    let names = forwarded();
    assert!(names.len() > 60, "{names:?}");
    let failures: Vec<String> = names
        .iter()
        .filter_map(|name| b.conforms(&form(name, &home), TEXT).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn with_global(flag: &str, line: Vec<String>) -> Vec<String> {
    [vec![flag.to_string()], line].concat()
}

#[test]
fn every_forwarded_command_with_its_arguments_sends_the_pinned_clients_bytes() {
    every_forwarded_command_conforms(|name, home| line_for(name, home, false));
}

#[test]
fn every_forwarded_command_with_every_option_sends_the_pinned_clients_bytes() {
    every_forwarded_command_conforms(|name, home| line_for(name, home, true));
}

#[test]
fn every_forwarded_command_asked_for_json_sends_the_pinned_clients_bytes() {
    every_forwarded_command_conforms(|name, home| {
        with_global("--json", line_for(name, home, false))
    });
}

#[test]
fn every_forwarded_command_asked_raw_with_every_option_sends_the_pinned_clients_bytes() {
    every_forwarded_command_conforms(|name, home| with_global("--raw", line_for(name, home, true)));
}

#[test]
fn option_forms_and_the_clients_own_refusals_match() {
    let b = bench();
    let out = b.sandbox.file("shot.png");
    let out = out.to_string_lossy();
    let lines: Vec<Vec<&str>> = vec![
        // A repeated option becomes a list; `--no-x` is false.
        vec!["screenshot", "--filename", &out, "--filename", &out],
        vec!["screenshot", "--no-full-page", "--hires", "false"],
        vec!["--json", "--raw", "screenshot", "e3", "--full-page", "true"],
        // `--` ends the options.
        vec!["type", "--", "--not-an-option"],
        vec!["fill", "e1", "--", "-5"],
        // Only a letter after one dash is a short option: negative numbers
        // are arguments.
        vec!["mousewheel", "0", "-100"],
        vec!["mousewheel", "--", "0", "-100"],
        vec!["mousewheel", "-3", "4"],
        vec!["type", "-_", "-é"],
        // `-g` is the client's `--global`, which no forwarded command has;
        // a false one stays `g`.
        vec!["snapshot", "-g"],
        vec!["--json", "snapshot", "-g"],
        vec!["snapshot", "-g", "false"],
        vec!["snapshot", "--g"],
        vec!["snapshot", "--global"],
        // A variadic argument takes any number of words.
        vec!["upload", &out, &out, &out, &out],
        vec!["--json", "upload", &out],
        // Unknown options and too many arguments: the client's own words.
        vec!["snapshot", "--bogus"],
        vec!["snapshot", "--bogus", "--zz", "--a1"],
        vec!["--json", "snapshot", "--bogus"],
        vec!["goto", "https://example.test/", "extra"],
        vec!["--json", "goto", "https://example.test/", "extra", "more"],
        vec!["snapshot", "extra"],
        // Quotes, controls and other scripts in values.
        vec!["type", "a \"quoted\" \\ back\u{1}slash\ttab é 😀 \u{2028}"],
        vec!["eval", "() => document.title"],
        // Short options.
        vec!["screenshot", "-x", "-yz", "e5"],
        // Booleans given values, negations and repeats: the request (and
        // so the mode the daemon answers in) is read as the client reads
        // it (tests/one_reading.rs holds every decision to the same).
        vec!["snapshot", "--json", "false"],
        vec!["--json", "false", "snapshot"],
        vec!["--raw", "true", "eval", "1"],
        vec!["eval", "1", "--no-json", "--raw", "false"],
        vec!["eval", "1", "--json", "--no-json"],
        vec!["cookie-list", "--raw", "false"],
        vec!["unroute", "-1"],
    ];
    let mut failures = Vec::new();
    for line in &lines {
        if let Err(e) = b.conforms(&words(line), TEXT) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_kind_of_reply_renders_as_the_pinned_client_renders_it() {
    let b = bench();
    let replies = [
        TEXT,
        // isError: printed, and exit 1 (JavaScript's truthiness).
        "{\"id\":1,\"result\":{\"isError\":true,\"text\":\"### Error\\nError: no such ref e9\"}}\n",
        "{\"id\":1,\"result\":{\"isError\":0,\"text\":\"t\"}}\n",
        "{\"id\":1,\"result\":{\"isError\":\"x\"}}\n",
        // No text at all: the client prints `undefined`.
        "{\"id\":1,\"result\":{}}\n",
        "{\"id\":1,\"result\":{\"text\":\"\"}}\n",
        "{\"id\":1,\"result\":{\"text\":\"h\\u00e9 \\ud83d\\ude00 line\\nnext\\n\"}}\n",
        // A lone surrogate (a page's title can hold one): U+FFFD both ways.
        "{\"id\":1,\"result\":{\"text\":\"a\\ud800b \\\\ud800\"}}\n",
        "{\"id\":1,\"error\":{\"code\":1}}\n",
        // An error reply: a stack trace there, its Error line here; exit 1.
        "{\"id\":1,\"error\":\"Target page, context or browser has been closed\"}\n",
        // The daemon hangs up without a word.
        "",
    ];
    let mut failures = Vec::new();
    for reply in replies {
        for line in [&["snapshot"][..], &["--json", "console"]] {
            if let Err(e) = b.conforms(&words(line), reply) {
                failures.push(format!("reply {reply:?}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_reply_carrying_a_connect_url_is_redacted() {
    let b = bench();
    let secret = common::fresh_token();
    b.daemon.answer_with(&format!(
        "{{\"id\":1,\"result\":{{\"text\":\"- 0: [x](chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?mcpRelayUrl=ws&token={secret})\"}}}}\n"
    ));
    let run = b.sandbox.run(&["snapshot"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("<redacted>"), "{}", run.stdout);
    b.daemon
        .answer_with(&format!("{{\"id\":1,\"error\":\"token={secret}\"}}\n"));
    let failed = b.sandbox.run(&["snapshot"]);
    assert_eq!(failed.code, 1, "{}", failed.stderr);
    common::assert_nowhere(&secret, b.sandbox.home.path(), &[&run, &failed]);
}

/// With the native client, no forwarded command executes anything: 100 in a
/// row, traced, start no process but themselves.
#[test]
fn a_hundred_forwarded_commands_start_no_child() {
    let b = bench();
    let log = b.sandbox.home.path().join("execve.log");
    let script = format!(
        "i=0; while [ $i -lt 100 ]; do {} snapshot >/dev/null || exit 1; i=$((i+1)); done",
        common::BIN
    );
    let mut cmd = b.sandbox.command(&[]);
    let env: Vec<(String, String)> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.into(), v?.to_str()?.into())))
        .collect();
    let mut traced = Command::new("/usr/bin/strace");
    traced
        .args(["-f", "-qq", "-e", "trace=execve", "-o"])
        .arg(&log)
        .args(["/bin/sh", "-c", &script])
        .env_clear()
        .envs(env);
    cmd = traced;
    let run = Running::start(cmd).wait();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        b.daemon.take().len(),
        100,
        "every command reached the daemon"
    );
    let trace = fs::read_to_string(&log).unwrap();
    let started: Vec<&str> = trace
        .lines()
        .filter_map(|l| l.split_once("execve(\"").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_once('"').map(|(program, _)| program))
        .collect();
    let ours = started.iter().filter(|p| **p == common::BIN).count();
    let others: Vec<&&str> = started
        .iter()
        .filter(|p| **p != common::BIN && **p != "/bin/sh")
        .collect();
    assert_eq!(ours, 100, "{trace}");
    assert!(others.is_empty(), "children started: {others:?}");
}

/// The pin guards the protocol: the client files the native client
/// reproduces are recorded by scripts/pin-cli.sh, match the installed copy,
/// and are exactly those it was checked against here. A pin move that
/// changes any of them fails until the native client is checked again.
#[test]
fn the_pinned_client_is_the_one_the_native_client_was_checked_against() {
    let recorded =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("skill/cli/client.sha256"))
            .unwrap();
    let node_modules: PathBuf = common::golden_runtime().join("cli/node_modules");
    let mut checked = 0;
    for line in recorded.lines() {
        let (digest, file) = line.split_once("  ").unwrap();
        let bytes = fs::read(node_modules.join(file)).unwrap();
        let found = sha256_hex(&bytes);
        assert_eq!(found, digest, "{file} is not the recorded client file");
        checked += 1;
    }
    assert_eq!(checked, 9, "{recorded}");
    assert_eq!(
        recorded,
        my_chrome::daemon::CHECKED_CLIENT,
        "skill/cli/client.sha256 moved: check src/daemon/ against the new client \
         (tests/native.rs), then update CHECKED_CLIENT"
    );
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// A signal that came while my-chrome checked things sends nothing: the
/// daemon never sees a connection. (Library level: the flag is this test
/// process's own; the other tests here run the binary.)
#[test]
fn a_signal_that_came_first_sends_nothing() {
    use nix::sys::signal::Signal;
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("d.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    my_chrome::signals::install().unwrap();
    nix::sys::signal::raise(Signal::SIGINT).unwrap();
    let outcome =
        my_chrome::daemon::run(&socket, b"{}\n", std::time::Duration::from_secs(5), 1 << 20);
    assert!(
        matches!(
            outcome,
            Err(my_chrome::daemon::DaemonError::NotSent(Signal::SIGINT))
        ),
        "{outcome:?}"
    );
    assert!(listener.accept().is_err(), "something connected");
}
