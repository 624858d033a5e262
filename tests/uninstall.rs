//! `my-chrome uninstall` (docs/DESIGN.md, "Uninstall"): the session
//! detached after the command in flight, then the runtime (sealed copy
//! included), the daemon's registry folder and the skill copies
//! scripts/install.sh recorded removed; the browser running, the token kept
//! unless asked, nothing beside them touched. A runtime that is not
//! my-chrome's, a link, a folder or a file of another user, or a mount
//! inside: refused, exit 6, nothing removed. The real binary, the real
//! pinned CLI, the Chrome stand-in, a real Secret Service.

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Sandbox, assert_nowhere, can_give_files_away, says, user_name, world};

const SERVICE: &str = "my-chrome.extension-token";

/// A copy of the skill as scripts/install.sh leaves it.
fn skill_copy(dir: &Path) {
    fs::create_dir_all(dir.join("agents")).unwrap();
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("skill/SKILL.md"),
        dir.join("SKILL.md"),
    )
    .unwrap();
    fs::write(dir.join("BINARY"), "/home/u/.local/bin/my-chrome\n").unwrap();
    fs::write(dir.join("agents/openai.yaml"), "x").unwrap();
}

/// install.sh's record naming `paths`, its binary first.
fn record(home: &Path, paths: &[&Path]) -> PathBuf {
    let path = home.join(".local/share/my-chrome/installed");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut text = String::from("/home/u/.local/bin/my-chrome\n");
    for p in paths {
        text.push_str(&format!("{}\n", p.display()));
    }
    fs::write(&path, text).unwrap();
    path
}

/// The Playwright daemon's registry folder for the sandbox's runtime.
fn registry_dir(sandbox: &Sandbox) -> PathBuf {
    my_chrome::session::registry::daemon_dir(sandbox.home.path(), &sandbox.runtime).unwrap()
}

/// Waits until agent other's `eval` holds the session's turn, as
/// `agents --json` tells (it reads the lease without taking the turn and
/// changes nothing).
fn wait_for_others_eval(sandbox: &Sandbox) {
    common::wait::until(
        "agent other's `eval` holds the turn",
        Duration::from_secs(20),
        || {
            let running = sandbox.run(&["agents", "--json"]).json()["running"].clone();
            if running["agent"] == "other" && running["command"] == "eval" {
                Ok(())
            } else {
                Err(format!("running: {running}"))
            }
        },
    );
}

/// Everything under `dir`, as paths relative to it.
fn tree(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walk(dir)
        .iter()
        .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        out.push(path.clone());
        if entry.file_type().unwrap().is_dir() {
            out.extend(walk(&path));
        }
    }
    out
}

