//! The Playwright Extension, protocol 2: connects to the relay and serves
//! `chrome.tabs.*` and `chrome.debugger.*` by translating them to CDP on
//! the real Chromium, forwarding CDP events back as `chrome.debugger.onEvent`.
//!
//! `chrome.debugger.sendCommand`s reach Chromium in the order the relay sent
//! them, as the real `chrome.debugger` keeps them; only the waiting for
//! answers happens on worker threads.
//!
//! As the real extension (0.2.1 to main-2026-08-21) does: with a token, the
//! session starts with the connect tab alone; tabs the relay creates and
//! popups join it; once the last attached tab is gone (closed or detached),
//! the extension closes the relay connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{Value, json};

use crate::cdp::{Answer, Cdp};
use crate::faults::Faults;
use crate::link::{Incoming, Link};
use crate::{CONNECT_PAGE, log, new_tab};

#[derive(Default)]
struct Tabs {
    next: i64,
    target_of: HashMap<i64, String>,
    tab_of_target: HashMap<String, i64>,
    session_of: HashMap<i64, String>,
    tab_of_session: HashMap<String, i64>,
    /// Sessions attached under a tab's session (and under those), by tab.
    tab_of_child: HashMap<String, i64>,
    /// Whether a tab was ever attached: losing the last one then ends the
    /// connection.
    ever_attached: bool,
}

impl Tabs {
    /// The tab id of a target, and whether it is new.
    fn tab_for(&mut self, target: &str) -> (i64, bool) {
        if let Some(tab) = self.tab_of_target.get(target) {
            return (*tab, false);
        }
        self.next += 1;
        self.target_of.insert(self.next, target.to_string());
        self.tab_of_target.insert(target.to_string(), self.next);
        (self.next, true)
    }

    fn forget(&mut self, target: &str) -> Option<i64> {
        let tab = self.tab_of_target.remove(target)?;
        self.target_of.remove(&tab);
        if let Some(session) = self.session_of.remove(&tab) {
            self.tab_of_session.remove(&session);
        }
        Some(tab)
    }

    /// The session a command for `source` goes to.
    fn session_for(&self, source: &Value) -> Result<String, String> {
        if let Some(child) = source["sessionId"].as_str() {
            return Ok(child.to_string());
        }
        let tab = source["tabId"].as_i64().ok_or("no tabId")?;
        self.session_of
            .get(&tab)
            .cloned()
            .ok_or_else(|| format!("Debugger is not attached to the tab with id: {tab}."))
    }
}

/// Which tabs the session starts with.
pub enum Seed {
    /// The connect tab itself (the real extension, given a matching token).
    Helper(String),
    /// Every other page, the connect tab kept out of view.
    AllBut(String),
}

pub struct Bridge {
    ext: Link,
    cdp: Cdp,
    tabs: Mutex<Tabs>,
    /// The helper tab's target, when it is kept out of view.
    hidden: Option<String>,
    faults: Faults,
}

