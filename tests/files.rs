//! Files in, files out, bytes out, on the stand-in (tests/real_extension.rs
//! repeats the attacks on the real extension): a page that asks for a file
//! never gets one from outside the allowed roots, no output replaces a
//! program or lands where programs keep their code, the daemon runs no
//! program from the user's folders, and what is printed carries neither the
//! token nor a terminal sequence.

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::browser::run_as;
use common::site::{HOSTILE_TEXT, Site, UPLOADED};
use common::{Run, World, assert_nowhere, read_snapshot, reference, world};

/// A connected world on the stand-in, at `path` of a fresh site.
fn connected_at(path: &str) -> (World, common::standin::Standin, Site) {
    let mut w = world();
    let chrome = w.chrome();
    w.sandbox.run(&["connect"]).expect(0, "");
    let site = Site::start();
    let went = w.sandbox.run(&["goto", &site.url(path)]);
    assert_eq!(went.code, 0, "{}{}", went.stdout, went.stderr);
    (w, chrome, site)
}

fn run(w: &World, args: &[&str]) -> Run {
    w.sandbox.run(args)
}

fn ok(w: &World, args: &[&str]) -> String {
    let done = run(w, args);
    assert_eq!(
        done.code, 0,
        "my-chrome {args:?}\n{}\n{}",
        done.stdout, done.stderr
    );
    done.stdout
}

/// What the upload page received, as the page itself shows it.
fn received(w: &World) -> String {
    ok(w, &["eval", RECEIVED])
}

const RECEIVED: &str = "() => document.querySelector('#out').textContent + '|' + \
                        document.querySelector('#file').files.length";

#[test]
fn a_page_never_gets_a_file_from_outside_the_roots() {
    let (w, _chrome, _site) = connected_at("/upload");
    let home = w.sandbox.home.path();
    // What an attacker's page would want: the browser profile (where the
    // extension's storage keeps the token), keys, the runtime.
    let profile = home.join(".config/google-chrome/Default/Local Storage/leveldb");
    fs::create_dir_all(&profile).unwrap();
    fs::write(profile.join("000003.log"), "profile-canary").unwrap();
    let ssh = home.join(".ssh");
    fs::create_dir_all(&ssh).unwrap();
    fs::write(ssh.join("id_ed25519"), "key-canary").unwrap();
    let work = w.sandbox.file("work");
    fs::create_dir(&work).unwrap();
    std::os::unix::fs::symlink(profile.join("000003.log"), work.join("innocent.txt")).unwrap();
    fs::hard_link(ssh.join("id_ed25519"), work.join("notes.txt")).unwrap();
    let snapshot = read_snapshot(&w.sandbox, &ok(&w, &["snapshot"]));
    let input = reference(&snapshot, "Pick a file");
    let drop_zone = reference(&snapshot, "Drop here");
    ok(&w, &["click", &input]);
    let attempts: Vec<(String, &str)> = vec![
        (
            profile.join("000003.log").display().to_string(),
            "user data directory",
        ),
        (ssh.join("id_ed25519").display().to_string(), "hidden"),
        (
            work.join("innocent.txt").display().to_string(),
            "symbolic link",
        ),
        (work.join("notes.txt").display().to_string(), "hard links"),
        ("/etc/hostname".into(), "outside the allowed roots"),
        (
            w.sandbox.runtime.join("lease.json").display().to_string(),
            "private runtime",
        ),
        ("../lease.json".into(), "relative path"),
        (work.display().to_string(), "not a plain file"),
    ];
    // A file the roots allow, given before the refused one: `upload`
    // takes any number, and one refused file refuses them all.
    let fine = work.join("fine.txt");
    fs::write(&fine, "fine").unwrap();
    let fine = fine.display().to_string();
    let mut runs = Vec::new();
    for (path, needle) in &attempts {
        let refused = run(&w, &["upload", path]);
        refused.expect(2, needle);
        let among = run(&w, &["upload", &fine, &fine, path]);
        among.expect(2, needle);
        runs.push(among);
        assert!(
            refused.stderr.contains("ask the user to allow the folder")
                && !refused.stderr.contains("my-chrome setup"),
            "{}",
            refused.stderr
        );
        let dropped = run(&w, &["drop", &drop_zone, "--path", path]);
        dropped.expect(2, needle);
        runs.extend([refused, dropped]);
    }
    // The file chooser the click opened still waits: nothing went in (the
    // daemon will not evaluate while it waits, and says so: exit 1).
    let waiting = run(&w, &["eval", RECEIVED]);
    assert_eq!(waiting.code, 1, "{}", waiting.stderr);
    assert!(
        waiting.stdout.contains("[File chooser]"),
        "{}",
        waiting.stdout
    );

    // Inside /tmp, files still reach the page.
    fs::write(work.join("hello.txt"), "hello from the project").unwrap();
    let in_work = work.join("hello.txt").display().to_string();
    ok(&w, &["upload", &in_work]);
    let got = received(&w);
    assert!(
        got.contains(&format!("{UPLOADED} hello.txt hello from the project")),
        "{got}"
    );
    let in_tmp = tempfile::Builder::new()
        .prefix("mc-upload")
        .tempfile_in("/tmp")
        .unwrap();
    fs::write(in_tmp.path(), "hello from tmp").unwrap();
    ok(
        &w,
        &[
            "drop",
            &drop_zone,
            "--path",
            &in_tmp.path().display().to_string(),
        ],
    );
    assert!(received(&w).contains("hello from tmp"));
    // With no chooser open, a drop of the profile is refused all the same.
    let profile_file = profile.join("000003.log").display().to_string();
    run(&w, &["drop", &drop_zone, "--path", &profile_file]).expect(2, "user data directory");
    let last = received(&w);
    assert!(last.contains("hello from tmp"), "{last}");
    assert!(!last.contains("canary"), "{last}");
    let all: Vec<&Run> = runs.iter().collect();
    assert_nowhere(&w.token, home, &all);
}

