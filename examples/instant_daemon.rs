//! A daemon that answers at once, for `scripts/bench.sh`: against it, the
//! wall-clock of a forwarded command is my-chrome's own time plus round
//! trips that cost next to nothing. It registers our session for the
//! runtime as the CLI's daemon would (as `RecordingDaemon` in
//! tests/native.rs does: its socket in a private directory of the runtime's
//! tmp, made by the pinned playwright-core, attached), prints `READY`, and
//! serves until it is killed: `tab-list` and `tab-select` get the list of
//! its blank tabs, one at first (`- 0: (current) [t](about:blank)`),
//! `run-code` (the current tab's rule, src/tabs/stay.rs) `"kept"`, every
//! other command `### Result\n1`; a connection that sends nothing (a
//! liveness probe) gets nothing. `tab-new` adds a tab, current, to the list
//! it answers with: the agent's first command opens its own tab (the tab
//! that was there is the user's), and every later one finds it current.
//!
//! Usage: instant_daemon   (HOME and MY_CHROME_RUNTIME_DIR as for
//! my-chrome, with an installed runtime and no session of its own)

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicUsize, Ordering};

use my_chrome::config::Config;
use my_chrome::helper::pin::Pin;

const RESULT: &str = "### Result\n1";
const KEPT: &str = "### Result\n\"kept\"\n";

/// How many tabs there are; the last one is current.
static TABS: AtomicUsize = AtomicUsize::new(1);

fn main() {
    let config = Config::from_env().expect("configuration");
    let runtime = fs::canonicalize(&config.runtime.path).expect("an installed runtime");
    let dir = runtime.join("tmp/instant-daemon");
    fs::create_dir_all(&dir).expect("the socket's folder");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).expect("a private folder");
    let socket = dir.join("d.sock");
    let _ = fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket).expect("the socket");
    let registry =
        my_chrome::session::registry::daemon_dir(&config.home, &runtime).expect("the registry");
    fs::create_dir_all(&registry).expect("the registry's folder");
    let entry = serde_json::json!({
        "name": config.session,
        "version": Pin::shipped().core_version(),
        "socketPath": socket,
        "workspaceDir": runtime,
        "attached": true,
        "timestamp": 1,
    });
    fs::write(
        registry.join(format!("{}.session", config.session)),
        entry.to_string(),
    )
    .expect("the session entry");
    println!("READY");
    for stream in listener.incoming().flatten() {
        std::thread::spawn(move || answer(stream));
    }
}

/// One connection: one request line and its reply, or nothing (a probe).
fn answer(stream: UnixStream) {
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    if reader.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
        return;
    }
    let request: serde_json::Value = serde_json::from_slice(&line).unwrap_or_default();
    let text = match request["params"]["args"]["_"][0].as_str() {
        Some("tab-new") => tabs(TABS.fetch_add(1, Ordering::SeqCst) + 1),
        Some("tab-list" | "tab-select") => tabs(TABS.load(Ordering::SeqCst)),
        // The rule that keeps the current tab (src/tabs/stay.rs), as a
        // daemon answers that took it.
        Some("run-code") => KEPT.to_string(),
        _ => RESULT.to_string(),
    };
    let reply = serde_json::json!({"id": 1, "result": {"text": text}});
    let _ = reader.get_mut().write_all(format!("{reply}\n").as_bytes());
}

/// The list of `count` tabs, the last current, each titled apart (`t`,
/// `t1`, …) so that the tab book tells them apart.
fn tabs(count: usize) -> String {
    let tab = |i: usize| {
        let title = if i == 0 {
            "t".to_string()
        } else {
            format!("t{i}")
        };
        let mark = if i + 1 == count { " (current)" } else { "" };
        format!("- {i}:{mark} [{title}](about:blank)")
    };
    let list: Vec<String> = (0..count).map(tab).collect();
    format!("### Result\n{}", list.join("\n"))
}
