//! A Unix socket whose listener never accepts and whose backlog is full:
//! what a daemon (or a Chrome) with a stuck event loop looks like to a
//! client. A blocking connect to it waits forever.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;

use nix::sys::socket::{
    AddressFamily, Backlog, SockFlag, SockType, UnixAddr, bind, connect, listen, socket,
};

pub struct StuckSocket {
    _listener: OwnedFd,
    _queued: Vec<UnixStream>,
}

impl StuckSocket {
    /// Listens at `path` and fills the backlog until a connect would block.
    pub fn bind(path: &Path) -> StuckSocket {
        let listener = socket(
            AddressFamily::Unix,
            SockType::Stream,
            SockFlag::empty(),
            None,
        )
        .unwrap();
        bind(listener.as_raw_fd(), &UnixAddr::new(path).unwrap()).unwrap();
        listen(&listener, Backlog::new(0).unwrap()).unwrap();
        let mut queued = Vec::new();
        loop {
            let fd = socket(
                AddressFamily::Unix,
                SockType::Stream,
                SockFlag::SOCK_NONBLOCK,
                None,
            )
            .unwrap();
            match connect(fd.as_raw_fd(), &UnixAddr::new(path).unwrap()) {
                Ok(()) => queued.push(UnixStream::from(fd)),
                Err(nix::errno::Errno::EAGAIN) => break,
                Err(e) => panic!("{e}"),
            }
            assert!(queued.len() < 1000, "the backlog never filled");
        }
        StuckSocket {
            _listener: listener,
            _queued: queued,
        }
    }
}
