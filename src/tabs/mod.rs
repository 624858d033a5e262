//! Agents side by side (docs/DESIGN.md, "Agents side by side"): every tab
//! of the session belongs to one agent or to the user, has an id that never
//! changes, and an agent's command runs on its own tab and sees its own
//! tabs only. The daemon keeps one current tab and names none: under the
//! session's turn (`lease`), a command lists the tabs, reads what changed
//! into the book (`book/`, `align.rs`), selects its tab, runs, and lists
//! them again; replies are rewritten to show the agent's tabs alone
//! (`listing.rs`).

pub mod align;
pub mod book;
pub mod listing;
pub mod notice;
pub mod number;
pub mod proof;
pub mod stay;
pub mod view;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::daemon::request::{Plan, Request, plan_words};
use crate::daemon::{self, DaemonError, Reply};
use crate::exit::Exit;
use crate::lease::{self, HeldLease, log::Event};
use crate::output::Printer;
use crate::policy::holds::Hold;
use crate::policy::tabs::TabRef;
use crate::runtime::{Runtime, RuntimeError, StateFile};
use align::Seen;
use book::{Book, During, HoldKind, Refused};
use listing::Shown;
use notice::Notice;
use proof::Proof;

/// A tab list is a few lines per tab: a reply past this is not one.
const LIST_LIMIT: usize = 4 << 20;
/// How often a failed tab list is asked for.
const LIST_TRIES: usize = 5;

