//! Linux: Google Chrome's packages, the XDG base directories, the
//! freedesktop Secret Service, Wayland or X11 clipboards, `prctl` and
//! `SO_PEERCRED`. Parallel to `platform/macos/`: same items, same signatures.

mod secret_service;

pub use secret_service::Keyring;

use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use nix::sys::signal::Signal;

use crate::platform::browsers::Places;
use crate::platform::{ClipboardTools, Peer, PeerError};

/// Where each named browser lives on Linux (`platform/browsers.rs`).
pub const BROWSERS: &[Places] = crate::platform::browsers::LINUX;

/// The runtime's default place: Linux's usual cache directory, `~/.cache`.
pub const DEFAULT_RUNTIME_UNDER_HOME: &str = ".cache/my-chrome";

/// Where the Playwright CLI keeps its session registry: Playwright's cache
/// directory on Linux, `~/.cache` (our children never see `XDG_CACHE_HOME`,
/// so only `HOME` counts).
pub const CACHE_UNDER_HOME: &str = ".cache";

/// Folders under the home directory that hold other programs' data
/// (browser profiles, keychains, launch agents), refused whatever the
/// roots. Hidden folders (`~/.config`, `~/.local/share/keyrings`, …) are
/// refused by the hidden-file rule. On Linux the one visible such folder is
/// `~/snap`: every snap's own home, Chromium's profile included.
pub const APP_DATA_UNDER_HOME: [&str; 1] = ["snap"];

/// The platform npm names in a package's `os` and in `tree.sha256`.
pub const NPM_PLATFORM: &str = "linux";

/// System places of a trusted node, in order of preference: the official
/// tarball's usual place, then the distribution's package.
pub const SYSTEM_NODES: [&str; 2] = ["/usr/local/bin/node", "/usr/bin/node"];

/// Where browsers keep their user data directories: Linux follows the XDG
/// base directories, `$XDG_CONFIG_HOME` (as config checked it: its error is
/// the answer) or else `~/.config`.
pub fn user_data_base<E>(
    home: &Path,
    xdg_config: Option<Result<PathBuf, E>>,
) -> Result<PathBuf, E> {
    match xdg_config {
        Some(checked) => checked,
        None => Ok(home.join(".config")),
    }
}

/// The child gets SIGKILL when my-chrome dies, however it dies. (Only the
/// child itself: what it starts on purpose, such as the CLI's daemon, is
/// found again by its private paths.) Linux has `PR_SET_PDEATHSIG` for it.
pub fn die_with_parent(command: &mut Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: between fork and exec the closure makes two system calls and
    // allocates nothing. std has no safe way to run code there.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            // my-chrome may have died before the call above took effect.
            if nix::unistd::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(nix::libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Whether the peer has read every byte written to a Unix stream: Linux
/// counts what is written and not yet read (`SIOCOUTQ`). `None` when it
/// cannot be asked.
pub fn peer_read_all(stream: &UnixStream) -> Option<bool> {
    use std::os::fd::AsRawFd;
    let mut unread: nix::libc::c_int = 0;
    // SAFETY: the ioctl writes one int through a pointer to a live one, on
    // a descriptor the stream owns. Neither std nor nix asks it safely.
    #[allow(unsafe_code)]
    let done = unsafe {
        nix::libc::ioctl(
            stream.as_raw_fd(),
            nix::libc::TIOCOUTQ,
            &mut unread as *mut nix::libc::c_int,
        )
    };
    (done == 0).then_some(unread == 0)
}

/// The pid and uid of a Unix stream's peer: Linux reads both at once
/// (`SO_PEERCRED`).
pub fn peer_credentials(stream: &UnixStream) -> Result<Peer, PeerError> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    let creds = getsockopt(stream, PeerCredentials).map_err(|source| PeerError {
        what: "credentials",
        source,
    })?;
    Ok(Peer {
        pid: creds.pid(),
        uid: creds.uid(),
    })
}

/// Linux has a clipboard per display server: `wl-paste`/`wl-copy` under
/// Wayland (`wayland`: its variables are set), else `xclip` under X11
/// (`x11`), from `/usr/bin`. Without either there is no clipboard to read.
pub fn clipboard_tools(wayland: bool, x11: bool) -> Result<ClipboardTools, &'static str> {
    if wayland {
        Ok(ClipboardTools {
            paste: ("/usr/bin/wl-paste", &["--no-newline"]),
            clear: ("/usr/bin/wl-copy", &["--clear"]),
        })
    } else if x11 {
        Ok(ClipboardTools {
            paste: ("/usr/bin/xclip", &["-selection", "clipboard", "-o"]),
            clear: ("/usr/bin/xclip", &["-selection", "clipboard", "-i"]),
        })
    } else {
        Err("no display: neither WAYLAND_DISPLAY (with XDG_RUNTIME_DIR) nor DISPLAY is set")
    }
}

/// Puts the file `temp` at `target` in one step, `target` never missing
/// between: an exchange (`RENAME_EXCHANGE`), then the old file, now at
/// `temp`, removed. A rename over an existing file would do the same, but
/// ext4 flushes a file renamed over another (its guard for programs that
/// skip `fsync`), which cost each state write about 0.3 ms here; the files
/// that must reach the disk are synced before this anyway. A rename when
/// there is nothing to exchange with or the file system cannot exchange. A
/// directory at `target` is put back and refused, as a rename refuses it.
pub fn replace_file(temp: &Path, target: &Path) -> std::io::Result<()> {
    use nix::errno::Errno;
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    let exchange = || {
        renameat2(
            AT_FDCWD,
            temp,
            AT_FDCWD,
            target,
            RenameFlags::RENAME_EXCHANGE,
        )
    };
    match exchange() {
        Ok(()) => {}
        Err(Errno::ENOENT | Errno::EINVAL | Errno::ENOSYS) => return std::fs::rename(temp, target),
        Err(e) => return Err(e.into()),
    }
    std::fs::remove_file(temp).inspect_err(|_| {
        let _ = exchange();
    })
}

