//! Everything that differs between Linux and macOS, in one place, so that a
//! macOS reviewer reads `platform/macos*` and a Linux reviewer
//! `platform/linux*`; everything else in the crate is OS-neutral and names
//! these items as `crate::platform::X`, without a `cfg`. The two sides are
//! parallel: the same items with the same signatures, each saying why it
//! differs. (`tests/layout.rs` keeps `target_os` inside this module.)
//!
//! It imports nothing of the product but the browsers' names (foundation),
//! never `config`: configured values come in as parameters. The keyring
//! here is bytes in, bytes out; `token/` knows what the bytes are.

pub mod browsers;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
pub use macos::*;

// The one negation: every other system is refused at build time.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
compile_error!("my-chrome runs on Linux and macOS only: src/platform/ has no code for this system");

/// The child leads a session of its own (`setsid`), as a daemon started
/// `detached` by Node does: its process group is its pid, and no terminal
/// of ours is its controlling one. The same call on both systems.
pub fn own_session(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure makes one system call and
    // allocates nothing. std has no safe way to run code there.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(|| {
            nix::unistd::setsid()?;
            Ok(())
        });
    }
}

/// A clipboard tool: its fixed path and its arguments.
pub type Tool = (&'static str, &'static [&'static str]);

/// The platform's clipboard tools, at fixed paths only.
pub struct ClipboardTools {
    pub paste: Tool,
    pub clear: Tool,
}

/// Who is at the other end of a Unix stream.
#[derive(Clone, Copy, Debug)]
pub struct Peer {
    pub pid: i32,
    pub uid: u32,
}

/// A peer credential that could not be read: which one (`credentials`,
/// `pid`, `uid`), and why. Each caller makes its own error of it.
#[derive(Debug)]
pub struct PeerError {
    pub what: &'static str,
    pub source: nix::Error,
}

/// Why the keyring did not do as asked: the facts, each side's own hint
/// included; `token/store.rs` words the message.
#[derive(Debug)]
pub enum KeyringFault {
    /// It cannot be reached (no session bus, no daemon): which keyring,
    /// why, and what makes it reachable. Only the Secret Service can be:
    /// the Keychain is part of every macOS login.
    #[cfg_attr(
        target_os = "macos",
        expect(dead_code, reason = "the Keychain is always reachable")
    )]
    Unavailable {
        keyring: &'static str,
        why: String,
        next: &'static str,
    },
    /// It is locked: what unlocks it.
    Locked { unlock: &'static str },
    /// The user or the keyring refused access: why.
    Denied(String),
    /// Anything else: why.
    Failed(String),
}