#[derive(Debug, thiserror::Error)]
pub enum TabsError {
    #[error("{}", view::refusal(.agent, .refused, .own))]
    Refused {
        agent: String,
        refused: Refused,
        /// The agent's own list, rendered.
        own: String,
    },
    #[error(
        "nothing was run: since agent {agent}'s last command, {}. Your tabs now:\n{own}Name the \
         tab to use (`--tab <id>`), or open one (`my-chrome tab-new <url>`), and run the command \
         again",
        notice::joined(.notes)
    )]
    Changed {
        agent: String,
        /// Worded only here, when shown.
        notes: Vec<Notice>,
        own: String,
    },
    #[error(
        "`{command}` reaches every tab of the session (cookies, routes, network, storage, \
         tracing, video or the debugger), and agent(s) {} have tabs open in it; nothing was run. \
         Run it when they are done (`my-chrome agents` shows who has tabs), or ask the user",
        .agents.join(", ")
    )]
    OthersHaveTabs {
        command: String,
        agents: Vec<String>,
    },
    #[error("{}", view::given(.refused))]
    NotGiven { refused: Refused },
    #[error(
        "tab t{id} changed (its page or who holds it), or the agent it was asked for is another \
         now (its name registered anew), while the user was asked, so what they confirmed is not \
         what it is now; nothing was given. Ask the user again if it is still wanted"
    )]
    ChangedWhileAsked { id: u64 },
    #[error(
        "the session's tabs changed while this command was choosing its tab (a tab closed or \
         opened meanwhile); nothing was run. Run it again"
    )]
    Moved,
    #[error("the session's tabs could not be listed ({0}); nothing was run")]
    Unlisted(String),
    /// A `tab-new` after which no new tab is current: the daemon ran it,
    /// so "nothing was run" would be untrue.
    #[error(
        "no new tab is the agent's ({0}); a tab that appears later is the user's. Run \
         `my-chrome tab-list`, then the command again"
    )]
    NotOpened(String),
    #[error(
        "the session's daemon could not be made to keep an agent's command on the agent's own \
         tab (its `run-code` did not answer as the pinned @playwright/cli does); nothing was \
         run. Run `my-chrome doctor`, then `my-chrome connect` again"
    )]
    CurrentMoves,
    #[error(
        "the tab this command was for closed before or while it ran (by the user, or by its \
         page): it ran on no other tab, and none of the reply is shown. Your tabs now:\n{own}Name \
         one (`--tab <id>`) or open one (`my-chrome tab-new <url>`)"
    )]
    Withheld { own: String },
    #[error(
        "agent {agent} has {}; nothing was run. It ends when agent {agent} ends it, gives its \
         tabs back (`release`), or has had no command for the gone time (`my-chrome agents` \
         shows since when); run the command again then",
        .what.describe()
    )]
    Held { agent: String, what: book::HoldKind },
    #[error(
        "{}; nothing was opened. Close a tab of yours (`my-chrome tab-close <tab>`) or give \
         them back (`my-chrome release`), or ask the user to allow more",
        if .own >= &.caps.0 {
            format!("agent {agent} has {own} tabs, the most the user allows one agent ({})", .caps.0)
        } else {
            format!("the session holds {all} tabs, the most the user allows ({})", .caps.1)
        }
    )]
    TooManyTabs {
        agent: String,
        own: usize,
        all: usize,
        caps: (usize, usize),
    },
    #[error(
        "t{0} is the session's last tab: closing it would end the session, so it was not \
         closed. `my-chrome release` gives it back to the user instead"
    )]
    LastTab(u64),
    #[error(
        "t{0} was not closed: a tab after it in the session is another agent's or the user's, \
         and a page closing itself at that moment would have made my-chrome's close reach that \
         tab instead (the browser closes tabs by place). t{0} is the user's now, still open in \
         Chrome and out of every agent's hands; nothing else changed. Open another with \
         `my-chrome tab-new <url>` if you need one"
    )]
    LeftOpen(u64),
    #[error(
        "{path}: is not a tab book of my-chrome ({detail}); nothing was run. It records which \
         agent owns which tab, so no command guesses without it. Ask the user to recover it \
         (README, \"A broken tab book\"): a new session, or the book removed, after which every \
         tab is the user's until the user gives it to an agent"
    )]
    Malformed { path: PathBuf, detail: String },
    #[error(
        "{path}: describes another session than the one attached (not the one the last \
         `my-chrome connect` made); nothing was run. Ask the user to recover it (README, \"A \
         broken tab book\"): a new session, or the book removed, after which every tab is the \
         user's until the user gives it to an agent"
    )]
    OtherSession { path: PathBuf },
    #[error(
        "{path}: is not my-chrome's record of the next tab id; nothing was run. Remove it (rm \
         {path}) and run the command again: ids given before may then be given again, so ask \
         the agents to list their tabs (`my-chrome tab-list`) before naming one"
    )]
    BadIds { path: PathBuf },
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
    #[error(transparent)]
    Fingerprint(#[from] crate::redact::fingerprint::FingerprintError),
    #[error(transparent)]
    Daemon(#[from] DaemonError),
    #[error(transparent)]
    Lease(#[from] lease::LeaseError),
}

impl TabsError {
    pub fn exit(&self) -> Exit {
        match self {
            TabsError::Refused { refused, .. } => match refused {
                Refused::Foreign { .. } | Refused::UsersToGive(_) | Refused::Owned { .. } => {
                    Exit::Busy
                }
                Refused::Gone(_) | Refused::HeldForYou(_) => Exit::TabGone,
                Refused::Unknown(_) | Refused::Earlier(_) | Refused::LabelTaken(_) => Exit::Usage,
            },
            TabsError::Changed { .. } | TabsError::Withheld { .. } => Exit::TabGone,
            TabsError::Held { .. } => Exit::Busy,
            TabsError::NotGiven { refused } => match refused {
                Refused::Owned { .. } => Exit::Busy,
                Refused::Gone(_) => Exit::TabGone,
                Refused::Unknown(_)
                | Refused::Earlier(_)
                | Refused::Foreign { .. }
                | Refused::HeldForYou(_)
                | Refused::UsersToGive(_)
                | Refused::LabelTaken(_) => Exit::Usage,
            },
            TabsError::OthersHaveTabs { .. } | TabsError::ChangedWhileAsked { .. } => Exit::Busy,
            TabsError::Moved
            | TabsError::Unlisted(_)
            | TabsError::NotOpened(_)
            | TabsError::CurrentMoves => Exit::Failure,
            TabsError::LastTab(_) => Exit::Usage,
            TabsError::LeftOpen(_) => Exit::Busy,
            TabsError::TooManyTabs { .. } => Exit::Usage,
            TabsError::Malformed { .. }
            | TabsError::OtherSession { .. }
            | TabsError::BadIds { .. } => Exit::Security,
            TabsError::Runtime(e) => e.exit(),
            TabsError::Settings(e) => e.exit(),
            TabsError::Fingerprint(e) => e.exit(),
            TabsError::Daemon(e) => e.exit(),
            TabsError::Lease(e) => e.exit(),
        }
    }
}

/// The command, if any, that a message an agent reads hands it of the
/// user's steps: giving a tab, ending the session (every agent's holds
/// and tabs with it), removing the book, changing a setting. Such a
/// message says what to ask the user instead.
#[cfg(test)]
pub(crate) fn users_step_in(text: &str) -> Option<&'static str> {
    [
        "tab-give",
        "my-chrome setup",
        "my-chrome disconnect",
        "rm ",
        "release --tab",
    ]
    .into_iter()
    .find(|step| text.contains(step))
}

/// What identifies the daemon a book describes: its socket file (a new
/// daemon makes a new one).
pub fn session_key(socket: &Path) -> Result<String, RuntimeError> {
    let meta = std::fs::symlink_metadata(socket).map_err(|source| RuntimeError::Io {
        action: "inspect",
        path: socket.to_path_buf(),
        source,
    })?;
    Ok(format!(
        "{}:{}:{}.{}",
        meta.dev(),
        meta.ino(),
        meta.ctime(),
        meta.ctime_nsec()
    ))
}

/// The book, if there is one. One that cannot be read — empty,
/// zero-filled (a power loss), cut short, not ours — is an error: a fresh
/// book in its place would forget every owner.
pub fn load(runtime: &Runtime) -> Result<Option<Book>, TabsError> {
    let Some(bytes) = runtime.read_state(StateFile::Tabs)? else {
        return Ok(None);
    };
    let malformed = |detail: String| TabsError::Malformed {
        path: runtime.root().join(StateFile::Tabs.file_name()),
        detail,
    };
    if bytes.iter().all(|b| *b == 0 || b.is_ascii_whitespace()) {
        return Err(malformed("it is empty (cut short?)".into()));
    }
    // Where and what kind of error, never the text: it holds addresses.
    let book: Book =
        serde_json::from_slice(&bytes).map_err(|e| malformed(crate::runtime::json_fault(&e)))?;
    if !book.well_formed() {
        return Err(malformed("unexpected version or ids".into()));
    }
    Ok(Some(book))
}

/// The book of a session `connect` just made when its tabs could not be
/// listed: none yet (the next command finds them as tabs that appeared,
/// the user's), ids going on from where they were.
pub fn begin_without_tabs(runtime: &Runtime, socket: &Path) -> Result<(), TabsError> {
    let key = session_key(socket)?;
    let next = first_free_id(runtime)?;
    let book = match load(runtime) {
        Ok(Some(earlier)) => Book::after(&earlier, next.max(earlier.next_id), &key, &[], false),
        // One that cannot be read is replaced: `connect` is the user's
        // way back from it.
        Ok(None) | Err(_) => Book::fresh(&key, next, &[], false),
    };
    Ok(save(runtime, &book)?)
}

/// Writes the book, and its next id apart from it when that moved on (ids
/// are never reused, even when the book is removed).
pub fn save(runtime: &Runtime, book: &Book) -> Result<(), RuntimeError> {
    let recorded = first_free_id(runtime).ok();
    if recorded != Some(book.next_id) {
        runtime.write_state(StateFile::TabIds, book.next_id.to_string().as_bytes())?;
    }
    let bytes = serde_json::to_vec(book).expect("the book serialises");
    runtime.write_state(StateFile::Tabs, &bytes)
}

/// The id a new book starts at: the next one ever given in this runtime
/// (1 when none was). Empty or zero-filled (a power loss): 1.
pub fn first_free_id(runtime: &Runtime) -> Result<u64, TabsError> {
    let Some(bytes) = runtime
        .read_state(StateFile::TabIds)?
        .filter(|bytes| !bytes.iter().all(|b| *b == 0 || b.is_ascii_whitespace()))
    else {
        return Ok(1);
    };
    std::str::from_utf8(&bytes)
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .filter(|id| *id >= 1)
        .ok_or_else(|| TabsError::BadIds {
            path: runtime.root().join(StateFile::TabIds.file_name()),
        })
}

/// How long a desk may take, and when an agent is gone.
pub struct Bounds {
    /// All its lists and selections together.
    pub housekeeping: daemon::Housekeeping,
    /// A command of the agent's own that it sends (`tab-new`).
    pub command: Duration,
    /// Agents quiet for this long leave their tabs to the user.
    pub gone_after: Duration,
    /// The most tabs one agent may have, and the session (the user's).
    pub caps: (usize, usize),
}

/// Where a browser command meets the session's tabs, for one agent, while
/// it holds the session's turn.
pub struct Desk {
    runtime: Runtime,
    socket: PathBuf,
    cwd: PathBuf,
    /// The housekeeping this command may do (every list, every selection).
    budget: daemon::Housekeeping,
    /// The bound on a command of the agent's own (`tab-new`).
    command: Duration,
    /// Agents quiet for this long are gone (the user's setting).
    gone_after: Duration,
    /// The most tabs one agent may have, and the session (the user's).
    caps: (usize, usize),
    pub agent: String,
    pub book: Book,
    /// Prints the pages' words, and holds the stored token's fingerprint:
    /// no header is kept with the token in it (the book is a file of ours).
    printer: Printer,
    /// The tabs exactly as the daemon's last reply to this desk listed
    /// them, when that reply told of no change after its list (src/tabs/
    /// proof.rs): what the daemon compares the next reply's headers with.
    /// Gone once anything else is sent.
    baseline: Option<Vec<Seen>>,
    /// Commands past their bound that the daemon may still answer
    /// (`lease::late`): while there are any, no reply proves the tabs, and
    /// a tab that appears is not this agent's if one is another's.
    late: Vec<lease::late::Late>,
    /// The pages late commands answered since the book was last kept
    /// ended on (`late::Ended`): read into the book before its first list,
    /// and no longer recorded once it keeps the book.
    ended: Vec<lease::late::Ended>,
    /// Read before its command stepped aside: the others' commands may
    /// have changed the book since, so it is never saved again.
    stale: bool,
}

/// What a desk is opened after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// A command in the session.
    Command,
    /// `connect`, which just made the session: its blank tab is the first
    /// agent's to take. `rules_kept`: connect's own request
    /// ([`put_rules_in_place`]) answered that the daemon's rules are in
    /// place, so they are not asked for again.
    Connect { rules_kept: bool },
}

