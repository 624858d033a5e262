//! The exit codes, and the one table of them ([`table`]: each code's
//! number, name and meaning), which README's "Exit codes" shows word for
//! word (`tests/docs.rs`) and docs/DESIGN.md links. A leaf: every module's
//! error names its code with this, and imports nothing back.

use nix::sys::signal::Signal;

/// An exit code; what each means is [`Exit::meaning`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Failure,
    Usage,
    Token,
    NoSession,
    Chrome,
    Security,
    Busy,
    TabGone,
    Sandboxed,
    Timeout,
    /// 128 + the signal number.
    Signal(i32),
    /// A forwarded command's own status, passed through.
    Code(i32),
}

/// One row of the exit-code table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// `0`, `1`, …, `124`, `128+N`.
    pub code: String,
    pub name: &'static str,
    pub meaning: &'static str,
}

/// The exit-code table, in order: 0, every code of [`Exit::DOCUMENTED`],
/// then 128+N. README's "Exit codes" is this, row for row.
pub fn table() -> Vec<Row> {
    let mut rows = vec![Row {
        code: "0".into(),
        name: "Success",
        meaning: "done",
    }];
    rows.extend(Exit::DOCUMENTED.iter().map(|exit| Row {
        code: exit.code().to_string(),
        name: exit.name(),
        meaning: exit.meaning(),
    }));
    let signal = Exit::Signal(0);
    rows.push(Row {
        code: "128+N".into(),
        name: signal.name(),
        meaning: signal.meaning(),
    });
    rows
}

impl Exit {
    /// Every code README's table lists, besides 0 and 128+N (`Signal`);
    /// `Code` passes a forwarded command's own status through.
    pub const DOCUMENTED: [Exit; 10] = [
        Exit::Failure,
        Exit::Usage,
        Exit::Token,
        Exit::NoSession,
        Exit::Chrome,
        Exit::Security,
        Exit::Busy,
        Exit::TabGone,
        Exit::Sandboxed,
        Exit::Timeout,
    ];

    pub fn code(self) -> i32 {
        match self {
            Exit::Failure => 1,
            Exit::Usage => 2,
            Exit::Token => 3,
            Exit::NoSession => 4,
            Exit::Chrome => 5,
            Exit::Security => 6,
            Exit::Busy => 7,
            Exit::TabGone => 8,
            Exit::Sandboxed => 9,
            Exit::Timeout => 124,
            Exit::Signal(n) => 128 + n,
            Exit::Code(n) => n,
        }
    }

