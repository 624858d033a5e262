//! The extension's connect tab, taken out of our session. With a token, the
//! extension attaches the session to that very tab, whose address carries
//! the token: a new tab takes its place (closing the last tab would end the
//! connection), then every connect tab is closed, and the session must show
//! none (docs/DESIGN.md, invariant 8). The commands go to the session's
//! daemon through the native client; their output is never shown.

use std::path::Path;

use crate::daemon::request::{Plan, plan_words};
use crate::daemon::{DaemonError, Housekeeping, Reply};
use crate::redact::fingerprint::Fingerprint;

/// How many connect tabs one swap closes; more are refused before any is.
const MAX_CONNECT_TABS: usize = 8;

/// A tab list is a few lines per tab: a reply past this is not one.
const REPLY_LIMIT: usize = 4 << 20;

/// Why the connect tab may still be in the session. Only [`Seen`] means
/// it was: the others say that nothing is known.
///
/// [`Seen`]: ConnectTabError::Seen
#[derive(Debug, thiserror::Error)]
pub enum ConnectTabError {
    /// The daemon did not answer (or is gone): its tabs are unknown.
    #[error(transparent)]
    Daemon(DaemonError),
    /// It answered, but with no tab list.
    #[error("the session's tabs could not be listed ({0})")]
    Unlisted(String),
    /// A connect tab was listed and is still there, or could not be
    /// replaced.
    #[error("{0}")]
    Seen(String),
}

/// One browser command for the daemon behind `socket` (run with `cwd`, the
/// runtime's real path): its text, or why there is none.
fn send(
    socket: &Path,
    cwd: &Path,
    budget: &Housekeeping,
    args: &[&str],
) -> Result<String, ConnectTabError> {
    let words: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let Plan::Run(request) = plan_words(&words, cwd) else {
        return Err(ConnectTabError::Unlisted(format!(
            "`{}` is not a daemon command",
            args.join(" ")
        )));
    };
    match budget.run(socket, &request.bytes, REPLY_LIMIT) {
        // A failed command's text can list the tabs, the connect tab's
        // address among them: never in a message.
        Ok(Reply::Text { is_error: true, .. }) => {
            Err(ConnectTabError::Unlisted("the command failed".into()))
        }
        Ok(Reply::Text {
            text: Some(text), ..
        }) => Ok(text),
        Ok(Reply::Text { text: None, .. }) => Err(ConnectTabError::Unlisted("no answer".into())),
        Ok(Reply::Error(message)) => Err(ConnectTabError::Unlisted(message)),
        Err(e) => Err(ConnectTabError::Daemon(e)),
    }
}

/// Takes every connect tab out of the session behind `socket`, within
/// `budget`: a tab that shows the token `known` fingerprints (the token
/// the session was connected with; without one, any tab naming the
/// connect page).
pub fn close_all(
    socket: &Path,
    cwd: &Path,
    budget: &Housekeeping,
    known: Option<&Fingerprint>,
) -> Result<(), ConnectTabError> {
    let first = first_list(socket, cwd, budget, known)?;
    replace(socket, cwd, budget, known, first)
}

/// The session's tabs as a first list shows them: how many, and which are
/// connect tabs. At `connect`, read before the daemon's rules for the tabs
/// go in (`tabs::stay`): the numbering they bring lists a tab never
/// described before, and late, without its title, where a connect page
/// that failed to load keeps the token. Once described, a late tab keeps
/// the title it had, so later lists still show a connect tab as one.
pub struct Listed {
    tabs: usize,
    connect: Vec<usize>,
}

/// The first list ([`Listed`]).
pub fn first_list(
    socket: &Path,
    cwd: &Path,
    budget: &Housekeeping,
    known: Option<&Fingerprint>,
) -> Result<Listed, ConnectTabError> {
    let text = send(socket, cwd, budget, &["tab-list"])?;
    listed(&text, known).ok_or_else(|| ConnectTabError::Unlisted("no tab list".into()))
}

