//! `my-chrome doctor`: what is installed and whether it can be trusted, as
//! text or `--json`. It never fails because something is missing or wrong;
//! it reports. It never creates, changes or repairs anything.

use serde::Serialize;

use crate::child::ChildEnv;
use crate::chrome::{self, ChromeState, Exposure};
use crate::config::Config;
use crate::helper::check::{Check, installed_version};
use crate::helper::node::Node;
use crate::helper::pin::{CLI_PACKAGE, Pin};
use crate::helper::{Helper, HelperError, known_node, trusted_node};
use crate::procs::ProcessTable;
use crate::runtime::{CLI_DIR, Runtime, RuntimeError};
use crate::session::bound;
use crate::session::state::{SessionState, session_state};
use crate::token::{self, rotation};

/// `my-chrome doctor [--json]`.
pub fn doctor(config: &Config, json: bool) {
    let report = Doctor::gather(config);
    if json {
        crate::output::json(&report);
    } else {
        crate::output::text(crate::output::Stream::Out, &[&report.text()]);
    }
}

#[derive(Debug, Serialize)]
pub struct Doctor {
    pub runtime: RuntimeReport,
    pub node: NodeReport,
    pub cli: CliReport,
    pub token: TokenReport,
    pub chrome: ChromeReport,
    pub process_token: ProcessTokenReport,
    pub rotation: RotationReport,
    pub session: SessionReport,
    pub bound_browser: BoundReport,
    pub agents: AgentsReport,
    pub settings: SettingsReport,
    pub session_limits: LimitsReport,
    pub sandbox: SandboxReport,
}

#[derive(Debug, Serialize)]
pub struct SandboxReport {
    /// `none`, or what an agent host's sandbox keeps from my-chrome and
    /// the setting that lets it run (`host_sandbox`).
    pub status: String,
}

#[derive(Debug, Serialize)]
pub struct LimitsReport {
    /// What is left of the session's idle and lifetime limits, and whether
    /// its watcher runs; `no session`, or `error: <why>`.
    pub status: String,
    pub idle_left_secs: Option<u64>,
    pub lifetime_left_secs: Option<u64>,
    pub watcher: Option<bool>,
}

