//! One websocket, owned by one thread: text frames out through a channel,
//! parsed JSON frames in through another. The socket is non-blocking and
//! the thread sleeps in poll(2) on it and on a wake-up socket that every
//! send rings, so a frame goes out (or is read) at once, as a browser's
//! would: no polling interval adds to a command's round trip.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use serde_json::Value;
use tungstenite::{Error, Message};

/// What the reading side sees.
pub enum Incoming {
    Frame(Value),
    Closed,
}

/// The sending half; dropping every clone closes the socket.
#[derive(Clone)]
pub struct Link {
    out: Sender<Option<String>>,
    wake: Arc<UnixStream>,
}

fn would_block(e: &Error) -> bool {
    matches!(e, Error::Io(io) if io.kind() == ErrorKind::WouldBlock)
}

impl Link {
    /// Connects to `url` (`ws://127.0.0.1:<port>/…`).
    pub fn connect(url: &str) -> Result<(Link, Receiver<Incoming>), String> {
        let parsed = url::Url::parse(url).map_err(|e| e.to_string())?;
        let host = parsed.host_str().ok_or("no host")?.to_string();
        let port = parsed.port().ok_or("no port")?;
        let stream = TcpStream::connect((host.as_str(), port)).map_err(|e| e.to_string())?;
        let (mut socket, _) = tungstenite::client(url, stream).map_err(|e| e.to_string())?;
        socket.get_ref().set_nodelay(true).ok();
        socket
            .get_ref()
            .set_nonblocking(true)
            .map_err(|e| e.to_string())?;
        let (wake, mut woken) = UnixStream::pair().map_err(|e| e.to_string())?;
        wake.set_nonblocking(true).map_err(|e| e.to_string())?;
        woken.set_nonblocking(true).map_err(|e| e.to_string())?;
        let (out_tx, out_rx) = mpsc::channel::<Option<String>>();
        let (in_tx, in_rx) = mpsc::channel();
        thread::spawn(move || {
            let closed = |in_tx: &Sender<Incoming>| {
                let _ = in_tx.send(Incoming::Closed);
            };
            let mut unflushed = false;
            loop {
                // Everything queued goes out first; `None` asks to close.
                loop {
                    match out_rx.try_recv() {
                        Ok(Some(text)) => match socket.send(Message::text(text)) {
                            Ok(()) => {}
                            Err(e) if would_block(&e) => unflushed = true,
                            Err(_) => return closed(&in_tx),
                        },
                        Ok(None) | Err(mpsc::TryRecvError::Disconnected) => {
                            let _ = socket.close(None);
                            let _ = socket.flush();
                            return closed(&in_tx);
                        }
                        Err(mpsc::TryRecvError::Empty) => break,
                    }
                }
                if unflushed {
                    match socket.flush() {
                        Ok(()) => unflushed = false,
                        Err(e) if would_block(&e) => {}
                        Err(_) => return closed(&in_tx),
                    }
                }
                // Everything that arrived is read.
                loop {
                    match socket.read() {
                        Ok(Message::Text(text)) => {
                            if let Ok(value) = serde_json::from_str(text.as_str()) {
                                let _ = in_tx.send(Incoming::Frame(value));
                            }
                        }
                        Ok(Message::Close(_)) => return closed(&in_tx),
                        Ok(_) => {}
                        Err(e) if would_block(&e) => break,
                        Err(_) => return closed(&in_tx),
                    }
                }
                // Then sleep until the socket or a sender has something.
                {
                    let mut wanted = PollFlags::POLLIN;
                    if unflushed {
                        wanted |= PollFlags::POLLOUT;
                    }
                    let mut fds = [
                        PollFd::new(socket.get_ref().as_fd(), wanted),
                        PollFd::new(woken.as_fd(), PollFlags::POLLIN),
                    ];
                    let _ = poll(&mut fds, PollTimeout::from(100u16));
                }
                let mut drained = [0u8; 64];
                while matches!(woken.read(&mut drained), Ok(n) if n > 0) {}
            }
        });
        Ok((
            Link {
                out: out_tx,
                wake: Arc::new(wake),
            },
            in_rx,
        ))
    }

    fn ring(&self) {
        let _ = (&*self.wake).write(&[1]);
    }

    pub fn send(&self, value: &Value) {
        let _ = self.out.send(Some(value.to_string()));
        self.ring();
    }

    pub fn close(&self) {
        let _ = self.out.send(None);
        self.ring();
    }
}
