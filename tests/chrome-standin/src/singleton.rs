//! Chrome's process singleton, as `process_singleton_posix` keeps it in the
//! profile directory: `SingletonLock` → `<hostname>-<pid>`, `SingletonCookie`
//! → a random cookie, `SingletonSocket` → a unix socket in a private
//! temporary directory that holds the same cookie link. A second Chrome
//! started with arguments sends `START\0<cwd>\0<argv0>\0<arg>…` there and
//! exits when the answer is `ACK`.
//!
//! What a second Chrome does otherwise, as Chrome does it: a lock from
//! another host makes it give up (exit 21); a lock whose process is gone or
//! is not this browser is orphaned, so it clears the files and becomes the
//! browser itself (with its arguments in its own command line); a live
//! holder it cannot reach (a foreign cookie, no socket) is retried for a
//! while (`STANDIN_SINGLETON_WAIT_MS`, default 20 s), then killed and
//! replaced.

use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tempfile::TempDir;

pub const LOCK: &str = "SingletonLock";
pub const COOKIE: &str = "SingletonCookie";
pub const SOCKET: &str = "SingletonSocket";

/// Chrome's default profile directory on Linux.
pub fn profile_dir() -> PathBuf {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".config")
        });
    config.join("google-chrome")
}

pub fn hostname() -> String {
    nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What a Chrome started with arguments finds in the profile.
pub enum Existing {
    /// No lock: become the browser.
    Nobody,
    /// A lock nobody holds (dead, or not this browser): clear it and become the browser.
    Orphaned(String),
    /// A live browser to hand the arguments to.
    Live(PathBuf),
    /// A live browser that cannot be reached: retry, then kill it.
    Unreachable(i32),
    /// The profile is in use on another computer: give up.
    OtherHost(String),
}

pub fn find_running(profile: &Path) -> Existing {
    let Ok(lock) = fs::read_link(profile.join(LOCK)) else {
        return Existing::Nobody;
    };
    let lock = lock.to_string_lossy().into_owned();
    let Some((host, pid)) = lock.rsplit_once('-') else {
        return Existing::Orphaned(format!("malformed {LOCK} {lock:?}"));
    };
    if host != hostname() {
        return Existing::OtherHost(host.to_string());
    }
    let Ok(pid) = pid.parse::<i32>() else {
        return Existing::Orphaned(format!("malformed {LOCK} {lock:?}"));
    };
    if nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err() {
        return Existing::Orphaned(format!("pid {pid} is gone"));
    }
    let holder = fs::read_link(format!("/proc/{pid}/exe")).ok();
    if holder.is_none() || holder != std::env::current_exe().ok() {
        return Existing::Orphaned(format!("pid {pid} is not this browser"));
    }
    let Ok(socket) = fs::read_link(profile.join(SOCKET)) else {
        return Existing::Unreachable(pid);
    };
    let ours = fs::read_link(profile.join(COOKIE)).ok();
    let theirs = socket
        .parent()
        .and_then(|dir| fs::read_link(dir.join(COOKIE)).ok());
    if ours.is_none() || ours != theirs {
        return Existing::Unreachable(pid);
    }
    Existing::Live(socket)
}

/// Removes the singleton files of an orphaned or replaced browser.
pub fn clear(profile: &Path) {
    for name in [LOCK, COOKIE, SOCKET] {
        let _ = fs::remove_file(profile.join(name));
    }
}

/// Sends our arguments to the running browser; its answer.
pub fn notify(socket: &Path, argv: &[String]) -> Result<String, String> {
    let mut stream = UnixStream::connect(socket).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(Duration::from_secs(20))).ok();
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut message = format!("START\0{}", cwd.display()).into_bytes();
    for arg in argv {
        message.push(0);
        message.extend_from_slice(arg.as_bytes());
    }
    stream.write_all(&message).map_err(|e| e.to_string())?;
    stream
        .shutdown(Shutdown::Write)
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .map_err(|e| e.to_string())?;
    Ok(answer)
}

/// A parsed `START` message: the sender's cwd and argv.
pub fn parse(message: &[u8]) -> Result<(String, Vec<String>), String> {
    let rest = message
        .strip_prefix(b"START\0")
        .ok_or("not a START message")?;
    let text = std::str::from_utf8(rest).map_err(|_| "not UTF-8")?;
    let mut parts: Vec<String> = text.split('\0').map(String::from).collect();
    if parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    if parts.len() < 2 {
        return Err("no cwd and argv".into());
    }
    let cwd = parts.remove(0);
    Ok((cwd, parts))
}

/// The listening side, with the files that point at it.
pub struct Server {
    profile: PathBuf,
    _dir: TempDir,
    pub listener: UnixListener,
    lock_target: String,
}

impl Server {
    /// Takes the lock first, atomically: if another browser got there first,
    /// this one must not become the browser.
    pub fn create(profile: &Path) -> Result<Server, String> {
        fs::create_dir_all(profile).map_err(|e| e.to_string())?;
        let lock_target = format!("{}-{}", hostname(), std::process::id());
        symlink(&lock_target, profile.join(LOCK)).map_err(|e| match e.kind() {
            ErrorKind::AlreadyExists => "another browser took the profile first".to_string(),
            _ => e.to_string(),
        })?;
        let dir = tempfile::Builder::new()
            .prefix(".org.chromium.Chromium.")
            .tempdir()
            .map_err(|e| e.to_string())?;
        // Chrome keeps the socket's directory private.
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700))
            .map_err(|e| e.to_string())?;
        let socket = dir.path().join(SOCKET);
        let listener = UnixListener::bind(&socket).map_err(|e| e.to_string())?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let cookie = format!("{}", random_u64());
        let _ = fs::remove_file(profile.join(COOKIE));
        let _ = fs::remove_file(profile.join(SOCKET));
        symlink(&cookie, dir.path().join(COOKIE)).map_err(|e| e.to_string())?;
        symlink(&cookie, profile.join(COOKIE)).map_err(|e| e.to_string())?;
        symlink(&socket, profile.join(SOCKET)).map_err(|e| e.to_string())?;
        Ok(Server {
            profile: profile.to_path_buf(),
            _dir: dir,
            listener,
            lock_target,
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Only while the lock is still ours: never remove another browser's files.
        if fs::read_link(self.profile.join(LOCK))
            .is_ok_and(|t| t.to_string_lossy() == self.lock_target)
        {
            clear(&self.profile);
        }
    }
}

fn random_u64() -> u64 {
    let mut bytes = [0u8; 8];
    if let Ok(mut f) = fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut bytes);
    }
    u64::from_le_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_messages_parse_like_chrome_sends_them() {
        let (cwd, argv) =
            parse(b"START\0/tmp\0/opt/google/chrome/chrome\0https://x.test/").unwrap();
        assert_eq!(cwd, "/tmp");
        assert_eq!(argv, ["/opt/google/chrome/chrome", "https://x.test/"]);
        assert!(parse(b"STOP\0/tmp\0chrome").is_err());
        assert!(parse(b"START\0/tmp").is_err());
        assert!(parse(b"").is_err());
    }
}
