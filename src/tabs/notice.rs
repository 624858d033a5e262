//! What an agent hears of its tabs: kept in the book (`tabs.json`) until
//! its next command shows it, and stored as what happened, not as words,
//! so rewording a message changes no state file. Worded only when printed
//! (`Display`). A book the release before wrote holds notices as words:
//! they read as `Said`, shown as they are. Pure: no I/O.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A tab as a notice names it: its id, and its label at the time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Named {
    pub id: u64,
    pub label: Option<String>,
}

impl fmt::Display for Named {
    /// `t3` or `t3 (cart)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.label {
            Some(label) => write!(f, "t{} ({label})", self.id),
            None => write!(f, "t{}", self.id),
        }
    }
}

/// Whose a tab in doubt is now, as the agent that had it hears it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Whose {
    /// Still the agent's own.
    Yours,
    /// Held for the agent: it may take it again.
    HeldForYou,
    /// The user's: only the user gives it.
    TheUsers,
}

/// What happened to an agent's tabs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Notice {
    /// The browser was connected again: the agent's tabs of the earlier
    /// session went with it.
    Reconnected { tabs: Vec<Named> },
    /// Tab `tab` appeared during `agent`'s command while other pages were
    /// open: the user's, who may give it.
    AppearedDuring { tab: u64, agent: String },
    /// The agent's tab closed, not by its command.
    Closed { tab: Named },
    /// The agent's tab went to another site (or closed, a new tab in its
    /// place): it is `now`, the user's.
    Moved { tab: Named, now: u64 },
    /// The agent's `tabs` could not be told apart from another: the tab
    /// is `now`, `whose`.
    InDoubt {
        tabs: Vec<Named>,
        now: u64,
        whose: Whose,
    },
    /// Tab `tab`, held for the agent, was given to agent `to` by the user.
    GivenAway { tab: u64, to: String },
    /// The agent had no command for the gone time: its `tabs` are held.
    Gone {
        gone_after_ms: u64,
        tabs: Vec<Named>,
    },
    /// A notice in words, as the release before stored it: shown as it is.
    #[serde(untagged)]
    Said(String),
}

/// `t1, t2 (cart)`, joined by `sep`.
fn names(tabs: &[Named], sep: &str) -> String {
    tabs.iter()
        .map(Named::to_string)
        .collect::<Vec<_>>()
        .join(sep)
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Reconnected { tabs } => write!(
                f,
                "the browser was connected again, and your tabs of the earlier session ({}) went \
                 with it",
                names(tabs, ", ")
            ),
            Notice::AppearedDuring { tab, agent: _ } => write!(
                f,
                "a tab appeared during your command (t{tab}), but other pages were open too \
                 (another agent's, the user's), any of which could have opened it: it is the \
                 user's; ask the user for it if you need it (giving a tab is the user's step)"
            ),
            Notice::Closed { tab } => {
                write!(f, "tab {tab} was closed (by the user, or by its page)")
            }
            Notice::Moved { tab, now } => write!(
                f,
                "the page of tab {tab} went to another site (or it closed and a tab that appeared \
                 took its place): it is now t{now}, the user's (only the user can give it: ask the \
                 user if you need it)"
            ),
            Notice::InDoubt { tabs, now, whose } => {
                write!(
                    f,
                    "{} could not be told apart from another tab after tabs changed, so it is \
                     now t{now}, ",
                    names(tabs, " or ")
                )?;
                match whose {
                    Whose::Yours => write!(f, "still yours"),
                    Whose::HeldForYou => {
                        write!(
                            f,
                            "held for you (`my-chrome tab-claim t{now}` takes it again)"
                        )
                    }
                    Whose::TheUsers => write!(f, "the user's (only the user can give it)"),
                }
            }
            Notice::GivenAway { tab, to } => write!(
                f,
                "tab t{tab}, held for you, was given to agent {to} by the user"
            ),
            Notice::Gone {
                gone_after_ms,
                tabs,
            } => write!(
                f,
                "you had no command for {} s, so your tabs ({}) are held for you: `my-chrome \
                 tab-claim <id>` takes one again",
                gone_after_ms / 1000,
                names(tabs, ", ")
            ),
            Notice::Said(words) => f.write_str(words),
        }
    }
}

