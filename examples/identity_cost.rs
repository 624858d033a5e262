//! What proving who is asking costs a forwarded command: the caller's name
//! shown to the session's registry of agent names (`identity::establish`:
//! its lock, the registry read, a chosen name's key opened against its
//! salted hash, the registry written back), timed inside a fresh process,
//! as `scripts/bench.sh` runs it. Prints microseconds. A chosen name's
//! first run registers it and prints its key on stderr (as my-chrome
//! does); later runs carry `NAME:KEY`.
//!
//! Usage: identity_cost RUNTIME_DIR [NAME[:KEY]]   (no NAME: the derived name)

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
    let gone_after = my_chrome::settings::DEFAULT_AGENT_GONE;
    let started = Instant::now();
    let who = my_chrome::identity::establish(&config, &runtime, "bench-session", gone_after)
        .expect("the agent's name");
    let spent = started.elapsed();
    assert!(who.registration.is_some());
    println!("{}", spent.as_micros());
}
