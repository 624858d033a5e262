//! The operations core of every browser command, below the commands that
//! put it together: a command's start and turn (`start`, docs/DESIGN.md
//! "One start-up path"), a forwarded command planned, staged and run for
//! its agent (`forwarded`, `run`, with `page_command`, `tab_command` and
//! `reply`), the pinned client for what it answers alone (`client`), and
//! the session detached (`detach`).

pub mod client;
pub mod detach;
pub mod forwarded;
mod page_command;
mod reply;
pub mod run;
pub mod start;
mod tab_command;

pub use reply::print_client_refusal;
