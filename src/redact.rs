//! The streaming redactor every byte forwarded from the Playwright CLI
//! passes through (docs/DESIGN.md, invariant 9). These become `<redacted>`:
//!
//! - the query of the extension's `chrome-extension://<id>/connect.html?…`
//!   URL: plain, percent-encoded (up to nine times over), or with
//!   JSON-escaped slashes;
//! - the value after `token` and a separator: `=` or `:` (also `%3D`/`%3A`
//!   encoded up to nine times, JSON's `\u003d`, HTML's `&#61;`, `&#x3d;`,
//!   `&equals;`, `&colon;`), with up to 32 spaces or line breaks and a
//!   closing quote between them (`"token" :\n "…"`), the word itself in any
//!   ASCII case, with common Cyrillic and Greek lookalike letters, and with
//!   invisible characters (soft hyphen, zero-width spaces and joiners, word
//!   joiner, byte-order mark) between its letters. That covers
//!   `PLAYWRIGHT_MCP_EXTENSION_TOKEN=…` and a JSON `"token":` key too.
//!
//! Split reads, provably: every pattern matches at most [`LONGEST`] bytes
//! (a test builds the longest instance of each), and a match is acted on
//! only once [`HOLD_BACK`] > [`LONGEST`] bytes follow its start, or at the
//! end. So every match is decided on the same bytes as in a single read,
//! and a property test feeds every input of the corpus at every split point
//! and in random chunkings and requires the single read's output. A value
//! still running at the end of a read is dropped as it arrives, never
//! buffered. `finish` flushes the rest.

use std::sync::OnceLock;

use regex::bytes::Regex;

pub const REDACTED: &[u8] = b"<redacted>";

/// An upper bound on the length of any match of [`patterns`] (see the test
/// `every_pattern_is_shorter_than_the_hold_back`).
const LONGEST: usize = 256;

/// After `token:`, how far the value may start (spaces, a quote): only a
/// value that begins with a token character within it is redacted, so
/// that a label ending in "token:" keeps what follows it.
const OPENING_LIMIT: usize = 32;

/// How far behind the input the output stays: a whole match and what
/// decides it.
const HOLD_BACK: usize = LONGEST + OPENING_LIMIT + 2;

/// How often a character may be percent-encoded over (`%3D`, `%253D`, …).
const ENCODINGS: usize = 9;

/// Characters that may hide between letters without showing.
const INVISIBLE: &str = r"(?:\xC2\xAD|\xE2\x80[\x8B-\x8D]|\xE2\x81\xA0|\xEF\xBB\xBF)";

/// `token`, letter by letter: ASCII in any case, or a Cyrillic or Greek
/// lookalike, with up to two invisible characters after each letter.
fn token_word() -> String {
    let letters = [
        r"(?:t|\xD1\x82|\xCF\x84|\xD0\xA2|\xCE\xA4)", // т τ Т Τ
        r"(?:o|\xD0\xBE|\xCE\xBF|\xD6\x85|\xD0\x9E|\xCE\x9F)", // о ο օ О Ο
        r"(?:k|\xD0\xBA|\xCE\xBA|\xD0\x9A|\xCE\x9A)", // к κ К Κ
        r"(?:e|\xD0\xB5|\xD2\xBD|\xD0\x95|\xCE\x95)", // е ҽ Е Ε
        r"(?:n|\xD5\xB8|\xCE\xB7|\xCE\x9D)",          // ո η Ν
    ];
    letters
        .iter()
        .map(|l| format!("{l}{INVISIBLE}{{0,2}}"))
        .collect()
}

fn patterns() -> &'static Regex {
    static PATTERNS: OnceLock<Regex> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        // A character, or it percent-encoded once to ENCODINGS times over.
        let enc =
            |plain: &str, hex: &str| format!(r"(?:{plain}|%(?:25){{0,{}}}{hex})", ENCODINGS - 1);
        let slash = format!(r"(?:{}|\\/)", enc("/", "2f"));
        let url = format!(
            r"chrome-extension{colon}{slash}{slash}[a-p]{{32}}{slash}connect\.html{question}",
            colon = enc(":", "3a"),
            question = enc(r"\?", "3f"),
        );
        let separator = format!(
            r#"(?:{}|{}|\\u003[da]|&#(?:61|58|x3[da]);|&equals;|&colon;)"#,
            enc("=", "3d"),
            enc(":", "3a"),
        );
        let token = format!(r#"{}(?:\\{{0,3}}"|')?\s{{0,32}}{separator}"#, token_word());
        Regex::new(&format!("(?i-u){url}|{token}")).expect("the redaction patterns compile")
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
        // Matches that start here or later wait for more input: fewer than
        // HOLD_BACK bytes follow them, so a longer read could decide them
        // differently.
        let decided = if at_end {
            self.pending.len()
        } else {
            self.pending.len().saturating_sub(HOLD_BACK)
        };
        let mut out = Vec::with_capacity(self.pending.len());
        let mut pos = 0;
        while let Some(found) = patterns().find_at(&self.pending, pos) {
            if found.start() >= decided {
                break;
            }
            if is_colon(found.as_bytes()) && !value_follows(&self.pending[found.end()..]) {
                // A label such as `"API token:" [ref=e5]`: left as it is.
                out.extend_from_slice(&self.pending[pos..found.end()]);
                pos = found.end();
                continue;
            }
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
        let keep = decided.max(pos);
        out.extend_from_slice(&self.pending[pos..keep]);
        self.pending.drain(..keep);
        out
    }
}