#[test]
fn uninstall_waits_its_turn_detaches_and_removes_only_what_my_chrome_made() {
    let mut w = world();
    let chrome = w.chrome();
    let home = w.sandbox.home.path().to_path_buf();
    // Beside the runtime, in its parent: the user's.
    fs::write(home.join("beside.txt"), "the user's").unwrap();
    fs::create_dir(home.join("runtime-old")).unwrap();
    fs::write(home.join("runtime-old/notes"), "the user's").unwrap();
    // Another workspace's folder in the daemon registry, beside ours.
    let another_workspace = home.join(".cache/ms-playwright/daemon/0123456789abcdef/daemon.log");
    fs::create_dir_all(another_workspace.parent().unwrap()).unwrap();
    fs::write(&another_workspace, "{}").unwrap();
    let target = home.join("target.txt");
    fs::write(&target, "a link's target").unwrap();
    // The skill for two agents: one as install.sh left it, one the user
    // replaced since; and a path the record names that is no skill place.
    let claude = home.join(".claude/skills/my-chrome");
    let codex = home.join(".agents/skills/my-chrome");
    skill_copy(&claude);
    fs::create_dir_all(&codex).unwrap();
    fs::write(codex.join("SKILL.md"), "---\nname: mine\n---\n").unwrap();
    let record_path = record(&home, &[&claude, &codex, &home.join("beside.txt")]);

    let connected = w.sandbox.run(&["connect"]);
    says(&connected, 0, "connected");
    w.sandbox.run(&["tab-list"]).expect(0, "");
    // A link inside the runtime, to a file outside it.
    symlink(&target, w.sandbox.runtime.join("tmp/to-target")).unwrap();
    let registry = registry_dir(&w.sandbox);
    assert!(registry.is_dir());
    let before = tree(&home);
    let limits = fs::read_to_string(w.sandbox.runtime.join("session-limits.json")).unwrap();
    let watcher = serde_json::from_str::<serde_json::Value>(&limits).unwrap()["watcher"]["pid"]
        .as_u64()
        .unwrap()
        .to_string();

    let dry = w.sandbox.run(&["uninstall", "--dry-run"]);
    says(&dry, 0, "changed nothing");
    says(&dry, 0, "detach session mychrome");
    says(
        &dry,
        0,
        &format!("remove the runtime {}", w.sandbox.runtime.display()),
    );
    says(
        &dry,
        0,
        &format!("remove the skill for Claude Code in {}", claude.display()),
    );
    says(&dry, 0, "would leave the extension token");
    says(&dry, 0, &format!("would leave {}", codex.display()));
    assert_eq!(tree(&home), before, "a dry run changed something");
    w.sandbox.run(&["tab-list"]).expect(0, "");

    // Another agent's command is running: uninstall waits for it, as
    // disconnect does, and does not cut it.
    let mut slow = w.sandbox.command(&[
        "--agent",
        "other",
        "eval",
        "() => new Promise(done => setTimeout(() => done('other finished'), 3000))",
    ]);
    slow.env("MY_CHROME_COMMAND_TIMEOUT_SECS", "30");
    let slow = common::Running::start(slow);
    wait_for_others_eval(&w.sandbox);
    let gone = w.sandbox.run(&["uninstall"]);
    let slow = slow.wait();
    says(&slow, 0, "other finished");
    says(&gone, 0, "disconnected session mychrome");
    says(&gone, 0, "is still running");
    says(
        &gone,
        0,
        &format!("removed the runtime {}", w.sandbox.runtime.display()),
    );
    says(
        &gone,
        0,
        &format!("removed the skill for Claude Code in {}", claude.display()),
    );
    says(&gone, 0, "the Playwright daemon's record of the runtime");
    says(&gone, 0, "left the extension token");
    says(&gone, 0, "left the Playwright Extension in your browser");

    assert!(chrome.alive(), "the browser was closed");
    assert!(!w.sandbox.runtime.exists());
    assert!(!registry.exists());
    assert_eq!(fs::read_to_string(&another_workspace).unwrap(), "{}");
    assert!(!claude.exists());
    assert_eq!(
        fs::read_to_string(codex.join("SKILL.md")).unwrap(),
        "---\nname: mine\n---\n"
    );
    assert_eq!(
        fs::read_to_string(home.join("beside.txt")).unwrap(),
        "the user's"
    );
    assert_eq!(
        fs::read_to_string(home.join("runtime-old/notes")).unwrap(),
        "the user's"
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "a link's target");
    // The record keeps what uninstall did not remove.
    assert_eq!(
        fs::read_to_string(&record_path).unwrap(),
        format!(
            "/home/u/.local/bin/my-chrome\n{}\n{}\n",
            codex.display(),
            home.join("beside.txt").display()
        )
    );
    assert!(
        w.keyring.lookup(SERVICE, &user_name()).is_some(),
        "the token went unasked"
    );
    // The session's watcher is gone with it (the daemon: "disconnected").
    assert!(common::process_gone(&watcher), "the watcher runs on");

    // Again: nothing to remove. Then the token, when asked.
    let again = w.sandbox.run(&["uninstall"]);
    says(&again, 0, "nothing of my-chrome's to remove");
    assert!(
        !w.sandbox.runtime.exists(),
        "uninstall made a runtime again"
    );
    let forgot = w.sandbox.run(&["uninstall", "--forget-token"]);
    says(&forgot, 0, "deleted the extension token");
    assert!(w.keyring.lookup(SERVICE, &user_name()).is_none());
    let last = w.sandbox.run(&["uninstall"]);
    says(&last, 0, "nothing of my-chrome's to remove");
    assert!(
        !last.stdout.contains("extension token ("),
        "{}",
        last.stdout
    );
    assert_nowhere(
        &w.token,
        &home,
        &[&connected, &dry, &slow, &gone, &again, &forgot, &last],
    );
}

/// `my-chrome` run through `sh -c script` (with `args` as `$0`, `$1`…)
/// in a private mount namespace, where the script mounts what it needs.
fn in_a_mount_namespace<'a>(script: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut wrapper = vec![
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
    ];
    wrapper.extend(args);
    wrapper
}

/// Bind-mounts `$0` onto `$1`, then runs the rest.
const BIND: &str = "mount --bind \"$0\" \"$1\" && shift && exec \"$@\"";

