//! One reading of every forwarded line (docs/DESIGN.md, "One reading"):
//! every decision my-chrome takes about a line — the command, its
//! arguments, the tab it names and the label it gives, the output mode
//! the daemon will answer in, the files it names, the browser-wide state
//! it starts or ends — is the one the pinned client's own `minimist.js`
//! makes of the same words, for every spelling minimist accepts: values
//! after `=` and as separate words, booleans given values, negations,
//! repeats, `--`, one-character options, options after arguments. A line
//! my-chrome cannot read as one decision is refused, and runs nothing.

mod common;

use std::path::Path;

use common::minimist_js::Reference;
use my_chrome::daemon::request::{self, Mode, Plan};
use my_chrome::pinned_commands;
use my_chrome::policy::holds::{self, HoldChange, HoldKind};
use my_chrome::policy::line::Line;
use my_chrome::policy::tabs::TabRef;
use serde_json::Value;

/// What is decided about a line.
#[derive(Debug, PartialEq)]
struct Decisions {
    command: Option<String>,
    arguments: Vec<String>,
    tab: Option<TabRef>,
    label: Option<String>,
    /// `None`: the client itself refuses the line (an unknown option, too
    /// many arguments) or answers it alone: nothing is sent.
    mode: Option<Mode>,
    files: Vec<String>,
    hold: Option<HoldChange>,
}

/// my-chrome's decisions, or `None` when it refuses the line.
fn ours(words: &[String]) -> Option<Decisions> {
    let line = Line::read(words, "mychrome").ok()?;
    let mode = match request::plan(line.parsed().clone(), Path::new("/rt")) {
        Plan::Run(request) => Some(request.mode()),
        _ => None,
    };
    let arguments = (1..)
        .map_while(|n| line.argument(n))
        .map(String::from)
        .collect();
    Some(Decisions {
        command: line.command().map(String::from),
        arguments,
        tab: line.tab.clone(),
        label: line.label.clone(),
        mode,
        files: line
            .files()
            .ok()?
            .into_iter()
            .map(|file| file.path)
            .collect(),
        hold: holds::change(&line),
    })
}

/// JavaScript's truthiness.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => false,
        Value::String(s) => !s.is_empty(),
        Value::Number(n) => n.as_f64() != Some(0.0),
        _ => true,
    }
}

fn texts(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(values) => values.iter().flat_map(texts).collect(),
        _ => Vec::new(),
    }
}

/// The decisions read from minimist.js's object, as the client and the
/// daemon use it: `_` is the command and its arguments, the client sends
/// `json` and `raw` (forced for the commands help.json marks raw), the
/// daemon reads the command's file options and arguments, and
/// `unroute`'s pattern and `network-state-set`'s state by JavaScript's
/// rules. `tab` and `label` are my-chrome's own options, read from the
/// same object.
fn theirs(js: &Value, mode: Option<Mode>) -> Decisions {
    let positional = texts(&js["_"]);
    let command = positional.first().filter(|c| !c.is_empty()).cloned();
    let entry = command.as_deref().and_then(pinned_commands::help_entry);
    let json = truthy(&js["json"]);
    let raw = truthy(&js["raw"]) || entry.as_ref().is_some_and(|e| e.raw);
    let read_mode = if json {
        Mode::Json
    } else if raw {
        Mode::Raw
    } else {
        Mode::Text
    };
    let mut files = Vec::new();
    if let Some(table) = command.as_deref().and_then(pinned_commands::find) {
        for flag in &table.file_flags {
            files.extend(texts(&js[*flag]));
        }
        for at in &table.file_args {
            files.extend(positional.get(at + 1).cloned());
        }
        if let Some(from) = table.file_rest {
            files.extend(positional.iter().skip(from + 1).cloned());
        }
    }
    let argument = positional.get(1).cloned();
    let hold = match (command.as_deref(), argument.as_deref()) {
        (Some("tracing-start"), _) => Some(HoldChange::Starts(HoldKind::Tracing)),
        (Some("tracing-stop"), _) => Some(HoldChange::Ends(HoldKind::Tracing)),
        (Some("route"), _) => Some(HoldChange::Starts(HoldKind::Routes)),
        // The daemon: `if (params.pattern)`, JavaScript's truthiness.
        (Some("unroute"), pattern) if pattern.is_some_and(|p| !p.is_empty()) => None,
        (Some("unroute"), _) => Some(HoldChange::Ends(HoldKind::Routes)),
        (Some("network-state-set"), Some("online")) => Some(HoldChange::Ends(HoldKind::Network)),
        (Some("network-state-set"), _) => Some(HoldChange::Starts(HoldKind::Network)),
        _ => None,
    };
    Decisions {
        command,
        arguments: positional.iter().skip(1).cloned().collect(),
        tab: js["tab"].as_str().map(|t| TabRef::parse(t).unwrap()),
        label: js["label"].as_str().map(String::from),
        // What is sent at all is the request builder's to say (proven
        // byte for byte against the pinned client by tests/native.rs);
        // the mode of what is sent is read here.
        mode: mode.map(|_| read_mode),
        files,
        hold,
    }
}

