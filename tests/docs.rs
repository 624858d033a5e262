//! The documents say what the code does: the skill's front matter is
//! valid, every `my-chrome …` command they name exists, README's exit-code
//! table is the code's (numbers, names and meanings) and so is its table
//! of variables (ranges, defaults, what each does), the installer leaves
//! HOME as it found it, DESIGN.md's forwarded list (its scope table) is
//! the policy's, the layering rules are written once, DESIGN's table names
//! a real test for every invariant, and the stand-in's PROTOCOL.md names
//! every setting and fault it has, and TESTING.md's table of the
//! mutation-tested modules is what scripts/mutants.sh runs.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(name: &str) -> String {
    fs::read_to_string(Path::new(ROOT).join(name)).unwrap()
}

#[test]
fn the_skill_front_matter_follows_the_specification() {
    let skill = read("skill/SKILL.md");
    let mut parts = skill.splitn(3, "---\n");
    assert_eq!(parts.next(), Some(""), "front matter first");
    let front = parts.next().expect("front matter");
    let field = |key: &str| {
        front
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}: ")))
            .unwrap_or_else(|| panic!("no {key}"))
            .to_string()
    };
    let name = field("name");
    assert_eq!(name, "my-chrome", "the directory installers create");
    assert!(name.len() <= 64 && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'));
    let description = field("description");
    assert!(
        !description.is_empty() && description.len() <= 1024,
        "{}",
        description.len()
    );
    assert!(
        skill.lines().count() < 250,
        "short enough to read every time"
    );
    assert!(Path::new(ROOT).join("skill/LICENSE.txt").exists());
    assert!(read("skill/agents/openai.yaml").contains("display_name"));
}

/// Every `my-chrome …` the documents name is a wrapper command (or alias,
/// or `token` subcommand) or one of the pinned CLI's documented commands:
/// exactly, not a word that happens to stand somewhere in the help.
#[test]
fn every_command_the_documents_name_exists() {
    let mut known: BTreeSet<String> = my_chrome::cli::wrapper_commands().into_iter().collect();
    known.extend(
        my_chrome::pinned_commands::table()
            .iter()
            .map(|c| c.name.to_string()),
    );
    // Options that may come first: ours (`--agent`, help, version) and the
    // pinned client's booleans (`--json`, `--raw`, …).
    known.extend(my_chrome::cli::wrapper_options());
    known.extend(
        my_chrome::pinned_commands::booleans()
            .iter()
            .map(|b| format!("--{b}")),
    );
    let mut named = BTreeSet::new();
    for doc in [
        "skill/SKILL.md",
        "README.md",
        "SECURITY.md",
        "AGENTS.md",
        "docs/DESIGN.md",
    ] {
        let text = read(doc);
        for piece in text.split("`my-chrome ").skip(1) {
            let words: Vec<String> = piece
                .split(['`', ' ', '\n'])
                .take(2)
                .map(|w| {
                    w.chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                        .collect()
                })
                .collect();
            let Some(word) = words.first().filter(|w| !w.is_empty()) else {
                continue;
            };
            let pair = words.get(1).map(|second| format!("{word} {second}"));
            named.insert((doc, word.clone(), pair));
        }
    }
    assert!(named.len() > 10, "{named:?}");
    for (doc, word, pair) in named {
        assert!(
            known.contains(&word),
            "{doc} names `my-chrome {word}`, which is no command of my-chrome's"
        );
        // `my-chrome token store`: the subcommand must exist too.
        if word == "token" {
            let pair = pair.unwrap_or_default();
            assert!(known.contains(&pair), "{doc} names `my-chrome {pair}`");
        }
    }
}

#[test]
fn readme_exit_codes_are_the_codes_of_the_binary() {
    use my_chrome::exit::Exit;
    let readme = read("README.md");
    let table = &readme[readme.find("## Exit codes").unwrap()..];
    let listed: BTreeSet<String> = table
        .lines()
        .skip(4)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('|').nth(1).unwrap().trim().to_string())
        .collect();
    let mut ours: BTreeSet<String> = Exit::DOCUMENTED
        .iter()
        .map(|e| e.code().to_string())
        .collect();
    ours.extend(["0".to_string(), "128+N".to_string()]);
    assert_eq!(listed, ours);
}

/// A document's exit-code table, the rows below `heading`'s table header:
/// (code, name, meaning) each.
fn exit_rows(doc: &str, heading: &str) -> Vec<(String, String, String)> {
    let Some(at) = doc.find(heading) else {
        return Vec::new();
    };
    doc[at..]
        .lines()
        .skip_while(|l| !l.starts_with("| code "))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            let cell = |n: usize| cells.get(n).copied().unwrap_or_default().to_string();
            (cell(0), cell(1).trim_matches('`').to_string(), cell(2))
        })
        .collect()
}

