//! `my-chrome safety-audit` and `my-chrome cleanup-plan` (text or `--json`):
//! which safeguards hold right now, and the safe, targeted action for every
//! open Playwright session. Both only look; neither changes anything.

use serde::Serialize;

use crate::chrome::{self, ChromeState, Exposure};
use crate::config::Config;
use crate::error::{Error, lifts_core};
use crate::exit::Exit;
use crate::helper::Helper;
use crate::helper::check::Check;
use crate::helper::pin::Pin;
use crate::policy;
use crate::procs::{ProcError, ProcessTable};
use crate::runtime::Runtime;
use crate::session::state::{SessionState, session_state};
use crate::session::{bootstrap, bound, registry};

/// Why `safety-audit` or `cleanup-plan` ended without its answer.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// What it met below it.
    #[error(transparent)]
    Core(Error),
    #[error(
        "safeguard {name} does not hold: {detail}. Fix what it found, then run `my-chrome \
         safety-audit` again"
    )]
    Fails { name: &'static str, detail: String },
    #[error(
        "the Playwright session registry cannot be read ({0}); no plan was made. If that \
         session is not open, remove its entry"
    )]
    Registry(std::io::Error),
    #[error(
        "cannot resolve the runtime directory ({0}); no plan was made. Run `my-chrome doctor` to \
         see what is wrong with it"
    )]
    RuntimePath(std::io::Error),
}

impl AuditError {
    pub fn exit(&self) -> Exit {
        match self {
            AuditError::Core(e) => e.exit(),
            AuditError::Fails { .. } => Exit::Security,
            AuditError::Registry(_) | AuditError::RuntimePath(_) => Exit::Failure,
        }
    }
}

lifts_core!(AuditError);

#[derive(Debug, Serialize)]
pub struct Safeguard {
    pub name: &'static str,
    /// `true` holds, `false` fails; what it checked is in `detail`.
    pub holds: bool,
    pub detail: String,
}

fn safeguard(name: &'static str, holds: bool, detail: impl Into<String>) -> Safeguard {
    Safeguard {
        name,
        holds,
        detail: detail.into(),
    }
}

/// A row that could not be checked does not hold.
fn unchecked(name: &'static str) -> Safeguard {
    safeguard(
        name,
        false,
        "not checked: the runtime is unsafe (see runtime-private)",
    )
}

/// Every safeguard, checked now.
pub fn safeguards(config: &Config) -> Vec<Safeguard> {
    let table = ProcessTable::read();
    let mut out = vec![browser_row(config, &table), token_row(&table)];
    out.extend(runtime_rows(config));
    out
}

/// The executable the PID checks recognise the browser by, and how many
/// run it. An unsafe runtime's record of the choice is not read (its own
/// row fails); the choice is made without it.
fn browser_row(config: &Config, table: &Result<ProcessTable, ProcError>) -> Safeguard {
    let chosen = match crate::browser::resolve(config) {
        Err(crate::browser::BrowserError::Runtime(_)) => crate::browser::choose(
            &crate::browser::Wanted::of(config),
            None,
            std::path::Path::new("/"),
        ),
        other => other,
    };
    match chosen {
        Ok(browser) => {
            let name = browser.display();
            let running = match table {
                Ok(t) => match chrome::state(t, &browser.executable) {
                    ChromeState::Running(pid) => {
                        format!("one normal main process runs it (pid {pid})")
                    }
                    ChromeState::Missing => "none runs it: connect would refuse (exit 5)".into(),
                    ChromeState::Ambiguous(pids) => {
                        format!("{pids:?} run it: connect would refuse (exit 5)")
                    }
                },
                Err(e) => format!("the process table cannot be read: {e}"),
            };
            let path = browser.executable.display();
            match chrome::executable_is_trusted(&browser.executable) {
                Ok(true) => safeguard(
                    "chrome-executable",
                    table.is_ok(),
                    format!("{path} ({name}): only root or you can replace it; {running}"),
                ),
                Ok(false) => safeguard(
                    "chrome-executable",
                    table.is_ok(),
                    format!("nothing at {path} ({name}): connect would refuse (exit 5)"),
                ),
                Err(e) => safeguard("chrome-executable", false, e.to_string()),
            }
        }
        // A row that could not be checked does not hold.
        Err(e) => safeguard(
            "chrome-executable",
            false,
            format!("not checked: no browser is chosen ({e})"),
        ),
    }
}

