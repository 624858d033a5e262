//! The user's Chrome as the process table shows it: the set of normal
//! Chrome main processes, and whether any process carries the extension
//! token in its command line or environment. Read-only: nothing here starts,
//! signals or changes a process.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::exit::Exit;
use crate::procs::ProcessTable;
use crate::token_shape;

/// The Playwright Extension's id in the Chrome Web Store.
pub const EXTENSION_ID: &str = "mmlmfjhmonkocbjadbfplnigmagldckm";

/// Arguments that mark a helper, a second profile, or an automated browser:
/// not the user's normal Chrome.
const NOT_NORMAL: [&str; 8] = [
    "--type=",
    "--user-data-dir=",
    "--remote-debugging-port",
    "--remote-debugging-pipe",
    "--headless",
    "--enable-automation",
    "--test-type=webdriver",
    "--no-startup-window",
];

/// The sorted PIDs of normal Chrome main processes: ours, running exactly
/// `chrome` (after symlinks; a Chrome updated underneath still counts, as
/// sysinfo drops Linux's ` (deleted)` suffix), and carrying none of
/// [`NOT_NORMAL`] anywhere in the command line. Chrome rewrites its helpers'
/// command lines into one space-joined string (setproctitle), so every
/// space-separated word of every element is checked, argv[0] included.
pub fn normal_chrome_pids(table: &ProcessTable, chrome: &Path) -> Vec<u32> {
    let me = nix::unistd::geteuid().as_raw();
    let real: PathBuf = fs::canonicalize(chrome).unwrap_or_else(|_| chrome.to_path_buf());
    let mut pids: Vec<u32> = table
        .iter()
        .filter(|p| p.uid == Some(me))
        .filter(|p| p.exe == Some(real.as_path()))
        .filter(|p| {
            let mut words = p
                .cmd
                .iter()
                .flat_map(|arg| arg.as_bytes().split(|b| *b == b' '));
            !words.any(|word| {
                NOT_NORMAL
                    .iter()
                    .any(|flag| word.starts_with(flag.as_bytes()))
            })
        })
        .map(|p| p.pid)
        .collect();
    pids.sort_unstable();
    pids
}

/// The normal-Chrome state of `table`, in one step.
pub fn state(table: &ProcessTable, chrome: &Path) -> ChromeState {
    require_single(&normal_chrome_pids(table, chrome))
}

/// What `connect` needs: exactly one normal Chrome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChromeState {
    Running(u32),
    Missing,
    Ambiguous(Vec<u32>),
}

pub fn require_single(pids: &[u32]) -> ChromeState {
    match pids {
        [] => ChromeState::Missing,
        [pid] => ChromeState::Running(*pid),
        many => ChromeState::Ambiguous(many.to_vec()),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ChromeError {
    #[error(
        "{browser} is not running (no normal main process of yours runs {}). my-chrome never \
         launches a browser and launched none: open {browser} yourself, then retry",
        .path.display()
    )]
    Missing { browser: String, path: PathBuf },
    #[error(
        "{} main processes of {browser} are running (pids {pids:?}), so my-chrome cannot tell \
         which one is yours; nothing was launched or touched. Quit the extra ones (profiles \
         started with --user-data-dir do not count), then retry",
        .pids.len()
    )]
    Ambiguous { browser: String, pids: Vec<u32> },
    #[error(
        "{0}; every process running it would count as your browser, so nothing was read or \
         attached. Reinstall the browser where only root (or you) can change it, or point \
         MY_CHROME_CHROME at such a copy"
    )]
    Replaceable(String),
}

impl ChromeError {
    pub fn exit(&self) -> Exit {
        match self {
            ChromeError::Replaceable(_) => Exit::Security,
            ChromeError::Missing { .. } | ChromeError::Ambiguous { .. } => Exit::Chrome,
        }
    }
}

/// Whether the Chrome executable (after links) and every folder on its way
/// are beyond other users' reach (a folder's group excepted): the PID
/// checks recognise Chrome by that
/// file alone, so a user who could replace it could have their program pass
/// as the user's Chrome. Owner root or us; the file not writable by group or
/// others; a folder not writable by others unless it is root's and sticky
/// (`/tmp`). Group-writable folders pass: macOS's `/Applications` is the
/// admin group's. `Ok(false)`: nothing there (connect refuses, exit 5).
pub fn executable_is_trusted(chrome: &Path) -> Result<bool, ChromeError> {
    use std::os::unix::fs::MetadataExt;
    let unsafe_because = |why: String| Err(ChromeError::Replaceable(why));
    let real = match fs::canonicalize(chrome) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return unsafe_because(format!("cannot resolve {}: {e}", chrome.display())),
    };
    let me = nix::unistd::geteuid().as_raw();
    for (depth, path) in real.ancestors().enumerate() {
        let meta = match fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) => return unsafe_because(format!("cannot read {}: {e}", path.display())),
        };
        let owner_ok = meta.uid() == me || meta.uid() == 0;
        let writable = if depth == 0 {
            meta.mode() & 0o022 != 0
        } else {
            meta.mode() & 0o002 != 0 && !(meta.uid() == 0 && meta.mode() & 0o1000 != 0)
        };
        if !owner_ok || writable {
            return unsafe_because(format!(
                "the browser's executable {} can be replaced by another user: {} has owner uid \
                 {} and mode {:o}",
                chrome.display(),
                path.display(),
                meta.uid(),
                meta.mode() & 0o7777
            ));
        }
    }
    Ok(true)
}

