//! A benchmark, not a test (issue 49): `my-chrome connect` + `disconnect`
//! beside the raw pinned CLI's own `attach --extension` (token in its
//! environment, as the tool my-chrome replaces runs it), on the real
//! Playwright Extension 0.3.0 in one throw-away real Chromium, and one Node
//! load of the pinned core bundle (the daemon's own start, which no connect
//! can skip), interleaved in the same run so that the machine's load
//! cancels in the ratios. Then the phases of one more connect, traced.
//!
//! It is a test target because it needs the real-extension world
//! (`tests/common/real_extension.rs`: Chromium under Xvfb with the
//! extension, its token in a private keyring). Ignored in the suite;
//! `scripts/bench.sh --connect` runs it with `cargo test` (not nextest: it
//! is both a token carrier, the raw CLI, and a test of Chromium by name,
//! two groups no test can be in at once; alone in its binary it sees
//! nobody else). It prints medians and never asserts a time; it asserts
//! that every run succeeded (else the figures mean nothing) and ends with
//! the canary scan.

mod common;

use std::collections::{HashMap, HashSet};
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::real_extension::{self, RealWorld};
use common::{Run, Running, assert_nowhere_but, system_node};

const CHROMIUM: &str = "/usr/lib/chromium/chromium";

#[test]
#[ignore = "a benchmark: scripts/bench.sh runs it"]
fn connect_and_disconnect_beside_the_raw_clis_attach() {
    let Some(source) = real_extension::source() else {
        return;
    };
    let rounds: usize = std::env::var("BENCH_CONNECT_RUNS")
        .ok()
        .map(|n| n.parse().expect("BENCH_CONNECT_RUNS is a number"))
        .unwrap_or(10);
    let extension = real_extension::build(&source, "0.3.0");
    let real = RealWorld::start(Some(extension));
    let token = real.world.token.clone();
    let mut runs = Vec::new();
    // The raw attach asks nobody: connect's consent page (the person
    // reads it for 1.5 s) would be timed on one side only. Turning it off
    // is a widening, so the person confirms it once, here.
    let off = real.sandbox().run(&["setup", "--connect-consent", "off"]);
    real.person.wait_done();
    assert_eq!(off.code, 0, "{}{}", off.stdout, off.stderr);
    runs.push(off);
    let raw = RawCli::new(&real, &token);

    // A round: my-chrome connect, disconnect; the raw attach, detach; one
    // core bundle load. One round to warm up (disk caches, the
    // extension's service worker), not counted. Both tools share the one
    // browser (my-chrome wants exactly one Chromium main), one client at
    // a time. Each round
    // leaves one tab in the browser per tool: my-chrome's blank tab (it
    // takes its connect tab out; disconnect only detaches) and the raw
    // attach's connect tab (the extension keeps it open, token in its
    // address). Nothing closes them, so the browser grows alike for both
    // tools and alternating keeps the rounds comparable.
    let mut t = Timings::default();
    for round in 0..=rounds {
        let (connected, connect) = timed(|| real.sandbox().run(&["connect"]));
        ok(&connected, "connect");
        runs.push(connected);
        let (gone, disconnect) = timed(|| real.sandbox().run(&["disconnect"]));
        ok(&gone, "disconnect");
        runs.push(gone);
        let attach = raw.run(&["attach", "--extension=chromium", "--session=raw"], true);
        let detach = raw.run(&["detach", "-s=raw"], false);
        raw.wait_daemon_gone();
        let core = raw.load_core_bundle();
        if round == 0 {
            continue;
        }
        t.connect.push(connect);
        t.disconnect.push(disconnect);
        t.attach.push(attach);
        t.detach.push(detach);
        t.core.push(core);
    }
    t.print(rounds);

    // The phases of one more connect, never a timed one.
    runs.extend(phases(&real));

    // The canary scan, with Chromium's profile left out (the extension
    // keeps the token; the raw attach's connect tabs carry it in their
    // address). The raw CLI's own files are scanned too: its attach prints
    // the connect tab's snapshot, URL and token included, but that went to
    // /dev/null, and it wrote the token to no file (its workspace, its
    // session folder, its daemon's `.err`) in the runs so far.
    let home = real.sandbox().home.path().to_path_buf();
    let profile = real.chrome.user_data();
    let exempt = [profile.as_path()];
    let all: Vec<&Run> = runs.iter().collect();
    assert_nowhere_but(&token, &home, &all, &exempt);
}

