//! The commands a user (or an agent) runs, above the core: each one puts
//! the core's parts together for one purpose and returns its own error
//! enum, or the core's [`Error`](crate::error::Error) when it has no
//! refusal of its own; [`failure::Failure`] holds one per command. Nothing
//! below this layer imports a command, or `error.rs` (tests/layout.rs
//! checks it).

pub mod agents;
pub mod audit;
pub mod connect;
pub mod disconnect;
pub mod doctor;
pub mod ending;
pub mod ensure;
pub mod failure;
pub mod forward;
pub mod setup;
pub mod token;
pub mod uninstall;
pub mod watch;
