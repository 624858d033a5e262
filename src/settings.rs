//! The user's settings (`<runtime>/settings.json`, private, written by
//! `my-chrome setup`). What decides for every agent — when an agent counts
//! as gone (its tabs are then held for it), where forwarded commands may
//! read and write files, how long a session may stay idle and live at
//! all — is the user's own choice, made once, never a
//! call's: an agent that sets a variable for one command would decide for
//! the others (docs/DESIGN.md, "Settings"). A call may only make things
//! stricter for itself, through its own variables (`config.rs`).

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::exit::Exit;
use crate::runtime::{Runtime, RuntimeError, StateFile};

const VERSION: u32 = 1;
/// The gone time when the user set none: half an hour without a command.
pub const DEFAULT_AGENT_GONE: Duration = Duration::from_secs(1800);
/// The shortest and longest gone time the user may set.
pub const AGENT_GONE_RANGE: (Duration, Duration) =
    (Duration::from_secs(10), Duration::from_secs(7 * 24 * 3600));
/// The idle limit when the user set none: a session ends after half an
/// hour without a browser command (`0`, never, only when the user says so).
pub const DEFAULT_IDLE_LIMIT: Duration = Duration::from_secs(1800);
/// The shortest and longest idle limit the user may set (beside never).
pub const IDLE_LIMIT_RANGE: (Duration, Duration) =
    (Duration::from_secs(10), Duration::from_secs(24 * 3600));
/// The lifetime limit when the user set none: a working day after `connect`.
pub const DEFAULT_LIFETIME_LIMIT: Duration = Duration::from_secs(8 * 3600);
/// The shortest and longest lifetime the user may set: a session always ends.
pub const LIFETIME_LIMIT_RANGE: (Duration, Duration) =
    (Duration::from_secs(10), Duration::from_secs(7 * 24 * 3600));
/// How many tabs one agent may have when the user set no number.
pub const DEFAULT_AGENT_TABS: usize = 10;
/// How many tabs the session may have before no agent opens another.
pub const DEFAULT_SESSION_TABS: usize = 30;
/// The fewest and most tabs the user may allow one agent, and the session.
pub const AGENT_TABS_RANGE: (usize, usize) = (1, 200);
pub const SESSION_TABS_RANGE: (usize, usize) = (2, 500);
/// How long an agent's browser command may run before my-chrome gives it
/// up (the daemon may run it on: then only its agent waits for it) when
/// the user set no bound.
pub const DEFAULT_COMMAND_BOUND: Duration = Duration::from_secs(120);
/// The shortest and longest command bound the user may set.
pub const COMMAND_BOUND_RANGE: (Duration, Duration) =
    (Duration::from_secs(1), Duration::from_secs(3600));

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    version: u32,
    agent_gone_secs: u64,
    file_roots: Vec<PathBuf>,
    /// 0: never. Absent in files written before the limits existed.
    #[serde(default = "default_idle_secs")]
    idle_limit_secs: u64,
    #[serde(default = "default_lifetime_secs")]
    lifetime_limit_secs: u64,
    /// Absent in files written before connect asked the user.
    #[serde(default = "asked")]
    connect_consent: bool,
    /// Absent in files written before the tab caps.
    #[serde(default = "default_agent_tabs")]
    agent_tabs: usize,
    #[serde(default = "default_session_tabs")]
    session_tabs: usize,
    /// Absent in files written before the bound was the user's.
    #[serde(default = "default_command_bound_secs")]
    command_bound_secs: u64,
}

fn default_command_bound_secs() -> u64 {
    DEFAULT_COMMAND_BOUND.as_secs()
}

fn default_agent_tabs() -> usize {
    DEFAULT_AGENT_TABS
}

fn default_session_tabs() -> usize {
    DEFAULT_SESSION_TABS
}

fn asked() -> bool {
    true
}

fn default_idle_secs() -> u64 {
    DEFAULT_IDLE_LIMIT.as_secs()
}

fn default_lifetime_secs() -> u64 {
    DEFAULT_LIFETIME_LIMIT.as_secs()
}

