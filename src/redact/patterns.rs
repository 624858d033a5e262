//! The first stage of the redactor: the token's known *spellings*, for
//! any token (the second stage, `known.rs`, finds the bare value of the one
//! the user stored). These become `<redacted>`:
//!
//! - the query of the extension's `chrome-extension://<id>/connect.html?…`
//!   URL: plain, percent-encoded (up to nine times over), or with
//!   JSON-escaped slashes;
//! - the value after `token` and a separator: `=` or `:` (also `%3D`/`%3A`
//!   encoded up to nine times, JavaScript's `\u003d`, `\u{3d}`, `\x3d` and
//!   octal `\075`, HTML's `&#61;`, `&#061;`, `&#61` without its `;`,
//!   `&#x3d;`, `&equals;`, `&colon;`), with up to 32 spaces between them
//!   (ASCII spaces and line breaks, NUL, no-break space, the Unicode
//!   spaces and line and paragraph separators) and a closing quote (`"`,
//!   `'`, JSON-escaped, `&quot;`, `&#34;`, `&apos;`, `\x22`, `%22`); the word
//!   itself in any ASCII case, with its letters percent-encoded (`%74oken`),
//!   with common Cyrillic and Greek lookalike letters, and with invisible
//!   characters (soft hyphen, zero-width spaces and joiners, word joiner,
//!   byte-order mark) between its letters. That covers
//!   `PLAYWRIGHT_MCP_EXTENSION_TOKEN=…`, a JSON `"token":` key and its
//!   HTML-escaped form too. The value may open with the same spaces and
//!   quotes. Such a value goes only when it could carry a token: when it
//!   is at least `shape::MIN_LEN` bytes long, as every spelling of a token
//!   is, whatever encodings, invisible characters or lookalike letters it
//!   holds. A shorter word ("Session token: expired", `gt_token:
//!   Token![>]`, my-chrome's own `process-token: exposed`) stays. A token
//!   cut into short pieces, each behind a label of its own, is beyond any
//!   label rule (SECURITY.md says so); the stored token's unbroken bare
//!   value is hidden anywhere by the next stage.
//!
//! Split reads, provably: every pattern matches at most [`LONGEST`] bytes
//! (a test builds the longest instance of each), the opening of a value is
//! at most [`OPENING_LIMIT`] bytes, a value is judged on its first
//! `MIN_LEN` bytes, and a match is acted on only once [`HOLD_BACK`] >
//! [`LONGEST`] + [`OPENING_LIMIT`] + `MIN_LEN` bytes follow its start, or at
//! the end. So every match is decided on the same bytes as in a
//! single read, and a property test feeds every input of the corpus at
//! every split point and in random chunkings and requires the single
//! read's output. A value still running at the end of a read is dropped as
//! it arrives, never buffered. `finish` flushes the rest.

use std::sync::OnceLock;

use regex::bytes::Regex;
use regex_automata::Input;
use regex_automata::dfa::{regex::Regex as DfaRegex, sparse::DFA};

use super::spelling::{QUOTE, SPACE, enc};
use super::{REDACTED, Stage};
use crate::token_shape::MIN_LEN;

/// An upper bound on the length of any match of [`patterns`] (see the test
/// `every_pattern_is_shorter_than_the_hold_back`).
const LONGEST: usize = 320;

/// After `token:`, how far the value may start (spaces, a quote): only a
/// value that begins with a token character within it is redacted, so
/// that a label ending in "token:" keeps what follows it. Whatever the
/// separator, what opens a value is at most this long.
const OPENING_LIMIT: usize = 32;

/// How far behind the input the output stays: a whole match and what
/// decides it (a value's first `MIN_LEN` bytes, which hold the longest
/// opener too).
const HOLD_BACK: usize = LONGEST + OPENING_LIMIT + MIN_LEN + 2;

/// The longest single opener of a value (`&#x0000022;`), with room.
const LONGEST_OPENER: usize = 16;
const _: () = assert!(MIN_LEN >= LONGEST_OPENER);

/// The spellings (`spelling::spellings`) as the DFAs build.rs compiled
/// from them: loaded, not compiled, once per process.
type Spellings = DfaRegex<DFA<&'static [u8]>>;

