//! The documents say what the binary does: the skill's front matter is
//! valid, every `my-chrome …` command they name exists, the exit codes
//! README lists are the code's, and the installer leaves HOME as it found it.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

use common::Sandbox;

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

#[test]
fn every_command_the_documents_name_exists() {
    let help = Sandbox::installed().run(&["--help"]).stdout;
    let mut named = BTreeSet::new();
    for doc in ["skill/SKILL.md", "README.md", "SECURITY.md"] {
        let text = read(doc);
        for piece in text.split("`my-chrome ").skip(1) {
            let word: String = piece
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                .collect();
            if !word.is_empty() {
                named.insert((doc, word));
            }
        }
    }
    assert!(named.len() > 10, "{named:?}");
    for (doc, word) in named {
        let listed = help
            .lines()
            .any(|l| l.trim_start().starts_with(&format!("{word} ")) || l.trim() == word)
            || help.contains(&format!(" {word} "));
        assert!(
            listed,
            "{doc} names `my-chrome {word}`, which --help does not list"
        );
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
    let code = |e: Exit| e.code().to_string();
    let ours: BTreeSet<String> = [
        "0".to_string(),
        code(Exit::Failure),
        code(Exit::Usage),
        code(Exit::Token),
        code(Exit::NoSession),
        code(Exit::Chrome),
        code(Exit::Security),
        code(Exit::Busy),
        code(Exit::Timeout),
        "128+N".to_string(),
    ]
    .into();
    assert_eq!(listed, ours);
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
    let before = snapshot(home.path());
    let script = Path::new(ROOT).join("scripts/install.sh");
    let run = |args: &[&str]| {
        let status = Command::new(&script)
            .args(args)
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
    run(&["--prefix", prefix, "--agent", "claude-code"]);
    let skill = home.path().join(".claude/skills/my-chrome");
    assert!(skill.join("SKILL.md").exists());
    let binary = fs::read_to_string(skill.join("BINARY")).unwrap();
    assert_eq!(binary.trim(), format!("{prefix}/bin/my-chrome"));
    run(&["--prefix", prefix, "--agent", "claude-code"]);
    run(&["--prefix", prefix, "--uninstall"]);
    assert_eq!(
        snapshot(home.path()),
        before,
        "uninstall leaves HOME as it was"
    );
}
