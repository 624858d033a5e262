//! The pinned CLI as my-chrome runs it for our session: cleared environment,
//! cwd = the runtime, token-free, bounded.

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::child::{ChildCommand, ChildEnv, Finished};
use crate::config::Config;
use crate::error::{Error, Exit};
use crate::helper::check::Depth;
use crate::helper::node::Node;
use crate::helper::pin::Pin;
use crate::helper::{Helper, HelperError, trusted_node};
use crate::runtime::{Runtime, WrapperLock};

/// Bound on helper-tab and housekeeping commands (invariant 10).
pub const HELPER_TIMEOUT: Duration = Duration::from_secs(8);

/// How much of the installed helper a command needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Supported with the tree digest and `--version` (connect).
    Verified,
    /// Supported, quick check (browser commands, ensure).
    Supported,
    /// Enough to detach (disconnect, cleanup-plan).
    Intact,
}

/// What every session command starts from: the runtime (and, when asked,
/// the wrapper lock, taken before anything is checked), the helper checked
/// as far as the command needs, a trusted node, and the child environment.
pub struct Prepared {
    pub runtime: Runtime,
    pub helper: Helper,
    pub node: Node,
    pub env: ChildEnv,
    pub session: String,
    _lock: Option<WrapperLock>,
}

impl Prepared {
    pub fn open(config: &Config, need: Need, locked: bool) -> Result<Prepared, Error> {
        let runtime = Runtime::open(&config.runtime)?;
        let lock = if locked {
            Some(runtime.lock(config.lock_wait)?)
        } else {
            None
        };
        let pin = Pin::shipped();
        let helper = Helper::at(runtime.cli_dir());
        match need {
            Need::Supported => helper.check_supported(pin, Depth::Quick)?,
            Need::Intact => helper.check_intact(pin)?,
            Need::Verified => {}
        }
        let env = ChildEnv::new(config, &runtime.tmp_dir());
        let node = trusted_node(config, pin, &env).map_err(HelperError::from)?;
        if need == Need::Verified {
            helper.verify(pin, &node, &env, runtime.root())?;
        }
        Ok(Prepared {
            runtime,
            helper,
            node,
            env,
            session: config.session.clone(),
            _lock: lock,
        })
    }

    /// The pinned CLI, token-free, for our session.
    pub fn cli(&self) -> PinnedCli<'_> {
        PinnedCli {
            node: &self.node,
            helper: &self.helper,
            env: &self.env,
            runtime: &self.runtime,
            session: &self.session,
        }
    }
}

pub struct PinnedCli<'a> {
    pub node: &'a Node,
    pub helper: &'a Helper,
    pub env: &'a ChildEnv,
    pub runtime: &'a Runtime,
    pub session: &'a str,
}

impl PinnedCli<'_> {
    /// Runs a housekeeping command, its output captured (never shown).
    pub fn run(&self, what: &str, args: &[&str]) -> Option<Finished> {
        ChildCommand::new(what, &self.node.path, self.runtime.root(), HELPER_TIMEOUT)
            .arg(self.helper.entry())
            .args(args)
            .run(self.env)
            .ok()
    }

    /// `detach` of our session, never with a token in sight. It runs even
    /// after SIGINT, SIGTERM or SIGHUP: it is the cleanup they ask for.
    pub fn detach(&self) -> bool {
        let session = format!("-s={}", self.session);
        ChildCommand::new(
            "playwright-cli detach",
            &self.node.path,
            self.runtime.root(),
            HELPER_TIMEOUT,
        )
        .arg(self.helper.entry())
        .args([session.as_str(), "detach"])
        .despite_signals()
        .run(self.env)
        .is_ok_and(|f| f.status.success())
    }

    /// Another attached Chrome session in any workspace, by name.
    pub fn other_attached(&self, workspace: &Path) -> Result<Option<String>, Error> {
        let listed = self
            .run("playwright-cli list", &["list", "--all", "--json"])
            .filter(|f| f.status.success())
            .ok_or_else(|| {
                super::connect::fail(
                    Exit::Failure,
                    "cannot list the open Playwright sessions; nothing was attached",
                )
            })?;
        let doc: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap_or_default();
        let ours = fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let other = doc["browsers"].as_array().into_iter().flatten().find(|b| {
            b["attached"] == true
                && !(b["name"] == self.session
                    && Path::new(b["workspace"].as_str().unwrap_or_default()) == ours)
        });
        Ok(other.map(|b| {
            format!(
                "{} (workspace {})",
                b["name"].as_str().unwrap_or("?"),
                b["workspace"].as_str().unwrap_or("?")
            )
        }))
    }

    /// The helper `connect.html` tab stays in the background: if it is the
    /// current tab, a new one takes its place. Its output is never shown.
    pub fn sanitize_tabs(&self) {
        let session = format!("-s={}", self.session);
        let Some(list) = self.run("playwright-cli tab-list", &[&session, "tab-list"]) else {
            return;
        };
        let text = list.stdout_text();
        let current_is_helper = text
            .lines()
            .find(|l| l.contains("(current)"))
            .is_some_and(|l| l.contains("/connect.html"));
        if current_is_helper {
            self.run("playwright-cli tab-new", &[&session, "tab-new"]);
        }
    }
}
