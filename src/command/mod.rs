//! The commands a user (or an agent) runs, above the core: each one puts
//! the core's parts together for one purpose and returns the top-level
//! [`Error`](crate::error::Error). Nothing below this layer imports a
//! command, or `error.rs` (tests/layout.rs checks it).

pub mod agents;
pub mod audit;
pub mod connect;
pub mod detach;
pub mod disconnect;
pub mod doctor;
pub mod ensure;
pub mod forward;
pub mod setup;
pub mod start;
pub mod token;
pub mod uninstall;
pub mod watch;