/// No process carries an extension token.
fn token_row(table: &Result<ProcessTable, ProcError>) -> Safeguard {
    match table {
        Ok(t) => match chrome::token_exposure(t) {
            Exposure::Absent => safeguard(
                "process-token",
                true,
                "no process carries an extension token",
            ),
            Exposure::Exposed(pids) => safeguard(
                "process-token",
                false,
                format!("processes {pids:?} carry an extension token: rotate it"),
            ),
        },
        Err(e) => safeguard("process-token", false, e.to_string()),
    }
}

/// The runtime's rows: private, the helper supported, the socket
/// directory private, the cleanup record targeted, the bound browser shut.
fn runtime_rows(config: &Config) -> Vec<Safeguard> {
    let mut out = Vec::new();
    let runtime = Runtime::inspect(&config.runtime);
    out.push(match &runtime {
        Ok(Some(_)) => safeguard(
            "runtime-private",
            true,
            config.runtime.path.display().to_string(),
        ),
        Ok(None) => safeguard("runtime-private", true, "not created yet"),
        Err(e) => safeguard("runtime-private", false, e.to_string()),
    });
    let pin = Pin::shipped();
    out.push(match &runtime {
        Ok(Some(rt)) => match Helper::at(rt.cli_dir()).check(pin, Check::Verified) {
            Ok(()) => safeguard(
                "helper-supported",
                true,
                format!("@playwright/cli {} (tree digest verified)", pin.version),
            ),
            Err(e) => safeguard("helper-supported", false, e.to_string()),
        },
        Ok(None) => safeguard(
            "helper-supported",
            false,
            "no runtime: run `my-chrome setup`",
        ),
        Err(_) => unchecked("helper-supported"),
    });
    out.push(match &runtime {
        Ok(Some(rt)) => {
            match session_state(&config.home, rt, &config.session, pin.core_version()) {
                SessionState::Unavailable(why) => safeguard("socket-directory-private", false, why),
                other => safeguard(
                    "socket-directory-private",
                    true,
                    format!("session {}", other.name()),
                ),
            }
        }
        Ok(None) => safeguard("socket-directory-private", true, "no runtime, no session"),
        Err(_) => unchecked("socket-directory-private"),
    });
    out.push(match &runtime {
        Ok(Some(rt)) => match bootstrap::recorded_dir(rt) {
            Ok(None) => safeguard("targeted-cleanup", true, "no interrupted connect recorded"),
            Ok(Some(dir)) => safeguard(
                "targeted-cleanup",
                true,
                format!(
                    "the interrupted connect's record names {} (inside the runtime, not a link)",
                    dir.display()
                ),
            ),
            Err(e) => safeguard("targeted-cleanup", false, e.to_string()),
        },
        Ok(None) => safeguard("targeted-cleanup", true, "no runtime, no cleanup record"),
        Err(_) => unchecked("targeted-cleanup"),
    });
    out.push(match &runtime {
        Ok(Some(rt)) => match bound::doors(rt, &config.home) {
            Ok(doors) if doors.is_empty() => safeguard(
                "bound-browser-shut",
                true,
                "no socket or descriptor through which another process could attach to the session",
            ),
            Ok(doors) => safeguard(
                "bound-browser-shut",
                false,
                format!(
                    "another process could attach to the session through {}: run `my-chrome \
                     disconnect`",
                    bound::listed(&doors)
                ),
            ),
            Err(e) => safeguard("bound-browser-shut", false, e.to_string()),
        },
        Ok(None) => safeguard("bound-browser-shut", true, "no runtime, no session"),
        Err(_) => unchecked("bound-browser-shut"),
    });
    out
}

/// What the design promises and this command cannot check on its own: said
/// apart, never counted as a passed check.
#[derive(Debug, Serialize)]
pub struct Statement {
    pub name: &'static str,
    pub statement: String,
}

