//! What the checks that keep a misled agent in its own tabs cost a
//! forwarded command, timed inside a fresh process as `scripts/bench.sh`
//! runs it: the line read once (`Line::read`) and its request built, the
//! user's settings read, the stored token's fingerprint read (every tab
//! header is kept redacted), a tab list of ten headers redacted, the
//! command's output files staged (none here: a read), and a reply printed
//! through the redactor as JSON (a 4 KiB `--json` snapshot reply, to a
//! sink). Prints microseconds.
//!
//! Usage: checks_cost   (HOME and MY_CHROME_RUNTIME_DIR as for my-chrome,
//! with an installed runtime)

use std::time::Instant;

use my_chrome::config::Config;
use my_chrome::daemon::request::{self, Plan};
use my_chrome::policy::line::Line;
use my_chrome::runtime::Runtime;
use my_chrome::staged_files::Outputs;

fn main() {
    let config = Config::from_env().expect("configuration");
    let runtime = Runtime::open(&config.runtime).expect("the runtime");
    let cwd = std::fs::canonicalize(runtime.root()).expect("the runtime's real path");
    let words: Vec<String> = ["--json", "snapshot", "--tab", "t3", "--depth", "4"]
        .map(String::from)
        .into();
    let headers: Vec<String> = (0..10)
        .map(|i| format!("[Page {i} of a site](https://site-{i}.example.test/path?q={i})"))
        .collect();
    let reply = serde_json::json!({
        "snapshot": "- generic [ref=e1]:\n".repeat(200),
        "page": { "url": "https://example.test/", "title": "A page \u{9b}" }
    })
    .to_string();
    let started = Instant::now();
    let line = Line::read(&words, &config.session).expect("a line we forward");
    let Plan::Run(_) = request::plan(line.parsed().clone(), &cwd) else {
        panic!("not sent")
    };
    let settings = my_chrome::settings::load(&runtime).expect("the settings");
    let known = my_chrome::redact::fingerprint::recorded(&runtime).expect("the fingerprint");
    let redacted: usize = headers
        .iter()
        .map(|h| my_chrome::redact::redact_value(h, known.as_ref()).len())
        .sum();
    let (outputs, _) = Outputs::stage(&runtime, &cwd, line.parsed(), 1).expect("staged");
    outputs.discard();
    let printed = my_chrome::redact::json::redact(&reply, known.as_ref()).expect("JSON");
    let spent = started.elapsed();
    assert!(redacted > 0 && !printed.is_empty() && settings.agent_gone.as_secs() > 0);
    println!("{}", spent.as_micros());
}
