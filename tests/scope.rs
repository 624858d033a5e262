//! Every forwarded command's scope (docs/DESIGN.md, "Agents side by side")
//! is read from the pinned tool's own code: the installed pin's bundle
//! defines each command's tool either on the current tab (`defineTabTool`:
//! one page) or on the browser context (`defineTool`): the tab tools
//! (capability `core-tabs`), the test runner's debugger (a handler that
//! drives `….debugger`), or the context with every tab. The table in
//! DESIGN.md, `skill/cli/reviewed.txt` (the command table) and the bundle
//! must agree.

mod common;

use std::collections::BTreeMap;
use std::fs;

use my_chrome::policy::tabs::{Scope, may_open_tabs, page_despite_context_tool, scope_of};

/// The tool each command of the pinned CLI calls, from its declarations
/// (`declareCommand({ name: "x", … toolName: "browser_y"`, or a function
/// choosing between tools).
fn tools_of_commands(bundle: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for part in bundle.split("declareCommand({").skip(1) {
        let Some(name) = quoted_after(part, "name:") else {
            continue;
        };
        let Some(at) = part.find("toolName:") else {
            continue;
        };
        // Up to the end of the toolName's line: one or two tool names.
        let line = part[at..].lines().next().unwrap();
        let tools: Vec<String> = line
            .split('"')
            .filter(|w| w.starts_with("browser_"))
            .map(String::from)
            .collect();
        out.insert(name, tools);
    }
    out
}

fn quoted_after(text: &str, key: &str) -> Option<String> {
    let rest = &text[text.find(key)? + key.len()..];
    let start = rest.find('"')? + 1;
    let end = start + rest[start..].find('"')?;
    Some(rest[start..end].to_string())
}

/// Whether `tool` is defined on the current tab (`defineTabTool`) or on the
/// context (`defineTool`): the definition nearest before its schema name.
fn defined_on_tab(bundle: &str, tool: &str) -> bool {
    let at = bundle
        .find(&format!("name: \"{tool}\""))
        .unwrap_or_else(|| panic!("{tool} is not defined in the pinned bundle"));
    let tab = bundle[..at].rfind("defineTabTool(");
    let context = bundle[..at].rfind("defineTool(");
    match (tab, context) {
        (Some(t), Some(c)) => t > c,
        (Some(_), None) => true,
        _ => false,
    }
}

/// The text of `tool`'s definition: from its `define…(` to the next one.
fn definition<'a>(bundle: &'a str, tool: &str) -> &'a str {
    let at = bundle.find(&format!("name: \"{tool}\"")).unwrap();
    let start = ["defineTabTool(", "defineTool("]
        .iter()
        .filter_map(|d| bundle[..at].rfind(d))
        .max()
        .unwrap();
    let end = ["defineTabTool(", "defineTool("]
        .iter()
        .filter_map(|d| bundle[at..].find(d).map(|i| at + i))
        .min()
        .unwrap_or(bundle.len());
    &bundle[start..end]
}

/// What a tool defined on the context reaches, from its definition: the
/// tab tools (`capability: "core-tabs"`), the test runner's debugger (its
/// handler drives `….debugger`), or the context with every tab.
fn context_scope(bundle: &str, tool: &str) -> Scope {
    let text = definition(bundle, tool);
    if text.contains("capability: \"core-tabs\"") {
        Scope::Tabs
    } else if text.contains(".debugger.") {
        Scope::Session
    } else {
        Scope::Context
    }
}

#[test]
fn every_forwarded_commands_scope_is_the_pinned_codes() {
    let bundle = fs::read_to_string(
        common::golden_runtime().join("cli/node_modules/playwright-core/lib/coreBundle.js"),
    )
    .unwrap();
    let tools = tools_of_commands(&bundle);
    let mut checked = 0;
    for command in my_chrome::policy::forwarded_commands() {
        let scope = scope_of(command);
        if scope == Scope::None {
            continue;
        }
        let used = tools
            .get(command)
            .unwrap_or_else(|| panic!("`{command}` is not declared in the pinned bundle"));
        assert!(!used.is_empty(), "no tool found for `{command}`");
        for tool in used {
            let on_tab = defined_on_tab(&bundle, tool);
            let expected = if on_tab || page_despite_context_tool(command) {
                Scope::Page
            } else {
                context_scope(&bundle, tool)
            };
            assert_eq!(
                scope,
                expected,
                "`{command}` ({tool}, defined on the {}) in skill/cli/reviewed.txt",
                if on_tab { "tab" } else { "context" }
            );
        }
        checked += 1;
    }
    assert!(checked > 80, "{checked}");
}

#[test]
fn the_design_table_is_the_policys() {
    let design =
        fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/DESIGN.md")).unwrap();
    let mut listed = BTreeMap::new();
    for line in design.lines() {
        let Some(row) = line.strip_prefix("| ") else {
            continue;
        };
        let cells: Vec<&str> = row.split(" | ").collect();
        let label = cells[0];
        let kind = if label.starts_with("page, action") {
            "action"
        } else if label.starts_with("page, read") {
            "read"
        } else if label.starts_with("tabs (") {
            "tabs"
        } else if label.starts_with("context (") {
            "context"
        } else if label.starts_with("session (") {
            "session"
        } else {
            continue;
        };
        for command in cells[1].trim_end_matches(" |").split(", ") {
            assert!(
                listed.insert(command.trim().to_string(), kind).is_none(),
                "{command} twice"
            );
        }
    }
    for command in my_chrome::policy::forwarded_commands() {
        let expected = match scope_of(command) {
            Scope::Page if may_open_tabs(command) => "action",
            Scope::Page => "read",
            Scope::Tabs => "tabs",
            Scope::Context => "context",
            Scope::Session => "session",
            Scope::None => continue,
        };
        assert_eq!(
            listed.remove(command),
            Some(expected),
            "`{command}` in DESIGN.md's scope table"
        );
    }
    assert!(listed.is_empty(), "not forwarded: {listed:?}");
}