/// Uninstall on a runtime it must not touch: exit 6 naming the path and the
/// rule, and the tree, the skill copy and the record exactly as they were.
fn refused(sandbox: &Sandbox, wrapper: &[&str], path: &Path, rule: &str) {
    let home = sandbox.home.path();
    let claude = home.join(".claude/skills/my-chrome");
    let record_path = record(home, &[&claude]);
    skill_copy(&claude);
    let before = tree(home);
    let run = common::Running::start(sandbox.command_through(wrapper, &["uninstall"])).wait();
    says(&run, 6, &path.display().to_string());
    says(&run, 6, rule);
    assert_eq!(tree(home), before, "a refused uninstall changed something");
    assert!(
        fs::read_to_string(record_path)
            .unwrap()
            .contains("skills/my-chrome")
    );
}

#[test]
fn a_link_an_unclaimed_folder_or_another_users_tree_is_refused_and_nothing_goes() {
    // The runtime is a link to a real, claimed runtime.
    let real = Sandbox::installed();
    let linked = Sandbox::new();
    symlink(&real.runtime, &linked.runtime).unwrap();
    refused(&linked, &[], &linked.runtime, "symbolic link");
    assert!(real.runtime.join("cli/package.json").exists());

    // A folder that is not empty and carries no claim.
    let unclaimed = Sandbox::new();
    fs::create_dir(&unclaimed.runtime).unwrap();
    fs::set_permissions(
        &unclaimed.runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    fs::write(unclaimed.runtime.join("data"), "the user's").unwrap();
    refused(&unclaimed, &[], &unclaimed.runtime, "no my-chrome claim");

    // Root from here on: a mount, and files given to another user.
    if !can_give_files_away() {
        return;
    }
    // Something mounted inside the runtime: not descended into.
    let mounted = Sandbox::installed();
    let mount = mounted.runtime.join("tmp/mnt");
    fs::create_dir(&mount).unwrap();
    let mount_arg = mount.display().to_string();
    refused(
        &mounted,
        &in_a_mount_namespace(
            "mount -t tmpfs none \"$0\" && touch \"$0/on-tmpfs\" && exec \"$@\"",
            &[&mount_arg],
        ),
        &mount,
        "is a mount point",
    );
    assert!(mounted.runtime.join("cli/package.json").exists());

    // A bind mount from the same file system keeps its device number: the
    // mount table shows it, and what it shows is not emptied.
    let bound = Sandbox::installed();
    let precious = bound.home.path().join("precious");
    fs::create_dir(&precious).unwrap();
    fs::write(precious.join("file"), "the user's").unwrap();
    let mount = bound.runtime.join("tmp/mnt");
    fs::create_dir(&mount).unwrap();
    let (source, target) = (precious.display().to_string(), mount.display().to_string());
    refused(
        &bound,
        &in_a_mount_namespace(BIND, &[&source, &target]),
        &mount,
        "is a mount point",
    );
    assert_eq!(
        fs::read_to_string(precious.join("file")).unwrap(),
        "the user's"
    );
    // A file bind-mounted onto a file in the runtime, too.
    let onto = bound.runtime.join("tmp/fmnt");
    fs::write(&onto, "").unwrap();
    let (source, target) = (
        precious.join("file").display().to_string(),
        onto.display().to_string(),
    );
    refused(
        &bound,
        &in_a_mount_namespace(BIND, &[&source, &target]),
        &onto,
        "is a mount point",
    );
    assert_eq!(
        fs::read_to_string(precious.join("file")).unwrap(),
        "the user's"
    );

    // A file of another user inside the runtime.
    let theirs = Sandbox::installed();
    let planted = theirs.runtime.join("tmp/theirs");
    fs::write(&planted, "another user's").unwrap();
    nix::unistd::chown(&planted, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    refused(&theirs, &[], &planted, "is owned by uid 65534");
    assert!(theirs.runtime.join("cli/package.json").exists());

    // The runtime itself is another user's folder.
    let other = Sandbox::installed();
    nix::unistd::chown(
        &other.runtime,
        Some(nix::unistd::Uid::from_raw(65534)),
        None,
    )
    .unwrap();
    refused(&other, &[], &other.runtime, "owned by uid 65534");
    nix::unistd::chown(&other.runtime, Some(nix::unistd::getuid()), None).unwrap();
}

#[test]
fn a_claim_copied_into_another_folder_does_not_make_it_my_chromes() {
    // A private folder of the user's, with the claim copied in.
    let sandbox = Sandbox::new();
    fs::create_dir(&sandbox.runtime).unwrap();
    fs::set_permissions(
        &sandbox.runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let claim = sandbox.runtime.join(my_chrome::runtime::CLAIM_FILE);
    fs::write(&claim, my_chrome::runtime::CLAIM).unwrap();
    fs::set_permissions(&claim, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    fs::write(sandbox.runtime.join("id_ed25519"), "the user's key").unwrap();
    refused(
        &sandbox,
        &[],
        &sandbox.runtime.join("id_ed25519"),
        "is nothing my-chrome makes in its runtime",
    );
    let dry = sandbox.run(&["uninstall", "--dry-run"]);
    says(&dry, 6, "id_ed25519");

    // An empty folder without the claim is not my-chrome's either: left.
    let empty = Sandbox::new();
    fs::create_dir(&empty.runtime).unwrap();
    fs::set_permissions(
        &empty.runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let run = empty.run(&["uninstall"]);
    says(&run, 0, "nothing of my-chrome's to remove");
    says(&run, 0, "an empty folder without my-chrome's claim");
    assert!(empty.runtime.is_dir());
}

#[test]
fn an_uninstall_cut_short_is_finished_by_the_next() {
    // What a killed uninstall leaves: the runtime moved aside, part of it
    // removed, its claim still there; and the daemon's registry folder.
    let sandbox = Sandbox::installed();
    fs::write(
        sandbox.runtime.join(my_chrome::runtime::CLAIM_FILE),
        my_chrome::runtime::CLAIM,
    )
    .unwrap();
    let registry = registry_dir(&sandbox);
    fs::create_dir_all(&registry).unwrap();
    fs::write(registry.join("mychrome.session.old"), "x").unwrap();
    let aside = sandbox.home.path().join(".runtime.uninstalling");
    fs::rename(&sandbox.runtime, &aside).unwrap();
    fs::remove_file(aside.join("node-record.txt")).unwrap();
    let dry = sandbox.run(&["uninstall", "--dry-run"]);
    says(&dry, 0, "which an interrupted uninstall left");
    assert!(aside.exists());
    let run = sandbox.run(&["uninstall"]);
    says(&run, 0, "which an interrupted uninstall had left");
    says(&run, 0, "the Playwright daemon's record of the runtime");
    assert!(!aside.exists());
    assert!(!registry.exists());
    assert!(!sandbox.runtime.exists());

    // Cut short after the claim went: an empty folder by that name goes.
    fs::create_dir(&aside).unwrap();
    sandbox.run(&["uninstall"]).expect(0, "");
    assert!(!aside.exists());

    // A folder by that name that is not empty and has no claim: not ours.
    fs::create_dir(&aside).unwrap();
    fs::write(aside.join("notes"), "the user's").unwrap();
    let run = sandbox.run(&["uninstall"]);
    says(&run, 6, "carries no my-chrome claim");
    assert!(aside.join("notes").exists());
}

#[test]
fn a_skill_copy_replaced_while_uninstall_waits_is_refused_and_nothing_goes() {
    let mut w = world();
    let _chrome = w.chrome();
    let home = w.sandbox.home.path().to_path_buf();
    let claude = home.join(".claude/skills/my-chrome");
    skill_copy(&claude);
    record(&home, &[&claude]);
    says(&w.sandbox.run(&["connect"]), 0, "connected");
    let mut slow = w.sandbox.command(&[
        "--agent",
        "other",
        "eval",
        "() => new Promise(done => setTimeout(() => done('other finished'), 4000))",
    ]);
    slow.env("MY_CHROME_COMMAND_TIMEOUT_SECS", "30");
    let slow = common::Running::start(slow);
    wait_for_others_eval(&w.sandbox);
    let gone = common::Running::start(w.sandbox.command(&["uninstall"]));
    // Said once it has surveyed what it would remove and has waited a
    // second for the turn, which it is still waiting for.
    gone.wait_for_stderr("agent other's `eval` is running on the browser; waiting");
    // Another folder in its place, while uninstall waits for the turn.
    fs::rename(&claude, home.join("old-skill")).unwrap();
    skill_copy(&claude);
    fs::write(claude.join("mine"), "the user's").unwrap();
    let gone = gone.wait();
    says(&slow.wait(), 0, "other finished");
    says(&gone, 6, "changed while uninstall waited");
    says(&gone, 6, "nothing was removed");
    assert!(claude.join("mine").exists());
    assert!(w.sandbox.runtime.join("cli/package.json").exists());
}
