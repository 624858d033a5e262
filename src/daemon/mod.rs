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
fda252270793401d2856530a5f503adf7fc326fc07bed97e413138f67c50662b  @playwright/cli/playwright-cli.js\n\
ec5c41b0737b2b62026a6fa3f21ea61bd9342ab45bcab9d047dde162cc31d7f4  @playwright/cli/skillCheck.js\n\
dfde8e9dfde30c4b3914eb25ba1c5a8524ec64651d866171d75cd7b41a827180  playwright-core/lib/tools/cli-client/cli.js\n\
7f661c00acf56f894a93d32917aa3e2af7d339f60be2cc79fe9d71b6605e51fc  playwright-core/lib/tools/cli-client/program.js\n\
8c3f9aff3fab537771cb560e1bad3e417e16b3315b7a3dc10a305faeca3f6024  playwright-core/lib/tools/cli-client/session.js\n\
4976cd5b2b3a25572cc1a4b5f055a756dacd4cc1b19d48987ee3253428e759b8  playwright-core/lib/tools/cli-client/registry.js\n\
b4c3ebab965e73d621971cd3c76b60c22cf460a0921f14c5c6c51e46e06f02d2  playwright-core/lib/tools/cli-client/output.js\n\
9430489ebc06fd02231dccfe844516f743e812a9ac4fe8e6748a67718738851c  playwright-core/lib/tools/cli-client/minimist.js\n\
973c2bea70a1f1445f4673f99e9fa351e50a2ec9fd93d7381b2c41bb4de764dd  playwright-core/lib/tools/utils/socketConnection.js\n\
";

/// How often a wait for the reply looks for an interrupt.
const POLL: Duration = Duration::from_millis(50);

/// What the daemon answered.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// `result.text` (`None` when it sent none: the client prints
    /// `undefined`), and whether `result.isError` was set (JavaScript
    /// truthiness): the client prints the text either way, and then exits 1.
    Text {
        text: Option<String>,
        is_error: bool,
    },
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
        "the browser command did not finish within {} s (the user's bound, `my-chrome setup \
         --command-bound`, or your MY_CHROME_COMMAND_TIMEOUT_SECS if shorter); my-chrome stopped \
         waiting for it, but the daemon runs it to its end: until it answers (at most {} min), \
         your next command waits for it, and the other agents' do not (`my-chrome agents` \
         shows it; `my-chrome disconnect` ends the wait)",
        .0.as_secs(),
        crate::lease::late::CAP.as_secs() / 60
    )]
    TimedOut(Duration),
    /// A housekeeping request (a tab list, the connect tab, a probe) got no
    /// reply within what was left of its command's housekeeping bound.
    #[error(
        "the session's daemon does not answer (nothing within {} s); nothing more was asked of \
         it. `my-chrome disconnect` stops it (the browser keeps running); then, with the \
         user's approval, `my-chrome connect`",
        .0.as_secs()
    )]
    NoAnswer(Duration),
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
            DaemonError::TimedOut(_) | DaemonError::NoAnswer(_) => Exit::Timeout,
            DaemonError::Interrupted(signal) | DaemonError::NotSent(signal) => Exit::from(*signal),
        }
    }
}

/// Sends one request line to the daemon behind `socket` (already checked to
/// be in our private TMPDIR) and waits, up to `bound` and until an
/// interrupt, for its reply of at most `limit` bytes (a longer one is not
/// read on: memory stays bounded). The daemon runs a command whose
/// connection closes early to its end all the same (only its reply is
/// lost): see [`run_command`].
pub fn run(
    socket: &Path,
    line: &[u8],
    bound: Duration,
    limit: usize,
) -> Result<Reply, DaemonError> {
    exchange(socket, line, bound, limit, &mut |_| {}).map_err(|(error, _)| error)
}

/// Whether the daemon has read the whole request on `connection`: it then
/// has started the call (it reads a request and starts its tool in one
/// go, docs/DESIGN.md "A command steps aside"). `None` where that cannot
/// be told (macOS).
pub fn started(connection: &UnixStream) -> Option<bool> {
    crate::platform::peer_read_all(connection)
}