/// Where a document's exit-code table says something else than the
/// code's (`exit::table()`): a code missing or extra, another name, another
/// meaning.
fn exit_table_faults(doc: &str, heading: &str) -> Vec<String> {
    let shown = exit_rows(doc, heading);
    let table = my_chrome::exit::table();
    let mut faults = Vec::new();
    for row in &table {
        match shown.iter().find(|(code, ..)| *code == row.code) {
            None => faults.push(format!("{}: not shown", row.code)),
            Some((_, name, _)) if name != row.name => {
                faults.push(format!("{}: named {name}, not {}", row.code, row.name))
            }
            Some((.., meaning)) if meaning != row.meaning => faults.push(format!(
                "{}: means {meaning:?}, not {:?}",
                row.code, row.meaning
            )),
            Some(_) => {}
        }
    }
    for (code, ..) in &shown {
        if !table.iter().any(|row| row.code == *code) {
            faults.push(format!("{code}: no such code"));
        }
    }
    faults
}

/// README shows `exit::table()` row for row, meanings included; DESIGN
/// links it and keeps no table of its own.
#[test]
fn readme_shows_the_exit_code_table_of_the_code() {
    let readme = read("README.md");
    let faults = exit_table_faults(&readme, "## Exit codes");
    let expected: Vec<String> = my_chrome::exit::table()
        .iter()
        .map(|r| format!("| {} | `{}` | {} |", r.code, r.name, r.meaning))
        .collect();
    assert!(
        faults.is_empty(),
        "README, \"Exit codes\":\n{}\n\nthe table is:\n{}",
        faults.join("\n"),
        expected.join("\n")
    );
    let design = read("docs/DESIGN.md");
    assert!(
        design.contains("(../README.md#exit-codes)"),
        "DESIGN links it"
    );
    assert!(
        exit_rows(&design, "## Exit codes").is_empty(),
        "DESIGN keeps no second exit-code table"
    );
}

#[test]
fn the_exit_table_check_sees_a_changed_meaning_a_wrong_name_and_a_missing_code() {
    let table = my_chrome::exit::table();
    let mut doc = String::from("## Exit codes\n\n| code | name | meaning |\n| --- | --- | --- |\n");
    for row in &table {
        let (name, meaning) = match row.code.as_str() {
            "4" => (row.name, "no owned session"),
            "7" => ("Usage", row.meaning),
            "9" => continue,
            _ => (row.name, row.meaning),
        };
        doc.push_str(&format!("| {} | `{name}` | {meaning} |\n", row.code));
    }
    doc.push_str("| 10 | `Other` | planted |\n");
    let faults = exit_table_faults(&doc, "## Exit codes");
    assert_eq!(faults.len(), 4, "{faults:?}");
    assert!(
        faults[0].starts_with("4: means \"no owned session\""),
        "{faults:?}"
    );
    assert_eq!(faults[1], "7: named Usage, not Busy");
    assert_eq!(faults[2], "9: not shown");
    assert_eq!(faults[3], "10: no such code");
    // The table as the code has it passes.
    let whole: String = table
        .iter()
        .map(|r| format!("| {} | `{}` | {} |\n", r.code, r.name, r.meaning))
        .collect();
    let doc = format!("## Exit codes\n\n| code | name | meaning |\n| --- | --- | --- |\n{whole}");
    assert!(exit_table_faults(&doc, "## Exit codes").is_empty());
}

/// `{a,b}` in a path written `src/x/{a,b}.rs` read as its paths.
fn expand_braces(path: &str) -> Vec<String> {
    match (path.find('{'), path.find('}')) {
        (Some(open), Some(close)) if open < close => path[open + 1..close]
            .split(',')
            .flat_map(|part| {
                expand_braces(&format!("{}{part}{}", &path[..open], &path[close + 1..]))
            })
            .collect(),
        _ => vec![path.to_string()],
    }
}

