//! The headline check of invariant 3: a thread that reads every process's
//! command line and environment, over and over, until told to stop.

use std::fs;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

/// Samples `/proc/*/cmdline` and `/proc/*/environ` until the flag is set;
/// the handle returns how many rounds ran and where `secret` was seen.
pub fn sampler(secret: String) -> (Arc<AtomicBool>, thread::JoinHandle<(usize, Vec<String>)>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handle = thread::spawn(move || {
        let mut rounds = 0;
        let mut seen = Vec::new();
        while !flag.load(Ordering::SeqCst) {
            for entry in fs::read_dir("/proc").unwrap().flatten() {
                for part in ["cmdline", "environ"] {
                    let bytes = fs::read(entry.path().join(part)).unwrap_or_default();
                    if bytes.windows(secret.len()).any(|w| w == secret.as_bytes()) {
                        seen.push(format!("{} {part}", entry.path().display()));
                    }
                }
            }
            rounds += 1;
            thread::sleep(Duration::from_millis(2));
        }
        (rounds, seen)
    });
    (stop, handle)
}
