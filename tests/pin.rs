//! A pin move fails closed: `scripts/cli-commands.sh` stops on help it does
//! not fully understand and on options or arguments nobody decided, and
//! `scripts/pin-cli.sh` then changes nothing in `skill/cli/`. Fed the pinned
//! release (the golden install), doctored copies of its help.json, and the
//! real newer release from npm.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::run::Run;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// An install directory holding `help` as the client's help.json and the
/// golden install's package.json.
fn install_with(help: &serde_json::Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let golden = common::golden_runtime().join("cli/node_modules");
    let client = dir
        .path()
        .join("node_modules/playwright-core/lib/tools/cli-client");
    fs::create_dir_all(&client).unwrap();
    fs::write(client.join("help.json"), help.to_string()).unwrap();
    let package = dir.path().join("node_modules/@playwright/cli");
    fs::create_dir_all(&package).unwrap();
    fs::copy(
        golden.join("@playwright/cli/package.json"),
        package.join("package.json"),
    )
    .unwrap();
    dir
}

fn table(install: &Path, previous: Option<&Path>) -> Run {
    let mut command = Command::new(repo().join("scripts/cli-commands.sh"));
    command.arg(install);
    if let Some(previous) = previous {
        command.arg(previous);
    }
    Run::from_output(command.output().unwrap())
}

fn pinned_help() -> serde_json::Value {
    serde_json::from_slice(&fs::read(repo().join("skill/cli/help.json")).unwrap()).unwrap()
}

#[test]
fn the_pinned_release_tables_as_shipped_against_itself() {
    let shipped = repo().join("skill/cli/help.json");
    let run = table(&common::golden_runtime().join("cli"), Some(&shipped));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let committed = fs::read_to_string(repo().join("skill/cli/commands.txt")).unwrap();
    assert_eq!(run.stdout, committed);
}

#[test]
fn help_the_tool_does_not_understand_stops_it() {
    type Doctor = fn(&mut serde_json::Value);
    let cases: [(Doctor, &str); 8] = [
        (
            |h| {
                let upload = h["commands"]["upload"].as_object_mut().unwrap();
                upload.remove("variadicArg");
            },
            "upload: \"<files...>\" is variadic, but not the last word or not marked variadicArg",
        ),
        (
            |h| h["commands"]["goto"]["variadicArg"] = true.into(),
            "goto: marked variadicArg, but its last usage word is not <args...>",
        ),
        (
            |h| h["commands"]["screenshot"]["flags"]["quality"] = "number".into(),
            "screenshot --quality: an option of kind \"number\"",
        ),
        (
            |h| h["commands"]["screenshot"]["flags"]["out"] = "string".into(),
            "screenshot --out: its help does not describe it",
        ),
        (
            |h| h["commands"]["click"]["hidden"] = true.into(),
            "click: unknown key \"hidden\"",
        ),
        (
            |h| h["plugins"] = serde_json::json!({}),
            "help.json has an unknown key \"plugins\"",
        ),
        (
            |h| h["commands"]["goto"]["args"] = serde_json::json!(["url", "referrer"]),
            "goto: its usage names [\"url\"], its args are [\"url\",\"referrer\"]",
        ),
        // An option whose description speaks of a file, with no decision.
        (
            |h| {
                let click = &mut h["commands"]["click"];
                click["flags"]["trace"] = "string".into();
                let text = click["help"].as_str().unwrap().to_string();
                click["help"] = format!("{text}\n  --trace   write a trace file here").into();
            },
            "undecided: click --trace",
        ),
    ];
    for (doctor, needle) in cases {
        let mut help = pinned_help();
        doctor(&mut help);
        let install = install_with(&help);
        let run = table(install.path(), None);
        assert_eq!(run.code, 3, "{needle}: {}", run.stderr);
        assert!(run.stderr.contains(needle), "{needle}:\n{}", run.stderr);
        assert!(run.stdout.is_empty(), "a table was printed: {}", run.stdout);
    }
    // A new string option, silent about files, still needs a decision
    // when the previous pin did not have it.
    let mut help = pinned_help();
    let click = &mut help["commands"]["click"];
    click["flags"]["label"] = "string".into();
    let text = click["help"].as_str().unwrap().to_string();
    click["help"] = format!("{text}\n  --label   a name for it").into();
    let install = install_with(&help);
    let previous = repo().join("skill/cli/help.json");
    let run = table(install.path(), Some(&previous));
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("undecided: click --label is new since the previous pin"),
        "{}",
        run.stderr
    );
    assert_eq!(
        table(install.path(), None).code,
        0,
        "without a previous pin"
    );
}

