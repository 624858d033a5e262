//! Everything my-chrome prints goes through here (docs/DESIGN.md,
//! invariant 9), whatever it is — a page's reply, a tab's title, a notice,
//! an error message, a child's output: text through the streaming redactor
//! (the token's spellings, the stored token's bare value through the
//! fingerprint `connect` recorded, terminal controls escaped), and JSON as
//! JSON (`redact::json`: every string redacted, controls in JSON's own
//! escape, so that `--json` output always parses). No other module writes
//! to standard output or standard error (tests/layout.rs).

use std::io::Write;
use std::sync::OnceLock;

use crate::config::RuntimeLocation;
use crate::redact::{self, Redactor};
use crate::runtime::Runtime;
use crate::token::fingerprint::{self, Fingerprint};

/// Where a text goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Out,
    Err,
}

/// The runtime whose fingerprint every print uses (`init`, from `main`).
static RUNTIME: OnceLock<RuntimeLocation> = OnceLock::new();
/// The fingerprint, once found (it is only ever added: `connect` records
/// it, and a later print of the same process uses it).
static KNOWN: OnceLock<Fingerprint> = OnceLock::new();

/// Every later print redacts the bare value of the token whose
/// fingerprint `runtime` holds.
pub fn init(runtime: &RuntimeLocation) {
    let _ = RUNTIME.set(runtime.clone());
}

/// The stored token's fingerprint, when the runtime has one and it can be
/// read. A command whose output comes from a page checks it first
/// (`fingerprint::recorded`, an error if it cannot be read); a message
/// printed without it still has every spelling redacted.
fn known() -> Option<Fingerprint> {
    if let Some(known) = KNOWN.get() {
        return Some(known.clone());
    }
    let runtime = Runtime::inspect(RUNTIME.get()?).ok()??;
    let known = fingerprint::recorded(&runtime).ok()??;
    Some(KNOWN.get_or_init(|| known).clone())
}

/// Writes bytes that passed the redactor. A closed output (a pipe whose
/// reader left) is no failure of the command: the rest is dropped.
fn emit(stream: Stream, bytes: &[u8]) -> bool {
    let done = match stream {
        Stream::Out => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush())
        }
        Stream::Err => {
            let mut err = std::io::stderr().lock();
            err.write_all(bytes).and_then(|()| err.flush())
        }
    };
    done.is_ok()
}

/// `parts`, as one text, through the redactor (written as it comes: a
/// large reply is not copied whole again).
pub fn text(stream: Stream, parts: &[&str]) {
    let mut relay = Relay::new(stream);
    for part in parts {
        for slice in part.as_bytes().chunks(64 * 1024) {
            if !relay.feed(slice) {
                return;
            }
        }
    }
    relay.finish();
}

/// One line on standard output.
pub fn line(text: &str) {
    self::text(Stream::Out, &[text, "\n"]);
}

/// One line on standard error.
pub fn notice(text: &str) {
    self::text(Stream::Err, &[text, "\n"]);
}

/// A value of ours as JSON, pretty, on standard output.
pub fn json(value: &impl serde::Serialize) {
    let text = serde_json::to_string_pretty(value).expect("our views serialise");
    json_text(Stream::Out, &text, "\n");
}

/// A JSON document from elsewhere (a reply of the daemon's, the client's
/// refusal), then `end`: redacted string by string; what does not parse
/// as JSON is redacted as text.
pub fn json_text(stream: Stream, text: &str, end: &str) {
    match redact::json::redact(text, known().as_ref()) {
        Some(redacted) => {
            emit(stream, redacted.as_bytes());
            self::text(stream, &[end]);
        }
        None => self::text(stream, &[text, end]),
    }
}

/// A stream through the redactor, fed read by read (a child's output).
pub struct Relay {
    stream: Stream,
    redactor: Redactor,
}

impl Relay {
    pub fn new(stream: Stream) -> Relay {
        Relay::keyed(stream, None)
    }

    /// A relay that hides the token `known` describes (else the one the
    /// runtime's fingerprint describes, when there is one).
    pub fn keyed(stream: Stream, known: Option<Fingerprint>) -> Relay {
        Relay {
            stream,
            redactor: Redactor::new(known.or_else(self::known)),
        }
    }

    /// Takes the next read; `false` once the output is closed.
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        emit(self.stream, &self.redactor.feed(bytes))
    }

    /// The end of the stream: what the redactor held back.
    pub fn finish(self) {
        emit(self.stream, &self.redactor.finish());
    }
}

/// What a command says once it has waited a second for another one's lock.
pub fn waiting_for_another() {
    notice("my-chrome: waiting for another my-chrome command to finish...");
}
