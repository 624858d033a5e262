//! Shared test fixtures, one file per concern. Each test binary uses part
//! of them. Several tests scan every process of the user (token exposure,
//! Chrome's PID set) and others start deliberate token carriers or
//! Chromes: `cargo test` runs one binary at a time, and under nextest
//! (scripts/test.sh), which runs many tests at once, `isolation` checks
//! that each of those is in the group that keeps it from the others.

// Each test binary uses a different part of the fixtures (and of these
// re-exports).
#![allow(dead_code, unused_imports)]

pub mod agent_hosts;
pub mod agent_keys;
pub mod browser;
pub mod canary;
pub mod display;
pub mod fake_chrome;
pub mod fake_npm;
pub mod isolation;
pub mod keyring;
pub mod minimist_js;
pub mod per_run;
pub mod processes;
pub mod pwcli;
pub mod real_extension;
pub mod run;
pub mod sampler;
pub mod sandbox;
pub mod site;
pub mod standin;
pub mod stuck_socket;
pub mod user;
pub mod wait;

pub use canary::{assert_nowhere, assert_nowhere_but, fresh_token};
pub use display::Display;
pub use fake_chrome::FakeChrome;
pub use fake_npm::{FakeNpm, system_node};
pub use keyring::Keyring;
pub use processes::{process_gone, wait_gone};
pub use run::{BIN, Run, Running, says};
pub use sandbox::{
    Sandbox, UNNAMED, can_give_files_away, copy_tree, entries, golden_runtime, mode, read_snapshot,
    reference,
};
pub use user::{World, user_name, world};
