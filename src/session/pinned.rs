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
        let ours = fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        other_attached_in(&listed.stdout, self.session, &ours).map_err(|why| {
            Error::refused(
                Exit::Failure,
                format!(
                    "the list of open Playwright sessions is not what the pinned CLI writes \
                     ({why}); nothing was attached. Run `my-chrome doctor`"
                ),
            )
        })
    }
}

/// Another attached session than `session` of `ours` in the output of
/// `list --all --json`, by name. Output that is not such a list is an
/// error, never "no other session": another attach may be hiding behind it.
fn other_attached_in(listing: &[u8], session: &str, ours: &Path) -> Result<Option<String>, String> {
    let doc: serde_json::Value =
        serde_json::from_slice(listing).map_err(|e| format!("not JSON: {e}"))?;
    let browsers = doc["browsers"].as_array().ok_or("no list of browsers")?;
    for browser in browsers {
        let name = browser["name"].as_str().ok_or("a browser without a name")?;
        let workspace = browser["workspace"]
            .as_str()
            .ok_or("a browser without a workspace")?;
        let attached = browser["attached"]
            .as_bool()
            .ok_or("a browser without its attached state")?;
        if attached && !(name == session && Path::new(workspace) == ours) {
            return Ok(Some(format!("{name} (workspace {workspace})")));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_that_is_not_the_clis_is_refused_not_taken_for_empty() {
        let ours = Path::new("/home/u/.cache/my-chrome");
        let entry = |name: &str, workspace: &str, attached: bool| serde_json::json!({"name": name, "workspace": workspace, "attached": attached});
        let list = |browsers: Vec<serde_json::Value>| {
            serde_json::json!({ "browsers": browsers })
                .to_string()
                .into_bytes()
        };
        let ours_text = ours.display().to_string();
        assert_eq!(other_attached_in(&list(vec![]), "mychrome", ours), Ok(None));
        let only_ours = list(vec![
            entry("mychrome", &ours_text, true),
            entry("other", "/w", false),
        ]);
        assert_eq!(other_attached_in(&only_ours, "mychrome", ours), Ok(None));
        let another = list(vec![entry("mychrome", "/elsewhere", true)]);
        assert_eq!(
            other_attached_in(&another, "mychrome", ours),
            Ok(Some("mychrome (workspace /elsewhere)".into()))
        );
        for bad in [
            b"".to_vec(),
            b"Error: something went wrong".to_vec(),
            b"{}".to_vec(),
            b"{\"browsers\": {}}".to_vec(),
            b"[]".to_vec(),
            list(vec![serde_json::json!({"name": "x", "workspace": "/w"})]),
            list(vec![
                serde_json::json!({"name": "x", "attached": "yes", "workspace": "/w"}),
            ]),
            list(vec![
                serde_json::json!({"workspace": "/w", "attached": true}),
            ]),
        ] {
            let text = String::from_utf8_lossy(&bad).into_owned();
            assert!(other_attached_in(&bad, "mychrome", ours).is_err(), "{text}");
        }
    }
}
