//! Everything my-chrome prints goes through here (docs/DESIGN.md,
//! invariant 9), whatever it is — a page's reply, a tab's title, a notice,
//! an error message, a child's output: text through the streaming redactor
//! (the token's spellings, the stored token's bare value through the
//! fingerprint `connect` recorded, terminal controls escaped), and JSON as
//! JSON (`redact::json`: every string redacted, controls in JSON's own
//! escape, so that `--json` output always parses). No other module writes
//! to standard output or standard error (tests/layout.rs).

use std::io::{self, Write};
use std::sync::Mutex;

use crate::config::RuntimeLocation;
use crate::redact::fingerprint::{self, Fingerprint, FingerprintError};
use crate::redact::{self, Redactor};
use crate::runtime::Runtime;

/// Where a text goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Out,
    Err,
}

/// The stored token's fingerprint every print uses: the runtime's, read
/// once at start (`init`), or the one a printer of page text read since.
/// It is set, never fetched: no print does I/O of its own.
/// The fingerprint of the token stored now, for my-chrome's own words: a
/// later record replaces it (a token replaced since the start is the one
/// that can be delivered, so the one to hide).
static KNOWN: Mutex<Option<Fingerprint>> = Mutex::new(None);

/// Every later print redacts the bare value of the token whose
/// fingerprint `runtime` holds (read now; a runtime without one, or one
/// that cannot be read, leaves every spelling redacted all the same).
pub fn init(runtime: &RuntimeLocation) {
    let known = Runtime::inspect(runtime)
        .ok()
        .flatten()
        .and_then(|runtime| fingerprint::recorded(&runtime).ok().flatten());
    if let Some(known) = known {
        remember(&known);
    }
}

/// Every later print of this process hides the token `known` describes:
/// what `connect` has just recorded (the first connect of a runtime had
/// none to read at start; a token replaced since had another).
pub fn remember(known: &Fingerprint) {
    *KNOWN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(known.clone());
}

/// The fingerprint remembered last.
fn known() -> Option<Fingerprint> {
    KNOWN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
}

/// The one way a page's words are printed (a reply, a tab's title, the
/// pinned CLI's output): it holds the stored token's fingerprint, read
/// when it is made, so that a printer exists only where the fingerprint
/// could be read (an error otherwise, before anything is shown).
pub struct Printer {
    known: Option<Fingerprint>,
}

impl Printer {
    /// The printer for `runtime`'s pages: its fingerprint read now.
    pub fn of(runtime: &Runtime) -> Result<Printer, FingerprintError> {
        let known = fingerprint::recorded(runtime)?;
        if let Some(known) = &known {
            // Later messages of this process hide it too.
            remember(known);
        }
        Ok(Printer { known })
    }

    /// The fingerprint it redacts with (for what writes page text
    /// elsewhere: files, the book).
    pub fn known(&self) -> Option<&Fingerprint> {
        self.known.as_ref()
    }

    /// `parts` of a page's text, as [`text`] prints them.
    pub fn text(&self, stream: Stream, parts: &[&str]) {
        relay_all(Relay::keyed(stream, self.known.clone()), parts);
    }

    /// A JSON document of a page's, as [`json_text`] prints it.
    pub fn json_text(&self, stream: Stream, text: &str, end: &str) {
        json_keyed(stream, text, end, self.known.clone());
    }

    /// Where a child that prints a page's words (the pinned CLI) writes
    /// them, as [`Relay::sink`].
    pub fn sink(&self, stream: Stream) -> Box<dyn Write + Send> {
        Relay::keyed(stream, self.known.clone()).sink()
    }
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
/// large reply is not copied whole again): my-chrome's own words. A page's
/// go through a [`Printer`].
pub fn text(stream: Stream, parts: &[&str]) {
    relay_all(Relay::new(stream), parts);
}

fn relay_all(mut relay: Relay, parts: &[&str]) {
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
    json_keyed(stream, text, end, known());
}

fn json_keyed(stream: Stream, text: &str, end: &str, known: Option<Fingerprint>) {
    match redact::json::redact(text, known.as_ref()) {
        Some(redacted) => {
            emit(stream, redacted.as_bytes());
            relay_all(Relay::keyed(stream, known), &[end]);
        }
        None => relay_all(Relay::keyed(stream, known), &[text, end]),
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

    /// This relay as the sink of a child's output
    /// (`child::Output::Streamed`): fed write by write as the child's
    /// pipe is read, finished when dropped.
    pub fn sink(self) -> Box<dyn Write + Send> {
        Box::new(Sink(Some(self)))
    }
}

/// A [`Relay`] as a writer. A closed output takes the rest silently, as
/// [`Relay::feed`] drops it: the child's pipe is still read to its end.
struct Sink(Option<Relay>);

impl Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if let Some(relay) = &mut self.0 {
            relay.feed(bytes);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if let Some(relay) = self.0.take() {
            relay.finish();
        }
    }
}

/// What a command says once it has waited a second for another one's lock.
pub fn waiting_for_another() {
    notice("my-chrome: waiting for another my-chrome command to finish...");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::Token;

    /// A fingerprint recorded after the start (a runtime's first
    /// `connect`) reaches my-chrome's own messages from then on: an error
    /// quoting the daemon's words hides the token's bare value.
    /// Also when the runtime held another token's at the start (the
    /// token replaced since the last connect): the newest record wins.
    #[test]
    fn a_fingerprint_remembered_later_hides_the_bare_value_in_own_words() {
        // Made up for this test: no real tokens.
        let old = "Zq3throwAwayOLDtokenValue0123456789abcdXY";
        let new = "Zq3throwAwayTOKENvalue0123456789abcdXYZ";
        let fingerprint = |value: &str| {
            Fingerprint::of(&Token::parse(value.as_bytes(), "test").unwrap()).unwrap()
        };
        let said = |value: &str| {
            let message = format!("Error: the page said {value}\n");
            let mut redactor = Relay::new(Stream::Err).redactor;
            let mut out = redactor.feed(message.as_bytes());
            out.extend(redactor.finish());
            String::from_utf8_lossy(&out).into_owned()
        };
        assert!(said(new).contains(new), "nothing known yet");
        remember(&fingerprint(old));
        assert!(!said(old).contains(old), "{}", said(old));
        assert!(said(new).contains(new), "only the old one known");
        remember(&fingerprint(new));
        let after = said(new);
        assert!(!after.contains(new), "{after}");
        assert!(after.starts_with("Error: the page said "), "{after}");
    }
}
