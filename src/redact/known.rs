//! The second stage of the redactor: the stored token's bare value,
//! wherever it stands (inside a longer word, a URL, base64, any context),
//! found through its fingerprint (`fingerprint.rs`) without holding
//! it.
//!
//! Split reads: a window is decided only when all of its bytes are there
//! (at most `len − 1` bytes are held back), and the scan goes on from where
//! the last decision left it, so any chunking gives the single read's
//! output.

use super::fingerprint::Fingerprint;
use super::{REDACTED, Stage};
use crate::token_shape::is_token_byte;

pub struct Known {
    fingerprint: Fingerprint,
    pending: Vec<u8>,
}

impl Known {
    pub fn new(fingerprint: Fingerprint) -> Known {
        Known {
            fingerprint,
            pending: Vec::new(),
        }
    }
}

impl Stage for Known {
    fn pending(&mut self) -> &mut Vec<u8> {
        &mut self.pending
    }

    fn process(&mut self, at_end: bool) -> Vec<u8> {
        let fp = &self.fingerprint;
        let len = fp.token_len();
        let buf = &self.pending;
        let mut out = Vec::with_capacity(buf.len());
        // Everything before `emitted` is in `out` (or was replaced).
        let mut emitted = 0;
        let mut at = 0;
        while at < buf.len() {
            if !is_token_byte(buf[at]) {
                at += 1;
                continue;
            }
            let start = at;
            while at < buf.len() && is_token_byte(buf[at]) {
                at += 1;
            }
            // Windows [w, w + len) inside the run [start, at).
            let end = at;
            let mut w = start;
            let mut hash = None;
            while w + len <= end {
                let h = match hash {
                    Some(h) => h,
                    None => fp.hash(&buf[w..w + len]),
                };
                if fp.may_be(h) && fp.is_token(&buf[w..w + len]) {
                    out.extend_from_slice(&buf[emitted..w]);
                    out.extend_from_slice(REDACTED);
                    emitted = w + len;
                    w += len;
                    hash = None;
                    continue;
                }
                hash = (w + len < end).then(|| fp.roll(h, buf[w], buf[w + len]));
                w += 1;
            }
        }
        // A window starting at or after this point is not whole yet.
        let keep = if at_end {
            buf.len()
        } else {
            buf.len().saturating_sub(len - 1)
        }
        .max(emitted);
        out.extend_from_slice(&buf[emitted..keep]);
        self.pending.drain(..keep);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fingerprint of `len` bytes (base 3) with this rolling hash and an
    /// all-zero SHA-256, which no value has: nothing is ever the token.
    fn matching_nothing(len: usize, rolling: u64) -> Fingerprint {
        let record = format!(
            "my-chrome token fingerprint v1\nlength {len}\nsalt {}\nsha256 {}\nbase 3\nrolling {rolling}\n",
            "00".repeat(16),
            "00".repeat(32),
        );
        Fingerprint::from_record(record.as_bytes()).unwrap()
    }

    #[test]
    fn a_feed_holds_back_exactly_len_minus_one_bytes() {
        // The module promises at most len - 1: every window starting
        // earlier is whole, so decided, and its first byte may go.
        let mut stage = Known::new(matching_nothing(32, 0));
        let run = "a".repeat(100);
        assert_eq!(stage.feed(run.as_bytes()), &run.as_bytes()[..100 - 31]);
        assert_eq!(stage.feed(b"b"), b"a");
        assert_eq!(stage.finish(), format!("{}b", &run[..30]).as_bytes());
    }

    #[test]
    fn a_rolling_hash_hit_alone_is_not_the_token() {
        // A window with the token's rolling hash (a collision, forged here)
        // but not its SHA-256 stays: the digest decides.
        let window = "w".repeat(32);
        let hash = matching_nothing(32, 0).hash(window.as_bytes());
        let mut stage = Known::new(matching_nothing(32, hash));
        let text = format!("x {window} y");
        let mut out = stage.feed(text.as_bytes());
        out.extend(stage.finish());
        assert_eq!(out, text.as_bytes());
    }
}
