//! `my-chrome safety-audit` and `my-chrome cleanup-plan` (text or `--json`):
//! which safeguards hold right now, and the safe, targeted action for every
//! open Playwright session. Both only look; neither changes anything.

use serde::Serialize;

use crate::chrome::{self, ChromeState, Exposure};
use crate::config::Config;
use crate::error::Error;
use crate::exit::Exit;
use crate::forward;
use crate::helper::Helper;
use crate::helper::check::Check;
use crate::helper::pin::Pin;
use crate::procs::ProcessTable;
use crate::runtime::Runtime;
use crate::session::bootstrap;
use crate::session::state::{SessionState, session_state};
use crate::start::Start;

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

/// Every safeguard, checked now.
pub fn safeguards(config: &Config) -> Vec<Safeguard> {
    let mut out = Vec::new();
    let table = ProcessTable::read();
    out.push(match &table {
        Ok(t) => match chrome::state(t, &config.chrome) {
            ChromeState::Running(pid) => safeguard(
                "running-chrome-preflight",
                true,
                format!("exactly one normal Chrome (pid {pid})"),
            ),
            ChromeState::Missing => safeguard(
                "running-chrome-preflight",
                true,
                "no Chrome is running: connect would refuse (exit 5)",
            ),
            ChromeState::Ambiguous(pids) => safeguard(
                "running-chrome-preflight",
                true,
                format!("Chrome processes {pids:?}: connect would refuse (exit 5)"),
            ),
        },
        Err(e) => safeguard("running-chrome-preflight", false, e.to_string()),
    });
    // The very check connect runs before it reads the token.
    let refuses = |pids: &[u32]| {
        chrome::require_single(pids)
            .single(&config.chrome)
            .is_err_and(|e| e.exit() == Exit::Chrome)
    };
    out.push(safeguard(
        "missing-chrome-behaviour",
        refuses(&[]) && refuses(&[1, 2]) && !refuses(&[1]),
        "connect's Chrome check refuses no Chrome and two Chromes (exit 5) before the token is read",
    ));
    let blocked: Vec<&str> = forward::blocked_commands().collect();
    let all_blocked = blocked
        .iter()
        .all(|c| forward::refusal(&[c.to_string()], &config.session).is_some());
    out.push(safeguard(
        "blocked-launch-commands",
        all_blocked,
        blocked.join(", "),
    ));
    let enders = ["close", "detach", "close-all", "kill-all"];
    out.push(safeguard(
        "detach-only-disconnect",
        enders
            .iter()
            .all(|c| forward::refusal(&[c.to_string()], &config.session).is_some()),
        format!(
            "{} are refused: only `my-chrome disconnect` ends the session",
            enders.join(", ")
        ),
    ));
    out.push(match &table {
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
    });
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
        _ => safeguard(
            "helper-supported",
            false,
            "no runtime: run `my-chrome setup`",
        ),
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
        _ => safeguard("socket-directory-private", true, "no session"),
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
        _ => safeguard("targeted-cleanup", true, "no runtime, no cleanup record"),
    });
    out
}

/// What the design promises and this command cannot check on its own: said
/// apart, never counted as a passed check.
#[derive(Debug, Serialize)]
pub struct Statement {
    pub name: &'static str,
    pub statement: &'static str,
}

pub const DESIGN: [Statement; 3] = [
    Statement {
        name: "pid-continuity",
        statement: "connect compares Chrome's PID set before the token is read, before delivery \
                    and after the attach (docs/DESIGN.md, invariant 3)",
    },
    Statement {
        name: "disconnect-leaves-chrome",
        statement: "disconnect sends `detach` for our session only; it never closes Chrome or \
                    kills processes by name (invariant 11)",
    },
    Statement {
        name: "no-browser-launch",
        statement: "connect never launches a browser: with no Chrome it stops before reading \
                    the token",
    },
];

#[derive(Debug, Serialize)]
struct Audit<'a> {
    /// Checked now: `holds` is what the check found.
    safeguards: &'a [Safeguard],
    /// Promised by the design, not checked by this command.
    design: &'a [Statement],
}

/// `safety-audit [--json]`: exit 6 when a safeguard fails.
pub fn safety_audit(config: &Config, json: bool) -> Result<(), Error> {
    let list = safeguards(config);
    if json {
        let audit = Audit {
            safeguards: &list,
            design: &DESIGN,
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&audit).expect("the audit serialises")
        );
    } else {
        for s in &list {
            println!(
                "{}: {} ({})",
                s.name,
                if s.holds { "holds" } else { "FAILS" },
                s.detail
            );
        }
        println!("\nBy design (not checked here):");
        for d in &DESIGN {
            println!("{}: {}", d.name, d.statement);
        }
    }
    match list.iter().find(|s| !s.holds) {
        None => Ok(()),
        Some(s) => Err(Error::refused(
            Exit::Security,
            format!("safeguard {} does not hold: {}", s.name, s.detail),
        )),
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
/// targeted action for each. It runs none of them.
pub fn cleanup_plan(config: &Config, json: bool) -> Result<(), Error> {
    // It runs the helper's `list`: a copy checked as for any browser command.
    let prepared = Start::new(config, Check::Supported).open()?;
    let runtime = &prepared.runtime;
    let cli = prepared.cli()?;
    let listed = cli.run("playwright-cli list", &["list", "--all", "--json"])?;
    if !listed.status.success() {
        return Err(Error::refused(
            Exit::Failure,
            "cannot list the open Playwright sessions",
        ));
    }
    let doc: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap_or_default();
    let ours_ws =
        std::fs::canonicalize(runtime.root()).unwrap_or_else(|_| runtime.root().to_path_buf());
    let steps = doc["browsers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| {
            let session = b["name"].as_str().unwrap_or("?").to_string();
            let workspace = b["workspace"].as_str().unwrap_or("?").to_string();
            let ours = session == config.session && std::path::Path::new(&workspace) == ours_ws;
            let action = if ours {
                "my-chrome disconnect".to_string()
            } else if b["attached"] == true {
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
        println!(
            "{}",
            serde_json::to_string_pretty(&plan).expect("the plan serialises")
        );
    } else {
        if plan.steps.is_empty() {
            println!("no open Playwright sessions");
        }
        for step in &plan.steps {
            println!("{} ({}): {}", step.session, step.workspace, step.action);
        }
        println!("{}", plan.note);
    }
    Ok(())
}
