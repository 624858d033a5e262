//! The house's shape, checked on every production line: no module of
//! `src/` imports one that imports it back, no import climbs the layers
//! (the rules are written once, in docs/DESIGN.md, "Layout"; the module
//! lists below are how this file reads them), every folder of `src/` lies
//! in one layer and, read folder by folder, no import climbs, the pure
//! modules do no I/O, `config.rs` is the only reader of environment
//! variables, OS-specific code lives in `src/platform/`, which reaches no
//! configuration, only `output.rs` prints, every exit-code match names
//! each variant, no code but the command table decides by a command's
//! name, and no module is public that only tests use (but those
//! `PUBLIC_FOR_TESTS` lists, with why). Each rule has a test that plants
//! a violation.

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
        graph["operation::start"].contains("lease"),
        "{:?}",
        graph["operation::start"]
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

/// Modules other than `config` that read or change the environment.
fn environment_readers(modules: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (name, code) in modules {
        if name == "config" {
            continue;
        }
        for reader in ["env::var", "env::set_var", "env::remove_var"] {
            if code.contains(reader) {
                out.push(format!(
                    "src/{name}: reads the environment ({reader}); config.rs is the only reader"
                ));
            }
        }
    }
    out
}

#[test]
fn only_config_reads_the_environment() {
    let found = environment_readers(&modules());
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_environment_check_sees_a_planted_read() {
    let modules: BTreeMap<String, String> = [
        ("config", "std::env::var_os(\"HOME\")"),
        ("a", "let v = std::env::var(\"X\");"),
        ("b", "unsafe { std::env::set_var(\"X\", \"1\") }"),
        ("c", "let e = envelope::variant();"),
    ]
    .into_iter()
    .map(|(m, code)| (m.to_string(), code.to_string()))
    .collect();
    assert_eq!(
        environment_readers(&modules),
        [
            "src/a: reads the environment (env::var); config.rs is the only reader",
            "src/b: reads the environment (env::set_var); config.rs is the only reader",
        ]
    );
}

/// The layers, lowest first. A module may import its own layer or a lower
/// one; everything not named is the core. Each name is a top-level file or
/// a whole folder of `src/`, never a file inside one: a folder lies in one
/// layer (`every_folder_lies_in_one_layer`).
const FOUNDATION: [&str; 8] = [
    "exit",
    "signals",
    "socket",
    "minimist",
    "pinned_commands",
    "procs",
    "token_shape",
    "browser_name",
];
/// All that differs between Linux and macOS: above the foundation only.
const PLATFORM: &str = "platform";
const POLICY: &str = "policy";
const COMMANDS: [&str; 2] = ["command", "cli"];

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
    assert!(graph["command::connect"].contains("operation::start"));
    assert!(graph["command::forward"].contains("policy::line"));
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
        ("session::state", vec!["runtime", "cli"]),
        ("policy", vec!["exit", "config"]),
        ("exit", vec![]),
        ("command::ensure", vec!["session::state", "error"]),
        ("platform::linux", vec!["browser_name", "platform", "token"]),
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
            "session::state (core) imports cli (commands)"
        ]
    );
}