/// The module table of docs/TESTING.md ("The modules, and the tests each
/// mutant runs"): each module's files (braces expanded) and the tests it
/// names, as `scripts/mutants.sh --list-modules` says them (`--lib`,
/// `--test x`). What stands in brackets is a remark.
fn mutants_rows(doc: &str) -> Vec<(String, BTreeSet<String>, Vec<String>)> {
    let ticked = |cell: &str| -> Vec<String> {
        let bare: String = cell.split('(').next().unwrap_or_default().to_string();
        bare.split('`')
            .skip(1)
            .step_by(2)
            .map(String::from)
            .collect()
    };
    doc.lines()
        .skip_while(|l| !l.starts_with("| module | what it keeps |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            let cell = |n: usize| cells.get(n).copied().unwrap_or_default();
            let files = cell(2)
                .split(", ")
                .flat_map(ticked)
                .flat_map(|f| expand_braces(&f))
                .collect();
            let tests = ticked(&cell(3).replace(", ", " "))
                .into_iter()
                .map(|t| {
                    if t.starts_with('-') {
                        t
                    } else {
                        format!("--test {t}")
                    }
                })
                .collect();
            (cell(0).to_string(), files, tests)
        })
        .collect()
}

/// Where the module table says something else than `mutants.sh
/// --list-modules`' lines (`module files… tests: …`).
fn mutants_table_faults(doc: &str, listed: &str) -> Vec<String> {
    let shown = mutants_rows(doc);
    let mut faults = Vec::new();
    let mut names = Vec::new();
    for line in listed.lines() {
        let (head, tests) = line.split_once("tests:").unwrap_or((line, ""));
        let mut words = head.split_whitespace();
        let name = words.next().unwrap_or_default().to_string();
        let files: BTreeSet<String> = words.map(String::from).collect();
        let tests: Vec<&str> = tests.split_whitespace().collect();
        let tests: Vec<String> = tests
            .iter()
            .enumerate()
            .filter(|(_, w)| **w != "--test")
            .map(|(n, w)| match n.checked_sub(1).map(|p| tests[p]) {
                Some("--test") => format!("--test {w}"),
                _ => w.to_string(),
            })
            .collect();
        match shown.iter().find(|(n, ..)| *n == name) {
            None => faults.push(format!("{name}: no row")),
            Some((_, f, _)) if *f != files => {
                faults.push(format!("{name}: files {f:?}, not {files:?}"))
            }
            Some((.., t)) if *t != tests => {
                faults.push(format!("{name}: tests {t:?}, not {tests:?}"))
            }
            Some(_) => {}
        }
        names.push(name);
    }
    for (name, ..) in &shown {
        if !names.contains(name) {
            faults.push(format!("{name}: no such module"));
        }
    }
    faults
}

/// docs/TESTING.md's table of the mutation-tested modules is what
/// scripts/mutants.sh runs: each module, its files, its tests.
#[test]
fn the_mutants_table_is_what_the_script_runs() {
    let out = Command::new(Path::new(ROOT).join("scripts/mutants.sh"))
        .arg("--list-modules")
        .output()
        .unwrap();
    assert!(out.status.success());
    let listed = String::from_utf8(out.stdout).unwrap();
    assert!(listed.lines().count() > 10, "{listed}");
    let faults = mutants_table_faults(&read("docs/TESTING.md"), &listed);
    assert!(faults.is_empty(), "docs/TESTING.md:\n{}", faults.join("\n"));
}

#[test]
fn the_mutants_table_check_sees_other_files_other_tests_and_a_missing_module() {
    let listed = "a   src/a/mod.rs src/a/b.rs   tests: --lib --test one\n\
                  c   src/c.rs   tests: --lib\n\
                  d   src/d.rs   tests: --lib\n";
    let table = "| module | what it keeps | files | tests |\n| --- | --- | --- | --- |\n";
    let good = format!(
        "{table}| a | x | `src/a/{{mod,b}}.rs` | `--lib`, `one` (a remark: `two`) |\n\
         | c | x | `src/c.rs` | `--lib` |\n| d | x | `src/d.rs` | `--lib` |\n"
    );
    assert!(mutants_table_faults(&good, listed).is_empty());
    let planted = format!(
        "{table}| a | x | `src/a/mod.rs` | `--lib`, `one` |\n\
         | c | x | `src/c.rs` | `--lib`, `two` |\n| e | x | `src/e.rs` | `--lib` |\n"
    );
    let faults = mutants_table_faults(&planted, listed);
    assert_eq!(faults.len(), 4, "{faults:?}");
    assert!(faults[0].starts_with("a: files"), "{faults:?}");
    assert!(faults[1].starts_with("c: tests"), "{faults:?}");
    assert_eq!(faults[2], "d: no row");
    assert_eq!(faults[3], "e: no such module");
}

