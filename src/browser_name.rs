//! The browsers my-chrome can be told to use, by name: the words a user
//! types (`my-chrome setup --browser brave`, `MY_CHROME_BROWSER`) and the
//! names messages use. Where each one lives is the platform's
//! (`src/platform/browsers.rs`).

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Browser {
    Chrome,
    ChromeBeta,
    ChromeDev,
    ChromeCanary,
    Chromium,
    Edge,
    Brave,
}

impl Browser {
    pub const ALL: [Browser; 7] = [
        Browser::Chrome,
        Browser::ChromeBeta,
        Browser::ChromeDev,
        Browser::ChromeCanary,
        Browser::Chromium,
        Browser::Edge,
        Browser::Brave,
    ];

    /// The word a user types.
    pub fn name(self) -> &'static str {
        match self {
            Browser::Chrome => "chrome",
            Browser::ChromeBeta => "chrome-beta",
            Browser::ChromeDev => "chrome-dev",
            Browser::ChromeCanary => "chrome-canary",
            Browser::Chromium => "chromium",
            Browser::Edge => "edge",
            Browser::Brave => "brave",
        }
    }

    /// What messages call it.
    pub fn display(self) -> &'static str {
        match self {
            Browser::Chrome => "Google Chrome",
            Browser::ChromeBeta => "Google Chrome Beta",
            Browser::ChromeDev => "Google Chrome Dev",
            Browser::ChromeCanary => "Google Chrome Canary",
            Browser::Chromium => "Chromium",
            Browser::Edge => "Microsoft Edge",
            Browser::Brave => "Brave",
        }
    }

    /// The browser a word names (exactly, lowercase).
    pub fn parse(word: &str) -> Result<Browser, UnknownBrowser> {
        Browser::ALL
            .into_iter()
            .find(|b| b.name() == word)
            .ok_or_else(|| UnknownBrowser(shown(word)))
    }

    /// Every name, for messages: `chrome, chrome-beta, …`.
    pub fn names() -> String {
        Browser::ALL.map(Browser::name).join(", ")
    }
}

impl fmt::Display for Browser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display())
    }
}

/// A word that names no browser of ours (shown quoted, shortened: it may be
/// anything pasted in the wrong place).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not a browser my-chrome knows; use one of: {names}", names = Browser::names())]
pub struct UnknownBrowser(pub String);

fn shown(word: &str) -> String {
    if word.chars().count() > 24 || word.chars().any(char::is_control) {
        format!("a value of {} characters", word.chars().count())
    } else {
        format!("{word:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_nothing_else_does() {
        for browser in Browser::ALL {
            assert_eq!(Browser::parse(browser.name()), Ok(browser));
        }
        for word in ["Chrome", "google-chrome", "msedge", "", " brave", "firefox"] {
            let err = Browser::parse(word).unwrap_err();
            assert!(
                err.to_string().contains("chrome, chrome-beta, chrome-dev"),
                "{err}"
            );
        }
        let long = "x".repeat(60);
        assert!(
            !Browser::parse(&long)
                .unwrap_err()
                .to_string()
                .contains(&long)
        );
    }
}
