//! A salted fingerprint of the stored token, so the redactor can hide its
//! bare value wherever it appears in what we print, without holding it.
//! `connect` records it (while it holds the token anyway) in a private
//! state file; every forwarded command reads it.
//!
//! It holds the token's length, a random salt and SHA-256(salt ‖ token),
//! which decides a match, and a keyed polynomial hash (random base, modulo
//! the Mersenne prime 2^61 − 1) that rolls over a stream in O(1) per byte
//! and only picks the windows worth the SHA-256. Neither gives the token
//! back: it has at least 32 characters of a 64-letter alphabet (192 bits),
//! and the rolling hash pins down at most 61 of them.

use sha2::{Digest, Sha256};

use crate::exit::Exit;
use crate::runtime::{Runtime, RuntimeError, StateFile};
use crate::token::Token;
use crate::token_shape::{MAX_LEN, MIN_LEN};

const PRIME: u64 = (1 << 61) - 1;
const HEADER: &str = "my-chrome token fingerprint v1";

#[derive(Clone, PartialEq, Eq)]
pub struct Fingerprint {
    len: usize,
    salt: [u8; 16],
    digest: [u8; 32],
    base: u64,
    /// The polynomial hash of the token with `base`.
    rolling: u64,
    /// `base^(len-1)`, to take a byte out of a window.
    top: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum FingerprintError {
    #[error("no randomness for the token's fingerprint ({0})")]
    Random(String),
    #[error(
        "the token's fingerprint record ({file}) is not one my-chrome wrote ({0}); nothing was \
         run. Delete it: the next `my-chrome connect` writes a new one",
        file = StateFile::TokenFingerprint.file_name()
    )]
    Malformed(&'static str),
    #[error(transparent)]
    State(#[from] RuntimeError),
}

impl FingerprintError {
    pub fn exit(&self) -> Exit {
        match self {
            FingerprintError::Random(_) => Exit::Failure,
            FingerprintError::Malformed(_) => Exit::Security,
            FingerprintError::State(e) => e.exit(),
        }
    }
}

/// Records `token`'s fingerprint in the runtime (a private state file).
pub fn record(runtime: &Runtime, token: &Token) -> Result<Fingerprint, FingerprintError> {
    let fingerprint = Fingerprint::of(token)?;
    runtime.write_state(
        StateFile::TokenFingerprint,
        fingerprint.to_record().as_bytes(),
    )?;
    Ok(fingerprint)
}

/// The fingerprint `connect` recorded, if any.
pub fn recorded(runtime: &Runtime) -> Result<Option<Fingerprint>, FingerprintError> {
    match runtime.read_state(StateFile::TokenFingerprint)? {
        Some(bytes) => Ok(Some(Fingerprint::from_record(&bytes)?)),
        None => Ok(None),
    }
}

/// Only the length: the rest is no one's business, in a log or a panic.
impl std::fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fingerprint(len {})", self.len)
    }
}

fn mul(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) % PRIME as u128) as u64
}

fn pow(mut base: u64, mut exp: usize) -> u64 {
    let mut out = 1;
    while exp > 0 {
        if exp & 1 == 1 {
            out = mul(out, base);
        }
        base = mul(base, base);
        exp >>= 1;
    }
    out
}

impl Fingerprint {
    /// A new fingerprint of `token`, with a fresh salt and base.
    pub fn of(token: &Token) -> Result<Fingerprint, FingerprintError> {
        let mut random = [0u8; 24];
        getrandom::fill(&mut random).map_err(|e| FingerprintError::Random(e.to_string()))?;
        let mut salt = [0u8; 16];
        salt.copy_from_slice(&random[..16]);
        let raw = u64::from_le_bytes(random[16..].try_into().expect("eight bytes"));
        // A base of 0 or 1 would not mix the bytes.
        let base = 2 + raw % (PRIME - 3);
        let value = token.expose_to_store();
        Ok(Fingerprint::with(value, salt, base))
    }