/// A variable's row as README shows it: its names, range, default and
/// what it does, from `config::VARIABLES`.
fn variable_row(v: &my_chrome::config::Variable) -> String {
    let names: Vec<String> = v.names.iter().map(|n| format!("`{n}`")).collect();
    format!(
        "| {} | {} | {} | {} |",
        names.join(", "),
        v.range(),
        v.default(),
        v.what
    )
}

/// Where README's table of the call's own variables (the rows below its
/// `| variable |` header) says something else than `rows`, the code's:
/// a row missing, changed or extra, named by its first cell.
fn variable_table_faults(readme: &str, rows: &[String]) -> Vec<String> {
    let Some(at) = readme.find("\n| variable | range | default | meaning |\n") else {
        return vec!["no table \"| variable | range | default | meaning |\"".into()];
    };
    let shown: Vec<&str> = readme[at + 1..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let first = |row: &str| {
        let cells = row.trim_start_matches("| ");
        cells.split(" | ").next().unwrap_or_default().to_string()
    };
    let mut faults = Vec::new();
    for row in rows {
        match shown.iter().find(|s| first(s) == first(row)) {
            None => faults.push(format!("{}: not shown", first(row))),
            Some(s) if s != row => faults.push(format!("{}: shows {s:?}, not {row:?}", first(row))),
            Some(_) => {}
        }
    }
    for s in &shown {
        if !rows.iter().any(|row| first(row) == first(s)) {
            faults.push(format!("{}: no such variable", first(s)));
        }
    }
    faults
}

/// README's variable table is `config::VARIABLES`, row for row: names,
/// ranges and defaults (made from the very bounds the code reads them
/// with) and what each does; and every `MY_CHROME_…` variable config.rs
/// reads has its row (the retired ones, now the user's settings, aside).
#[test]
fn readme_shows_the_variable_table_of_the_code() {
    let rows: Vec<String> = my_chrome::config::VARIABLES
        .iter()
        .map(variable_row)
        .collect();
    let faults = variable_table_faults(&read("README.md"), &rows);
    assert!(
        faults.is_empty(),
        "README, \"The call's own variables\":\n{}\n\nthe table is:\n{}",
        faults.join("\n"),
        rows.join("\n")
    );
    let config = read("src/config.rs");
    let retired = &config[config.find("const USER_SETTINGS").unwrap()..];
    let retired = &retired[..retired.find("];").unwrap()];
    let production = &config[..config.find("#[cfg(test)]").unwrap()];
    for piece in production.split("\"MY_CHROME_").skip(1) {
        let name: String = piece
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        let name = format!("MY_CHROME_{name}");
        let listed = my_chrome::config::VARIABLES
            .iter()
            .any(|v| v.names.contains(&name.as_str()));
        assert!(
            listed || retired.contains(&format!("\"{name}\"")),
            "config.rs reads {name}, which config::VARIABLES does not list"
        );
    }
}

#[test]
fn the_variable_table_check_sees_a_changed_range_a_missing_row_and_an_extra_one() {
    let rows = [
        "| `A_SECS` | 1–600 s | `60` | a bound |".to_string(),
        "| `B` | absolute path | — | a path |".to_string(),
        "| `C` | — | — | a word |".to_string(),
    ];
    let readme = "## Configuration\n\n| variable | range | default | meaning |\n| --- | --- | --- | --- |\n\
                  | `A_SECS` | 1–3600 s | `60` | a bound |\n| `C` | — | — | a word |\n\
                  | `D` | — | — | planted |\n\nAfter.\n";
    assert_eq!(
        variable_table_faults(readme, &rows),
        [
            "`A_SECS`: shows \"| `A_SECS` | 1–3600 s | `60` | a bound |\", not \"| `A_SECS` | 1–600 s | `60` | a bound |\"",
            "`B`: not shown",
            "`D`: no such variable",
        ]
    );
    let whole = format!(
        "| variable | range | default | meaning |\n| --- | --- | --- | --- |\n{}\n",
        rows.join("\n")
    );
    assert!(variable_table_faults(&format!("\n{whole}"), &rows).is_empty());
}

#[test]
fn install_and_uninstall_leave_home_as_it_was() {
    let home = tempfile::tempdir().unwrap();
    let snapshot = |dir: &Path| -> Vec<String> {
        let out = Command::new("/usr/bin/find").arg(dir).output().unwrap();
        let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(String::from)
            .collect();
        lines.sort();
        lines
    };
    // The runtime's parent, as in a lived-in home: uninstall leaves it; and
    // a folder of the user's that install.sh uses but did not make.
    fs::create_dir(home.path().join(".cache")).unwrap();
    fs::create_dir(home.path().join(".claude")).unwrap();
    // The hosts' own configuration, as a user has it: install.sh adds its
    // lines to Claude Code's settings and leaves Codex's own rules be.
    let settings = home.path().join(".claude/settings.json");
    let users_settings = "{\n  \"model\": \"opus\",\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(git status:*)\"\n    ]\n  },\n  \"sandbox\": {\n    \"enabled\": true\n  }\n}\n";
    fs::write(&settings, users_settings).unwrap();
    let rules = home.path().join(".codex/rules");
    fs::create_dir_all(&rules).unwrap();
    fs::write(
        rules.join("default.rules"),
        "prefix_rule(pattern = [\"git\"])\n",
    )
    .unwrap();
    let before = snapshot(home.path());
    let script = Path::new(ROOT).join("scripts/install.sh");
    let run = |args: &[&str]| {
        // A cleared environment: install.sh --uninstall runs `my-chrome
        // uninstall`, which must find only this HOME's (empty) runtime.
        let status = Command::new(&script)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", home.path())
            .env(
                "RUSTUP_HOME",
                std::env::var_os("RUSTUP_HOME").unwrap_or_else(|| {
                    Path::new(&std::env::var_os("HOME").unwrap())
                        .join(".rustup")
                        .into()
                }),
            )
            .env(
                "CARGO_HOME",
                std::env::var_os("CARGO_HOME").unwrap_or_else(|| {
                    Path::new(&std::env::var_os("HOME").unwrap())
                        .join(".cargo")
                        .into()
                }),
            )
            .status()
            .unwrap();
        assert!(status.success(), "install.sh {args:?}");
    };
    let prefix = home.path().join("opt");
    let prefix = prefix.to_str().unwrap();
    let both = [
        "--prefix",
        prefix,
        "--agent",
        "claude-code",
        "--agent",
        "codex",
    ];
    run(&both);
    let skill = home.path().join(".claude/skills/my-chrome");
    assert!(skill.join("SKILL.md").exists());
    let binary = fs::read_to_string(skill.join("BINARY")).unwrap();
    assert_eq!(binary.trim(), format!("{prefix}/bin/my-chrome"));
    let added = fs::read_to_string(&settings).unwrap();
    // Again: nothing more is added.
    run(&both);
    assert_eq!(fs::read_to_string(&settings).unwrap(), added);
    let parsed: serde_json::Value = serde_json::from_str(&added).unwrap();
    assert_eq!(
        parsed["permissions"]["allow"],
        serde_json::json!([
            "Bash(git status:*)",
            format!("Bash({prefix}/bin/my-chrome:*)")
        ])
    );
    assert_eq!(parsed["model"], "opus");
    assert_eq!(parsed["sandbox"]["enabled"], true);
    let rule = fs::read_to_string(rules.join("my-chrome.rules")).unwrap();
    assert!(
        rule.contains(&format!(
            "prefix_rule(pattern = [\"{prefix}/bin/my-chrome\"], decision = \"allow\""
        )),
        "{rule}"
    );
    // The installed binary's setup: a sealed runtime in ~/.cache/my-chrome,
    // which --uninstall removes through `my-chrome uninstall`.
    let setup = Command::new(format!("{prefix}/bin/my-chrome"))
        .arg("setup")
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .status()
        .unwrap();
    assert!(setup.success());
    assert!(
        home.path()
            .join(".cache/my-chrome/cli/package.json")
            .exists()
    );
    // A record whose binary is not the prefix's: nothing is run or removed.
    let record = home.path().join(".local/share/my-chrome/installed");
    let installed = fs::read_to_string(&record).unwrap();
    let planted = home.path().join("proj/bin/my-chrome");
    fs::create_dir_all(planted.parent().unwrap()).unwrap();
    fs::write(&planted, "#!/bin/sh\ntouch \"$HOME/ran\"\n").unwrap();
    fs::set_permissions(
        &planted,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    fs::write(&record, format!("{}\n{installed}", planted.display())).unwrap();
    let refused = Command::new(&script)
        .args(["--prefix", prefix, "--uninstall"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("nothing was removed"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(planted.exists() && !home.path().join("ran").exists());
    fs::write(&record, installed).unwrap();
    fs::remove_dir_all(home.path().join("proj")).unwrap();
    run(&["--prefix", prefix, "--uninstall"]);
    assert_eq!(
        snapshot(home.path()),
        before,
        "uninstall leaves HOME as it was"
    );
    assert_eq!(fs::read_to_string(&settings).unwrap(), users_settings);
    assert_eq!(
        fs::read_to_string(rules.join("default.rules")).unwrap(),
        "prefix_rule(pattern = [\"git\"])\n"
    );
}

/// DESIGN.md's one list of the forwarded commands, its scope table
/// (`| scope | commands |`), is the policy's, command for command.
#[test]
fn the_forwarded_list_in_the_design_is_the_policys() {
    let design = read("docs/DESIGN.md");
    let start = design
        .find("\n| scope | commands |\n")
        .expect("the scope table");
    let mut named: Vec<&str> = design[start + 1..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .flat_map(|row| row.split(" | ").nth(1).unwrap_or_default().split(", "))
        .map(|c| c.trim().trim_end_matches(" |"))
        .collect();
    named.sort();
    let mut forwarded: Vec<&str> = my_chrome::policy::forwarded_commands().collect();
    forwarded.sort();
    assert_eq!(named, forwarded);
    assert_eq!(
        design.matches("tab-list, tab-new").count(),
        1,
        "the forwarded commands are listed once"
    );
    let version = my_chrome::helper::pin::Pin::shipped().version.clone();
    assert!(
        design.contains(&format!(
            "Forwarded (reviewed for @playwright/cli {version})"
        )),
        "the list names another pin than {version}"
    );
}

/// The security invariants' numbers and titles, as DESIGN.md lists them
/// (`1. **Chrome is never launched by us.** …`).
fn invariants(design: &str) -> Vec<(u32, String)> {
    let start = design
        .find("## Security invariants")
        .expect("the invariants");
    let list = &design[start..];
    let list = &list[..list[3..].find("\n## ").map_or(list.len(), |n| n + 3)];
    // A title may run over lines: read it whole, its lines joined.
    list.split("\n")
        .enumerate()
        .filter_map(|(at, line)| {
            let (number, rest) = line.split_once(". **")?;
            let number = number.parse().ok()?;
            let following = list.split("\n").skip(at + 1).map(str::trim);
            let whole: Vec<&str> = std::iter::once(rest).chain(following).collect();
            let whole = whole.join(" ");
            let title = whole.split_once("**")?.0.trim_end_matches(['.', ':']);
            Some((number, title.to_string()))
        })
        .collect()
}

/// What is wrong with DESIGN.md's table of the tests that prove each
/// invariant: an invariant without a row, a row for none, a title that is
/// not the invariant's, a test that is not a test in the file it names.
/// `source(path)` reads a file of the repository.
fn table_faults(design: &str, source: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut faults = Vec::new();
    let Some(at) = design.find("### Which tests prove each invariant") else {
        return vec!["no table \"Which tests prove each invariant\"".into()];
    };
    let rows: Vec<&str> = design[at..]
        .lines()
        .skip_while(|l| !l.starts_with("| invariant"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let listed = invariants(design);
    let mut seen = BTreeSet::new();
    for row in rows {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (Some(name), Some(tests)) = (cells.get(1), cells.get(2)) else {
            faults.push(format!("a row that is no row: {row}"));
            continue;
        };
        let Some((number, title)) = name.split_once(". ") else {
            faults.push(format!("a row without its invariant's number: {row}"));
            continue;
        };
        let number: u32 = number.parse().unwrap_or(0);
        match listed.iter().find(|(n, _)| *n == number) {
            Some((_, real)) if real == title => {}
            Some((_, real)) => faults.push(format!("{number}: {title:?} is not {real:?}")),
            None => faults.push(format!("{number}: no such invariant")),
        }
        seen.insert(number);
        let named: Vec<&str> = tests
            .split(", ")
            .map(|t| t.trim_matches('`'))
            .filter(|t| !t.is_empty())
            .collect();
        if named.is_empty() {
            faults.push(format!("{number}: no test named"));
        }
        for test in named {
            let Some((file, function)) = test.split_once("::") else {
                faults.push(format!("{number}: {test} is not file::test"));
                continue;
            };
            let is_test = source(file).is_some_and(|text| {
                let lines: Vec<&str> = text.lines().collect();
                lines.iter().enumerate().any(|(i, l)| {
                    // `#[test]` among the attributes and comments right
                    // above it.
                    l.trim_start().starts_with(&format!("fn {function}("))
                        && lines[..i]
                            .iter()
                            .rev()
                            .map(|a| a.trim())
                            .take_while(|a| a.starts_with("#[") || a.starts_with("//"))
                            .any(|a| a == "#[test]")
                })
            });
            if !is_test {
                faults.push(format!("{number}: {test} is no test"));
            }
        }
    }
    for (number, title) in listed {
        if !seen.contains(&number) {
            faults.push(format!("{number}. {title}: no row"));
        }
    }
    faults
}

#[test]
fn every_invariant_names_the_tests_that_prove_it_and_they_exist() {
    let design = read("docs/DESIGN.md");
    assert!(invariants(&design).len() >= 16, "{:?}", invariants(&design));
    let source = |path: &str| fs::read_to_string(Path::new(ROOT).join(path)).ok();
    let faults = table_faults(&design, &source);
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn the_table_check_sees_a_missing_row_a_wrong_title_and_a_test_that_is_not_one() {
    let design = "## Security invariants\n\n1. **One.** text\n2. **Two thing.** text\n\
                  3. **Three.** text\n\n## Next\n\n### Which tests prove each invariant\n\n\
                  | invariant | proved by |\n| --- | --- |\n\
                  | 1. One | `tests/a.rs::real` |\n\
                  | 2. Two things | `tests/a.rs::real`, `tests/a.rs::helper`, `tests/b.rs::x` |\n";
    let source = |path: &str| {
        (path == "tests/a.rs").then(|| "#[test]\nfn real() {}\n\nfn helper() {}\n".to_string())
    };
    assert_eq!(
        table_faults(design, &source),
        [
            "2: \"Two things\" is not \"Two thing\"",
            "2: tests/a.rs::helper is no test",
            "2: tests/b.rs::x is no test",
            "3. Three: no row",
        ]
    );
}

/// What the stand-in's source reads or accepts that its PROTOCOL.md does
/// not name in a code span: every `STANDIN_…` variable, and every word
/// `faults.rs` parses (`drop-after`, `shutdown`, …).
fn unnamed_in_protocol(sources: &[String], faults: &str, protocol: &str) -> Vec<String> {
    let mut wanted = BTreeSet::new();
    for source in sources {
        for piece in source.split("\"STANDIN_").skip(1) {
            let name: String = piece
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                .collect();
            wanted.insert(format!("STANDIN_{name}"));
        }
    }
    // The match arms of `Faults::parse`: `"drop-after" => …`, `"stall" if …`.
    for line in faults.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix('"')
            && let Some((name, after)) = rest.split_once('"')
            && (after.trim_start().starts_with("=>") || after.trim_start().starts_with("if "))
        {
            wanted.insert(name.to_string());
        }
    }
    // `singleton=shutdown\|silent\|hang` names singleton, shutdown, silent, hang.
    let named: BTreeSet<&str> = protocol
        .split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|span| span.split(['=', '|', '\\', ' ', ',']))
        .collect();
    wanted
        .into_iter()
        .filter(|name| !named.contains(name.as_str()))
        .collect()
}

#[test]
fn the_stand_in_protocol_names_every_setting_and_fault() {
    let dir = Path::new(ROOT).join("tests/chrome-standin/src");
    let sources: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    let faults = read("tests/chrome-standin/src/faults.rs");
    let protocol = read("tests/chrome-standin/PROTOCOL.md");
    let unnamed = unnamed_in_protocol(&sources, &faults, &protocol);
    assert!(unnamed.is_empty(), "PROTOCOL.md does not name {unnamed:?}");
    // The scan finds what is there: seven settings and ten fault words today.
    let all = unnamed_in_protocol(&sources, &faults, "");
    assert!(all.len() >= 17, "{all:?}");
}

#[test]
fn the_protocol_check_sees_an_unnamed_setting_and_fault() {
    let source = "let a = std::env::var(\"STANDIN_NEW\");\n".to_string();
    let faults = "            \"drop-after\" => x,\n            \"stall\" if !value.is_empty() => y,\n            \"shutdown\" => z,\n";
    assert_eq!(
        unnamed_in_protocol(
            &[source],
            faults,
            "`drop-after=N`, `singleton=shutdown\\|hang`"
        ),
        ["STANDIN_NEW", "stall"]
    );
}

/// DESIGN.md's "Layout" block: the one file-by-file description.
fn layout_block(design: &str) -> &str {
    let start = design
        .find("\n## Layout\n")
        .expect("DESIGN.md has a Layout section");
    let open = start + design[start..].find("```").expect("its block opens");
    let close = open + 3 + design[open + 3..].find("```").expect("its block closes");
    &design[open..close]
}

/// What the layout block does not name of the source tree `src` (each
/// entry of `src/` as `src/<name>`, each file below by its name, each
/// folder below as `<name>/`), and the `src/` paths it names that are not
/// there.
fn layout_drift(block: &str, src: &Path) -> Vec<String> {
    let word = |w: &str| {
        block
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|x| x.eq_ignore_ascii_case(w))
    };
    let mut drift = Vec::new();
    let mut below = vec![src.to_path_buf()];
    while let Some(dir) = below.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_dir = path.is_dir();
            let named = if dir == src {
                block.contains(&format!("src/{name}{}", if is_dir { "/" } else { "" }))
            } else if is_dir {
                block.contains(&format!("{name}/"))
            } else {
                name == "mod.rs" || word(name.trim_end_matches(".rs"))
            };
            if !named {
                drift.push(format!("not described: {}", path.display()));
            }
            if is_dir {
                below.push(path);
            }
        }
    }
    for named in block.split_whitespace().filter(|w| w.starts_with("src/")) {
        let named = named.trim_end_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '/'));
        let on_disk = src.parent().unwrap().join(named.trim_end_matches('/'));
        if !on_disk.exists() {
            drift.push(format!("described but not there: {named}"));
        }
    }
    drift
}

/// One layout description, and it is the tree's (AGENTS.md links to it).
#[test]
fn the_layout_names_every_file_and_folder_of_src_and_nothing_else() {
    let design = read("docs/DESIGN.md");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let drift = layout_drift(layout_block(&design), &root.join("src"));
    assert!(
        drift.is_empty(),
        "docs/DESIGN.md, Layout:\n{}",
        drift.join("\n")
    );
    let agents = read("AGENTS.md");
    assert!(
        agents.contains("(docs/DESIGN.md#layout)"),
        "AGENTS.md links the layout"
    );
    assert!(
        !agents.contains("\nsrc/main.rs "),
        "AGENTS.md keeps no second layout"
    );
}

#[test]
fn the_layout_check_finds_a_file_left_out_and_one_gone() {
    let tree = tempfile::tempdir().unwrap();
    let src = tree.path().join("src");
    fs::create_dir_all(src.join("tabs")).unwrap();
    for file in [
        "main.rs",
        "extra.rs",
        "tabs/mod.rs",
        "tabs/book.rs",
        "tabs/ghost.rs",
    ] {
        fs::write(src.join(file), "").unwrap();
    }
    let block = "```\nsrc/main.rs  x\nsrc/tabs/  book.rs: y\nsrc/gone.rs  z\n";
    let mut drift = layout_drift(block, &src);
    drift.sort();
    let expected = [
        "described but not there: src/gone.rs".to_string(),
        format!("not described: {}", src.join("extra.rs").display()),
        format!("not described: {}", src.join("tabs/ghost.rs").display()),
    ];
    assert_eq!(drift, expected);
}

/// The layers and their rules are written once, in DESIGN.md's Layout;
/// AGENTS.md and tests/layout.rs link it rather than say them again.
#[test]
fn the_layering_rules_are_written_once() {
    let design = read("docs/DESIGN.md");
    let layout = &design[design.find("\n## Layout\n").expect("a Layout section")..];
    let layout = &layout[..layout[1..].find("\n## ").map_or(layout.len(), |n| n + 1)];
    assert!(
        layout.contains("Five layers, lowest first"),
        "DESIGN's Layout says them"
    );
    for (doc, link) in [
        ("AGENTS.md", "(docs/DESIGN.md#layout)"),
        ("tests/layout.rs", "docs/DESIGN.md, \"Layout\""),
    ] {
        let text = read(doc);
        assert!(text.contains(link), "{doc} links DESIGN's Layout");
    }
    for doc in [
        "AGENTS.md",
        "tests/layout.rs",
        "docs/DESIGN.md",
        "README.md",
    ] {
        let text = read(doc);
        let said = text.matches("Five layers").count() + text.matches("foundation <").count();
        let expected = usize::from(doc == "docs/DESIGN.md");
        assert_eq!(said, expected, "{doc} says the layers again");
    }
}

/// my-chrome's own words pass the redactor whole: no help text, at any
/// level, loses a word after its `token:` (issue 47: "After storing the
/// regenerated token:<redacted> the running Chrome").
#[test]
fn no_word_of_the_help_is_masked() {
    let mut asked = vec![vec!["--help".to_string()]];
    for command in my_chrome::cli::wrapper_commands() {
        let mut args: Vec<String> = command.split(' ').map(String::from).collect();
        args.push("--help".into());
        asked.push(args);
    }
    for args in asked {
        let out = Command::new(common::run::BIN).args(&args).output().unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(all.len() > 40, "{args:?}: {all}");
        assert!(!all.contains("<redacted>"), "{args:?}: {all}");
    }
}
