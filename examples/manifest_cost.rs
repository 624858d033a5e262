//! What the helper check costs a forwarded command: reading the record of
//! the verified tree and comparing the whole `<runtime>/cli` with it, timed
//! inside a fresh process, as `scripts/bench.sh` runs it. Prints
//! microseconds.
//!
//! Usage: manifest_cost RUNTIME_DIR   (a runtime after `my-chrome setup`)

use std::time::Instant;

use my_chrome::config::RuntimeLocation;
use my_chrome::helper::Helper;
use my_chrome::runtime::Runtime;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: manifest_cost RUNTIME_DIR");
    let runtime = Runtime::open(&RuntimeLocation { path: path.into() }).expect("the runtime");
    let started = Instant::now();
    let recorded = Helper::at(runtime.cli_dir())
        .unchanged(&runtime)
        .expect("an unchanged tree");
    let took = started.elapsed().as_micros();
    assert!(recorded, "no record: run `my-chrome setup` first");
    println!("{took}");
}