fn patterns() -> &'static Spellings {
    static FORWARD: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/redact-forward.dfa"));
    static REVERSE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/redact-reverse.dfa"));
    static PATTERNS: OnceLock<Spellings> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        // SAFETY: the bytes are a constant of this binary, written by
        // build.rs with `to_bytes_little_endian` of the same regex-automata
        // (Cargo.lock has one), for a little-endian target (checked below);
        // the test `the_embedded_dfas_are_valid` loads these same bytes
        // with the full validation. Validating them at run time cost each
        // command about as much as compiling the expression did.
        #[allow(unsafe_code)]
        let load = |bytes| {
            unsafe { DFA::from_bytes_unchecked(bytes) }
                .expect("the redaction DFAs load")
                .0
        };
        DfaRegex::builder().build_from_dfas(load(FORWARD), load(REVERSE))
    })
}

// build.rs writes the DFAs little-endian.
#[cfg(not(target_endian = "little"))]
compile_error!("the redaction DFAs are built little-endian");

/// The first match at or after `at`.
fn find_at(haystack: &[u8], at: usize) -> Option<Found<'_>> {
    patterns()
        .find(Input::new(haystack).range(at..))
        .map(|m| Found {
            haystack,
            start: m.start(),
            end: m.end(),
        })
}

/// A match of the spellings.
struct Found<'h> {
    haystack: &'h [u8],
    start: usize,
    end: usize,
}

impl<'h> Found<'h> {
    fn start(&self) -> usize {
        self.start
    }

    fn end(&self) -> usize {
        self.end
    }

    fn as_bytes(&self) -> &'h [u8] {
        &self.haystack[self.start..self.end]
    }
}

/// Whether a match ends in a `:` (in any spelling) rather than a `=`.
fn is_colon(found: &[u8]) -> bool {
    static COLON: OnceLock<Regex> = OnceLock::new();
    COLON
        .get_or_init(|| {
            Regex::new(&format!(
                r"(?i-u)(?:{}|\\u003a|\\u\{{0*3a\}}|\\x3a|\\0?72|&#0*58;?|&#x0*3a;?|&colon;)$",
                enc(":", "3a")
            ))
            .expect("the colon pattern compiles")
        })
        .is_match(found)
}

/// What opens a value: spaces, a quote, `<`, a backslash.
fn opener() -> &'static Regex {
    static OPENER: OnceLock<Regex> = OnceLock::new();
    OPENER.get_or_init(|| {
        Regex::new(&format!(r"(?i-u)^(?:{SPACE}|{QUOTE}|[<\\])"))
            .expect("the opener pattern compiles")
    })
}

/// How a value opens.
enum Opening {
    /// After this many bytes of spaces and quotes.
    Len(usize),
    /// Its opening runs past [`OPENING_LIMIT`]: what is it hiding? The
    /// rest of the line goes.
    Overlong,
}

/// The opening at the start of `after`: whole openers, within
/// [`OPENING_LIMIT`] bytes (each is decided on [`LONGEST_OPENER`] bytes,
/// which the hold-back keeps in view).
fn opening(after: &[u8]) -> Opening {
    let mut at = 0;
    while let Some(found) = opener().find(&after[at..]) {
        if at + found.end() > OPENING_LIMIT {
            return Opening::Overlong;
        }
        at += found.end();
    }
    Opening::Len(at)
}

/// Where a value ends: whitespace, NUL, quotes, brackets, and (outside a
/// URL query, where the whole query goes) the next parameter or an HTML
/// entity (`&quot;`).
fn ends_value(byte: u8, in_url_query: bool) -> bool {
    byte.is_ascii_whitespace()
        || matches!(
            byte,
            0 | b'"' | b'\'' | b'<' | b'>' | b')' | b']' | b'`' | b'|' | b'\\'
        )
        || (!in_url_query && matches!(byte, b'&' | b';' | b','))
}

/// Dropping a value that began in an earlier read.
#[derive(Clone, Copy)]
struct Skipping {
    in_url_query: bool,
    /// After an overlong opening: to the end of the line.
    to_line_end: bool,
}