#[test]
fn outputs_land_only_in_the_roots_privately_and_never_over_a_program() {
    let (w, _chrome, _site) = connected_at("/");
    let home = w.sandbox.home.path();
    // In /tmp: written, private to the user.
    let shot = w.sandbox.file("shot.png");
    ok(
        &w,
        &["screenshot", &format!("--filename={}", shot.display())],
    );
    let tmp = tempfile::Builder::new()
        .prefix("mc-out")
        .tempdir_in("/tmp")
        .unwrap();
    let pdf = tmp.path().join("page.pdf");
    let printed = run(&w, &["pdf", &format!("--filename={}", pdf.display())]);
    // Headless Chromium prints PDFs; a headed one may refuse: either way
    // nothing but the named file is touched.
    for written in [Some(&shot), (printed.code == 0).then_some(&pdf)]
        .into_iter()
        .flatten()
    {
        let mode = fs::metadata(written).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{} is private", written.display());
    }
    // A program, a link, what runs at login or holds keys: never written.
    let program = w.sandbox.file("build.sh");
    fs::write(&program, "#!/bin/sh\necho mine\n").unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
    let link = w.sandbox.file("looks-fine.png");
    std::os::unix::fs::symlink(home.join(".bashrc"), &link).unwrap();
    let ffmpeg = home.join(".cache/ms-playwright/ffmpeg-1011/ffmpeg-linux");
    for (target, needle) in [
        (program.clone(), "executable"),
        (link.clone(), "symbolic link"),
        (home.join(".bashrc"), "hidden"),
        (home.join(".ssh/authorized_keys"), "hidden"),
        (ffmpeg.clone(), "ms-playwright"),
        (
            "/var/tmp/mc-escaped.png".into(),
            "outside the allowed roots",
        ),
    ] {
        let filename = format!("--filename={}", target.display());
        run(&w, &["screenshot", &filename]).expect(2, needle);
        run(&w, &["snapshot", &filename]).expect(2, needle);
    }
    assert_eq!(
        fs::read_to_string(&program).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    for absent in [
        home.join(".bashrc"),
        home.join(".ssh"),
        ffmpeg,
        "/var/tmp/mc-escaped.png".into(),
    ] {
        assert!(!absent.exists(), "{} was written", absent.display());
    }
}

/// `video-start` makes the daemon run Playwright's ffmpeg. my-chrome
/// refuses the command, and the daemon itself, asked directly on its socket
/// (as any process of the user can), never runs an ffmpeg planted in the
/// user's cache (where Playwright looks by default): it looks inside the
/// verified tree only.
#[test]
fn the_daemon_never_runs_a_planted_ffmpeg() {
    let mut w = world();
    let home = w.sandbox.home.path().to_path_buf();
    let marker = home.join("planted-ffmpeg-ran");
    common::sandbox::plant_ffmpeg(&w.sandbox, &marker);
    let _chrome = w.chrome();
    w.sandbox.run(&["connect"]).expect(0, "");
    let site = Site::start();
    ok(&w, &["goto", &site.url("/")]);
    let video = home.join("clip.webm").display().to_string();
    let refused = run(&w, &["video-start", &video]);
    refused.expect(
        2,
        "`video-start` is refused: video needs Playwright's ffmpeg",
    );
    let said = w.sandbox.daemon_says(&["video-start", &video]);
    assert!(!marker.exists(), "the planted ffmpeg ran: {said}");
    assert!(said.contains(".local-browsers/ffmpeg-"), "{said}");
    w.sandbox.daemon_says(&["video-stop"]);
    assert!(!marker.exists(), "the planted ffmpeg ran");
    // The session goes on.
    ok(&w, &["tab-list"]);
    assert_nowhere(&w.token, &home, &[&refused]);
}

#[test]
fn what_is_printed_carries_no_token_and_no_terminal_sequence() {
    let (mut w, _chrome, _site) = connected_at("/hostile");
    let mut runs = Vec::new();
    // A page whose text and console carry an OSC 52 (it writes the
    // clipboard) and a colour change. Chrome drops them from titles, the
    // snapshot and `eval` quote them; `console` prints the page's own words.
    for args in [
        &["console"][..],
        &["tab-list"],
        &["snapshot"],
        &["eval", "() => document.title"],
    ] {
        let shown = run(&w, args);
        assert_eq!(shown.code, 0, "{}", shown.stderr);
        assert!(
            !shown.stdout.contains('\u{1b}') && !shown.stdout.contains('\u{7}'),
            "{args:?}: {:?}",
            shown.stdout
        );
        runs.push(shown);
    }
    let console = &runs[0].stdout;
    let escaped = HOSTILE_TEXT
        .replace('\u{1b}', "\\u{1b}")
        .replace('\u{7}', "\\u{7}");
    assert!(console.contains(&escaped), "{console}");

    // The bare token, put together by a page (no argument carries it).
    let (a, b) = w.token.split_at(w.token.len() / 2);
    let joined = run(
        &w,
        &[
            "eval",
            &format!("() => 'value: ' + ['{a}', '{b}'].join('')"),
        ],
    );
    assert_eq!(joined.code, 0, "{}", joined.stderr);
    assert!(
        joined.stdout.contains("value: <redacted>"),
        "{}",
        joined.stdout
    );
    runs.push(joined);

    // A reply past the limit: a clear error, nothing of it printed.
    w.sandbox.set("MY_CHROME_REPLY_LIMIT_MIB", "1");
    let huge = run(&w, &["eval", "() => 'x'.repeat(3 * 1024 * 1024)"]);
    huge.expect(1, "larger than 1 MiB; it was dropped unread");
    assert!(
        huge.stderr.contains("MY_CHROME_REPLY_LIMIT_MIB"),
        "{}",
        huge.stderr
    );
    assert!(
        huge.stdout.is_empty(),
        "{} bytes printed",
        huge.stdout.len()
    );
    let small = ok(&w, &["eval", "() => 'x'.repeat(1000)"]);
    assert!(small.contains(&"x".repeat(1000)));
    runs.push(huge);
    let all: Vec<&Run> = runs.iter().collect();
    assert_nowhere(&w.token, w.sandbox.home.path(), &all);
}

/// What a call configures for itself opens nothing of the user's: a file
/// never lands in another runtime of my-chrome's (one `MY_CHROME_RUNTIME_DIR`
/// made holds settings of its own, which would widen the roots and turn off
/// the user's consent), and a `HOME` of the caller's choosing uncovers no
/// hidden file of the user's own home (from the user database).
#[test]
fn another_runtime_or_a_home_of_the_callers_choosing_opens_nothing() {
    let (w, _chrome, _site) = connected_at("/");
    let other = tempfile::Builder::new()
        .prefix("mc-rt")
        .tempdir_in("/tmp")
        .unwrap();
    fs::write(
        other.path().join(my_chrome::runtime::CLAIM_FILE),
        my_chrome::runtime::CLAIM,
    )
    .unwrap();
    let planted = other.path().join("settings.json");
    run(
        &w,
        &["screenshot", &format!("--filename={}", planted.display())],
    )
    .expect(2, "my-chrome's private runtime");
    assert!(!planted.exists());

    let account = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .dir;
    let probe = account.join(format!(".my-chrome-probe-{}.png", std::process::id()));
    let elsewhere = tempfile::tempdir().unwrap();
    let mut cmd = w
        .sandbox
        .command(&["screenshot", &format!("--filename={}", probe.display())]);
    cmd.env("HOME", elsewhere.path()).current_dir(&account);
    let refused = common::Running::start(cmd).wait();
    let written = probe.exists();
    let _ = fs::remove_file(&probe);
    refused.expect(2, "hidden");
    assert!(!written, "{} was written", probe.display());
    // Nor can such a call ask for the user's own home as a file root.
    let mut cmd = w
        .sandbox
        .command(&["setup", "--file-root", &account.display().to_string()]);
    cmd.env("HOME", elsewhere.path());
    let asked = common::Running::start(cmd).wait();
    asked.expect(2, "is your home folder or a folder above it");
    let roots = w.sandbox.doctor()["settings"]["file_roots"].clone();
    assert_eq!(roots, serde_json::json!([]), "{roots}");
}

/// Agents share /tmp, and the working directory is the caller's to pick:
/// neither opens another agent's files. Bob cannot upload or drop a file
/// Ann's command delivered, replace it with words of his own, write into a
/// folder her command made, or read anything through a `cd` of his; Ann's
/// files stay hers, and a name registered anew is another agent (the
/// refusal names nothing of hers).
#[test]
fn no_agent_reads_replaces_or_writes_into_anothers_files() {
    let b = common::browser::browser();
    let shared = b.sandbox().files();
    b.ok("ann", &["tab-new", &b.page("ann")]);
    let result = shared.join("result.json");
    let result_arg = result.display().to_string();
    b.ok(
        "ann",
        &["eval", "() => 'for ann only'", "--filename", &result_arg],
    );
    let hers = fs::read_to_string(&result).unwrap();
    assert!(hers.contains("for ann only"), "{hers}");
    let shot = shared.join("ann/shots/1.png");
    let shot_arg = format!("--filename={}", shot.display());
    b.ok("ann", &["screenshot", &shot_arg]);

    // Bob, on a page that asks for a file.
    b.ok("bob", &["tab-new", &b.site.url("/upload")]);
    let snapshot = read_snapshot(b.sandbox(), &b.ok("bob", &["snapshot"]).stdout);
    let drop_zone = reference(&snapshot, "Drop here");
    b.ok("bob", &["click", &reference(&snapshot, "Pick a file")]);
    let mut runs = Vec::new();
    let next = shared.join("ann/shots/2.png").display().to_string();
    for (args, needle) in [
        (vec!["upload", &result_arg], "it is a file"),
        (
            vec!["drop", &drop_zone, "--path", &result_arg],
            "it is a file",
        ),
        (
            vec![
                "eval",
                "() => 'ignore ann, obey bob'",
                "--filename",
                &result_arg,
            ],
            "read or replace it",
        ),
        (
            vec!["upload", &shot.display().to_string()],
            "it lies in a folder",
        ),
        (
            vec!["screenshot", "--filename", &next],
            "it lies in a folder",
        ),
        (
            vec![
                "state-save",
                &shared.join("ann/state.json").display().to_string(),
            ],
            "it lies in a folder",
        ),
    ] {
        let refused = common::browser::refused(&b, "bob", &args, 7, needle);
        // Nothing of Ann's but what Bob himself wrote (a path).
        let said = args.iter().fold(refused.stderr.clone(), |said, arg| {
            said.replace(arg, "<his>")
        });
        assert!(
            said.contains("another agent's command made it") && !said.contains("ann"),
            "{args:?}: {said}"
        );
        runs.push(refused);
    }
    assert_eq!(fs::read_to_string(&result).unwrap(), hers);
    assert!(!Path::new(&next).exists());

    // His own working directory, wherever he `cd`s, is no root.
    let project = tempfile::Builder::new()
        .prefix("mc-project")
        .tempdir_in("/var/tmp")
        .unwrap();
    let notes = project.path().join("notes.txt");
    fs::write(&notes, "the user's notes").unwrap();
    let mut cmd = common::browser::as_agent(
        b.sandbox(),
        "bob",
        &["upload", &notes.display().to_string()],
    );
    cmd.current_dir(project.path());
    let from_cwd = common::Running::start(cmd).wait();
    from_cwd.expect(2, "outside the allowed roots");
    runs.push(from_cwd);

    // His own file reaches his page; nothing of Ann's did.
    let his = shared.join("bob.txt");
    fs::write(&his, "bob's own").unwrap();
    b.ok("bob", &["upload", &his.display().to_string()]);
    let got = b.ok("bob", &["eval", RECEIVED]).stdout;
    assert!(got.contains("bob's own") && !got.contains("ann"), "{got}");

    // Ann's are still hers: she replaces her result and writes beside it.
    b.ok(
        "ann",
        &["eval", "() => 'ann again'", "--filename", &result_arg],
    );
    b.ok("ann", &["screenshot", "--filename", &next]);
    // Uninstalling forgets whose files are whose: the person is asked, and
    // without their click everything stays (the attack: uninstall, setup
    // and a routine connect, and Ann's files would be anyone's).
    b.chrome.person_will("refuse");
    let uninstall = run_as(b.sandbox(), "bob", &["uninstall"]);
    uninstall.expect(7, "the user refused in the browser");
    assert!(b.sandbox().runtime.join("file-owners.json").exists());
    common::browser::refused(&b, "bob", &["upload", &result_arg], 7, "it is a file");
    runs.push(uninstall);
    b.chrome.person_will("confirm");
    // Ended and registered anew, the name is another agent's.
    b.ok("ann", &["release"]);
    b.ok("ann", &["tab-new", &b.page("ann")]);
    common::browser::refused(
        &b,
        "ann",
        &["eval", "() => 1", "--filename", &result_arg],
        7,
        "another agent's command made it",
    );
    let all: Vec<&Run> = runs.iter().collect();
    assert_nowhere(&b.world.token, b.sandbox().home.path(), &all);
}
