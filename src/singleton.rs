//! Delivering a URL straight to the user's running Chrome through Chrome's
//! own process singleton (see DESIGN, "Delivering the connect URL"): no
//! process is started, so the URL — with the token, at connect — enters no
//! command line and no environment. Every check must pass before a byte is
//! sent:
//!
//! - `SingletonLock` names this host and exactly the Chrome pid we checked;
//! - `SingletonSocket` points into a directory that is ours and private;
//! - the profile's `SingletonCookie` equals the one beside the socket;
//! - the process at the other end of the socket is that Chrome, run by us.
//!
//! Then `START\0<cwd>\0<argv0>\0<url>` is sent and only `ACK` counts.

use std::fs;
use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use zeroize::Zeroizing;

use crate::error::Exit;

const LOCK: &str = "SingletonLock";
const COOKIE: &str = "SingletonCookie";
const SOCKET: &str = "SingletonSocket";

#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    /// Chrome is not (or no longer) the one we checked.
    #[error("Chrome's {LOCK} {0}; nothing was sent to Chrome")]
    Lock(String),
    /// Something in the way is not Chrome's, or not private.
    #[error("Chrome's singleton socket cannot be trusted: {0}; nothing was sent to Chrome")]
    Untrusted(String),
    /// Chrome did not take the URL.
    #[error("Chrome did not accept the URL ({0})")]
    NotAccepted(String),
}

impl DeliveryError {
    pub fn exit(&self) -> Exit {
        match self {
            DeliveryError::Lock(_) | DeliveryError::NotAccepted(_) => Exit::Chrome,
            DeliveryError::Untrusted(_) => Exit::Security,
        }
    }
}

/// Hands `url` to the Chrome main process `chrome_pid` whose profile is
/// `user_data`. `argv0` is what Chrome is told it was started as.
pub fn deliver(
    user_data: &Path,
    chrome_pid: u32,
    argv0: &Path,
    url: &[u8],
    timeout: Duration,
) -> Result<(), DeliveryError> {
    check_lock(user_data, chrome_pid)?;
    let socket = check_socket(user_data)?;
    let mut stream = UnixStream::connect(&socket).map_err(|e| {
        DeliveryError::NotAccepted(format!("cannot connect to {}: {e}", socket.display()))
    })?;
    check_peer(&stream, chrome_pid)?;

    let mut message = Zeroizing::new(Vec::with_capacity(url.len() + 256));
    message.extend_from_slice(b"START\0/\0");
    message.extend_from_slice(argv0.as_os_str().as_encoded_bytes());
    message.push(0);
    message.extend_from_slice(url);
    let not_accepted = |e: std::io::Error| DeliveryError::NotAccepted(e.to_string());
    stream
        .set_write_timeout(Some(timeout))
        .map_err(not_accepted)?;
    stream
        .set_read_timeout(Some(timeout))
        .map_err(not_accepted)?;
    stream.write_all(&message).map_err(not_accepted)?;
    stream.shutdown(Shutdown::Write).map_err(not_accepted)?;
    let mut answer = Vec::new();
    match (&stream).take(64).read_to_end(&mut answer) {
        Ok(_) if answer == b"ACK" => Ok(()),
        Ok(_) if answer.is_empty() => Err(DeliveryError::NotAccepted("no answer".into())),
        Ok(_) => Err(DeliveryError::NotAccepted(format!(
            "it answered {:?}",
            String::from_utf8_lossy(&answer)
        ))),
        Err(e) => Err(DeliveryError::NotAccepted(format!(
            "no answer in time: {e}"
        ))),
    }
}

