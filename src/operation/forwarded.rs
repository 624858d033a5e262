//! A forwarded command as one value ([`Forwarded`]): its line read once,
//! its command's table entry, the request the daemon gets (and `tab-new`'s
//! load of its address) and how long it may run; planned before the
//! session's turn and staged under it (`run` runs it).

use std::path::Path;
use std::time::Duration;

use crate::daemon::DaemonError;
use crate::daemon::request::{self, ClientOutput, Mode, Plan, Request};
use crate::error::{Error, lifts_core};
use crate::exit::Exit;
use crate::pinned_commands::CliCommand;
use crate::policy;
use crate::policy::line::Line;
use crate::runtime::Runtime;
use crate::staged_files::Outputs;
use crate::tabs::TabsError;

/// Why a forwarded command did not run, or ran and failed.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    /// What it met below it.
    #[error(transparent)]
    Core(Error),
    /// A command line the policy refuses.
    #[error(transparent)]
    Line(#[from] policy::Refusal),
    /// The command ran, or the pinned client refused it, and its output
    /// already said why: the exit status is the client's, nothing more is
    /// printed.
    #[error("exit status {}", .0.code())]
    Said(Exit),
}

impl ForwardError {
    pub fn exit(&self) -> Exit {
        match self {
            ForwardError::Core(e) => e.exit(),
            ForwardError::Line(e) => e.exit(),
            ForwardError::Said(exit) => *exit,
        }
    }
}

lifts_core!(ForwardError);

/// What the pinned client does with a forwarded line, decided before the
/// session's turn is taken: a refusal costs the agents waiting nothing.
pub enum Planned {
    /// The daemon runs it for the agent.
    Run(Box<Forwarded>),
    /// The client refuses it itself; this is what it prints, exit 1.
    Refused(ClientOutput),
    /// Help and version: the client prints them, the daemon is not asked.
    ClientOnly(Line),
}

/// A forwarded command, read once: every decision below is taken from it.
pub struct Forwarded {
    pub line: Line,
    /// Its command's table entry: all that is decided by its name.
    pub entry: &'static CliCommand,
    /// The request for the line (`tab-new`'s with a blank address).
    pub request: Request,
    /// `tab-new <url>`'s load of its address, once its blank tab is open:
    /// a page command of its own, which may step aside as any other (a
    /// slow page keeps nobody else out).
    pub load: Option<Request>,
    /// How long it may run: the user's bound, or the caller's if shorter.
    pub bound: Duration,
}

impl Forwarded {
    /// `line`, whose command is `entry`, as the pinned client run in `cwd`
    /// would send it.
    pub fn plan(
        line: Line,
        entry: &'static CliCommand,
        cwd: &Path,
        bound: Duration,
    ) -> Result<Planned, ForwardError> {
        let load = match line.load.clone().map(|goto| request::plan(goto, cwd)) {
            None => None,
            Some(Plan::Run(load)) => Some(load),
            Some(_) => {
                return Err(policy::Refusal::Unreadable(format!(
                    "`tab-new {}` could not be read as a load of that address; nothing was run",
                    line.argument(1).unwrap_or_default()
                ))
                .into());
            }
        };
        let request = match request::plan(line.sent.clone(), cwd) {
            Plan::Run(request) => request,
            Plan::Refused(said) => return Ok(Planned::Refused(said)),
            Plan::ObjectKey(option) => {
                return Err(policy::Refusal::ObjectKey {
                    command: entry.name.into(),
                    option,
                }
                .into());
            }
            Plan::ClientOnly => return Ok(Planned::ClientOnly(line)),
        };
        Ok(Planned::Run(Box::new(Forwarded {
            line,
            entry,
            request,
            load,
            bound,
        })))
    }

    /// Its output files put where nobody sees them first (under the turn,
    /// in `runtime`: earlier commands' leftovers go), no file it names
    /// another agent's than `me`, and its request's bytes made again for
    /// them (staging changes file names only: what the client would do
    /// with the line stays what it was).
    pub fn stage(
        &mut self,
        runtime: &Runtime,
        me: u64,
        cwd: &Path,
    ) -> Result<Outputs, ForwardError> {
        let (outputs, staged) = Outputs::stage(runtime, cwd, &self.request.args, me)?;
        self.request = self.request.with_args(staged);
        Ok(outputs)
    }

    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    /// How the daemon forms its reply, read from the request itself.
    pub fn mode(&self) -> Mode {
        self.request.mode()
    }
}

/// How a command that ran ended.
pub enum Outcome {
    /// Its reply was shown (or withheld, or an error said why).
    Done,
    /// It was sent, and not answered within its bound (or was interrupted):
    /// the daemon runs it on.
    Abandoned {
        connection: std::os::unix::net::UnixStream,
        error: DaemonError,
    },
}

/// What is sent to the daemon for the agent's line: the line's own
/// request, or `tab-new`'s load of its address.
pub(super) struct Sent<'a> {
    pub entry: &'static CliCommand,
    pub request: &'a Request,
    /// Its reply is a tab command's: the agent's tabs are its result.
    pub tab_command: bool,
    /// When it is sent, in milliseconds since the Unix epoch (for
    /// `late.json`, should it step aside).
    pub since: u64,
}

impl<'a> Sent<'a> {
    /// `request` for `entry`, sent now.
    pub fn now(entry: &'static CliCommand, request: &'a Request, tab_command: bool) -> Sent<'a> {
        Sent {
            entry,
            request,
            tab_command,
            since: crate::lease::now_ms(),
        }
    }
}

/// An error opening the agent's desk: the session's daemon not answering
/// the tab list is a stale session, as for any command.
pub fn stale_unless_listed(e: Error) -> ForwardError {
    match e {
        Error::Tabs(e) => unreachable_as_stale(e).into(),
        other => other.into(),
    }
}

/// A turn without a registered name: no files are staged for nobody.
pub fn nameless() -> crate::identity::IdentityError {
    crate::identity::IdentityError::Nameless {
        why: "its name is not registered in the session".into(),
    }
}

/// The session's daemon did not answer the tab list: stale, as for any
/// command.
pub(super) fn unreachable_as_stale(e: TabsError) -> Error {
    match e {
        TabsError::Daemon(DaemonError::Unreachable(why)) => super::start::stale(why),
        other => other.into(),
    }
}
