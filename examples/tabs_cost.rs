//! What keeping each agent in its own tabs costs a forwarded command: the
//! work `my-chrome` adds around the agent's own request (the tab list
//! before, the book read and checked, the agent's tab selected when it is
//! not current, the tabs read again after — from the reply when it proves
//! them, src/tabs/proof.rs, else listed —, the book written), timed inside a
//! fresh process, as `scripts/bench.sh` runs it. The agent's own request
//! (`eval 1` by default, or the words given) is sent, as the product sends
//! it, and its time left out; the turn (the session's lock) is taken first
//! and not counted: `lease_cost` measures it. Prints microseconds, then how
//! the tabs after were known (`Unchanged`, `InReply` or `Again`).
//!
//! Usage: tabs_cost [WORDS...]   (HOME, MY_CHROME_RUNTIME_DIR and
//! MY_CHROME_AGENT, with its key, as for my-chrome, with a connected
//! session in which the agent has a tab)

use std::time::{Duration, Instant};

use my_chrome::config::Config;
use my_chrome::daemon;
use my_chrome::daemon::request::{Mode, Plan, plan_words};
use my_chrome::helper::pin::Pin;
use my_chrome::runtime::Runtime;
use my_chrome::session::state::{SessionState, registered_state};
use my_chrome::tabs::Desk;
use my_chrome::tabs::book::During;
use my_chrome::tabs::proof;

fn main() {
    let mut words: Vec<String> = std::env::args().skip(1).collect();
    if words.is_empty() {
        words = vec!["eval".into(), "1".into()];
    }
    let config = Config::from_env().expect("configuration");
    let runtime = Runtime::open(&config.runtime).expect("the runtime");
    let core = Pin::shipped().core_version();
    let SessionState::Ready(entry) =
        registered_state(&config.home, &runtime, &config.session, core)
    else {
        panic!("no connected session: run `my-chrome connect` first");
    };
    let cwd = std::fs::canonicalize(runtime.root()).expect("the runtime's real path");
    let Plan::Run(request) = plan_words(&words, &cwd) else {
        panic!("{words:?} is no daemon request");
    };
    // Who is asking, proven as a command proves it (not counted:
    // `identity_cost` measures it).
    let session = my_chrome::tabs::session_key(&entry.socket_path).expect("the session");
    let gone_after = my_chrome::settings::DEFAULT_AGENT_GONE;
    let who = my_chrome::identity::establish(&config, &runtime, &session, gone_after)
        .expect("the agent's name");
    let held = my_chrome::lease::acquire(
        &config,
        &runtime,
        &who.name,
        &words[0],
        my_chrome::lease::Kind::Browser,
    )
    .expect("the turn");
    let started = Instant::now();
    let budget = my_chrome::daemon::Housekeeping::new(Duration::from_secs(30));
    let mut desk = Desk::open(
        &held,
        who.registration,
        &runtime,
        &entry.socket_path,
        &cwd,
        my_chrome::tabs::Bounds {
            housekeeping: budget,
            command: config.command_timeout,
            gone_after: my_chrome::settings::DEFAULT_AGENT_GONE,
            caps: (
                my_chrome::settings::DEFAULT_AGENT_TABS,
                my_chrome::settings::DEFAULT_SESSION_TABS,
            ),
        },
        my_chrome::tabs::After::Command,
    )
    .expect("the tabs");
    desk.touch(&words[0]);
    let id = desk.target(None).expect("the agent's tab");
    desk.select(id).expect("selected");
    let sent = Instant::now();
    let reply = daemon::run_command(
        &entry.socket_path,
        &request.bytes,
        config.command_timeout,
        config.reply_limit,
        &mut |_| {},
    )
    .unwrap_or_else(|_| panic!("{words:?} was not answered"));
    let command = sent.elapsed();
    let proof = proof::of_reply(&reply, request.mode() == Mode::Text);
    let agent = desk.agent.clone();
    let listed = desk
        .after(
            proof,
            &During {
                agent: &agent,
                acted_on: Some(id),
                closed: None,
                opens: true,
                moves_current: false,
            },
        )
        .expect("the tabs after");
    desk.save().expect("the book");
    let ours = started.elapsed().saturating_sub(command);
    println!("{}\t{listed:?}", ours.as_micros());
}