    /// The variant's name, as the table shows it.
    pub fn name(self) -> &'static str {
        match self {
            Exit::Failure => "Failure",
            Exit::Usage => "Usage",
            Exit::Token => "Token",
            Exit::NoSession => "NoSession",
            Exit::Chrome => "Chrome",
            Exit::Security => "Security",
            Exit::Busy => "Busy",
            Exit::TabGone => "TabGone",
            Exit::Sandboxed => "Sandboxed",
            Exit::Timeout => "Timeout",
            Exit::Signal(_) => "Signal",
            Exit::Code(_) => "Code",
        }
    }

    /// What the code means: every place that produces it, said once.
    pub fn meaning(self) -> &'static str {
        match self {
            Exit::Failure => {
                "operational failure: a check could not run, a child failed, setup refused while \
                 the CLI is in use, the runtime removed by `uninstall` while the command waited"
            }
            Exit::Usage => {
                "usage error, bad configuration, blocked command, no trusted node, unsupported or \
                 missing helper (run `my-chrome setup`), a tab past the agent's or the session's \
                 limit; no agent name given where none can be derived (the caller's ancestry ends \
                 at pid 1)"
            }
            Exit::Token => {
                "token missing or invalid, or the keyring unavailable, locked or refusing"
            }
            Exit::NoSession => {
                "no owned session, or a stale one: a fresh `connect` needs approval; also a \
                 session that ended by itself at the user's idle or lifetime limit (the message \
                 says which); also a browser command whose session ended under it (its browser or \
                 daemon went away: it did not finish as asked, whatever its reply says; the error \
                 it reported is printed — the text reply's `### Error` part, or the daemon's own \
                 error — and nothing else, since no list after it tells whose tab the rest \
                 describes: the agent's tab may have closed first, as when the user quits the \
                 browser)"
            }
            Exit::Chrome => {
                "Chrome missing, ambiguous, or changed before attach; also no running browser to \
                 ask the user in"
            }
            Exit::Security => {
                "security fault: unsafe runtime or helper directory (or, for `uninstall`, \
                 anything in the runtime that is another user's or a mount), a Chrome executable \
                 others could replace, PID set changed, token exposed in a process, a state file \
                 that is not ours (a lease file, tab book or settings file; a tab book also when \
                 empty or of another session), an answer to the consent page that did not come \
                 from it (or the page opened a second time)"
            }
            Exit::Busy => {
                "another agent's, or the user's to give: the user did not confirm a request in \
                 the browser (refused, closed the page, or no answer within the bound), or what \
                 they confirmed changed meanwhile; a registered agent name without its key, or \
                 with a key that is not its own (or of a name that ended); a file or folder \
                 another agent's command made, named in a command (read, replaced or written \
                 into); its command in flight past the wait bound (an abandoned one the daemon \
                 still runs included), the tab named (another's, held for another, the user's), \
                 tabs a browser-wide command would reach, or browser-wide state it started \
                 (tracing, routes, an offline network)"
            }
            Exit::TabGone => {
                "the agent's tab went (closed by the user or its page, no longer told apart, or \
                 held for it: `tab-claim` takes it again): said once, nothing ran; or it closed \
                 during the command, whose reply (about another's tab then, errors included: \
                 they can name its address) and files are withheld"
            }
            Exit::Sandboxed => {
                "an agent host's sandbox (Codex's, Claude Code's) keeps my-chrome from writing \
                 its runtime or opening Unix sockets: nothing ran and nothing changed; the \
                 message names what is blocked and the host's setting (README, \"Inside an agent \
                 host's sandbox\"; invariant 19)"
            }
            Exit::Timeout => {
                "a bounded step timed out (its whole process group was killed), or the session's \
                 daemon does not answer (nothing within 8 s for all of a command's talk with it \
                 besides the command itself; `ensure` and `disconnect`'s probe: or \
                 `MY_CHROME_COMMAND_TIMEOUT_SECS` when smaller): `my-chrome disconnect` stops \
                 that daemon, and so does the `connect` that started it, when it stops answering \
                 right after the attach"
            }
            Exit::Signal(_) => {
                "interrupted by signal N (130 for Ctrl-C), at any step, after killing what it \
                 started and cleaning up"
            }
            Exit::Code(_) => "a forwarded command's own status, passed through",
        }
    }
}

impl From<Signal> for Exit {
    fn from(signal: Signal) -> Exit {
        Exit::Signal(signal as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixed_code_is_documented() {
        // Each variant placed by name: a new one fails to compile here
        // until it is, and a fixed one must then be in DOCUMENTED.
        let fixed = |exit: Exit| match exit {
            Exit::Failure
            | Exit::Usage
            | Exit::Token
            | Exit::NoSession
            | Exit::Chrome
            | Exit::Security
            | Exit::Busy
            | Exit::TabGone
            | Exit::Sandboxed
            | Exit::Timeout => true,
            Exit::Signal(_) | Exit::Code(_) => false,
        };
        let every = [
            Exit::Failure,
            Exit::Usage,
            Exit::Token,
            Exit::NoSession,
            Exit::Chrome,
            Exit::Security,
            Exit::Busy,
            Exit::TabGone,
            Exit::Sandboxed,
            Exit::Timeout,
            Exit::Signal(2),
            Exit::Code(3),
        ];
        for exit in every {
            assert_eq!(Exit::DOCUMENTED.contains(&exit), fixed(exit), "{exit:?}");
        }
        // Nothing else, and no code twice.
        assert!(Exit::DOCUMENTED.iter().all(|e| fixed(*e)));
        let codes: std::collections::BTreeSet<i32> =
            Exit::DOCUMENTED.iter().map(|e| e.code()).collect();
        assert_eq!(codes.len(), Exit::DOCUMENTED.len());
    }

    #[test]
    fn a_signal_exits_with_128_plus_its_number() {
        assert_eq!(Exit::from(Signal::SIGINT).code(), 130);
        assert_eq!(Exit::from(Signal::SIGTERM).code(), 143);
    }
}