/// Replaces the connect tabs `first` found: a new tab takes their place
/// (closing the last tab would end the connection), then each is closed,
/// from the last down, so that no close moves the index of one still to
/// close. `tab-new` and `tab-close` answer with the list after them: each
/// must show exactly one tab more, then one less, than the step before,
/// and the tab to close next must still be a connect tab there (else tabs
/// came or went meanwhile, and an index may name another: the swap
/// stops), and the last must show no connect tab. Three requests for
/// the usual one connect tab.
pub fn replace(
    socket: &Path,
    cwd: &Path,
    budget: &Housekeeping,
    known: Option<&Fingerprint>,
    first: Listed,
) -> Result<(), ConnectTabError> {
    if first.connect.is_empty() {
        return Ok(());
    }
    if first.connect.len() > MAX_CONNECT_TABS {
        return Err(ConnectTabError::Seen(format!(
            "{} connect tabs are open, more than {MAX_CONNECT_TABS}",
            first.connect.len()
        )));
    }
    // Opened on an explicit address: a tab opened without one can leave
    // `eval` waiting forever through the extension (seen with 0.2.1 to
    // main-2026-08-21).
    let opened = send(socket, cwd, budget, &["tab-new", "about:blank"]).map_err(|why| {
        ConnectTabError::Seen(format!("no new tab could be opened in its place ({why})"))
    })?;
    let seen = |e: ConnectTabError| ConnectTabError::Seen(format!("it was listed, then {e}"));
    let counted = |text: &str, tabs: usize| -> Result<Listed, ConnectTabError> {
        let now = listed(text, known)
            .ok_or_else(|| ConnectTabError::Unlisted("no tab list".into()))
            .map_err(seen)?;
        if now.tabs != tabs {
            return Err(ConnectTabError::Seen(format!(
                "the session's tabs changed while it was replaced ({tabs} expected, {} listed)",
                now.tabs
            )));
        }
        Ok(now)
    };
    let mut now = counted(&opened, first.tabs + 1)?;
    for (closed, &index) in first.connect.iter().rev().enumerate() {
        // A tab that opened as another closed keeps the count: the index
        // must still show a connect tab, or it may name another tab.
        if !now.connect.contains(&index) {
            return Err(ConnectTabError::Seen(format!(
                "the session's tabs moved while it was replaced (tab {index} is no connect tab now)"
            )));
        }
        // A close that failed answers with no list: a fresh one tells.
        let after = match send(socket, cwd, budget, &["tab-close", &index.to_string()]) {
            Ok(after) => after,
            Err(_) => send(socket, cwd, budget, &["tab-list"]).map_err(seen)?,
        };
        now = counted(&after, first.tabs - closed)?;
    }
    match now.connect.len() {
        0 => Ok(()),
        left => Err(ConnectTabError::Seen(format!(
            "{left} connect tab(s) still open after closing"
        ))),
    }
}

/// How many tabs a reply's leading list shows, and which are connect tabs.
fn listed(text: &str, known: Option<&Fingerprint>) -> Option<Listed> {
    let block = result_block(text);
    let connect = connect_tabs(block, known)?;
    let tabs = block
        .lines()
        .filter(|line| {
            line.strip_prefix("- ")
                .and_then(|tab| tab.split_once(": "))
                .is_some_and(|(index, _)| index.parse::<usize>().is_ok())
        })
        .count();
    Some(Listed { tabs, connect })
}

/// A reply's leading `### Result` section, where `tab-list`, `tab-new` and
/// `tab-close` put the session's list (later sections may hold a page's
/// snapshot, or the list again); a reply that does not start with one,
/// whole.
fn result_block(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("### Result\n") else {
        return text;
    };
    rest.find("\n### ").map_or(rest, |end| &rest[..end])
}

/// The indices of the extension's connect tabs in `tab-list` output
/// (`- 0: (current) [title](url)`): its address in the URL, or in the
/// title (a page that failed to load is titled with its address), with
/// the token `known` fingerprints in it. A page can write the connect
/// page's address into its title or its own address, never the token: so
/// no page makes a session look like it shows the connect tab (which
/// ends it). `None` when it lists no tab at all (an error text), since an
/// attached session always has one.
pub fn connect_tabs(listing: &str, known: Option<&Fingerprint>) -> Option<Vec<usize>> {
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
    let found = tabs.into_iter().filter(|(_, tab)| {
        tab.contains(&page) && known.is_none_or(|fp| fp.found_in(tab.as_bytes()))
    });
    Some(found.map(|(index, _)| index).collect())
}

#[cfg(test)]
mod tests {
    use super::{ConnectTabError, Fingerprint, close_all, connect_tabs, listed, result_block};
    use crate::daemon::Housekeeping;
    use crate::token::Token;
    use std::io::{BufRead, BufReader, Write};
    use std::time::Duration;

    const PAGE: &str = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?x";

