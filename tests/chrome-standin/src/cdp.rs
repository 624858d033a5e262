//! A browser-level Chrome DevTools Protocol connection to the real Chromium,
//! with flat sessions: calls wait for their answer; events go to a channel.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::link::{Incoming, Link};

type Pending = Arc<Mutex<HashMap<u64, Sender<Value>>>>;

#[derive(Clone)]
pub struct Cdp {
    link: Link,
    pending: Pending,
    next: Arc<AtomicU64>,
}

impl Cdp {
    /// Connects; events (frames without an `id`) arrive on the receiver,
    /// then `None` when the connection closes.
    pub fn connect(url: &str) -> Result<(Cdp, Receiver<Option<Value>>), String> {
        let (link, incoming) = Link::connect(url)?;
        let pending: Pending = Arc::default();
        let (events_tx, events_rx) = mpsc::channel();
        let routes = Arc::clone(&pending);
        thread::spawn(move || {
            for frame in incoming {
                match frame {
                    Incoming::Frame(value) => match value["id"].as_u64() {
                        Some(id) => {
                            if let Some(waiter) = routes.lock().unwrap().remove(&id) {
                                let _ = waiter.send(value);
                            }
                        }
                        None => {
                            let _ = events_tx.send(Some(value));
                        }
                    },
                    Incoming::Closed => break,
                }
            }
            routes.lock().unwrap().clear();
            let _ = events_tx.send(None);
        });
        let cdp = Cdp {
            link,
            pending,
            next: Arc::new(AtomicU64::new(1)),
        };
        Ok((cdp, events_rx))
    }

    /// Sends one command and waits (up to 30 s) for its result.
    pub fn call(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
    ) -> Result<Value, String> {
        self.send(method, params, session).wait()
    }

    /// Sends one command now (commands reach Chromium in the order they are
    /// sent); its answer is waited for separately.
    pub fn send(&self, method: &str, params: Value, session: Option<&str>) -> Answer {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = mpsc::channel();
        self.pending.lock().unwrap().insert(id, tx);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.link.send(&message);
        Answer {
            method: method.to_string(),
            rx,
        }
    }

    pub fn close(&self) {
        self.link.close();
    }
}

/// The answer to a command already sent.
pub struct Answer {
    method: String,
    rx: Receiver<Value>,
}

impl Answer {
    pub fn wait(self) -> Result<Value, String> {
        let answer = self
            .rx
            .recv_timeout(Duration::from_secs(30))
            .map_err(|_| format!("{}: no answer from Chromium", self.method))?;
        if let Some(error) = answer.get("error") {
            return Err(error["message"].as_str().unwrap_or("CDP error").to_string());
        }
        Ok(answer["result"].clone())
    }
}