/// A my-chrome run that must have succeeded (its output never holds the
/// token: the canary scan checks it).
fn ok(run: &Run, what: &str) {
    assert_eq!(
        run.code, 0,
        "my-chrome {what}\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let out = f();
    (out, started.elapsed())
}

/// The raw pinned CLI as the tool my-chrome replaces runs it, with
/// pwcli.rs's environment (cleared, HOME the world's, private TMPDIR,
/// umask 077), in a workspace of its own beside the runtime (its sessions
/// are never in my-chrome's registry folder), its output sent nowhere: it
/// prints the token.
struct RawCli {
    cli: PathBuf,
    core_bundle: PathBuf,
    workspace: PathBuf,
    home: PathBuf,
    token: String,
}

impl RawCli {
    fn new(real: &RealWorld, token: &str) -> RawCli {
        let sandbox = real.sandbox();
        common::isolation::check_carried([], [(my_chrome::token_shape::VARIABLE, token)]);
        let home = sandbox.home.path().to_path_buf();
        let workspace = home.join("raw-workspace");
        fs::create_dir_all(workspace.join(".playwright")).unwrap();
        fs::create_dir_all(workspace.join("tmp")).unwrap();
        let modules = sandbox.runtime.join("cli/node_modules");
        RawCli {
            cli: modules.join("@playwright/cli/playwright-cli.js"),
            core_bundle: modules.join("playwright-core/lib/coreBundle.js"),
            workspace,
            home,
            token: token.to_string(),
        }
    }

    fn command(&self, with_token: bool) -> Command {
        let mut cmd = Command::new(system_node());
        cmd.current_dir(&self.workspace)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/bin:/bin")
            .env("TMPDIR", self.workspace.join("tmp"))
            .env("NO_UPDATE_NOTIFIER", "1")
            // As root the relay adds --no-sandbox to the Chromium it runs
            // only for the chromium channel: --extension=chrome fails here.
            .env("PLAYWRIGHT_MCP_EXECUTABLE_PATH", CHROMIUM)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        if with_token {
            cmd.env(my_chrome::token_shape::VARIABLE, &self.token);
        }
        // SAFETY: umask is async-signal-safe.
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o077));
                Ok(())
            });
        }
        cmd
    }

    /// Runs `playwright-cli args`; its time. Fails past 60 s or on an exit
    /// other than 0 (naming the arguments only: its output holds the token).
    fn run(&self, args: &[&str], with_token: bool) -> Duration {
        let mut cmd = self.command(with_token);
        cmd.arg(&self.cli).args(args);
        let started = Instant::now();
        let status = bounded(cmd, &format!("playwright-cli {args:?}"));
        let took = started.elapsed();
        assert!(status.success(), "playwright-cli {args:?}: {status}");
        took
    }

    /// One `node -e "require('<core>/lib/coreBundle.js')"`; its time.
    fn load_core_bundle(&self) -> Duration {
        let mut cmd = self.command(false);
        let path = self.core_bundle.display().to_string();
        assert!(!path.contains('\''), "{path}");
        cmd.arg("-e").arg(format!("require('{path}')"));
        let started = Instant::now();
        let status = bounded(cmd, "the core bundle's load");
        let took = started.elapsed();
        assert!(status.success(), "the core bundle's load: {status}");
        took
    }

    /// Processes the raw CLI started (client, daemon, the Chromium that
    /// forwards the connect URL): all run in its workspace.
    fn processes(&self) -> Vec<u32> {
        my_chrome::procs::ProcessTable::read()
            .unwrap()
            .iter()
            .filter(|p| p.cwd == Some(self.workspace.as_path()))
            .map(|p| p.pid)
            .collect()
    }

    /// After `detach`: its daemon (token in its environment) is gone, else
    /// the next connect's exposure check would rightly stop.
    fn wait_daemon_gone(&self) {
        real_extension::eventually("the raw CLI's daemon outlived its detach", || {
            self.processes().is_empty()
        });
    }
}

