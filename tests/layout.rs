//! The house's shape, checked: no module of `src/` imports one that imports
//! it back, no import climbs the layers (foundation < policy < core <
//! commands), the policy does no I/O, `config.rs` is the only reader of
//! environment variables, and OS-specific code lives in `src/platform/`,
//! which reaches no configuration.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Every module of `src/` (`a::b`), with its code before any test module.
fn modules() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    let root = stack[0].clone();
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(&root).unwrap().with_extension("");
            let mut name = rel.to_string_lossy().replace('/', "::");
            if let Some(parent) = name.strip_suffix("::mod") {
                name = parent.to_string();
            }
            if name == "lib" || name == "main" {
                continue;
            }
            let text = fs::read_to_string(&path).unwrap();
            out.insert(name, production(&text));
        }
    }
    out
}

/// Every production line of a file: the file without its test-only items
/// (each `#[cfg(test)]` item, to the end of its braces or its `;`),
/// wherever they stand.
fn production(text: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        rest = &rest[at + MARK.len()..];
        rest = &rest[item_end(rest)..];
    }
    out.push_str(rest);
    out
}

/// Where the item that starts `code` ends: after the `}` that closes its
/// first `{`, or after a `;` that comes before any `{`. Strings, chars and
/// comments are skipped, so a brace in them does not count.
fn item_end(code: &str) -> usize {
    let bytes = code.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i += code[i..].find('\n').unwrap_or(code.len() - i);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += code[i..].find("*/").map_or(code.len() - i, |n| n + 1);
            }
            b'r' if matches!(bytes.get(i + 1), Some(b'#' | b'"'))
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')) =>
            {
                let hashes = code[i + 1..].bytes().take_while(|b| *b == b'#').count();
                let close = format!("\"{}", "#".repeat(hashes));
                let open = i + 2 + hashes;
                i = code[open..]
                    .find(&close)
                    .map_or(code.len(), |n| open + n + hashes);
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => {
                i += code[i + 2..].find('\'').map_or(0, |n| n + 2);
            }
            b';' if depth == 0 => return i + 1,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    code.len()
}

/// The longest known module that `path` (`a::b::Item`) starts with.
fn resolve<'a>(path: &str, known: &'a BTreeSet<String>) -> Option<&'a String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len())
        .rev()
        .find_map(|n| known.get(&parts[..n].join("::")))
}