/// Puts the daemon's rules in place (the current tab stays, `stay`; tabs
/// numbered, `number`) with one request to the daemon behind `socket`:
/// `connect` sends it beside its tab swap, before any desk is opened, so
/// that the daemon's fixed settle after a `run-code` (half a second) is
/// waited for once, beside the swap. Whether it answered that they are;
/// if not, the desk asks again as it does for any session.
pub fn put_rules_in_place(socket: &Path, cwd: &Path, budget: &daemon::Housekeeping) -> bool {
    let Plan::Run(request) = plan_words(&stay::request_words(), cwd) else {
        return false;
    };
    matches!(
        budget.run(socket, &request.bytes, LIST_LIMIT),
        Ok(Reply::Text { text: Some(text), is_error: false }) if stay::kept(&text)
    )
}

impl Desk {
    /// Lists the tabs and reads what changed since the last command into
    /// the book (a new daemon gets a new book); agents gone quiet for
    /// `gone_after` leave their tabs to the user.
    pub fn open(
        held: &HeldLease,
        registration: Option<u64>,
        runtime: &Runtime,
        socket: &Path,
        cwd: &Path,
        bounds: Bounds,
        after: After,
    ) -> Result<Desk, TabsError> {
        let after_connect = matches!(after, After::Connect { .. });
        let Bounds {
            housekeeping: budget,
            command,
            gone_after,
            caps,
        } = bounds;
        let mut desk = Desk {
            runtime: runtime.clone(),
            socket: socket.to_path_buf(),
            cwd: cwd.to_path_buf(),
            budget,
            command,
            gone_after,
            caps,
            agent: held.agent.clone(),
            book: Book::fresh("", 1, &[], false),
            printer: Printer::of(runtime)?,
            baseline: None,
            late: lease::late::read(runtime)?,
            ended: lease::late::ended(runtime)?,
            stale: false,
        };
        let seen = desk.list()?;
        let key = session_key(socket)?;
        desk.book = match load(runtime)? {
            Some(mut book) if book.session == key => {
                for ended in &desk.ended {
                    book.answered_on(ended.tab, ended.number, &ended.header);
                }
                book.busy = lease::late::busy_tabs(&desk.late);
                book.sync(&seen, None);
                book
            }
            // Only `connect` starts a session, and it writes its book.
            Some(earlier) if after_connect => Book::after(
                &earlier,
                first_free_id(runtime)?.max(earlier.next_id),
                &key,
                &seen,
                true,
            ),
            Some(_) => {
                return Err(TabsError::OtherSession {
                    path: runtime.root().join(StateFile::Tabs.file_name()),
                });
            }
            None => Book::fresh(&key, first_free_id(runtime)?, &seen, after_connect),
        };
        desk.book.busy = lease::late::busy_tabs(&desk.late);
        if after == (After::Connect { rules_kept: true }) {
            desk.book.current_stays = true;
            desk.book.numbered = true;
        } else if !desk.book.current_stays || !desk.book.numbered {
            desk.keep_current()?;
        }
        let now = lease::now_ms();
        let idle: Vec<(String, u64)> = desk
            .book
            .agents
            .iter()
            .map(|(name, a)| (name.clone(), now.saturating_sub(a.last_at)))
            .collect();
        // Present though quiet in the book: this command's agent (it asks
        // now), and any whose command waits for the turn, runs or may still
        // be answered (a wait is no absence).
        let me = desk.agent.clone();
        let at_work = || {
            let mut names = crate::identity::present(runtime, now);
            names.push(me);
            names
        };
        for name in desk
            .book
            .expire(now, gone_after.as_millis() as u64, at_work)
        {
            let idle = idle
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(0, |(_, ms)| *ms);
            let line = lease::log::line(
                std::time::SystemTime::now(),
                &name,
                None,
                &Event::Gone {
                    idle: Duration::from_millis(idle),
                },
            );
            lease::log::append(runtime, &[line])?;
        }
        // A name registered anew is another agent: what the earlier one had
        // is the user's now.
        if let Some(registration) = registration {
            desk.book.registered(&desk.agent, registration, now);
        }
        Ok(desk)
    }

