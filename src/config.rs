//! Every environment variable my-chrome reads is read here, once, and
//! validated before anything else happens. No other module calls
//! `std::env::var*`: the rest of the program sees only [`Config`]. What
//! each variable may be, its default and what it does is one table,
//! [`VARIABLES`], which README's "Configuration" shows (`tests/docs.rs`).

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use crate::agent_key::AgentKey;
use crate::browser_name::Browser;
use crate::exit::Exit;
use crate::host_sandbox::Host;
use crate::platform;

/// Where the runtime lives (`MY_CHROME_RUNTIME_DIR` or the platform default).
#[derive(Clone, Debug)]
pub struct RuntimeLocation {
    pub path: PathBuf,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub home: PathBuf,
    /// The current user's home folder from the user database: `HOME` is
    /// the caller's to set, so what guards the user's own files (file
    /// rules, the registry another session is looked for in) looks here too.
    pub account_home: PathBuf,
    /// The current user's name from the user database (not from `$USER`).
    pub user: String,
    pub runtime: RuntimeLocation,
    /// The one Playwright session we own (`MY_CHROME_SESSION`, default `mychrome`).
    pub session: String,
    /// An explicit trusted node (`MY_CHROME_NODE`); otherwise fixed locations are searched.
    pub node: Option<PathBuf>,
    /// The browser named for this call (`MY_CHROME_BROWSER`); else the one
    /// `setup --browser` recorded, else the one installed (`browser::resolve`).
    pub browser: Option<Browser>,
    /// The browser's executable, the escape hatch (`MY_CHROME_CHROME`).
    pub chrome: Option<PathBuf>,
    /// Its user data directory, where its process singleton lives
    /// (`MY_CHROME_USER_DATA_DIR`; default: the chosen browser's own).
    pub chrome_user_data: Option<PathBuf>,
    /// Where browsers keep their user data directories:
    /// `$XDG_CONFIG_HOME` or `~/.config` on Linux, `~/Library/Application
    /// Support` on macOS.
    pub user_data_base: PathBuf,
    pub keychain_service: String,
    pub keychain_account: String,
    /// Bound on `setup`'s `npm ci` ([`SETUP_TIMEOUT`]).
    pub setup_timeout: Duration,
    /// Bound on `connect`'s attach ([`ATTACH_TIMEOUT`]).
    pub attach_timeout: Duration,
    /// How long a request waits for the user's answer on the consent page
    /// ([`CONSENT_WAIT`]): shorter only.
    pub consent_wait: Duration,
    /// The caller's own bound on one forwarded browser command
    /// ([`COMMAND_TIMEOUT`]): it only shortens the
    /// user's (`settings::Settings::command_bound_for`); unset, the
    /// longest, which shortens nothing.
    pub command_timeout: Duration,
    /// Bound on waiting for another my-chrome command's lock
    /// ([`LOCK_WAIT`]).
    pub lock_wait: Duration,
    /// Who is asking: the agent whose tabs a command may use, and its key
    /// once it has one (`MY_CHROME_AGENT=NAME[:KEY]`, or `--agent
    /// NAME[:KEY]` through [`Config::with_agent_flag`]); `None` means one is
    /// derived from the caller's process ancestry (`identity`).
    pub agent: Option<Claim>,
    /// How long a command waits for the browser command in flight
    /// ([`LEASE_WAIT`]; 0 fails at once).
    pub lease_wait: Duration,
    /// What children may see of the caller: `HOME`, `LANG`, `LC_*`, and
    /// `USER`/`LOGNAME` set to [`Config::user`] (the CLI derives its socket
    /// directory from `USER`, so it must name the user we check against).
    pub child_vars: Vec<(OsString, OsString)>,
    /// What configured this call that a process of my-chrome's it starts
    /// to outlive it (the session's watcher) needs to be configured alike:
    /// the runtime, session, node and browser variables, as given.
    pub my_chrome_vars: Vec<(OsString, OsString)>,
    /// The desktop session, for the clipboard tools only.
    pub display: DisplayVars,
    /// The D-Bus session bus (Linux Secret Service): `DBUS_SESSION_BUS_ADDRESS`,
    /// else `unix:path=$XDG_RUNTIME_DIR/bus` when that socket exists.
    pub dbus_session: Option<String>,
    /// The one-shot hand-off socket of a running `connect`
    /// (`MY_CHROME_HANDOFF`): set only in the environment `connect` gives the
    /// CLI, so that the relay's "browser" — this binary — can hand it the
    /// connect URL.
    pub handoff: Option<PathBuf>,
    /// Proxy settings, passed to `npm ci` only: the lock's integrity hashes,
    /// not the network path, decide what gets installed.
    pub proxy_vars: Vec<(OsString, OsString)>,
    /// The largest reply of one browser command that is printed
    /// ([`REPLY_LIMIT`]), in bytes.
    pub reply_limit: usize,
    /// The agent host whose sandbox the command may run in, from the
    /// variables each sets for its commands: Codex (`CODEX_SANDBOX`,
    /// `CODEX_SANDBOX_NETWORK_DISABLED`, `CODEX_MANAGED_BY_NPM`; its folder
    /// `CODEX_HOME`) or Claude
    /// Code (`CLAUDECODE`, its sandbox runtime's `SANDBOX_RUNTIME`; its
    /// folder `CLAUDE_CONFIG_DIR`). Only the advice of a sandbox's refusal
    /// reads it.
    pub host: Option<Host>,
}