/// Serves one relay connection until it closes.
pub fn run(endpoint: &str, relay: &str, seed: Seed, faults: Faults) -> Result<(), String> {
    let (ext, incoming) = Link::connect(relay)?;
    if faults.refuse_websocket {
        log("fault: closing the relay connection at once");
        ext.close();
        return Ok(());
    }
    let (cdp, events) = Cdp::connect(endpoint)?;
    let (hidden, only) = match seed {
        Seed::Helper(helper) => (None, Some(helper)),
        Seed::AllBut(helper) => (Some(helper), None),
    };
    let bridge = Arc::new(Bridge {
        ext,
        cdp,
        tabs: Mutex::default(),
        hidden,
        faults,
    });

    let targets = bridge.cdp.call("Target.getTargets", json!({}), None)?;
    for info in targets["targetInfos"].as_array().into_iter().flatten() {
        if only.is_none() || info["targetId"].as_str() == only.as_deref() {
            bridge.announce(info);
        }
    }
    bridge
        .ext
        .send(&json!({"method": "extension.initialized", "params": {}}));
    bridge
        .cdp
        .call("Target.setDiscoverTargets", json!({"discover": true}), None)?;

    let pump = Arc::clone(&bridge);
    thread::spawn(move || {
        while let Ok(Some(event)) = events.recv() {
            pump.on_event(&event);
        }
    });

    for (seen, frame) in incoming.into_iter().enumerate() {
        let Incoming::Frame(command) = frame else {
            break;
        };
        let handled = seen + 1;
        if bridge.faults.exit_after.is_some_and(|n| handled > n) {
            log("fault: exiting abruptly");
            let _ =
                nix::sys::signal::kill(nix::unistd::getpid(), nix::sys::signal::Signal::SIGKILL);
        }
        if bridge.faults.drop_after.is_some_and(|n| handled > n) {
            log("fault: dropping the relay connection");
            break;
        }
        bridge.dispatch(command);
    }
    bridge.ext.close();
    bridge.cdp.close();
    log("relay connection closed");
    Ok(())
}

impl Bridge {
    fn is_hidden(&self, info: &Value) -> bool {
        self.hidden.as_ref().is_some_and(|helper| {
            info["targetId"].as_str() == Some(helper)
                || info["url"]
                    .as_str()
                    .is_some_and(|u| u.starts_with(CONNECT_PAGE))
        })
    }

    /// A page target becomes a tab the extension exposes.
    fn announce(&self, info: &Value) {
        if info["type"] != "page" || self.is_hidden(info) {
            return;
        }
        let Some(target) = info["targetId"].as_str() else {
            return;
        };
        let (tab, new) = self.tabs.lock().unwrap().tab_for(target);
        if new {
            let tab_info = json!({"id": tab, "url": info["url"], "title": info["title"]});
            self.ext
                .send(&json!({"method": "chrome.tabs.onCreated", "params": [tab_info]}));
        }
    }

    fn on_event(&self, event: &Value) {
        let method = event["method"].as_str().unwrap_or_default();
        let params = &event["params"];
        if let Some(session) = event["sessionId"].as_str() {
            let mut tabs = self.tabs.lock().unwrap();
            let (tab, source) = if let Some(tab) = tabs.tab_of_session.get(session).copied() {
                (tab, json!({"tabId": tab}))
            } else if let Some(tab) = tabs.tab_of_child.get(session).copied() {
                (tab, json!({"tabId": tab, "sessionId": session}))
            } else {
                return;
            };
            // Sessions attached under this one belong to the same tab.
            match (method, params["sessionId"].as_str()) {
                ("Target.attachedToTarget", Some(child)) => {
                    tabs.tab_of_child.insert(child.to_string(), tab);
                }
                ("Target.detachedFromTarget", Some(child)) => {
                    tabs.tab_of_child.remove(child);
                }
                _ => {}
            }
            drop(tabs);
            self.ext.send(
                &json!({"method": "chrome.debugger.onEvent", "params": [source, method, params]}),
            );
            return;
        }
        match method {
            // Pages opened by pages (popups) join the exposed tabs, as the
            // extension adds them to its group. Tabs the relay asked for are
            // answered by chrome.tabs.create itself: announcing them too would
            // race its own attach.
            "Target.targetCreated" if params["targetInfo"]["openerId"].is_string() => {
                self.announce(&params["targetInfo"])
            }
            "Target.targetDestroyed" => {
                let target = params["targetId"].as_str().unwrap_or_default();
                if let Some(tab) = self.tabs.lock().unwrap().forget(target) {
                    self.ext
                        .send(&json!({"method": "chrome.tabs.onRemoved", "params": [tab, {}]}));
                }
            }
            "Target.detachedFromTarget" => {
                let session = params["sessionId"].as_str().unwrap_or_default();
                let mut tabs = self.tabs.lock().unwrap();
                if let Some(tab) = tabs.tab_of_session.remove(session) {
                    tabs.session_of.remove(&tab);
                    let last = tabs.ever_attached && tabs.session_of.is_empty();
                    drop(tabs);
                    let params = json!([{"tabId": tab}, "target_closed"]);
                    self.ext
                        .send(&json!({"method": "chrome.debugger.onDetach", "params": params}));
                    if last {
                        log("extension: all controlled tabs detached; closing the connection");
                        self.ext.close();
                    }
                }
            }
            _ => {}
        }
    }

