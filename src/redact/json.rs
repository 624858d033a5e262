//! A JSON document redacted as JSON: every string in it (keys too) is
//! decoded, redacted by the spellings and the stored token's bare value
//! (the first two stages), and written back as a JSON string whose control
//! characters use JSON's own escape (`\u009b`); everything between the
//! strings is kept byte for byte. So what comes out always parses, with
//! the same keys in the same order, numbers and layout untouched, and
//! nothing of a page can reach a terminal as a control sequence (outside
//! its strings a JSON document holds only its own punctuation, numbers,
//! `true`, `false`, `null` and white space).

use super::Redactor;
use super::fingerprint::Fingerprint;

/// `text` redacted string by string, or `None` when it is no JSON
/// document (the caller redacts it as text then).
pub fn redact(text: &str, known: Option<&Fingerprint>) -> Option<String> {
    serde_json::from_str::<serde::de::IgnoredAny>(text).ok()?;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('"') {
        out.push_str(&rest[..start]);
        let literal_len = string_literal_len(&rest[start..])?;
        let literal = &rest[start..start + literal_len];
        out.push_str(&string(literal, known)?);
        rest = &rest[start + literal_len..];
    }
    out.push_str(rest);
    Some(out)
}

/// The length of the string literal `text` starts with (its quotes
/// included).
fn string_literal_len(text: &str) -> Option<usize> {
    let mut escaped = false;
    for (at, c) in text.char_indices().skip(1) {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '"') => return Some(at + 1),
            _ => {}
        }
    }
    None
}

/// One string literal, redacted; its bytes unchanged when nothing in it
/// needs to be.
fn string(literal: &str, known: Option<&Fingerprint>) -> Option<String> {
    let (decoded, mended) = match serde_json::from_str::<String>(literal) {
        Ok(decoded) => (decoded, false),
        Err(_) => (serde_json::from_str(&well_formed(literal)?).ok()?, true),
    };
    let mut redactor = Redactor::values(known.cloned());
    let mut redacted = redactor.feed(decoded.as_bytes());
    redacted.extend(redactor.finish());
    let changed = mended || redacted != decoded.as_bytes();
    let controls = literal.chars().any(char::is_control);
    if !changed && !controls {
        return Some(literal.to_string());
    }
    // The stages take whole characters and give text back.
    let redacted = String::from_utf8(redacted).ok()?;
    let mut out = String::with_capacity(redacted.len() + 2);
    out.push('"');
    for c in redacted.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    Some(out)
}

/// A string literal whose lone UTF-16 surrogate escapes (`\ud83d` alone:
/// JavaScript writes one for half a character, as where the daemon cuts a
/// text short) are `\ufffd`, as JavaScript's `toWellFormed` would have
/// them; `None` when it is no literal JSON's escapes read.
fn well_formed(literal: &str) -> Option<String> {
    // The UTF-16 unit a `\uXXXX` escape at `at` names, if a surrogate.
    let surrogate = |at: usize| -> Option<u32> {
        let escape = literal.get(at..at + 6)?.strip_prefix("\\u")?;
        let unit = u32::from_str_radix(escape, 16).ok()?;
        (0xd800..0xe000).contains(&unit).then_some(unit)
    };
    let mut out = String::with_capacity(literal.len());
    let mut at = 0;
    while let Some(c) = literal[at..].chars().next() {
        let taken = match (c, surrogate(at)) {
            (c, _) if c != '\\' => c.len_utf8(),
            (_, Some(0xd800..0xdc00)) if surrogate(at + 6).is_some_and(|u| u >= 0xdc00) => 12,
            (_, Some(_)) => {
                out.push_str("\\ufffd");
                at += 6;
                continue;
            }
            // Any other escape: two characters (a `\u` one's digits
            // follow as plain characters).
            (_, None) => 2,
        };
        out.push_str(literal.get(at..at + taken)?);
        at += taken;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_take_jsons_own_escape_and_the_document_still_parses() {
        // A page title with a C1 control, DEL and an escaped ESC.
        let text = "{\n  \"title\": \"a\u{9b}2J b\u{7f} \\u001b[31m\",\n  \"n\": 1.50e3\n}";
        let out = redact(text, None).unwrap();
        assert_eq!(
            out,
            "{\n  \"title\": \"a\\u009b2J b\\u007f \\u001b[31m\",\n  \"n\": 1.50e3\n}"
        );
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["title"], "a\u{9b}2J b\u{7f} \u{1b}[31m");
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'));
    }

    #[test]
    fn token_spellings_go_wherever_they_stand_in_a_string() {
        let value = "A".repeat(43);
        let text = format!(
            "{{\"url\":\"https://x.test/?token={value}&a=\\\"q\\\"\",\"token:\":\"token:{}{value}\"}}",
            " ".repeat(40)
        );
        let out = redact(&text, None).unwrap();
        assert!(!out.contains(&value), "{out}");
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["url"], "https://x.test/?token=<redacted>&a=\"q\"");
        // A string with nothing to redact is kept byte for byte, escapes
        // and all.
        let plain = "[\"a\\/b\\u00e9\", 1, true, null]";
        assert_eq!(redact(plain, None).unwrap(), plain);
    }

    #[test]
    fn a_lone_surrogate_escape_is_mended_and_the_document_still_parses() {
        // Half an emoji where a text was cut short, a C1 control beside it,
        // and a whole emoji (a pair of escapes) that stays as it is.
        let text = "{\"body\":\"\u{9b}[2Jab\\ud83d\",\"low\":\"\\ude00 \\\\ud83d\",\"ok\":\"\\ud83d\\ude00\"}";
        let out = redact(text, None).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["body"], "\u{9b}[2Jab\u{fffd}");
        // An escaped backslash followed by `ud83d` is text, not an escape.
        assert_eq!(parsed["low"], "\u{fffd} \\ud83d");
        assert_eq!(parsed["ok"], "\u{1f600}");
        assert!(!out.chars().any(|c| c.is_control()), "{out}");
    }

    #[test]
    fn what_is_no_json_document_is_left_to_the_text_redactor() {
        assert_eq!(redact("### Result\n- a", None), None);
        assert_eq!(redact("{\"a\": 1} trailing", None), None);
        assert_eq!(redact("\"open", None), None);
    }
}
