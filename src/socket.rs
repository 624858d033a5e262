//! Connecting to a Unix socket within a bound. A blocking `connect` to a
//! listener whose backlog is full (a daemon or a Chrome whose event loop is
//! stuck) waits forever; every socket my-chrome connects to (the CLI's
//! daemon, the registry's liveness probe, Chrome's singleton, the hand-off)
//! goes through here instead.

use std::io;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::Signal;

use crate::signals;

/// Why a bounded connect did not connect.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// Nobody listens there (or the path is no socket of ours to use).
    #[error("{0}")]
    Refused(io::Error),
    /// The listener did not take the connection within the bound.
    #[error("no connection within {} ms", .0.as_millis())]
    TimedOut(Duration),
    /// A signal arrived while waiting.
    #[error("interrupted by {0}")]
    Interrupted(Signal),
}

/// Connects to `path` without waiting past `bound` (or an interrupt); the
/// stream it returns blocks as usual.
pub fn connect_within(path: &Path, bound: Duration) -> Result<UnixStream, ConnectError> {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, UnixAddr};
    use std::os::fd::AsRawFd;
    let deadline = Instant::now() + bound;
    let refused = |e: Errno| ConnectError::Refused(e.into());
    let fd = nix::sys::socket::socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::empty(),
        None,
    )
    .map_err(refused)?;
    fcntl(&fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).map_err(refused)?;
    let stream = UnixStream::from(fd);
    stream
        .set_nonblocking(true)
        .map_err(ConnectError::Refused)?;
    let address = UnixAddr::new(path).map_err(refused)?;
    loop {
        match nix::sys::socket::connect(stream.as_raw_fd(), &address) {
            Ok(()) => break,
            Err(Errno::EAGAIN | Errno::EINTR) => {}
            Err(e) => return Err(refused(e)),
        }
        if let Some(signal) = signals::pending() {
            return Err(ConnectError::Interrupted(signal));
        }
        if Instant::now() >= deadline {
            return Err(ConnectError::TimedOut(bound));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    stream
        .set_nonblocking(false)
        .map_err(ConnectError::Refused)?;
    Ok(stream)
}
