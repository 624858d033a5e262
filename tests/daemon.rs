//! The native client's connect is bounded: a daemon that stopped taking
//! connections (its event loop stuck, its backlog full) cannot hold a
//! command past its bound. (Library level, in a binary of its own: nothing
//! else here may raise the signal flag the client checks.)

mod common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::stuck_socket::StuckSocket;
use my_chrome::daemon::{self, DaemonError};

#[test]
fn a_daemon_that_never_accepts_cannot_hold_a_command_past_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stuck.sock");
    let stuck = StuckSocket::bind(&path);
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    std::thread::spawn(move || {
        let outcome = daemon::run(&path, b"{}\n", Duration::from_secs(1), 1 << 20);
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
    drop(stuck);
}

/// A reply past the limit ends the command: the client stops reading at
/// the limit (the daemon's writes then fail), so what it holds stays
/// bounded however much the daemon sends; a reply within it is read whole.
#[test]
fn a_reply_past_the_limit_is_not_read_on() {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("daemon.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let limit = 1 << 20;
    // Two requests: a reply of 64 MiB, then one just within the limit.
    let daemon = std::thread::spawn(move || {
        let mut written = Vec::new();
        for text_len in [64 << 20, limit - 100] {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = [0u8; 64];
            let _ = stream.read(&mut request).unwrap();
            let head = b"{\"id\":1,\"result\":{\"text\":\"";
            let mut sent = stream.write(head).unwrap_or(0);
            let chunk = vec![b'x'; 64 * 1024];
            while sent < head.len() + text_len {
                match stream.write(&chunk[..chunk.len().min(head.len() + text_len - sent)]) {
                    Ok(n) => sent += n,
                    Err(_) => break,
                }
            }
            if sent >= head.len() + text_len {
                let _ = stream.write_all(b"\"}}\n");
            }
            written.push(sent);
        }
        written
    });
    let huge = daemon::run(&path, b"{}\n", Duration::from_secs(30), limit);
    assert!(
        matches!(huge, Err(DaemonError::TooLarge(l)) if l == limit),
        "{huge:?}"
    );
    assert_eq!(huge.unwrap_err().exit().code(), 1);
    let fits = daemon::run(&path, b"{}\n", Duration::from_secs(30), limit).unwrap();
    assert_eq!(
        fits,
        daemon::Reply::Text {
            text: Some("x".repeat(limit - 100)),
            is_error: false
        }
    );
    let written = daemon.join().unwrap();
    assert!(
        written[0] < 16 << 20,
        "the client read {} bytes of a 64 MiB reply",
        written[0]
    );
}

/// The other connects to a Unix socket are bounded the same way: the
/// daemon's `stop` ends at its bound, and so does the courier's hand-off
/// (which `connect` listens on) when nobody takes it.
#[test]
fn stop_and_the_hand_off_cannot_hang_on_a_socket_that_never_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stuck.sock");
    let _stuck = StuckSocket::bind(&path);
    let (tx, rx) = mpsc::channel();
    let stop_path = path.clone();
    std::thread::spawn(move || {
        let stopped = daemon::stop(&stop_path, Duration::from_secs(1));
        let url = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?mcpRelayUrl=\
                   ws%3A%2F%2F127.0.0.1%3A1%2Fextension%2F00000000-0000-0000-0000-000000000000\
                   &protocolVersion=2";
        let handed = my_chrome::handoff::courier(Some(&stop_path), url);
        let _ = tx.send((stopped.is_err(), handed.is_err()));
    });
    let (stop_failed, handoff_failed) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("a connect blocked past its bound");
    assert!(stop_failed && handoff_failed);
}
