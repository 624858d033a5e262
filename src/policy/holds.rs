//! Browser-wide state a command leaves on for every tab (docs/DESIGN.md,
//! invariant 14): while an agent's tracing, routes or offline network is
//! on, no other agent's command runs. Which command starts or ends which,
//! read from the line's one parsed form (`line.rs`). No I/O.

use serde::{Deserialize, Serialize};

use super::line::Line;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HoldKind {
    /// `tracing-start` (records every tab) until `tracing-stop`.
    Tracing,
    /// `route` (rewrites every tab's requests) until a bare `unroute`.
    Routes,
    /// `network-state-set offline` until `network-state-set online`.
    Network,
}

impl HoldKind {
    /// What it is and what ends it.
    pub fn describe(self) -> &'static str {
        match self {
            HoldKind::Tracing => "tracing running (it records every tab; `tracing-stop` ends it)",
            HoldKind::Routes => {
                "routes set (they rewrite every tab's requests; a bare `unroute` ends them)"
            }
            HoldKind::Network => {
                "the network set offline for every tab (`network-state-set online` ends it)"
            }
        }
    }
}

/// What a command does to a hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldChange {
    /// It may start one: the hold is recorded before it is sent, and stays
    /// whatever its reply (a command that timed out, failed or was killed
    /// may have started it all the same).
    Starts(HoldKind),
    /// It ends one, once its reply says it ran.
    Ends(HoldKind),
}

/// What `line` does to a hold, as the daemon will read it.
pub fn change(line: &Line) -> Option<HoldChange> {
    let kind_and_start = match (line.command()?, line.argument(1)) {
        ("tracing-start", _) => (HoldKind::Tracing, true),
        ("tracing-stop", _) => (HoldKind::Tracing, false),
        ("route", _) => (HoldKind::Routes, true),
        // A pattern removes some routes only; an empty one is no pattern
        // to the daemon (it removes them all).
        ("unroute", Some(pattern)) if !pattern.is_empty() => return None,
        ("unroute", _) => (HoldKind::Routes, false),
        ("network-state-set", Some("online")) => (HoldKind::Network, false),
        ("network-state-set", _) => (HoldKind::Network, true),
        _ => return None,
    };
    Some(match kind_and_start {
        (kind, true) => HoldChange::Starts(kind),
        (kind, false) => HoldChange::Ends(kind),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change_of(line: &str) -> Option<HoldChange> {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        change(&Line::read(&words, "mychrome").unwrap())
    }

    #[test]
    fn each_command_starts_or_ends_its_hold_as_the_daemon_reads_it() {
        use HoldChange::{Ends, Starts};
        use HoldKind::{Network, Routes, Tracing};
        for (line, expected) in [
            ("tracing-start", Some(Starts(Tracing))),
            ("tracing-stop", Some(Ends(Tracing))),
            ("route **/x", Some(Starts(Routes))),
            ("unroute", Some(Ends(Routes))),
            ("unroute **/x", None),
            // minimist: `-1` is an argument, so a pattern: routes stay.
            ("unroute -1", None),
            ("unroute -- --x", None),
            // `--_` gives an empty argument: no pattern to the daemon.
            ("unroute --_", Some(Ends(Routes))),
            ("network-state-set offline", Some(Starts(Network))),
            ("network-state-set online", Some(Ends(Network))),
            ("network-state-set -- online", Some(Ends(Network))),
            ("network-state-set Online", Some(Starts(Network))),
            ("--json network-state-set online", Some(Ends(Network))),
            ("snapshot", None),
        ] {
            assert_eq!(change_of(line), expected, "{line}");
        }
    }

    #[test]
    fn each_hold_says_what_it_is_and_what_ends_it() {
        assert_eq!(
            HoldKind::Tracing.describe(),
            "tracing running (it records every tab; `tracing-stop` ends it)"
        );
        assert_eq!(
            HoldKind::Routes.describe(),
            "routes set (they rewrite every tab's requests; a bare `unroute` ends them)"
        );
        assert_eq!(
            HoldKind::Network.describe(),
            "the network set offline for every tab (`network-state-set online` ends it)"
        );
    }
}
