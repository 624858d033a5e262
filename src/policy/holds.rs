//! Browser-wide state a command leaves on for every tab (docs/DESIGN.md,
//! invariant 14): while an agent's tracing, routes or offline network is
//! on, no other agent's command runs. Which command starts or ends which,
//! read from the line's one parsed form (`line.rs`), what the holds are
//! once it did, and whom they keep out. The tab book stores them. No I/O.

use serde::{Deserialize, Serialize};

use super::line::Line;

pub use crate::pinned_commands::{HoldChange, HoldKind};

impl HoldKind {
    /// Its one word, as the book stores it.
    pub fn word(self) -> &'static str {
        match self {
            HoldKind::Tracing => "tracing",
            HoldKind::Routes => "routes",
            HoldKind::Network => "network",
        }
    }

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

/// Browser-wide state an agent started: while it lasts, no other agent's
/// command runs (it would record or rewrite that agent's pages).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hold {
    pub agent: String,
    pub what: HoldKind,
    /// When it was recorded, in milliseconds since the Unix epoch (0: a
    /// book from before this was kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub since: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The hold that keeps `agent`'s command out, whatever the command: the
/// first another agent started. Its own never do: it ends them itself.
pub fn keeping_out<'a>(holds: &'a [Hold], agent: &str) -> Option<&'a Hold> {
    holds.iter().find(|h| h.agent != agent)
}

/// `holds` once `agent`'s command made `change` at `now`: one hold of a
/// kind per agent; an agent ends only its own.
pub fn apply(holds: &mut Vec<Hold>, agent: &str, change: HoldChange, now: u64) {
    match change {
        HoldChange::Starts(kind) => {
            if !holds.iter().any(|h| h.agent == agent && h.what == kind) {
                holds.push(Hold {
                    agent: agent.into(),
                    what: kind,
                    since: now,
                });
            }
        }
        HoldChange::Ends(kind) => holds.retain(|h| !(h.agent == agent && h.what == kind)),
    }
}

/// The daemon request that ends a hold of `kind` for every tab, whoever
/// started it (`route`'s routes are all one agent's: none runs beside it).
pub fn ending_words(kind: HoldKind) -> &'static [&'static str] {
    match kind {
        HoldKind::Tracing => &["tracing-stop"],
        HoldKind::Routes => &["unroute"],
        HoldKind::Network => &["network-state-set", "online"],
    }
}

/// What `line` does to a hold, as the daemon will read it (read with the
/// line: its command's rule, applied to its first argument).
pub fn change(line: &Line) -> Option<HoldChange> {
    line.hold
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change_of(line: &str) -> Option<HoldChange> {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        change(&Line::read(&words, "mychrome").unwrap())
    }

    /// The request that ends a hold of each kind is read as ending it.
    #[test]
    fn each_kinds_ending_words_end_it() {
        for kind in [HoldKind::Tracing, HoldKind::Routes, HoldKind::Network] {
            let words: Vec<String> = ending_words(kind).iter().map(|w| w.to_string()).collect();
            let line = Line::read(&words, "mychrome").unwrap();
            assert_eq!(change(&line), Some(HoldChange::Ends(kind)), "{words:?}");
        }
    }

    /// A kind's word is the one the book stores it under, which the log,
    /// `agents` and the ending's question show.
    #[test]
    fn each_kind_is_shown_by_the_word_the_book_stores() {
        for kind in [HoldKind::Tracing, HoldKind::Routes, HoldKind::Network] {
            let stored = serde_json::to_string(&kind).unwrap();
            assert_eq!(stored, format!("\"{}\"", kind.word()));
        }
    }

    /// A hold keeps when it began through a save; one from a book kept
    /// before that was recorded reads as 0 and is saved as it was.
    #[test]
    fn a_hold_keeps_its_start_and_an_old_one_stays_without_it() {
        let hold = |since| Hold {
            agent: "ann".into(),
            what: HoldKind::Tracing,
            since,
        };
        let saved = serde_json::to_string(&hold(1_700_000_000_000)).unwrap();
        assert!(saved.contains("\"since\":1700000000000"), "{saved}");
        assert_eq!(
            serde_json::from_str::<Hold>(&saved).unwrap(),
            hold(1_700_000_000_000)
        );
        let old = r#"{"agent":"ann","what":"tracing"}"#;
        assert_eq!(serde_json::from_str::<Hold>(old).unwrap(), hold(0));
        assert_eq!(serde_json::to_string(&hold(0)).unwrap(), old);
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

    fn hold(agent: &str, what: HoldKind) -> Hold {
        Hold {
            agent: agent.into(),
            what,
            since: 0,
        }
    }

    #[test]
    fn another_agents_hold_keeps_an_agent_out_and_its_own_do_not() {
        use HoldKind::{Network, Routes, Tracing};
        assert_eq!(keeping_out(&[], "a"), None);
        let holds = [hold("a", Tracing), hold("b", Routes), hold("c", Network)];
        assert_eq!(keeping_out(&holds, "a"), Some(&holds[1]), "the first other");
        assert_eq!(keeping_out(&holds, "b"), Some(&holds[0]));
        assert_eq!(keeping_out(&holds, "d"), Some(&holds[0]));
        assert_eq!(keeping_out(&holds[..1], "a"), None, "its own only");
        assert_eq!(keeping_out(&holds[..1], "b"), Some(&holds[0]));
    }

    #[test]
    fn a_hold_starts_once_per_agent_and_kind_and_ends_only_as_its_own() {
        use HoldChange::{Ends, Starts};
        use HoldKind::{Routes, Tracing};
        let mut holds = Vec::new();
        apply(&mut holds, "a", Starts(Tracing), 0);
        apply(&mut holds, "a", Starts(Routes), 0);
        apply(&mut holds, "a", Starts(Routes), 0);
        apply(&mut holds, "b", Starts(Routes), 0);
        assert_eq!(
            holds,
            [hold("a", Tracing), hold("a", Routes), hold("b", Routes)]
        );
        // b's end ends b's routes, never a's; an end of none changes none.
        apply(&mut holds, "b", Ends(Routes), 0);
        assert_eq!(holds, [hold("a", Tracing), hold("a", Routes)]);
        apply(&mut holds, "b", Ends(Tracing), 0);
        assert_eq!(holds, [hold("a", Tracing), hold("a", Routes)]);
        apply(&mut holds, "a", Ends(Tracing), 0);
        assert_eq!(holds, [hold("a", Routes)]);
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