/// The settings in force.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// After how long without a command an agent is gone: its tabs are
    /// held for it.
    pub agent_gone: Duration,
    /// Folders where forwarded commands may read and write files, beside
    /// the caller's working directory and `/tmp`.
    pub file_roots: Vec<PathBuf>,
    /// After how long without a browser command a session ends by itself
    /// (`None`: never, the user's explicit choice).
    pub idle_limit: Option<Duration>,
    /// How long after `connect` a session ends, whatever it does.
    pub lifetime_limit: Duration,
    /// Whether `connect` asks the user in the browser first (the default;
    /// turned off only with the user's consent).
    pub connect_consent: bool,
    /// How many tabs one agent may have: past it, it opens no tab and its
    /// pages' popups are the user's.
    pub agent_tabs: usize,
    /// How many tabs the session may have: past it, no agent opens one.
    pub session_tabs: usize,
    /// How long an agent's browser command may run before it is given up
    /// (an agent's own `MY_CHROME_COMMAND_TIMEOUT_SECS` may only shorten
    /// it: [`Settings::command_bound_for`]).
    pub command_bound: Duration,
    /// Whether they come from the user's `setup` (else: the defaults).
    pub recorded: bool,
}

impl Settings {
    /// The bound on a command of a caller that asked for `asked` (its own
    /// variable, `config.command_timeout`): never longer than the user's.
    pub fn command_bound_for(&self, asked: Duration) -> Duration {
        asked.min(self.command_bound)
    }

    /// One line: what each setting is, and where it comes from.
    pub fn describe(&self) -> String {
        let roots = if self.file_roots.is_empty() {
            "none".to_string()
        } else {
            self.file_roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let idle = match self.idle_limit {
            Some(idle) => format!(
                "after {} without a browser command",
                humantime::format_duration(idle)
            ),
            None => "never for want of commands".to_string(),
        };
        format!(
            "an agent is gone after {} without a command; file roots beside /tmp: {roots}; a \
             session ends {idle}, and {} after connect at the latest; an agent opens at most {} \
             tabs, the session holds at most {}; a browser command is given up after {}; connect \
             {} ({})",
            humantime::format_duration(self.agent_gone),
            humantime::format_duration(self.lifetime_limit),
            self.agent_tabs,
            self.session_tabs,
            humantime::format_duration(self.command_bound),
            if self.connect_consent {
                "asks you in the browser first"
            } else {
                "runs without asking you"
            },
            if self.recorded {
                "from `my-chrome setup`"
            } else {
                "the defaults: `my-chrome setup` records yours"
            }
        )
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            agent_gone: DEFAULT_AGENT_GONE,
            file_roots: Vec::new(),
            idle_limit: Some(DEFAULT_IDLE_LIMIT),
            lifetime_limit: DEFAULT_LIFETIME_LIMIT,
            connect_consent: true,
            agent_tabs: DEFAULT_AGENT_TABS,
            session_tabs: DEFAULT_SESSION_TABS,
            command_bound: DEFAULT_COMMAND_BOUND,
            recorded: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error(
        "{path}: is not my-chrome's settings file ({detail}); nothing was run. Ask the user to \
         write it again (README, \"Configuration\": the settings are theirs) or to remove it \
         for the defaults"
    )]
    Malformed { path: PathBuf, detail: String },
    #[error("{what}: {problem}. Accepted: {accepted}; nothing was recorded or installed")]
    Invalid {
        what: &'static str,
        problem: String,
        accepted: &'static str,
    },
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl SettingsError {
    pub fn exit(&self) -> Exit {
        match self {
            SettingsError::Malformed { .. } => Exit::Security,
            SettingsError::Invalid { .. } => Exit::Usage,
            SettingsError::Runtime(e) => e.exit(),
        }
    }
}

/// The settings `runtime` holds (the defaults when the user recorded none).
pub fn load(runtime: &Runtime) -> Result<Settings, SettingsError> {
    let Some(bytes) = runtime.read_state(StateFile::Settings)? else {
        return Ok(Settings::default());
    };
    let malformed = |detail: String| SettingsError::Malformed {
        path: runtime.root().join(StateFile::Settings.file_name()),
        detail,
    };
    // Where and what kind of error, never the text.
    let stored: Stored =
        serde_json::from_slice(&bytes).map_err(|e| malformed(crate::runtime::json_fault(&e)))?;
    let agent_gone = Duration::from_secs(stored.agent_gone_secs);
    let idle_limit = match stored.idle_limit_secs {
        0 => None,
        secs => Some(Duration::from_secs(secs)),
    };
    let lifetime_limit = Duration::from_secs(stored.lifetime_limit_secs);
    let command_bound = Duration::from_secs(stored.command_bound_secs);
    let in_range = (AGENT_GONE_RANGE.0..=AGENT_GONE_RANGE.1).contains(&agent_gone)
        && idle_limit.is_none_or(|idle| (IDLE_LIMIT_RANGE.0..=IDLE_LIMIT_RANGE.1).contains(&idle))
        && (LIFETIME_LIMIT_RANGE.0..=LIFETIME_LIMIT_RANGE.1).contains(&lifetime_limit)
        && (AGENT_TABS_RANGE.0..=AGENT_TABS_RANGE.1).contains(&stored.agent_tabs)
        && (SESSION_TABS_RANGE.0..=SESSION_TABS_RANGE.1).contains(&stored.session_tabs)
        && (COMMAND_BOUND_RANGE.0..=COMMAND_BOUND_RANGE.1).contains(&command_bound);
    if stored.version != VERSION
        || !in_range
        || stored.file_roots.iter().any(|r| file_root(r).is_err())
    {
        return Err(malformed("unexpected version or values".into()));
    }
    Ok(Settings {
        agent_gone,
        file_roots: stored.file_roots,
        idle_limit,
        lifetime_limit,
        connect_consent: stored.connect_consent,
        agent_tabs: stored.agent_tabs,
        session_tabs: stored.session_tabs,
        command_bound,
        recorded: true,
    })
}

/// The settings of the runtime at `location`, if it exists (the defaults
/// otherwise); a runtime that is not ours is refused as for any command.
pub fn of(location: &crate::config::RuntimeLocation) -> Result<Settings, SettingsError> {
    match Runtime::inspect(location)? {
        Some(runtime) => load(&runtime),
        None => Ok(Settings::default()),
    }
}

/// What `setup` was asked to change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Change {
    pub agent_gone: Option<Duration>,
    /// The new roots (replacing the old ones), when given.
    pub file_roots: Option<Vec<PathBuf>>,
    /// `Some(None)`: never.
    pub idle_limit: Option<Option<Duration>>,
    pub lifetime_limit: Option<Duration>,
    pub connect_consent: Option<bool>,
    pub agent_tabs: Option<usize>,
    pub session_tabs: Option<usize>,
    pub command_bound: Option<Duration>,
}

impl Change {
    pub fn is_empty(&self) -> bool {
        self.agent_gone.is_none()
            && self.file_roots.is_none()
            && self.idle_limit.is_none()
            && self.lifetime_limit.is_none()
            && self.connect_consent.is_none()
            && self.agent_tabs.is_none()
            && self.session_tabs.is_none()
            && self.command_bound.is_none()
    }

