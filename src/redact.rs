//! The streaming redactor every byte forwarded from the Playwright CLI
//! passes through (invariant 9). These become `<redacted>`:
//!
//! - the query of the extension's `chrome-extension://<id>/connect.html?…`
//!   URL: plain, percent-encoded (up to three times over), or with
//!   JSON-escaped slashes;
//! - the value after any `token=` (also `token%3D`, double-encoded, or JSON's
//!   `token\u003d`), even when quoted or preceded by spaces;
//! - the value of a JSON `"token":` key and of
//!   `PLAYWRIGHT_MCP_EXTENSION_TOKEN` as a key (the extension's status page
//!   shows it that way).
//!
//! Split reads: whatever could still begin a pattern (at most the last
//! [`HOLD_BACK`] bytes, and never more than what follows the last newline)
//! waits for the next read, and a value still running at the end of a read
//! is dropped as it arrives, never buffered. `finish` flushes the rest.

use std::sync::OnceLock;

use regex::bytes::Regex;

pub const REDACTED: &[u8] = b"<redacted>";

/// Longer than any prefix the patterns can match (see the test
/// `hold_back_covers_the_longest_prefix`).
const HOLD_BACK: usize = 192;

fn patterns() -> &'static Regex {
    static PATTERNS: OnceLock<Regex> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        // A character, or it percent-encoded once to three times over.
        let enc = |plain: &str, hex: &str| format!(r"(?:{plain}|%(?:25){{0,3}}{hex})");
        let slash = format!(r"(?:{}|\\/)", enc("/", "2f"));
        let url = format!(
            r"chrome-extension{colon}{slash}{slash}[a-p]{{32}}{slash}connect\.html{question}",
            colon = enc(":", "3a"),
            question = enc(r"\?", "3f"),
        );
        let token = format!(r"token(?:{}|\\u003d)", enc("=", "3d"));
        let keys = r#"(?:"token"|extension_token\\?"?)\s*[:=]"#;
        Regex::new(&format!("(?i-u){url}|{token}|{keys}")).expect("the redaction patterns compile")
    })
}

/// What may stand between a prefix and its value: spaces, and an opening
/// quote or bracket (possibly JSON-escaped).
fn opens_value(byte: u8) -> bool {
    byte.is_ascii_whitespace() || matches!(byte, b'"' | b'\'' | b'`' | b'<' | b'\\')
}

/// Where a value ends: whitespace, quotes, brackets, and (outside a URL
/// query, where the whole query goes) the next parameter.
fn ends_value(byte: u8, in_url_query: bool) -> bool {
    byte.is_ascii_whitespace()
        || matches!(
            byte,
            b'"' | b'\'' | b'<' | b'>' | b')' | b']' | b'`' | b'|' | b'\\'
        )
        || (!in_url_query && matches!(byte, b'&' | b';' | b','))
}

/// Dropping a value that began in an earlier read.
#[derive(Clone, Copy)]
struct Skipping {
    in_url_query: bool,
    /// Still before the value (spaces, an opening quote).
    opening: bool,
}

#[derive(Default)]
pub struct Redactor {
    /// Bytes not yet emitted (at most a held-back tail).
    pending: Vec<u8>,
    skipping: Option<Skipping>,
}

