//! What the session's turn costs one forwarded command: one uncontended
//! take and release of its lock (`lease::acquire`, the end logged on drop), timed inside a
//! fresh process, as `scripts/bench.sh` runs it. Prints microseconds.
//!
//! Usage: lease_cost RUNTIME_DIR [AGENT]   (no AGENT: the derived name)

use std::ffi::OsString;
use std::time::Instant;

use my_chrome::config::Config;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let home = std::env::var_os("HOME").expect("HOME");
    let mut vars: Vec<(OsString, OsString)> = vec![
        ("HOME".into(), home),
        ("MY_CHROME_RUNTIME_DIR".into(), args[0].clone().into()),
    ];
    if let Some(agent) = args.get(1) {
        vars.push(("MY_CHROME_AGENT".into(), agent.into()));
    }
    let config = Config::from_vars(vars).expect("configuration");
    let runtime = my_chrome::runtime::Runtime::open(&config.runtime).expect("the runtime");
    let started = Instant::now();
    // The name as given, unproven: `identity_cost` measures the proof.
    let agent = my_chrome::identity::said(&config);
    let held = my_chrome::lease::acquire(
        &config,
        &runtime,
        &agent,
        "tab-list",
        my_chrome::lease::Kind::Browser,
    )
    .expect("the turn");
    drop(held);
    println!("{}", started.elapsed().as_micros());
}
