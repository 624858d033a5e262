//! A page command run on the agent's own tab, already the daemon's
//! current one: the holds it starts recorded before it is sent, stepping
//! aside for another agent's command once the daemon has started it
//! (docs/DESIGN.md, "A command steps aside"), the tabs read again after
//! it, and its reply shown while that tab is the agent's.

use std::path::Path;
use std::time::Duration;

use super::forwarded::{self, ForwardError, Forwarded, Outcome, Sent};
use super::reply;
use super::start::Reopen;
use crate::config::Config;
use crate::daemon::request::Mode;
use crate::daemon::{self, DaemonError, Reply, Unanswered};
use crate::error::Error;
use crate::lease::HeldLease;
use crate::pinned_commands::{CliCommand, Scope};
use crate::policy::holds::HoldChange;
use crate::session_output;
use crate::staged_files::Outputs;
use crate::tabs::book::During;
use crate::tabs::proof;
use crate::tabs::{Desk, TabsError};

/// Runs `sent` on the agent's tab `id`, already the daemon's current one,
/// and shows its reply while that tab is the agent's.
pub(super) fn run_on(
    config: &Config,
    desk: &mut Desk,
    held: &mut HeldLease,
    (socket, asked, sent): (&Path, &Forwarded, &Sent),
    id: u64,
    (outputs, reopen): (Outputs, &Reopen),
) -> Result<Outcome, ForwardError> {
    let hold = asked.line.hold;
    // State a command may leave on for every tab holds from before it is
    // sent: a command that times out, fails or is killed may have started
    // it all the same.
    if let Some(HoldChange::Starts(kind)) = hold {
        let agent = desk.agent.clone();
        desk.book.start_hold(&agent, kind, crate::lease::now_ms());
        desk.save()?;
    }
    let during = During {
        agent: &desk.agent.clone(),
        acted_on: Some(id),
        closed: None,
        // A tab that appears while another agent's command past its bound
        // may still run could be of that command's page: the user's. So is
        // one that appears while `tab-new` loads its address, as when it
        // was one tab command: a popup the browser reports late (once its
        // first load commits) may be of a page already closed, another
        // agent's (an attack on the split).
        opens: !sent.tab_command && sent.entry.opens_tabs && !desk.others_late(),
        moves_current: false,
    };
    let any_late = desk.any_late();
    let mut before = session_output::Before::read(desk.runtime().root(), any_late);
    // A command on its own tab alone may step aside for another agent's
    // in line once the daemon has started it (docs/DESIGN.md, "A command
    // steps aside").
    let aside = Aside {
        may: sent.entry.scope == Scope::Page && hold.is_none(),
        after: Aside::after(sent.entry),
        sent: std::time::Instant::now(),
        since: sent.since,
    };
    let mut stood_aside = false;
    let answer = {
        let desk: &mut Desk = desk;
        let mut waiting = |connection: &std::os::unix::net::UnixStream| {
            if !stood_aside && aside.due(connection, held) {
                // What the others read meanwhile is the book as it is now.
                stood_aside = desk.save().is_ok() && {
                    before.step_aside();
                    held.step_aside(aside.since).is_ok()
                };
            }
        };
        daemon::run_command(
            socket,
            &sent.request.bytes,
            asked.bound,
            config.reply_limit,
            &mut waiting,
        )
    };
    // The desk read before it stood aside is never saved again, whatever
    // happens from here: the others' commands wrote the book meanwhile.
    if stood_aside {
        desk.went_stale();
    }
    let reply = match answer {
        Ok(reply) => reply,
        Err(Unanswered::Failed(DaemonError::Unreachable(why))) => {
            return Err(super::start::stale(why).into());
        }
        Err(Unanswered::Failed(e)) => return Err(e.into()),
        // Past its bound (or interrupted): what it did so far is read in
        // now, as the command's own, when the daemon still answers (not
        // without the turn: the others' commands run); its output files
        // stay private (they go with its folder).
        Err(Unanswered::Abandoned { error, connection }) => {
            if !stood_aside {
                let _ = desk.finish(&during);
            }
            outputs.discard();
            return Ok(Outcome::Abandoned { connection, error });
        }
    };
    // Answered while it stood aside: the turn again, in line, and the
    // tabs as the others' commands left them.
    if stood_aside {
        if let Err(e) = held.retake(config.lease_wait) {
            outputs.discard();
            return Err(Error::from(e).into());
        }
        *desk = reopen.open(held)?;
    }
    // What its reply proves about the tabs saves listing them again
    // (src/tabs/proof.rs); when it proves nothing, they are listed.
    let text_mode = sent.request.mode() == Mode::Text;
    let after = desk
        .after(proof::of_reply(&reply, text_mode), &during)
        .map(|_| ());
    let ran = matches!(
        &reply,
        Reply::Text {
            is_error: false,
            ..
        }
    );
    if let (Ok(()), true, Some(HoldChange::Ends(kind))) = (&after, ran, hold) {
        let agent = desk.agent.clone();
        desk.book.end_hold(&agent, kind);
    }
    // Its reply is of the tab it ran on (`tabs::stay`): shown while that
    // tab is the agent's. (Without stepping aside, that tab is the
    // current one.)
    let shown = if stood_aside {
        desk.is_own(id)
    } else {
        desk.current_is_own()
    };
    match after {
        Ok(()) => reply::print_reply(
            desk,
            reply,
            asked,
            (sent.tab_command, shown),
            (outputs, &before),
        )
        .map(|()| Outcome::Done),
        // The session went away under the command (its browser quit or
        // died, or its daemon did): it did not finish as asked, whatever
        // the reply says: exit 4, as for any session that is gone. No list
        // after it tells whose tab the reply describes (the agent's tab may
        // have closed first, as when the user quits the browser): only the
        // error it reports is shown, never a page.
        Err(TabsError::Daemon(DaemonError::Unreachable(_))) => {
            reply::print_error_only(desk, &reply, asked.mode())?;
            Err(ended_during(asked.name()).into())
        }
        // Without the list after it, nothing tells whose tab the reply
        // describes: none of it is shown.
        Err(e) => Err(forwarded::unreachable_as_stale(e).into()),
    }
}

