//! The documented exit codes (README, "Exit codes"; docs/DESIGN.md). A leaf:
//! every module's error names its code with this, and imports nothing back.

use nix::sys::signal::Signal;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// A check could not run, or a child failed.
    Failure,
    /// Usage error, blocked command, unsupported or missing helper.
    Usage,
    /// Token missing or invalid, or the token store unusable.
    Token,
    /// No owned session, or a stale one: a fresh `connect` needs approval.
    NoSession,
    /// Chrome missing, ambiguous, or changed.
    Chrome,
    /// Unsafe runtime or helper directory, or another security fault.
    Security,
    /// Another agent's: its command in flight past the wait bound, its
    /// tab, or tabs a browser-wide command would reach.
    Busy,
    /// The agent's tab went (closed by the user or its page, or no longer
    /// told apart): the command ran nothing.
    TabGone,
    /// An agent host's sandbox keeps my-chrome from its runtime or its
    /// sockets: nothing ran, nothing changed.
    Sandboxed,
    /// A bounded step ran out of time.
    Timeout,
    /// Interrupted by a signal, after cleaning up: 128 + the signal number.
    Signal(i32),
    /// A forwarded command's own status, passed through.
    Code(i32),
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