/// Whether a match ends in a `:` (plain or encoded) rather than a `=`.
fn is_colon(found: &[u8]) -> bool {
    let lower = found.to_ascii_lowercase();
    [
        &b":"[..],
        b"%3a",
        b"\\u003a",
        b"&#58;",
        b"&#x3a;",
        b"&colon;",
    ]
    .iter()
    .any(|end| lower.ends_with(end))
}

/// Whether a token character starts the value within [`OPENING_LIMIT`]
/// bytes of spaces and quotes.
fn value_follows(after: &[u8]) -> bool {
    after
        .iter()
        .take(OPENING_LIMIT + 1)
        .find(|b| !opens_value(**b))
        .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
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
    use proptest::prelude::*;

    const SECRET: &str = "Zq3_secretTOKENvalue-0123456789abcdef";
    const ID: &str = "mmlmfjhmonkocbjadbfplnigmagldckm";

    fn redacted(text: &str) -> String {
        String::from_utf8_lossy(&redact(text.as_bytes())).into_owned()
    }

    /// `text` fed in reads of these sizes (the rest in one last read).
    fn chunked(text: &[u8], sizes: &[usize]) -> Vec<u8> {
        let mut r = Redactor::new();
        let mut out = Vec::new();
        let mut rest = text;
        for size in sizes {
            let (now, later) = rest.split_at((*size).min(rest.len()));
            out.extend(r.feed(now));
            rest = later;
        }
        out.extend(r.feed(rest));
        out.extend(r.finish());
        out
    }

    /// Percent-encodes `text` `times` times over.
    fn encoded(text: &str, times: usize) -> String {
        let mut out = text.to_string();
        for _ in 0..times {
            out = out
                .bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                        (b as char).to_string()
                    }
                    other => format!("%{other:02X}"),
                })
                .collect();
        }
        out
    }

    /// Texts that carry SECRET, in every form the redactor knows.
    fn leaking() -> Vec<String> {
        let connect = format!(
            "chrome-extension://{ID}/connect.html?mcpRelayUrl=ws%3A%2F%2F127.0.0.1%3A1%2Fx&token={SECRET}"
        );
        let mut texts = vec![
            format!("- 1: [{connect}](chrome-error://chromewebdata/)\n"),
            format!(
                r#"{{"url":"chrome-extension://{ID}/connect.html?protocolVersion=2\u0026token={SECRET}","title":"x"}}"#
            ),
            format!(r#""chrome-extension:\/\/{ID}\/connect.html?token={SECRET}""#),
            format!(
                "CHROME-EXTENSION://{}/CONNECT.HTML?TOKEN={SECRET}",
                ID.to_uppercase()
            ),
            format!("x?a=1&token={SECRET}&b=2"),
            format!("token%3D{SECRET} done"),
            format!("\"token\\u003d{SECRET}\""),
            format!("token=\"{SECRET}\""),
            format!("token='{SECRET}'"),
            format!("token= {SECRET}"),
            format!("token = {SECRET}"),
            format!("token: {SECRET}"),
            format!("Token :\t{SECRET}"),
            format!("token=<{SECRET}>"),
            format!("token=`{SECRET}`"),
            format!("token&#61;{SECRET}"),
            format!("token&#x3D;{SECRET}"),
            format!("token&equals;{SECRET}"),
            format!("to\u{AD}ken={SECRET}"),
            format!("t\u{200B}o\u{200D}k\u{2060}e\u{FEFF}n={SECRET}"),
            format!("t\u{43E}ken={SECRET}"),
            format!("\u{442}\u{43E}\u{43A}\u{435}n: {SECRET}"),
            format!("\u{422}\u{41E}\u{41A}\u{415}\u{39D}={SECRET}"),
            format!(r#"{{\\\"token\\\": \\\"{SECRET}\\\"}}"#),
            format!(r#"{{"env":"PLAYWRIGHT_MCP_EXTENSION_TOKEN=\"{SECRET}\""}}"#),
            format!("{{\"PLAYWRIGHT_MCP_EXTENSION_TOKEN\":\n          \"{SECRET}\"}}"),
            format!(r#"{{"token":"{SECRET}"}}"#),
            format!(r#"{{"token" : "{SECRET}"}}"#),
            format!("{{\"token\"\n: \"{SECRET}\"}}\n"),
            format!("{{\n  \"token\"\n\n  :\n  \"{SECRET}\"\n}}\n"),
            format!("{{\\\"token\\\": \\\"{SECRET}\\\"}}"),
            format!("auth-token: {SECRET}\n"),
        ];
        for times in 1..=ENCODINGS {
            texts.push(format!("x?{}", encoded(&format!("token={SECRET}"), times)));
            texts.push(format!("next={}", encoded(&connect, times)));
        }
        texts
    }

    /// Texts that must come out as they went in.
    fn ordinary() -> Vec<String> {
        vec![
            "### Open tabs\n- 0: (current) [Hello](http://127.0.0.1:8765/a.html)\n".into(),
            "chrome-extension://abcdefghijklmnopabcdefghijklmnop/page.html?x=1".into(),
            "tokens=5 and a tokenizer: fine\n".into(),
            "- textbox \"API token:\" [ref=e5]\n- button \"Copy token:\" [ref=e6] [cursor=pointer]\n".into(),
            "Your token: (hidden)\ntoken: \n".into(),
            "x".repeat(2000),
            "línea con acentos y — guiones\n".repeat(40),
        ]
    }

    #[test]
    fn every_known_form_is_redacted_and_ordinary_text_untouched() {
        for text in leaking() {
            let out = redacted(&text);
            assert!(!out.contains(&SECRET[..12]), "leaked from {text:?}: {out}");
            assert!(out.contains("<redacted>"), "{text:?}: {out}");
        }
        for text in ordinary() {
            assert_eq!(redacted(&text), text);
        }
        assert_eq!(
            redacted(&format!("x?a=1&token={SECRET}&b=2")),
            "x?a=1&token=<redacted>&b=2"
        );
        assert_eq!(
            redacted(&format!(
                "[chrome-extension://{ID}/connect.html?token={SECRET}](x)"
            )),
            format!("[chrome-extension://{ID}/connect.html?<redacted>](x)")
        );
        // What opens the value (spaces, a quote) goes with it.
        assert_eq!(
            redacted(&format!("{{\"token\"\n: \"{SECRET}\"}}\n")),
            "{\"token\"\n:<redacted>\"}\n"
        );
    }

    #[test]
    fn every_split_point_gives_the_single_read() {
        for text in leaking().into_iter().chain(ordinary()) {
            let bytes = text.as_bytes();
            let whole = redact(bytes);
            for cut in 0..=bytes.len() {
                assert_eq!(chunked(bytes, &[cut]), whole, "{text:?} cut at {cut}");
            }
            assert_eq!(chunked(bytes, &vec![1; bytes.len()]), whole, "byte by byte");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        #[test]
        fn random_chunkings_give_the_single_read(
            pick in any::<prop::sample::Index>(),
            sizes in prop::collection::vec(0usize..300, 0..12),
            before in "[ a-z\n\"{}:=]{0,300}",
        ) {
            let corpus: Vec<String> = leaking().into_iter().chain(ordinary()).collect();
            let text = format!("{before}{}", corpus[pick.index(corpus.len())]);
            let whole = redact(text.as_bytes());
            prop_assert_eq!(chunked(text.as_bytes(), &sizes), whole);
        }
    }

    #[test]
    fn a_value_longer_than_any_read_is_dropped_as_it_comes() {
        let long = "v".repeat(10_000);
        let text = format!("token={long} after\n");
        let out = chunked(text.as_bytes(), &[5, 100, 1000, 3000]);
        assert_eq!(String::from_utf8(out).unwrap(), "token=<redacted> after\n");
    }

    #[test]
    fn output_stays_only_a_hold_back_behind() {
        let mut r = Redactor::new();
        assert!(r.feed(b"Waiting for the extension...\n").is_empty());
        let long = "x".repeat(1000);
        assert_eq!(r.feed(long.as_bytes()).len(), 1029 - HOLD_BACK);
        assert_eq!(r.finish().len(), HOLD_BACK);
    }

    #[test]
    fn every_pattern_is_shorter_than_the_hold_back() {
        let most = "%".to_string() + &"25".repeat(ENCODINGS - 1);
        let url =
            format!("chrome-extension{most}3a{most}2f{most}2f{ID}{most}2fconnect.html{most}3f");
        // Each letter its longest lookalike, with its two longest invisibles.
        let word: String = ['\u{442}', '\u{43E}', '\u{43A}', '\u{435}', '\u{578}']
            .iter()
            .map(|c| format!("{c}\u{200B}\u{200B}"))
            .collect();
        let token = format!("{word}\\\\\\\"{}{most}3d", " ".repeat(32));
        for longest in [url, token] {
            let found = patterns().find(longest.as_bytes()).expect("it matches");
            assert_eq!(found.len(), longest.len(), "{longest}");
            assert!(longest.len() <= LONGEST, "{} > {LONGEST}", longest.len());
        }
    }
}