    /// Has the daemon keep a closed current tab current (`stay`), before
    /// any command of an agent's runs in this session; refused, nothing
    /// runs.
    fn keep_current(&mut self) -> Result<(), TabsError> {
        let kept = match self.send(&stay::request_words())? {
            Reply::Text {
                text: Some(text),
                is_error: false,
            } => stay::kept(&text),
            _ => false,
        };
        if !kept {
            return Err(TabsError::CurrentMoves);
        }
        self.book.current_stays = true;
        self.book.numbered = true;
        Ok(self.save()?)
    }

    /// Records the agent's command (its name only, and when).
    pub fn touch(&mut self, command: &str) {
        let state = self.book.agents.entry(self.agent.clone()).or_default();
        state.last_command = lease::log::command_name(command).into();
        state.last_at = lease::now_ms();
    }

    /// Ends, in the browser, every hold no agent is there to end
    /// (`Book::orphaned_holds`: its agent released, went quiet past the
    /// gone time, or its name ended), so that none keeps the others out
    /// for good. One whose end the daemon did not confirm stays, for the
    /// next command to try again. Which ended.
    pub fn end_orphaned_holds(&mut self) -> Result<Vec<Hold>, TabsError> {
        let now = lease::now_ms();
        let orphaned = self
            .book
            .orphaned_holds(now, self.gone_after.as_millis() as u64);
        let mut ended = Vec::new();
        for hold in orphaned {
            let words: Vec<String> = crate::policy::holds::ending_words(hold.what)
                .iter()
                .map(|w| (*w).to_string())
                .collect();
            let done = match self.send(&words)? {
                Reply::Text {
                    is_error: false, ..
                } => true,
                // Stopped already (the command that started it never
                // reached the browser, or failed there).
                Reply::Text {
                    text: Some(text),
                    is_error: true,
                } => hold.what == HoldKind::Tracing && text.contains("Tracing is not started"),
                _ => false,
            };
            if done {
                self.book.drop_hold(&hold);
                let line = lease::log::line(
                    std::time::SystemTime::now(),
                    &hold.agent,
                    None,
                    &Event::HoldEnded { what: hold.what },
                );
                lease::log::append(&self.runtime, &[line])?;
                ended.push(hold);
            }
        }
        if !ended.is_empty() {
            self.save()?;
        }
        Ok(ended)
    }

