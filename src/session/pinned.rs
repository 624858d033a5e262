//! The pinned CLI as my-chrome runs it for what only its client does
//! (`list`, `detach`): cleared environment, cwd = the runtime, token-free,
//! bounded, its output captured and never shown.

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::child::{ChildCommand, ChildEnv, ChildError, Finished};
use crate::error::Error;
use crate::exit::Exit;
use crate::helper::Helper;
use crate::helper::node::Node;
use crate::runtime::Runtime;

/// Bound on housekeeping commands (invariant 10).
pub const HOUSEKEEPING_TIMEOUT: Duration = Duration::from_secs(8);

pub struct PinnedCli<'a> {
    pub node: &'a Node,
    pub helper: &'a Helper,
    pub env: &'a ChildEnv,
    pub runtime: &'a Runtime,
    pub session: &'a str,
}

impl PinnedCli<'_> {
    /// Runs a housekeeping command, its output captured (never shown). An
    /// interrupt or a timeout is an error, as is a failure to start.
    pub fn run(&self, what: &str, args: &[&str]) -> Result<Finished, ChildError> {
        ChildCommand::new(
            what,
            &self.node.path,
            self.runtime.root(),
            HOUSEKEEPING_TIMEOUT,
        )
        .arg(self.helper.entry())
        .args(args)
        .run(self.env)
    }

    /// `detach` of our session, never with a token in sight. It runs even
    /// after SIGINT, SIGTERM or SIGHUP: it is the cleanup they ask for.
    pub fn detach(&self) -> bool {
        let session = format!("-s={}", self.session);
        ChildCommand::new(
            "playwright-cli detach",
            &self.node.path,
            self.runtime.root(),
            HOUSEKEEPING_TIMEOUT,
        )
        .arg(self.helper.entry())
        .args([session.as_str(), "detach"])
        .despite_signals()
        .run(self.env)
        .is_ok_and(|f| f.status.success())
    }

    /// Another attached Chrome session in any workspace, by name.
    pub fn other_attached(&self, workspace: &Path) -> Result<Option<String>, Error> {
        let listed = self.run("playwright-cli list", &["list", "--all", "--json"])?;
        if !listed.status.success() {
            return Err(Error::refused(
                Exit::Failure,
                "cannot list the open Playwright sessions; nothing was attached",
            ));
        }
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
}
