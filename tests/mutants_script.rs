//! `scripts/mutants.sh` refuses what it cannot do, clearly, and changes
//! nothing in the tree when it does (docs/TESTING.md): an unknown module,
//! and no way to install cargo-mutants (no network).

use std::path::Path;
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// What git says of the working tree: the same before and after.
fn status() -> String {
    let out = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "git status");
    String::from_utf8(out.stdout).unwrap()
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_unknown_module_is_named_with_the_list_and_nothing_runs() {
    let before = status();
    let out = Command::new(root().join("scripts/mutants.sh"))
        .arg("no-such-module")
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("unknown module 'no-such-module'"), "{said}");
    for module in ["redact", "policy", "tabs", "cleanup-record"] {
        assert!(said.contains(module), "{module}: {said}");
    }
    assert_eq!(status(), before);
    let listed = Command::new(root().join("scripts/mutants.sh"))
        .arg("--list-modules")
        .current_dir(root())
        .output()
        .unwrap();
    assert!(listed.status.success());
    let list = String::from_utf8(listed.stdout).unwrap();
    assert!(list.contains("src/redact/patterns.rs"), "{list}");
}

#[test]
fn without_a_network_to_install_from_it_says_so_and_changes_nothing() {
    // A PATH with the toolchain alone (no cargo-mutants beside it), a cargo
    // home of its own (none installed there either), and cargo told it is
    // offline: the install cannot reach crates.io.
    let scratch = tempfile::tempdir().unwrap();
    let bin = scratch.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let cargo = Path::new(env!("CARGO"));
    std::os::unix::fs::symlink(cargo, bin.join("cargo")).unwrap();
    std::os::unix::fs::symlink(cargo.with_file_name("rustc"), bin.join("rustc")).unwrap();
    let before = status();
    let out = Command::new(root().join("scripts/mutants.sh"))
        .arg("redact")
        .current_dir(root())
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("CARGO_HOME", scratch.path().join("cargo-home"))
        .env("CARGO_NET_OFFLINE", "true")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("crates-io"),
        "the registry, not the toolchain: {said}"
    );
    assert!(said.contains("could not install cargo-mutants"), "{said}");
    assert!(said.contains("nothing was run or changed"), "{said}");
    assert_eq!(status(), before);
}
