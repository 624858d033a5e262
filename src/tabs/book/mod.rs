//! The tab book (`<runtime>/tabs.json`): every tab of the session, in the
//! daemon's order, with its id, its owner and its label, and every agent's
//! current tab. Pure: the daemon's lists come in, the decisions go out, so
//! every ownership rule is tested directly.
//!
//! A tab passes from one agent to another only through its owner (who
//! gives it back: `release`) and the user (who gives it: `tab-give`). A
//! tab that leaves its owner for any reason — in doubt, moved to another
//! site, its owner gone quiet — is *held* for it: its former owner may take
//! it again (`tab-claim`), no other agent can. A tab nobody can account for
//! (a popup that appeared between commands, or while other agents' or the
//! user's pages were open, a tab the user dragged in) is *the user's*, and
//! goes to an agent only when the user gives it.
//!
//! Ids (`t<N>`) are never reused: a book for a new session (a new daemon)
//! starts where the last one stopped, and ids below its first belong to
//! earlier sessions.
//!
//! This file only gathers the book's parts, one job a file: `model.rs`
//! (the book, its tabs, owners and agents, and what it answers of them),
//! `sync.rs` (following the daemon's lists), `resolve.rs` (a reference
//! to the tab it names), `moves.rs` (every change of owner), `holds.rs`
//! (browser-wide state), `tests.rs` (the rules, tested). What they mean
//! in words is `tabs::view`'s.

mod holds;
mod model;
mod moves;
mod resolve;
mod sync;
#[cfg(test)]
mod tests;

pub use crate::policy::holds::HoldKind;
pub use model::{Agent, BLANK, Book, During, Owner, Refused, Tab, Why};
