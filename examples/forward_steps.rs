//! Where my-chrome's own time goes in a forwarded command: the library
//! steps `my-chrome eval 1` goes through (src/main.rs, then
//! `command::forward::forward`), each timed inside a fresh process, in the
//! product's order, with the product's own pub functions, as
//! `scripts/bench.sh` runs it. The daemon is asked nothing but the probe
//! `take_turn` sends: the tab lists around the command are read from a
//! fixed reply and the book loaded and saved as the desk does (their round
//! trips are scripts/spans.py's part). Prints the reply as my-chrome would,
//! then one `step<TAB>microseconds` line per step; a step that no pub
//! function reaches is `n/a (private)`.
//!
//! With `FORWARD_STEPS_START=pieces`, `Start::open` and `take_turn` are
//! replaced by their pub pieces in their order (the runtime, the helper's
//! supported check, the children's environment, the settings, the tree
//! against its record, the record of a connect that died; the session
//! read, the probe, the lease, the session read again): what each costs on
//! a first call. What they do that no pub function reaches is
//! `n/a (private)`.
//!
//! Usage: forward_steps eval 1   (HOME and MY_CHROME_RUNTIME_DIR as for
//! my-chrome, with a registered session whose book exists: run
//! `my-chrome eval 1` first)

use std::any::Any;
use std::path::{Path, PathBuf};
use std::time::Instant;

use my_chrome::child::ChildEnv;
use my_chrome::config::Config;
use my_chrome::daemon::request::{self, Plan};
use my_chrome::helper::Helper;
use my_chrome::helper::check::Check;
use my_chrome::helper::pin::Pin;
use my_chrome::lease::Kind;
use my_chrome::operation::start::{Need, Start};
use my_chrome::output::{self, Stream};
use my_chrome::policy::line::Line;
use my_chrome::runtime::{Runtime, StateFile};
use my_chrome::session::state::{SessionState, registered_state};
use my_chrome::staged_files::Outputs;
use my_chrome::tabs::listing::{self, Rewrite, Shown};