/// Notices as one sentence's clauses: `a; b`.
pub fn joined(notices: &[Notice]) -> String {
    notices
        .iter()
        .map(Notice::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(id: u64, label: Option<&str>) -> Named {
        Named {
            id,
            label: label.map(String::from),
        }
    }

    /// Every kind, with the words the release before stored for it.
    fn every_kind() -> Vec<(Notice, &'static str)> {
        vec![
            (
                Notice::Reconnected {
                    tabs: vec![tab(1, None), tab(2, Some("cart"))],
                },
                "the browser was connected again, and your tabs of the earlier session (t1, t2 \
                 (cart)) went with it",
            ),
            (
                Notice::AppearedDuring {
                    tab: 3,
                    agent: "b".into(),
                },
                "a tab appeared during your command (t3), but other pages were open too (another \
                 agent's, the user's), any of which could have opened it: it is the user's; ask \
                 the user for it if you need it (giving a tab is the user's step)",
            ),
            (
                Notice::Closed {
                    tab: tab(2, Some("mine")),
                },
                "tab t2 (mine) was closed (by the user, or by its page)",
            ),
            (
                Notice::Moved {
                    tab: tab(2, None),
                    now: 4,
                },
                "the page of tab t2 went to another site (or it closed and a tab that appeared \
                 took its place): it is now t4, the user's (only the user can give it: ask the \
                 user if you need it)",
            ),
            (
                Notice::InDoubt {
                    tabs: vec![tab(3, None), tab(4, Some("x"))],
                    now: 6,
                    whose: Whose::Yours,
                },
                "t3 or t4 (x) could not be told apart from another tab after tabs changed, so it \
                 is now t6, still yours",
            ),
            (
                Notice::InDoubt {
                    tabs: vec![tab(2, None)],
                    now: 3,
                    whose: Whose::HeldForYou,
                },
                "t2 could not be told apart from another tab after tabs changed, so it is now t3, \
                 held for you (`my-chrome tab-claim t3` takes it again)",
            ),
            (
                Notice::InDoubt {
                    tabs: vec![tab(1, None)],
                    now: 3,
                    whose: Whose::TheUsers,
                },
                "t1 could not be told apart from another tab after tabs changed, so it is now t3, \
                 the user's (only the user can give it)",
            ),
            (
                Notice::GivenAway {
                    tab: 1,
                    to: "b".into(),
                },
                "tab t1, held for you, was given to agent b by the user",
            ),
            (
                Notice::Gone {
                    gone_after_ms: 4_999,
                    tabs: vec![tab(1, None), tab(5, Some("docs"))],
                },
                "you had no command for 4 s, so your tabs (t1, t5 (docs)) are held for you: \
                 `my-chrome tab-claim <id>` takes one again",
            ),
        ]
    }

    #[test]
    fn each_notice_is_worded_as_before() {
        for (notice, words) in every_kind() {
            assert_eq!(notice.to_string(), words, "{notice:?}");
            // What to ask the user, never the user's command.
            assert_eq!(crate::tabs::users_step_in(words), None, "{words}");
        }
    }

    #[test]
    fn a_notice_is_stored_as_what_happened_not_as_words() {
        let stored = |n: &Notice| serde_json::to_string(n).unwrap();
        assert_eq!(
            stored(&Notice::Closed {
                tab: tab(3, Some("cart"))
            }),
            r#"{"kind":"closed","tab":{"id":3,"label":"cart"}}"#
        );
        assert_eq!(
            stored(&Notice::InDoubt {
                tabs: vec![tab(2, None)],
                now: 3,
                whose: Whose::HeldForYou
            }),
            r#"{"kind":"in-doubt","tabs":[{"id":2,"label":null}],"now":3,"whose":"held-for-you"}"#
        );
        assert_eq!(
            stored(&Notice::Gone {
                gone_after_ms: 4_000,
                tabs: vec![]
            }),
            r#"{"kind":"gone","gone_after_ms":4000,"tabs":[]}"#
        );
        // Every kind reads back as itself, none as words.
        for (notice, _) in every_kind() {
            let read: Notice = serde_json::from_str(&stored(&notice)).unwrap();
            assert_eq!(read, notice);
        }
    }

    #[test]
    fn words_the_release_before_stored_are_shown_as_they_are() {
        let old = "tab t2 (mine) was closed (by the user, or by its page)";
        let read: Notice = serde_json::from_str(&serde_json::to_string(old).unwrap()).unwrap();
        assert_eq!(read, Notice::Said(old.into()));
        assert_eq!(read.to_string(), old);
        // Written back as they were read.
        assert_eq!(
            serde_json::to_string(&read).unwrap(),
            serde_json::to_string(old).unwrap()
        );
    }

    #[test]
    fn a_notice_of_no_known_kind_is_not_read() {
        for text in [
            r#"{"kind":"closed","tab":{"id":3,"label":null},"extra":1}"#,
            r#"{"kind":"exploded"}"#,
            r#"{"kind":"closed","tab":3}"#,
            "3",
        ] {
            assert!(serde_json::from_str::<Notice>(text).is_err(), "{text}");
        }
    }

    #[test]
    fn notices_join_as_clauses() {
        let two = [
            Notice::Said("one".into()),
            Notice::GivenAway {
                tab: 1,
                to: "b".into(),
            },
        ];
        assert_eq!(
            joined(&two),
            "one; tab t1, held for you, was given to agent b by the user"
        );
        assert_eq!(joined(&[]), "");
    }
}