/// Variables a clipboard tool needs to find the user's display.
#[derive(Clone, Debug, Default)]
pub struct DisplayVars {
    /// `WAYLAND_DISPLAY` and `XDG_RUNTIME_DIR` (Wayland).
    pub wayland: Option<(OsString, OsString)>,
    /// `DISPLAY` and, when set, `XAUTHORITY` (X11).
    pub x11: Option<(OsString, Option<OsString>)>,
}

impl DisplayVars {
    /// The variables to hand to a clipboard tool.
    pub fn vars(&self) -> Vec<(&'static str, OsString)> {
        let mut out = Vec::new();
        if let Some((display, runtime_dir)) = &self.wayland {
            out.push(("WAYLAND_DISPLAY", display.clone()));
            out.push(("XDG_RUNTIME_DIR", runtime_dir.clone()));
        }
        if let Some((display, xauthority)) = &self.x11 {
            out.push(("DISPLAY", display.clone()));
            if let Some(x) = xauthority {
                out.push(("XAUTHORITY", x.clone()));
            }
        }
        out
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{var}: {problem}")]
pub struct ConfigError {
    pub var: String,
    pub problem: String,
}

impl ConfigError {
    /// A setting that cannot be used is a usage error, wherever it is met.
    pub fn exit(&self) -> Exit {
        Exit::Usage
    }
}

fn invalid(var: &str, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        var: var.to_string(),
        problem: problem.into(),
    }
}

pub const DEFAULT_SESSION: &str = "mychrome";
pub const DEFAULT_KEYCHAIN_SERVICE: &str = "my-chrome.extension-token";
/// Variables of earlier releases that are the user's settings now, and
/// the `setup` option that sets each.
const USER_SETTINGS: [(&str, &str); 2] = [
    ("MY_CHROME_AGENT_GONE_SECS", "--agent-gone DURATION"),
    ("MY_CHROME_FILE_ROOTS", "--file-root PATH"),
];
/// A variable of whole numbers: its name, the range the code accepts and
/// its value when unset, read with exactly these (`Vars::seconds`,
/// `mebibytes`) and shown with them in [`VARIABLES`].
#[derive(Clone, Copy, Debug)]
pub struct Bounded {
    pub name: &'static str,
    pub min: u64,
    pub max: u64,
    pub default: u64,
    /// `s` or `MiB`.
    pub unit: &'static str,
    /// What unset means, when that is not `default` itself to the user.
    pub unset: Option<&'static str>,
}

/// Whole seconds from `min` to `max`, `default` when unset.
const fn seconds(name: &'static str, min: u64, max: u64, default: u64) -> Bounded {
    Bounded {
        name,
        min,
        max,
        default,
        unit: "s",
        unset: None,
    }
}

pub const SETUP_TIMEOUT: Bounded = seconds("MY_CHROME_SETUP_TIMEOUT_SECS", 1, 3600, 600);
pub const ATTACH_TIMEOUT: Bounded = seconds("MY_CHROME_ATTACH_TIMEOUT_SECS", 1, 600, 60);
/// Shorter only: the default is the longest.
pub const CONSENT_WAIT: Bounded = seconds("MY_CHROME_CONSENT_WAIT_SECS", 5, 120, 120);
/// Unset, the longest, which shortens nothing of the user's bound.
pub const COMMAND_TIMEOUT: Bounded = Bounded {
    unset: Some("your `--command-bound`"),
    ..seconds("MY_CHROME_COMMAND_TIMEOUT_SECS", 1, 3600, 3600)
};
/// Longer than a whole setup.
pub const LOCK_WAIT: Bounded = seconds("MY_CHROME_LOCK_WAIT_SECS", 1, 3600, 900);
pub const LEASE_WAIT: Bounded = seconds("MY_CHROME_LEASE_WAIT_SECS", 0, 3600, 120);
/// In MiB.
pub const REPLY_LIMIT: Bounded = Bounded {
    unit: "MiB",
    ..seconds("MY_CHROME_REPLY_LIMIT_MIB", 1, 1024, 16)
};
/// `MY_CHROME_SESSION`'s longest name.
const MAX_SESSION_LEN: usize = 64;
/// The longest keyring service or account name.
const MAX_KEYCHAIN_FIELD_LEN: usize = 255;

/// What a variable may be and what it is when unset.
#[derive(Clone, Copy, Debug)]
pub enum Values {
    /// A whole number, read with these very bounds.
    Number(Bounded),
    /// Anything else: said in words (the checks are the code's below).
    Said {
        range: &'static str,
        default: &'static str,
    },
    /// Said in words made with the code's own bounds.
    Counted {
        range: fn() -> String,
        default: fn() -> String,
    },
}

/// One variable of [`VARIABLES`]: its names (a row may gather several
/// read alike), what it may be, its default and what it does.
#[derive(Clone, Copy, Debug)]
pub struct Variable {
    pub names: &'static [&'static str],
    pub values: Values,
    pub what: &'static str,
}

impl Variable {
    /// The range as README shows it: `1–3600 s`, or the words.
    pub fn range(&self) -> String {
        match self.values {
            Values::Number(b) => format!("{}–{} {}", b.min, b.max, b.unit),
            Values::Said { range, .. } => range.to_string(),
            Values::Counted { range, .. } => range(),
        }
    }

