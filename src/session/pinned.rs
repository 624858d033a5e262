//! The pinned CLI as my-chrome runs it for our session's housekeeping
//! (list, detach, the connect tab): cleared environment, cwd = the runtime,
//! token-free, bounded, its output captured and never shown.

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::child::{ChildCommand, ChildEnv, ChildError, Finished};
use crate::error::Error;
use crate::exit::Exit;
use crate::helper::Helper;
use crate::helper::node::Node;
use crate::runtime::Runtime;

/// How many connect tabs one `close_connect_tabs` closes at most.
const MAX_CONNECT_TABS: usize = 8;

/// Bound on housekeeping commands (invariant 10).
pub const HOUSEKEEPING_TIMEOUT: Duration = Duration::from_secs(8);

pub struct PinnedCli<'a> {
    pub node: &'a Node,
    pub helper: &'a Helper,
    pub env: &'a ChildEnv,
    pub runtime: &'a Runtime,
    pub session: &'a str,
}

impl PinnedCli<'_> {
    /// Runs a housekeeping command, its output captured (never shown). An
    /// interrupt or a timeout is an error, as is a failure to start.
    pub fn run(&self, what: &str, args: &[&str]) -> Result<Finished, ChildError> {
        ChildCommand::new(
            what,
            &self.node.path,
            self.runtime.root(),
            HOUSEKEEPING_TIMEOUT,
        )
        .arg(self.helper.entry())
        .args(args)
        .run(self.env)
    }

    /// `detach` of our session, never with a token in sight. It runs even
    /// after SIGINT, SIGTERM or SIGHUP: it is the cleanup they ask for.
    pub fn detach(&self) -> bool {
        let session = format!("-s={}", self.session);
        ChildCommand::new(
            "playwright-cli detach",
            &self.node.path,
            self.runtime.root(),
            HOUSEKEEPING_TIMEOUT,
        )
        .arg(self.helper.entry())
        .args([session.as_str(), "detach"])
        .despite_signals()
        .run(self.env)
        .is_ok_and(|f| f.status.success())
    }

    /// Another attached Chrome session in any workspace, by name.
    pub fn other_attached(&self, workspace: &Path) -> Result<Option<String>, Error> {
        let listed = self.run("playwright-cli list", &["list", "--all", "--json"])?;
        if !listed.status.success() {
            return Err(Error::refused(
                Exit::Failure,
                "cannot list the open Playwright sessions; nothing was attached",
            ));
        }
        let doc: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap_or_default();
        let ours = fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let other = doc["browsers"].as_array().into_iter().flatten().find(|b| {
            b["attached"] == true
                && !(b["name"] == self.session
                    && Path::new(b["workspace"].as_str().unwrap_or_default()) == ours)
        });
        Ok(other.map(|b| {
            format!(
                "{} (workspace {})",
                b["name"].as_str().unwrap_or("?"),
                b["workspace"].as_str().unwrap_or("?")
            )
        }))
    }

    /// Takes the extension's connect tab out of the session. With a token,
    /// the extension attaches the session to that very tab, whose address
    /// carries the token: a new tab takes its place (closing the last tab
    /// would end the connection), then every connect tab is closed, and the
    /// session must show none (docs/DESIGN.md, invariant 8). The CLI's output is
    /// never shown.
    pub fn close_connect_tabs(&self) -> Result<(), String> {
        let session = format!("-s={}", self.session);
        let list = || {
            self.run("playwright-cli tab-list", &[&session, "tab-list"])
                .ok()
                .filter(|f| f.status.success())
                .and_then(|f| connect_tabs(&f.stdout_text()))
                .ok_or_else(|| "the session's tabs could not be listed".to_string())
        };
        let found = list()?;
        if found.is_empty() {
            return Ok(());
        }
        // Opened on an explicit address: a tab opened without one can leave
        // `eval` waiting forever through the extension (seen with 0.2.1 to
        // main-2026-08-21).
        self.run(
            "playwright-cli tab-new",
            &[&session, "tab-new", "about:blank"],
        )
        .ok()
        .filter(|f| f.status.success())
        .ok_or("no new tab could be opened in its place")?;
        // One at a time, from a fresh list: a tab that went away meanwhile
        // must not shift an index onto one of the user's tabs.
        for _ in 0..MAX_CONNECT_TABS {
            let Some(&last) = list()?.last() else {
                return Ok(());
            };
            self.run(
                "playwright-cli tab-close",
                &[&session, "tab-close", &last.to_string()],
            )
            .map_err(|e| e.to_string())?;
        }
        match list()?.len() {
            0 => Ok(()),
            left => Err(format!("{left} connect tab(s) still open after closing")),
        }
    }
}

/// The indices of the extension's connect tabs in `tab-list` output
/// (`- 0: (current) [title](url)`): its address in the URL, or in the
/// title (a page that failed to load is titled with its address); `None`
/// when it lists no tab at all (an error text: the CLI exits 0 with those
/// too), since an attached session always has one.
pub fn connect_tabs(listing: &str) -> Option<Vec<usize>> {
    let page = format!(
        "chrome-extension://{}/connect.html",
        crate::chrome::EXTENSION_ID
    );
    let tabs: Vec<(usize, &str)> = listing
        .lines()
        .filter_map(|line| {
            let (index, tab) = line.strip_prefix("- ")?.split_once(": ")?;
            Some((index.parse().ok()?, tab))
        })
        .collect();
    if tabs.is_empty() {
        return None;
    }
    let found = tabs.into_iter().filter(|(_, tab)| tab.contains(&page));
    Some(found.map(|(index, _)| index).collect())
}

#[cfg(test)]
mod tests {
    use super::connect_tabs;

    #[test]
    fn connect_tabs_are_found_by_their_address() {
        let listing = "### Result\n\
            - 0: [Welcome](chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?mcpRelayUrl=x)\n\
            - 1: (current) [](about:blank)\n\
            - 2: [connect.html](https://example.test/connect.html)\n\
            - 3: [x](chrome-extension://abcdefghijklmnopabcdefghijklmnop/connect.html?a)\n\
            - 4: (current) [](chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?<redacted>)\n\
            - 5: [chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?x](chrome-error://chromewebdata/)\n";
        assert_eq!(connect_tabs(listing), Some(vec![0, 4, 5]));
        assert_eq!(
            connect_tabs("### Result\n- 0: (current) [](about:blank)\n"),
            Some(vec![])
        );
        // An error text lists no tab: that is no answer, not "none open".
        assert_eq!(
            connect_tabs("### Error\nError: Browser has been closed\n"),
            None
        );
    }
}