    /// Another agent's browser-wide state keeps this one out.
    pub fn check_holds(&self) -> Result<(), TabsError> {
        match self.book.held_by_other(&self.agent) {
            Some(hold) => Err(TabsError::Held {
                agent: hold.agent.clone(),
                what: hold.what,
            }),
            None => Ok(()),
        }
    }

    /// What happened to the agent's tabs since its last command: if
    /// anything, the command runs nothing and says so.
    pub fn check_notices(&mut self) -> Result<(), TabsError> {
        let notes = self.book.take_notices(&self.agent);
        if notes.is_empty() {
            return Ok(());
        }
        self.save()?;
        Err(TabsError::Changed {
            agent: self.agent.clone(),
            notes,
            own: listing::render(&self.shown()),
        })
    }

    pub fn refused(&self, refused: Refused) -> TabsError {
        TabsError::Refused {
            agent: self.agent.clone(),
            refused,
            own: listing::render(&self.shown()),
        }
    }

    /// The agent's tab `reference` names.
    pub fn resolve(&self, reference: &TabRef) -> Result<u64, TabsError> {
        self.book
            .resolve(&self.agent, reference)
            .map_err(|r| self.refused(r))
    }

    /// The tab a command runs on: the one named, else the agent's current
    /// (a blank one opened for it when it has none).
    pub fn target(&mut self, named: Option<&TabRef>) -> Result<u64, TabsError> {
        if let Some(reference) = named {
            return self.resolve(reference);
        }
        if let Some(id) = self.book.default_tab(&self.agent) {
            return Ok(id);
        }
        self.open_tab()
    }

    /// Opens a blank tab for the agent (`tab-new about:blank`: a tab
    /// opened without an address can leave `eval` waiting forever through
    /// the extension, src/session/connect_tab.rs).
    pub fn open_tab(&mut self) -> Result<u64, TabsError> {
        let request = self.request(&["tab-new".into(), "about:blank".into()])?;
        let (id, _) = self.open_tab_with(&request, None)?;
        Ok(id)
    }

    /// Opens a tab for the agent with `request` (a `tab-new`), labelled;
    /// its reply, for the caller to show.
    pub fn open_tab_with(
        &mut self,
        request: &Request,
        label: Option<&str>,
    ) -> Result<(u64, Reply), TabsError> {
        if let Some(label) = label
            && self
                .book
                .own(&self.agent)
                .iter()
                .any(|t| t.label.as_deref() == Some(label))
        {
            return Err(self.refused(Refused::LabelTaken(label.into())));
        }
        let (agent_cap, session_cap) = self.caps;
        let own = self.book.own(&self.agent).len();
        if own >= agent_cap || self.book.tabs.len() >= session_cap {
            return Err(TabsError::TooManyTabs {
                agent: self.agent.clone(),
                own,
                all: self.book.tabs.len(),
                caps: self.caps,
            });
        }
        let first_new = self.book.next_id;
        self.moving_current()?;
        let reply = daemon::run(&self.socket, &request.bytes, self.command, LIST_LIMIT)?;
        let seen = self.list()?;
        // Every tab that appeared is the user's, but the one the daemon
        // opened and made current, when it is new.
        let notes = self.book.sync(
            &seen,
            Some(&During {
                agent: &self.agent,
                acted_on: None,
                closed: None,
                opens: false,
                moves_current: true,
            }),
        );
        show_notes(&notes);
        let id = match self.book.current.filter(|id| *id >= first_new) {
            Some(id) => id,
            None => return Err(TabsError::NotOpened(self.why_not_opened(&reply))),
        };
        self.book
            .adopt(&self.agent, id, label)
            .map_err(|r| self.refused(r))?;
        Ok((id, reply))
    }

