//! Prepares, once, what every command would otherwise work out when it
//! starts: the redactor's spellings of the token (src/redact/spelling.rs)
//! compiled into a forward and a reverse sparse DFA, embedded by
//! src/redact/patterns.rs (compiling them cost each command about a
//! millisecond); and what src/pinned_commands.rs reads of the pinned
//! client's `help.json`, as a Rust table (parsing the 44 KB file cost each
//! forwarded command about 0.3 ms).

use std::path::PathBuf;

use regex_automata::dfa::{dense, regex::Builder};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;

include!("src/redact/spelling.rs");

fn main() {
    println!("cargo::rerun-if-changed=src/redact/spelling.rs");
    println!("cargo::rerun-if-changed=skill/cli/help.json");
    println!("cargo::rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    redactor(&out);
    help_table(&out);
}

/// The redactor's two DFAs, `redact-forward.dfa` and `redact-reverse.dfa`.
fn redactor(out: &std::path::Path) {
    // As `regex::bytes::Regex` reads it: bytes, not UTF-8; leftmost-first.
    let regex = Builder::new()
        .syntax(syntax::Config::new().unicode(false).utf8(false))
        .thompson(thompson::Config::new().utf8(false))
        .dense(dense::Config::new())
        .build(&spellings())
        .expect("the redaction patterns compile");
    for (name, dfa) in [("forward", regex.forward()), ("reverse", regex.reverse())] {
        let sparse = dfa.to_sparse().expect("the DFA is made sparse");
        std::fs::write(
            out.join(format!("redact-{name}.dfa")),
            sparse.to_bytes_little_endian(),
        )
        .expect("OUT_DIR is writable");
    }
}

/// `help-table.rs`: `HELP_BOOLEANS`, the options `help.json` lists as
/// booleans, and `HELP_COMMANDS`, each command's entry as a
/// `pinned_commands::HelpRow`.
fn help_table(out: &std::path::Path) {
    let text = std::fs::read_to_string("skill/cli/help.json").expect("skill/cli/help.json");
    let help: serde_json::Value = serde_json::from_str(&text).expect("help.json parses");
    let strings = |value: &serde_json::Value| -> Vec<String> {
        let items: Vec<&str> = match value {
            serde_json::Value::Array(items) => items.iter().filter_map(|v| v.as_str()).collect(),
            serde_json::Value::Object(map) => map.keys().map(String::as_str).collect(),
            _ => Vec::new(),
        };
        items.iter().map(|s| format!("{s:?}")).collect()
    };
    let mut code = format!(
        "const HELP_BOOLEANS: &[&str] = &[{}];\n",
        strings(&help["booleanOptions"]).join(", ")
    );
    code.push_str("const HELP_COMMANDS: &[HelpRow] = &[\n");
    for (name, entry) in help["commands"]
        .as_object()
        .expect("help.json has commands")
    {
        code.push_str(&format!(
            "    HelpRow {{ name: {name:?}, help: {:?}, flags: &[{}], args: {}, raw: {}, variadic: {} }},\n",
            entry["help"].as_str().unwrap_or_default(),
            strings(&entry["flags"]).join(", "),
            entry["args"].as_array().map_or(0, Vec::len),
            entry["raw"] == true,
            entry["variadicArg"] == true,
        ));
    }
    code.push_str("];\n");
    std::fs::write(out.join("help-table.rs"), code).expect("OUT_DIR is writable");
}
