//! Waiting for processes to be gone.

use std::fs;
use std::time::{Duration, Instant};

/// Whether a process is gone: no longer in /proc, or a zombie whose every
/// thread has exited (a multithreaded process's leader turns zombie while its
/// other threads still hold its files).
pub fn process_gone(pid: &str) -> bool {
    let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) else {
        return true;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    field("State:").starts_with('Z') && field("Threads:").parse::<u32>().unwrap_or(0) <= 1
}

pub fn wait_gone(pid: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !process_gone(pid) {
        assert!(Instant::now() < deadline, "process {pid} is still running");
        std::thread::sleep(Duration::from_millis(20));
    }
}
