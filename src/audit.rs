//! `my-chrome safety-audit` and `my-chrome cleanup-plan` (text or `--json`):
//! which safeguards hold right now, and the safe, targeted action for every
//! open Playwright session. Both only look; neither changes anything.

use serde::Serialize;

use crate::chrome::{self, ChromeState, Exposure};
use crate::config::Config;
use crate::error::{Error, Exit};
use crate::forward;
use crate::helper::Helper;
use crate::helper::check::Depth;
use crate::helper::pin::Pin;
use crate::procs::ProcessTable;
use crate::runtime::Runtime;
use crate::session::pinned::{Need, Prepared};
use crate::session::state::{SessionState, session_state};

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
    out.push(safeguard(
        "missing-chrome-behaviour",
        true,
        "connect never launches a browser; with no Chrome it exits 5 before reading the token",
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
    out.push(safeguard(
        "detach-only-disconnect",
        true,
        "disconnect sends detach for our session only; Chrome keeps running",
    ));
    out.push(safeguard(
        "targeted-cleanup",
        true,
        "only processes and files my-chrome started (by their private paths) are ever stopped or removed",
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
    out.push(safeguard(
        "pid-continuity",
        true,
        "connect compares Chrome's PID set before the token, before delivery and after the attach",
    ));
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
        Ok(Some(rt)) => match Helper::at(rt.cli_dir()).check_supported(pin, Depth::Full) {
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
    out
}

/// `safety-audit [--json]`: exit 6 when a safeguard fails.
pub fn safety_audit(config: &Config, json: bool) -> Result<(), Error> {
    let list = safeguards(config);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&list).expect("the audit serialises")
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
    }
    match list.iter().find(|s| !s.holds) {
        None => Ok(()),
        Some(s) => Err(crate::session::connect::fail(
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
    let prepared = Prepared::open(config, Need::Supported, false)?;
    let runtime = &prepared.runtime;
    let cli = prepared.cli();
    let listed = cli
        .run("playwright-cli list", &["list", "--all", "--json"])
        .filter(|f| f.status.success())
        .ok_or_else(|| {
            crate::session::connect::fail(Exit::Failure, "cannot list the open Playwright sessions")
        })?;
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