/// What the design promises, each proven by the test suite on every
/// change (a row that only re-ran that code on constants could not fail).
pub fn design() -> Vec<Statement> {
    vec![
        Statement {
            name: "pid-continuity",
            statement: "connect compares the browser's PID set before the token is read, \
                        before delivery and after the attach (docs/DESIGN.md, invariant 4)"
                .into(),
        },
        Statement {
            name: "missing-chrome-behaviour",
            statement: "connect never launches a browser: with none of the chosen one running, \
                        or more than one, it stops (exit 5) before the token is read"
                .into(),
        },
        Statement {
            name: "blocked-commands",
            statement: format!(
                "refused whatever their options: {}",
                policy::blocked_commands().collect::<Vec<_>>().join(", ")
            ),
        },
        Statement {
            name: "detach-only-disconnect",
            statement: "only `my-chrome disconnect` ends the session: it detaches ours and \
                        leaves the browser running; close, detach, close-all and kill-all are \
                        refused, and nothing is killed by name (invariant 11)"
                .into(),
        },
    ]
}

#[derive(Debug, Serialize)]
struct Audit<'a> {
    /// Checked now: `holds` is what the check found.
    safeguards: &'a [Safeguard],
    /// Promised by the design, not checked by this command.
    design: &'a [Statement],
}

/// `safety-audit [--json]`: exit 6 when a safeguard fails.
pub fn safety_audit(config: &Config, json: bool) -> Result<(), AuditError> {
    let list = safeguards(config);
    let design = design();
    if json {
        let audit = Audit {
            safeguards: &list,
            design: &design,
        };
        crate::output::json(&audit);
    } else {
        for s in &list {
            crate::output::line(&format!(
                "{}: {} ({})",
                s.name,
                if s.holds { "holds" } else { "FAILS" },
                s.detail
            ));
        }
        crate::output::line("\nBy design (not checked here):");
        for d in &design {
            crate::output::line(&format!("{}: {}", d.name, d.statement));
        }
    }
    match list.iter().find(|s| !s.holds) {
        None => Ok(()),
        Some(s) => Err(AuditError::Fails {
            name: s.name,
            detail: s.detail.clone(),
        }),
    }
}

#[derive(Debug, Serialize)]
pub struct Step {
    pub session: String,
    pub workspace: String,
    pub ours: bool,
    pub action: String,
}

#[derive(Debug, Serialize)]
pub struct CleanupPlan {
    pub steps: Vec<Step>,
    pub blocked: Vec<&'static str>,
    pub note: &'static str,
}

/// `cleanup-plan [--json]`: the open sessions in every workspace and the
/// targeted action for each. It runs none of them, and no code of the
/// pinned CLI: the registry is read natively, strictly (an entry that is
/// not the CLI's stops it), and a session counts as open when its daemon
/// answers, as for the CLI's `list --all`.
pub fn cleanup_plan(config: &Config, json: bool) -> Result<(), AuditError> {
    let ours = match Runtime::inspect(&config.runtime)? {
        Some(runtime) => Some(
            registry::daemon_dir(&config.home, runtime.root()).map_err(AuditError::RuntimePath)?,
        ),
        None => None,
    };
    let listed = registry::all_entries(&config.home).map_err(AuditError::Registry)?;
    let steps = listed
        .into_iter()
        .filter(|l| l.entry.is_open())
        .map(|l| {
            let workspace = l.workspace();
            let ours = ours.as_ref().is_some_and(|dir| l.is(dir, &config.session));
            let session = l.name;
            let action = if ours {
                "my-chrome disconnect".to_string()
            } else if l.entry.attached {
                format!("in {workspace}: playwright-cli -s={session} detach (not run by my-chrome)")
            } else {
                format!("in {workspace}: playwright-cli -s={session} close (not run by my-chrome)")
            };
            Step {
                session,
                workspace,
                ours,
                action,
            }
        })
        .collect();
    let plan = CleanupPlan {
        steps,
        blocked: vec!["close-all", "kill-all"],
        note: "global close-all and kill-all are blocked: they would end every session, not just the one to clean",
    };
    if json {
        crate::output::json(&plan);
    } else {
        if plan.steps.is_empty() {
            crate::output::line("no open Playwright sessions");
        }
        for step in &plan.steps {
            crate::output::line(&format!(
                "{} ({}): {}",
                step.session, step.workspace, step.action
            ));
        }
        crate::output::line(plan.note);
    }
    Ok(())
}
