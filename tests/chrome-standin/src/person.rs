//! The person at the keyboard, for my-chrome's consent pages (a page
//! served from 127.0.0.1 with a Confirm and a Refuse button): what
//! `STANDIN_PERSON` says they do, with real mouse input through Chromium's
//! own input pipeline, as a click on the screen would arrive. Then they
//! close the tab, as a tidy person does once it says what happened.

use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cdp::Cdp;
use crate::log;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    Confirm,
    Refuse,
    /// Closes the tab without answering.
    Close,
    /// Never answers.
    Away,
}

#[derive(Clone, Copy, Debug)]
pub struct Person {
    pub choice: Choice,
    /// How long they take to read the page before acting.
    pub reading: Duration,
}

impl Person {
    /// `STANDIN_PERSON`: `confirm`, `refuse`, `close` or `away` (the
    /// default: nobody is at the keyboard), optionally `,read-ms=N`.
    pub fn parse(spec: &str) -> Result<Person, String> {
        let mut person = Person {
            choice: Choice::Away,
            reading: Duration::ZERO,
        };
        for part in spec.split(',').filter(|p| !p.is_empty()) {
            person.choice = match part {
                "confirm" => Choice::Confirm,
                "refuse" => Choice::Refuse,
                "close" => Choice::Close,
                "away" => Choice::Away,
                other => match other.strip_prefix("read-ms=") {
                    Some(ms) => {
                        person.reading = Duration::from_millis(
                            ms.parse().map_err(|_| format!("bad read-ms {ms:?}"))?,
                        );
                        continue;
                    }
                    None => return Err(format!("unknown STANDIN_PERSON part {other:?}")),
                },
            };
        }
        Ok(person)
    }
}

/// The button's centre in the page, once the page is loaded and the button
/// takes clicks, scrolled into view as a person scrolls to it.
const BUTTON: &str = "(() => { const b = document.getElementById('ID'); \
    if (!b || b.disabled || document.readyState !== 'complete') return null; \
    b.scrollIntoView({block: 'center'}); const r = b.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()";

fn evaluate(cdp: &Cdp, session: &str, expression: &str) -> Result<Value, String> {
    let result = cdp.call(
        "Runtime.evaluate",
        json!({"expression": expression, "returnByValue": true}),
        Some(session),
    )?;
    Ok(result["result"]["value"].clone())
}

/// Acts on the consent page in tab `target`.
pub fn answer(cdp: &Cdp, target: &str, person: Person) -> Result<(), String> {
    if person.choice == Choice::Away {
        log("person: away, the consent page stays unanswered");
        return Ok(());
    }
    let attached = cdp.call(
        "Target.attachToTarget",
        json!({"targetId": target, "flatten": true}),
        None,
    )?;
    let session = attached["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let id = if person.choice == Choice::Refuse {
        "refuse"
    } else {
        "confirm"
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let at = loop {
        // While the page loads, its context comes and goes: not yet.
        match evaluate(cdp, &session, &BUTTON.replace("ID", id)).unwrap_or_default() {
            Value::Array(xy) if xy.len() == 2 => break (xy[0].clone(), xy[1].clone()),
            _ if Instant::now() > deadline => return Err("the consent page never loaded".into()),
            _ => thread::sleep(Duration::from_millis(50)),
        }
    };
    thread::sleep(person.reading);
    if person.choice == Choice::Close {
        log("person: closing the consent page unanswered");
        cdp.call("Target.closeTarget", json!({"targetId": target}), None)?;
        return Ok(());
    }
    // A click that changed nothing is clicked again, as a person would.
    let mut title = Value::Null;
    for attempt in 1..=3 {
        log(&format!("person: clicking {id} (attempt {attempt})"));
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            cdp.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": at.0, "y": at.1, "button": "left", "clickCount": 1}),
                Some(&session),
            )?;
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            title = evaluate(
                cdp,
                &session,
                "document.readyState === 'complete' && document.title",
            )
            .unwrap_or_default();
            if matches!(title.as_str(), Some("Confirmed" | "Refused")) {
                break;
            }
            thread::sleep(Duration::from_millis(50));
        }
        if title.as_str() != Some("my-chrome asks you") {
            break;
        }
    }
    log(&format!("person: the page says {title}; closing it"));
    cdp.call("Target.closeTarget", json!({"targetId": target}), None)?;
    Ok(())
}
