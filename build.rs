//! Compiles the redactor's spellings of the token (src/redact/spelling.rs)
//! into a forward and a reverse sparse DFA, written to OUT_DIR and embedded
//! by src/redact/patterns.rs: a command then loads them instead of
//! compiling the expression each time it starts (about a millisecond).

use std::path::PathBuf;

use regex_automata::dfa::{dense, regex::Builder};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;

include!("src/redact/spelling.rs");

fn main() {
    println!("cargo::rerun-if-changed=src/redact/spelling.rs");
    println!("cargo::rerun-if-changed=build.rs");
    // As `regex::bytes::Regex` reads it: bytes, not UTF-8; leftmost-first.
    let regex = Builder::new()
        .syntax(syntax::Config::new().unicode(false).utf8(false))
        .thompson(thompson::Config::new().utf8(false))
        .dense(dense::Config::new())
        .build(&spellings())
        .expect("the redaction patterns compile");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (name, dfa) in [("forward", regex.forward()), ("reverse", regex.reverse())] {
        let sparse = dfa.to_sparse().expect("the DFA is made sparse");
        std::fs::write(
            out.join(format!("redact-{name}.dfa")),
            sparse.to_bytes_little_endian(),
        )
        .expect("OUT_DIR is writable");
    }
}