    /// The default as README shows it: `` `600` ``, or the words.
    pub fn default(&self) -> String {
        match self.values {
            Values::Number(Bounded {
                unset: Some(words), ..
            }) => words.to_string(),
            Values::Number(b) => format!("`{}`", b.default),
            Values::Said { default, .. } => default.to_string(),
            Values::Counted { default, .. } => default(),
        }
    }
}

/// The row of a [`Bounded`] variable: its name, its bounds, what it does.
macro_rules! number {
    ($bounded:expr, $what:expr $(,)?) => {
        Variable {
            names: &[$bounded.name],
            values: Values::Number($bounded),
            what: $what,
        }
    };
}

/// Every variable my-chrome reads (besides `HOME`, `XDG_*`, `LANG`,
/// `LC_*`, the proxy variables and `XAUTHORITY`, which only pass on):
/// README's "Configuration" table is this, row for row (`tests/docs.rs`).
pub const VARIABLES: &[Variable] = &[
    Variable {
        names: &["MY_CHROME_RUNTIME_DIR"],
        values: Values::Said {
            range: "absolute path; not `/`, not `$HOME`",
            default: "see Platforms",
        },
        what: "private runtime",
    },
    Variable {
        names: &["MY_CHROME_NODE"],
        values: Values::Said {
            range: "absolute path",
            default: "fixed locations",
        },
        what: "the Node.js to use (no fallback if it is unusable)",
    },
    Variable {
        names: &["MY_CHROME_BROWSER"],
        values: Values::Said {
            range: "a browser's name",
            default: "the choice `setup --browser` recorded, else the one installed",
        },
        what: "the browser, by name (see \"Your browser\"); not together with `MY_CHROME_CHROME`",
    },
    Variable {
        names: &["MY_CHROME_CHROME"],
        values: Values::Said {
            range: "absolute path",
            default: "the chosen browser's",
        },
        what: "the browser's executable, for a browser at no place of the table; a known one \
               brings its own user data directory, any other needs `MY_CHROME_USER_DATA_DIR`",
    },
    Variable {
        names: &["MY_CHROME_SESSION"],
        values: Values::Counted {
            range: || format!("1–{MAX_SESSION_LEN} letters, digits, `-`, `_`; not `-` first"),
            default: || format!("`{DEFAULT_SESSION}`"),
        },
        what: "the shared Playwright session name",
    },
    Variable {
        names: &["MY_CHROME_KEYCHAIN_SERVICE"],
        values: Values::Counted {
            range: || format!("at most {MAX_KEYCHAIN_FIELD_LEN} characters"),
            default: || format!("`{DEFAULT_KEYCHAIN_SERVICE}`"),
        },
        what: "token item's service",
    },
    Variable {
        names: &["MY_CHROME_KEYCHAIN_ACCOUNT"],
        values: Values::Counted {
            range: || {
                format!(
                    "at most {MAX_KEYCHAIN_FIELD_LEN} characters, not ending in `{PREVIOUS_SUFFIX}`"
                )
            },
            default: || "your user name".into(),
        },
        what: "token item's account (` (previous)` names the item a replaced token is kept in)",
    },
    number!(SETUP_TIMEOUT, "bound on `setup`'s `npm ci`"),
    number!(ATTACH_TIMEOUT, "bound on `connect`'s attach"),
    number!(
        COMMAND_TIMEOUT,
        "a shorter bound on this call's browser command (never longer than yours), then exit \
         124 (the daemon runs it on; this agent's next command waits for its end, at most 10 \
         min more)",
    ),
    number!(
        LOCK_WAIT,
        "how long to wait for another my-chrome command's lock, then exit 124",
    ),
    Variable {
        names: &["MY_CHROME_AGENT"],
        values: Values::Counted {
            range: || {
                format!(
                    "`NAME` or `NAME:KEY` (1–{MAX_AGENT_LEN} letters, digits, `.`, `_`, `-`; the \
                     key is the {} hex digits the name's first command printed)",
                    crate::agent_key::HEX_LEN
                )
            },
            default: || "derived (see \"Several agents\")".into(),
        },
        what: "this agent's name, and once registered its key; `--agent NAME[:KEY]` before the \
               command wins over it",
    },
    number!(
        LEASE_WAIT,
        "how long a command waits for the browser command in flight (0 fails at once), then \
         exit 7",
    ),
    number!(
        CONSENT_WAIT,
        "how long a step waits for your answer in the browser (shorter only), then exit 7",
    ),
    Variable {
        names: &["MY_CHROME_USER_DATA_DIR"],
        values: Values::Said {
            range: "absolute path",
            default: "the chosen browser's (see \"Your browser\")",
        },
        what: "the browser's user data directory, where its process singleton lives; `connect` \
               refuses one whose singleton is not the running browser's (exit 5), before the \
               token is read",
    },
    number!(
        REPLY_LIMIT,
        "the largest reply of one browser command my-chrome reads and prints; past it, exit 1 \
         and nothing of it printed",
    ),
    Variable {
        names: &["MY_CHROME_HANDOFF"],
        values: Values::Said {
            range: "absolute path",
            default: "—",
        },
        what: "set by my-chrome itself for the CLI it runs during `connect`; never set it \
               yourself (a connect URL without it is refused)",
    },
    Variable {
        names: &["DBUS_SESSION_BUS_ADDRESS"],
        values: Values::Said {
            range: "a D-Bus address",
            default: "`unix:path=$XDG_RUNTIME_DIR/bus`",
        },
        what: "Linux: the session bus where the Secret Service is",
    },
    Variable {
        names: &["DISPLAY", "WAYLAND_DISPLAY"],
        values: Values::Said {
            range: "—",
            default: "—",
        },
        what: "Linux: where `token store` finds the clipboard",
    },
    Variable {
        names: &[
            "CODEX_SANDBOX",
            "CODEX_SANDBOX_NETWORK_DISABLED",
            "CODEX_MANAGED_BY_NPM",
            "CODEX_HOME",
            "CLAUDECODE",
            "SANDBOX_RUNTIME",
            "CLAUDE_CONFIG_DIR",
        ],
        values: Values::Said {
            range: "—",
            default: "—",
        },
        what: "set by Codex and Claude Code for the commands they run: which host's setting a \
               sandbox's refusal (exit 9) names, and where; nothing else",
    },
];
/// Agent names stay shorter than any token, so a token pasted as a name is
/// refused rather than written to the lease log.
const MAX_AGENT_LEN: usize = 24;
const _: () = assert!(MAX_AGENT_LEN < crate::token_shape::MIN_LEN);