/// A copy of what pin-cli.sh reads and writes: scripts/ and skill/cli/.
fn repo_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&repo().join("scripts"), &dir.path().join("scripts"));
    fs::create_dir(dir.path().join("skill")).unwrap();
    common::copy_tree(&repo().join("skill/cli"), &dir.path().join("skill/cli"));
    let cli = dir.path().join("skill/cli");
    (dir, cli)
}

/// The copy's pin-cli.sh, taking its tree digests from this checkout's
/// examples/tree_digest.rs (the copy holds no Rust source).
fn pin_cli(root: &Path) -> Command {
    let mut command = Command::new(root.join("scripts/pin-cli.sh"));
    command.env("PIN_CLI_CHECKOUT", repo());
    command
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                fs::read(&path).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_move_that_cannot_be_tabled_or_does_not_exist_changes_nothing() {
    let (root, cli) = repo_copy();
    let pin = |version: &str| {
        let out = pin_cli(root.path()).arg(version).output().unwrap();
        Run::from_output(out)
    };
    // The shipped pin's release with the decisions its move needed taken
    // back out (a variadic upload, new options): as before that move.
    let decisions = cli.join("file-args.txt");
    let undecided: String = fs::read_to_string(&decisions)
        .unwrap()
        .lines()
        .filter(|l| {
            !["upload <files>", "find --filename", "screenshot --type"]
                .iter()
                .any(|d| l.starts_with(d))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(
        &decisions,
        format!("{undecided}upload <file> file  files sent to the page\n"),
    )
    .unwrap();
    let before = snapshot(&cli);
    let newer = pin("0.1.22");
    assert_eq!(newer.code, 3, "{}{}", newer.stdout, newer.stderr);
    for needle in [
        "undecided: upload <files>",
        "undecided: find --filename",
        "undecided: screenshot --type",
        "upload <file> names nothing in this CLI",
        "nothing in skill/cli was changed",
    ] {
        assert!(newer.stderr.contains(needle), "{needle}:\n{}", newer.stderr);
    }
    assert_eq!(snapshot(&cli), before, "skill/cli changed");
    let missing = pin("0.0.0");
    assert_ne!(missing.code, 0, "{}", missing.stderr);
    assert_eq!(snapshot(&cli), before, "skill/cli changed");
}

#[test]
fn the_shipped_pin_is_exactly_what_the_tool_makes() {
    let (root, cli) = repo_copy();
    let before = snapshot(&cli);
    let version = my_chrome::helper::pin::Pin::shipped().version.clone();
    let out = pin_cli(root.path()).arg(&version).output().unwrap();
    let run = Run::from_output(out);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        snapshot(&cli),
        before,
        "skill/cli is not what pin-cli.sh {version} makes"
    );
}

/// The tree digest has one implementation, src/helper/tree.rs: pin-cli.sh
/// walks no tree itself, and what it runs (examples/tree_digest.rs, as it
/// runs it) gives the golden install the digest the pin ships.
#[test]
fn the_pin_script_takes_the_tree_digest_from_the_rust_code() {
    let script = fs::read_to_string(repo().join("scripts/pin-cli.sh")).unwrap();
    assert!(
        script.contains("--example tree_digest") && !script.contains("find "),
        "pin-cli.sh computes the tree digest another way"
    );
    let out = Command::new(env!("CARGO"))
        .args(["run", "--release", "--quiet", "--manifest-path"])
        .arg(repo().join("Cargo.toml"))
        .args(["--example", "tree_digest", "--"])
        .arg(common::golden_runtime().join("cli"))
        .output()
        .unwrap();
    let run = Run::from_output(out);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout.trim(),
        my_chrome::helper::pin::Pin::shipped().tree_digest
    );
}
