//! The pinned CLI itself, for what its client answers alone (usage, help,
//! `list`), its output through the redactor.

use std::time::Duration;

use super::forwarded::ForwardError;
use super::start::{Start, Started};
use crate::child::{ChildCommand, Output};
use crate::config::Config;
use crate::error::Error;
use crate::exit::Exit;
use crate::helper::HelperError;
use crate::helper::check::Check;
use crate::output::{Printer, Stream};
use crate::policy::line::Line;

/// The pinned CLI's own help, when the helper is supported (never
/// otherwise: an unsupported copy's text is not ours to show). A runtime or
/// tree that fails its checks is refused as for any forwarded command.
pub fn cli_help(config: &Config) -> Result<Option<String>, Error> {
    // `--help` creates no runtime.
    if crate::runtime::Runtime::inspect(&config.runtime)?.is_none() {
        return Ok(None);
    }
    // A tree that is not what its check recorded (or an unsafe place) is
    // refused as for any forwarded command; anything else that keeps the
    // CLI from answering (no copy yet, no trusted node) leaves its part out.
    let started = match Start::new(config, Check::Supported).open() {
        Ok(started) => started,
        Err(e @ Error::Helper(HelperError::Changed { .. } | HelperError::Unsafe(_))) => {
            return Err(e);
        }
        Err(e @ Error::Runtime(_)) => return Err(e),
        Err(_) => return Ok(None),
    };
    let Ok(node) = started.node() else {
        return Ok(None);
    };
    let help = ChildCommand::new(
        "playwright-cli --help",
        &node.path,
        started.runtime.root(),
        Duration::from_secs(30),
    )
    .arg(started.helper.entry())
    .arg("--help")
    .run(&started.env);
    Ok(help
        .ok()
        .filter(|help| help.status.success())
        .map(|help| help.stdout_text()))
}

/// The pinned CLI itself, for what its client answers alone (usage, help,
/// `list`), its output through the redactor.
pub fn run(
    config: &Config,
    started: &Started,
    line: &Line,
    ours: bool,
) -> Result<(), ForwardError> {
    let printer = Printer::of(&started.runtime)?;
    let mut child = ChildCommand::new(
        "playwright-cli",
        &started.node()?.path,
        started.runtime.root(),
        started.settings.command_bound_for(config.command_timeout),
    )
    .arg(started.helper.entry());
    if ours {
        child = child.arg(format!("-s={}", config.session));
    }
    // A JSON answer is printed as JSON once it is whole (`list --json`).
    let json = line.asks_json();
    let finished = child
        .args(line.words())
        .stdout(if json {
            Output::Capture
        } else {
            Output::Streamed(printer.sink(Stream::Out))
        })
        .stderr(Output::Streamed(printer.sink(Stream::Err)))
        .run(&started.env)?;
    if json {
        printer.json_text(Stream::Out, &finished.stdout_text(), "");
    }
    match finished.status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(ForwardError::Said(Exit::Code(code))),
        None => Err(ForwardError::Said(Exit::Code(1))),
    }
}