impl Redactor {
    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// Takes the next read; returns what may be shown now.
    pub fn feed(&mut self, input: &[u8]) -> Vec<u8> {
        let mut input = input;
        if let Some(skip) = self.skipping {
            match value_end(input, skip) {
                End::At(end) => {
                    self.skipping = None;
                    input = &input[end..];
                }
                End::Beyond(still) => {
                    self.skipping = Some(still);
                    return Vec::new();
                }
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
            let skip = Skipping {
                in_url_query: found.as_bytes()[..6].eq_ignore_ascii_case(b"chrome"),
                opening: true,
            };
            out.extend_from_slice(&self.pending[pos..found.end()]);
            out.extend_from_slice(REDACTED);
            match value_end(&self.pending[found.end()..], skip) {
                End::At(end) => pos = found.end() + end,
                End::Beyond(still) => {
                    // The value runs past this read: drop it as it comes.
                    if !at_end {
                        self.skipping = Some(still);
                    }
                    self.pending.clear();
                    return out;
                }
            }
        }
        let keep = if at_end {
            self.pending.len()
        } else {
            // No pattern spans a newline before its separator, so complete
            // lines go out at once; only a tail that might start one waits.
            let tail = self.pending.len().saturating_sub(HOLD_BACK);
            let line = self.pending[pos..]
                .iter()
                .rposition(|b| *b == b'\n')
                .map(|i| pos + i + 1);
            tail.max(line.unwrap_or(0)).max(pos)
        };
        out.extend_from_slice(&self.pending[pos..keep]);
        self.pending.drain(..keep);
        out
    }
}

enum End {
    /// The value ends at this offset.
    At(usize),
    /// It runs past the input, in this state.
    Beyond(Skipping),
}

fn value_end(input: &[u8], mut skip: Skipping) -> End {
    for (i, byte) in input.iter().enumerate() {
        if skip.opening {
            if opens_value(*byte) {
                continue;
            }
            skip.opening = false;
        }
        if ends_value(*byte, skip.in_url_query) {
            return End::At(i);
        }
    }
    End::Beyond(skip)
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

    fn never_leaks(text: &str) {
        for out in every_split(text) {
            assert!(!out.contains(&SECRET[..12]), "leaked from {text:?}: {out}");
        }
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
        assert!(!redacted(&json).contains(SECRET), "{}", redacted(&json));
        assert!(
            redacted(&json).ends_with(r#""title":"x"}"#),
            "{}",
            redacted(&json)
        );
        let encoded = format!(
            "next=chrome-extension%3A%2F%2F{ID}%2Fconnect.html%3Fa%3D1%26token%3D{SECRET} ok"
        );
        assert_eq!(
            redacted(&encoded),
            format!("next=chrome-extension%3A%2F%2F{ID}%2Fconnect.html%3F<redacted> ok")
        );
        for text in [
            format!(r#""chrome-extension:\/\/{ID}\/connect.html?token={SECRET}""#),
            format!(
                "CHROME-EXTENSION://{}/CONNECT.HTML?TOKEN={SECRET}",
                ID.to_uppercase()
            ),
            format!(
                "chrome-extension%253A%252F%252F{ID}%252Fconnect.html%253Fa%253D1%2526token%253D{SECRET}"
            ),
        ] {
            never_leaks(&text);
        }
    }

    #[test]
    fn any_token_value_is_redacted_however_it_is_written() {
        assert_eq!(
            redacted(&format!("x?a=1&token={SECRET}&b=2")),
            "x?a=1&token=<redacted>&b=2"
        );
        assert_eq!(
            redacted(&format!("token%3D{SECRET} done")),
            "token%3D<redacted> done"
        );
        for text in [
            format!("\"token\\u003d{SECRET}\""),
            format!("token=\"{SECRET}\""),
            format!("token='{SECRET}'"),
            format!("token= {SECRET}"),
            format!("token=<{SECRET}>"),
            format!("token=`{SECRET}`"),
            format!(r#"{{"env":"PLAYWRIGHT_MCP_EXTENSION_TOKEN=\"{SECRET}\""}}"#),
            format!("{{\"PLAYWRIGHT_MCP_EXTENSION_TOKEN\":\n          \"{SECRET}\"}}"),
            format!(r#"{{"token":"{SECRET}"}}"#),
            format!(r#"{{"token" : "{SECRET}"}}"#),
            format!("x?token%253D{SECRET}"),
        ] {
            never_leaks(&text);
        }
    }

    #[test]
    fn ordinary_output_is_untouched() {
        let ordinary = "### Open tabs\n- 0: (current) [Hello](http://127.0.0.1:8765/a.html)\n";
        assert_eq!(redacted(ordinary), ordinary);
        let other_extension = "chrome-extension://abcdefghijklmnopabcdefghijklmnop/page.html?x=1";
        assert_eq!(redacted(other_extension), other_extension);
    }

    #[test]
    fn a_value_split_across_reads_never_escapes_and_splitting_changes_nothing() {
        for text in [
            format!(
                "tabs: chrome-extension://{ID}/connect.html?protocolVersion=2&token={SECRET} end\n"
            ),
            format!("{{\"u\":\"x?token={SECRET}\"}}"),
            format!("chrome-extension%3A%2F%2F{ID}%2Fconnect.html%3Ftoken%3D{SECRET}"),
            format!("token= \"{SECRET}\" after"),
        ] {
            let whole = redacted(&text);
            for out in every_split(&text) {
                assert!(!out.contains(&SECRET[..12]), "{out}");
                assert_eq!(out, whole, "splitting must not change the result");
            }
        }
    }

    #[test]
    fn complete_lines_are_not_held_back() {
        let mut r = Redactor::new();
        let line = b"Waiting for the extension to connect...\n";
        assert_eq!(r.feed(line), line);
        let long = "x".repeat(1000);
        assert_eq!(
            r.feed(long.as_bytes()).len(),
            1000 - HOLD_BACK,
            "only a possible prefix waits"
        );
        assert_eq!(r.finish().len(), HOLD_BACK);
    }

    #[test]
    fn hold_back_covers_the_longest_prefix() {
        let longest = format!(
            "chrome-extension%2525253A%2525252F%2525252F{ID}%2525252Fconnect.html%2525253F"
        );
        assert!(patterns().is_match(longest.as_bytes()));
        assert!(longest.len() < HOLD_BACK, "{}", longest.len());
        let key = format!("PLAYWRIGHT_MCP_EXTENSION_TOKEN\\\"{}:", " ".repeat(60));
        assert!(patterns().is_match(key.as_bytes()) && key.len() < HOLD_BACK);
    }
}