/// Which modules each module names through `crate::…` or `super::…`.
fn imports(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    let path = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect::<String>()
            .trim_end_matches(':')
            .to_string()
    };
    let mut graph = BTreeMap::new();
    for (name, code) in modules {
        let mut targets = BTreeSet::new();
        let mut add = |full: String| {
            if let Some(t) = resolve(&full, &known)
                && t != name
                && !name.starts_with(&format!("{t}::"))
            {
                targets.insert(t.clone());
            }
        };
        // Every `use` tree, groups and nested groups included, and every
        // path written out in the code.
        let written = ["crate::", "super::", "self::"].iter().flat_map(|start| {
            code.match_indices(start)
                .filter(|(at, _)| {
                    !code[..*at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
                })
                .map(|(at, _)| path(&code[at..]))
        });
        let paths: Vec<String> = use_trees(code)
            .iter()
            .flat_map(|tree| expand_use(tree))
            .chain(written)
            .collect();
        for full in paths {
            if let Some(absolute) = absolute(&full, name) {
                add(absolute);
            }
        }
        // A parent naming its own child by its short name (`limits::read`).
        for child in known
            .iter()
            .filter(|k| k.rsplit_once("::").is_some_and(|(p, _)| p == name))
        {
            let short = child.rsplit_once("::").unwrap().1;
            let needle = format!("{short}::");
            let named = code.match_indices(&needle).any(|(at, _)| {
                !code[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            });
            if named {
                add(child.clone());
            }
        }
        graph.insert(name.clone(), targets);
    }
    graph
}

/// `crate::a::b`, `super::super::c` or `self::d` as seen from module
/// `name`, from the crate's root (`a::b`); `None` for any other path.
fn absolute(path: &str, name: &str) -> Option<String> {
    let mut segments = path.split("::").peekable();
    let mut base: Vec<&str> = match segments.next()? {
        "crate" => Vec::new(),
        "self" => name.split("::").collect(),
        "super" => {
            let mut here: Vec<&str> = name.split("::").collect();
            here.pop();
            here
        }
        _ => return None,
    };
    while segments.peek() == Some(&"super") {
        segments.next();
        base.pop();
    }
    base.extend(segments);
    Some(base.join("::"))
}

/// The tree of every `use` whose path starts at `crate`, `super` or `self`
/// (`crate::{a, b::{c, d}}`), without the `use` and the `;`.
fn use_trees(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("use ") {
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &code[at + 4..];
        if !["crate::", "super::", "self::"]
            .iter()
            .any(|r| rest.starts_with(r))
        {
            continue;
        }
        let end = rest.find(';').unwrap_or(rest.len());
        out.push(rest[..end].split_whitespace().collect::<Vec<_>>().join(" "));
    }
    out
}

/// Every path a `use` tree names: `a::{b, c::{d, self}}` is `a::b`,
/// `a::c::d` and `a::c`.
fn expand_use(tree: &str) -> Vec<String> {
    fn walk(tree: &str, prefix: &str, out: &mut Vec<String>) {
        let mut depth = 0;
        let mut start = 0;
        let mut parts = Vec::new();
        for (i, c) in tree.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&tree[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&tree[start..]);
        for part in parts {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let join = |tail: &str| match (prefix.is_empty(), tail.is_empty()) {
                (true, _) => tail.to_string(),
                (false, true) => prefix.to_string(),
                (false, false) => format!("{prefix}::{tail}"),
            };
            match part.find('{') {
                Some(open) => {
                    let head = part[..open].trim_end_matches("::").trim();
                    let inner = &part[open + 1..part.rfind('}').unwrap_or(part.len())];
                    walk(inner, &join(head), out);
                }
                None => match part.split(" as ").next().unwrap_or(part).trim() {
                    "self" => out.push(prefix.to_string()),
                    leaf => out.push(join(leaf)),
                },
            }
        }
    }
    let mut out = Vec::new();
    walk(tree, "", &mut out);
    out
}

/// A cycle through `from`, if there is one.
fn cycle_through(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut stack = vec![(from.to_string(), vec![from.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((at, trail)) = stack.pop() {
        for next in &graph[&at] {
            if next == from {
                let mut cycle = trail.clone();
                cycle.push(from.to_string());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut longer = trail.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let graph = imports(&modules());
    assert!(graph.len() > 40, "modules found: {:?}", graph.keys());
    // The reader itself: it sees the edges this layout relies on.
    assert!(graph["error"].contains("helper"), "{:?}", graph["error"]);
    assert!(
        graph["command::start"].contains("lease"),
        "{:?}",
        graph["command::start"]
    );
    let cycles: Vec<String> = graph
        .keys()
        .filter_map(|m| cycle_through(&graph, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_reader_finds_a_cycle_when_there_is_one() {
    let modules: BTreeMap<String, String> = [
        ("a", "use crate::b::Thing;"),
        ("b", "use crate::{c::d, x};"),
        ("c", "pub mod d;\npub mod e;"),
        ("c::d", "fn f() { crate::a::g() }"),
        ("c::e", "use super::d::f;"),
    ]
    .into_iter()
    .map(|(m, code)| (m.to_string(), code.to_string()))
    .collect();
    let graph = imports(&modules);
    let cycle = cycle_through(&graph, "a").expect("a -> b -> c::d -> a");
    assert_eq!(cycle, ["a", "b", "c::d", "a"]);
    assert!(graph["c::e"].contains("c::d"), "{graph:?}");
    assert_eq!(cycle_through(&graph, "c::e"), None);
}

#[test]
fn only_config_reads_the_environment() {
    for (name, code) in modules() {
        if name == "config" {
            continue;
        }
        for reader in ["env::var", "env::set_var", "env::remove_var"] {
            assert!(
                !code.contains(reader),
                "src/{name}: reads the environment ({reader}); config.rs is the only reader"
            );
        }
    }
}

/// The layers, lowest first. A module may import its own layer or a lower
/// one; everything not named is the core.
const FOUNDATION: [&str; 8] = [
    "exit",
    "signals",
    "socket",
    "minimist",
    "pinned_commands",
    "procs",
    "token::shape",
    "browser::name",
];
/// All that differs between Linux and macOS: above the foundation only.
const PLATFORM: &str = "platform";
const POLICY: &str = "policy";
const COMMANDS: [&str; 3] = ["command", "error", "cli"];

fn within(module: &str, top: &str) -> bool {
    module == top || module.starts_with(&format!("{top}::"))
}

/// 0 foundation, 1 platform, 2 policy, 3 core, 4 commands.
fn layer(module: &str) -> usize {
    if FOUNDATION.iter().any(|m| within(module, m)) {
        0
    } else if within(module, PLATFORM) {
        1
    } else if within(module, POLICY) {
        2
    } else if COMMANDS.iter().any(|m| within(module, m)) {
        4
    } else {
        3
    }
}

const LAYER_NAMES: [&str; 5] = ["foundation", "platform", "policy", "core", "commands"];

/// Every import that climbs: `from -> to`.
fn climbing(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut out = Vec::new();
    for (from, targets) in graph {
        for to in targets {
            if layer(to) > layer(from) {
                out.push(format!(
                    "{from} ({}) imports {to} ({})",
                    LAYER_NAMES[layer(from)],
                    LAYER_NAMES[layer(to)]
                ));
            }
        }
    }
    out
}

#[test]
fn no_import_climbs_the_layers() {
    let graph = imports(&modules());
    // The reader sees the edges that matter here.
    assert!(graph["command::connect"].contains("command::start"));
    assert!(graph["command::forward"].contains("policy"));
    assert!(graph["file_args"].contains("policy::files"));
    for m in FOUNDATION.iter().chain([&POLICY]).chain(COMMANDS.iter()) {
        assert!(graph.contains_key(*m), "no module {m}: the table is stale");
    }
    let climbs = climbing(&graph);
    assert!(
        climbs.is_empty(),
        "imports that climb:\n{}",
        climbs.join("\n")
    );
}

#[test]
fn the_layer_check_sees_a_climbing_import() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("session::state", vec!["runtime", "error"]),
        ("policy", vec!["exit", "config"]),
        ("exit", vec![]),
        ("command::ensure", vec!["session::state", "error"]),
        (
            "platform::linux",
            vec!["browser::name", "platform", "token"],
        ),
        ("platform", vec!["policy"]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_string(), to.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        climbing(&graph),
        [
            "platform (platform) imports policy (policy)",
            "platform::linux (platform) imports token (core)",
            "policy (policy) imports config (core)",
            "session::state (core) imports error (commands)"
        ]
    );
}

/// The modules that decide without touching the world: the policy, and
/// the tab book's alignment.
const PURE: [&str; 2] = [POLICY, "tabs::align"];

/// What does I/O, or prints.
const IO: [&str; 14] = [
    "std::fs",
    "fs::",
    "std::io",
    "std::net",
    "std::process",
    "std::os",
    "std::env",
    "nix::",
    "File::",
    "OpenOptions",
    "Command::new",
    "println!",
    "eprintln!",
    "print!",
];

/// Every pure module that names something of [`IO`]: `module (word)`.
fn impure(modules: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (name, code) in modules {
        if !PURE.iter().any(|p| within(name, p)) {
            continue;
        }
        for word in IO {
            if code.contains(word) {
                out.push(format!("{name} ({word})"));
            }
        }
    }
    out
}

#[test]
fn the_pure_modules_do_no_io() {
    let modules = modules();
    for pure in PURE {
        assert!(
            modules.contains_key(pure),
            "no module {pure}: the list is stale"
        );
    }
    let found = impure(&modules);
    assert!(
        found.is_empty(),
        "I/O in a pure module:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_purity_check_sees_planted_io() {
    let modules: BTreeMap<String, String> = [
        ("policy::x", "fn f() { let _ = std::fs::read(\"a\"); }"),
        ("tabs::align", "fn g() { nix::unistd::getpid(); }"),
        ("tabs::book", "fn h() { std::fs::write(\"b\", \"\"); }"),
    ]
    .into_iter()
    .map(|(m, code)| (m.to_string(), code.to_string()))
    .collect();
    assert_eq!(
        impure(&modules),
        [
            "policy::x (std::fs)",
            "policy::x (fs::)",
            "tabs::align (nix::)"
        ]
    );
}

/// Every file of `src/` (path relative to the crate, whole text, tests
/// included).
fn source_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out
}

/// A macOS reviewer reads `src/platform/macos*`, a Linux reviewer
/// `src/platform/linux*`: no other file branches on the OS, and the one
/// spelling is `target_os = "…"` (a `not(target_os …)` would quietly take
/// in every other system).
#[test]
fn os_code_lives_in_the_platform_module() {
    let files = source_files();
    assert!(
        files.iter().any(|(path, _)| path == "src/platform/mod.rs"),
        "files found: {:?}",
        files.iter().map(|(path, _)| path).collect::<Vec<_>>()
    );
    for (path, text) in files {
        assert!(
            path.starts_with("src/platform/") || !text.contains("target_os"),
            "{path}: names target_os; OS-specific code goes in src/platform/ (linux, macos)"
        );
        assert!(
            !text.contains("not(target_os"),
            "{path}: uses not(target_os …); name the system: target_os = \"linux\" or \"macos\""
        );
    }
}

/// `config` imports `platform`, so nothing `platform` imports may reach
/// `config` (configured values come in as parameters).
#[test]
fn the_platform_module_reaches_no_configuration() {
    let graph = imports(&modules());
    for module in graph.keys().filter(|m| m.starts_with("platform")) {
        let mut stack = vec![module.clone()];
        let mut seen = BTreeSet::new();
        while let Some(at) = stack.pop() {
            assert!(
                at != "config",
                "{module} reaches config through its imports; pass configured values as parameters"
            );
            for next in &graph[&at] {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
    }
}

/// What writes to the terminal: the macros and the handles.
const PRINTERS: [&str; 7] = [
    "println!",
    "print!(",
    "eprintln!",
    "eprint!(",
    "dbg!(",
    "io::stdout()",
    "io::stderr()",
];

/// Whether `code` names `word` as a word of its own (`eprintln!` does not
/// name `println!`).
fn names(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(at, _)| {
        !code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Every file but `src/output.rs` that writes to the terminal itself.
fn printing_outside_output(files: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in files {
        if path == "src/output.rs" {
            continue;
        }
        for printer in PRINTERS {
            if names(&production(text), printer) {
                out.push(format!("{path}: {printer}"));
            }
        }
    }
    out
}

/// Every byte my-chrome prints passes the redactor (DESIGN invariant 9):
/// `src/output.rs` is the only writer to standard output and error, so no
/// message, listing or relay can go around it.
#[test]
fn only_the_output_module_prints() {
    let files = source_files();
    assert!(files.iter().any(|(path, _)| path == "src/main.rs"));
    let found = printing_outside_output(&files);
    assert!(
        found.is_empty(),
        "printing outside src/output.rs (use crate::output):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_print_check_sees_a_planted_print() {
    let files = vec![
        ("src/output.rs".to_string(), "println!(\"ok\")".to_string()),
        (
            "src/tabs/mod.rs".to_string(),
            "fn f() { eprintln!(\"x\") }\n#[cfg(test)]\nmod tests { fn g() { println!() } }"
                .to_string(),
        ),
        (
            "src/child.rs".to_string(),
            "let _ = std::io::stderr().write_all(b)".to_string(),
        ),
    ];
    assert_eq!(
        printing_outside_output(&files),
        ["src/tabs/mod.rs: eprintln!", "src/child.rs: io::stderr()"]
    );
}

/// The body of every `fn exit(…) -> Exit` of `code` (to its closing brace
/// at the same indent).
fn exit_functions(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("fn exit(") {
        let line_start = code[..at].rfind('\n').map_or(0, |n| n + 1);
        let indent = &code[line_start..at];
        let indent = &indent[..indent.len() - indent.trim_start().len()];
        let close = format!("\n{indent}}}");
        let end = code[at..].find(&close).map_or(code.len(), |n| at + n);
        if code[at..end].contains("-> Exit") {
            out.push(&code[at..end]);
        }
    }
    out
}

/// Every exit-code match names each variant: a new one must be placed,
/// not defaulted to 1, 2 or 5 by a `_ =>`.
fn defaulted_exits(files: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in files {
        for body in exit_functions(&production(text)) {
            if body.contains("_ =>") {
                out.push(format!("{path}: {}", body.lines().next().unwrap_or("")));
            }
        }
    }
    out
}

#[test]
fn every_exit_code_match_names_each_variant() {
    let files = source_files();
    let found: usize = files
        .iter()
        .map(|(_, text)| exit_functions(&production(text)).len())
        .sum();
    assert!(found > 20, "exit functions found: {found}");
    let defaulted = defaulted_exits(&files);
    assert!(
        defaulted.is_empty(),
        "exit-code matches with a default arm:\n{}",
        defaulted.join("\n")
    );
}

#[test]
fn the_exit_check_sees_a_default_arm() {
    let planted = "impl E {\n    pub fn exit(&self) -> Exit {\n        match self {\n            \
                   E::A => Exit::Security,\n            _ => Exit::Failure,\n        }\n    }\n}\n\
                   fn other() { match x { _ => 1 } }\n";
    let files = vec![("src/planted.rs".to_string(), planted.to_string())];
    assert_eq!(
        defaulted_exits(&files),
        ["src/planted.rs: fn exit(&self) -> Exit {"]
    );
    let named = planted.replace("_ => Exit::Failure", "E::B => Exit::Failure");
    assert!(defaulted_exits(&[("src/p.rs".to_string(), named)]).is_empty());
}

#[test]
fn the_reader_sees_every_production_line_and_no_test_line() {
    let text = "use crate::a;\n#[cfg(test)]\npub(crate) fn scratch() -> X {\n    let s = \"}\";\n    \
                let r = r#\"{ \"}\" \"#;\n    let c = '}';\n    crate::t::only_in_tests()\n}\n\
                use crate::b;\n#[cfg(test)]\nuse crate::t2;\nfn f() { crate::c::g() }\n\
                #[cfg(test)]\nmod tests {\n    // }\n    use crate::t3;\n}\n";
    let code = production(text);
    for seen in ["crate::a", "crate::b", "crate::c::g"] {
        assert!(code.contains(seen), "{seen} unseen in:\n{code}");
    }
    for test_only in ["crate::t::", "crate::t2", "crate::t3", "scratch"] {
        assert!(!code.contains(test_only), "{test_only} seen in:\n{code}");
    }
}

#[test]
fn the_reader_sees_groups_nested_groups_self_and_children() {
    let modules: BTreeMap<String, String> = [
        (
            "a",
            "use crate::b::{c::{d, self as e}, f};\nfn g() { kid::run() }",
        ),
        ("a::kid", "use super::{super::h, sib};"),
        ("a::sib", "use self::inner::X;\nuse crate::{h as k};"),
        ("a::sib::inner", ""),
        ("b", ""),
        ("b::c", ""),
        ("b::c::d", ""),
        ("b::f", ""),
        ("h", ""),
        ("i", "pub fn kid() {} // kid:: is no child of i"),
    ]
    .into_iter()
    .map(|(m, code)| (m.to_string(), code.to_string()))
    .collect();
    let graph = imports(&modules);
    let edges = |m: &str| graph[m].iter().cloned().collect::<Vec<_>>();
    // `b` itself too: `crate::b::{…}` names it.
    assert_eq!(edges("a"), ["a::kid", "b", "b::c", "b::c::d", "b::f"]);
    assert_eq!(edges("a::kid"), ["a::sib", "h"]);
    assert_eq!(edges("a::sib"), ["a::sib::inner", "h"]);
    assert!(edges("i").is_empty());
    assert_eq!(
        expand_use("crate::x::{y, z::{self, w}, v as u}"),
        [
            "crate::x::y",
            "crate::x::z",
            "crate::x::z::w",
            "crate::x::v"
        ]
    );
}
