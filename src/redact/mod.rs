//! Everything my-chrome prints from the Playwright CLI passes here
//! (docs/DESIGN.md, invariant 9), in three streaming stages:
//!
//! 1. [`patterns`]: the token's known spellings (`token=…` in its many
//!    encodings, the connect URL's query), for any token;
//! 2. [`known`]: the bare value of the stored token, anywhere, through the
//!    fingerprint `connect` recorded (when there is one);
//! 3. [`controls`]: terminal control characters escaped.
//!
//! Each stage gives, for any chunking of its input, the output of a single
//! read; so does their chain (each stage's output, however it is chunked,
//! is the next one's input). Property tests check the chain as a whole.
//! [`fingerprint`] is what stage 2 matches with: the stored token's salted
//! fingerprint, as `connect` records it.

mod controls;
pub mod fingerprint;
pub mod json;
mod known;
mod patterns;
/// The token's spellings as one expression: its text, which build.rs
/// compiles; here only the tests read it whole, to check the DFAs against it.
#[allow(dead_code)]
mod spelling;

use fingerprint::Fingerprint;

pub const REDACTED: &[u8] = b"<redacted>";

/// One streaming stage: it holds back what it cannot decide yet.
trait Stage {
    /// What it has not emitted yet.
    fn pending(&mut self) -> &mut Vec<u8>;

    /// Emits what is decided (everything, `at_end`).
    fn process(&mut self, at_end: bool) -> Vec<u8>;

    /// Takes the next read; returns what may be shown now.
    fn feed(&mut self, input: &[u8]) -> Vec<u8> {
        self.pending().extend_from_slice(input);
        self.process(false)
    }

    /// The end of the stream: everything still held back.
    fn finish(&mut self) -> Vec<u8> {
        self.process(true)
    }
}

/// The stages, chained: each one's output is the next one's input.
pub struct Redactor {
    stages: Vec<Box<dyn Stage + Send>>,
}

impl Redactor {
    /// A redactor that also hides the value `fingerprint` describes.
    pub fn new(fingerprint: Option<Fingerprint>) -> Redactor {
        let mut redactor = Redactor::values(fingerprint);
        redactor.stages.push(Box::<controls::Controls>::default());
        redactor
    }

    /// The first two stages only, for text that is escaped afterwards by
    /// other rules (a JSON string, `json.rs`).
    pub fn values(fingerprint: Option<Fingerprint>) -> Redactor {
        let mut stages: Vec<Box<dyn Stage + Send>> = vec![Box::<patterns::Patterns>::default()];
        if let Some(fingerprint) = fingerprint {
            stages.push(Box::new(known::Known::new(fingerprint)));
        }
        Redactor { stages }
    }

    /// Takes the next read; returns what may be shown now.
    pub fn feed(&mut self, input: &[u8]) -> Vec<u8> {
        self.stages
            .iter_mut()
            .fold(input.to_vec(), |through, stage| stage.feed(&through))
    }

    /// The end of the stream: everything still held back.
    pub fn finish(mut self) -> Vec<u8> {
        self.stages.iter_mut().fold(Vec::new(), |through, stage| {
            let mut out = stage.feed(&through);
            out.extend(stage.finish());
            out
        })
    }
}

