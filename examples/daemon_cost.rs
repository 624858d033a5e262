//! What the daemon itself costs a forwarded command: one `run` request for
//! `tab-list`, built and sent by the native client to our session's daemon
//! and its reply read, timed inside a fresh process, as `scripts/bench.sh`
//! runs it. Everything else `my-chrome tab-list` spends is its own start,
//! the lease and the checks. Prints microseconds.
//!
//! Usage: daemon_cost   (HOME and MY_CHROME_RUNTIME_DIR as for my-chrome,
//! with a connected session)

use std::time::{Duration, Instant};

use my_chrome::config::Config;
use my_chrome::daemon::request::{Plan, plan_words};
use my_chrome::helper::pin::Pin;
use my_chrome::runtime::Runtime;
use my_chrome::session::state::{SessionState, session_state};

fn main() {
    let config = Config::from_env().expect("configuration");
    let runtime = Runtime::open(&config.runtime).expect("the runtime");
    let core = Pin::shipped().core_version();
    let SessionState::Ready(entry) = session_state(&config.home, &runtime, &config.session, core)
    else {
        panic!("no connected session: run `my-chrome connect` first");
    };
    let cwd = std::fs::canonicalize(runtime.root()).expect("the runtime's real path");
    let started = Instant::now();
    let Plan::Run(request) = plan_words(&["tab-list".to_string()], &cwd) else {
        panic!("tab-list is sent to the daemon");
    };
    my_chrome::daemon::run(
        &entry.socket_path,
        &request.bytes,
        Duration::from_secs(30),
        16 << 20,
    )
    .expect("a reply");
    println!("{}", started.elapsed().as_micros());
}
