//! The extension token's shape, in one place: `[A-Za-z0-9_-]{32,128}`, and
//! the variable upstream reads it from. Pure: the token type, the argument
//! check, every message's redaction, the process scan and the agent-name
//! rule all build on these.

/// The shortest token; any run of token characters this long is treated
/// as one.
pub const MIN_LEN: usize = 32;
/// The longest token.
pub const MAX_LEN: usize = 128;
/// The variable through which upstream hands the CLI a token.
pub const VARIABLE: &str = "PLAYWRIGHT_MCP_EXTENSION_TOKEN";

/// A character a token may hold.
pub fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The whole of `text` is shaped like a token.
pub fn is_token_shaped(text: &str) -> bool {
    (MIN_LEN..=MAX_LEN).contains(&text.len()) && text.bytes().all(is_token_byte)
}

/// A whole argument shaped like the token, or a `token=` (or `token%3D`)
/// whose value is: an ordinary `?token=abc` in a URL passes.
pub fn looks_like_token(arg: &str) -> bool {
    let lower = arg.to_ascii_lowercase();
    is_token_shaped(arg)
        || ["token=", "token%3d"].iter().any(|key| {
            lower.match_indices(key).any(|(at, _)| {
                let value = &arg.as_bytes()[at + key.len()..];
                value.iter().take_while(|b| is_token_byte(**b)).count() >= MIN_LEN
            })
        })
}

/// `text` with every run of [`MIN_LEN`] or more token characters replaced
/// by `<redacted>`: for messages that quote what a user typed.
pub fn redact_runs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    for c in text.chars().chain(std::iter::once('\0')) {
        if c.is_ascii() && is_token_byte(c as u8) {
            run.push(c);
            continue;
        }
        out.push_str(if run.len() >= MIN_LEN {
            "<redacted>"
        } else {
            &run
        });
        run.clear();
        if c != '\0' {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_shaped_runs_are_redacted_wherever_they_stand() {
        let token = "Ab_-9".repeat(8);
        assert_eq!(
            redact_runs(&format!("unexpected value '{token}' for '--stdin'")),
            "unexpected value '<redacted>' for '--stdin'"
        );
        assert_eq!(redact_runs(&format!("x={token}\n")), "x=<redacted>\n");
        let ordinary = "error: unrecognized subcommand 'tab-list' (see --help)\n";
        assert_eq!(redact_runs(ordinary), ordinary);
        assert_eq!(
            redact_runs(&"a".repeat(MIN_LEN - 1)),
            "a".repeat(MIN_LEN - 1)
        );
        assert_eq!(redact_runs(&"a".repeat(MIN_LEN)), "<redacted>");
    }

    #[test]
    fn the_shape_is_32_to_128_token_characters() {
        assert!(is_token_shaped(&"a".repeat(MIN_LEN)));
        assert!(is_token_shaped(&"Z_-9".repeat(MAX_LEN / 4)));
        assert!(!is_token_shaped(&"a".repeat(MIN_LEN - 1)));
        assert!(!is_token_shaped(&"a".repeat(MAX_LEN + 1)));
        assert!(!is_token_shaped(&format!("{}.", "a".repeat(MIN_LEN))));
    }

    #[test]
    fn a_pasted_token_is_recognised_and_an_ordinary_url_is_not() {
        let token = "Ab_-9".repeat(9);
        for arg in [
            token.clone(),
            format!("https://x.test/?token={token}"),
            format!("{VARIABLE}={token}"),
            format!("a?TOKEN%3D{token}&b"),
        ] {
            assert!(looks_like_token(&arg), "{arg}");
        }
        for arg in [
            "https://example.test/reset?token=abc123&next=/",
            "https://example.test/?token=",
            "the token= is short",
            "a short sentence with several words in it",
        ] {
            assert!(!looks_like_token(arg), "{arg}");
        }
    }
}