    /// What of `self` would let agents do more, or a session live longer,
    /// than `now` does: one row per setting, as the user is asked about it
    /// (empty: it only tightens, and needs no consent).
    pub fn widening(&self, now: &Settings) -> Vec<(String, String)> {
        let format = |d: Duration| humantime::format_duration(d).to_string();
        let mut rows = Vec::new();
        if let Some(roots) = &self.file_roots {
            for added in roots.iter().filter(|r| !now.file_roots.contains(r)) {
                rows.push((
                    "Agents may read and write files in".into(),
                    added.display().to_string(),
                ));
            }
        }
        if let Some(gone) = self.agent_gone
            && gone < now.agent_gone
        {
            rows.push((
                "An agent's held tabs may go to others after".into(),
                format!("{} (now {})", format(gone), format(now.agent_gone)),
            ));
        }
        let idle_now = now.idle_limit.map_or("never".to_string(), &format);
        match self.idle_limit {
            Some(None) if now.idle_limit.is_some() => rows.push((
                "A session ends when idle".into(),
                format!("never (now after {idle_now})"),
            )),
            Some(Some(idle)) if now.idle_limit.is_some_and(|n| idle > n) => rows.push((
                "A session ends when idle after".into(),
                format!("{} (now {idle_now})", format(idle)),
            )),
            _ => {}
        }
        if let Some(lifetime) = self.lifetime_limit
            && lifetime > now.lifetime_limit
        {
            rows.push((
                "A session ends at the latest after".into(),
                format!("{} (now {})", format(lifetime), format(now.lifetime_limit)),
            ));
        }
        if let Some(tabs) = self.agent_tabs
            && tabs > now.agent_tabs
        {
            rows.push((
                "An agent may have at most".into(),
                format!("{tabs} tabs (now {})", now.agent_tabs),
            ));
        }
        if let Some(tabs) = self.session_tabs
            && tabs > now.session_tabs
        {
            rows.push((
                "The session may hold at most".into(),
                format!("{tabs} tabs (now {})", now.session_tabs),
            ));
        }
        if let Some(bound) = self.command_bound
            && bound > now.command_bound
        {
            rows.push((
                "An agent's browser command may run, keeping its tab busy, for".into(),
                format!("{} (now {})", format(bound), format(now.command_bound)),
            ));
        }
        if self.connect_consent == Some(false) && now.connect_consent {
            rows.push((
                "`my-chrome connect`".into(),
                "runs without asking you first (now it asks)".into(),
            ));
        }
        rows
    }
}

/// Records `change` over what `runtime` holds (under the wrapper lock);
/// the settings now in force.
pub fn record(runtime: &Runtime, change: &Change) -> Result<Settings, SettingsError> {
    let mut settings = load(runtime)?;
    if let Some(gone) = change.agent_gone {
        settings.agent_gone = gone;
    }
    if let Some(roots) = &change.file_roots {
        settings.file_roots = roots.clone();
    }
    if let Some(idle) = change.idle_limit {
        settings.idle_limit = idle;
    }
    if let Some(lifetime) = change.lifetime_limit {
        settings.lifetime_limit = lifetime;
    }
    if let Some(consent) = change.connect_consent {
        settings.connect_consent = consent;
    }
    if let Some(tabs) = change.agent_tabs {
        settings.agent_tabs = tabs;
    }
    if let Some(tabs) = change.session_tabs {
        settings.session_tabs = tabs;
    }
    if let Some(bound) = change.command_bound {
        settings.command_bound = bound;
    }
    let stored = Stored {
        version: VERSION,
        agent_gone_secs: settings.agent_gone.as_secs(),
        file_roots: settings.file_roots.clone(),
        idle_limit_secs: settings.idle_limit.map_or(0, |idle| idle.as_secs()),
        lifetime_limit_secs: settings.lifetime_limit.as_secs(),
        connect_consent: settings.connect_consent,
        agent_tabs: settings.agent_tabs,
        session_tabs: settings.session_tabs,
        command_bound_secs: settings.command_bound.as_secs(),
    };
    let bytes = serde_json::to_vec_pretty(&stored).expect("the settings serialise");
    runtime.write_state(StateFile::Settings, &bytes)?;
    settings.recorded = true;
    Ok(settings)
}

/// `--agent-gone`: a duration (`30m`, `2h`, `90s`, or seconds), within
/// [`AGENT_GONE_RANGE`].
pub fn agent_gone(raw: &str) -> Result<Duration, SettingsError> {
    duration(
        "--agent-gone",
        raw,
        AGENT_GONE_RANGE,
        "a duration such as 90s, 30m or 2h (or a number of seconds), from 10 s to 7 days",
    )
}

/// `--idle-limit`: a duration within [`IDLE_LIMIT_RANGE`], or `0` or
/// `never` (`None`).
pub fn idle_limit(raw: &str) -> Result<Option<Duration>, SettingsError> {
    if matches!(raw.trim(), "0" | "never") {
        return Ok(None);
    }
    duration(
        "--idle-limit",
        raw,
        IDLE_LIMIT_RANGE,
        "a duration such as 90s, 30m or 2h (or a number of seconds), from 10 s to 24 h, or 0 \
         (never)",
    )
    .map(Some)
}

/// `--lifetime-limit`: a duration within [`LIFETIME_LIMIT_RANGE`].
pub fn lifetime_limit(raw: &str) -> Result<Duration, SettingsError> {
    duration(
        "--lifetime-limit",
        raw,
        LIFETIME_LIMIT_RANGE,
        LIFETIME_FORMS,
    )
}

/// `--command-bound`: a duration within [`COMMAND_BOUND_RANGE`].
pub fn command_bound(raw: &str) -> Result<Duration, SettingsError> {
    duration(
        "--command-bound",
        raw,
        COMMAND_BOUND_RANGE,
        "a duration such as 30s, 2m or 1h (or a number of seconds), from 1 s to 1 h",
    )
}

/// `--agent-tabs` and `--session-tabs`: a whole number within `range`.
pub fn tabs(what: &'static str, raw: &str, range: (usize, usize)) -> Result<usize, SettingsError> {
    let accepted = match what {
        "--agent-tabs" => "a whole number of tabs from 1 to 200",
        _ => "a whole number of tabs from 2 to 500",
    };
    let shown: String = raw.chars().take(24).collect();
    raw.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (range.0..=range.1).contains(n))
        .ok_or_else(|| SettingsError::Invalid {
            what,
            problem: format!("{shown:?} is not a number in range"),
            accepted,
        })
}