    fn with(value: &[u8], salt: [u8; 16], base: u64) -> Fingerprint {
        let digest = salted(&salt, value);
        let mut fingerprint = Fingerprint {
            len: value.len(),
            salt,
            digest,
            base,
            rolling: 0,
            top: pow(base, value.len() - 1),
        };
        fingerprint.rolling = fingerprint.hash(value);
        fingerprint
    }

    /// The token's length in bytes.
    pub fn token_len(&self) -> usize {
        self.len
    }

    /// The polynomial hash of a window of [`Fingerprint::token_len`] bytes.
    pub fn hash(&self, window: &[u8]) -> u64 {
        window
            .iter()
            .fold(0, |h, b| (mul(h, self.base) + *b as u64) % PRIME)
    }

    /// The hash of the window one byte on: `out` leaves, `inn` comes in.
    pub fn roll(&self, hash: u64, out: u8, inn: u8) -> u64 {
        let without = (hash + PRIME - mul(out as u64, self.top)) % PRIME;
        (mul(without, self.base) + inn as u64) % PRIME
    }

    /// Whether a window with hash `hash` could be the token (cheap).
    pub fn may_be(&self, hash: u64) -> bool {
        hash == self.rolling
    }

    /// Whether `window` is the token (decided by the salted SHA-256).
    pub fn is_token(&self, window: &[u8]) -> bool {
        window.len() == self.len && salted(&self.salt, window) == self.digest
    }

    /// Whether `text` holds the token anywhere.
    pub fn found_in(&self, text: &[u8]) -> bool {
        let len = self.len;
        if text.len() < len {
            return false;
        }
        let mut hash = self.hash(&text[..len]);
        for at in 0..=text.len() - len {
            if at > 0 {
                hash = self.roll(hash, text[at - 1], text[at + len - 1]);
            }
            if self.may_be(hash) && self.is_token(&text[at..at + len]) {
                return true;
            }
        }
        false
    }

    /// The state file's content.
    pub fn to_record(&self) -> String {
        format!(
            "{HEADER}\nlength {}\nsalt {}\nsha256 {}\nbase {}\nrolling {}\n",
            self.len,
            hex::encode(self.salt),
            hex::encode(self.digest),
            self.base,
            self.rolling
        )
    }

    /// Reads a record written by [`Fingerprint::to_record`], strictly.
    pub fn from_record(bytes: &[u8]) -> Result<Fingerprint, FingerprintError> {
        let malformed = FingerprintError::Malformed;
        let text = std::str::from_utf8(bytes).map_err(|_| malformed("not text"))?;
        let mut lines = text
            .strip_suffix('\n')
            .ok_or(malformed("no last line"))?
            .split('\n');
        if lines.next() != Some(HEADER) {
            return Err(malformed("its first line"));
        }
        let mut field = |name: &str| {
            lines
                .next()
                .and_then(|line| line.strip_prefix(name))
                .and_then(|rest| rest.strip_prefix(' '))
                .ok_or(malformed("a missing field"))
        };
        let len: usize = field("length")?.parse().map_err(|_| malformed("length"))?;
        let salt = hex::decode(field("salt")?).map_err(|_| malformed("salt"))?;
        let digest = hex::decode(field("sha256")?).map_err(|_| malformed("sha256"))?;
        let base: u64 = field("base")?.parse().map_err(|_| malformed("base"))?;
        let rolling: u64 = field("rolling")?
            .parse()
            .map_err(|_| malformed("rolling"))?;
        if lines.next().is_some() {
            return Err(malformed("more lines"));
        }
        let in_range =
            (MIN_LEN..=MAX_LEN).contains(&len) && (2..PRIME).contains(&base) && rolling < PRIME;
        if !in_range {
            return Err(malformed("a value out of range"));
        }
        let salt: [u8; 16] = salt.try_into().map_err(|_| malformed("salt length"))?;
        let digest: [u8; 32] = digest.try_into().map_err(|_| malformed("sha256 length"))?;
        Ok(Fingerprint {
            len,
            salt,
            digest,
            base,
            rolling,
            top: pow(base, len - 1),
        })
    }
}

