//! SIGINT, SIGTERM and SIGHUP do not kill my-chrome outright: they are
//! recorded, and every long wait (the wrapper lock, a child process) checks
//! for them, kills what it started, cleans up, and exits 128 + the signal.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use nix::sys::signal::Signal;

static PENDING: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

const HANDLED: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// Registers the handlers; call once, early in `main`.
pub fn install() -> std::io::Result<()> {
    let pending = PENDING.get_or_init(|| Arc::new(AtomicUsize::new(0)));
    for signal in HANDLED {
        signal_hook::flag::register_usize(signal as i32, Arc::clone(pending), signal as usize)?;
    }
    Ok(())
}

/// The last interrupting signal received, if any.
pub fn pending() -> Option<Signal> {
    let raw = PENDING.get()?.load(Ordering::SeqCst);
    if raw == 0 {
        None
    } else {
        Signal::try_from(raw as i32).ok()
    }
}