/// The spellings stage (see the module's comment).
#[derive(Default)]
pub struct Patterns {
    /// Bytes not yet emitted (at most a held-back tail).
    pending: Vec<u8>,
    skipping: Option<Skipping>,
}

impl Stage for Patterns {
    fn pending(&mut self) -> &mut Vec<u8> {
        &mut self.pending
    }

    /// A value that runs on from the last read is dropped as it comes.
    fn feed(&mut self, input: &[u8]) -> Vec<u8> {
        let mut input = input;
        if let Some(skip) = self.skipping {
            match value_end(input, skip) {
                End::At(end) => {
                    self.skipping = None;
                    input = &input[end..];
                }
                End::Beyond => return Vec::new(),
            }
        }
        self.pending.extend_from_slice(input);
        self.process(false)
    }

    fn finish(&mut self) -> Vec<u8> {
        self.skipping = None;
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
        while let Some(found) = find_at(&self.pending, pos) {
            if found.start() >= decided {
                break;
            }
            let after = &self.pending[found.end()..];
            let in_url_query = found.as_bytes()[..6].eq_ignore_ascii_case(b"chrome");
            let (opening, skip) = match opening(after) {
                Opening::Len(len) => {
                    // A label such as `"API token:" [ref=e5]`, or a word no
                    // token could be: left as it is.
                    let label = is_colon(found.as_bytes())
                        && !after.get(len).is_some_and(|b| starts_value(*b));
                    if label || (!in_url_query && holds_no_token(&after[len..], at_end)) {
                        out.extend_from_slice(&self.pending[pos..found.end()]);
                        pos = found.end();
                        continue;
                    }
                    let to_line_end = false;
                    (
                        len,
                        Skipping {
                            in_url_query,
                            to_line_end,
                        },
                    )
                }
                Opening::Overlong => {
                    let to_line_end = true;
                    (
                        0,
                        Skipping {
                            in_url_query,
                            to_line_end,
                        },
                    )
                }
            };
            out.extend_from_slice(&self.pending[pos..found.end()]);
            out.extend_from_slice(REDACTED);
            match value_end(&after[opening..], skip) {
                End::At(end) => pos = found.end() + opening + end,
                End::Beyond => {
                    // The value runs past this read: drop it as it comes.
                    if !at_end {
                        self.skipping = Some(skip);
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

/// A character a value may start with (after `:`, only such a value is
/// redacted).
fn starts_value(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-')
}

/// A labelled value (from its first byte on) that ends before it is
/// `MIN_LEN` bytes long: too short for any spelling of a token. Decided on
/// `MIN_LEN` bytes, which the hold-back keeps in view (or on all there is,
/// `at_end`).
fn holds_no_token(value: &[u8], at_end: bool) -> bool {
    let seen = &value[..value.len().min(MIN_LEN)];
    match seen.iter().position(|b| ends_value(*b, false)) {
        Some(_) => true,
        None => at_end && value.len() < MIN_LEN,
    }
}

enum End {
    /// The value ends at this offset.
    At(usize),
    /// It runs past the input.
    Beyond,
}

fn value_end(input: &[u8], skip: Skipping) -> End {
    let ends = |b: &u8| match skip.to_line_end {
        true => *b == b'\n',
        false => ends_value(*b, skip.in_url_query),
    };
    match input.iter().position(ends) {
        Some(end) => End::At(end),
        None => End::Beyond,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::spelling::{ENCODINGS, spellings};
    use super::*;

    /// The expression the DFAs were compiled from, compiled here as the
    /// regex crate does it.
    fn compiled() -> Regex {
        Regex::new(&spellings()).unwrap()
    }

    /// Every match the embedded DFAs find, from every start, is the one
    /// the expression finds: build.rs compiled what `spelling.rs` says.
    fn same_matches(text: &[u8], regex: &Regex) {
        for at in 0..=text.len() {
            let dfa = find_at(text, at).map(|f| (f.start(), f.end()));
            let expression = regex.find_at(text, at).map(|m| (m.start(), m.end()));
            assert_eq!(
                dfa,
                expression,
                "from {at} in {:?}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn the_embedded_dfas_are_valid() {
        for bytes in [
            include_bytes!(concat!(env!("OUT_DIR"), "/redact-forward.dfa")).as_slice(),
            include_bytes!(concat!(env!("OUT_DIR"), "/redact-reverse.dfa")),
        ] {
            DFA::from_bytes(bytes).expect("a valid DFA");
        }
    }

    #[test]
    fn the_embedded_dfas_find_what_the_expression_finds() {
        let regex = compiled();
        let mut texts = leaking();
        texts.extend(ordinary());
        texts.push(format!("{}{}", "token=".repeat(3), leaking().join(" ")));
        for text in texts {
            same_matches(text.as_bytes(), &regex);
        }
        // Bytes that are no UTF-8 around a match.
        same_matches(b"\xff\xfetoken=\xc3abc\x80", &regex);
    }

    proptest::proptest! {
        /// Text made of the spellings' own pieces, in any order.
        #[test]
        fn the_embedded_dfas_agree_on_any_mix_of_spellings(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "token", "TOKEN", "to\u{ad}ken", "%74oken", "\u{442}oken", "=", ":", "%3D",
                "%253a", "\\u003d", "&#61;", " ", "\u{a0}", "\"", "'", "&quot;", "abc",
                "chrome-extension://", "mmlmfjhmonkocbjadbfplnigmagldckm", "/connect.html?",
                "%2F", "\\/", "\n", "x",
            ]), 0..12),
        ) {
            let text = pieces.concat();
            same_matches(text.as_bytes(), &compiled());
        }
    }

    const SECRET: &str = "Zq3_secretTOKENvalue-0123456789abcdef";
    const ID: &str = "mmlmfjhmonkocbjadbfplnigmagldckm";

    /// This stage alone, in one read.
    fn redact(text: &[u8]) -> Vec<u8> {
        let mut stage = Patterns::default();
        let mut out = stage.feed(text);
        out.extend(stage.finish());
        out
    }

    fn redacted(text: &str) -> String {
        String::from_utf8_lossy(&redact(text.as_bytes())).into_owned()
    }

    /// `text` fed in reads of these sizes (the rest in one last read).
    fn chunked(text: &[u8], sizes: &[usize]) -> Vec<u8> {
        let mut r = Patterns::default();
        let mut out = Vec::new();
        for chunk in crate::redact::tests::chunks(text, sizes) {
            out.extend(r.feed(chunk));
        }
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

    /// Every byte of `text` percent-encoded.
    fn encoded_all(text: &str) -> String {
        text.bytes().map(|b| format!("%{b:02X}")).collect()
    }

    /// Texts that carry SECRET, in every form the redactor knows.
    pub(crate) fn leaking() -> Vec<String> {
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
            // Spellings found by trying (issue 18).
            format!("%74oken={SECRET}"),
            format!("%2574%256Fken={SECRET}"),
            format!("TO%4BEN={SECRET}"),
            format!("token&#061;{SECRET}"),
            format!("token&#61{SECRET}"),
            format!("token&#0058;{SECRET}"),
            format!("token&#x003D{SECRET}"),
            format!("token\u{A0}=\u{A0}{SECRET}"),
            format!("token\u{2028}:\u{2028}{SECRET}"),
            format!("token\0=\0{SECRET}"),
            format!("token\u{3000}=\u{202F}{SECRET}"),
            format!("{{&quot;token&quot;:&quot;{SECRET}&quot;}}"),
            format!("token=&quot;{SECRET}&quot;"),
            format!("token&#34;: &#34;{SECRET}&#34;"),
            format!("token=%22{SECRET}%22"),
            format!(r"token\x3d{SECRET}"),
            format!(r"token\x3A {SECRET}"),
            format!(r"token\075{SECRET}"),
            format!(r"token\72{SECRET}"),
            format!(r"token\u{{3d}}{SECRET}"),
            format!(r#"{{\x22token\x22:\x22{SECRET}\x22}}"#),
            // Openings: long, and in every quote the word may take.
            format!("token={}{SECRET}", " ".repeat(40)),
            format!("token:{}{SECRET}\nnext line", "\u{A0}".repeat(20)),
            format!("token=&#34{SECRET}"),
            format!("token=&#x0022;{SECRET}&#x0022;"),
            format!("token: &#0034;{SECRET}"),
            format!("token=\\u0022{SECRET}"),
            format!("token=`{SECRET}`"),
            // A value that could carry one: inside a longer word, encoded,
            // with invisible characters.
            format!("token=prefix.{SECRET}.suffix"),
            format!("token={}", encoded_all(SECRET)),
            format!("token=Zq3\u{AD}\u{FEFF}{}", &SECRET[3..]),
        ];
        for times in 1..=ENCODINGS {
            texts.push(format!("x?{}", encoded(&format!("token={SECRET}"), times)));
            texts.push(format!("next={}", encoded(&connect, times)));
        }
        texts
    }

    /// Texts that must come out as they went in.
    pub(crate) fn ordinary() -> Vec<String> {
        vec![
            "### Open tabs\n- 0: (current) [Hello](http://127.0.0.1:8765/a.html)\n".into(),
            "chrome-extension://abcdefghijklmnopabcdefghijklmnop/page.html?x=1".into(),
            "tokens=5 and a tokenizer: fine\n".into(),
            "- textbox \"API token:\" [ref=e5]\n- button \"Copy token:\" [ref=e6] [cursor=pointer]\n".into(),
            "Your token: (hidden)\ntoken: \n".into(),
            "Your token:&quot; &amp; more\ntoken&#58; (hidden)\n".into(),
            "tokenize\\x3d nothing; token\\u{3a} (none)\n".into(),
            "Session token: expired. token=abc&x=1 pub gt_token: Token![>]>,\n".into(),
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
        assert_eq!(
            redacted(&format!("{{&quot;token&quot;:&quot;{SECRET}&quot;}}")),
            "{&quot;token&quot;:<redacted>&quot;}"
        );
        assert_eq!(
            redacted(&format!("%74oken&#61{SECRET} next")),
            "%74oken&#61<redacted> next"
        );
        // An opening past the limit: the rest of the line goes, no more.
        assert_eq!(
            redacted(&format!("token={}{SECRET} x\nnext", " ".repeat(40))),
            "token=<redacted>\nnext"
        );
        // What opens the value (spaces, a quote) goes with it.
        assert_eq!(
            redacted(&format!("{{\"token\"\n: \"{SECRET}\"}}\n")),
            "{\"token\"\n:<redacted>\"}\n"
        );
    }

    // Every split point and random chunkings: `super::super::tests`, for
    // the chain of all three stages over this corpus and more.

    #[test]
    fn a_value_longer_than_any_read_is_dropped_as_it_comes() {
        let long = "v".repeat(10_000);
        let text = format!("token={long} after\n");
        let out = chunked(text.as_bytes(), &[5, 100, 1000, 3000]);
        assert_eq!(String::from_utf8(out).unwrap(), "token=<redacted> after\n");
    }

    #[test]
    fn output_stays_only_a_hold_back_behind() {
        // Exactly 386 bytes: LONGEST (320) + OPENING_LIMIT (32) + MIN_LEN
        // (32) + 2, the bound the module's split-read proof rests on.
        // Fewer voids the proof; more only delays the output.
        let mut r = Patterns::default();
        assert!(r.feed(b"Waiting for the extension...\n").is_empty());
        let long = "x".repeat(1000);
        assert_eq!(r.feed(long.as_bytes()).len(), 1029 - 386);
        assert_eq!(r.finish().len(), 386);
    }

    #[test]
    fn after_equals_a_value_that_could_be_a_token_goes_but_after_a_colon_only_a_word() {
        // `=` assigns: a value opening with no token character (base64 may
        // start with `+` or `/`) still goes, in any spelling of `=`. After
        // `:` the same text is what follows a label, and stays.
        let long = format!("+abc/{SECRET}");
        assert_eq!(
            redacted(&format!("token={long} next")),
            "token=<redacted> next"
        );
        assert_eq!(
            redacted(&format!("token&#61;{long} next")),
            "token&#61;<redacted> next"
        );
        assert_eq!(
            redacted(&format!("token: {long} next")),
            format!("token: {long} next")
        );
    }

    #[test]
    fn a_value_too_short_for_a_token_stays_and_one_that_could_carry_one_goes() {
        for kept in [
            "Session token: expired\n",
            "pub gt_token: Token![>]>,\n",
            "process-token: exposed\n",
            "token=abc&next=1",
            "token=+abc/def next",
            "csrf_token=0123456789abcdef0123456789abcde;",
            "token: %41%42%43 (percent-encoded, three letters)",
        ] {
            assert_eq!(redacted(kept), kept);
        }
        // Anything as long as the shortest token goes, whatever it holds
        // between the token's letters (found by attacking issue 47's first
        // rule, which counted a run of token characters).
        let (a, b) = SECRET.split_at(18);
        for value in [
            format!("x.{SECRET}.y"),
            SECRET[..MIN_LEN].to_string(),
            "%2541".repeat(MIN_LEN),
            format!("Zq3\u{200B}{}", &SECRET[3..]),
            format!("{a}\u{200E}{b}"),
            format!("{a}\u{2066}{b}"),
            format!("{a}\u{E0020}{b}"),
            format!("{a}%2E{b}"),
            format!("{a}%00{b}"),
            format!("{a}.{b}"),
            format!("{a}%{}30{b}", "25".repeat(9)),
            format!("{a}\u{FF41}{b}"),
        ] {
            for label in ["token=", "Session token: ", "\"token\":\"", "data-token=\""] {
                // After a colon, only a value that opens with a token
                // character (the label rule, as before).
                if label.contains(':') && value.starts_with('%') {
                    continue;
                }
                let text = format!("{label}{value} z");
                let out = redacted(&text);
                assert!(
                    !out.contains(&value) && out.contains("<redacted>"),
                    "{text}: {out}"
                );
                assert!(!out.contains(a) && !out.contains(b), "{text}: {out}");
            }
        }
        // One byte short of a token: stays.
        let short = format!("token={} z", &SECRET[..MIN_LEN - 1]);
        assert_eq!(redacted(&short), short);
        // The same at the very end of the output, where no byte ends it.
        let short = format!("token={}", &SECRET[..MIN_LEN - 1]);
        assert_eq!(redacted(&short), short);
        assert_eq!(
            redacted(&format!("token={}", &SECRET[..MIN_LEN])),
            "token=<redacted>"
        );
    }

    #[test]
    fn an_opening_at_the_limit_is_kept_and_one_byte_more_is_overlong() {
        // OPENING_LIMIT bytes of spaces: the value after them goes and what
        // follows the value stays.
        let at_limit = format!("token={}{SECRET} def\nnext", " ".repeat(OPENING_LIMIT));
        assert_eq!(redacted(&at_limit), "token=<redacted> def\nnext");
        // One byte more: overlong, the rest of the line goes.
        let over = format!("token={}abc def\nnext", " ".repeat(OPENING_LIMIT + 1));
        assert_eq!(redacted(&over), "token=<redacted>\nnext");
    }

    #[test]
    fn every_pattern_is_shorter_than_the_hold_back() {
        let most = "%".to_string() + &"25".repeat(ENCODINGS - 1);
        let url =
            format!("chrome-extension{most}3a{most}2f{most}2f{ID}{most}2fconnect.html{most}3f");
        // Each letter at its longest (percent-encoded nine times), with its
        // two longest invisibles; the longest quote; 32 three-byte spaces.
        let word: String = ["74", "6f", "6b", "65", "6e"]
            .iter()
            .map(|hex| format!("{most}{hex}\u{200B}\u{200B}"))
            .collect();
        let token = format!("{word}&#x000022;{}{most}3d", "\u{2028}".repeat(32));
        let plain = format!("{word}\\\\\\\"{}{most}3d", " ".repeat(32));
        for longest in [url, token, plain] {
            let found = patterns().find(longest.as_bytes()).expect("it matches");
            assert_eq!(found.len(), longest.len(), "{longest}");
            assert!(longest.len() <= LONGEST, "{} > {LONGEST}", longest.len());
        }
    }
}
