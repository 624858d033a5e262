//! The forwarding policy, in one table: every line below is refused by
//! `my_chrome::policy::refusal` with the variant it names, and by the binary
//! with exit 2 and that refusal's words, before any session, lease or helper
//! code is touched. The lines that pass are passed by both.

mod common;

use std::fs;

use common::Sandbox;
use my_chrome::policy::{Refusal, blocked_commands, refusal};

const SESSION: &str = "mychrome";
const EXTENSION: &str = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/status.html";

/// The variant's name: a new variant must be added here (the match is
/// exhaustive) and to the table.
fn variant(refusal: &Refusal) -> &'static str {
    match refusal {
        Refusal::TokenInArguments => "TokenInArguments",
        Refusal::OtherSession { .. } => "OtherSession",
        Refusal::OptionBeforeCommand { .. } => "OptionBeforeCommand",
        Refusal::Blocked { .. } => "Blocked",
        Refusal::Disconnect(_) => "Disconnect",
        Refusal::Unknown { .. } => "Unknown",
        Refusal::Undecided(_) => "Undecided",
        Refusal::Scheme { .. } => "Scheme",
        Refusal::Unreadable(_) => "Unreadable",
        Refusal::NoFile { .. } => "NoFile",
        Refusal::File { .. } => "File",
        Refusal::ObjectKey { .. } => "ObjectKey",
        Refusal::TabArg(_) => "TabArg",
    }
}

/// Every refused line, with the variant that refuses it.
fn refused_lines() -> Vec<(Vec<String>, &'static str)> {
    let mut table: Vec<(Vec<String>, &str)> = Vec::new();
    let mut add = |line: &[&str], variant: &'static str| {
        table.push((line.iter().map(|s| s.to_string()).collect(), variant));
    };
    for command in blocked_commands() {
        add(&[command], "Blocked");
        add(&["--json", command], "Blocked");
    }
    add(&["--raw", "--json", "run-code", "x"], "Blocked");
    add(&["-s=mychrome", "--json", "kill-all"], "Blocked");
    add(&["--json", "open", "https://example.test/"], "Blocked");
    for line in [
        &["-s=other", "tab-list"][..],
        &["-sother", "tab-list"],
        &["--session", "other", "tab-list"],
        &["tab-list", "-s", "x"],
        &["tab-list", "--no-s"],
        // minimist: `-s -m -y …`, so `s` is true (and `h` asks for help).
        &["-smychrome", "tab-list"],
        &["--no-session", "tab-list"],
    ] {
        add(line, "OtherSession");
    }
    add(&["--x", "y", "open"], "OptionBeforeCommand");
    add(&["--json", "--agent=a", "tab-list"], "OptionBeforeCommand");
    add(&["config-print"], "Unknown");
    add(&["tray"], "Unknown");
    add(&["--json", "tray"], "Unknown");
    add(&["snapshto"], "Unknown");
    add(&["--json", "close"], "Disconnect");
    for line in [
        &["snapshot", "--toString", "x"][..],
        &["click", "e1", "--no-constructor"],
        &["eval", "1", "--valueOf=2"],
        &["--json", "eval", "1", "--__proto__", "3"],
    ] {
        add(line, "ObjectKey");
    }
    add(&["--raw", "detach"], "Disconnect");
    // my-chrome's own options, read as minimist reads them.
    add(&["click", "e1", "--tab", "t1", "--tab=t2"], "TabArg");
    add(&["click", "e1", "--tab"], "TabArg");
    add(&["click", "e1", "--no-tab"], "TabArg");
    add(&["snapshot", "--label", "x"], "TabArg");
    // A line the client's own parser throws on, or an argument that is no
    // word, is never sent.
    add(&["snapshot", "--json=true"], "Unreadable");
    add(&["unroute", "--no-_"], "Unreadable");
    for address in [
        EXTENSION,
        "CHROME-EXTENSION://mmlmfjhmonkocbjadbfplnigmagldckm/status.html",
        " \u{1}chrome-extension://x/status.html",
        "chrome-\textension://x/status.html",
        "chrome://settings",
        "view-source:chrome-extension://x/status.html",
        "blob:chrome-extension://x/y",
        "javascript:alert(1)",
        "devtools://devtools/bundled/inspector.html",
        "about:settings",
        "javascript:0/alert(1)",
        "localhost:3000/page",
        "file:///tmp/page.html",
        "data:text/html,<p>hi</p>",
    ] {
        add(&["goto", address], "Scheme");
        add(&["tab-new", address], "Scheme");
    }
    add(&["--json", "goto", EXTENSION], "Scheme");
    add(&["goto", "--", EXTENSION], "Scheme");
    let option = format!("--x={EXTENSION}");
    add(&["goto", &option], "Scheme");
    table
}

