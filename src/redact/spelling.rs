// The token's spellings as one regular expression (`spellings`), for the
// redactor's first stage (`patterns.rs`, which says what they are). Plain
// text built by plain functions, so that `build.rs` includes this file too
// and compiles the expression into a DFA when my-chrome is built: every
// command prints through the redactor, and compiling it at run time cost
// each one about a millisecond. No `use`, no `super::`: it is included.

/// How often a character may be percent-encoded over (`%3D`, `%253D`, …).
pub(crate) const ENCODINGS: usize = 9;

/// Characters that may hide between letters without showing.
const INVISIBLE: &str = r"(?:\xC2\xAD|\xE2\x80[\x8B-\x8D]|\xE2\x81\xA0|\xEF\xBB\xBF)";

/// Spaces that may stand around a separator: ASCII white space, NUL,
/// no-break space, the Unicode spaces U+2000–U+200A, line and paragraph
/// separators, narrow no-break and medium mathematical space, ideographic
/// space.
pub(crate) const SPACE: &str =
    r"(?:\s|\x00|\xC2\xA0|\xE2\x80[\x80-\x8A\xA8\xA9\xAF]|\xE2\x81\x9F|\xE3\x80\x80)";

/// A quote, in the spellings a page or an encoder gives it.
pub(crate) const QUOTE: &str =
    r#"(?:\\{0,3}"|'|`|&quot;|&#0{0,4}3[49];?|&#x0{0,4}2[27];?|&apos;|\\x2[27]|\\u002[27]|%2[27])"#;

/// A character, or it percent-encoded once to ENCODINGS times over (`hex`:
/// its code, one or more alternatives).
pub(crate) fn enc(plain: &str, hex: &str) -> String {
    format!(r"(?:{plain}|%(?:25){{0,{}}}(?:{hex}))", ENCODINGS - 1)
}

/// `token`, letter by letter: ASCII in any case, percent-encoded, or a
/// Cyrillic or Greek lookalike, with up to two invisible characters after
/// each letter.
fn token_word() -> String {
    let letters = [
        (r"t|\xD1\x82|\xCF\x84|\xD0\xA2|\xCE\xA4", "74|54"), // т τ Т Τ
        (r"o|\xD0\xBE|\xCE\xBF|\xD6\x85|\xD0\x9E|\xCE\x9F", "6f|4f"), // о ο օ О Ο
        (r"k|\xD0\xBA|\xCE\xBA|\xD0\x9A|\xCE\x9A", "6b|4b"), // к κ К Κ
        (r"e|\xD0\xB5|\xD2\xBD|\xD0\x95|\xCE\x95", "65|45"), // е ҽ Е Ε
        (r"n|\xD5\xB8|\xCE\xB7|\xCE\x9D", "6e|4e"),          // ո η Ν
    ];
    letters
        .iter()
        .map(|(plain, hex)| format!("{}{INVISIBLE}{{0,2}}", enc(plain, hex)))
        .collect()
}

/// A separator: `=` or `:` in every spelling the module lists.
fn separator() -> String {
    format!(
        r#"(?:{}|{}|\\u003[da]|\\u\{{0{{0,4}}3[da]\}}|\\x3[da]|\\0?7[52]|&#0{{0,4}}(?:61|58);?|&#x0{{0,4}}3[da];?|&equals;|&colon;)"#,
        enc("=", "3d"),
        enc(":", "3a"),
    )
}

/// Every spelling: the extension's connect URL up to its query, and
/// `token` with its separator.
pub(crate) fn spellings() -> String {
    let slash = format!(r"(?:{}|\\/)", enc("/", "2f"));
    let url = format!(
        r"chrome-extension{colon}{slash}{slash}[a-p]{{32}}{slash}connect\.html{question}",
        colon = enc(":", "3a"),
        question = enc(r"\?", "3f"),
    );
    let token = format!(r#"{}{QUOTE}?{SPACE}{{0,32}}{}"#, token_word(), separator());
    format!("(?i-u){url}|{token}")
}