/// What became of a command that was sent but not answered.
#[derive(Debug)]
pub enum Unanswered {
    /// It failed (or was never sent): nothing runs on.
    Failed(DaemonError),
    /// Past its bound, or interrupted, once sent: the daemon runs it on.
    /// The connection stays open, for whoever waits for its end.
    Abandoned {
        error: DaemonError,
        connection: UnixStream,
    },
}

/// [`run`] for an agent's own command: one that was sent and is not
/// answered in time comes back with its connection. `waiting` is called
/// with the connection as the reply is waited for (about every
/// [`POLL`]).
pub fn run_command(
    socket: &Path,
    line: &[u8],
    bound: Duration,
    limit: usize,
    waiting: &mut dyn FnMut(&UnixStream),
) -> Result<Reply, Unanswered> {
    exchange(socket, line, bound, limit, waiting).map_err(|(error, connection)| {
        match (error, connection) {
            (
                error @ (DaemonError::TimedOut(_) | DaemonError::Interrupted(_)),
                Some(connection),
            ) => Unanswered::Abandoned { error, connection },
            (error, _) => Unanswered::Failed(error),
        }
    })
}

/// One request and its reply; what went wrong, with the connection when
/// the request was written.
fn exchange(
    socket: &Path,
    line: &[u8],
    bound: Duration,
    limit: usize,
    waiting: &mut dyn FnMut(&UnixStream),
) -> Result<Reply, (DaemonError, Option<UnixStream>)> {
    let deadline = Instant::now() + bound;
    // A signal that came during the checks: nothing is sent.
    if let Some(signal) = signals::pending() {
        return Err((DaemonError::NotSent(signal), None));
    }
    let mut stream = connect(socket, deadline, bound).map_err(|e| (e, None))?;
    stream
        .set_write_timeout(Some(bound))
        .and_then(|()| stream.write_all(line))
        .and_then(|()| stream.set_read_timeout(Some(POLL)))
        .map_err(|e| (DaemonError::Io(e), None))?;
    let mut received = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        if let Some(signal) = signals::pending() {
            return Err((DaemonError::Interrupted(signal), Some(stream)));
        }
        if Instant::now() >= deadline {
            return Err((DaemonError::TimedOut(bound), Some(stream)));
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(Reply::Error("Session closed".into())),
            Ok(n) => {
                // Only the new bytes can hold the end of the line.
                let end = chunk[..n].iter().position(|b| *b == b'\n');
                if received.len() + end.unwrap_or(n) > limit {
                    return Err((DaemonError::TooLarge(limit), None));
                }
                if let Some(end) = end {
                    received.extend_from_slice(&chunk[..end]);
                    return parse_reply(&received).map_err(|e| (e, None));
                }
                received.extend_from_slice(&chunk[..n]);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                waiting(&stream);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((DaemonError::Io(e), None)),
        }
    }
}

/// The time one command may spend on housekeeping with the daemon (its tab
/// lists, the connect tab, a probe), in all: every request takes what is
/// left of it, and the time each one took is spent.
#[derive(Debug)]
pub struct Housekeeping {
    bound: Duration,
    spent: std::cell::Cell<Duration>,
}

impl Housekeeping {
    pub fn new(bound: Duration) -> Housekeeping {
        Housekeeping {
            bound,
            spent: std::cell::Cell::default(),
        }
    }

    /// The same bound, none of it spent.
    pub fn renewed(&self) -> Housekeeping {
        Housekeeping::new(self.bound)
    }