/// Every mount point this process sees (`/proc/self/mountinfo`): a bind
/// mount keeps its source's device number, so only this list shows it.
/// Read as bytes: a mount point's name need not be UTF-8.
pub fn mount_points() -> std::io::Result<Vec<PathBuf>> {
    use std::os::unix::ffi::OsStringExt;
    let table = std::fs::read("/proc/self/mountinfo")?;
    Ok(table
        .split(|b| *b == b'\n')
        .filter_map(|line| line.split(|b| *b == b' ').nth(4))
        .map(|field| PathBuf::from(std::ffi::OsString::from_vec(unescape_mount_field(field))))
        .collect())
}

/// mountinfo writes a space, tab, newline and backslash as `\040`, `\011`,
/// `\012` and `\134`.
fn unescape_mount_field(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let code = field
            .get(i + 1..i + 4)
            .filter(|_| field[i] == b'\\')
            .and_then(|c| std::str::from_utf8(c).ok())
            .and_then(|c| u8::from_str_radix(c, 8).ok());
        match code {
            Some(byte) => {
                out.push(byte);
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    out
}

/// The inode of the kernel's first PID namespace (`PROC_PID_INIT_INO`),
/// the same on every Linux system.
const FIRST_PID_NAMESPACE: &str = "pid:[4026531836]";

/// Whether this process runs in a PID namespace below the system's own (an
/// agent host's sandbox, a container): there, its ancestry shows nothing
/// of what started the namespace.
pub fn in_pid_namespace_of_its_own() -> bool {
    std::fs::read_link("/proc/self/ns/pid").is_ok_and(|ns| ns.as_os_str() != FIRST_PID_NAMESPACE)
}

/// Whether the process table read here is this process's own: in a PID
/// namespace of its own whose /proc is still the host's (`unshare --pid`
/// without `--mount-proc`), a pid read there names another process. /proc
/// must be a procfs whose `self` is this process.
pub fn process_table_is_ours() -> bool {
    use nix::sys::statfs::{PROC_SUPER_MAGIC, statfs};
    let procfs = statfs("/proc").is_ok_and(|s| s.filesystem_type() == PROC_SUPER_MAGIC);
    let me = std::fs::read_link("/proc/self")
        .ok()
        .and_then(|link| link.to_str()?.parse::<u32>().ok());
    procfs && me == Some(std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A replaced file has the new bytes and a new inode, and nothing is
    /// left at the temporary name; a missing target is created; a link is
    /// replaced, not followed; a directory is refused and left as it was.
    #[test]
    fn a_file_is_replaced_by_exchange_and_a_directory_is_refused() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let (temp, target) = (dir.path().join(".t"), dir.path().join("state"));
        let put = |bytes: &str| {
            std::fs::write(&temp, bytes).unwrap();
            replace_file(&temp, &target)
        };
        put("first").unwrap();
        let inode = std::fs::metadata(&target).unwrap().ino();
        put("second").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "second");
        assert_ne!(std::fs::metadata(&target).unwrap().ino(), inode);
        assert!(!temp.exists(), "the old file is gone");

        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "theirs").unwrap();
        std::fs::remove_file(&target).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &target).unwrap();
        put("third").unwrap();
        assert!(std::fs::symlink_metadata(&target).unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "theirs");

        std::fs::remove_file(&target).unwrap();
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "kept").unwrap();
        assert!(put("fourth").is_err());
        assert_eq!(
            std::fs::read_to_string(target.join("inside")).unwrap(),
            "kept"
        );
        assert_eq!(std::fs::read_to_string(&temp).unwrap(), "fourth");
    }

    #[test]
    fn mount_points_are_read_with_their_escapes() {
        assert_eq!(unescape_mount_field(b"/a\\040b\\134c"), b"/a b\\c");
        assert_eq!(unescape_mount_field(b"/plain\xff"), b"/plain\xff");
        assert_eq!(unescape_mount_field(b"/end\\04"), b"/end\\04");
        assert!(mount_points().unwrap().contains(&PathBuf::from("/")));
    }

    #[test]
    fn browser_data_follows_xdg_config_home() {
        let home = Path::new("/home/u");
        assert_eq!(
            user_data_base::<()>(home, None),
            Ok(PathBuf::from("/home/u/.config"))
        );
        assert_eq!(
            user_data_base::<()>(home, Some(Ok(PathBuf::from("/srv/conf")))),
            Ok(PathBuf::from("/srv/conf"))
        );
        assert_eq!(user_data_base(home, Some(Err("bad"))), Err("bad"));
    }

    #[test]
    fn a_peer_is_read_as_pid_and_uid() {
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let peer = peer_credentials(&ours).unwrap();
        assert_eq!(peer.pid, nix::unistd::getpid().as_raw());
        assert_eq!(peer.uid, nix::unistd::geteuid().as_raw());
    }

    #[test]
    fn wayland_comes_before_x11_and_no_display_has_no_clipboard() {
        assert_eq!(
            clipboard_tools(true, true).unwrap().paste.0,
            "/usr/bin/wl-paste"
        );
        assert_eq!(
            clipboard_tools(false, true).unwrap().paste.0,
            "/usr/bin/xclip"
        );
        assert!(clipboard_tools(false, false).is_err());
    }
}
