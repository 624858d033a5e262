//! The pinned CLI as my-chrome runs it for what only its client does
//! (`detach`): cleared environment, cwd = the runtime, token-free, bounded,
//! its output captured and never shown.

use std::time::Duration;

use crate::child::{ChildCommand, ChildEnv};
use crate::helper::Helper;
use crate::helper::node::Node;
use crate::runtime::Runtime;

/// Bound on housekeeping commands (invariant 10).
pub const HOUSEKEEPING_TIMEOUT: Duration = Duration::from_secs(8);

/// The housekeeping one command may do with the daemon, in all: 8 s, or
/// the command bound when the user set a smaller one.
pub fn housekeeping(command_timeout: Duration) -> crate::daemon::Housekeeping {
    crate::daemon::Housekeeping::new(HOUSEKEEPING_TIMEOUT.min(command_timeout))
}

pub struct PinnedCli<'a> {
    pub node: &'a Node,
    pub helper: &'a Helper,
    pub env: &'a ChildEnv,
    pub runtime: &'a Runtime,
    pub session: &'a str,
}

impl PinnedCli<'_> {
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
}
