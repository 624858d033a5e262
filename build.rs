//! Prepares, once, what every command would otherwise work out when it
//! starts: the redactor's spellings of the token (src/redact/spelling.rs)
//! compiled into a forward and a reverse sparse DFA, embedded by
//! src/redact/patterns.rs (compiling them cost each command about a
//! millisecond); and src/pinned_commands.rs's table: what the pinned
//! client's `help.json` says of each command (parsing the 44 KB file cost
//! each forwarded command about 0.3 ms), and one entry per documented
//! command joining `skill/cli/commands.txt` (its file slots) with
//! my-chrome's review of it (`skill/cli/reviewed.txt`). The build stops on
//! a review that does not fit the pin.

use std::path::PathBuf;

use regex_automata::dfa::{dense, regex::Builder};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;

include!("src/redact/spelling.rs");

fn main() {
    println!("cargo::rerun-if-changed=src/redact/spelling.rs");
    println!("cargo::rerun-if-changed=skill/cli/help.json");
    println!("cargo::rerun-if-changed=skill/cli/commands.txt");
    println!("cargo::rerun-if-changed=skill/cli/reviewed.txt");
    println!("cargo::rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    redactor(&out);
    help_table(&out);
    command_table(&out);
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

/// `command-table.rs`: `COMMANDS`, one `pinned_commands::Row` per
/// documented command (commands.txt's order), and `REFUSED`, the refused
/// ones in the review's order. A command of the pin the review does not
/// decide is `Decision::Undecided`: refused, and a unit test fails.
fn command_table(out: &std::path::Path) {
    let documented = std::fs::read_to_string("skill/cli/commands.txt").expect("commands.txt");
    let reviewed = std::fs::read_to_string("skill/cli/reviewed.txt").expect("reviewed.txt");
    let review = read_review(&reviewed);
    let mut code = String::from("const COMMANDS: &[Row] = &[\n");
    let mut seen = Vec::new();
    for line in documented.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let name = words.next().expect("a line starts with a name");
        let slots: Vec<&str> = words.collect();
        seen.push(name.to_string());
        let entry = review.iter().find(|r| r.name == name);
        let decided = |list: &dyn Fn(&Review) -> &Vec<String>, slot: &str| {
            entry.is_some_and(|r| list(r).iter().any(|s| s == slot))
        };
        for slot in &slots {
            let (out, inn) = (decided(&|r| &r.writes, slot), decided(&|r| &r.reads, slot));
            assert!(
                entry.is_none() || out != inn,
                "reviewed.txt: `{name}`'s file slot {slot} must be file-out or file-in, once"
            );
        }
        if let Some(r) = entry {
            for slot in r.writes.iter().chain(&r.reads) {
                assert!(
                    slots.contains(&slot.as_str()),
                    "reviewed.txt: `{name}` has no file slot {slot} in commands.txt"
                );
            }
        }
        let list = |items: Vec<String>| items.join(", ");
        let quoted = |pred: &dyn Fn(&str) -> bool| {
            list(
                slots
                    .iter()
                    .filter(|s| pred(s))
                    .map(|s| format!("{s:?}"))
                    .collect(),
            )
        };
        let flags = quoted(&|s| s.starts_with("--"));
        let flags = flags.replace("\"--", "\"");
        let args = list(
            slots
                .iter()
                .filter(|s| !s.starts_with("--") && !s.ends_with("..."))
                .map(|s| s.to_string())
                .collect(),
        );
        let rest = slots
            .iter()
            .find_map(|s| s.strip_suffix("..."))
            .map_or("None".to_string(), |n| format!("Some({n})"));
        let (
            decision,
            scope,
            tab,
            only_reads,
            on_context,
            navigates,
            in_front,
            hold,
            writes,
            reads,
        ) = match entry {
            Some(r) => (
                r.decision.clone(),
                r.scope.clone(),
                r.tab.clone(),
                r.only_reads,
                r.on_context,
                r.navigates,
                r.in_front,
                r.hold.clone(),
                list(r.writes.iter().map(|s| format!("{s:?}")).collect()),
                list(r.reads.iter().map(|s| format!("{s:?}")).collect()),
            ),
            None => (
                "Decision::Undecided".into(),
                "Scope::Page".into(),
                "None".into(),
                false,
                false,
                false,
                false,
                "None".into(),
                String::new(),
                String::new(),
            ),
        };
        code.push_str(&format!(
            "    Row {{ name: {name:?}, decision: {decision}, scope: {scope}, tab: {tab}, \
             only_reads: {only_reads}, on_context: {on_context}, navigates: {navigates}, \
             in_front: {in_front}, hold: {hold}, file_flags: &[{flags}], file_args: &[{args}], file_rest: {rest}, \
             writes: &[{writes}], reads: &[{reads}] }},\n"
        ));
    }
    code.push_str("];\n");
    for r in &review {
        assert!(
            seen.contains(&r.name),
            "reviewed.txt: `{}` is no documented command of the pin (commands.txt)",
            r.name
        );
    }
    code.push_str(&format!(
        "const REFUSED: &[&str] = &[{}];\n",
        review
            .iter()
            .filter(|r| r.decision.starts_with("Decision::Refuse"))
            .map(|r| format!("{:?}", r.name))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    std::fs::write(out.join("command-table.rs"), code).expect("OUT_DIR is writable");
}

/// One command as `skill/cli/reviewed.txt` decides it, each field as the
/// Rust it becomes.
struct Review {
    name: String,
    decision: String,
    scope: String,
    tab: String,
    only_reads: bool,
    on_context: bool,
    navigates: bool,
    in_front: bool,
    hold: String,
    writes: Vec<String>,
    reads: Vec<String>,
}

/// Every line of the review (its format is its header's); anything it
/// does not know stops the build.
fn read_review(text: &str) -> Vec<Review> {
    let mut out: Vec<Review> = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if line.starts_with(' ') {
            let last = reasons
                .last_mut()
                .expect("reviewed.txt: a reason follows a refused command");
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(line.trim());
            continue;
        }
        let mut words = line.split_whitespace();
        let name = words.next().expect("a name").to_string();
        assert!(
            out.iter().all(|r| r.name != name),
            "reviewed.txt: `{name}` is reviewed twice"
        );
        let decision = match words.next() {
            Some("forward") => "Decision::Forward",
            Some("refuse") => "Decision::Refuse",
            Some("disconnect") => "Decision::Disconnect",
            other => panic!("reviewed.txt: `{name}`: no decision {other:?}"),
        };
        let mut r = Review {
            name,
            decision: decision.into(),
            scope: "Scope::Page".into(),
            tab: "None".into(),
            only_reads: false,
            on_context: false,
            navigates: false,
            in_front: false,
            hold: "None".into(),
            writes: Vec::new(),
            reads: Vec::new(),
        };
        for word in words {
            let (key, value) = word.split_once('=').unwrap_or((word, ""));
            match (key, value) {
                ("scope", "page" | "context" | "session" | "none") => {
                    r.scope = format!("Scope::{}", capital(value));
                }
                ("tab", "list" | "new" | "select" | "close") => {
                    r.scope = "Scope::Tabs".into();
                    r.tab = format!("Some(TabCommand::{})", capital(value));
                }
                ("only-reads", "") => r.only_reads = true,
                ("on-context", "") => r.on_context = true,
                ("navigates", "") => r.navigates = true,
                ("in-front", "") => r.in_front = true,
                ("hold", rule) => r.hold = format!("Some({})", hold_rule(&r.name, rule)),
                ("file-out", slot) if !slot.is_empty() => r.writes.push(slot.into()),
                ("file-in", slot) if !slot.is_empty() => r.reads.push(slot.into()),
                _ => panic!("reviewed.txt: `{}`: unknown word {word:?}", r.name),
            }
        }
        assert!(
            decision == "Decision::Forward" || (r.scope == "Scope::Page" && r.tab == "None"),
            "reviewed.txt: `{}`: only a forwarded command has a scope or a tab",
            r.name
        );
        reasons.push(String::new());
        out.push(r);
    }
    for (r, reason) in out.iter_mut().zip(reasons) {
        match (r.decision.as_str(), reason.is_empty()) {
            ("Decision::Refuse", false) => r.decision = format!("Decision::Refuse({reason:?})"),
            ("Decision::Refuse", true) => {
                panic!("reviewed.txt: `{}` is refused without a reason", r.name)
            }
            (_, false) => panic!("reviewed.txt: `{}` has a reason but is not refused", r.name),
            _ => {}
        }
    }
    out
}

/// `KIND:starts`, `KIND:ends`, `KIND:ends-when-bare`,
/// `KIND:starts,ends-if=WORD`, as a `HoldRule`.
fn hold_rule(name: &str, rule: &str) -> String {
    let (kind, what) = rule
        .split_once(':')
        .unwrap_or_else(|| panic!("reviewed.txt: `{name}`: hold={rule} has no kind"));
    let kind = match kind {
        "tracing" | "routes" | "network" => format!("HoldKind::{}", capital(kind)),
        _ => panic!("reviewed.txt: `{name}`: no hold kind {kind:?}"),
    };
    match what {
        "starts" => format!("HoldRule::Starts({kind})"),
        "ends" => format!("HoldRule::Ends({kind})"),
        "ends-when-bare" => format!("HoldRule::EndsWhenBare({kind})"),
        _ => match what.strip_prefix("starts,ends-if=") {
            Some(word) if !word.is_empty() => format!("HoldRule::StartsOrEndsIf({kind}, {word:?})"),
            _ => panic!("reviewed.txt: `{name}`: no hold rule {what:?}"),
        },
    }
}

fn capital(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}