    /// Sends a debugger command to Chromium now, in arrival order; answers
    /// it from a worker thread. Other commands run on a worker thread.
    fn dispatch(self: &Arc<Self>, command: Value) {
        let id = command["id"].clone();
        let method = command["method"].as_str().unwrap_or_default().to_string();
        let params = &command["params"];
        if method == "chrome.debugger.sendCommand" {
            if let Some(marker) = &self.faults.stall
                && params.to_string().contains(marker.as_str())
            {
                log("fault: never answering a debugger command");
                return;
            }
            let sent = self
                .tabs
                .lock()
                .unwrap()
                .session_for(&params[0])
                .and_then(|session| {
                    let cdp_method = params[1].as_str().ok_or("no method")?;
                    let args = if params[2].is_null() {
                        json!({})
                    } else {
                        params[2].clone()
                    };
                    Ok(self.cdp.send(cdp_method, args, Some(&session)))
                });
            let bridge = Arc::clone(self);
            thread::spawn(move || bridge.reply(id, sent.and_then(Answer::wait)));
            return;
        }
        let bridge = Arc::clone(self);
        thread::spawn(move || {
            let result = bridge.execute(&method, &command["params"]);
            bridge.reply(id, result);
        });
    }

    fn reply(&self, id: Value, result: Result<Value, String>) {
        if let Some(delay) = self.faults.delay {
            thread::sleep(delay);
        }
        let reply = match result {
            Ok(value) => json!({"id": id, "result": value}),
            Err(error) => json!({"id": id, "error": error}),
        };
        self.ext.send(&reply);
    }

    fn target(&self, tab: &Value) -> Result<String, String> {
        let tab = tab.as_i64().ok_or("no tab id")?;
        let tabs = self.tabs.lock().unwrap();
        tabs.target_of
            .get(&tab)
            .cloned()
            .ok_or_else(|| format!("No tab with id: {tab}."))
    }

    fn execute(&self, method: &str, params: &Value) -> Result<Value, String> {
        match method {
            "chrome.tabs.create" => {
                let url = params[0]["url"].as_str().unwrap_or("about:blank");
                let created = self.cdp.call("Target.createTarget", new_tab(url), None)?;
                let target = created["targetId"].as_str().ok_or("no targetId")?;
                let (tab, _) = self.tabs.lock().unwrap().tab_for(target);
                Ok(json!({"id": tab, "url": url}))
            }
            "chrome.tabs.remove" => {
                let target = self.target(&params[0])?;
                self.cdp
                    .call("Target.closeTarget", json!({"targetId": target}), None)?;
                Ok(Value::Null)
            }
            "chrome.debugger.attach" => {
                let tab = params[0]["tabId"].as_i64().ok_or("no tabId")?;
                let target = self.target(&params[0]["tabId"])?;
                if self.tabs.lock().unwrap().session_of.contains_key(&tab) {
                    return Err(format!(
                        "Another debugger is already attached to the tab with id: {tab}."
                    ));
                }
                let attach = json!({"targetId": target, "flatten": true});
                let attached = self.cdp.call("Target.attachToTarget", attach, None)?;
                let session = attached["sessionId"]
                    .as_str()
                    .ok_or("no sessionId")?
                    .to_string();
                let mut tabs = self.tabs.lock().unwrap();
                tabs.session_of.insert(tab, session.clone());
                tabs.tab_of_session.insert(session, tab);
                tabs.ever_attached = true;
                Ok(Value::Null)
            }
            other => Err(format!("stand-in: unsupported {other}")),
        }
    }
}
