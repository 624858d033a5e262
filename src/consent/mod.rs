//! The user's consent, asked in the user's own browser (docs/DESIGN.md,
//! "Asking the user"). A step that gives an agent more (another's tab, a
//! wider file root, a longer session, the token's own steps, a connect)
//! runs only after the person confirms it on a page my-chrome serves from
//! 127.0.0.1 at a secret address and hands to the running browser through
//! its process singleton, as `connect` hands over its URL: the address is
//! in no command line, no output, and no tab of the Playwright session.
//! An agent may ask; only the person's click grants.

pub mod page;
pub mod server;

use std::time::Duration;

use crate::browser::{self, BrowserError, Chosen};
use crate::chrome::{self, ChromeError};
use crate::config::Config;
use crate::exit::Exit;
use crate::procs::{ProcError, ProcessTable};
use crate::singleton::{self, DeliveryError};

pub use page::Asked;
use server::{Answer, Pending, ServerError};

/// How long the browser has to take the page's address.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum ConsentError {
    #[error(transparent)]
    Browser(#[from] BrowserError),
    #[error(
        "{0} (my-chrome asks the user's consent in their running browser, so nothing was asked \
         and nothing changed)"
    )]
    Chrome(#[from] ChromeError),
    #[error(transparent)]
    Processes(#[from] ProcError),
    #[error(
        "cannot show {browser} the consent page: {why}; nothing changed. Ask the user to check \
         the browser, then run the step again"
    )]
    Delivery { browser: String, why: DeliveryError },
    #[error("the consent page could not be served ({0}); nothing changed. Run the step again")]
    Server(ServerError),
    #[error("{0}; the request was ended and nothing changed. Ask the user to run the step again")]
    Tampered(String),
    #[error("interrupted while waiting for the user's answer; nothing changed")]
    Interrupted,
    #[error(
        "the user refused in the browser: {0} Nothing changed; ask the user before asking again"
    )]
    Refused(String),
    #[error(
        "{0}, so what they confirmed is not what it is now; nothing changed. Ask the user again \
         if it is still wanted"
    )]
    Meanwhile(String),
    #[error(
        "the user closed the consent page without answering: {0} Nothing changed; ask the user \
         before asking again"
    )]
    Closed(String),
    #[error(
        "the user did not confirm within {} s: {what} Nothing changed; ask the user before \
         asking again",
        .waited.as_secs()
    )]
    Expired { what: String, waited: Duration },
}

impl ConsentError {
    pub fn exit(&self) -> Exit {
        match self {
            ConsentError::Browser(e) => e.exit(),
            ConsentError::Chrome(e) => e.exit(),
            ConsentError::Processes(_) | ConsentError::Server(_) => Exit::Failure,
            ConsentError::Delivery { why, .. } => why.exit(),
            ConsentError::Tampered(_) => Exit::Security,
            ConsentError::Interrupted => Exit::Failure,
            ConsentError::Refused(_)
            | ConsentError::Closed(_)
            | ConsentError::Expired { .. }
            | ConsentError::Meanwhile(_) => Exit::Busy,
        }
    }
}

/// The user's browser, running, and its singleton in place: where the
/// page goes. The same checks `connect` makes before it hands over a URL.
fn running_browser(config: &Config) -> Result<(Chosen, u32), ConsentError> {
    let browser = browser::resolve(config)?;
    let name = browser.display();
    let table = ProcessTable::read()?;
    let (pid, _) = chrome::the_one_running(&table, &name, &browser.executable)?;
    singleton::precheck(&browser.user_data, pid)
        .map_err(|why| ConsentError::Delivery { browser: name, why })?;
    Ok((browser, pid))
}

/// Asks the person, in their browser, and waits for the answer: `Ok` only
/// when they confirmed. A pending signal ends the wait early.
pub fn ask(config: &Config, asked: Asked) -> Result<(), ConsentError> {
    let (browser, pid) = running_browser(config)?;
    let what = asked.heading.clone();
    let mut pending = Pending::open(asked, config.consent_wait).map_err(ConsentError::Server)?;
    let url = pending.url();
    singleton::deliver(
        &browser.user_data,
        pid,
        &browser.executable,
        url.as_bytes(),
        // Not a tab of the front window: its opener would be that window's
        // active tab, perhaps an agent's, and the extension adopts a tab an
        // attached one opened (its own tab group's, at main) into the
        // session. A window of its own has no opener and no group.
        singleton::Opened::InNewWindow,
        DELIVERY_TIMEOUT,
    )
    .map_err(|why| ConsentError::Delivery {
        browser: browser.display(),
        why,
    })?;
    drop(url);
    crate::output::notice(&format!(
        "my-chrome: asked the user in {} (nothing happens unless they confirm there; waiting up \
         to {} s): {what}",
        browser.display(),
        config.consent_wait.as_secs()
    ));
    match pending.wait(|| crate::signals::pending().is_some()) {
        Ok(Answer::Confirmed) => Ok(()),
        Ok(Answer::Refused) => Err(ConsentError::Refused(what)),
        Ok(Answer::Closed) => Err(ConsentError::Closed(what)),
        Ok(Answer::Expired) => Err(ConsentError::Expired {
            what,
            waited: config.consent_wait,
        }),
        Err(ServerError::Interrupted) => Err(ConsentError::Interrupted),
        Err(ServerError::Tampered(why)) => Err(ConsentError::Tampered(why)),
        Err(e) => Err(ConsentError::Server(e)),
    }
}

/// The row that says who asks: the name the caller gives or derives, said
/// as a claim (these commands prove no name).
pub fn asked_by(config: &Config) -> (String, String) {
    (
        "Asked by".into(),
        format!(
            "a command that calls itself agent {} (a name it gives, not proven)",
            page::shown(&crate::identity::said(config))
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_says_nothing_changed_with_its_exit() {
        let what = || "give tab t3 to agent b?".to_string();
        let cases = [
            (ConsentError::Refused(what()), Exit::Busy),
            (ConsentError::Closed(what()), Exit::Busy),
            (
                ConsentError::Meanwhile("agent dan began work while the user was asked".into()),
                Exit::Busy,
            ),
            (
                ConsentError::Expired {
                    what: what(),
                    waited: Duration::from_secs(120),
                },
                Exit::Busy,
            ),
            (
                ConsentError::Tampered("an answer came from origin None".into()),
                Exit::Security,
            ),
            (
                ConsentError::Delivery {
                    browser: "Chromium".into(),
                    why: DeliveryError::NotChrome("lock cannot be read".into()),
                },
                Exit::Chrome,
            ),
            (
                ConsentError::Server(ServerError::Listen("no port".into())),
                Exit::Failure,
            ),
        ];
        for (error, exit) in cases {
            let said = error.to_string();
            assert_eq!(error.exit(), exit, "{said}");
            assert!(said.to_lowercase().contains("nothing changed"), "{said}");
            assert!(
                said.contains("ask the user")
                    || said.contains("Ask the user")
                    || said.contains("Run the step again"),
                "no next step: {said}"
            );
            assert!(!said.contains("http://"), "no address is said: {said}");
        }
    }
}