/// The unit a module belongs to when the house is read folder by folder:
/// the first segment of its path under `src/` (`token::store` is in the
/// folder `token/`; a top-level file is a unit of its own).
fn unit(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

/// Each unit's layer, read folder by folder: the highest of its modules'
/// that `graph` names, importing or imported (a folder is as high as its
/// highest file).
fn unit_layers(
    graph: &BTreeMap<String, BTreeSet<String>>,
    layer: &dyn Fn(&str) -> usize,
) -> BTreeMap<String, usize> {
    let mut out: BTreeMap<String, usize> = BTreeMap::new();
    for m in graph
        .iter()
        .flat_map(|(m, to)| std::iter::once(m).chain(to))
    {
        let at = out.entry(unit(m).to_string()).or_default();
        *at = (*at).max(layer(m));
    }
    out
}

/// Every folder of `src/` whose modules lie in different layers, with its
/// modules layer by layer.
fn folders_across_layers(modules: &BTreeSet<String>, layer: &dyn Fn(&str) -> usize) -> Vec<String> {
    let mut by_unit: BTreeMap<&str, BTreeMap<usize, Vec<&str>>> = BTreeMap::new();
    for m in modules {
        by_unit
            .entry(unit(m))
            .or_default()
            .entry(layer(m))
            .or_default()
            .push(m);
    }
    by_unit
        .into_iter()
        .filter(|(_, layers)| layers.len() > 1)
        .map(|(unit, layers)| {
            let held: Vec<String> = layers
                .iter()
                .map(|(l, ms)| format!("{} ({})", LAYER_NAMES[*l], ms.join(", ")))
                .collect();
            format!("src/{unit}/ spans layers: {}", held.join("; "))
        })
        .collect()
}

/// The import graph read folder by folder: the units each unit's modules
/// import (its imports of itself left out).
fn unit_graph(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, targets) in graph {
        let entry = out.entry(unit(from).to_string()).or_default();
        for to in targets.iter().map(|t| unit(t)).filter(|t| *t != unit(from)) {
            entry.insert(to.to_string());
        }
    }
    out
}

/// Every import that climbs when the house is read folder by folder: the
/// importing module's unit lies in a lower layer than the imported one's.
fn climbing_by_folder(
    graph: &BTreeMap<String, BTreeSet<String>>,
    layer: &dyn Fn(&str) -> usize,
) -> Vec<String> {
    let layers = unit_layers(graph, layer);
    let mut out = Vec::new();
    for (from, targets) in graph {
        for to in targets {
            let (a, b) = (layers[unit(from)], layers[unit(to)]);
            if b > a {
                out.push(format!(
                    "{from} imports {to}: {} ({}) imports {} ({})",
                    unit(from),
                    LAYER_NAMES[a],
                    unit(to),
                    LAYER_NAMES[b]
                ));
            }
        }
    }
    out
}

