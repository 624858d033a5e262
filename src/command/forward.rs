//! Every other command is a Playwright CLI command: checked by the policy
//! (its line) and against the disk (its files), then sent to our session's
//! daemon and its reply printed through the redactor (invariants 8 and 9).

use std::ffi::OsString;
use std::io::Write;
use std::time::Duration;

use crate::child::{ChildCommand, Output};
use crate::command::start::{Start, Started};
use crate::config::Config;
use crate::daemon::request::{self, Plan};
use crate::daemon::{self, DaemonError, Reply};
use crate::error::Error;
use crate::exit::Exit;
use crate::file_args::FileRules;
use crate::helper::HelperError;
use crate::helper::check::Check;
use crate::policy;
use crate::redact::Redactor;
use crate::token::fingerprint::{self, Fingerprint};

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

pub fn forward(config: &Config, raw: &[OsString]) -> Result<(), Error> {
    let args: Vec<String> = raw
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(refusal) = policy::refusal(&args, &config.session) {
        return Err(refusal.into());
    }
    let rest = policy::without_session(&args);
    if let Some(refusal) = FileRules::from_config(config).refusal(&rest) {
        return Err(refusal.into());
    }
    let start = Start::new(config, Check::Supported);
    // `list` reports every session and needs none of ours; a line without a
    // command only prints the CLI's usage: the pinned client answers both.
    let name = match policy::command_of(&rest) {
        Some(name) if name != "list" => name,
        _ => return run_pinned(config, &start.open()?, &rest, false),
    };
    // Every command that may act on the browser waits for its turn first.
    let started = start.turn(name).open()?;
    let session = started.require_registered()?;
    let cwd = started.daemon_cwd()?;
    let known = fingerprint::recorded(&started.runtime)?;
    let print = |out: &mut dyn Write, text: &[&str]| print_redacted(out, text, known.as_ref());
    match request::plan(&rest, &cwd) {
        Plan::Run(line) => {
            let reply = daemon::run(
                &session.socket_path,
                &line,
                config.command_timeout,
                config.reply_limit,
            );
            match reply.map_err(|e| match e {
                DaemonError::Unreachable(why) => crate::command::start::stale(why),
                other => other.into(),
            })? {
                Reply::Text { text, is_error } => {
                    let text = text.as_deref().unwrap_or("undefined");
                    print(&mut std::io::stdout(), &[text, "\n"]);
                    // The client prints a failed command's text and exits 1.
                    if is_error {
                        return Err(Error::Silent(Exit::Code(1)));
                    }
                    Ok(())
                }
                // The pinned client dies with a stack trace; its first line.
                Reply::Error(message) => {
                    print(&mut std::io::stderr(), &["Error: ", &message, "\n"]);
                    Err(Error::Silent(Exit::Code(1)))
                }
            }
        }
        Plan::Refused(output) => {
            print(&mut std::io::stdout(), &[&output.stdout]);
            print(&mut std::io::stderr(), &[&output.stderr]);
            Err(Error::Silent(Exit::Code(1)))
        }
        Plan::ClientOnly => run_pinned(config, &started, &rest, true),
    }
}

/// `parts` through the redactor, as one stream, written as it comes (a
/// large reply is not copied whole again). A closed output (a pipe whose
/// reader left) is no failure of the command: the rest is dropped.
fn print_redacted(out: &mut dyn Write, parts: &[&str], known: Option<&Fingerprint>) {
    let mut redactor = Redactor::new(known.cloned());
    let slices = parts
        .iter()
        .flat_map(|part| part.as_bytes().chunks(64 * 1024));
    for slice in slices {
        if out.write_all(&redactor.feed(slice)).is_err() {
            return;
        }
    }
    let _ = out.write_all(&redactor.finish()).and_then(|()| out.flush());
}

/// The pinned CLI itself, for what its client answers alone (usage, help,
/// `list`), its output through the redactor.
fn run_pinned(
    config: &Config,
    started: &Started,
    rest: &[String],
    ours: bool,
) -> Result<(), Error> {
    let mut child = ChildCommand::new(
        "playwright-cli",
        &started.node()?.path,
        started.runtime.root(),
        config.command_timeout,
    )
    .arg(started.helper.entry());
    if ours {
        child = child.arg(format!("-s={}", config.session));
    }
    let finished = child
        .args(rest)
        .known_token(fingerprint::recorded(&started.runtime)?)
        .stdout(Output::Redacted)
        .stderr(Output::Redacted)
        .run(&started.env)?;
    match finished.status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(Error::Silent(Exit::Code(code))),
        None => Err(Error::Silent(Exit::Code(1))),
    }
}