/// Lines that pass the policy (what the daemon then does is another test's).
const PASSING: [&[&str]; 14] = [
    &["-s=mychrome", "tab-list"],
    &["-s", "mychrome", "tab-list"],
    &["--json", "tab-list"],
    &["list"],
    &["--raw", "eval", "1"],
    &["goto", "https://example.test/"],
    &["goto", "https://example.test/a?b=chrome-extension://x"],
    &["goto", "http://127.0.0.1:8080/"],
    &["goto", "HTTPS://example.test/"],
    &["goto", "example.test"],
    &["goto", "about:blank"],
    &["tab-new"],
    // Other commands may mention such addresses (typed text, say).
    &["type", EXTENSION],
    &["goto", "example.test/path?q=chrome-extension://x"],
];

#[test]
fn the_policy_refuses_each_line_with_its_rule() {
    let token = common::fresh_token();
    let pasted = refusal(&["fill".to_string(), "e1".into(), token.clone()], SESSION).unwrap();
    assert_eq!(variant(&pasted), "TokenInArguments");
    assert!(!pasted.to_string().contains(&token));
    for (line, expected) in refused_lines() {
        let found = refusal(&line, SESSION).unwrap_or_else(|| panic!("{line:?} passed"));
        assert_eq!(variant(&found), expected, "{line:?}: {found}");
    }
    for line in PASSING {
        let line: Vec<String> = line.iter().map(|s| s.to_string()).collect();
        assert_eq!(refusal(&line, SESSION), None, "{line:?}");
    }
}

#[test]
fn the_refused_commands_are_the_ones_docs_design_names() {
    // DESIGN.md invariant 8: "never the refused ones (`open`, raw `attach`,
    // …; `close`/`detach` mean `disconnect`)": every name in code there.
    let design =
        fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/DESIGN.md")).unwrap();
    let start = design
        .find("never the refused ones (")
        .expect("the refused list");
    let list = &design[start..];
    let list = &list[..list.find("`close`/`detach`").expect("its end")];
    let mut named: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
    let mut blocked: Vec<&str> = blocked_commands().collect();
    named.sort_unstable();
    blocked.sort_unstable();
    assert_eq!(named, blocked, "DESIGN.md invariant 8 and BLOCKED differ");
    // What the table above refuses and `safety-audit` lists.
    assert_eq!(
        blocked_commands().collect::<Vec<_>>(),
        [
            "open",
            "attach",
            "show",
            "install",
            "install-browser",
            "close-all",
            "kill-all",
            "delete-data",
            "run-code",
            "video-start",
            "state-load",
            "recording-start",
            "recording-stop",
        ]
    );
}

#[test]
fn what_each_refusal_says() {
    let say = |line: &[&str]| {
        let line: Vec<String> = line.iter().map(|s| s.to_string()).collect();
        refusal(&line, SESSION).unwrap().to_string()
    };
    assert!(say(&["open"]).contains("use `my-chrome goto <url>`"));
    assert!(say(&["snapshto"]).contains("did you mean `snapshot`?"));
    assert!(say(&["close"]).contains("is `my-chrome disconnect`"));
    assert!(say(&["--json", "--agent=a", "tab-list"]).contains("`--agent NAME` goes first"));
    let scheme = say(&["goto", EXTENSION]);
    assert!(scheme.contains("web pages only"), "{scheme}");
    assert!(
        !scheme.contains("status.html"),
        "the address is not echoed: {scheme}"
    );
    // A token-like run in what a refusal quotes is not shown (inside a
    // longer word, so that the line is not refused as a pasted token).
    let run = "A".repeat(43);
    for line in [
        vec![format!("x.{run}")],
        vec![format!("-s={run}!"), "tab-list".into()],
        vec!["--json".into(), format!("--{run}!"), "tab-list".into()],
        vec!["goto".into(), format!("x{run}:y")],
    ] {
        let found = refusal(&line, SESSION).expect("refused").to_string();
        assert!(!found.contains(&run), "{line:?}: {found}");
    }
    // The session options come off the line; ours is added back later.
    let line: Vec<String> = ["--session", "mychrome", "tab-list"]
        .map(String::from)
        .into();
    let read = my_chrome::policy::line::Line::read(&line, SESSION).unwrap();
    assert_eq!(read.words(), ["--", "tab-list"]);
}

#[test]
fn the_binary_refuses_the_same_lines_before_anything_else() {
    let sandbox = Sandbox::installed();
    for (line, _) in refused_lines() {
        let words: Vec<&str> = line.iter().map(String::as_str).collect();
        let said = refusal(&line, SESSION).unwrap().to_string();
        let run = sandbox.run(&words);
        run.expect(2, &said);
    }
    assert!(
        !sandbox.runtime.join("lease.json").exists(),
        "a refused command took no lease"
    );
}