/// The loops of the graph read folder by folder: each set of two or more
/// units that all reach one another.
fn unit_loops(units: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(at) = stack.pop() {
            for next in units.get(&at).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        units.keys().map(|u| (u, reach(u))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for (u, from_u) in &reached {
        let together: BTreeSet<String> = from_u
            .iter()
            .filter(|v| reached.get(v).is_some_and(|r| r.contains(*u)))
            .cloned()
            .collect();
        if together.len() > 1 && !out.contains(&together) {
            out.push(together);
        }
    }
    out
}

/// Every loop of units, read folder by folder, whose units lie in
/// different layers.
fn loops_across_layers(
    graph: &BTreeMap<String, BTreeSet<String>>,
    layer: &dyn Fn(&str) -> usize,
) -> Vec<String> {
    let layers = unit_layers(graph, layer);
    unit_loops(&unit_graph(graph))
        .into_iter()
        .filter(|units| {
            let first = layers[units.first().unwrap()];
            units.iter().any(|u| layers[u] != first)
        })
        .map(|units| {
            let named: Vec<String> = units
                .iter()
                .map(|u| format!("{u} ({})", LAYER_NAMES[layers[u]]))
                .collect();
            format!("a loop across layers: {}", named.join(", "))
        })
        .collect()
}

/// A newcomer who opens a folder knows its layer: every module under one
/// folder of `src/` lies in the same layer (the layer tables above name
/// whole folders and top-level files, never a file inside a folder).
#[test]
fn every_folder_lies_in_one_layer() {
    let known: BTreeSet<String> = modules().into_keys().collect();
    assert!(known.contains("token::store") && known.contains("redact::fingerprint"));
    let found = folders_across_layers(&known, &layer);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_folder_check_sees_a_folder_across_layers() {
    // The layout before folders matched layers: the token's shape and the
    // browser names were foundation files in core folders.
    let old = |m: &str| match m {
        "token::shape" | "browser::name" => 0,
        _ => layer(m),
    };
    let known: BTreeSet<String> = [
        "token",
        "token::shape",
        "token::store",
        "browser",
        "browser::name",
        "tabs::book",
        "exit",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(
        folders_across_layers(&known, &old),
        [
            "src/browser/ spans layers: foundation (browser::name); core (browser)",
            "src/token/ spans layers: foundation (token::shape); core (token, token::store)",
        ]
    );
    assert!(folders_across_layers(&known, &layer).is_empty());
}

/// Read folder by folder (a folder is as high as its highest file), no
/// import climbs the layers, and every loop of folders lies in one layer
/// (the core's may import one another back: `lease/` and `tabs/`).
#[test]
fn no_import_climbs_read_folder_by_folder() {
    let graph = imports(&modules());
    assert!(graph["platform::browsers"].contains("browser_name"));
    let climbs = climbing_by_folder(&graph, &layer);
    assert!(
        climbs.is_empty(),
        "imports that climb, read folder by folder:\n{}",
        climbs.join("\n")
    );
    let loops = loops_across_layers(&graph, &layer);
    assert!(loops.is_empty(), "{}", loops.join("\n"));
}

#[test]
fn the_folder_reading_sees_a_climb_and_a_loop_across_layers() {
    // The layout before folders matched layers: no module climbs, module
    // by module; read folder by folder, two imports climb and a loop spans
    // the platform and the core.
    let old = |m: &str| match m {
        "token::shape" | "browser::name" => 0,
        _ => layer(m),
    };
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("platform::browsers", vec!["browser::name"]),
        ("browser", vec!["platform", "browser::name"]),
        ("browser::name", vec![]),
        ("policy::line", vec!["token::shape"]),
        ("token::shape", vec![]),
        ("token::input", vec!["output"]),
        ("output", vec!["token::fingerprint"]),
        ("token::fingerprint", vec!["token::shape"]),
        ("platform", vec![]),
        ("lease", vec!["tabs"]),
        ("tabs", vec!["lease"]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_string(), to.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        climbing_by_folder(&graph, &old),
        [
            "platform::browsers imports browser::name: platform (platform) imports browser (core)",
            "policy::line imports token::shape: policy (policy) imports token (core)",
        ]
    );
    // browser <-> platform spans two layers; output <-> token and
    // lease <-> tabs are the core's own.
    assert_eq!(
        loops_across_layers(&graph, &old),
        ["a loop across layers: browser (core), platform (platform)"]
    );
    assert_eq!(unit_loops(&unit_graph(&graph)).len(), 3);
}

/// The modules that decide without touching the world: the policy, and
/// the tab book (every ownership rule), its alignment, its notices, the
/// daemon's numbers and what a reply proves.
const PURE: [&str; 6] = [
    POLICY,
    "tabs::align",
    "tabs::book",
    "tabs::notice",
    "tabs::number",
    "tabs::proof",
];

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
        ("tabs::listing", "fn h() { std::fs::write(\"b\", \"\"); }"),
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
fn os_code_outside_the_platform(files: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in files {
        if !path.starts_with("src/platform/") && text.contains("target_os") {
            out.push(format!(
                "{path}: names target_os; OS-specific code goes in src/platform/ (linux, macos)"
            ));
        }
        if text.contains("not(target_os") {
            out.push(format!(
                "{path}: uses not(target_os …); name the system: target_os = \"linux\" or \"macos\""
            ));
        }
    }
    out
}

#[test]
fn os_code_lives_in_the_platform_module() {
    let files = source_files();
    assert!(
        files.iter().any(|(path, _)| path == "src/platform/mod.rs"),
        "files found: {:?}",
        files.iter().map(|(path, _)| path).collect::<Vec<_>>()
    );
    let found = os_code_outside_the_platform(&files);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_os_check_sees_planted_os_code() {
    let files: Vec<(String, String)> = [
        ("src/platform/linux/mod.rs", "#[cfg(target_os = \"linux\")]"),
        ("src/platform/mod.rs", "#[cfg(not(target_os = \"linux\"))]"),
        ("src/runtime.rs", "if cfg!(target_os = \"macos\") {}"),
    ]
    .into_iter()
    .map(|(p, t)| (p.to_string(), t.to_string()))
    .collect();
    assert_eq!(
        os_code_outside_the_platform(&files),
        [
            "src/platform/mod.rs: uses not(target_os …); name the system: target_os = \"linux\" or \"macos\"",
            "src/runtime.rs: names target_os; OS-specific code goes in src/platform/ (linux, macos)",
        ]
    );
}

/// The platform modules that reach `config` through their imports.
fn platform_reaching_config(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut out = Vec::new();
    for module in graph.keys().filter(|m| m.starts_with("platform")) {
        let mut stack = vec![module.clone()];
        let mut seen = BTreeSet::new();
        while let Some(at) = stack.pop() {
            if at == "config" {
                out.push(format!(
                    "{module} reaches config through its imports; pass configured values as parameters"
                ));
                break;
            }
            for next in graph.get(&at).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
    }
    out
}

/// `config` imports `platform`, so nothing `platform` imports may reach
/// `config` (configured values come in as parameters).
#[test]
fn the_platform_module_reaches_no_configuration() {
    let found = platform_reaching_config(&imports(&modules()));
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_platform_check_sees_a_planted_reach() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("platform", vec!["platform::linux"]),
        ("platform::linux", vec!["exit"]),
        ("platform::macos", vec!["socket"]),
        ("socket", vec!["config"]),
        ("config", vec!["platform"]),
        ("exit", vec![]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_string(), to.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        platform_reaching_config(&graph),
        [
            "platform::macos reaches config through its imports; pass configured values as parameters"
        ]
    );
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

/// The body of every function of `code` that returns an exit code or an
/// `Option` of one, from `fn` to its closing brace at the same indent:
/// `-> Exit` or `-> Option<Exit>` whatever its name, and a code as a
/// number (`-> i32`, `-> Option<u8>`, `-> ExitCode`, …) when the
/// function's name says exit or code, or its body names an `Exit::`.
fn exit_functions(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("fn ") {
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        // The signature, to its body's brace; none (`;` first): no body.
        let Some(open) = code[at..].find(['{', ';']).map(|n| at + n) else {
            continue;
        };
        if code[open..].starts_with(';') {
            continue;
        }
        let returns = code[at..open].rsplit_once("->").map(|(_, r)| {
            r.split_whitespace()
                .collect::<String>()
                .replace("crate::exit::", "")
        });
        let line_start = code[..at].rfind('\n').map_or(0, |n| n + 1);
        let indent = &code[line_start..at];
        let indent = &indent[..indent.len() - indent.trim_start().len()];
        let close = format!("\n{indent}}}");
        let end = code[at..].find(&close).map_or(code.len(), |n| at + n);
        let body = &code[at..end];
        let returns = returns.unwrap_or_default();
        let inner = returns
            .strip_prefix("Option<")
            .and_then(|r| r.strip_suffix('>'))
            .unwrap_or(&returns)
            .trim_start_matches("std::process::");
        let name: String = code[at + 3..open]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<String>()
            .to_lowercase();
        let is_exit = match inner {
            "Exit" => true,
            "i32" | "u8" | "i64" | "ExitCode" | "ExitStatus" => {
                name.contains("exit") || name.contains("code") || body.contains("Exit::")
            }
            _ => false,
        };
        if is_exit {
            out.push(body);
        }
    }
    out
}

/// Every exit-code match names each variant: a new one must be placed,
/// not defaulted to 1, 2 or 5 (or to no code) by a `_ =>`.
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

/// A function that returns an `Option` of an exit code, or an exit code
/// under another name than `exit`, names each variant too.
#[test]
fn the_exit_check_sees_a_default_arm_in_an_optional_exit() {
    let planted = "impl S {\n    pub fn exit(&self) -> Option<Exit> {\n        match self {\n            \
                   S::A => Some(Exit::Token),\n            _ => None,\n        }\n    }\n\n    \
                   fn code_of(s: &S) -> crate::exit::Exit {\n        match s {\n            \
                   _ => Exit::Failure,\n        }\n    }\n\n    fn other(&self) -> Option<u8> {\n        \
                   match self { _ => None }\n    }\n}\n";
    let files = vec![("src/planted.rs".to_string(), planted.to_string())];
    assert_eq!(
        defaulted_exits(&files),
        [
            "src/planted.rs: fn exit(&self) -> Option<Exit> {",
            "src/planted.rs: fn code_of(s: &S) -> crate::exit::Exit {",
        ]
    );
    let named = planted
        .replace("_ => None,", "S::B => None,")
        .replace("_ => Exit::Failure", "S::A | S::B => Exit::Failure");
    assert!(defaulted_exits(&[("src/p.rs".to_string(), named)]).is_empty());
}

/// An exit code as a number is one too: a function whose name says exit
/// or code, or that names an `Exit::`, returning `i32`, `u8`, `ExitCode`
/// or an `Option` of one; a number that is no exit code is left alone.
#[test]
fn the_exit_check_sees_a_default_arm_in_a_numeric_exit_code() {
    let planted = "impl S {\n    fn status_code(&self) -> Option<i32> {\n        match self {\n            \
                   S::A => Some(2),\n            _ => None,\n        }\n    }\n\n    \
                   fn status(&self) -> u8 {\n        match self {\n            \
                   S::A => Exit::Usage.code() as u8,\n            _ => 1,\n        }\n    }\n\n    \
                   fn exits(&self) -> std::process::ExitCode {\n        match self { _ => ExitCode::FAILURE }\n    }\n\n    \
                   fn count(&self) -> Option<i32> {\n        match self { _ => None }\n    }\n}\n";
    let files = vec![("src/planted.rs".to_string(), planted.to_string())];
    assert_eq!(
        defaulted_exits(&files),
        [
            "src/planted.rs: fn status_code(&self) -> Option<i32> {",
            "src/planted.rs: fn status(&self) -> u8 {",
            "src/planted.rs: fn exits(&self) -> std::process::ExitCode {",
        ]
    );
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

/// Public modules that only integration tests use (not `main.rs`, an
/// example or a workspace crate), each with the tests and why they stay
/// integration tests rather than unit tests or runs of the binary: they
/// need real processes, the golden install or the stand-in, which only the
/// fixtures in `tests/common/` provide. Any other module only tests use is
/// `pub(crate)`, its tests in the crate.
const PUBLIC_FOR_TESTS: [(&str, &str); 6] = [
    (
        "chrome",
        "tests/chrome.rs reads real processes beside doctor's report; tests/standin.rs and \
         tests/real_extension.rs count the browser's main processes and scan for the token",
    ),
    (
        "minimist",
        "tests/minimist.rs holds the port to the pinned minimist.js under node (golden install)",
    ),
    (
        "pinned_commands",
        "the command table and booleans for tests/minimist.rs, native.rs, one_reading.rs, \
         docs.rs and common/minimist_js.rs",
    ),
    (
        "procs",
        "the process table the fixtures read to find daemons and browsers (tests/connect.rs, \
         faults.rs, standin.rs, real_extension.rs, turns.rs, common/pwcli.rs)",
    ),
    (
        "singleton",
        "tests/delivery.rs delivers to the Chrome stand-in directly",
    ),
    (
        "token_shape",
        "the token's variable, which tests/common/isolation.rs and common/pwcli.rs check \
         a token-carrying process for",
    ),
];

/// The modules `src/lib.rs` makes `pub`.
fn public_modules(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ")?.strip_suffix(';'))
        .map(String::from)
        .collect()
}

/// The crate's top modules a file names: `my_chrome::a::b`,
/// `my_chrome::{a, b::c}`.
fn crate_modules_named(code: &str) -> BTreeSet<String> {
    const PATH: &str = "my_chrome::";
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices(PATH) {
        let rest = &code[at + PATH.len()..];
        let tree = if rest.starts_with('{') {
            let mut depth = 0;
            let mut end = rest.len();
            for (i, c) in rest.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            &rest[..end]
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        };
        for path in expand_use(tree) {
            if let Some(first) = path.split("::").next().filter(|f| !f.is_empty()) {
                out.insert(first.to_string());
            }
        }
    }
    out
}

/// What breaks "no public module that only tests use": a public module no
/// user names and the list does not explain, and a listed one that is no
/// longer public or that a user names (the list is then stale).
fn public_only_for_tests(lib: &str, users: &[String], listed: &[&str]) -> Vec<String> {
    let public = public_modules(lib);
    let used: BTreeSet<String> = users.iter().flat_map(|u| crate_modules_named(u)).collect();
    let mut faults: Vec<String> = public
        .iter()
        .filter(|m| !used.contains(*m) && !listed.contains(&m.as_str()))
        .map(|m| format!("{m}: public, but only tests use it"))
        .collect();
    for m in listed {
        if !public.contains(*m) || used.contains(*m) {
            faults.push(format!(
                "{m}: listed as public for tests alone, but it is not"
            ));
        }
    }
    faults
}

/// `src/main.rs`, every example, and every other crate of the workspace.
fn crate_users() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("examples")];
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = manifest
        .lines()
        .find_map(|l| l.strip_prefix("members = "))
        .expect("the workspace's members");
    dirs.extend(
        members
            .split('"')
            .skip(1)
            .step_by(2)
            .filter(|m| *m != ".")
            .map(|m| root.join(m).join("src")),
    );
    let mut users = vec![fs::read_to_string(root.join("src/main.rs")).unwrap()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                users.push(fs::read_to_string(path).unwrap());
            }
        }
    }
    users
}

#[test]
fn no_module_is_public_only_for_tests_unless_listed_with_why() {
    let lib = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let users = crate_users();
    assert!(users.len() > 5, "main.rs and the examples");
    let listed: Vec<&str> = PUBLIC_FOR_TESTS.iter().map(|(m, _)| *m).collect();
    let faults = public_only_for_tests(&lib, &users, &listed);
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn the_public_check_sees_a_module_only_tests_use_and_a_stale_listing() {
    let lib = "pub mod a;\npub mod b;\npub(crate) mod c;\npub mod d;\npub mod e;\npub mod f;\n";
    let users = [
        "use my_chrome::{a, x::{y, z}};".to_string(),
        "fn main() { my_chrome::b::run(); }".to_string(),
    ];
    assert_eq!(
        public_only_for_tests(lib, &users, &["c", "b", "e"]),
        [
            "d: public, but only tests use it",
            "f: public, but only tests use it",
            "c: listed as public for tests alone, but it is not",
            "b: listed as public for tests alone, but it is not",
        ]
    );
}

/// The pinned CLI's documented commands (`skill/cli/commands.txt`).
fn command_names() -> Vec<String> {
    let table =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("skill/cli/commands.txt"))
            .unwrap();
    table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

/// Every production line outside the command table (`pinned_commands`)
/// that decides by a command's name written as a literal: compared
/// (`==`, `!=`), matched (an arm's pattern, `matches!`, `|`), or listed in
/// a `const` or `static` (a list some code then searches). A name that is
/// only sent (`&["tab-list"]`) or shown decides nothing.
fn name_decisions(modules: &BTreeMap<String, String>, names: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (module, code) in modules {
        if module == "pinned_commands" {
            continue;
        }
        // Where each `const`/`static` item lies.
        let mut lists = Vec::new();
        for start in ["const ", "static "] {
            for (at, _) in code.match_indices(start) {
                let line_start = code[..at].rfind('\n').map_or(0, |n| n + 1);
                let head = code[line_start..at].trim();
                let value = code[at..].find('=').map(|eq| at + eq);
                if let Some(eq) =
                    value.filter(|_| head.is_empty() || head == "pub" || head.starts_with("pub("))
                {
                    lists.push(at..eq + item_end(&code[eq..]));
                }
            }
        }
        let mut offset = 0;
        for line in code.split_inclusive('\n') {
            let here = offset;
            offset += line.len();
            if line.trim_start().starts_with("//") {
                continue;
            }
            for name in names {
                let literal = format!("\"{name}\"");
                for (at, _) in line.match_indices(&literal) {
                    let before = line[..at].trim_end();
                    let after = line[at + literal.len()..].trim_start();
                    let compared = ["==", "!=", "|"].iter().any(|op| before.ends_with(op))
                        || ["==", "!=", "|", "=>"]
                            .iter()
                            .any(|op| after.starts_with(op))
                        || line[at..].contains("=>")
                        || line[..at].contains("matches!(");
                    let listed = lists.iter().any(|r| r.contains(&(here + at)));
                    if compared || listed {
                        out.push(format!("src/{module}: {}", line.trim()));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn no_code_but_the_command_table_decides_by_a_commands_name() {
    let names = command_names();
    assert!(names.len() > 50 && names.iter().any(|n| n == "tab-new"));
    let found = name_decisions(&modules(), &names);
    assert!(
        found.is_empty(),
        "decided by a command's name outside src/pinned_commands.rs (give the table's entry \
         a field for it, in skill/cli/reviewed.txt):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_name_check_sees_planted_comparisons() {
    let names: Vec<String> = ["tab-new", "goto", "list", "snapshot"]
        .map(String::from)
        .to_vec();
    let modules: BTreeMap<String, String> = [
        ("a", "fn f(n: &str) -> bool { n == \"tab-new\" }"),
        (
            "b",
            "fn f(n: &str) { match n {\n    \"goto\" | \"list\" => {}\n    _ => {}\n} }",
        ),
        ("c", "const READS: [&str; 1] = [\n    \"snapshot\",\n];"),
        ("d", "fn f(n: &str) -> bool { matches!(n, \"list\") }"),
        (
            "e",
            "fn f(a: (&str, u8)) { match a {\n    (\"goto\", _) => {}\n} }",
        ),
        // Sent or shown, a name decides nothing; the table may compare.
        (
            "f",
            "fn f() { send(&[\"tab-new\", \"about:blank\"]); io(\"list\", p); }",
        ),
        ("g", "// if n == \"goto\"\nfn g() {}"),
        ("pinned_commands", "fn goto() { find(\"goto\") == x }"),
    ]
    .into_iter()
    .map(|(m, code)| (m.to_string(), code.to_string()))
    .collect();
    assert_eq!(
        name_decisions(&modules, &names),
        [
            "src/a: fn f(n: &str) -> bool { n == \"tab-new\" }",
            "src/b: \"goto\" | \"list\" => {}",
            "src/b: \"goto\" | \"list\" => {}",
            "src/c: \"snapshot\",",
            "src/d: fn f(n: &str) -> bool { matches!(n, \"list\") }",
            "src/e: (\"goto\", _) => {}",
        ]
    );
}

/// Functions that print what a page said (a reply, a tab list with its
/// titles) through the free printers of my-chrome's own words
/// (`output::text`, `output::json_text`) instead of a `Printer`, which
/// holds the stored token's fingerprint: `module: fn name`.
fn page_text_without_printer(modules: &BTreeMap<String, String>) -> Vec<String> {
    let page_words = ["Reply::", "listing::render", "listing::rewrite_text"];
    let free = ["output::text(", "output::json_text("];
    let mut out = Vec::new();
    for (name, code) in modules {
        if name == "output" {
            continue;
        }
        for (at, _) in code.match_indices("fn ") {
            if code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                continue;
            }
            let body = &code[at..at + item_end(&code[at..])];
            let function: String = body[3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if page_words.iter().any(|w| body.contains(w)) && free.iter().any(|f| body.contains(f))
            {
                out.push(format!(
                    "src/{name}: {function} prints a page's words unkeyed"
                ));
            }
        }
    }
    out
}

#[test]
fn a_pages_words_are_printed_only_by_a_printer_that_holds_the_fingerprint() {
    let found = page_text_without_printer(&modules());
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_printer_check_sees_a_planted_free_print() {
    let modules: BTreeMap<String, String> = [
        (
            "a",
            "fn show(r: Reply) { match r { Reply::Error(m) => crate::output::text(s, &[m]) } }",
        ),
        (
            "b",
            "fn list() { printer.text(s, &[&listing::render(&own)]) }",
        ),
        (
            "c",
            "fn wait() { crate::output::text(s, &[\"waiting\"]) }\nfn l() { listing::render(&o); }",
        ),
        (
            "d",
            "fn json() { output::json_text(s, &listing::render_json(&own), \"\") }",
        ),
    ]
    .into_iter()
    .map(|(m, code)| (m.to_string(), code.to_string()))
    .collect();
    assert_eq!(
        page_text_without_printer(&modules),
        [
            "src/a: show prints a page's words unkeyed",
            "src/d: json prints a page's words unkeyed",
        ]
    );
}