/// The accepted forms of a lifetime (`--lifetime-limit`, `connect --for`).
pub const LIFETIME_FORMS: &str =
    "a duration such as 90s, 30m or 8h (or a number of seconds), from 10 s to 7 days";

/// A duration given as `what` (whole seconds: what is recorded is what is
/// shown), within `range`.
pub fn duration(
    what: &'static str,
    raw: &str,
    range: (Duration, Duration),
    accepted: &'static str,
) -> Result<Duration, SettingsError> {
    let invalid = |problem: String| SettingsError::Invalid {
        what,
        problem,
        accepted,
    };
    let shown: String = raw.chars().take(24).collect();
    let value = match raw.trim().parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => humantime::parse_duration(raw.trim())
            .map_err(|_| invalid(format!("{shown:?} is not a duration")))?,
    };
    if !(range.0..=range.1).contains(&value) {
        return Err(invalid(format!(
            "{} is out of range",
            humantime::format_duration(value)
        )));
    }
    Ok(Duration::from_secs(value.as_secs()))
}

/// `--file-root` as `setup` takes it: a [`file_root`], and neither a home
/// folder of `homes` itself nor a folder above one (a root is a folder of
/// the user's work, not everything they have: their keys, their mail).
pub fn new_file_root(path: &Path, homes: &[&Path]) -> Result<PathBuf, SettingsError> {
    let root = file_root(path)?;
    // Through links too: a link to the home folder is the home folder.
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let above = |home: &&Path| {
        let home: PathBuf = home.components().collect();
        home.starts_with(&root) || real(&home).starts_with(real(&root))
    };
    if homes.iter().any(above) {
        return Err(SettingsError::Invalid {
            what: "--file-root",
            problem: format!(
                "{}: is your home folder or a folder above it, where every file of yours is",
                root.display()
            ),
            accepted: "an absolute path of a folder of your work inside your home folder or \
                       elsewhere (not /, not the home folder itself), without '.' or '..'",
        });
    }
    Ok(root)
}