/// When a command steps aside for another agent's in line.
struct Aside {
    /// It may: it runs on its own tab alone, and starts or ends nothing
    /// that reaches every tab.
    may: bool,
    /// How long it runs first (`Aside::after`).
    after: Duration,
    sent: std::time::Instant,
    /// When it was sent, for `late.json`.
    since: u64,
}

/// How long a command runs before it may step aside: most end sooner, and
/// stepping aside costs them a wait for the turn and a list of the tabs.
const ASIDE_AFTER: Duration = Duration::from_millis(250);

/// The pinned daemon's action timeout (Playwright's `action: 5e3`, which
/// my-chrome's attach config leaves as it is), and a margin for a daemon
/// that read the request a moment before it started the action.
const IN_FRONT_ASIDE_AFTER: Duration = Duration::from_millis(6500);

impl Aside {
    /// How long a command runs before it may step aside. One that waits
    /// for its tab's frames (`in_front`) runs past the daemon's action
    /// timeout first: Chromium draws only the tab in front, and the next
    /// agent's command brings its own there (a `click` that stepped aside
    /// at 250 ms then waited out those 5 s for its element to hold still:
    /// the real extension, in a CI pre-check). What the daemon does after
    /// the action (its settle, a load, the snapshot) needs no frames, and
    /// a page can draw it out to the bound, so it steps aside then.
    fn after(entry: &CliCommand) -> Duration {
        if entry.in_front {
            IN_FRONT_ASIDE_AFTER
        } else {
            ASIDE_AFTER
        }
    }

    /// Whether to step aside now: it may, ran a moment, the daemon has
    /// read all of it (so it started, on its tab), and another agent's
    /// command waits in line.
    fn due(&self, connection: &std::os::unix::net::UnixStream, held: &HeldLease) -> bool {
        self.may
            && self.sent.elapsed() >= self.after
            && daemon::started(connection) == Some(true)
            && held.others_waiting()
    }
}

/// The session went away while the command ran. Exit 4.
fn ended_during(command: &str) -> Error {
    crate::session::SessionError::Stale(format!(
        "the session ended during the command: `{command}`'s browser or the session's daemon \
         went away, so it did not finish as asked (the error it reported, if any, is above; \
         nothing of a page is shown)"
    ))
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pinned_commands::find;

    #[test]
    fn a_command_that_waits_for_frames_steps_aside_only_past_the_action_timeout() {
        let after = |name: &str| Aside::after(find(name).unwrap());
        for name in [
            "eval", "goto", "snapshot", "fill", "type", "press", "reload",
        ] {
            assert_eq!(after(name), ASIDE_AFTER, "{name}");
        }
        for name in [
            "click",
            "dblclick",
            "hover",
            "drag",
            "drop",
            "check",
            "uncheck",
            "screenshot",
        ] {
            assert_eq!(after(name), IN_FRONT_ASIDE_AFTER, "{name}");
        }
        assert!(IN_FRONT_ASIDE_AFTER > Duration::from_secs(5));
    }
}