    /// One housekeeping request: [`run`] within what is left; a daemon that
    /// does not answer in that time is [`DaemonError::NoAnswer`].
    pub fn run(&self, socket: &Path, line: &[u8], limit: usize) -> Result<Reply, DaemonError> {
        let left = self.bound.saturating_sub(self.spent.get());
        if left.is_zero() {
            return Err(DaemonError::NoAnswer(self.bound));
        }
        let started = Instant::now();
        let reply = run(socket, line, left, limit);
        self.spent.set(self.spent.get() + started.elapsed());
        match reply {
            Err(DaemonError::TimedOut(_)) => Err(DaemonError::NoAnswer(self.bound)),
            other => other,
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

/// `{"id":1,"result":{"text":…}}` or `{"id":1,"error":…}` (also read by
/// the waiter of a command past its bound, `lease::finish`).
pub fn parse_reply(line: &[u8]) -> Result<Reply, DaemonError> {
    let line = without_lone_surrogates(line);
    let reply: serde_json::Value = serde_json::from_slice(&line)
        .map_err(|e| DaemonError::Malformed(format!("not JSON: {e}")))?;
    if reply["id"] != 1 {
        return Err(DaemonError::Malformed(
            "not the reply to our request".into(),
        ));
    }
    let error = &reply["error"];
    if js_truthy(error) {
        return Ok(Reply::Error(js_string(error)));
    }
    let serde_json::Value::Object(result) = &reply["result"] else {
        return Err(DaemonError::Malformed("no result".into()));
    };
    let text = match result.get("text") {
        None => None,
        Some(serde_json::Value::String(text)) => Some(text.clone()),
        Some(_) => return Err(DaemonError::Malformed("its text is not a string".into())),
    };
    let is_error = result.get("isError").is_some_and(js_truthy);
    Ok(Reply::Text { text, is_error })
}

/// JavaScript's truthiness of a JSON value.
fn js_truthy(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Null | serde_json::Value::Bool(false) => false,
        serde_json::Value::String(s) => !s.is_empty(),
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        _ => true,
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
        let ok = |t: Option<&str>| Reply::Text {
            text: t.map(String::from),
            is_error: false,
        };
        let failed = |t: &str| Reply::Text {
            text: Some(t.into()),
            is_error: true,
        };
        assert_eq!(
            text(r####"{"id":1,"result":{"text":"### Result\nok"}}"####),
            ok(Some("### Result\nok"))
        );
        assert_eq!(
            text(r####"{"id":1,"result":{"isError":true,"text":"### Error\nx"}}"####),
            failed("### Error\nx")
        );
        // `isError` counts as JavaScript counts it.
        assert_eq!(
            text(r#"{"id":1,"result":{"isError":"yes","text":"t"}}"#),
            failed("t")
        );
        for falsy in ["false", "0", "\"\"", "null"] {
            let line = format!(r#"{{"id":1,"result":{{"isError":{falsy},"text":"t"}}}}"#);
            assert_eq!(text(&line), ok(Some("t")), "{falsy}");
        }
        assert_eq!(text(r#"{"id":1,"result":{}}"#), ok(None));
        assert_eq!(
            text(r#"{"id":1,"error":"no such tab"}"#),
            Reply::Error("no such tab".into())
        );
        // A falsy error is no error (the client checks `object.error`).
        assert_eq!(
            text(r#"{"id":1,"error":"","result":{"text":"t"}}"#),
            ok(Some("t"))
        );
        // A page title with a lone surrogate: U+FFFD, as Node prints it;
        // an escaped backslash before `u` is no escape.
        assert_eq!(
            text(r#"{"id":1,"result":{"text":"a\ud800b\ud83d\ude00\\ud800\udc00"}}"#),
            ok(Some("a\u{fffd}b😀\\ud800\u{fffd}"))
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

    #[test]
    fn housekeeping_is_one_bound_for_all_its_requests() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("daemon.sock");
        // A daemon that takes the connection and never answers.
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let budget = Housekeeping::new(Duration::from_millis(300));
        let line = b"{}\n";
        assert!(matches!(
            budget.run(&path, line, 1024),
            Err(DaemonError::NoAnswer(bound)) if bound == Duration::from_millis(300)
        ));
        let (_first, _) = listener.accept().unwrap();
        // Spent: the next request is not sent at all.
        assert!(matches!(
            budget.run(&path, line, 1024),
            Err(DaemonError::NoAnswer(_))
        ));
        listener.set_nonblocking(true).unwrap();
        assert_eq!(
            listener.accept().unwrap_err().kind(),
            io::ErrorKind::WouldBlock,
            "a second connection was made"
        );
        // A fresh one has its whole bound again, and an answer is read.
        let answering = Housekeeping::new(Duration::from_secs(5));
        let server = std::thread::spawn(move || {
            listener.set_nonblocking(false).unwrap();
            let (mut conn, _) = listener.accept().unwrap();
            let mut buf = [0u8; 16];
            let _ = conn.read(&mut buf).unwrap();
            conn.write_all(b"{\"id\":1,\"result\":{\"text\":\"ok\"}}\n")
                .unwrap();
        });
        assert_eq!(
            answering.run(&path, line, 1024).unwrap(),
            Reply::Text {
                text: Some("ok".into()),
                is_error: false
            }
        );
        server.join().unwrap();
    }
}