/// `--file-root`: an absolute path without `.`, `..` or control
/// characters, not `/` (a root is a folder of the user's work).
pub fn file_root(path: &Path) -> Result<PathBuf, SettingsError> {
    let invalid = |problem: &str| SettingsError::Invalid {
        what: "--file-root",
        problem: format!("{}: {problem}", path.display()),
        accepted: "an absolute path of a folder (not /), without '.' or '..'",
    };
    if !path.is_absolute() {
        return Err(invalid("not an absolute path"));
    }
    if path
        .components()
        .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return Err(invalid("it has '.' or '..' in it"));
    }
    if path.to_string_lossy().chars().any(char::is_control) {
        return Err(invalid("it has control characters in it"));
    }
    let normal: PathBuf = path.components().collect();
    if normal == Path::new("/") {
        return Err(invalid("/ is the whole system"));
    }
    Ok(normal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_root_is_never_the_home_folder_or_above_it() {
        let home = Path::new("/home/ann");
        for bad in ["/home/ann", "/home/ann/", "/home", "/"] {
            assert!(new_file_root(Path::new(bad), &[home]).is_err(), "{bad:?}");
        }
        for good in ["/home/ann/work", "/srv/data", "/home/annex"] {
            assert_eq!(
                new_file_root(Path::new(good), &[home]).unwrap(),
                Path::new(good)
            );
        }
        // A link to the home folder is the home folder, and so is a home
        // given through a link to a root.
        let place = tempfile::tempdir().unwrap();
        let real_home = place.path().join("home");
        std::fs::create_dir(&real_home).unwrap();
        std::os::unix::fs::symlink(&real_home, place.path().join("via")).unwrap();
        let via = place.path().join("via");
        assert!(new_file_root(&via, &[&real_home]).is_err());
        assert!(new_file_root(&real_home, &[&via]).is_err());
        assert!(new_file_root(&real_home.join("work"), &[&via]).is_ok());
    }

    #[test]
    fn only_a_change_that_lets_agents_do_more_asks_the_user() {
        let now = Settings {
            file_roots: vec![PathBuf::from("/work")],
            ..Settings::default()
        };
        let asks = |change: Change| change.widening(&now);
        let secs = Duration::from_secs;
        // Tightening, or the same again: nobody is asked.
        for tighter in [
            Change {
                agent_gone: Some(secs(3600)),
                idle_limit: Some(Some(secs(60))),
                lifetime_limit: Some(secs(3600)),
                file_roots: Some(vec![]),
                connect_consent: Some(true),
                agent_tabs: Some(3),
                session_tabs: Some(12),
                command_bound: Some(secs(30)),
            },
            Change {
                file_roots: Some(vec![PathBuf::from("/work")]),
                agent_gone: Some(now.agent_gone),
                idle_limit: Some(now.idle_limit),
                lifetime_limit: Some(now.lifetime_limit),
                connect_consent: Some(now.connect_consent),
                agent_tabs: Some(now.agent_tabs),
                session_tabs: Some(now.session_tabs),
                command_bound: Some(now.command_bound),
            },
        ] {
            assert_eq!(asks(tighter), Vec::<(String, String)>::new());
        }
        // Each widening is one row the user reads.
        let widened = [
            Change {
                file_roots: Some(vec![PathBuf::from("/work"), PathBuf::from("/data")]),
                ..Change::default()
            },
            Change {
                agent_gone: Some(secs(10)),
                ..Change::default()
            },
            Change {
                idle_limit: Some(None),
                ..Change::default()
            },
            Change {
                idle_limit: Some(Some(secs(7200))),
                ..Change::default()
            },
            Change {
                lifetime_limit: Some(secs(86400)),
                ..Change::default()
            },
            Change {
                connect_consent: Some(false),
                ..Change::default()
            },
            Change {
                agent_tabs: Some(11),
                ..Change::default()
            },
            Change {
                session_tabs: Some(31),
                ..Change::default()
            },
        ];
        let said: Vec<String> = widened
            .into_iter()
            .map(|c| {
                let rows = asks(c);
                assert_eq!(rows.len(), 1, "{rows:?}");
                format!("{}: {}", rows[0].0, rows[0].1)
            })
            .collect();
        assert!(said[0].ends_with("/data"), "{said:?}");
        assert!(said[1].contains("10s (now 30m)"), "{said:?}");
        assert!(said[2].contains("never (now after 30m)"), "{said:?}");
        assert!(said[3].contains("2h (now 30m)"), "{said:?}");
        assert!(said[4].contains("1day (now 8h)"), "{said:?}");
        assert!(said[5].contains("without asking you"), "{said:?}");
        assert!(said[6].contains("11 tabs (now 10)"), "{said:?}");
        assert!(said[7].contains("31 tabs (now 30)"), "{said:?}");
        // An idle limit raised from never is no wider.
        let never = Settings {
            idle_limit: None,
            ..Settings::default()
        };
        let back = Change {
            idle_limit: Some(Some(secs(60))),
            ..Change::default()
        };
        assert!(back.widening(&never).is_empty());
        // Nor is never, again.
        let again = Change {
            idle_limit: Some(None),
            ..Change::default()
        };
        assert!(again.widening(&never).is_empty());
    }

    #[test]
    fn the_gone_time_is_a_duration_in_range() {
        assert_eq!(agent_gone("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(agent_gone("90").unwrap(), Duration::from_secs(90));
        assert_eq!(agent_gone(" 2h ").unwrap(), Duration::from_secs(7200));
        assert_eq!(agent_gone("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(agent_gone("7days").unwrap(), AGENT_GONE_RANGE.1);
        for bad in ["9s", "8days", "-5m", "soon", "", "1.5"] {
            let err = agent_gone(bad).unwrap_err().to_string();
            assert!(err.starts_with("--agent-gone: "), "{bad:?}: {err}");
            assert!(err.contains("Accepted: a duration such as"), "{err}");
        }
        // A long value is not echoed whole.
        let long = "x".repeat(60);
        assert!(!agent_gone(&long).unwrap_err().to_string().contains(&long));
    }

    #[test]
    fn a_file_root_is_an_absolute_folder_path() {
        assert_eq!(
            file_root(Path::new("/srv/work/")).unwrap(),
            Path::new("/srv/work")
        );
        for bad in ["relative", "/", "/srv/../etc", "/a\nb"] {
            assert!(file_root(Path::new(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn settings_are_recorded_and_read_back_and_a_foreign_file_is_refused() {
        let (_home, runtime) = crate::runtime::scratch();
        assert_eq!(load(&runtime).unwrap(), Settings::default());
        let change = Change {
            agent_gone: Some(Duration::from_secs(60)),
            ..Change::default()
        };
        let now = record(&runtime, &change).unwrap();
        assert_eq!(now.agent_gone, Duration::from_secs(60));
        assert!(now.recorded);
        let roots = Change {
            file_roots: Some(vec![PathBuf::from("/srv/shots")]),
            ..Change::default()
        };
        let now = record(&runtime, &roots).unwrap();
        assert_eq!(
            (now.agent_gone, now.file_roots.clone()),
            (Duration::from_secs(60), vec![PathBuf::from("/srv/shots")]),
            "a change keeps what it does not name"
        );
        assert_eq!(load(&runtime).unwrap(), now);
        for bad in [
            &b"{}"[..],
            b"{\"version\":1,\"agent_gone_secs\":1,\"file_roots\":[]}",
            b"{\"version\":1,\"agent_gone_secs\":60,\"file_roots\":[\"rel\"]}",
            b"{\"version\":2,\"agent_gone_secs\":60,\"file_roots\":[]}",
            b"{\"version\":1,\"agent_gone_secs\":60,\"file_roots\":[],\"idle_limit_secs\":5}",
            b"{\"version\":1,\"agent_gone_secs\":60,\"file_roots\":[],\"lifetime_limit_secs\":0}",
            b"",
        ] {
            runtime.write_state(StateFile::Settings, bad).unwrap();
            let err = load(&runtime).unwrap_err();
            assert!(matches!(err, SettingsError::Malformed { .. }), "{err}");
            assert_eq!(err.exit(), Exit::Security);
        }
    }

    #[test]
    fn a_file_written_before_connect_asked_asks_and_a_change_of_one_setting_is_one() {
        // Read back without `connect_consent` (written before it existed):
        // connect asks, as it does by default.
        let (_home, runtime) = crate::runtime::scratch();
        runtime
            .write_state(
                StateFile::Settings,
                b"{\"version\":1,\"agent_gone_secs\":60,\"file_roots\":[]}",
            )
            .unwrap();
        let read = load(&runtime).unwrap();
        assert!(read.connect_consent);
        // Nor the caps or the bound (written before them): the defaults.
        assert_eq!((read.agent_tabs, read.session_tabs), (10, 30));
        assert_eq!(read.command_bound, Duration::from_secs(120));
        assert!(Change::default().is_empty());
        for change in [
            Change {
                agent_gone: Some(Duration::from_secs(60)),
                ..Change::default()
            },
            Change {
                file_roots: Some(Vec::new()),
                ..Change::default()
            },
            Change {
                idle_limit: Some(None),
                ..Change::default()
            },
            Change {
                lifetime_limit: Some(Duration::from_secs(60)),
                ..Change::default()
            },
            Change {
                connect_consent: Some(true),
                ..Change::default()
            },
            Change {
                agent_tabs: Some(3),
                ..Change::default()
            },
            Change {
                session_tabs: Some(3),
                ..Change::default()
            },
        ] {
            assert!(!change.is_empty(), "{change:?}");
        }
        // The caps are recorded and read back.
        let caps = Change {
            agent_tabs: Some(4),
            session_tabs: Some(12),
            ..Change::default()
        };
        let recorded = record(&runtime, &caps).unwrap();
        assert_eq!((recorded.agent_tabs, recorded.session_tabs), (4, 12));
        let again = load(&runtime).unwrap();
        assert_eq!((again.agent_tabs, again.session_tabs), (4, 12));
    }

    #[test]
    fn a_tab_cap_is_a_whole_number_in_its_range() {
        assert_eq!(tabs("--agent-tabs", " 7 ", AGENT_TABS_RANGE).unwrap(), 7);
        assert_eq!(tabs("--agent-tabs", "1", AGENT_TABS_RANGE).unwrap(), 1);
        assert_eq!(tabs("--agent-tabs", "200", AGENT_TABS_RANGE).unwrap(), 200);
        assert_eq!(
            tabs("--session-tabs", "500", SESSION_TABS_RANGE).unwrap(),
            500
        );
        for (what, raw, range) in [
            ("--agent-tabs", "0", AGENT_TABS_RANGE),
            ("--agent-tabs", "201", AGENT_TABS_RANGE),
            ("--agent-tabs", "ten", AGENT_TABS_RANGE),
            ("--session-tabs", "1", SESSION_TABS_RANGE),
            ("--session-tabs", "501", SESSION_TABS_RANGE),
        ] {
            let refused = tabs(what, raw, range).unwrap_err();
            assert_eq!(refused.exit(), Exit::Usage, "{raw}");
            assert!(refused.to_string().starts_with(what), "{refused}");
        }
    }

    #[test]
    fn the_session_limits_are_the_users_with_never_only_for_idle() {
        assert_eq!(idle_limit("45m").unwrap(), Some(Duration::from_secs(2700)));
        assert_eq!(idle_limit("0").unwrap(), None);
        assert_eq!(idle_limit("never").unwrap(), None);
        assert_eq!(lifetime_limit("8h").unwrap(), DEFAULT_LIFETIME_LIMIT);
        // The longest of each is allowed.
        assert_eq!(idle_limit("24h").unwrap(), Some(Duration::from_secs(86400)));
        assert_eq!(
            lifetime_limit("7days").unwrap(),
            Duration::from_secs(7 * 86400)
        );
        for bad in ["5s", "25h", "-1m", "later", ""] {
            let err = idle_limit(bad).unwrap_err().to_string();
            assert!(err.starts_with("--idle-limit: "), "{bad:?}: {err}");
            assert!(err.contains("or 0 (never)"), "{err}");
        }
        for bad in ["0", "never", "9s", "8days", "soon"] {
            let err = lifetime_limit(bad).unwrap_err().to_string();
            assert!(err.starts_with("--lifetime-limit: "), "{bad:?}: {err}");
            assert!(err.contains("from 10 s to 7 days"), "{err}");
        }
        let (_home, runtime) = crate::runtime::scratch();
        // A file from before the limits reads with the defaults.
        runtime
            .write_state(
                StateFile::Settings,
                b"{\"version\":1,\"agent_gone_secs\":60,\"file_roots\":[]}",
            )
            .unwrap();
        let old = load(&runtime).unwrap();
        assert_eq!(
            (old.idle_limit, old.lifetime_limit),
            (Some(DEFAULT_IDLE_LIMIT), DEFAULT_LIFETIME_LIMIT)
        );
        let never = Change {
            idle_limit: Some(None),
            lifetime_limit: Some(Duration::from_secs(3600)),
            ..Change::default()
        };
        record(&runtime, &never).unwrap();
        let now = load(&runtime).unwrap();
        // What every command reads: the runtime's own.
        let location = crate::config::RuntimeLocation {
            path: runtime.root().to_path_buf(),
        };
        assert_eq!(of(&location).unwrap(), now);
        assert_eq!(
            (now.idle_limit, now.lifetime_limit, now.agent_gone),
            (None, Duration::from_secs(3600), Duration::from_secs(60))
        );
        assert!(
            now.describe().contains("never for want of commands"),
            "{}",
            now.describe()
        );
    }

    #[test]
    fn the_command_bound_is_the_users_and_a_call_may_only_shorten_it() {
        let (_home, runtime) = crate::runtime::scratch();
        let now = load(&runtime).unwrap();
        assert_eq!(
            now.command_bound_for(Duration::from_secs(3600)),
            Duration::from_secs(120)
        );
        assert_eq!(
            now.command_bound_for(Duration::from_secs(5)),
            Duration::from_secs(5)
        );
        let longer = Change {
            command_bound: Some(Duration::from_secs(600)),
            ..Change::default()
        };
        assert!(!longer.is_empty());
        let rows = longer.widening(&now);
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert!(rows[0].1.contains("10m (now 2m)"), "{rows:?}");
        let shorter = Change {
            command_bound: Some(Duration::from_secs(30)),
            ..Change::default()
        };
        assert!(shorter.widening(&now).is_empty(), "shorter is anyone's");
        let recorded = record(&runtime, &longer).unwrap();
        assert_eq!(recorded.command_bound, Duration::from_secs(600));
        assert_eq!(
            load(&runtime).unwrap().command_bound,
            Duration::from_secs(600)
        );
        assert_eq!(
            recorded.command_bound_for(Duration::from_secs(3600)),
            Duration::from_secs(600)
        );
        assert_eq!(command_bound("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(command_bound("1").unwrap(), Duration::from_secs(1));
        assert_eq!(command_bound("1h").unwrap(), Duration::from_secs(3600));
        for bad in ["0", "61m", "soon"] {
            let err = command_bound(bad).unwrap_err();
            assert_eq!(err.exit(), Exit::Usage, "{bad}: {err}");
        }
        runtime
            .write_state(
                StateFile::Settings,
                b"{\"version\":1,\"agent_gone_secs\":60,\"file_roots\":[],\"command_bound_secs\":0}",
            )
            .unwrap();
        assert!(matches!(
            load(&runtime),
            Err(SettingsError::Malformed { .. })
        ));
    }
}
