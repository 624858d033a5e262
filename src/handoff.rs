//! The hand-off between `connect` and the relay's "browser" (docs/DESIGN.md,
//! "Delivering the connect URL", steps 1–3). `connect` runs the CLI's attach
//! with `PLAYWRIGHT_MCP_EXECUTABLE_PATH` = this binary and
//! `MY_CHROME_HANDOFF` = a one-shot socket in a private directory. The relay
//! then starts `my-chrome <connect URL>`, which is only a courier: it sends
//! the URL (which carries no token) to the socket and exits 0 once `connect`
//! has delivered it to Chrome. `connect` accepts one courier, run by us, whose
//! parent chain leads to the daemon it started, with a well-formed URL. A
//! courier that refuses its URL says so on the socket (`REFUSED …`), so that
//! `connect` reports the refusal at once instead of waiting for its bound.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use crate::chrome::EXTENSION_ID;
use crate::exit::Exit;
use crate::procs::ProcessTable;
use crate::runtime::Runtime;
use crate::signals;

const URL_LIMIT: u64 = 8192;

#[derive(Debug, thiserror::Error)]
pub enum HandoffError {
    #[error("the connect URL is not the extension's: {0}")]
    BadUrl(String),
    #[error(
        "the connect URL already carries a token: something gave the CLI one \
         (PLAYWRIGHT_MCP_EXTENSION_TOKEN?); it was not passed on"
    )]
    TokenInUrl,
    #[error("a courier that is not ours reached the hand-off socket ({0}); nothing was delivered")]
    Impostor(String),
    #[error(
        "a bare connect URL is refused: my-chrome hands the extension's connect page to the browser \
         only for its own `my-chrome connect`"
    )]
    NoHandoff,
    #[error("no courier came within {} s", .0.as_secs())]
    TimedOut(Duration),
    #[error("interrupted by {0} while waiting for the relay")]
    Interrupted(nix::sys::signal::Signal),
    /// The courier refused the URL the relay gave it (the reason, never
    /// the URL).
    #[error(
        "the pinned CLI's relay asked the browser to open a connect URL that my-chrome refuses ({0}); \
         nothing was sent to the browser"
    )]
    Refused(String),
    /// The same, for a URL that already carried a token.
    #[error(
        "the pinned CLI's relay asked the browser to open a connect URL that already carries a token \
         (something gave the CLI one: PLAYWRIGHT_MCP_EXTENSION_TOKEN?); nothing was sent to the browser"
    )]
    RefusedToken,
    #[error("the hand-off failed: {0}")]
    Io(String),
}

impl HandoffError {
    pub fn exit(&self) -> Exit {
        match self {
            HandoffError::BadUrl(_) | HandoffError::NoHandoff => Exit::Usage,
            HandoffError::TokenInUrl | HandoffError::RefusedToken | HandoffError::Impostor(_) => {
                Exit::Security
            }
            HandoffError::Refused(_) => Exit::Failure,
            HandoffError::TimedOut(_) => Exit::Timeout,
            HandoffError::Interrupted(signal) => Exit::from(*signal),
            HandoffError::Io(_) => Exit::Failure,
        }
    }
}

fn io(e: std::io::Error) -> HandoffError {
    HandoffError::Io(e.to_string())
}

/// A connect URL as the relay builds it, checked: the extension's
/// `connect.html`, a relay on `ws://127.0.0.1:<port>/extension/<uuid>` or
/// `ws://[::1]:<port>/extension/<uuid>` (the only hosts the extension
/// accepts; the relay listens on `localhost`, which resolves to `::1` first
/// on many hosts), and no token yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectUrl(String);

