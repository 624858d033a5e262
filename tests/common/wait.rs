//! Waiting for an event a test can observe, instead of sleeping for it.

use std::time::{Duration, Instant};

/// Polls `seen` every 20 ms until it returns `Ok`, and returns its value;
/// if `within` passes first, fails the test saying that `what` did not
/// happen and what `seen` saw last (its `Err`). How long the wait took is
/// printed (shown with `--nocapture`).
pub fn until<T>(what: &str, within: Duration, mut seen: impl FnMut() -> Result<T, String>) -> T {
    let started = Instant::now();
    loop {
        match seen() {
            Ok(value) => {
                eprintln!("waited {} ms for {what}", started.elapsed().as_millis());
                return value;
            }
            Err(last) => assert!(
                started.elapsed() < within,
                "{what}: not within {} s; last seen: {last}",
                within.as_secs()
            ),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
