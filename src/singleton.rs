//! Delivering a URL straight to the user's running Chrome through Chrome's
//! own process singleton (see docs/DESIGN.md, "Delivering the connect URL"): no
//! process is started, so the URL — with the token, at connect — enters no
//! command line and no environment. Every check must pass before a byte is
//! sent:
//!
//! - `SingletonLock` names this host and exactly the Chrome pid we checked;
//! - `SingletonSocket` points into a directory that is ours and private;
//! - the profile's `SingletonCookie` equals the one beside the socket;
//! - the process at the other end of the socket is that Chrome, run by us.
//!
//! Then `START\0<cwd>\0<argv0>\0[--new-window\0]<url>` is sent and only
//! `ACK` counts.

use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use zeroize::Zeroizing;

use crate::exit::Exit;

const LOCK: &str = "SingletonLock";
const COOKIE: &str = "SingletonCookie";
const SOCKET: &str = "SingletonSocket";

#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    /// The URL would not reach Chrome as one URL.
    #[error("refusing to hand the browser {0}; nothing was sent")]
    BadUrl(&'static str),
    /// Chrome is not (or no longer) the one we checked, or its singleton is
    /// not in place.
    #[error("the browser's process singleton {0}; nothing was sent to the browser")]
    NotChrome(String),
    /// Something in the way is not Chrome's, or not private.
    #[error(
        "the browser's singleton socket cannot be trusted: {0}; nothing was sent to the browser"
    )]
    Untrusted(String),
    /// The URL was sent, and Chrome did not take it.
    #[error("the browser did not accept the URL it was sent ({0})")]
    Refused(String),
    /// The URL was sent, and no answer came in time.
    #[error("the browser did not answer within {} s after the URL was sent", .0.as_secs())]
    TimedOut(Duration),
}

impl DeliveryError {
    pub fn exit(&self) -> Exit {
        match self {
            DeliveryError::BadUrl(_) => Exit::Usage,
            DeliveryError::NotChrome(_) | DeliveryError::Refused(_) => Exit::Chrome,
            DeliveryError::Untrusted(_) => Exit::Security,
            DeliveryError::TimedOut(_) => Exit::Timeout,
        }
    }

    /// Whether the URL may have reached the socket.
    pub fn sent(&self) -> bool {
        matches!(self, DeliveryError::Refused(_) | DeliveryError::TimedOut(_))
    }
}

/// Where the browser opens the URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opened {
    /// A new tab of its front window, as a link the user opens: its
    /// opener is that window's active tab.
    InFrontWindow,
    /// A window of its own (`--new-window`): a tab no other tab opened,
    /// in no tab group.
    InNewWindow,
}

/// Hands `url` to the Chrome main process `chrome_pid` whose profile is
/// `user_data`. `argv0` is what Chrome is told it was started as. The
/// answer must come within `timeout` of sending.
pub fn deliver(
    user_data: &Path,
    chrome_pid: u32,
    argv0: &Path,
    url: &[u8],
    opened: Opened,
    timeout: Duration,
) -> Result<(), DeliveryError> {
    // A NUL would split it into more arguments; a leading '-' makes a switch.
    if url.contains(&0) {
        return Err(DeliveryError::BadUrl("a URL with a NUL byte"));
    }
    if url.first() == Some(&b'-') {
        return Err(DeliveryError::BadUrl("an argument that starts with '-'"));
    }
    check_lock(user_data, chrome_pid)?;
    let socket = check_socket(user_data)?;
    let mut stream = crate::socket::connect_within(&socket, timeout).map_err(|e| match e {
        crate::socket::ConnectError::Refused(e) => DeliveryError::NotChrome(format!(
            "socket {} refuses connections ({e})",
            socket.display()
        )),
        other => DeliveryError::Refused(format!("its singleton socket: {other}")),
    })?;
    check_peer(&stream, chrome_pid)?;

    let mut message = Zeroizing::new(Vec::with_capacity(url.len() + 256));
    message.extend_from_slice(b"START\0/\0");
    message.extend_from_slice(argv0.as_os_str().as_encoded_bytes());
    message.push(0);
    if opened == Opened::InNewWindow {
        message.extend_from_slice(b"--new-window\0");
    }
    message.extend_from_slice(url);
    let deadline = Instant::now() + timeout;
    let failed = |e: std::io::Error| DeliveryError::Refused(e.to_string());
    stream.set_write_timeout(Some(timeout)).map_err(failed)?;
    stream.write_all(&message).map_err(failed)?;
    stream.shutdown(Shutdown::Write).map_err(failed)?;
    // One deadline for the whole answer: a peer trickling bytes gets no more.
    let mut answer = Vec::new();
    let mut buf = [0u8; 64];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(DeliveryError::TimedOut(timeout));
        }
        stream.set_read_timeout(Some(left)).map_err(failed)?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) if answer.len() + n <= 64 => answer.extend_from_slice(&buf[..n]),
            Ok(_) => return Err(DeliveryError::Refused("an oversized answer".into())),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(DeliveryError::TimedOut(timeout));
            }
            Err(e) => return Err(failed(e)),
        }
    }
    match answer.as_slice() {
        b"ACK" => Ok(()),
        b"" => Err(DeliveryError::Refused("no answer".into())),
        other => Err(DeliveryError::Refused(format!(
            "it answered {:?}",
            String::from_utf8_lossy(other)
        ))),
    }
}