    /// A daemon that answers each request, in order, with the next of
    /// `lists` (as a `### Result` list); the commands it was sent.
    fn swap_against(lists: Vec<Vec<&'static str>>) -> (Result<(), ConnectTabError>, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("d.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let server = std::thread::spawn(move || {
            let mut sent = Vec::new();
            for tabs in lists {
                let Ok((stream, _)) = listener.accept() else {
                    break;
                };
                let mut reader = BufReader::new(stream);
                let mut line = Vec::new();
                // The test's own last connection, which asks nothing.
                if reader.read_until(b'\n', &mut line).unwrap() == 0 {
                    break;
                }
                let request: serde_json::Value = serde_json::from_slice(&line).unwrap();
                let args = request["params"]["args"]["_"].as_array().unwrap();
                let words: Vec<&str> = args.iter().map(|a| a.as_str().unwrap()).collect();
                sent.push(words.join(" "));
                let list: Vec<String> = tabs
                    .iter()
                    .enumerate()
                    .map(|(i, url)| format!("- {i}: [t]({url})"))
                    .collect();
                let text = format!("### Result\n{}", list.join("\n"));
                let reply = serde_json::json!({"id": 1, "result": {"text": text}});
                let _ = reader.get_mut().write_all(format!("{reply}\n").as_bytes());
            }
            sent
        });
        let budget = Housekeeping::new(Duration::from_secs(5));
        let result = close_all(&socket, dir.path(), &budget, None);
        drop(std::os::unix::net::UnixStream::connect(&socket));
        (result, server.join().unwrap())
    }

    #[test]
    fn the_swap_closes_the_connect_tab_its_first_list_showed_from_the_replies() {
        let (result, sent) = swap_against(vec![
            vec!["https://a.test/", PAGE],
            vec!["https://a.test/", PAGE, "about:blank"],
            vec!["https://a.test/", "about:blank"],
        ]);
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(sent, ["tab-list", "tab-new about:blank", "tab-close 1"]);
    }

    #[test]
    fn tabs_that_move_during_the_swap_stop_it_before_a_wrong_tab_closes() {
        // A tab came as the new one opened: the count is off.
        let (result, sent) = swap_against(vec![
            vec![PAGE],
            vec![PAGE, "about:blank", "https://popup.test/"],
            vec!["about:blank", "https://popup.test/"],
        ]);
        assert!(
            matches!(result, Err(ConnectTabError::Seen(_))),
            "{result:?}"
        );
        assert!(!sent.iter().any(|c| c.starts_with("tab-close")), "{sent:?}");
        // A tab before the connect tab closed as a popup opened: the count
        // holds, but index 1 is no connect tab any more.
        // (Had it closed tab 1, the daemon would answer with the list
        // after: the new blank tab gone.)
        let (result, sent) = swap_against(vec![
            vec!["https://a.test/", PAGE],
            vec![PAGE, "about:blank", "https://popup.test/"],
            vec![PAGE, "https://popup.test/"],
        ]);
        assert!(
            matches!(result, Err(ConnectTabError::Seen(_))),
            "{result:?}"
        );
        assert!(!sent.iter().any(|c| c.starts_with("tab-close")), "{sent:?}");
        // A close that left the connect tab in place.
        let (result, _) = swap_against(vec![
            vec![PAGE],
            vec![PAGE, "about:blank"],
            vec![PAGE, "about:blank"],
        ]);
        assert!(
            matches!(result, Err(ConnectTabError::Seen(_))),
            "{result:?}"
        );
    }

    #[test]
    fn only_a_tab_with_the_token_is_a_connect_tab_when_the_token_is_known() {
        let token = "Zq3_secretTOKENvalue-0123456789abcdef";
        let fp = Fingerprint::of(&Token::parse(token.as_bytes(), "test").unwrap()).unwrap();
        let page = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html";
        let listing = format!(
            "### Result\n\
            - 0: [Welcome]({page}?mcpRelayUrl=x&token={token})\n\
            - 1: (current) [](about:blank)\n\
            - 2: [{page}](https://evil.test/)\n\
            - 3: [{page}?token=guess](chrome-error://chromewebdata/)\n\
            - 4: [x](https://evil.test/a]({page}?token=guess)\n\
            - 5: [{page}?token={token}](chrome-error://chromewebdata/)\n"
        );
        assert_eq!(connect_tabs(&listing, Some(&fp)), Some(vec![0, 5]));
        assert_eq!(connect_tabs(&listing, None), Some(vec![0, 2, 3, 4, 5]));
    }

    #[test]
    fn the_list_is_read_from_the_leading_result_only() {
        let page = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?x";
        let reply = format!(
            "### Result\n- 0: [](about:blank)\n- 1: (current) [](about:blank)\n\
             ### Page\n- Page URL: about:blank\n### Snapshot\n- 2: [a]({page})\n"
        );
        assert_eq!(
            result_block(&reply),
            "- 0: [](about:blank)\n- 1: (current) [](about:blank)"
        );
        assert_eq!(connect_tabs(result_block(&reply), None), Some(vec![]));
        // Without a leading Result, all of it is read, as before.
        let bare = format!("- 0: [a]({page})\n");
        assert_eq!(connect_tabs(result_block(&bare), None), Some(vec![0]));
        assert_eq!(result_block("### Result\n- 0: [](x)\n"), "- 0: [](x)\n");
        let counted = listed(&reply, None).unwrap();
        assert_eq!((counted.tabs, counted.connect), (2, vec![]));
        assert!(listed("### Error\nError: x\n", None).is_none());
    }

    #[test]
    fn connect_tabs_are_found_by_their_address() {
        let listing = "### Result\n\
            - 0: [Welcome](chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?mcpRelayUrl=x)\n\
            - 1: (current) [](about:blank)\n\
            - 2: [connect.html](https://example.test/connect.html)\n\
            - 3: [x](chrome-extension://abcdefghijklmnopabcdefghijklmnop/connect.html?a)\n\
            - 4: (current) [](chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?<redacted>)\n\
            - 5: [chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html?x](chrome-error://chromewebdata/)\n";
        assert_eq!(connect_tabs(listing, None), Some(vec![0, 4, 5]));
        assert_eq!(
            connect_tabs("### Result\n- 0: (current) [](about:blank)\n", None),
            Some(vec![])
        );
        // An error text lists no tab: that is no answer, not "none open".
        assert_eq!(
            connect_tabs("### Error\nError: Browser has been closed\n", None),
            None
        );
    }
}
