//! Work done once per test run, however the tests are run. Under
//! `cargo test` a test binary is one process, so a caller's `OnceLock`
//! is enough (the lock below still keeps two binaries run at once apart);
//! under `cargo nextest run` (scripts/test.sh) every test is a process of
//! its own, so the run's id (`NEXTEST_RUN_ID`) is stamped beside the work,
//! under a lock, and the next test of the same run finds it done.

use std::fs;
use std::path::Path;

/// Runs `work` unless this nextest run already did it: under a lock in
/// Cargo's test scratch directory (`<name>.lock`), so that tests waiting
/// for it wait until it is whole. Work that panics is stamped as failed:
/// every later test of the run stops at once, pointing at the first one's
/// output, instead of each trying again in turn.
pub fn once_per_run(name: &str, work: impl FnOnce()) {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
    fs::create_dir_all(scratch).unwrap();
    let lock = fs::File::create(scratch.join(format!("{name}.lock"))).unwrap();
    let _guard = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive).unwrap();
    let stamp = scratch.join(format!("{name}.run"));
    let Ok(run) = std::env::var("NEXTEST_RUN_ID") else {
        return work();
    };
    let failed = format!("failed {run}");
    match fs::read_to_string(&stamp) {
        Ok(done) if done == run => return,
        Ok(done) if done == failed => {
            panic!("{name} failed earlier in this run: the first test that ran it says why")
        }
        _ => {}
    }
    let _ = fs::remove_file(&stamp);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    fs::write(&stamp, if outcome.is_ok() { &run } else { &failed }).unwrap();
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}
