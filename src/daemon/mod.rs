//! The pinned CLI's daemon, spoken to natively over its socket (docs/
//! DESIGN.md, "The native client"): one newline-delimited JSON request per
//! connection and its one reply, with no helper code run on our side. Every
//! forwarded browser command goes this way; so does `stop` where running
//! the helper is not an option (a tree that changed after it was verified).

pub mod request;

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::exit::Exit;
use crate::signals;
use crate::socket::{self, ConnectError};

/// The pinned client files this module reproduces, with the digests they had
/// when tests/native.rs last proved the native client byte for byte against
/// them (the form of `skill/cli/client.sha256`, which `scripts/pin-cli.sh`
/// writes): a pin move that changes one fails that test until the native
/// client is checked again and this is updated.
pub const CHECKED_CLIENT: &str = "\
66ea6722d77e57ce1bc7e850cb990d14895d17d8584405ed54a8c72fab38eb75  @playwright/cli/playwright-cli.js\n\
7527988884ab6413c43bb2723a062d8c824e1a4bcf517ca9a2ca8d1d77ecdb45  @playwright/cli/skillCheck.js\n\
dfde8e9dfde30c4b3914eb25ba1c5a8524ec64651d866171d75cd7b41a827180  playwright-core/lib/tools/cli-client/cli.js\n\
722f00475112d4a3b569af51172e0bd88d1e4627a65ed8a2245031e08e7cc1ec  playwright-core/lib/tools/cli-client/program.js\n\
716e87fc77251129adf8c66374cccc6788f76a02b4b33692c7e63a01a659cb5c  playwright-core/lib/tools/cli-client/session.js\n\
c11d278e05542808ba37bdb032018eccf9dc78377f8025bd74fa906ae009ca30  playwright-core/lib/tools/cli-client/registry.js\n\
2eace914547a487b2aa1dc34af787fe92168f0b7b3dde24f2b127e817cc9b2b4  playwright-core/lib/tools/cli-client/output.js\n\
1d200627373a367e0097f1abeaaa4d67cde2c33f2e5efca5cb55222c7667adc3  playwright-core/lib/tools/cli-client/minimist.js\n\
973c2bea70a1f1445f4673f99e9fa351e50a2ec9fd93d7381b2c41bb4de764dd  playwright-core/lib/tools/utils/socketConnection.js\n\
";

/// How often a wait for the reply looks for an interrupt.
const POLL: Duration = Duration::from_millis(50);

/// What the daemon answered.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// `result.text` (`None` when it sent none: the client prints
    /// `undefined`). Also when `isError` is set: the client prints it and
    /// exits 0 all the same.
    Text(Option<String>),
    /// An `error` reply, or the connection closed before the reply (the
    /// client's "Session closed").
    Error(String),
}

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The daemon does not take connections: the session is stale (callers
    /// say so as for any stale session).
    #[error("the session's daemon does not answer ({0})")]
    Unreachable(io::Error),
    #[error("talking to the session's daemon failed ({0}); nothing more was sent")]
    Io(io::Error),
    #[error(
        "the browser command did not finish within {} s (MY_CHROME_COMMAND_TIMEOUT_SECS); it was \
         abandoned (the daemon stops a command whose connection closes)",
        .0.as_secs()
    )]
    TimedOut(Duration),
    #[error("interrupted by {0}; the browser command was abandoned")]
    Interrupted(Signal),
    #[error("interrupted by {0}; the browser command was not sent")]
    NotSent(Signal),
    #[error("the session's daemon sent a reply my-chrome does not understand ({0})")]
    Malformed(String),
    #[error(
        "the browser command's reply is larger than {} MiB; it was dropped unread and nothing of \
         it was printed. Ask for less (an `eval` of a part, a `--filename` for the output), or \
         have the user raise the limit (MY_CHROME_REPLY_LIMIT_MIB)",
        .0 >> 20
    )]
    TooLarge(usize),
}