const CHILD_VARS: &[&str] = &["LANG"];
const PROXY_VARS: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// The variables [`Config::my_chrome_vars`] keeps.
const MY_CHROME_CHILD_VARS: &[&str] = &[
    "MY_CHROME_RUNTIME_DIR",
    "MY_CHROME_SESSION",
    "MY_CHROME_NODE",
    "MY_CHROME_BROWSER",
    "MY_CHROME_CHROME",
    "MY_CHROME_USER_DATA_DIR",
    "MY_CHROME_COMMAND_TIMEOUT_SECS",
    "MY_CHROME_LOCK_WAIT_SECS",
    "XDG_CONFIG_HOME",
];

impl Config {
    /// Reads the process environment. The only call site is `main`.
    pub fn from_env() -> Result<Config, ConfigError> {
        Config::from_vars(std::env::vars_os())
    }

    /// Builds a configuration from explicit variables (what `from_env` does
    /// with the real environment; tests call it with their own).
    pub fn from_vars(
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Result<Config, ConfigError> {
        let vars = Vars(vars.into_iter().collect());
        let home = absolute_path(
            "HOME",
            &vars
                .get("HOME")?
                .ok_or_else(|| invalid("HOME", "is not set"))?,
        )?;
        let (user, account_home) = current_user()?;
        vars.refuse_user_settings()?;
        let runtime = vars.runtime(&home)?;
        let session = match vars.get("MY_CHROME_SESSION")? {
            Some(name) => session_name(&name)?,
            None => DEFAULT_SESSION.to_string(),
        };
        let node = vars.path("MY_CHROME_NODE")?;
        let (browser, chrome) = vars.browser()?;
        let chrome_user_data = vars.path("MY_CHROME_USER_DATA_DIR")?;
        // Checked here (config reads every variable); the platform says
        // whether it counts.
        let user_data_base = platform::user_data_base(
            &home,
            vars.get("XDG_CONFIG_HOME")?
                .map(|raw| absolute_path("XDG_CONFIG_HOME", &raw)),
        )?;
        let keychain_service = match vars.get("MY_CHROME_KEYCHAIN_SERVICE")? {
            Some(s) => keychain_field("MY_CHROME_KEYCHAIN_SERVICE", &s)?,
            None => DEFAULT_KEYCHAIN_SERVICE.to_string(),
        };
        let keychain_account = match vars.get("MY_CHROME_KEYCHAIN_ACCOUNT")? {
            // Not the item a replaced token is kept in: a token stored
            // there unasked would be the one `token restore` puts back.
            Some(s) if s.ends_with(PREVIOUS_SUFFIX) => {
                return Err(invalid(
                    "MY_CHROME_KEYCHAIN_ACCOUNT",
                    "must not end with \" (previous)\": that names the item my-chrome keeps a \
                     replaced token in",
                ));
            }
            Some(s) => keychain_field("MY_CHROME_KEYCHAIN_ACCOUNT", &s)?,
            None => user.clone(),
        };
        let agent = vars
            .get("MY_CHROME_AGENT")?
            .map(|raw| agent_claim("MY_CHROME_AGENT", &raw))
            .transpose()?;
        let reply_limit = match vars.get(REPLY_LIMIT.name)? {
            Some(raw) => mebibytes(REPLY_LIMIT, &raw)?,
            None => REPLY_LIMIT.default as usize * MIB,
        };
        let (display, dbus_session) = vars.desktop()?;
        let host = vars.host(&home);
        Ok(Config {
            child_vars: vars.for_children(&home, &user),
            proxy_vars: vars.passed(PROXY_VARS),
            my_chrome_vars: vars.passed(MY_CHROME_CHILD_VARS),
            home,
            account_home,
            user,
            runtime,
            session,
            node,
            browser,
            chrome,
            chrome_user_data,
            user_data_base,
            keychain_service,
            keychain_account,
            setup_timeout: vars.seconds(SETUP_TIMEOUT)?,
            attach_timeout: vars.seconds(ATTACH_TIMEOUT)?,
            consent_wait: vars.seconds(CONSENT_WAIT)?,
            command_timeout: vars.seconds(COMMAND_TIMEOUT)?,
            lock_wait: vars.seconds(LOCK_WAIT)?,
            agent,
            lease_wait: vars.seconds(LEASE_WAIT)?,
            display,
            dbus_session,
            handoff: vars.path("MY_CHROME_HANDOFF")?,
            // Not a variable, but the caller's too: read here with the rest.
            // A directory removed under the caller has no path (no root then).
            reply_limit,
            host,
        })
    }
}

/// The variables given, read one by one; the last of a name wins, and an
/// empty one is unset.
struct Vars(Vec<(OsString, OsString)>);

impl Vars {
    fn get(&self, name: &str) -> Result<Option<String>, ConfigError> {
        match self.0.iter().rev().find(|(k, _)| k == name) {
            None => Ok(None),
            Some((_, v)) if v.is_empty() => Ok(None),
            Some((_, v)) => v
                .to_str()
                .map(|s| Some(s.to_string()))
                .ok_or_else(|| invalid(name, "is not valid UTF-8")),
        }
    }

