//! The second stage of the redactor: the stored token's bare value,
//! wherever it stands (inside a longer word, a URL, base64, any context),
//! found through its fingerprint (`token/fingerprint.rs`) without holding
//! it.
//!
//! Split reads: a window is decided only when all of its bytes are there
//! (at most `len − 1` bytes are held back), and the scan goes on from where
//! the last decision left it, so any chunking gives the single read's
//! output.

use super::{REDACTED, Stage};
use crate::token::fingerprint::Fingerprint;
use crate::token::shape::is_token_byte;

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
