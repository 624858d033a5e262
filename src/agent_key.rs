//! An agent's key: what makes a chosen name the agent's own. 128 random
//! bits, shown once (to the command that registered the name) as 32 hex
//! digits, and stored only sealed: a random salt and SHA-256(salt ‖ key).
//!
//! A fast hash is enough: the key is random, not a password, so there is
//! nothing to guess from its hash that is cheaper than guessing the key;
//! the salt keeps two registrations of one key from looking alike.

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How many random bytes a key holds.
const BYTES: usize = 16;
/// How a key is written: this many hex digits.
pub const HEX_LEN: usize = 2 * BYTES;

#[derive(Clone, PartialEq, Eq)]
pub struct AgentKey([u8; BYTES]);

/// Never printed by accident: only [`AgentKey::reveal`] shows it.
impl fmt::Debug for AgentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AgentKey(<hidden>)")
    }
}

impl AgentKey {
    /// A new key from the system's random source.
    pub fn generate() -> Result<AgentKey, String> {
        let mut bytes = [0; BYTES];
        getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
        Ok(AgentKey(bytes))
    }

    /// A key as written: exactly [`HEX_LEN`] hex digits (either case).
    pub fn parse(text: &str) -> Option<AgentKey> {
        if text.len() != HEX_LEN {
            return None;
        }
        let mut bytes = [0; BYTES];
        hex::decode_to_slice(text, &mut bytes).ok()?;
        Some(AgentKey(bytes))
    }

    /// The key as the agent carries it: the one place it is written out.
    pub fn reveal(&self) -> String {
        hex::encode(self.0)
    }
}

/// A key as the registry keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sealed {
    salt: String,
    hash: String,
}

impl Sealed {
    pub fn seal(key: &AgentKey) -> Result<Sealed, String> {
        let mut salt = [0; BYTES];
        getrandom::fill(&mut salt).map_err(|e| e.to_string())?;
        Ok(Sealed {
            salt: hex::encode(salt),
            hash: hex::encode(digest(&salt, key)),
        })
    }

    /// Whether `key` is the one sealed. A seal that does not read (not
    /// ours) opens for no key.
    pub fn opens(&self, key: &AgentKey) -> bool {
        let (Ok(salt), Ok(hash)) = (hex::decode(&self.salt), hex::decode(&self.hash)) else {
            return false;
        };
        // Compared whole: the salt is secret to the caller, so how long a
        // comparison takes tells it nothing of the key.
        digest(&salt, key)[..] == hash[..]
    }

    /// Whether it is a seal at all: a salt and a SHA-256 in hex.
    pub fn well_formed(&self) -> bool {
        let hex_of =
            |s: &str, len: usize| s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit());
        hex_of(&self.salt, HEX_LEN) && hex_of(&self.hash, 64)
    }
}

fn digest(salt: &[u8], key: &AgentKey) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(salt);
    hasher.update(key.0);
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_opens_its_own_seal_and_no_other() {
        let key = AgentKey::generate().unwrap();
        let other = AgentKey::generate().unwrap();
        assert_ne!(key, other);
        let sealed = Sealed::seal(&key).unwrap();
        assert!(sealed.well_formed());
        assert!(sealed.opens(&key));
        assert!(!sealed.opens(&other));
        // Salted: the same key sealed twice looks different.
        let again = Sealed::seal(&key).unwrap();
        assert_ne!(sealed, again);
        assert!(again.opens(&key));
        // The seal holds neither the key nor its plain hash.
        let text = serde_json::to_string(&sealed).unwrap();
        assert!(!text.contains(&key.reveal()), "{text}");
        assert!(
            !text.contains(&hex::encode(Sha256::digest(key.0))),
            "{text}"
        );
    }

    #[test]
    fn a_key_reads_back_as_written_and_nothing_else_reads() {
        let key = AgentKey::generate().unwrap();
        let written = key.reveal();
        assert_eq!(written.len(), HEX_LEN);
        assert_eq!(AgentKey::parse(&written), Some(key.clone()));
        assert_eq!(AgentKey::parse(&written.to_uppercase()), Some(key.clone()));
        for bad in [
            "",
            &written[1..],
            &format!("{written}0"),
            &"g".repeat(HEX_LEN),
        ] {
            assert_eq!(AgentKey::parse(bad), None, "{bad}");
        }
        assert_eq!(format!("{key:?}"), "AgentKey(<hidden>)");
        let broken = Sealed {
            salt: "zz".into(),
            hash: "00".into(),
        };
        assert!(!broken.well_formed());
        assert!(!broken.opens(&key));
    }
}