/// The steps, each with its time, in order.
#[derive(Default)]
struct Steps(Vec<(&'static str, Option<u128>)>);

impl Steps {
    fn time<T>(&mut self, name: &'static str, step: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let done = step();
        self.0.push((name, Some(started.elapsed().as_micros())));
        done
    }

    fn private(&mut self, name: &'static str) {
        self.0.push((name, None));
    }
}

fn main() {
    let mut steps = Steps::default();
    let whole = Instant::now();
    let cli = steps.time("parse the arguments (clap)", || {
        my_chrome::cli::parse().unwrap_or_else(|_| panic!("usage: forward_steps eval 1"))
    });
    let my_chrome::cli::Command::External(raw) = cli.command else {
        panic!("usage: forward_steps eval 1");
    };
    steps.time("signal handlers", || {
        my_chrome::signals::install().expect("handlers")
    });
    let config = steps.time("configuration (Config::from_env)", || {
        let config = Config::from_env().expect("configuration");
        output::init(&config.runtime);
        config
    });
    let words: Vec<String> = raw
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let line = steps.time("the line, read once (Line::read)", || {
        Line::read(&words, &config.session).expect("a line we forward")
    });
    steps.time("settings (settings::of)", || {
        my_chrome::settings::of(&config.runtime).expect("the settings")
    });
    steps.private("file rules (FileRules::refusal)");
    let pieces = std::env::var_os("FORWARD_STEPS_START").is_some_and(|v| v == "pieces");
    // The turn, however it was taken: it ends when this is dropped.
    let (runtime, cwd, turn): (Runtime, PathBuf, Box<dyn Any>) = if pieces {
        in_pieces(&mut steps, &config, &line)
    } else {
        let started = steps.time("runtime and helper checks (Start::open)", || {
            Start::new(&config, Check::Supported)
                .on_session()
                .open()
                .expect("the start")
        });
        let cwd = steps.time("the request (daemon_cwd, request::plan)", || {
            let cwd = started.daemon_cwd().expect("the runtime's real path");
            planned(&line, &cwd);
            cwd
        });
        let (turn, _session) = steps.time("the turn, taken (take_turn)", || {
            started
                .take_turn("eval", Need::Registered)
                .expect("the turn")
        });
        (turn.runtime.clone(), cwd, Box::new(turn))
    };
    // What the daemon lists around the command: the instant daemon's list
    // after the agent's first command.
    let list = "### Result\n- 0: [t](about:blank)\n- 1: (current) [t1](about:blank)";
    // As the desk reads a list: the fingerprint first, every header
    // through the redactor (its first use compiles its patterns).
    let seen = || {
        let known = my_chrome::redact::fingerprint::recorded(&runtime).expect("the fingerprint");
        let mut seen = listing::parse_list(list).expect("a tab list");
        for tab in &mut seen {
            tab.header = my_chrome::redact::redact_value(&tab.header, known.as_ref());
        }
        seen
    };
    let before = steps.time(
        "tab list read (fingerprint, parse_list, redact_value)",
        seen,
    );
    let mut book = steps.time(
        "tab book loaded and synced (tabs::load, Book::sync)",
        || {
            let mut book = my_chrome::tabs::load(&runtime)
                .expect("the book")
                .expect("a book: run `my-chrome eval 1` first");
            book.sync(&before, None);
            book
        },
    );
    let (outputs, _) = steps.time("output files staged (Outputs::stage)", || {
        Outputs::stage(&runtime, &cwd, line.parsed(), 1).expect("staged")
    });
    steps.time("tab list after, read and synced (as above)", || {
        book.sync(&seen(), None)
    });
    steps.time("tab book saved (tabs::save)", || {
        my_chrome::tabs::save(&runtime, &book).expect("saved")
    });
    let text = steps.time(
        "reply narrowed (fingerprint, deliver, rewrite_text)",
        || {
            let known =
                my_chrome::redact::fingerprint::recorded(&runtime).expect("the fingerprint");
            let own = [Shown::new(1, 1, None, true, "[t1](about:blank)")];
            let how = Rewrite {
                own: &own,
                tab_command: false,
            };
            outputs.deliver(known.as_ref()).expect("delivered");
            listing::rewrite_text("### Result\n1", &how)
        },
    );
    steps.time("reply printed (output::text, redacted)", || {
        output::text(Stream::Out, &[&text, "\n"])
    });
    steps.time("the turn, ended (lease drop)", || drop(turn));
    let total = whole.elapsed().as_micros();
    for (name, took) in steps.0 {
        match took {
            Some(us) => println!("{name}\t{us}"),
            None => println!("{name}\tn/a (private)"),
        }
    }
    println!("all of the above\t{total}");
}

/// The request `forward` builds from the line.
fn planned(line: &Line, cwd: &Path) {
    let Plan::Run(request) = request::plan(line.parsed().clone(), cwd) else {
        panic!("not sent to the daemon");
    };
    assert!(!request.bytes.is_empty());
}

/// `Start::new(..).on_session().open()` and `take_turn`, step by step
/// (their pub pieces, in their order).
fn in_pieces(steps: &mut Steps, config: &Config, line: &Line) -> (Runtime, PathBuf, Box<dyn Any>) {
    let runtime = steps.time("start: the runtime (Runtime::open)", || {
        Runtime::open(&config.runtime).expect("the runtime")
    });
    let helper = Helper::at(runtime.cli_dir());
    steps.time("start: helper supported (Helper::check)", || {
        helper
            .check(Pin::shipped(), Check::Supported)
            .expect("a supported helper")
    });
    steps.time("start: children's environment (ChildEnv::new)", || {
        ChildEnv::new(config, &runtime.tmp_dir())
    });
    steps.time("start: settings (settings::load)", || {
        my_chrome::settings::load(&runtime).expect("the settings")
    });
    steps.time("start: tree as recorded (Helper::unchanged)", || {
        assert!(helper.unchanged(&runtime).expect("unchanged"), "no record")
    });
    steps.time("start: no connect died (read_state)", || {
        runtime
            .read_state(StateFile::Bootstrap)
            .expect("the record")
    });
    let cwd = steps.time("the request (daemon_cwd, request::plan)", || {
        let cwd = std::fs::canonicalize(runtime.root()).expect("the runtime's real path");
        planned(line, &cwd);
        cwd
    });
    let core = Pin::shipped().core_version();
    let registered = || {
        let SessionState::Ready(entry) =
            registered_state(&config.home, &runtime, &config.session, core)
        else {
            panic!("no registered session: start examples/instant_daemon first");
        };
        entry
    };
    let entry = steps.time("turn: session read (registered_state)", registered);
    steps.time("turn: the probe (SessionEntry::refused)", || {
        assert!(entry.refused().is_none(), "the daemon does not answer")
    });
    let who = steps.time("turn: who is asking (identity::establish)", || {
        let session = my_chrome::tabs::session_key(&entry.socket_path).expect("the session");
        let gone_after = my_chrome::settings::DEFAULT_AGENT_GONE;
        my_chrome::identity::establish(config, &runtime, &session, gone_after)
            .expect("the agent's name")
    });
    let lease = steps.time("turn: the lease (lease::acquire)", || {
        my_chrome::lease::acquire(config, &runtime, &who.name, "eval", Kind::Browser)
            .expect("the turn")
    });
    steps.private("turn: recover, within limits (Started::recover, Turn::within_limits)");
    steps.time("turn: session read again (registered_state)", registered);
    (runtime, cwd, Box::new(lease))
}
