//! The streaming redactor every byte forwarded from the Playwright CLI
//! passes through (invariant 9). Two things become `<redacted>`:
//!
//! - the query of the extension's `chrome-extension://<id>/connect.html?…`
//!   URL (plain, percent-encoded, or with JSON-escaped slashes), and
//! - the value of any `token=` (or `token%3D`, or JSON's `token\u003d`).
//!
//! A value ends at whitespace or a quote or bracket that ends a URL in text,
//! Markdown or JSON. It is found even when split across reads: the last few
//! bytes that could begin a pattern are held back until the next read, and a
//! value still running at the end of a read is dropped as it arrives, never
//! buffered. `finish` flushes what is held back.

use std::sync::OnceLock;

use regex::bytes::Regex;

pub const REDACTED: &[u8] = b"<redacted>";

/// Longer than any prefix the patterns match, so a prefix split across two
/// reads is always seen whole.
const HOLD_BACK: usize = 96;

fn patterns() -> &'static Regex {
    static PATTERNS: OnceLock<Regex> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let slash = r"(?:/|%2f|\\/)";
        let url = format!(
            r"chrome-extension(?::|%3a){slash}{slash}[a-p]{{32}}{slash}connect\.html(?:\?|%3f)"
        );
        let token = r"token(?:=|%3d|\\u003d)";
        Regex::new(&format!("(?i-u){url}|{token}")).expect("the redaction patterns compile")
    })
}

/// Where a value ends: whitespace, quotes, brackets, and (for `token=`) the
/// next parameter.
fn ends_value(byte: u8, in_url_query: bool) -> bool {
    byte.is_ascii_whitespace()
        || matches!(byte, b'"' | b'\'' | b'<' | b'>' | b')' | b']' | b'`' | b'|')
        || (!in_url_query && matches!(byte, b'&' | b';' | b','))
}

#[derive(Default)]
pub struct Redactor {
    /// Bytes not yet emitted (at most a held-back tail).
    pending: Vec<u8>,
    /// Inside a value whose start was already replaced: drop until it ends.
    skipping: Option<bool>,
}

impl Redactor {
    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// Takes the next read; returns what may be shown now.
    pub fn feed(&mut self, input: &[u8]) -> Vec<u8> {
        let mut input = input;
        if let Some(in_query) = self.skipping {
            match input.iter().position(|b| ends_value(*b, in_query)) {
                Some(end) => {
                    self.skipping = None;
                    input = &input[end..];
                }
                None => return Vec::new(),
            }
        }
        self.pending.extend_from_slice(input);
        self.process(false)
    }

    /// The end of the stream: everything still held back, redacted.
    pub fn finish(mut self) -> Vec<u8> {
        self.process(true)
    }

    fn process(&mut self, at_end: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.pending.len());
        let mut pos = 0;
        while let Some(found) = patterns().find_at(&self.pending, pos) {
            let in_query = found.as_bytes()[..6].eq_ignore_ascii_case(b"chrome");
            out.extend_from_slice(&self.pending[pos..found.end()]);
            out.extend_from_slice(REDACTED);
            let rest = &self.pending[found.end()..];
            match rest.iter().position(|b| ends_value(*b, in_query)) {
                Some(end) => pos = found.end() + end,
                None => {
                    // The value runs past this read: drop it as it comes.
                    if !at_end {
                        self.skipping = Some(in_query);
                    }
                    self.pending.clear();
                    return out;
                }
            }
        }
        let keep = if at_end {
            self.pending.len()
        } else {
            self.pending.len().saturating_sub(HOLD_BACK).max(pos)
        };
        out.extend_from_slice(&self.pending[pos..keep]);
        self.pending.drain(..keep);
        out
    }
}

