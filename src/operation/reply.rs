//! What the agent sees of a command's reply: shown as the pinned client
//! shows it, through the redactor, with the session's tabs narrowed to the
//! agent's, and only while the tab it describes is the agent's.

use super::forwarded::{ForwardError, Forwarded};
use crate::daemon::Reply;
use crate::daemon::request::{ClientOutput, Mode};
use crate::exit::Exit;
use crate::output::{Printer, Stream};
use crate::runtime::Runtime;
use crate::session_output;
use crate::staged_files::Outputs;
use crate::tabs::listing::{self, Rewrite};
use crate::tabs::{Desk, TabsError};

/// What the pinned client prints when it refuses a line itself, exit 1.
pub fn print_client_refusal(runtime: &Runtime, said: &ClientOutput) -> ForwardError {
    let printer = match Printer::of(runtime) {
        Ok(printer) => printer,
        Err(e) => return crate::error::Error::from(e).into(),
    };
    // With `--json`, the client's refusal is a JSON document.
    printer.json_text(Stream::Out, &said.stdout, "");
    printer.text(Stream::Err, &[&said.stderr]);
    ForwardError::Said(Exit::Code(1))
}

/// What a reply reports as its error, and nothing else of it: the
/// `### Error` section of a text reply, or the daemon's own error. A reply
/// in `--json` or `--raw` form, or with no error, shows nothing.
pub(super) fn print_error_only(desk: &Desk, reply: &Reply, mode: Mode) -> Result<(), ForwardError> {
    let printer = desk.printer();
    match reply {
        Reply::Text {
            text: Some(text), ..
        } if mode == Mode::Text => {
            if let Some(error) = listing::section(text, "Error") {
                printer.text(Stream::Out, &["### Error\n", error]);
            }
        }
        Reply::Error(message) => printer.text(Stream::Err, &["Error: ", message, "\n"]),
        _ => {}
    }
    Ok(())
}

/// The daemon's reply, shown as the pinned client shows it, with the
/// session's tabs narrowed to the agent's; `files` are the command's
/// output files and what the session's output folder held before it;
/// `shown`: whether the tab the reply describes is the agent's.
pub(super) fn print_reply(
    desk: &Desk,
    reply: Reply,
    asked: &Forwarded,
    (tab_command, shown): (bool, bool),
    files: (Outputs, &session_output::Before),
) -> Result<(), ForwardError> {
    let (outputs, before) = files;
    let printer = desk.printer();
    let known = printer.known();
    let own = desk.shown();
    // The agent's tab closed during its command: the daemon's current tab,
    // which the reply describes (and which the command may even have run
    // on, if the tab closed just before it), is someone else's: none of
    // it is shown, no file of it delivered.
    if !shown {
        outputs.discard();
        before.forget_created(reply_text(&reply));
        return Err(TabsError::Withheld {
            own: listing::render(&own),
        }
        .into());
    }
    // Its files go where the agent named them, then it is shown.
    let json = asked.mode() == Mode::Json;
    let reply = match reply {
        Reply::Text { text, is_error } => Reply::Text {
            text: text.map(|t| outputs.unstage(&t, json)),
            is_error,
        },
        error => error,
    };
    outputs.deliver(known)?;
    before.redact_written(reply_text(&reply), known);
    match reply {
        Reply::Text { text, is_error } => {
            let text = text.as_deref().unwrap_or("undefined");
            match asked.mode() {
                Mode::Text => {
                    let how = Rewrite {
                        own: &own,
                        tab_command,
                    };
                    printer.text(Stream::Out, &[&listing::rewrite_text(text, &how), "\n"]);
                }
                Mode::Json if tab_command => {
                    printer.json_text(Stream::Out, &listing::render_json(&own), "\n");
                }
                Mode::Raw if tab_command => {
                    printer.text(Stream::Out, &[listing::render(&own).trim_end(), "\n"]);
                }
                Mode::Json => printer.json_text(Stream::Out, text, "\n"),
                Mode::Raw => printer.text(Stream::Out, &[text, "\n"]),
            }
            // The client prints a failed command's text and exits 1.
            if is_error {
                return Err(ForwardError::Said(Exit::Code(1)));
            }
            Ok(())
        }
        // The pinned client dies with a stack trace; its first line.
        Reply::Error(message) => {
            printer.text(Stream::Err, &["Error: ", &message, "\n"]);
            Err(ForwardError::Said(Exit::Code(1)))
        }
    }
}

/// A reply's text, when it has one.
fn reply_text(reply: &Reply) -> Option<&str> {
    match reply {
        Reply::Text { text, .. } => text.as_deref(),
        Reply::Error(_) => None,
    }
}
