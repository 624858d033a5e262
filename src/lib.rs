//! my-chrome: a fail-closed wrapper that lets coding agents drive the user's
//! own running Chrome through the Playwright Extension and a private, pinned
//! copy of `@playwright/cli`. `main.rs` dispatches; everything else lives here
//! so that integration tests can exercise library code directly.

pub(crate) mod agent_key;
pub(crate) mod browser;
pub(crate) mod browser_name;
pub mod child;
pub mod chrome;
pub mod cli;
pub mod command;
pub mod config;
pub(crate) mod consent;
pub mod daemon;
pub(crate) mod error;
pub mod exit;
pub(crate) mod file_args;
pub(crate) mod file_owners;
pub mod handoff;
pub mod helper;
pub mod host_sandbox;
pub mod identity;
pub(crate) mod installed;
pub mod lease;
pub mod minimist;
pub mod operation;
pub mod output;
pub mod pinned_commands;
pub(crate) mod platform;
pub mod policy;
pub mod procs;
pub mod redact;
pub(crate) mod removal;
pub mod runtime;
pub mod session;
pub(crate) mod session_output;
pub mod settings;
pub mod signals;
pub mod singleton;
pub(crate) mod socket;
pub mod staged_files;
pub mod tabs;
pub(crate) mod token;
pub mod token_shape;