/// Redacts a whole buffer at once.
pub fn redact(text: &[u8]) -> Vec<u8> {
    let mut redactor = Redactor::new();
    let mut out = redactor.feed(text);
    out.extend(redactor.finish());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "Zq3_secretTOKENvalue-0123456789abcdef";
    const ID: &str = "mmlmfjhmonkocbjadbfplnigmagldckm";

    fn redacted(text: &str) -> String {
        String::from_utf8(redact(text.as_bytes())).unwrap()
    }

    /// Every way of cutting `text` into two reads, and byte by byte.
    fn every_split(text: &str) -> Vec<String> {
        let bytes = text.as_bytes();
        let mut outs = Vec::new();
        for cut in 0..=bytes.len() {
            let mut r = Redactor::new();
            let mut out = r.feed(&bytes[..cut]);
            out.extend(r.feed(&bytes[cut..]));
            out.extend(r.finish());
            outs.push(String::from_utf8(out).unwrap());
        }
        let mut r = Redactor::new();
        let mut out = Vec::new();
        for b in bytes {
            out.extend(r.feed(std::slice::from_ref(b)));
        }
        out.extend(r.finish());
        outs.push(String::from_utf8(out).unwrap());
        outs
    }

    #[test]
    fn the_connect_url_query_is_redacted_in_every_form() {
        let plain = format!(
            "- 1: [chrome-extension://{ID}/connect.html?mcpRelayUrl=ws%3A%2F%2F127.0.0.1%3A1%2Fx&protocolVersion=2&token={SECRET}](chrome-error://chromewebdata/)\n"
        );
        assert_eq!(
            redacted(&plain),
            format!(
                "- 1: [chrome-extension://{ID}/connect.html?<redacted>](chrome-error://chromewebdata/)\n"
            )
        );
        let json = format!(
            r#"{{"url":"chrome-extension://{ID}/connect.html?protocolVersion=2\u0026token={SECRET}","title":"x"}}"#
        );
        assert_eq!(
            redacted(&json),
            format!(r#"{{"url":"chrome-extension://{ID}/connect.html?<redacted>","title":"x"}}"#)
        );
        let escaped = format!(r#""chrome-extension:\/\/{ID}\/connect.html?token={SECRET}""#);
        assert!(
            !redacted(&escaped).contains(SECRET),
            "{}",
            redacted(&escaped)
        );
        let encoded = format!(
            "next=chrome-extension%3A%2F%2F{ID}%2Fconnect.html%3Fa%3D1%26token%3D{SECRET} ok"
        );
        assert_eq!(
            redacted(&encoded),
            format!("next=chrome-extension%3A%2F%2F{ID}%2Fconnect.html%3F<redacted> ok")
        );
        let upper = format!(
            "CHROME-EXTENSION://{}/CONNECT.HTML?TOKEN={SECRET}",
            ID.to_uppercase()
        );
        assert!(!redacted(&upper).contains(SECRET));
    }

    #[test]
    fn any_token_parameter_is_redacted_and_nothing_else_changes() {
        assert_eq!(
            redacted(&format!("x?a=1&token={SECRET}&b=2")),
            "x?a=1&token=<redacted>&b=2"
        );
        assert_eq!(
            redacted(&format!("token%3D{SECRET} done")),
            "token%3D<redacted> done"
        );
        assert_eq!(
            redacted(&format!("\"token\\u003d{SECRET}\"")),
            "\"token\\u003d<redacted>\""
        );
        let ordinary = "### Open tabs\n- 0: (current) [Hello](http://127.0.0.1:8765/a.html)\n";
        assert_eq!(redacted(ordinary), ordinary);
        let other_extension = "chrome-extension://abcdefghijklmnopabcdefghijklmnop/page.html?x=1";
        assert_eq!(redacted(other_extension), other_extension);
    }

    #[test]
    fn a_value_split_across_reads_never_escapes() {
        for text in [
            format!(
                "tabs: chrome-extension://{ID}/connect.html?protocolVersion=2&token={SECRET} end\n"
            ),
            format!("{{\"u\":\"x?token={SECRET}\"}}"),
            format!("chrome-extension%3A%2F%2F{ID}%2Fconnect.html%3Ftoken%3D{SECRET}"),
        ] {
            let whole = redacted(&text);
            for out in every_split(&text) {
                assert!(
                    !out.contains(SECRET) && !out.contains(&SECRET[..12]),
                    "{out}"
                );
                assert_eq!(out, whole, "splitting must not change the result");
            }
        }
    }

    #[test]
    fn output_is_held_back_only_at_the_edges() {
        let mut r = Redactor::new();
        let long = "x".repeat(1000);
        let out = r.feed(long.as_bytes());
        assert_eq!(
            out.len(),
            1000 - HOLD_BACK,
            "all but the possible start of a pattern"
        );
        assert_eq!(r.finish().len(), HOLD_BACK);
    }
}