impl ConnectUrl {
    pub fn parse(raw: &str) -> Result<ConnectUrl, HandoffError> {
        let not_connect_url = |why: &str| HandoffError::BadUrl(why.to_string());
        let url = url::Url::parse(raw).map_err(|_| not_connect_url("not a URL"))?;
        // Checked first, so that no other refusal can pass a token on.
        if url
            .query_pairs()
            .any(|(key, _)| key.eq_ignore_ascii_case("token"))
        {
            return Err(HandoffError::TokenInUrl);
        }
        if url.scheme() != "chrome-extension" || url.host_str() != Some(EXTENSION_ID) {
            return Err(not_connect_url("not the Playwright Extension"));
        }
        if url.path() != "/connect.html" || url.fragment().is_some() || !url.username().is_empty() {
            return Err(not_connect_url("not its connect page"));
        }
        let relay = url
            .query_pairs()
            .find(|(key, _)| key == "mcpRelayUrl")
            .map(|(_, value)| value.into_owned())
            .ok_or_else(|| not_connect_url("no mcpRelayUrl"))?;
        let relay =
            url::Url::parse(&relay).map_err(|_| not_connect_url("mcpRelayUrl is not a URL"))?;
        check_relay(&relay)?;
        Ok(ConnectUrl(raw.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The relay's WebSocket address: `ws` on a loopback host the extension
/// accepts, an explicit port, the `/extension/<uuid>` path, nothing else.
fn check_relay(relay: &url::Url) -> Result<(), HandoffError> {
    use std::net::{Ipv4Addr, Ipv6Addr};
    use url::Host;
    let not_connect_url = |why: String| Err(HandoffError::BadUrl(why));
    let loopback = match relay.host() {
        Some(Host::Ipv4(address)) => address == Ipv4Addr::LOCALHOST,
        Some(Host::Ipv6(address)) => address == Ipv6Addr::LOCALHOST,
        _ => false,
    };
    if !loopback {
        let host = relay.host_str().unwrap_or("none");
        return not_connect_url(format!(
            "mcpRelayUrl's host is {host}; the extension accepts only 127.0.0.1 and [::1]"
        ));
    }
    let uuid = relay.path().strip_prefix("/extension/").unwrap_or_default();
    let is_uuid = uuid.len() == 36 && uuid.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    let plain = relay.scheme() == "ws"
        && relay.port().is_some()
        && relay.query().is_none()
        && relay.fragment().is_none()
        && relay.username().is_empty()
        && relay.password().is_none();
    if !plain || !is_uuid {
        return not_connect_url(
            "mcpRelayUrl is not ws://<loopback>:<port>/extension/<uuid>".into(),
        );
    }
    Ok(())
}

/// What a courier that refuses its URL sends instead of it.
const REFUSED: &str = "REFUSED ";
const REFUSED_TOKEN: &str = "REFUSED-TOKEN";

/// The listening side, in a private directory of the runtime.
pub struct Handoff {
    dir: tempfile::TempDir,
    listener: UnixListener,
}

/// A courier that passed every check, waiting for the outcome.
pub struct Courier {
    stream: UnixStream,
    pub url: ConnectUrl,
    /// The process table its ancestry was checked in, read once it
    /// connected: `connect` takes the browser's PID set from it too.
    pub table: ProcessTable,
}

impl Handoff {
    pub fn open(runtime: &Runtime) -> Result<Handoff, HandoffError> {
        let dir = tempfile::Builder::new()
            .prefix("handoff.")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(runtime.root())
            .map_err(io)?;
        let listener = UnixListener::bind(dir.path().join("socket")).map_err(io)?;
        listener.set_nonblocking(true).map_err(io)?;
        Ok(Handoff { dir, listener })
    }

    /// What `MY_CHROME_HANDOFF` is set to.
    pub fn socket_path(&self) -> PathBuf {
        self.dir.path().join("socket")
    }

    /// Waits for the one courier, up to `bound` (or a signal). The first
    /// connection decides: anything wrong with it fails the hand-off.
    pub fn accept(&self, daemon: u32, bound: Duration) -> Result<Courier, HandoffError> {
        let deadline = Instant::now() + bound;
        let stream = loop {
            match self.listener.accept() {
                Ok((stream, _)) => break stream,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => return Err(io(e)),
            }
            if let Some(signal) = signals::pending() {
                return Err(HandoffError::Interrupted(signal));
            }
            if Instant::now() >= deadline {
                return Err(HandoffError::TimedOut(bound));
            }
            thread::sleep(Duration::from_millis(10));
        };
        stream.set_nonblocking(false).map_err(io)?;
        let table = check_courier(&stream, daemon)?;
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_secs(1));
        stream.set_read_timeout(Some(left)).map_err(io)?;
        let mut line = String::new();
        BufReader::new((&stream).take(URL_LIMIT))
            .read_line(&mut line)
            .map_err(io)?;
        let line = line.trim_end();
        if line == REFUSED_TOKEN {
            return Err(HandoffError::RefusedToken);
        }
        if let Some(why) = line.strip_prefix(REFUSED) {
            return Err(HandoffError::Refused(printable(why)));
        }
        let url = ConnectUrl::parse(line)?;
        Ok(Courier { stream, url, table })
    }
}

impl Courier {
    /// Tells the courier how it went: it exits 0 only on `OK`.
    pub fn answer(mut self, delivered: bool) {
        let _ = self
            .stream
            .write_all(if delivered { b"OK\n" } else { b"NO\n" });
    }
}

/// The peer must be ours, and a descendant of the daemon we started;
/// the table that shows it.
fn check_courier(stream: &UnixStream, daemon: u32) -> Result<ProcessTable, HandoffError> {
    let peer = crate::platform::peer_credentials(stream)
        .map_err(|e| HandoffError::Io(e.source.to_string()))?;
    let (pid, uid) = (peer.pid as u32, peer.uid);
    if uid != nix::unistd::geteuid().as_raw() {
        return Err(HandoffError::Impostor(format!(
            "pid {pid} runs as uid {uid}"
        )));
    }
    let table = ProcessTable::read().map_err(|e| HandoffError::Io(e.to_string()))?;
    if pid != daemon && !table.ancestors(pid).contains(&daemon) {
        return Err(HandoffError::Impostor(format!(
            "pid {pid} was not started by the attach's daemon (pid {daemon})"
        )));
    }
    Ok(table)
}

/// A refusal's reason as `connect` shows it: one line of printable ASCII.
fn printable(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(300)
        .collect()
}

/// `my-chrome <connect URL>`: the courier. It never sees a token, and
/// refuses to carry one. A URL it refuses is not passed on; the refusal is,
/// so that `connect` can say at once what went wrong.
pub fn courier(handoff: Option<&Path>, raw_url: &str) -> Result<(), HandoffError> {
    let socket = handoff.ok_or(HandoffError::NoHandoff)?;
    let checked = ConnectUrl::parse(raw_url);
    let line = match &checked {
        Ok(url) => url.as_str().to_string(),
        Err(HandoffError::TokenInUrl) => REFUSED_TOKEN.to_string(),
        Err(refusal) => format!("{REFUSED}{refusal}"),
    };
    let mut stream = crate::socket::connect_within(socket, Duration::from_secs(10))
        .map_err(|e| io(std::io::Error::other(e.to_string())))?;
    stream.write_all(line.as_bytes()).map_err(io)?;
    stream.write_all(b"\n").map_err(io)?;
    stream.shutdown(Shutdown::Write).map_err(io)?;
    // Wait for the answer even after a refusal: `connect` checks who we are
    // from our process while we are connected, then closes.
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .map_err(io)?;
    let mut answer = String::new();
    let read = (&stream).take(16).read_to_string(&mut answer).map_err(io);
    checked?;
    read?;
    if answer.trim() == "OK" {
        Ok(())
    } else {
        Err(HandoffError::Io(
            "connect did not deliver the URL to the browser".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RELAY: &str =
        "ws%3A%2F%2F127.0.0.1%3A41234%2Fextension%2F0f8fad5b-d9cb-469f-a165-70867728950e";

    fn url(query: &str) -> String {
        format!("chrome-extension://{EXTENSION_ID}/connect.html?{query}")
    }

    #[test]
    fn a_listener_that_fails_is_an_error_at_once_not_a_wait() {
        let dir = tempfile::tempdir().unwrap();
        let listener = UnixListener::bind(dir.path().join("socket")).unwrap();
        // The listener's descriptor now names a plain file: accept fails
        // with ENOTSOCK, which is no "nobody yet".
        let mut fd = std::os::fd::OwnedFd::from(listener);
        let file = std::fs::File::create(dir.path().join("plain")).unwrap();
        nix::unistd::dup2(&file, &mut fd).unwrap();
        let handoff = Handoff {
            dir,
            listener: UnixListener::from(fd),
        };
        let result = handoff.accept(std::process::id(), Duration::from_secs(3));
        assert!(
            matches!(result, Err(HandoffError::Io(_))),
            "{:?}",
            result.err().map(|e| e.to_string())
        );
    }

    #[test]
    fn the_relays_url_is_accepted() {
        let raw = url(&format!(
            "mcpRelayUrl={RELAY}&client=%7B%22name%22%3A%22x%22%7D&protocolVersion=2"
        ));
        assert_eq!(ConnectUrl::parse(&raw).unwrap().as_str(), raw);
    }

    #[test]
    fn the_ipv6_loopback_relay_is_accepted_like_127_0_0_1() {
        let relay =
            "ws%3A%2F%2F%5B%3A%3A1%5D%3A41234%2Fextension%2F0f8fad5b-d9cb-469f-a165-70867728950e";
        let raw = url(&format!("mcpRelayUrl={relay}&protocolVersion=2"));
        assert_eq!(ConnectUrl::parse(&raw).unwrap().as_str(), raw);
    }

    #[test]
    fn a_refused_relay_host_is_named() {
        for (host, shown) in [
            ("10.0.0.1", "10.0.0.1"),
            ("%5B%3A%3A2%5D", "[::2]"),
            ("localhost", "localhost"),
        ] {
            let raw = url(&format!(
                "mcpRelayUrl=ws%3A%2F%2F{host}%3A1%2Fextension%2F0f8fad5b-d9cb-469f-a165-70867728950e"
            ));
            let refusal = ConnectUrl::parse(&raw).unwrap_err().to_string();
            assert!(
                refusal.contains(&format!("host is {shown};")) && refusal.contains("[::1]"),
                "{refusal}"
            );
        }
    }

    #[test]
    fn a_token_is_found_before_any_other_refusal() {
        let raw = format!("chrome-extension://other/x.html?token=abc&mcpRelayUrl={RELAY}");
        assert!(matches!(
            ConnectUrl::parse(&raw),
            Err(HandoffError::TokenInUrl)
        ));
    }

    #[test]
    fn anything_else_is_refused() {
        let token = ConnectUrl::parse(&url(&format!("mcpRelayUrl={RELAY}&token=abc")));
        assert!(matches!(token, Err(HandoffError::TokenInUrl)));
        let upper = ConnectUrl::parse(&url(&format!("mcpRelayUrl={RELAY}&TOKEN=abc")));
        assert!(matches!(upper, Err(HandoffError::TokenInUrl)));
        for raw in [
            format!(
                "chrome-extension://abcdefghijklmnopabcdefghijklmnop/connect.html?mcpRelayUrl={RELAY}"
            ),
            format!("chrome-extension://{EXTENSION_ID}/other.html?mcpRelayUrl={RELAY}"),
            format!("https://{EXTENSION_ID}/connect.html?mcpRelayUrl={RELAY}"),
            url(&format!("mcpRelayUrl={RELAY}#x")),
            url("protocolVersion=2"),
            url(
                "mcpRelayUrl=ws%3A%2F%2F10.0.0.1%3A1%2Fextension%2F0f8fad5b-d9cb-469f-a165-70867728950e",
            ),
            url(
                "mcpRelayUrl=ws%3A%2F%2F127.0.0.1%3A1%2Fcdp%2F0f8fad5b-d9cb-469f-a165-70867728950e",
            ),
            url(
                "mcpRelayUrl=wss%3A%2F%2F127.0.0.1%3A1%2Fextension%2F0f8fad5b-d9cb-469f-a165-70867728950e",
            ),
            "not a url".to_string(),
        ] {
            assert!(
                matches!(ConnectUrl::parse(&raw), Err(HandoffError::BadUrl(_))),
                "{raw}"
            );
        }
    }
}
