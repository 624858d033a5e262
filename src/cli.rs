//! The command line: wrapper commands that my-chrome implements itself.
//! (Browser commands forwarded to the pinned CLI arrive with the session work.)

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "my-chrome",
    version,
    about = "Let coding agents drive your own running, signed-in Chrome through the Playwright Extension.",
    long_about = None
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Install the pinned @playwright/cli into the private runtime (once per machine).
    Setup,
    /// Report the runtime, the trusted node and the pinned CLI; changes nothing.
    Doctor {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}