/// A text (a tab's header) with the token's spellings and the stored
/// token's bare value redacted, its other characters as they are (what is
/// kept of a page's words, where a control is escaped when printed).
pub fn redact_value(text: &str, fingerprint: Option<&Fingerprint>) -> String {
    let mut redactor = Redactor::values(fingerprint.cloned());
    let mut out = redactor.feed(text.as_bytes());
    out.extend(redactor.finish());
    // The stages cut only at whole characters.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Redacts a whole buffer at once.
pub fn redact(text: &[u8], fingerprint: Option<&Fingerprint>) -> Vec<u8> {
    let mut redactor = Redactor::new(fingerprint.cloned());
    let mut out = redactor.feed(text);
    out.extend(redactor.finish());
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::token::Token;
    use proptest::prelude::*;

    const SECRET: &str = "Zq3_secretTOKENvalue-0123456789abcdef";

    fn fingerprint() -> Fingerprint {
        Fingerprint::of(&Token::parse(SECRET.as_bytes(), "test").unwrap()).unwrap()
    }

    fn chunked(fp: &Fingerprint, text: &[u8], sizes: &[usize]) -> Vec<u8> {
        let mut r = Redactor::new(Some(fp.clone()));
        let mut out = Vec::new();
        for chunk in chunks(text, sizes) {
            out.extend(r.feed(chunk));
        }
        out.extend(r.finish());
        out
    }

    /// `text` cut into reads of these sizes (the rest in one last read).
    pub(super) fn chunks<'a>(mut text: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
        let mut out = Vec::new();
        for size in sizes {
            let (now, later) = text.split_at((*size).min(text.len()));
            out.push(now);
            text = later;
        }
        out.push(text);
        out
    }

    /// The bare value, in contexts no spelling covers.
    fn bare() -> Vec<String> {
        vec![
            SECRET.to_string(),
            format!("the page says {SECRET}."),
            format!("xx{SECRET}yy"),
            format!("{SECRET}{SECRET}"),
            format!("data:{}{SECRET}{}", "A".repeat(200), "B".repeat(200)),
            format!("key\u{1b}]52;c;{SECRET}\u{7}"),
            format!("\"value\": \"{SECRET}\""),
            format!("{}{SECRET}", &SECRET[..10]),
        ]
    }

    fn corpus() -> Vec<String> {
        let mut all = patterns::tests::leaking();
        all.extend(patterns::tests::ordinary());
        all.extend(bare());
        all.push("title \u{1b}]52;c;aGVsbG8=\u{7} \u{9b}2J \u{1b}[31mred\r\n\ttab\0".into());
        all
    }

    #[test]
    fn the_bare_value_is_hidden_anywhere_and_nothing_else_is() {
        let fp = fingerprint();
        for text in bare() {
            let out = String::from_utf8(redact(text.as_bytes(), Some(&fp))).unwrap();
            assert!(
                !out.contains(&SECRET[10..30]),
                "leaked from {text:?}: {out}"
            );
            assert!(out.contains("<redacted>"), "{text:?}: {out}");
        }
        assert_eq!(
            redact(format!("xx{SECRET}yy").as_bytes(), Some(&fp)),
            b"xx<redacted>yy"
        );
        assert_eq!(
            redact(format!("{SECRET}{SECRET}").as_bytes(), Some(&fp)),
            b"<redacted><redacted>"
        );
        // One character off is another value.
        let near = SECRET.replace('Z', "Y");
        assert_eq!(redact(near.as_bytes(), Some(&fp)), near.as_bytes());
        // Without a fingerprint only the spellings are known.
        assert_eq!(redact(SECRET.as_bytes(), None), SECRET.as_bytes());
    }

    #[test]
    fn terminal_controls_are_escaped_and_text_is_not() {
        let out = redact(
            "a\u{1b}]52;c;aGk=\u{7}b \u{9b}31m \r\n\tc\0 é ✓\u{7f}".as_bytes(),
            None,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a\\u{1b}]52;c;aGk=\\u{7}b \\u{9b}31m \\u{d}\n\tc\\u{0} é ✓\\u{7f}"
        );
        // Bytes that are no character: shown as bytes, never passed raw.
        assert_eq!(redact(b"x\x9by\xc3", None), b"x\\x9by\\xc3");
    }

    #[test]
    fn every_split_point_gives_the_single_read() {
        let fp = fingerprint();
        for text in corpus() {
            let bytes = text.as_bytes();
            let whole = redact(bytes, Some(&fp));
            for cut in 0..=bytes.len() {
                assert_eq!(chunked(&fp, bytes, &[cut]), whole, "{text:?} cut at {cut}");
            }
            assert_eq!(
                chunked(&fp, bytes, &vec![1; bytes.len()]),
                whole,
                "byte by byte"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        #[test]
        fn random_chunkings_give_the_single_read(
            pick in any::<prop::sample::Index>(),
            sizes in prop::collection::vec(0usize..300, 0..12),
            before in "[ a-zA-Z0-9_\n\"{}:=\u{1b}\u{9b}é-]{0,300}",
        ) {
            let fp = fingerprint();
            let corpus = corpus();
            let text = format!("{before}{}", corpus[pick.index(corpus.len())]);
            let whole = redact(text.as_bytes(), Some(&fp));
            prop_assert_eq!(chunked(&fp, text.as_bytes(), &sizes), whole);
        }
    }
}