/// Whether the singleton of `user_data` is that of the main process
/// `chrome_pid` (its lock, its socket and cookies in place), checked before
/// the token is read: a user data directory that is not that browser's is
/// refused before anything is asked of the keyring. `deliver` checks it all
/// again.
pub fn precheck(user_data: &Path, chrome_pid: u32) -> Result<(), DeliveryError> {
    check_lock(user_data, chrome_pid)?;
    check_socket(user_data).map(|_| ())
}

fn check_lock(user_data: &Path, chrome_pid: u32) -> Result<(), DeliveryError> {
    let lock = fs::read_link(user_data.join(LOCK))
        .map_err(|e| DeliveryError::NotChrome(format!("lock cannot be read ({e})")))?;
    let lock = lock.to_string_lossy().into_owned();
    let (host, pid) = lock
        .rsplit_once('-')
        .ok_or_else(|| DeliveryError::NotChrome(format!("lock is malformed ({lock:?})")))?;
    let ours = nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default();
    if host != ours {
        return Err(DeliveryError::NotChrome(format!(
            "lock names another host ({host})"
        )));
    }
    if pid != chrome_pid.to_string() {
        return Err(DeliveryError::NotChrome(format!(
            "lock names pid {pid}, not the main process we checked ({chrome_pid})"
        )));
    }
    Ok(())
}

/// The socket, after checking its directory and the cookies.
fn check_socket(user_data: &Path) -> Result<PathBuf, DeliveryError> {
    let untrusted = |why: String| DeliveryError::Untrusted(why);
    // Missing pieces mean no usable singleton (exit 5); wrong ones, a fault (6).
    let socket = fs::read_link(user_data.join(SOCKET))
        .map_err(|e| DeliveryError::NotChrome(format!("{SOCKET} cannot be read ({e})")))?;
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
    let cookie = |path: PathBuf| {
        fs::read_link(&path).map_err(|e| {
            DeliveryError::NotChrome(format!("{} cannot be read ({e})", path.display()))
        })
    };
    if cookie(user_data.join(COOKIE))? != cookie(dir.join(COOKIE))? {
        return Err(untrusted("the singleton cookies differ".into()));
    }
    Ok(socket)
}

/// The process serving the socket must be that Chrome, run by us.
fn check_peer(stream: &UnixStream, chrome_pid: u32) -> Result<(), DeliveryError> {
    let peer = crate::platform::peer_credentials(stream).map_err(|e| {
        DeliveryError::Untrusted(format!("cannot read the peer's {}: {}", e.what, e.source))
    })?;
    peer_is(peer.pid, peer.uid, chrome_pid)
}

fn peer_is(pid: i32, uid: u32, chrome_pid: u32) -> Result<(), DeliveryError> {
    let me = nix::unistd::geteuid().as_raw();
    if uid != me || pid as u32 != chrome_pid {
        return Err(DeliveryError::Untrusted(format!(
            "the socket is served by pid {pid} (uid {uid}), not by the browser ({chrome_pid})"
        )));
    }
    Ok(())
}