fn salted(salt: &[u8], value: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(salt);
    hasher.update(value);
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALUE: &[u8] = b"Zq3_secretTOKENvalue-0123456789abcdef";

    #[test]
    fn it_finds_the_value_anywhere_in_a_text_and_nothing_else() {
        let fp = Fingerprint::with(VALUE, [7; 16], 1_000_003);
        let mut text = b"connect.html?token=".to_vec();
        text.extend_from_slice(VALUE);
        text.extend_from_slice(b")");
        assert!(fp.found_in(&text));
        assert!(fp.found_in(VALUE));
        assert!(!fp.found_in(&VALUE[1..]));
        let mut near = VALUE.to_vec();
        near[5] ^= 1;
        assert!(!fp.found_in(&near));
        assert!(!fp.found_in(b""));
    }

    #[test]
    fn it_recognises_the_value_and_nothing_else() {
        let fp = Fingerprint::with(VALUE, [7; 16], 1_000_003);
        assert_eq!(fp.token_len(), VALUE.len());
        assert!(fp.may_be(fp.hash(VALUE)) && fp.is_token(VALUE));
        let mut other = VALUE.to_vec();
        other[5] ^= 1;
        assert!(!fp.may_be(fp.hash(&other)) && !fp.is_token(&other));
        assert!(!fp.is_token(&VALUE[1..]));
        // Rolling a window on equals hashing it afresh.
        let text = [b"xy".as_slice(), VALUE, b"z"].concat();
        let mut hash = fp.hash(&text[..VALUE.len()]);
        for at in 1..=text.len() - VALUE.len() {
            hash = fp.roll(hash, text[at - 1], text[at + VALUE.len() - 1]);
            assert_eq!(hash, fp.hash(&text[at..at + VALUE.len()]), "at {at}");
        }
    }

    #[test]
    fn the_record_round_trips_and_holds_no_value() {
        let token = Token::parse(VALUE, "test").unwrap();
        let fp = Fingerprint::of(&token).unwrap();
        let record = fp.to_record();
        assert!(!record.contains("secretTOKEN"), "{record}");
        let back = Fingerprint::from_record(record.as_bytes()).unwrap();
        assert!(back == fp && back.is_token(VALUE));
        // Two fingerprints of one token share nothing but the length.
        let again = Fingerprint::of(&token).unwrap();
        assert!(again.salt != fp.salt && again.digest != fp.digest);
        assert!(again.base != fp.base && again.rolling != fp.rolling);
        assert_eq!(format!("{fp:?}"), "Fingerprint(len 37)");
        let field = |name: &str, value: String| {
            let line = record.lines().find(|l| l.starts_with(name)).unwrap();
            record.replace(line, &format!("{name} {value}"))
        };
        for bad in [
            field("length", "31".into()),
            field("length", "129".into()),
            field("base", "1".into()),
            field("base", PRIME.to_string()),
            field("rolling", PRIME.to_string()),
            field("salt", "00".repeat(15)),
            field("sha256", "00".repeat(31)),
            record.replace("v1", "v2"),
            record.replace("length 37", "length 12"),
            record.replace("base ", "base x"),
            record.trim_end().to_string(),
            format!("{record}extra\n"),
            record.replace("rolling", "rolled"),
        ] {
            assert!(Fingerprint::from_record(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn connect_records_it_privately_and_commands_read_it_back() {
        let (_home, runtime) = crate::runtime::scratch();
        assert!(recorded(&runtime).unwrap().is_none());
        let token = Token::parse(VALUE, "test").unwrap();
        record(&runtime, &token).unwrap();
        let back = recorded(&runtime).unwrap().expect("recorded");
        assert!(back.is_token(VALUE));
        let file = runtime.root().join(StateFile::TokenFingerprint.file_name());
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("secretTOKEN"), "{text}");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A record that is not ours stops the command: exit 6.
        std::fs::write(&file, "my-chrome token fingerprint v1\nlength x\n").unwrap();
        let err = recorded(&runtime).unwrap_err();
        assert!(matches!(err, FingerprintError::Malformed(_)), "{err}");
        assert_eq!(err.exit().code(), 6);
        assert_eq!(FingerprintError::Random("x".into()).exit().code(), 1);
    }
}