impl DaemonError {
    pub fn exit(&self) -> Exit {
        match self {
            DaemonError::Unreachable(_) => Exit::NoSession,
            DaemonError::Io(_) | DaemonError::Malformed(_) | DaemonError::TooLarge(_) => {
                Exit::Failure
            }
            DaemonError::TimedOut(_) => Exit::Timeout,
            DaemonError::Interrupted(signal) | DaemonError::NotSent(signal) => Exit::from(*signal),
        }
    }
}

/// Sends one request line to the daemon behind `socket` (already checked to
/// be in our private TMPDIR) and waits, up to `bound` and until an
/// interrupt, for its reply of at most `limit` bytes (a longer one is not
/// read on: memory stays bounded). Dropping the connection early abandons
/// the command in the daemon.
pub fn run(
    socket: &Path,
    line: &[u8],
    bound: Duration,
    limit: usize,
) -> Result<Reply, DaemonError> {
    let deadline = Instant::now() + bound;
    // A signal that came during the checks: nothing is sent.
    if let Some(signal) = signals::pending() {
        return Err(DaemonError::NotSent(signal));
    }
    let mut stream = connect(socket, deadline, bound)?;
    stream
        .set_write_timeout(Some(bound))
        .and_then(|()| stream.write_all(line))
        .and_then(|()| stream.set_read_timeout(Some(POLL)))
        .map_err(DaemonError::Io)?;
    let mut received = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        if let Some(signal) = signals::pending() {
            return Err(DaemonError::Interrupted(signal));
        }
        if Instant::now() >= deadline {
            return Err(DaemonError::TimedOut(bound));
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(Reply::Error("Session closed".into())),
            Ok(n) => {
                // Only the new bytes can hold the end of the line.
                let end = chunk[..n].iter().position(|b| *b == b'\n');
                if received.len() + end.unwrap_or(n) > limit {
                    return Err(DaemonError::TooLarge(limit));
                }
                if let Some(end) = end {
                    received.extend_from_slice(&chunk[..end]);
                    return parse_reply(&received);
                }
                received.extend_from_slice(&chunk[..n]);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(DaemonError::Io(e)),
        }
    }
}

/// Connects within what is left of the command's bound: a daemon whose
/// backlog is full (its event loop stuck) cannot hold it.
fn connect(socket: &Path, deadline: Instant, bound: Duration) -> Result<UnixStream, DaemonError> {
    let left = deadline.saturating_duration_since(Instant::now());
    socket::connect_within(socket, left).map_err(|e| match e {
        ConnectError::Refused(e) => DaemonError::Unreachable(e),
        ConnectError::TimedOut(_) => DaemonError::TimedOut(bound),
        ConnectError::Interrupted(signal) => DaemonError::NotSent(signal),
    })
}

/// `{"id":1,"result":{"text":…}}` or `{"id":1,"error":…}`.
fn parse_reply(line: &[u8]) -> Result<Reply, DaemonError> {
    let line = without_lone_surrogates(line);
    let reply: serde_json::Value = serde_json::from_slice(&line)
        .map_err(|e| DaemonError::Malformed(format!("not JSON: {e}")))?;
    if reply["id"] != 1 {
        return Err(DaemonError::Malformed(
            "not the reply to our request".into(),
        ));
    }
    let error = &reply["error"];
    let is_truthy = match error {
        serde_json::Value::Null | serde_json::Value::Bool(false) => false,
        serde_json::Value::String(s) => !s.is_empty(),
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        _ => true,
    };
    if is_truthy {
        return Ok(Reply::Error(js_string(error)));
    }
    match &reply["result"] {
        serde_json::Value::Object(result) => match result.get("text") {
            None => Ok(Reply::Text(None)),
            Some(serde_json::Value::String(text)) => Ok(Reply::Text(Some(text.clone()))),
            Some(_) => Err(DaemonError::Malformed("its text is not a string".into())),
        },
        _ => Err(DaemonError::Malformed("no result".into())),
    }
}