    /// Why a `tab-new` left no new tab current, from its reply: the first
    /// line of the daemon's error (redacted, cut short; never its other
    /// sections, which may list tabs), or that the list shows none.
    fn why_not_opened(&self, reply: &Reply) -> String {
        const SHOWN: usize = 200;
        let error = match reply {
            Reply::Error(message) => message.lines().next(),
            Reply::Text {
                text: Some(text),
                is_error: true,
            } => text
                .split_once("### Error\n")
                .and_then(|(_, rest)| rest.lines().next()),
            Reply::Text { is_error: true, .. } => Some(""),
            Reply::Text { .. } => None,
        };
        match error {
            Some(line) => {
                let line: String = line.chars().take(SHOWN).collect();
                let line = crate::redact::redact_value(&line, self.printer.known());
                format!("the daemon answered: {line}")
            }
            None => "the daemon's list shows none current".into(),
        }
    }

    /// Makes tab `id` the daemon's current one, checking that the list did
    /// not change in between (else nothing runs).
    pub fn select(&mut self, id: u64) -> Result<(), TabsError> {
        if self.book.current == Some(id) {
            return Ok(());
        }
        let index = self.book.index_of(id).ok_or(TabsError::Moved)?;
        self.moving_current()?;
        let reply = self.send(&["tab-select".into(), index.to_string()])?;
        let (seen, exact) = match reply {
            Reply::Text {
                text: Some(text),
                is_error: false,
            } => (self.parse_list(&text), proof::exact_list(&text)),
            _ => (None, None),
        };
        let seen = seen.ok_or(TabsError::Moved)?;
        // Every tab where it was, at the address it was at: a tab closed
        // meanwhile would have moved the one at `index` (a site alone
        // would not tell it from a neighbour of the same site). Titles are
        // not compared: a page's title may change at any moment (an unread
        // count, a clock), which would fail every command of every agent.
        // With the daemon's numbers, every tab is the one it was.
        let same = seen.len() == self.book.tabs.len()
            && seen
                .iter()
                .zip(&self.book.tabs)
                .all(|(s, t)| match t.number {
                    Some(number) if self.book.numbered => s.number == Some(number),
                    _ => align::same_place(&s.header, &t.header),
                })
            && seen.get(index).is_some_and(|s| s.current);
        if !same {
            // What the list shows now is read in at the next command.
            return Err(TabsError::Moved);
        }
        self.book.current = Some(id);
        self.baseline = exact.map(|seen| self.redacted(seen));
        Ok(())
    }