/// Every spelling of the options that matter, each put after the
/// command, at the end, and after `--` (where it is an argument).
fn corpus() -> Vec<Vec<String>> {
    let commands: &[&[&str]] = &[
        &["snapshot"],
        &["eval", "1"],
        &["click", "e1"],
        &["goto", "https://a.test/"],
        &["unroute"],
        &["unroute", "**/x"],
        &["route", "**/x"],
        &["network-state-set", "offline"],
        &["network-state-set", "online"],
        &["tracing-start"],
        &["tracing-stop"],
        &["tab-new", "https://a.test/"],
        &["tab-select", "1"],
        &["tab-close"],
        &["tab-list"],
        &["screenshot"],
        &["state-save", "/tmp/s.json"],
        &["upload", "/tmp/a", "/tmp/b"],
        &["cookie-list"],
    ];
    let spellings: &[&[&str]] = &[
        &[],
        &["--json"],
        &["--json", "false"],
        &["--json", "true"],
        &["--no-json"],
        &["--raw"],
        &["--raw", "false"],
        &["--no-raw"],
        &["--json", "--no-json"],
        &["--no-json", "--json"],
        &["--raw", "--json", "false"],
        &["--tab", "t3"],
        &["--tab=t3"],
        &["--tab", "0"],
        &["--tab=cart"],
        &["--tab", "t3", "--tab", "t4"],
        &["--no-tab"],
        &["--tab"],
        &["--tab="],
        &["--label", "x"],
        &["--label=y"],
        &["--filename", "/tmp/o.png"],
        &["--filename=/tmp/o.png"],
        &["--filename", "/tmp/a", "--filename", "/tmp/b"],
        &["--filename"],
        &["--no-filename"],
        &["-s=mychrome"],
        &["-s", "mychrome"],
        &["--session=mychrome"],
        &["--_", "-1"],
        &["--_=online"],
        &["--_"],
        &["-x", "5"],
        &["-x5"],
        &["-1"],
        &["--depth", "2"],
        &["--full-page", "true"],
        &["--full-page", "x"],
    ];
    let mut lines = Vec::new();
    for command in commands {
        for spelling in spellings {
            let after_command: Vec<&str> = command[..1]
                .iter()
                .chain(spelling.iter())
                .chain(command[1..].iter())
                .copied()
                .collect();
            let at_end: Vec<&str> = command.iter().chain(spelling.iter()).copied().collect();
            let before: Vec<&str> = spelling.iter().chain(command.iter()).copied().collect();
            let after_dashes: Vec<&str> = command
                .iter()
                .copied()
                .chain(["--"])
                .chain(spelling.iter().copied())
                .collect();
            for line in [after_command, at_end, before, after_dashes] {
                lines.push(line.iter().map(|w| w.to_string()).collect());
            }
        }
    }
    lines
}

#[test]
fn every_decision_is_the_one_minimist_js_reads_from_the_same_words() {
    let mut reference = Reference::start();
    let (mut compared, mut refused) = (0, 0);
    for words in corpus() {
        let Some(ours) = ours(&words) else {
            refused += 1;
            continue;
        };
        let js: Value =
            serde_json::from_str(&reference.parse(&words).unwrap_or_else(|| {
                panic!("{words:?}: my-chrome read a line minimist.js throws on")
            }))
            .unwrap();
        let theirs = theirs(&js, ours.mode);
        assert_eq!(ours, theirs, "{words:?}: minimist.js read {js}");
        compared += 1;
    }
    // Most of the corpus is read (a refused line decides nothing).
    assert!(
        compared > 2 * refused,
        "{compared} lines compared, {refused} refused"
    );
}

#[test]
fn a_mode_spelled_any_way_is_the_mode_the_daemon_answers_in() {
    // The reading that used to differ: `--json false` sends text (whose
    // reply lists every tab), `--raw true` before the command is raw.
    for (line, mode) in [
        (&["snapshot", "--json", "false"][..], Mode::Text),
        (&["--json", "false", "snapshot"], Mode::Text),
        (&["snapshot", "--no-json"], Mode::Text),
        (&["--raw", "true", "snapshot"], Mode::Raw),
        (&["snapshot", "--raw", "--json"], Mode::Json),
        (&["snapshot", "--", "--json"], Mode::Text),
        (&["cookie-list"], Mode::Raw),
    ] {
        let words: Vec<String> = line.iter().map(|w| w.to_string()).collect();
        assert_eq!(ours(&words).unwrap().mode, Some(mode), "{line:?}");
    }
}