/// JavaScript's `String(value)`, what `new Error(value)` takes as its
/// message.
fn js_string(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "null".into(),
        serde_json::Value::Bool(b) => b.to_string(),
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => items
            .iter()
            .map(|item| match item {
                serde_json::Value::Null => String::new(),
                other => js_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        serde_json::Value::Object(_) => "[object Object]".into(),
    }
}

/// `JSON.stringify` writes a lone UTF-16 surrogate (a page can have one in
/// its title) as a `\udXXX` escape, which is no Unicode scalar; Node prints
/// it as U+FFFD. The same here: each lone surrogate escape becomes `\ufffd`
/// before the line is parsed.
fn without_lone_surrogates(line: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let unit = |at: usize| -> Option<u16> {
        let hex = line.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let is_high = |u: u16| (0xD800..0xDC00).contains(&u);
    let is_low = |u: u16| (0xDC00..0xE000).contains(&u);
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < line.len() {
        if line[i] != b'\\' {
            if let Some(out) = out.as_mut() {
                out.push(line[i]);
            }
            i += 1;
            continue;
        }
        let step = match unit(i) {
            Some(high) if is_high(high) && unit(i + 6).is_some_and(is_low) => 12,
            Some(u) if is_high(u) || is_low(u) => {
                let out = out.get_or_insert_with(|| line[..i].to_vec());
                out.extend_from_slice(b"\\ufffd");
                i += 6;
                continue;
            }
            Some(_) => 6,
            // Any other escape is two bytes (`\\` among them).
            None => 2,
        };
        let end = (i + step).min(line.len());
        if let Some(out) = out.as_mut() {
            out.extend_from_slice(&line[i..end]);
        }
        i = end;
    }
    match out {
        Some(out) => std::borrow::Cow::Owned(out),
        None => std::borrow::Cow::Borrowed(line),
    }
}

/// Asks the daemon behind `socket` (already checked to be in our private
/// TMPDIR) to stop, as the CLI's `detach` does, and waits for it to close
/// the connection (within `bound`).
pub fn stop(socket: &Path, bound: Duration) -> io::Result<()> {
    let mut stream = socket::connect_within(socket, bound).map_err(|e| match e {
        ConnectError::Refused(e) => e,
        other => io::Error::new(io::ErrorKind::TimedOut, other.to_string()),
    })?;
    stream.set_read_timeout(Some(bound))?;
    stream.set_write_timeout(Some(bound))?;
    stream.write_all(b"{\"id\":1,\"method\":\"stop\",\"params\":{}}\n")?;
    let mut answer = Vec::new();
    match stream.take(64 * 1024).read_to_end(&mut answer) {
        Ok(_) => Ok(()),
        // It went away without a word: stopped all the same.
        Err(e) if e.kind() == io::ErrorKind::ConnectionReset => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_as_the_client_reads_them() {
        let text = |s: &str| parse_reply(s.as_bytes()).unwrap();
        assert_eq!(
            text(r####"{"id":1,"result":{"text":"### Result\nok"}}"####),
            Reply::Text(Some("### Result\nok".into()))
        );
        assert_eq!(
            text(r####"{"id":1,"result":{"isError":true,"text":"### Error\nx"}}"####),
            Reply::Text(Some("### Error\nx".into()))
        );
        assert_eq!(text(r#"{"id":1,"result":{}}"#), Reply::Text(None));
        assert_eq!(
            text(r#"{"id":1,"error":"no such tab"}"#),
            Reply::Error("no such tab".into())
        );
        // A falsy error is no error (the client checks `object.error`).
        assert_eq!(
            text(r#"{"id":1,"error":"","result":{"text":"t"}}"#),
            Reply::Text(Some("t".into()))
        );
        // A page title with a lone surrogate: U+FFFD, as Node prints it;
        // an escaped backslash before `u` is no escape.
        assert_eq!(
            text(r#"{"id":1,"result":{"text":"a\ud800b\ud83d\ude00\\ud800\udc00"}}"#),
            Reply::Text(Some("a\u{fffd}b😀\\ud800\u{fffd}".into()))
        );
        assert_eq!(
            text(r#"{"id":1,"error":{"a":1}}"#),
            Reply::Error("[object Object]".into())
        );
        assert_eq!(
            text(r#"{"id":1,"error":[1,null,"x"]}"#),
            Reply::Error("1,,x".into())
        );
        for bad in [r#"{"id":2,"result":{}}"#, "not json", r#"{"id":1}"#] {
            assert!(parse_reply(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