/// The one normal main process of `browser` (what messages call it)
/// running `executable`, which must be beyond other users' reach: its pid,
/// and the set it is the only one of (to compare after). What `connect`
/// and a consent request both check before they hand the browser anything.
pub fn the_one_running(
    table: &ProcessTable,
    browser: &str,
    executable: &Path,
) -> Result<(u32, Vec<u32>), ChromeError> {
    if !executable_is_trusted(executable)? {
        // No file there: a process still running a deleted one is no
        // browser whose executable was checked.
        return Err(ChromeError::Missing {
            browser: browser.into(),
            path: executable.to_path_buf(),
        });
    }
    let pids = normal_chrome_pids(table, executable);
    let pid = require_single(&pids).single(browser, executable)?;
    Ok((pid, pids))
}

impl ChromeState {
    /// The one PID, or the error that explains why there is not exactly
    /// one main process of `browser` (what messages call it) at `path`.
    pub fn single(self, browser: &str, path: &Path) -> Result<u32, ChromeError> {
        match self {
            ChromeState::Running(pid) => Ok(pid),
            ChromeState::Missing => Err(ChromeError::Missing {
                browser: browser.into(),
                path: path.to_path_buf(),
            }),
            ChromeState::Ambiguous(pids) => Err(ChromeError::Ambiguous {
                browser: browser.into(),
                pids,
            }),
        }
    }
}

/// Whether the extension token shows in any process of ours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exposure {
    Absent,
    /// The PIDs, never the value.
    Exposed(Vec<u32>),
}

/// Scans the command line and the environment of every process of ours for
/// the extension's `connect.html` URL with a `token=` parameter (and for the
/// upstream `PLAYWRIGHT_MCP_EXTENSION_TOKEN` variable, which holds the same
/// secret). It looks in place: no copies of other processes' secrets.
pub fn token_exposure(table: &ProcessTable) -> Exposure {
    let me = nix::unistd::geteuid().as_raw();
    let mut pids: Vec<u32> = table
        .iter()
        .filter(|p| p.uid == Some(me))
        .filter(|p| {
            p.cmd.iter().any(|a| carries_token(a.as_bytes()))
                || p.environ
                    .iter()
                    .any(|v| carries_token(v.as_bytes()) || is_token_variable(v.as_bytes()))
        })
        .map(|p| p.pid)
        .collect();
    pids.sort_unstable();
    if pids.is_empty() {
        Exposure::Absent
    } else {
        Exposure::Exposed(pids)
    }
}

/// True when `text` holds `chrome-extension://<id>/connect.html?…` whose
/// query has a `token` parameter (ASCII case-insensitive, `=` or `%3D`).
pub fn carries_token(text: &[u8]) -> bool {
    let page = format!("chrome-extension://{EXTENSION_ID}/connect.html?");
    let mut rest = text;
    while let Some(at) = find(rest, page.as_bytes()) {
        rest = &rest[at + page.len()..];
        let end = rest
            .iter()
            .position(|b| b.is_ascii_whitespace() || *b == b'#');
        let query = &rest[..end.unwrap_or(rest.len())];
        let has_token = query.split(|b| *b == b'&').any(|param| {
            starts_with_ignore_case(param, b"token=") || starts_with_ignore_case(param, b"token%3d")
        });
        if has_token {
            return true;
        }
    }
    false
}

fn is_token_variable(entry: &[u8]) -> bool {
    entry
        .strip_prefix(token_shape::VARIABLE.as_bytes())
        .and_then(|rest| rest.strip_prefix(b"="))
        .is_some_and(|value| !value.is_empty())
}

fn starts_with_ignore_case(text: &[u8], prefix: &[u8]) -> bool {
    text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// ASCII case-insensitive search.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html";

    #[test]
    fn a_token_parameter_anywhere_in_the_query_counts() {
        for text in [
            format!("{PAGE}?token=abc"),
            format!("chrome {PAGE}?mcpRelayUrl=ws%3A%2F%2F127.0.0.1&protocolVersion=2&token=abc"),
            format!("{}?x=1&TOKEN=abc", PAGE.to_uppercase()),
            format!("{PAGE}?x=1&token%3Dabc"),
        ] {
            assert!(carries_token(text.as_bytes()), "{text}");
        }
    }

    #[test]
    fn the_page_without_a_token_or_a_token_elsewhere_does_not() {
        for text in [
            format!("{PAGE}?mcpRelayUrl=ws://127.0.0.1:1/extension/x&protocolVersion=2"),
            format!("{PAGE}?mytoken=abc"),
            format!("{PAGE}?x=1 --flag token=abc"),
            "https://example.test/connect.html?token=abc".to_string(),
            "chrome-extension://otherextensionidxxxxxxxxxxxxxxxx/connect.html?token=abc"
                .to_string(),
        ] {
            assert!(!carries_token(text.as_bytes()), "{text}");
        }
    }

    #[test]
    fn exactly_one_normal_chrome_is_running() {
        assert_eq!(require_single(&[]), ChromeState::Missing);
        assert_eq!(require_single(&[7]), ChromeState::Running(7));
        assert_eq!(require_single(&[7, 9]), ChromeState::Ambiguous(vec![7, 9]));
    }

    #[test]
    fn the_upstream_token_variable_counts_only_with_a_value() {
        assert!(is_token_variable(b"PLAYWRIGHT_MCP_EXTENSION_TOKEN=abc"));
        assert!(!is_token_variable(b"PLAYWRIGHT_MCP_EXTENSION_TOKEN="));
        assert!(!is_token_variable(
            b"OTHER=PLAYWRIGHT_MCP_EXTENSION_TOKEN=abc"
        ));
    }
}
