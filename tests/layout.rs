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
            let code = text.split("#[cfg(test)]").next().unwrap().to_string();
            out.insert(name, code);
        }
    }
    out
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
        let parent = name.rsplit_once("::").map(|(p, _)| p.to_string());
        let mut targets = BTreeSet::new();
        let mut add = |full: String| {
            if let Some(t) = resolve(&full, &known)
                && t != name
                && !name.starts_with(&format!("{t}::"))
            {
                targets.insert(t.clone());
            }
        };
        for (at, _) in code.match_indices("crate::") {
            add(path(&code[at + "crate::".len()..]));
        }
        for (at, _) in code.match_indices("super::") {
            let rest = path(&code[at + "super::".len()..]);
            add(match &parent {
                Some(p) => format!("{p}::{rest}"),
                None => rest,
            });
        }
        // `use crate::{a, b::c}`: each item of the group.
        for group in code.split("use crate::{").skip(1) {
            let inner = group.split("};").next().unwrap_or_default();
            for item in inner.split([',', '{', '}', ' ', '\n']) {
                add(path(item.trim()));
            }
        }
        graph.insert(name.clone(), targets);
    }
    graph
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
const FOUNDATION: [&str; 7] = [
    "exit",
    "signals",
    "socket",
    "minimist",
    "pinned_commands",
    "procs",
    "token::shape",
];
const POLICY: &str = "policy";
const COMMANDS: [&str; 3] = ["command", "error", "cli"];

fn within(module: &str, top: &str) -> bool {
    module == top || module.starts_with(&format!("{top}::"))
}

/// 0 foundation, 1 policy, 2 core, 3 commands.
fn layer(module: &str) -> usize {
    if FOUNDATION.iter().any(|m| within(module, m)) {
        0
    } else if within(module, POLICY) {
        1
    } else if COMMANDS.iter().any(|m| within(module, m)) {
        3
    } else {
        2
    }
}

const LAYER_NAMES: [&str; 4] = ["foundation", "policy", "core", "commands"];

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
    ]
    .into_iter()
    .map(|(m, to)| (m.to_string(), to.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        climbing(&graph),
        [
            "policy (policy) imports config (core)",
            "session::state (core) imports error (commands)"
        ]
    );
}

#[test]
fn the_policy_does_no_io() {
    let io = [
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
    let modules = modules();
    let policy: Vec<(&String, &String)> =
        modules.iter().filter(|(m, _)| within(m, POLICY)).collect();
    assert!(policy.len() >= 2, "{:?}", modules.keys());
    for (name, code) in policy {
        for word in io {
            assert!(!code.contains(word), "src/{name} does I/O ({word})");
        }
    }
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

/// The production part of a file: before its test module.
fn production(text: &str) -> &str {
    text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text)
}

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
            if names(production(text), printer) {
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
        for body in exit_functions(production(text)) {
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
        .map(|(_, text)| exit_functions(production(text)).len())
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