#[derive(Debug, Serialize)]
pub struct SettingsReport {
    /// The user's settings in one line, where they come from; or
    /// `error: <why>`.
    pub status: String,
    pub agent_gone_secs: Option<u64>,
    pub file_roots: Vec<String>,
    /// 0: never.
    pub idle_limit_secs: Option<u64>,
    pub lifetime_limit_secs: Option<u64>,
    /// Whether `connect` asks the user in the browser first.
    pub connect_consent: Option<bool>,
    /// The most tabs one agent, and the session, may have.
    pub agent_tabs: Option<usize>,
    pub session_tabs: Option<usize>,
    /// How long an agent's browser command may run (a caller may only
    /// shorten it).
    pub command_bound_secs: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct BoundReport {
    /// `shut`, `open` (another process could attach to the session through
    /// `paths`), `error: <why>`, or `not checked: <why>`.
    pub status: String,
    pub paths: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct AgentsReport {
    /// Each agent's tab ids and last command, the user's tabs, what runs
    /// now; or `error: <why>`.
    pub status: String,
    /// All of it, as `my-chrome agents --json` shows it.
    pub detail: Option<crate::tabs::view::Agents>,
}

#[derive(Debug, Serialize)]
pub struct SessionReport {
    pub name: String,
    /// `ready`, `missing`, `stale`, `unavailable`, or `not checked (…)`.
    pub status: String,
    /// Why it is stale or unavailable.
    pub detail: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct TokenReport {
    /// The keyring item, by service and account.
    pub item: String,
    /// `stored`, `missing`, or `error: <why>` (existence only: never read).
    pub status: String,
}

#[derive(Debug, Serialize)]
pub struct ChromeReport {
    /// The browser's name (`chromium`); `None` for an executable
    /// MY_CHROME_CHROME names that is none of ours, or none chosen.
    pub name: Option<String>,
    /// What messages call it (`Chromium`).
    pub browser: Option<String>,
    /// How it was chosen (`named by MY_CHROME_BROWSER`, …).
    pub chosen: Option<String>,
    pub path: Option<String>,
    pub user_data: Option<String>,
    /// `running`, `missing`, `ambiguous`, `not chosen: <why and how to
    /// choose>`, or `error: <why>`.
    pub status: String,
    pub pids: Vec<u32>,
    /// Every supported browser installed, by name.
    pub installed: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ProcessTokenReport {
    /// `absent`, `exposed`, or `error: <why>`.
    pub status: String,
    pub pids: Vec<u32>,
}

#[derive(Debug, Serialize)]
pub struct RotationReport {
    pub status: String,
}

#[derive(Debug, Serialize)]
pub struct RuntimeReport {
    pub path: String,
    /// `ok`, `missing`, `unsafe: <path>: <rule>`, or `error: <why>`.
    pub status: String,
}

#[derive(Debug, Serialize)]
pub struct NodeReport {
    pub path: Option<String>,
    pub version: Option<String>,
    /// `ok` or `error: <why>`.
    pub status: String,
}

#[derive(Debug, Serialize)]
pub struct CliReport {
    pub path: String,
    pub version: Option<String>,
    /// `supported`, `unsupported: <fault>`, `unsafe: <path>: <rule>`,
    /// `missing`, or `not checked: <why>`.
    pub compatibility: String,
}

impl Doctor {
    pub fn gather(config: &Config) -> Doctor {
        let pin = Pin::shipped();
        let root = &config.runtime.path;
        let env = ChildEnv::new(config, &root.join(crate::runtime::TMP_DIR));
        let runtime = Runtime::inspect(&config.runtime);
        // A node the last full check ran, unchanged since, is not run again.
        let node = match &runtime {
            Ok(Some(rt)) => known_node(config, pin, &env, rt),
            _ => trusted_node(config, pin, &env),
        };

        let runtime_status = match &runtime {
            Ok(Some(_)) => "ok".to_string(),
            Ok(None) => "missing".to_string(),
            Err(e) => unsafe_status(e),
        };
        let node_report = match &node {
            Ok(n) => NodeReport {
                path: Some(n.path.display().to_string()),
                version: Some(n.version.to_string()),
                status: "ok".into(),
            },
            Err(e) => NodeReport {
                path: None,
                version: None,
                status: format!("error: {e}"),
            },
        };
        let cli = match &runtime {
            Ok(Some(rt)) => cli_report(rt, pin, node.as_ref().ok(), &env),
            Ok(None) => CliReport {
                path: root.join(CLI_DIR).display().to_string(),
                version: None,
                compatibility: "missing".into(),
            },
            Err(_) => CliReport {
                path: root.join(CLI_DIR).display().to_string(),
                version: None,
                compatibility: "not checked: the runtime is unsafe".into(),
            },
        };
        let blocked = crate::host_sandbox::check(root, config.host.as_ref()).err();
        let session = match &blocked {
            // Its daemon cannot be reached from here: that says nothing of it.
            Some(_) => SessionReport {
                name: config.session.clone(),
                status: "not checked (see sandbox)".into(),
                detail: None,
            },
            None => session_report(config, &runtime, cli.compatibility == "supported", pin),
        };
        let (chrome, process_token) = process_reports(config);
        let rotation = RotationReport {
            status: match &runtime {
                Ok(Some(rt)) => rotation::summary(rt),
                Ok(None) => "not started".into(),
                Err(_) => "not checked: the runtime is unsafe".into(),
            },
        };
        let bound_browser = bound_report(config, &runtime);
        Doctor {
            runtime: RuntimeReport {
                path: root.display().to_string(),
                status: runtime_status,
            },
            node: node_report,
            cli,
            token: token_report(config),
            chrome,
            process_token,
            rotation,
            session,
            bound_browser,
            agents: agents_report(config),
            settings: settings_report(config),
            session_limits: limits_report(&runtime),
            sandbox: SandboxReport {
                status: blocked.map_or("none".into(), |e| e.to_string()),
            },
        }
    }

    pub fn text(&self) -> String {
        let node = match (&self.node.path, &self.node.version) {
            (Some(path), Some(version)) => format!("{path} (v{version})"),
            _ => self.node.status.clone(),
        };
        let status = match self.chrome.pids.as_slice() {
            [pid] => format!("{} (pid {pid})", self.chrome.status),
            [] => self.chrome.status.clone(),
            pids => format!("{} (pids {pids:?})", self.chrome.status),
        };
        let chrome = match (&self.chrome.browser, &self.chrome.path, &self.chrome.chosen) {
            (Some(browser), Some(path), Some(chosen)) => format!(
                "{browser} at {path}, data {} ({chosen}): {status}",
                self.chrome.user_data.as_deref().unwrap_or("?")
            ),
            _ => status,
        };
        let process_token = match self.process_token.pids.as_slice() {
            [] => self.process_token.status.clone(),
            pids => format!("{} (pids {pids:?})", self.process_token.status),
        };
        format!(
            "runtime: {} ({})\nnode: {node}\ncli: {}\nversion: {}\ncompatibility: {}\n\
             token: {} ({})\nbrowser: {chrome}\nprocess-token: {process_token}\nrotation: {}\n\
             session: {}\nsession-limits: {}\nbound-browser: {}\nagents: {}\nsettings: {}\n\
             sandbox: {}\n",
            self.runtime.path,
            self.runtime.status,
            self.cli.path,
            self.cli.version.as_deref().unwrap_or("unknown"),
            self.cli.compatibility,
            self.token.status,
            self.token.item,
            self.rotation.status,
            match &self.session.detail {
                Some(detail) => format!("{} ({detail})", self.session.status),
                None => self.session.status.clone(),
            },
            self.session_limits.status,
            match self.bound_browser.paths.as_slice() {
                [] => self.bound_browser.status.clone(),
                paths => format!(
                    "{} ({}): run `my-chrome disconnect`",
                    self.bound_browser.status,
                    paths.join(", ")
                ),
            },
            self.agents.status,
            self.settings.status,
            self.sandbox.status,
        )
    }
}

fn cli_report(runtime: &Runtime, pin: &Pin, node: Option<&Node>, env: &ChildEnv) -> CliReport {
    let helper = Helper::at(runtime.cli_dir());
    // A tree that changed since its last full check runs no code, not even
    // `--version`; one that is exactly what that check recorded needs no
    // second check (its record is the verdict, as for every command).
    let compatibility = match (helper.unchanged(runtime), node) {
        (Err(e), _) => Err(e),
        // Cheap and process-free: the tree may match its record and still
        // be another pin's (a my-chrome upgrade).
        (Ok(true), _) => helper.check(pin, Check::Supported),
        (Ok(false), Some(node)) => helper.verify(pin, node, env, runtime.root()),
        (Ok(false), None) => helper.check(pin, Check::Verified),
    };
    let compatibility = match (compatibility, node) {
        (Err(e), _) => describe(e),
        (Ok(()), None) => "not checked: no trusted node to run --version".to_string(),
        (Ok(()), Some(_)) => "supported".to_string(),
    };
    CliReport {
        path: helper.dir().display().to_string(),
        version: installed_version(helper.dir(), &format!("node_modules/{CLI_PACKAGE}")).ok(),
        compatibility,
    }
}

/// The state of our session, read natively; only with a supported helper,
/// whose version the session must match.
fn session_report(
    config: &Config,
    runtime: &Result<Option<Runtime>, RuntimeError>,
    supported: bool,
    pin: &Pin,
) -> SessionReport {
    let (status, detail) = match runtime {
        Ok(Some(rt)) if supported => {
            let state = session_state(&config.home, rt, &config.session, pin.core_version());
            let detail = match &state {
                SessionState::Stale(why) | SessionState::Unavailable(why) => Some(why.clone()),
                SessionState::Ready(_) | SessionState::Missing => None,
            };
            (state.name().to_string(), detail)
        }
        _ => ("not checked (unsupported helper)".to_string(), None),
    };
    SessionReport {
        name: config.session.clone(),
        status,
        detail,
    }
}

/// Whether another process could attach to our session through the
/// browser the daemon bound (src/session/bound.rs).
fn bound_report(config: &Config, runtime: &Result<Option<Runtime>, RuntimeError>) -> BoundReport {
    let (status, paths) = match runtime {
        Ok(Some(rt)) => match bound::doors(rt, &config.home) {
            Ok(doors) if doors.is_empty() => ("shut".to_string(), Vec::new()),
            Ok(doors) => (
                "open".to_string(),
                doors.iter().map(|p| p.display().to_string()).collect(),
            ),
            Err(e) => (format!("error: {e}"), Vec::new()),
        },
        Ok(None) => ("shut".to_string(), Vec::new()),
        Err(_) => ("not checked: the runtime is unsafe".to_string(), Vec::new()),
    };
    BoundReport { status, paths }
}

fn settings_report(config: &Config) -> SettingsReport {
    match crate::settings::of(&config.runtime) {
        Ok(settings) => SettingsReport {
            status: settings.describe(),
            agent_gone_secs: Some(settings.agent_gone.as_secs()),
            file_roots: settings
                .file_roots
                .iter()
                .map(|r| r.display().to_string())
                .collect(),
            idle_limit_secs: Some(settings.idle_limit.map_or(0, |d| d.as_secs())),
            lifetime_limit_secs: Some(settings.lifetime_limit.as_secs()),
            connect_consent: Some(settings.connect_consent),
            agent_tabs: Some(settings.agent_tabs),
            session_tabs: Some(settings.session_tabs),
            command_bound_secs: Some(settings.command_bound.as_secs()),
        },
        Err(e) => SettingsReport {
            status: format!("error: {e}"),
            agent_gone_secs: None,
            file_roots: Vec::new(),
            idle_limit_secs: None,
            lifetime_limit_secs: None,
            connect_consent: None,
            agent_tabs: None,
            session_tabs: None,
            command_bound_secs: None,
        },
    }
}

fn limits_report(runtime: &Result<Option<Runtime>, RuntimeError>) -> LimitsReport {
    let report = |status: String| LimitsReport {
        status,
        idle_left_secs: None,
        lifetime_left_secs: None,
        watcher: None,
    };
    let Ok(Some(runtime)) = runtime else {
        return report("not checked: no runtime".into());
    };
    match crate::session::limits::status(runtime, false) {
        Ok(Some(s)) => LimitsReport {
            status: s.status,
            idle_left_secs: s.idle_left_secs,
            lifetime_left_secs: Some(s.lifetime_left_secs),
            watcher: Some(s.watcher),
        },
        Ok(None) => match crate::session::limits::ended(runtime) {
            Ok(Some(end)) => report(end.sentence()),
            _ => report("no session".into()),
        },
        Err(e) => report(format!("error: {e}")),
    }
}

fn agents_report(config: &Config) -> AgentsReport {
    match crate::tabs::view::Agents::gather(config, &crate::identity::said(config)) {
        Ok(agents) => AgentsReport {
            status: agents.summary(),
            detail: Some(agents),
        },
        Err(e) => AgentsReport {
            status: format!("error: {e}"),
            detail: None,
        },
    }
}

/// Whether our keyring item exists; its value is never read here.
fn token_report(config: &Config) -> TokenReport {
    let store = token::keyring::configured(config);
    TokenReport {
        item: store.describe(),
        status: match store.exists() {
            Ok(true) => "stored".into(),
            Ok(false) => "missing".into(),
            Err(e) => format!("error: {e}"),
        },
    }
}

fn process_reports(config: &Config) -> (ChromeReport, ProcessTokenReport) {
    let installed = crate::browser::installed(std::path::Path::new("/"))
        .into_iter()
        .map(|(b, _)| b.name().to_string())
        .collect();
    let chosen = crate::browser::resolve(config);
    let mut report = ChromeReport {
        name: None,
        browser: None,
        chosen: None,
        path: None,
        user_data: None,
        status: String::new(),
        pids: vec![],
        installed,
    };
    if let Ok(browser) = &chosen {
        report.name = browser.browser.map(|b| b.name().to_string());
        report.browser = Some(browser.display());
        report.chosen = Some(browser.how.describe().to_string());
        report.path = Some(browser.executable.display().to_string());
        report.user_data = Some(browser.user_data.display().to_string());
    }
    let table = match ProcessTable::read() {
        Ok(table) => table,
        Err(e) => {
            let status = format!("error: {e}");
            report.status = status.clone();
            return (
                report,
                ProcessTokenReport {
                    status,
                    pids: vec![],
                },
            );
        }
    };
    let status = match &chosen {
        Ok(browser) => {
            let pids = chrome::normal_chrome_pids(&table, &browser.executable);
            let status = match chrome::require_single(&pids) {
                ChromeState::Running(_) => "running",
                ChromeState::Missing => "missing",
                ChromeState::Ambiguous(_) => "ambiguous",
            };
            report.pids = pids;
            status.to_string()
        }
        Err(e @ crate::browser::BrowserError::Several(_)) => format!("not chosen: {e}"),
        Err(
            e @ (crate::browser::BrowserError::NotInstalled { .. }
            | crate::browser::BrowserError::NoneInstalled { .. }),
        ) => format!("not installed: {e}"),
        Err(e) => format!("error: {e}"),
    };
    report.status = status;
    let process_token = match chrome::token_exposure(&table) {
        Exposure::Absent => ProcessTokenReport {
            status: "absent".into(),
            pids: vec![],
        },
        Exposure::Exposed(pids) => ProcessTokenReport {
            status: "exposed".into(),
            pids,
        },
    };
    (report, process_token)
}

fn describe(error: HelperError) -> String {
    match error {
        HelperError::Missing { .. } => "missing".to_string(),
        HelperError::Unsafe(e) => unsafe_status(&e),
        HelperError::Unsupported { fault, .. } => format!("unsupported: {fault}"),
        HelperError::Older {
            installed, pinned, ..
        } => format!(
            "older: @playwright/cli {installed} from an earlier my-chrome (this one pins \
             {pinned}): run `my-chrome disconnect`, then `my-chrome setup`, then `my-chrome connect`"
        ),
        HelperError::Changed { path, what, .. } => {
            format!("changed: {path} {what} after it was verified (run `my-chrome setup`)")
        }
        other => format!("unsupported: {other}"),
    }
}

/// `unsafe: <path>: <rule>` for an unsafe path; other errors as they are.
fn unsafe_status(error: &RuntimeError) -> String {
    match error {
        RuntimeError::Unsafe { path, rule } => format!("unsafe: {}: {rule}", path.display()),
        other => format!("error: {other}"),
    }
}