impl Drop for RawCli {
    /// A daemon left by a failed round holds the token in its environment:
    /// it must not outlive the benchmark.
    fn drop(&mut self) {
        for pid in self.processes() {
            let pid = nix::unistd::Pid::from_raw(pid as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// Runs `cmd` to its end, killing its group past 60 s.
fn bounded(mut cmd: Command, what: &str) -> std::process::ExitStatus {
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let group = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            panic!("{what} did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[derive(Default)]
struct Timings {
    connect: Vec<Duration>,
    disconnect: Vec<Duration>,
    attach: Vec<Duration>,
    detach: Vec<Duration>,
    core: Vec<Duration>,
}

/// The median in ms.
fn median(times: &[Duration]) -> f64 {
    let mut ms: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let n = ms.len();
    match n % 2 {
        1 => ms[n / 2],
        _ => (ms[n / 2 - 1] + ms[n / 2]) / 2.0,
    }
}

fn sums(a: &[Duration], b: &[Duration]) -> Vec<Duration> {
    a.iter().zip(b).map(|(x, y)| *x + *y).collect()
}

impl Timings {
    fn print(&self, rounds: usize) {
        let connect = median(&self.connect);
        let both = median(&sums(&self.connect, &self.disconnect));
        let attach = median(&self.attach);
        let raw_both = median(&sums(&self.attach, &self.detach));
        let core = median(&self.core);
        let line = |what: &str, ms: f64| println!("{what:<42} median {ms:7.0} ms");
        println!(
            "\nconnect on the real extension 0.3.0: {rounds} rounds, interleaved \
             (release build, one Chromium, one warm-up round not counted)"
        );
        line("my-chrome connect", connect);
        line("my-chrome disconnect", median(&self.disconnect));
        line("my-chrome connect + disconnect", both);
        line("raw playwright-cli attach --extension", attach);
        line("raw playwright-cli detach", median(&self.detach));
        line("raw attach + detach", raw_both);
        line("node: require(coreBundle.js)", core);
        println!(
            "ratio connect / raw attach:                {:.2}   (target: connect <= 1.0x raw attach)",
            connect / attach
        );
        println!(
            "ratio (connect+disconnect) / (raw attach+detach): {:.2}",
            both / raw_both
        );
        println!(
            "ratio connect / core bundle load:          {:.2}   (target: connect <= 3x core bundle load)",
            connect / core
        );
    }
}

/// One connect under strace (its processes, their Unix socket connects
/// and exits, in ms from its start), then its disconnect; their runs.
/// The clones are traced only to name a thread or a fork by the program
/// of the process it came from.
fn phases(real: &RealWorld) -> Vec<Run> {
    if !Path::new("/usr/bin/strace").exists() {
        println!("phases: n/a (strace missing)");
        return Vec::new();
    }
    // In the world's home, so that the canary scan reads it too.
    let log = real.sandbox().home.path().join("connect.strace");
    let log_arg = log.display().to_string();
    // --seccomp-bpf stops the tracees only at the calls traced: less
    // perturbed than stopping at every call.
    let wrapper = [
        "/usr/bin/strace",
        "-f",
        "--seccomp-bpf",
        "-ttt",
        "-s",
        "512",
        "-e",
        "trace=execve,connect,exit_group,clone,clone3,fork,vfork",
        "-o",
        log_arg.as_str(),
    ];
    let mut running = Running::start(real.sandbox().command_through(&wrapper, &["connect"]));
    // strace follows the session's daemon, which outlives connect: it ends
    // with the disconnect below, once connect itself has exited.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut events = None;
    while events.is_none() {
        if let Ok(Some(status)) = running.child.try_wait() {
            panic!("strace ended before connect did: {status}");
        }
        assert!(Instant::now() < deadline, "the traced connect never ended");
        std::thread::sleep(Duration::from_millis(50));
        events = Trace::parse(&fs::read_to_string(&log).unwrap_or_default());
    }
    let events = events.unwrap();
    let gone = real.sandbox().run(&["disconnect"]);
    ok(&gone, "disconnect (after the traced connect)");
    let deadline = Instant::now() + Duration::from_secs(60);
    while matches!(running.child.try_wait(), Ok(None)) {
        assert!(Instant::now() < deadline, "strace outlived the disconnect");
        std::thread::sleep(Duration::from_millis(50));
    }
    let connected = running.wait();
    ok(&connected, "connect (traced)");
    println!("\nphases of one connect (strace -f, not timed above; ms from its start):");
    for line in events {
        println!("  {line}");
    }
    vec![connected, gone]
}

/// What the phases print of an strace log: program basenames, a socket's
/// name and its folder's, exit codes; never an argument beyond the first
/// one's basename, nor anything sent.
struct Trace;

impl Trace {
    /// The lines to print, once the first process traced has exited.
    fn parse(log: &str) -> Option<Vec<String>> {
        let mut out = Vec::new();
        let mut start = None;
        let mut main = None;
        // pid → its label (from its last execve, else the process it was
        // cloned from), whether it ran a program itself, and its
        // unfinished call.
        let mut labels: HashMap<&str, String> = HashMap::new();
        let mut programs: HashSet<&str> = HashSet::new();
        let mut pending: HashMap<&str, (f64, &str)> = HashMap::new();
        for line in log.lines() {
            // "PID  SECONDS.MICROS CALL…"
            let Some((pid, rest)) = line.trim_start().split_once(' ') else {
                continue;
            };
            let Some((ts, call)) = rest.trim_start().split_once(' ') else {
                continue;
            };
            let Ok(ts) = ts.parse::<f64>() else {
                continue;
            };
            let start = *start.get_or_insert(ts);
            let main = *main.get_or_insert(pid);
            let at = |ts: f64| (ts - start) * 1000.0;
            // A call resumed: its start time and text, with the result.
            let (ts, call, result) = if call.starts_with("<... ") {
                let Some((began, text)) = pending.remove(pid) else {
                    continue;
                };
                (began, text, call.rsplit_once(") = ").map(|(_, r)| r))
            } else if call.ends_with("<unfinished ...>") {
                pending.insert(pid, (ts, call));
                continue;
            } else {
                (ts, call, call.rsplit_once(") = ").map(|(_, r)| r))
            };
            let proc = |labels: &HashMap<&str, String>| {
                labels
                    .get(pid)
                    .cloned()
                    .unwrap_or_else(|| format!("pid {pid}"))
            };
            if ["clone(", "clone3(", "fork(", "vfork("]
                .iter()
                .any(|c| call.starts_with(c))
            {
                if let (Some(child), Some(label)) =
                    (result.map(str::trim), labels.get(pid).cloned())
                    && child.bytes().all(|b| b.is_ascii_digit())
                {
                    // The child may have run its program before its
                    // parent's clone returned: its own label stays.
                    labels.entry(child).or_insert(label);
                }
            } else if let Some(args) = call.strip_prefix("execve(") {
                if result.map(str::trim) != Some("0") {
                    continue;
                }
                let strings = quoted(args);
                let program = strings.first().map(|p| basename(p)).unwrap_or_default();
                // The argv follows the path: its second element.
                let first = strings.get(2).map(|a| basename(a)).unwrap_or_default();
                let label = format!("{program} {first}").trim_end().to_string();
                out.push(format!("{:8.1}  execve   {label}", at(ts)));
                labels.insert(pid, label);
                programs.insert(pid);
            } else if let Some(args) = call.strip_prefix("connect(") {
                if !args.contains("sa_family=AF_UNIX") {
                    continue;
                }
                // Its folder's name too: glibc's `nscd/socket` and the
                // handoff's `…/socket` would read alike.
                let path = quoted(args)
                    .first()
                    .map(|p| {
                        let parent = Path::new(p)
                            .parent()
                            .map(|d| basename(&d.to_string_lossy()));
                        format!("{}/{}", parent.unwrap_or_default(), basename(p))
                    })
                    .unwrap_or_default();
                let result = result.unwrap_or("?").trim();
                let result = match result {
                    "0" => "ok",
                    r => r.split_whitespace().nth(1).unwrap_or(r),
                };
                out.push(format!(
                    "{:8.1}  connect  {path} ({result}) by {}",
                    at(ts),
                    proc(&labels)
                ));
            } else if let Some(code) = call
                .strip_prefix("+++ exited with ")
                .and_then(|c| c.strip_suffix(" +++"))
            {
                // Threads and forks that never ran a program of their own
                // say nothing.
                if programs.contains(pid) {
                    out.push(format!("{:8.1}  exit {code}   {}", at(ts), proc(&labels)));
                }
                if pid == main {
                    return Some(out);
                }
            }
        }
        None
    }
}

/// The strings in `text` in strace's quotes, unescaped enough for a
/// basename.
fn quoted(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut s = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => s.extend(chars.next()),
                '"' => break,
                c => s.push(c),
            }
        }
        found.push(s);
    }
    found
}

/// A path's last part; anything that is an address (the courier's connect
/// URL) is only named as one.
fn basename(arg: &str) -> String {
    if arg.contains("://") || arg.contains('?') {
        return "<url>".to_string();
    }
    Path::new(arg)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| arg.to_string())
}