    /// An absolute path, when set.
    fn path(&self, name: &str) -> Result<Option<PathBuf>, ConfigError> {
        self.get(name)?
            .map(|raw| absolute_path(name, &raw))
            .transpose()
    }

    /// Whole seconds in `bounded`'s range, or its default when unset.
    fn seconds(&self, bounded: Bounded) -> Result<Duration, ConfigError> {
        let Bounded {
            name,
            min,
            max,
            default,
            ..
        } = bounded;
        match self.get(name)? {
            Some(raw) => seconds_from(name, &raw, min, max),
            None => Ok(Duration::from_secs(default)),
        }
    }

    /// What decides for every agent is the user's setting, never a call's
    /// (src/settings.rs): a call that sets it is told so.
    fn refuse_user_settings(&self) -> Result<(), ConfigError> {
        for (var, how) in USER_SETTINGS {
            if self.get(var)?.is_some() {
                return Err(invalid(
                    var,
                    format!(
                        "is no longer read: it decides for every agent, so it is the user's \
                         setting, made with `my-chrome setup {how}` (docs: README, \
                         Configuration)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `MY_CHROME_RUNTIME_DIR` (never `/` nor `$HOME` itself), or the
    /// platform's place under `home`.
    fn runtime(&self, home: &Path) -> Result<RuntimeLocation, ConfigError> {
        let Some(path) = self.path("MY_CHROME_RUNTIME_DIR")? else {
            return Ok(RuntimeLocation {
                path: home.join(platform::DEFAULT_RUNTIME_UNDER_HOME),
            });
        };
        for (not, name) in [(Path::new("/"), "/"), (home, "$HOME itself")] {
            if path == not {
                return Err(invalid(
                    "MY_CHROME_RUNTIME_DIR",
                    format!("must not be {name} (use a private directory of its own)"),
                ));
            }
        }
        Ok(RuntimeLocation { path })
    }

    /// The agent host that runs this command, as its variables say. They
    /// are the host's, not ours: one that is no text or no absolute path
    /// counts as unset rather than failing the command.
    fn host(&self, home: &Path) -> Option<Host> {
        let set = |var: &str| self.get(var).ok().flatten().is_some();
        let folder = |var: &str, default: &str| {
            self.path(var)
                .ok()
                .flatten()
                .unwrap_or_else(|| home.join(default))
        };
        if [
            "CODEX_SANDBOX",
            "CODEX_SANDBOX_NETWORK_DISABLED",
            "CODEX_MANAGED_BY_NPM",
        ]
        .iter()
        .any(|v| set(v))
        {
            Some(Host::Codex {
                rules: folder("CODEX_HOME", ".codex").join("rules"),
            })
        } else if set("CLAUDECODE") || set("SANDBOX_RUNTIME") {
            Some(Host::ClaudeCode {
                settings: folder("CLAUDE_CONFIG_DIR", ".claude").join("settings.json"),
            })
        } else {
            None
        }
    }

    /// The browser named, or its executable: one or the other.
    fn browser(&self) -> Result<(Option<Browser>, Option<PathBuf>), ConfigError> {
        let browser = self
            .get("MY_CHROME_BROWSER")?
            .map(|raw| {
                Browser::parse(&raw).map_err(|e| invalid("MY_CHROME_BROWSER", e.to_string()))
            })
            .transpose()?;
        let chrome = self.path("MY_CHROME_CHROME")?;
        if browser.is_some() && chrome.is_some() {
            return Err(invalid(
                "MY_CHROME_BROWSER",
                "is set together with MY_CHROME_CHROME: name the browser, or its executable, not \
                 both",
            ));
        }
        Ok((browser, chrome))
    }

    /// The desktop session: the displays (for the clipboard), and the
    /// D-Bus session (the Secret Service), from `XDG_RUNTIME_DIR`'s bus when
    /// no address is given.
    fn desktop(&self) -> Result<(DisplayVars, Option<String>), ConfigError> {
        let xdg_runtime_dir = self.path("XDG_RUNTIME_DIR")?;
        let display = DisplayVars {
            wayland: match (self.get("WAYLAND_DISPLAY")?, &xdg_runtime_dir) {
                (Some(w), Some(dir)) => Some((w.into(), dir.clone().into_os_string())),
                _ => None,
            },
            x11: self
                .get("DISPLAY")?
                .map(|d| {
                    Ok::<_, ConfigError>((d.into(), self.get("XAUTHORITY")?.map(OsString::from)))
                })
                .transpose()?,
        };
        let dbus_session = match self.get("DBUS_SESSION_BUS_ADDRESS")? {
            Some(address) => Some(address),
            None => xdg_runtime_dir
                .map(|dir| dir.join("bus"))
                .filter(|bus| bus.exists())
                .map(|bus| format!("unix:path={}", bus.display())),
        };
        Ok((display, dbus_session))
    }

    /// What children may see of the caller: the allowlisted variables
    /// (`LC_*` too), and `HOME`, `USER`, `LOGNAME` as configured.
    fn for_children(&self, home: &Path, user: &str) -> Vec<(OsString, OsString)> {
        self.0
            .iter()
            .filter(|(k, _)| {
                passes(CHILD_VARS, k) || k.to_str().is_some_and(|k| k.starts_with("LC_"))
            })
            .cloned()
            .chain([
                ("HOME".into(), home.as_os_str().to_os_string()),
                ("USER".into(), user.into()),
                ("LOGNAME".into(), user.into()),
            ])
            .collect()
    }

    /// The variables of `names` that are set (not empty), as given.
    fn passed(&self, names: &[&str]) -> Vec<(OsString, OsString)> {
        self.0
            .iter()
            .filter(|(k, v)| passes(names, k) && !v.is_empty())
            .cloned()
            .collect()
    }
}

fn passes(names: &[&str], k: &OsStr) -> bool {
    names.iter().any(|n| k == *n)
}

impl Config {
    /// `HOME` as given, and the account's own home when it is another:
    /// what guards the user's files looks under both.
    pub fn homes(&self) -> Vec<&Path> {
        let mut homes = vec![self.home.as_path()];
        if self.account_home != self.home {
            homes.push(&self.account_home);
        }
        homes
    }

    /// `--agent NAME[:KEY]` before the command: checked like
    /// `MY_CHROME_AGENT`, and it wins over it.
    pub fn with_agent_flag(mut self, flag: Option<&str>) -> Result<Config, ConfigError> {
        if let Some(raw) = flag {
            self.agent = Some(agent_claim("--agent", raw)?);
        }
        Ok(self)
    }
}

/// An absolute path without `.` or `..` components or control characters, so
/// that what we check is what we later use.
fn absolute_path(var: &str, raw: &str) -> Result<PathBuf, ConfigError> {
    let path = Path::new(raw);
    if !path.is_absolute() {
        return Err(invalid(
            var,
            format!("must be an absolute path, got {raw:?}"),
        ));
    }
    if path
        .components()
        .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return Err(invalid(
            var,
            format!("must not contain '.' or '..' components, got {raw:?}"),
        ));
    }
    if raw.chars().any(char::is_control) {
        return Err(invalid(var, "must not contain control characters"));
    }
    // Normalise trailing slashes and repeated separators.
    Ok(path.components().collect())
}

const MIB: usize = 1 << 20;

fn mebibytes(bounded: Bounded, raw: &str) -> Result<usize, ConfigError> {
    let Bounded { name, min, max, .. } = bounded;
    match raw.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n as usize * MIB),
        _ => Err(invalid(
            name,
            format!("must be a whole number of MiB from {min} to {max}, got {raw:?}"),
        )),
    }
}

/// The name goes to the daemon as its first argument, where its own
/// option parser would read one that begins with `-` as an option
/// (`--headed`) and serve another session: it begins with a letter or a
/// digit (found by an attack).
fn session_name(raw: &str) -> Result<String, ConfigError> {
    let ok = (1..=MAX_SESSION_LEN).contains(&raw.len())
        && raw.starts_with(|c: char| c.is_ascii_alphanumeric())
        && raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(raw.to_string())
    } else {
        Err(invalid(
            "MY_CHROME_SESSION",
            format!(
                "must be 1-{MAX_SESSION_LEN} letters, digits, '-' or '_', beginning with a \
                 letter or a digit, got {raw:?}"
            ),
        ))
    }
}

/// A keyring service or account name (also used for `token migrate`'s arguments).
pub fn keychain_field(var: &str, raw: &str) -> Result<String, ConfigError> {
    if raw.len() > MAX_KEYCHAIN_FIELD_LEN || raw.chars().any(char::is_control) {
        return Err(invalid(
            var,
            format!(
                "must be at most {MAX_KEYCHAIN_FIELD_LEN} characters without control characters"
            ),
        ));
    }
    Ok(raw.to_string())
}

/// What the account of the keyring item that keeps a replaced token adds
/// to the configured one (`token::keyring::previous`).
pub const PREVIOUS_SUFFIX: &str = " (previous)";

/// The agent a command says it runs as: a chosen name and, after its
/// first command, its key (`identity` decides whether it holds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub name: String,
    pub key: Option<AgentKey>,
}

/// `NAME` or `NAME:KEY`: an agent's name, and the key its registration
/// printed. A key that does not read is refused without being shown.
pub fn agent_claim(var: &str, raw: &str) -> Result<Claim, ConfigError> {
    let (name, key) = match raw.split_once(':') {
        Some((name, key)) => (name, Some(key)),
        None => (raw, None),
    };
    let name = agent_name(var, name)?;
    let key = key
        .map(|key| {
            AgentKey::parse(key).ok_or_else(|| {
                invalid(
                    var,
                    format!(
                        "what follows {name}: is not an agent key (the {} hex digits printed \
                         when {name} was registered); it is not shown here",
                        crate::agent_key::HEX_LEN
                    ),
                )
            })
        })
        .transpose()?;
    Ok(Claim { name, key })
}

/// An agent's name: 1-24 letters, digits, '.', '_' or '-', starting with a
/// letter or digit. ('@' is kept for the names the lease derives itself.)
pub fn agent_name(var: &str, raw: &str) -> Result<String, ConfigError> {
    let ok = (1..=MAX_AGENT_LEN).contains(&raw.len())
        && raw.starts_with(|c: char| c.is_ascii_alphanumeric())
        && raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        return Ok(raw.to_string());
    }
    // Never echo a long value: it may be a token pasted in the wrong place.
    let shown = if raw.len() > MAX_AGENT_LEN {
        format!("a value of {} characters", raw.len())
    } else {
        format!("{raw:?}")
    };
    Err(invalid(
        var,
        format!(
            "must be a short name (1-{MAX_AGENT_LEN} letters, digits, '.', '_' or '-', starting \
             with a letter or digit), got {shown}"
        ),
    ))
}

fn seconds_from(var: &str, raw: &str, min: u64, max: u64) -> Result<Duration, ConfigError> {
    match raw.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(Duration::from_secs(n)),
        _ => Err(invalid(
            var,
            format!("must be a whole number of seconds from {min} to {max}, got {raw:?}"),
        )),
    }
}

