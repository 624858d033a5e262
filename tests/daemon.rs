//! The native client's connect is bounded: a daemon that stopped taking
//! connections (its event loop stuck, its backlog full) cannot hold a
//! command past its bound. (Library level, in a binary of its own: nothing
//! else here may raise the signal flag the client checks.)

use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use my_chrome::daemon::{self, DaemonError};
use nix::sys::socket::{
    AddressFamily, Backlog, SockFlag, SockType, UnixAddr, bind, listen, socket,
};

#[test]
fn a_daemon_that_never_accepts_cannot_hold_a_command_past_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stuck.sock");
    let listener = socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::empty(),
        None,
    )
    .unwrap();
    bind(
        std::os::fd::AsRawFd::as_raw_fd(&listener),
        &UnixAddr::new(&path).unwrap(),
    )
    .unwrap();
    listen(&listener, Backlog::new(0).unwrap()).unwrap();
    // Fill the backlog: connects that nobody accepts, until one would block.
    let mut queued = Vec::new();
    loop {
        let fd = socket(
            AddressFamily::Unix,
            SockType::Stream,
            SockFlag::SOCK_NONBLOCK,
            None,
        )
        .unwrap();
        let connected = nix::sys::socket::connect(
            std::os::fd::AsRawFd::as_raw_fd(&fd),
            &UnixAddr::new(&path).unwrap(),
        );
        match connected {
            Ok(()) => queued.push(UnixStream::from(fd)),
            Err(nix::errno::Errno::EAGAIN) => break,
            Err(e) => panic!("{e}"),
        }
        assert!(queued.len() < 1000, "the backlog never filled");
    }
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    std::thread::spawn(move || {
        let outcome = daemon::run(&path, b"{}\n", Duration::from_secs(1));
        let _ = tx.send(outcome);
    });
    let outcome = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the connect blocked past its bound");
    assert!(
        matches!(outcome, Err(DaemonError::TimedOut(_))),
        "{outcome:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    drop(queued);
}
