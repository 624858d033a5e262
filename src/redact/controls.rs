//! The last stage of everything printed from the CLI: terminal controls
//! escaped, so that no sequence from a page (ESC, the OSC 52 that writes
//! the clipboard, an 8-bit CSI) reaches the caller's terminal. Newline and
//! tab pass; every other C0 character, DEL and every C1 character becomes
//! `\u{…}`, and a byte that is no UTF-8 character becomes `\x…`.
//!
//! Split reads: only an unfinished UTF-8 sequence (at most three bytes) is
//! held back.

use super::Stage;

#[derive(Default)]
pub struct Controls {
    pending: Vec<u8>,
}

impl Stage for Controls {
    fn pending(&mut self) -> &mut Vec<u8> {
        &mut self.pending
    }

    fn process(&mut self, at_end: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.pending.len());
        let mut rest = &self.pending[..];
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    escape(text, &mut out);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    escape(std::str::from_utf8(valid).expect("valid"), &mut out);
                    match e.error_len() {
                        Some(bad) => {
                            for byte in &after[..bad] {
                                out.extend_from_slice(format!("\\x{byte:02x}").as_bytes());
                            }
                            rest = &after[bad..];
                        }
                        // A sequence cut by the read: the next read ends it.
                        None if !at_end => {
                            rest = after;
                            break;
                        }
                        None => {
                            for byte in after {
                                out.extend_from_slice(format!("\\x{byte:02x}").as_bytes());
                            }
                            rest = &[];
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        out
    }
}

fn escape(text: &str, out: &mut Vec<u8>) {
    let mut plain = 0;
    for (at, c) in text.char_indices() {
        let control = c.is_control() && c != '\n' && c != '\t';
        if control {
            out.extend_from_slice(&text.as_bytes()[plain..at]);
            out.extend_from_slice(format!("\\u{{{:x}}}", c as u32).as_bytes());
            plain = at + c.len_utf8();
        }
    }
    out.extend_from_slice(&text.as_bytes()[plain..]);
}
