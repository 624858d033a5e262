//! The extension token: its type, its store (an item of the macOS Keychain
//! or the Linux Secret Service, reached through `platform/`), how it is
//! read from the user, and rotation.

pub mod input;
pub mod keyring;
pub mod rotation;
pub mod store;

use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::exit::Exit;
use crate::token_shape::{self, MAX_LEN, MIN_LEN};

/// The extension token. Deliberately without `Debug`, `Display`, `Clone` or
/// `Serialize`; zeroed when dropped. Its only ways out are
/// [`Token::expose_to_store`] (the keyring) and, later, connect's delivery
/// straight to Chrome; [`Token::sha256`] is all anything else may see.
pub struct Token(Zeroizing<String>);

/// Why some input is not a token. Never carries the input itself.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("{source_name} is empty")]
    Empty { source_name: String },
    #[error("{source_name} is not text")]
    NotText { source_name: String },
    #[error("{source_name} holds a URL, not a token (copy the token itself from the extension)")]
    Url { source_name: String },
    #[error("{source_name} holds a line break or a space inside the value")]
    Whitespace { source_name: String },
    #[error("{source_name} holds {len} characters; a token has {MIN_LEN} to {MAX_LEN}")]
    Length { source_name: String, len: usize },
    #[error("{source_name} holds characters other than A-Z, a-z, 0-9, '_' and '-'")]
    Charset { source_name: String },
}

impl Token {
    /// Validates `raw` as `^[A-Za-z0-9_-]{32,128}$` after stripping
    /// surrounding whitespace and an optional `PLAYWRIGHT_MCP_EXTENSION_TOKEN=`.
    /// `source_name` ("the clipboard", "standard input") names it in errors.
    pub fn parse(raw: &[u8], source_name: &str) -> Result<Token, TokenError> {
        let source_name = source_name.to_string();
        let text = std::str::from_utf8(raw).map_err(|_| TokenError::NotText {
            source_name: source_name.clone(),
        })?;
        let text = text.trim();
        let text = text
            .strip_prefix(token_shape::VARIABLE)
            .and_then(|rest| rest.strip_prefix('='))
            .unwrap_or(text);
        if text.is_empty() {
            return Err(TokenError::Empty { source_name });
        }
        if text.contains("://") {
            return Err(TokenError::Url { source_name });
        }
        if text.chars().any(char::is_whitespace) {
            return Err(TokenError::Whitespace { source_name });
        }
        let len = text.chars().count();
        if !(MIN_LEN..=MAX_LEN).contains(&len) {
            return Err(TokenError::Length { source_name, len });
        }
        if !text.bytes().all(token_shape::is_token_byte) {
            return Err(TokenError::Charset { source_name });
        }
        Ok(Token(Zeroizing::new(text.to_string())))
    }

    /// SHA-256 of the token, hex: how rotation tells tokens apart.
    pub fn sha256(&self) -> String {
        hex::encode(Sha256::digest(self.0.as_bytes()))
    }

    /// The bytes to hand to the platform keyring, and nothing else.
    pub(crate) fn expose_to_store(&self) -> &[u8] {
        self.0.as_bytes()
    }

    /// The bytes `connect` appends to the connect URL it hands straight to
    /// Chrome's singleton socket, and nothing else.
    pub(crate) fn expose_for_delivery(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl TokenError {
    pub fn exit(&self) -> Exit {
        Exit::Token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "abcdefghijklmnopqrstuvwxyz012345_-ABCDEF";

    #[test]
    fn a_token_is_trimmed_and_unprefixed() {
        let plain = Token::parse(GOOD.as_bytes(), "input").unwrap();
        for raw in [
            format!("  {GOOD}\n"),
            format!("{}={GOOD}", token_shape::VARIABLE),
            format!("\t{}={GOOD}\r\n", token_shape::VARIABLE),
        ] {
            assert_eq!(
                Token::parse(raw.as_bytes(), "input").unwrap().sha256(),
                plain.sha256()
            );
        }
    }

    #[test]
    fn everything_else_is_refused_without_echoing_it() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"".to_vec(), "is empty"),
            (b"   \n".to_vec(), "is empty"),
            (vec![0xff, 0xfe, 0x41], "not text"),
            (
                format!("chrome-extension://x/connect.html?token={GOOD}").into_bytes(),
                "URL",
            ),
            (b"a".repeat(20), "holds 20 characters"),
            (b"a".repeat(200), "holds 200 characters"),
            (
                format!("{}\n{}", &GOOD[..20], &GOOD[20..]).into_bytes(),
                "line break",
            ),
            (format!("{GOOD}!").into_bytes(), "characters other than"),
        ];
        for (raw, needle) in cases {
            let err = Token::parse(&raw, "the clipboard")
                .err()
                .expect("must be refused");
            let text = err.to_string();
            assert!(text.starts_with("the clipboard "), "{text}");
            assert!(text.contains(needle), "{text}");
            assert!(!text.contains(&GOOD[..20]), "echoed the value: {text}");
        }
    }

    #[test]
    fn the_length_bounds_are_inclusive() {
        assert!(Token::parse(&b"a".repeat(32), "x").is_ok());
        assert!(Token::parse(&b"a".repeat(128), "x").is_ok());
        assert!(Token::parse(&b"a".repeat(31), "x").is_err());
        assert!(Token::parse(&b"a".repeat(129), "x").is_err());
    }
}
