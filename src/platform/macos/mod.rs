//! macOS: Google Chrome's app bundle, `~/Library`, the login Keychain,
//! `pbpaste`/`pbcopy`, `LOCAL_PEERPID` and `getpeereid`. Parallel to
//! `platform/linux/`: same items, same signatures. Type-checked here
//! (the macOS clippy), not run: keep it small enough to check by eye.

mod keychain;

pub use keychain::Keyring;

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::platform::browsers::Places;
use crate::platform::{ClipboardTools, Peer, PeerError};

/// Where each named browser lives on macOS (`platform/browsers.rs`).
pub const BROWSERS: &[Places] = crate::platform::browsers::MACOS;

/// The runtime's default place: macOS's per-user caches folder.
pub const DEFAULT_RUNTIME_UNDER_HOME: &str = "Library/Caches/my-chrome";

/// Where the Playwright CLI keeps its session registry: Playwright's cache
/// directory on macOS, `~/Library/Caches` (only `HOME` counts).
pub const CACHE_UNDER_HOME: &str = "Library/Caches";

/// Folders under the home directory that hold other programs' data
/// (browser profiles, keychains, launch agents), refused whatever the
/// roots. Hidden folders (`~/.ssh`, `~/.config`, …) are refused by the
/// hidden-file rule. On macOS all of it is under the visible `~/Library`.
pub const APP_DATA_UNDER_HOME: [&str; 1] = ["Library"];

/// The platform npm names in a package's `os` and in `tree.sha256`.
pub const NPM_PLATFORM: &str = "darwin";

/// System places of a trusted node, in order of preference: Homebrew on
/// Apple silicon, then `/usr/local` (Homebrew on Intel, the official
/// installer). macOS ships no node of its own.
pub const SYSTEM_NODES: [&str; 2] = ["/opt/homebrew/bin/node", "/usr/local/bin/node"];

/// Where browsers keep their user data directories: macOS browsers keep
/// them under Application Support, whatever `XDG_CONFIG_HOME` says (so that
/// variable, checked or not, is not looked at).
pub fn user_data_base<E>(
    home: &Path,
    _xdg_config: Option<Result<PathBuf, E>>,
) -> Result<PathBuf, E> {
    Ok(home.join("Library/Application Support"))
}

/// macOS has no way to make a child die with its parent (no
/// `PR_SET_PDEATHSIG`): there the recovery by private paths is all.
pub fn die_with_parent(_command: &mut Command) {}

/// Whether the peer has read every byte written to a Unix stream: macOS
/// has no count of what the peer has not read (`SO_NWRITE` empties at
/// once on a local socket), so it cannot be told.
pub fn peer_read_all(_stream: &UnixStream) -> Option<bool> {
    None
}

/// The pid and uid of a Unix stream's peer: macOS has no `SO_PEERCRED`, so
/// the pid comes from `LOCAL_PEERPID` and the uid from `getpeereid`.
pub fn peer_credentials(stream: &UnixStream) -> Result<Peer, PeerError> {
    use nix::sys::socket::{getsockopt, sockopt::LocalPeerPid};
    let pid = getsockopt(stream, LocalPeerPid).map_err(|source| PeerError {
        what: "pid",
        source,
    })?;
    let (uid, _) = nix::unistd::getpeereid(stream).map_err(|source| PeerError {
        what: "uid",
        source,
    })?;
    Ok(Peer {
        pid,
        uid: uid.as_raw(),
    })
}

/// macOS has one clipboard, always there: `pbpaste`/`pbcopy` from
/// `/usr/bin` (`wayland` and `x11` do not apply).
pub fn clipboard_tools(_wayland: bool, _x11: bool) -> Result<ClipboardTools, &'static str> {
    Ok(ClipboardTools {
        paste: ("/usr/bin/pbpaste", &[]),
        clear: ("/usr/bin/pbcopy", &[]),
    })
}

/// Puts the file `temp` at `target` in one step, `target` never missing
/// between: a rename (APFS does not flush a file renamed over another, as
/// ext4 does on Linux).
pub fn replace_file(temp: &Path, target: &Path) -> std::io::Result<()> {
    std::fs::rename(temp, target)
}

/// Mount points a device number would not show: none on macOS, which has
/// no bind mounts (every other mount has a device of its own, which the
/// survey compares).
pub fn mount_points() -> std::io::Result<Vec<PathBuf>> {
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_data_ignores_xdg_config_home() {
        let home = Path::new("/Users/u");
        let base = PathBuf::from("/Users/u/Library/Application Support");
        assert_eq!(user_data_base::<()>(home, None), Ok(base.clone()));
        assert_eq!(user_data_base(home, Some(Err("bad"))), Ok(base));
    }

    #[test]
    fn a_peer_is_read_as_pid_and_uid() {
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let peer = peer_credentials(&ours).unwrap();
        assert_eq!(peer.pid, nix::unistd::getpid().as_raw());
        assert_eq!(peer.uid, nix::unistd::geteuid().as_raw());
    }

    #[test]
    fn the_clipboard_needs_no_display() {
        assert_eq!(
            clipboard_tools(false, false).unwrap().paste.0,
            "/usr/bin/pbpaste"
        );
    }
}

/// Whether the process table read here is this process's own: the kernel
/// answers for the caller itself (libproc, sysctl), there is no /proc to
/// mount over and no PID namespace.
pub fn process_table_is_ours() -> bool {
    true
}

/// macOS has no PID namespaces.
pub fn in_pid_namespace_of_its_own() -> bool {
    false
}