fn current_user() -> Result<(String, PathBuf), ConfigError> {
    let uid = nix::unistd::getuid();
    match nix::unistd::User::from_uid(uid) {
        Ok(Some(user)) => Ok((user.name, user.dir)),
        _ => Err(invalid(
            "user",
            format!("uid {uid} has no entry in the user database"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::from_vars(
            pairs
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        )
    }

    #[test]
    fn defaults_follow_home() {
        let c = config(&[("HOME", "/home/u")]).unwrap();
        assert_eq!(
            c.runtime.path,
            Path::new("/home/u").join(platform::DEFAULT_RUNTIME_UNDER_HOME)
        );
        assert_eq!(c.session, "mychrome");
        assert_eq!(
            (
                c.browser,
                c.chrome.as_deref(),
                c.chrome_user_data.as_deref()
            ),
            (None, None, None)
        );
        assert_eq!(
            c.user_data_base,
            platform::user_data_base::<ConfigError>(Path::new("/home/u"), None).unwrap()
        );
        assert_eq!(c.keychain_service, DEFAULT_KEYCHAIN_SERVICE);
        assert_eq!(c.setup_timeout, Duration::from_secs(600));
        assert!(c.node.is_none());
        assert_eq!(c.agent, None);
        assert_eq!(c.lease_wait, Duration::from_secs(120));
        assert_eq!(c.reply_limit, 16 << 20);
    }

    #[test]
    fn the_reply_limit_is_checked_and_the_users_settings_are_no_call_s() {
        let c = config(&[("HOME", "/home/u"), ("MY_CHROME_REPLY_LIMIT_MIB", "2")]).unwrap();
        assert_eq!(c.reply_limit, 2 << 20);
        for (var, bad) in [
            ("MY_CHROME_REPLY_LIMIT_MIB", "0"),
            ("MY_CHROME_REPLY_LIMIT_MIB", "1025"),
            ("MY_CHROME_REPLY_LIMIT_MIB", "1.5"),
        ] {
            let err = config(&[("HOME", "/home/u"), (var, bad)]).unwrap_err();
            assert_eq!(err.var, var, "{bad}");
        }
        // An agent that sets one of the user's settings for its call is
        // refused, with where the setting is made.
        for (var, value, how) in [
            ("MY_CHROME_AGENT_GONE_SECS", "60", "--agent-gone"),
            ("MY_CHROME_FILE_ROOTS", "/home/u", "--file-root"),
        ] {
            let err = config(&[("HOME", "/home/u"), (var, value)]).unwrap_err();
            assert_eq!(err.var, var);
            assert!(
                err.to_string().contains(&format!("`my-chrome setup {how}")),
                "{err}"
            );
        }
    }

    #[test]
    fn agent_names_come_from_the_variable_or_the_flag() {
        let name = |c: &Config| c.agent.as_ref().map(|claim| claim.name.clone());
        let c = config(&[("HOME", "/home/u"), ("MY_CHROME_AGENT", "fix-login.2")]).unwrap();
        assert_eq!(name(&c).as_deref(), Some("fix-login.2"));
        assert_eq!(c.agent.as_ref().unwrap().key, None);
        let c = c.with_agent_flag(Some("reviewer")).unwrap();
        assert_eq!(name(&c).as_deref(), Some("reviewer"), "the flag wins");
        let err = c.with_agent_flag(Some("bad name")).unwrap_err();
        assert_eq!(err.var, "--agent");
        // A long value is never echoed: it may be the token.
        let long = "A".repeat(40);
        let err = agent_name("MY_CHROME_AGENT", &long).unwrap_err();
        assert!(!err.to_string().contains(&long), "{err}");
        // NAME:KEY, from either; a key that does not read is never shown.
        let key = AgentKey::generate().unwrap();
        let written = format!("reviewer:{}", key.reveal());
        let c = config(&[("HOME", "/home/u"), ("MY_CHROME_AGENT", &written)]).unwrap();
        assert_eq!(c.agent.as_ref().unwrap().key.as_ref(), Some(&key));
        let flagged = c.with_agent_flag(Some(&written)).unwrap();
        assert_eq!(name(&flagged).as_deref(), Some("reviewer"));
        for bad in [
            "reviewer:",
            "reviewer:0123",
            "reviewer:secret-looking-value",
            ":abc",
        ] {
            let err = agent_claim("--agent", bad).unwrap_err();
            let after = bad.split_once(':').unwrap().1;
            assert!(
                after.is_empty() || !err.to_string().contains(after),
                "{err}"
            );
        }
        let waits = config(&[("HOME", "/home/u"), ("MY_CHROME_LEASE_WAIT_SECS", "0")]).unwrap();
        assert_eq!(waits.lease_wait, Duration::ZERO, "0 means fail at once");
    }

    #[test]
    fn runtime_dir_must_be_absolute_and_not_root_or_home() {
        for (value, needle) in [
            ("relative/dir", "absolute"),
            ("/", "must not be /"),
            ("/home/u", "$HOME"),
            ("/home/u/", "$HOME"),
            ("/tmp/../etc", "'..'"),
        ] {
            let err = config(&[("HOME", "/home/u"), ("MY_CHROME_RUNTIME_DIR", value)]).unwrap_err();
            assert_eq!(err.var, "MY_CHROME_RUNTIME_DIR");
            assert!(err.to_string().contains(needle), "{value}: {err}");
        }
        let ok = config(&[("HOME", "/home/u"), ("MY_CHROME_RUNTIME_DIR", "/srv/rt//")]).unwrap();
        assert_eq!(ok.runtime.path, Path::new("/srv/rt"));
    }

    #[test]
    fn each_bad_value_names_its_variable() {
        for (var, value) in [
            ("MY_CHROME_NODE", "node"),
            ("MY_CHROME_CHROME", "chrome"),
            ("MY_CHROME_SESSION", "my session"),
            ("MY_CHROME_SESSION", "a/b"),
            ("MY_CHROME_SESSION", "--headed"),
            ("MY_CHROME_SESSION", "-s"),
            ("MY_CHROME_SESSION", "_x"),
            ("MY_CHROME_KEYCHAIN_SERVICE", "a\nb"),
            ("MY_CHROME_KEYCHAIN_ACCOUNT", "me (previous)"),
            ("MY_CHROME_SETUP_TIMEOUT_SECS", "0"),
            ("MY_CHROME_SETUP_TIMEOUT_SECS", "-5"),
            ("MY_CHROME_SETUP_TIMEOUT_SECS", "99999"),
            ("MY_CHROME_LOCK_WAIT_SECS", "0"),
            ("MY_CHROME_ATTACH_TIMEOUT_SECS", "601"),
            ("MY_CHROME_COMMAND_TIMEOUT_SECS", "0"),
            ("MY_CHROME_COMMAND_TIMEOUT_SECS", "3601"),
            ("MY_CHROME_AGENT", "two words"),
            ("MY_CHROME_AGENT", "-leading-dash"),
            ("MY_CHROME_AGENT", "a/b"),
            ("MY_CHROME_AGENT", "x@1"),
            ("MY_CHROME_AGENT", "a-name-longer-than-24-chars"),
            ("MY_CHROME_LEASE_WAIT_SECS", "-1"),
            ("MY_CHROME_LEASE_WAIT_SECS", "3601"),
            ("MY_CHROME_LEASE_WAIT_SECS", "1e9"),
            ("MY_CHROME_USER_DATA_DIR", "Default"),
            ("MY_CHROME_BROWSER", "firefox"),
            ("MY_CHROME_BROWSER", "Chrome"),
            ("HOME", "home"),
        ] {
            let mut pairs = vec![("HOME", "/home/u")];
            pairs.push((var, value));
            let err = config(&pairs).unwrap_err();
            assert_eq!(err.var, var, "{var}={value:?}: {err}");
        }
    }

    #[test]
    fn a_browser_is_named_or_its_executable_not_both() {
        let c = config(&[("HOME", "/home/u"), ("MY_CHROME_BROWSER", "brave")]).unwrap();
        assert_eq!(c.browser, Some(Browser::Brave));
        let err = config(&[
            ("HOME", "/home/u"),
            ("MY_CHROME_BROWSER", "brave"),
            ("MY_CHROME_CHROME", "/opt/brave.com/brave/brave"),
        ])
        .unwrap_err();
        assert_eq!(err.var, "MY_CHROME_BROWSER");
        assert!(err.to_string().contains("not both"), "{err}");
        let err = config(&[("HOME", "/home/u"), ("MY_CHROME_BROWSER", "firefox")]).unwrap_err();
        assert!(err.to_string().contains("chrome, chrome-beta"), "{err}");
    }

    #[test]
    fn children_get_only_the_allowlist() {
        let c = config(&[
            ("HOME", "/home/u"),
            ("USER", "somebody-else"),
            ("LC_ALL", "C"),
            ("NODE_OPTIONS", "--require /tmp/evil.js"),
            ("PLAYWRIGHT_MCP_EXTENSION_TOKEN", "x"),
            ("XDG_CACHE_HOME", "/tmp/cache"),
            ("https_proxy", "http://127.0.0.1:3128"),
        ])
        .unwrap();
        let names: Vec<_> = c
            .child_vars
            .iter()
            .map(|(k, _)| k.to_str().unwrap())
            .collect();
        assert_eq!(names, ["LC_ALL", "HOME", "USER", "LOGNAME"]);
        let user = &c.child_vars.iter().find(|(k, _)| k == "USER").unwrap().1;
        assert_eq!(user, c.user.as_str(), "USER comes from the user database");
        let proxies: Vec<_> = c
            .proxy_vars
            .iter()
            .map(|(k, _)| k.to_str().unwrap())
            .collect();
        assert_eq!(proxies, ["https_proxy"]);
    }
}