fn check_lock(user_data: &Path, chrome_pid: u32) -> Result<(), DeliveryError> {
    let lock = fs::read_link(user_data.join(LOCK))
        .map_err(|e| DeliveryError::Lock(format!("cannot be read ({e})")))?;
    let lock = lock.to_string_lossy().into_owned();
    let (host, pid) = lock
        .rsplit_once('-')
        .ok_or_else(|| DeliveryError::Lock(format!("is malformed ({lock:?})")))?;
    let ours = nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default();
    if host != ours {
        return Err(DeliveryError::Lock(format!("names another host ({host})")));
    }
    if pid != chrome_pid.to_string() {
        return Err(DeliveryError::Lock(format!(
            "names pid {pid}, not the Chrome we checked ({chrome_pid})"
        )));
    }
    Ok(())
}

/// The socket, after checking its directory and the cookies.
fn check_socket(user_data: &Path) -> Result<PathBuf, DeliveryError> {
    let untrusted = |why: String| DeliveryError::Untrusted(why);
    let socket = fs::read_link(user_data.join(SOCKET))
        .map_err(|e| untrusted(format!("{SOCKET} cannot be read ({e})")))?;
    let dir = socket
        .parent()
        .filter(|d| d.is_absolute())
        .ok_or_else(|| untrusted(format!("{SOCKET} points at {}", socket.display())))?;
    let me = nix::unistd::geteuid().as_raw();
    let meta =
        fs::symlink_metadata(dir).map_err(|e| untrusted(format!("{}: {e}", dir.display())))?;
    if !meta.is_dir() {
        return Err(untrusted(format!(
            "{} is not a real directory",
            dir.display()
        )));
    }
    if meta.uid() != me {
        return Err(untrusted(format!(
            "{} is owned by uid {}, not by you",
            dir.display(),
            meta.uid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(untrusted(format!(
            "{} has mode {:04o}; others could replace the socket",
            dir.display(),
            meta.mode() & 0o7777
        )));
    }
    let meta = fs::symlink_metadata(&socket)
        .map_err(|e| untrusted(format!("{}: {e}", socket.display())))?;
    if !meta.file_type().is_socket() || meta.uid() != me {
        return Err(untrusted(format!(
            "{} is not a socket of yours",
            socket.display()
        )));
    }
    let profile_cookie = fs::read_link(user_data.join(COOKIE)).ok();
    let socket_cookie = fs::read_link(dir.join(COOKIE)).ok();
    if profile_cookie.is_none() || profile_cookie != socket_cookie {
        return Err(untrusted("the singleton cookies differ".into()));
    }
    Ok(socket)
}

/// The process serving the socket must be that Chrome, run by us.
#[cfg(target_os = "linux")]
fn check_peer(stream: &UnixStream, chrome_pid: u32) -> Result<(), DeliveryError> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    let peer = getsockopt(stream, PeerCredentials).map_err(|e| {
        DeliveryError::Untrusted(format!("cannot read the peer's credentials: {e}"))
    })?;
    peer_is(peer.pid(), peer.uid(), chrome_pid)
}

/// The process serving the socket must be that Chrome, run by us.
#[cfg(target_os = "macos")]
fn check_peer(stream: &UnixStream, chrome_pid: u32) -> Result<(), DeliveryError> {
    use nix::sys::socket::{getsockopt, sockopt::LocalPeerPid};
    let pid = getsockopt(stream, LocalPeerPid)
        .map_err(|e| DeliveryError::Untrusted(format!("cannot read the peer's pid: {e}")))?;
    let (uid, _) = nix::unistd::getpeereid(stream)
        .map_err(|e| DeliveryError::Untrusted(format!("cannot read the peer's uid: {e}")))?;
    peer_is(pid, uid.as_raw(), chrome_pid)
}

fn peer_is(pid: i32, uid: u32, chrome_pid: u32) -> Result<(), DeliveryError> {
    let me = nix::unistd::geteuid().as_raw();
    if uid != me || pid as u32 != chrome_pid {
        return Err(DeliveryError::Untrusted(format!(
            "the socket is served by pid {pid} (uid {uid}), not by Chrome ({chrome_pid})"
        )));
    }
    Ok(())
}
