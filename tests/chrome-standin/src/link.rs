//! One websocket, owned by one thread: text frames out through a channel,
//! parsed JSON frames in through another. Blocking tungstenite with a short
//! read timeout, so one thread can both read and write.

use std::io::ErrorKind;
use std::net::TcpStream;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::Duration;

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
}

impl Link {
    /// Connects to `url` (`ws://127.0.0.1:<port>/…`).
    pub fn connect(url: &str) -> Result<(Link, Receiver<Incoming>), String> {
        let parsed = url::Url::parse(url).map_err(|e| e.to_string())?;
        let host = parsed.host_str().ok_or("no host")?.to_string();
        let port = parsed.port().ok_or("no port")?;
        let stream = TcpStream::connect((host.as_str(), port)).map_err(|e| e.to_string())?;
        let (mut socket, _) = tungstenite::client(url, stream).map_err(|e| e.to_string())?;
        socket
            .get_ref()
            .set_read_timeout(Some(Duration::from_millis(3)))
            .map_err(|e| e.to_string())?;
        socket.get_ref().set_nodelay(true).ok();
        let (out_tx, out_rx) = mpsc::channel::<Option<String>>();
        let (in_tx, in_rx) = mpsc::channel();
        thread::spawn(move || {
            loop {
                // Everything queued goes out first; `None` asks to close.
                loop {
                    match out_rx.try_recv() {
                        Ok(Some(text)) => {
                            if socket.send(Message::text(text)).is_err() {
                                let _ = in_tx.send(Incoming::Closed);
                                return;
                            }
                        }
                        Ok(None) | Err(mpsc::TryRecvError::Disconnected) => {
                            let _ = socket.close(None);
                            let _ = socket.flush();
                            let _ = in_tx.send(Incoming::Closed);
                            return;
                        }
                        Err(mpsc::TryRecvError::Empty) => break,
                    }
                }
                match socket.read() {
                    Ok(Message::Text(text)) => {
                        if let Ok(value) = serde_json::from_str(text.as_str()) {
                            let _ = in_tx.send(Incoming::Frame(value));
                        }
                    }
                    Ok(Message::Close(_)) => {
                        let _ = in_tx.send(Incoming::Closed);
                        return;
                    }
                    Ok(_) => {}
                    Err(Error::Io(e))
                        if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                    Err(_) => {
                        let _ = in_tx.send(Incoming::Closed);
                        return;
                    }
                }
            }
        });
        Ok((Link { out: out_tx }, in_rx))
    }

    pub fn send(&self, value: &Value) {
        let _ = self.out.send(Some(value.to_string()));
    }

    pub fn close(&self) {
        let _ = self.out.send(None);
    }
}
