//! A session found ready, made sure of before it is used again (`ensure`,
//! and a `connect` that reuses it): no connect tab, whose address carries
//! the token, in it (taken out, or the session is not kept), and no
//! browser the daemon bound left open to another process.

use std::path::Path;

use super::SessionError;
use super::bound;
use super::connect_tab::{self, ConnectTabError};
use super::pinned::{self, PinnedCli};
use super::registry::SessionEntry;
use crate::daemon::DaemonError;
use crate::runtime::Runtime;

/// Makes sure of `entry`, the session found ready: its daemon works in
/// `cwd` (the runtime's real path). A session that cannot be made sure of
/// is detached (through `cli`) where it may show the token.
pub fn make_sure(
    entry: &SessionEntry,
    cwd: &Path,
    runtime: &Runtime,
    home: &Path,
    command_timeout: std::time::Duration,
    cli: &PinnedCli,
) -> Result<(), SessionError> {
    let budget = pinned::housekeeping(command_timeout);
    // Without a readable record of the session's token, any tab naming
    // the connect page counts (fail closed).
    let known = crate::redact::fingerprint::recorded(runtime).ok().flatten();
    connect_tab::close_all(&entry.socket_path, cwd, &budget, known.as_ref())
        .map_err(|e| not_kept(e, cli))?;
    // A session attached before the door was shut has it open.
    bound::close(runtime, home).map_err(|error| SessionError::Bound {
        error,
        detached: cli.detach(),
    })
}

/// A session whose connect tab could not be made sure of: its daemon gone
/// (stale), not answering, or its tabs not listed or the connect tab seen
/// (then detached: no agent may keep a session that may show the token).
fn not_kept(e: ConnectTabError, cli: &PinnedCli) -> SessionError {
    match e {
        ConnectTabError::Daemon(DaemonError::Unreachable(why)) => SessionError::unanswered(why),
        // Nothing answers: a detach would wait the same way (disconnect
        // stops such a daemon), and nothing is known of its tabs.
        ConnectTabError::Daemon(e) => SessionError::NoAnswer(e),
        ConnectTabError::Unlisted(why) => SessionError::Unlisted {
            why,
            detached: cli.detach(),
        },
        ConnectTabError::Seen(why) => SessionError::ConnectTab {
            why,
            detached: cli.detach(),
        },
    }
}
