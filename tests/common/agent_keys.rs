//! What an agent following SKILL.md does with its key, done for the tests:
//! the first command under a chosen name prints the key, and every later
//! command under that name carries it. Keys are kept here per sandbox (its
//! HOME) and name, from the stderr of the run that registered the name,
//! and forgotten when the session starts or ends (the names end with it)
//! or the agent gives everything back (`release`).
//!
//! Only `--agent NAME` (two words) and a sandbox's `MY_CHROME_AGENT` are
//! given their key: a test that means to run without it spells the name
//! otherwise (`--agent=NAME`, or the variable set on the command).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::sync::Mutex;

static KEYS: Mutex<Option<HashMap<(String, String), String>>> = Mutex::new(None);

const REGISTERED: &str = "my-chrome: agent name ";
const TO_YOU: &str = " is now registered to you.";

/// The key the sandbox at `home` holds for `name`.
pub fn key_of(home: &str, name: &str) -> Option<String> {
    KEYS.lock()
        .unwrap()
        .as_ref()?
        .get(&(home.to_string(), name.to_string()))
        .cloned()
}

/// `name:key` when a key is held, else `name`.
pub fn with_key(home: &str, name: &str) -> String {
    match key_of(home, name) {
        Some(key) if !name.contains(':') => format!("{name}:{key}"),
        _ => name.to_string(),
    }
}

/// Keeps what a finished run of `args` in the sandbox at `home` printed
/// or ended.
pub fn after_run(home: Option<&OsStr>, args: &[String], code: i32, stderr: &str) {
    let Some(home) = home.map(|h| h.to_string_lossy().into_owned()) else {
        return;
    };
    let mut keys = KEYS.lock().unwrap();
    let keys = keys.get_or_insert_with(HashMap::new);
    let command = args
        .iter()
        .scan(false, |skip, arg| {
            let this = !*skip && !arg.starts_with('-');
            *skip = arg == "--agent";
            Some((arg, this))
        })
        .find(|(_, this)| *this)
        .map(|(arg, _)| arg.as_str());
    let dry = args.iter().any(|a| a == "--dry-run");
    if code == 0 && !dry && matches!(command, Some("connect" | "disconnect" | "uninstall")) {
        keys.retain(|(h, _), _| *h != home);
    }
    if code == 0 && command == Some("release") && !args.iter().any(|a| a.starts_with("--tab")) {
        let name = agent_in(args);
        keys.retain(|(h, n), _| !(*h == home && Some(n.as_str()) == name.as_deref()));
    }
    let mut lines = stderr.lines();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix(REGISTERED)
            && let Some(name) = rest.split(TO_YOU).next().filter(|_| rest.contains(TO_YOU))
            && let Some(key) = lines.next()
        {
            keys.insert((home.clone(), name.to_string()), key.trim().to_string());
        }
    }
}

/// The name after `--agent`, without its key.
fn agent_in(args: &[String]) -> Option<String> {
    let at = args.iter().position(|a| a == "--agent")?;
    let raw = args.get(at + 1)?;
    Some(raw.split(':').next().unwrap_or(raw).to_string())
}