    /// What prints the pages' words for this desk's command.
    pub fn printer(&self) -> &Printer {
        &self.printer
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// A housekeeping bound of its own for what follows (each close of a
    /// `release`).
    pub fn renew_budget(&mut self) {
        self.budget = self.budget.renewed();
    }

    /// A request that may make another tab current is about to go out: the
    /// book says the current tab is unknown until it is read again, so a
    /// command killed in between leaves no false one behind.
    fn moving_current(&mut self) -> Result<(), TabsError> {
        self.book.current = None;
        self.baseline = None;
        Ok(self.save()?)
    }

    /// Makes `id` the agent's current tab.
    pub fn set_current(&mut self, id: u64) {
        self.book
            .agents
            .entry(self.agent.clone())
            .or_default()
            .current = Some(id);
    }

    /// Closes tab `id` for the agent, when no page can make the close
    /// reach another's tab. The daemon closes by index (or its current
    /// tab) and names no tab: a page that closes itself between the check
    /// and the close moves every later tab up one place (and the current
    /// tab to the next one). So `id` is closed by its index only when every
    /// tab after it is one of `ours` (the closer's, as they were when its
    /// command began): a shift then lands on the closer's own tab, or past
    /// the end, which fails. Otherwise it is left open (`Closing::LeftOpen`)
    /// and nothing is sent. Never the session's last tab: closing it would
    /// end the session.
    pub fn close(&mut self, id: u64, ours: &[u64]) -> Result<Closing, TabsError> {
        if self.book.tabs.len() < 2 {
            return Err(TabsError::LastTab(id));
        }
        let index = self.book.index_of(id).ok_or(TabsError::Moved)?;
        if !self.book.tabs[index + 1..]
            .iter()
            .all(|t| ours.contains(&t.id))
        {
            return Ok(Closing::LeftOpen);
        }
        // The list checked as the book has it (nothing closed or opened
        // since): `index` is the tab's place now.
        self.select(id)?;
        self.moving_current()?;
        // Its reply lists the tabs left, when exactly (src/tabs/proof.rs);
        // an index past the end (a tab closed meanwhile) is an error.
        let left = match self.send(&["tab-close".into(), index.to_string()])? {
            Reply::Text {
                text,
                is_error: false,
            } => text.as_deref().and_then(proof::exact_list),
            _ => None,
        };
        let agent = self.agent.clone();
        let during = During {
            agent: &agent,
            acted_on: None,
            closed: Some(id),
            opens: false,
            moves_current: true,
        };
        match left {
            Some(seen) => {
                let seen = self.redacted(seen);
                self.read_in(&seen, &during);
                self.baseline = Some(seen);
            }
            None => self.finish(&during)?,
        }
        // Closed by the request or by its own page meanwhile: gone either way.
        match self.book.index_of(id) {
            None => Ok(Closing::Closed),
            Some(_) => Err(TabsError::Unlisted("the tab did not close".into())),
        }
    }

    /// Reads the tabs again after the agent's command (`during`).
    pub fn finish(&mut self, during: &During) -> Result<(), TabsError> {
        let seen = self.list()?;
        self.read_in(&seen, during);
        Ok(())
    }

    /// Reads in the tabs after the agent's command (`during`) from what its
    /// reply proves (src/tabs/proof.rs), and lists them only when it proves
    /// nothing: no change since the last exact list, or the reply's own
    /// list. Whether they were listed again.
    pub fn after(&mut self, proof: Proof, during: &During) -> Result<Listed, TabsError> {
        let baseline = self.baseline.take();
        // A reply built when every tab had closed has no tab section
        // either, whichever tab the command ran on: if the agent's tab
        // closed first, the one made current in its place, and so any tab
        // of the baseline. Only when each of them is the agent's is that
        // no other's.
        let all_own = self
            .book
            .tabs
            .iter()
            .all(|t| t.owner.agent() == Some(self.agent.as_str()));
        let proof = proof::unless_late(proof, !self.late.is_empty());
        let (seen, listed) = match (proof, baseline) {
            (Proof::Unchanged, Some(baseline)) if all_own => (baseline, Listed::Unchanged),
            (Proof::Listed(seen), _) => (self.redacted(seen), Listed::InReply),
            (Proof::Unchanged | Proof::Unproven(_), _) => (self.list()?, Listed::Again),
        };
        self.read_in(&seen, during);
        Ok(listed)
    }

    /// What the tabs show after the agent's command (`during`), into the
    /// book; what happened to the agent's own tabs is said now. Tabs its
    /// pages opened past the user's cap are the user's.
    fn read_in(&mut self, seen: &[Seen], during: &During) {
        let notes = self.book.sync(seen, Some(during));
        show_notes(&notes);
        let went = self.book.cap(during.agent, self.caps.0, during.acted_on);
        if !went.is_empty() {
            let ids: Vec<String> = went.iter().map(|id| format!("t{id}")).collect();
            crate::output::notice(&format!(
                "my-chrome: your pages opened {} while you had the most tabs the user allows one \
                 agent ({}); they are the user's",
                ids.join(" "),
                self.caps.0
            ));
        }
    }

    /// Whether a tab that appears during this agent's command may be
    /// another's: another agent's command past its bound may still run.
    pub fn others_late(&self) -> bool {
        lease::late::others(&self.late, &self.agent)
    }

    /// Whether the daemon's current tab is the agent's.
    /// Whether tab `id` is still the agent's.
    pub fn is_own(&self, id: u64) -> bool {
        self.book
            .tab(id)
            .is_some_and(|t| t.owner.agent() == Some(&self.agent))
    }

    /// Whether the daemon may still answer a command past its bound, or
    /// one stepped aside, anyone's.
    pub fn any_late(&self) -> bool {
        !self.late.is_empty()
    }

    pub fn current_is_own(&self) -> bool {
        self.book
            .current
            .and_then(|id| self.book.tab(id))
            .is_some_and(|t| t.owner.agent() == Some(&self.agent))
    }

    /// The agent's tabs as its list shows them.
    pub fn shown(&self) -> Vec<Shown> {
        let current = self.book.agents.get(&self.agent).and_then(|a| a.current);
        self.book
            .own(&self.agent)
            .iter()
            .enumerate()
            .map(|(i, t)| {
                Shown::new(
                    i,
                    t.id,
                    t.label.as_deref(),
                    Some(t.id) == current,
                    &t.header,
                )
            })
            .collect()
    }

    pub fn save(&mut self) -> Result<(), RuntimeError> {
        if self.stale {
            return Ok(());
        }
        save(&self.runtime, &self.book)?;
        // What the ended commands did is in the book now.
        let read: Vec<u64> = self.ended.drain(..).map(|e| e.tab).collect();
        lease::late::ended_listed(&self.runtime, &read)
    }

    /// Its command stepped aside: what it holds is no longer the book.
    pub fn went_stale(&mut self) {
        self.stale = true;
    }

    /// One housekeeping request for the daemon. What it changes is unknown
    /// until its reply is read: no baseline meanwhile.
    fn send(&mut self, args: &[String]) -> Result<Reply, TabsError> {
        self.baseline = None;
        let request = self.request(args)?;
        Ok(self.budget.run(&self.socket, &request.bytes, LIST_LIMIT)?)
    }

    /// The request for one of my-chrome's own lines.
    fn request(&self, args: &[String]) -> Result<Request, TabsError> {
        let Plan::Run(request) = plan_words(args, &self.cwd) else {
            return Err(TabsError::Unlisted(format!(
                "`{}` is no daemon request",
                args.iter()
                    .find(|a| !a.starts_with('-'))
                    .map_or("", String::as_str)
            )));
        };
        Ok(request)
    }

    /// The tabs a list shows, their headers with no token in them.
    fn parse_list(&self, text: &str) -> Option<Vec<Seen>> {
        listing::parse_list(text).map(|seen| self.redacted(seen))
    }

    /// Tabs with no token in their headers.
    fn redacted(&self, mut seen: Vec<Seen>) -> Vec<Seen> {
        for tab in &mut seen {
            tab.header = crate::redact::redact_value(&tab.header, self.printer.known());
        }
        seen
    }

    /// Every tab of the session, as the daemon lists them. A tab closing
    /// at that moment can fail the list (its title is asked of a page that
    /// is going): asked again, a few times, before it counts as a failure.
    /// When the list is exact (src/tabs/proof.rs), it is the baseline the
    /// next reply is read against.
    pub fn list(&mut self) -> Result<Vec<Seen>, TabsError> {
        let mut tries = 0;
        loop {
            let failed = match self.send(&["tab-list".into()])? {
                Reply::Text {
                    text: Some(text),
                    is_error: false,
                } => {
                    let exact = proof::exact_list(&text).map(|seen| self.redacted(seen));
                    let seen = match &exact {
                        Some(seen) => seen.clone(),
                        None => self.parse_list(&text).ok_or_else(|| {
                            TabsError::Unlisted("its reply is no tab list".into())
                        })?,
                    };
                    self.baseline = exact;
                    return Ok(seen);
                }
                // An error text may list tabs: never in a message.
                Reply::Text { .. } => TabsError::Unlisted("the daemon refused".into()),
                Reply::Error(message) => TabsError::Unlisted(message),
            };
            tries += 1;
            if tries == LIST_TRIES {
                return Err(failed);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// What [`Desk::close`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Closing {
    Closed,
    /// Nothing was sent: a tab after it is not the closer's.
    LeftOpen,
}

/// How the tabs after a command were known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listed {
    /// Its reply proved that nothing changed since the last exact list.
    Unchanged,
    /// Its reply carried the daemon's list.
    InReply,
    /// They were listed again.
    Again,
}

/// What happened to the agent's own tabs during its command.
fn show_notes(notes: &[Notice]) {
    for note in notes {
        crate::output::notice(&format!("my-chrome: {note}"));
    }
}

#[cfg(test)]
mod tests {
    use super::view::refusal;
    use super::*;

    /// What an agent reads when it is refused a tab, when the book cannot
    /// be read, or when another's browser-wide state keeps it out: what to
    /// ask the user, never the user's command for it.
    #[test]
    fn no_refusal_hands_an_agent_the_users_step() {
        let refusals = [
            Refused::Unknown(TabRef::Id(4)),
            Refused::Gone(4),
            Refused::Earlier(4),
            Refused::Foreign {
                id: 4,
                owner: book::Owner::User,
            },
            Refused::Foreign {
                id: 4,
                owner: book::Owner::Agent("ann".into()),
            },
            Refused::Foreign {
                id: 4,
                owner: book::Owner::Held("ann".into()),
            },
            Refused::HeldForYou(4),
            Refused::UsersToGive(4),
            Refused::Owned {
                id: 4,
                agent: "ann".into(),
            },
            Refused::LabelTaken("cart".into()),
        ];
        let mut said: Vec<String> = refusals
            .iter()
            .map(|r| refusal("bob", r, "  (none)\n"))
            .collect();
        let path = PathBuf::from("/run/user/1/my-chrome/tabs.json");
        said.push(
            TabsError::Malformed {
                path: path.clone(),
                detail: "it is empty".into(),
            }
            .to_string(),
        );
        said.push(TabsError::OtherSession { path }.to_string());
        for what in [
            book::HoldKind::Tracing,
            book::HoldKind::Routes,
            book::HoldKind::Network,
        ] {
            said.push(
                TabsError::Held {
                    agent: "ann".into(),
                    what,
                }
                .to_string(),
            );
        }
        for text in &said {
            assert_eq!(users_step_in(text), None, "{text}");
        }
        assert!(said.iter().any(|t| t.contains("ask the user for it")));
        assert!(
            said.iter()
                .any(|t| t.contains("Ask the user to recover it"))
        );
    }
}
