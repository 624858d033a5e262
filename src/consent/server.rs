//! The one-shot local server that asks: it listens on a random port of
//! 127.0.0.1 and answers only at a secret path (128 bits, made here,
//! given to nobody but the browser). The page is served once; the answer
//! counts only as a same-origin form post that carries the page's own
//! nonce. Anything else at the secret path means someone besides the
//! user's tab knows it: the request ends, refused (fail closed).

use std::io::Read;
use std::time::{Duration, Instant};

use tiny_http::{Header, Method, Request, Response, Server};
use zeroize::Zeroizing;

use super::page::{self, Asked, Secrets};

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Confirmed,
    Refused,
    /// The page was closed (or left) unanswered.
    Closed,
    Expired,
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot listen on 127.0.0.1 for the consent page: {0}")]
    Listen(String),
    #[error("cannot make the consent page's secret: {0}")]
    Random(String),
    /// Someone besides the page answered, or opened it a second time.
    #[error("{0}")]
    Tampered(String),
    #[error("interrupted")]
    Interrupted,
}

/// An open request, waiting for its answer.
pub struct Pending {
    server: Server,
    origin: String,
    host: String,
    path: Zeroizing<String>,
    nonce: Zeroizing<String>,
    asked: Asked,
    served: bool,
    deadline: Instant,
    wait: Duration,
}

/// The largest answer read: a nonce and a word.
const MOST_BODY: u64 = 1024;

fn secret() -> Result<Zeroizing<String>, ServerError> {
    let mut bytes = Zeroizing::new([0u8; 16]);
    getrandom::fill(bytes.as_mut()).map_err(|e| ServerError::Random(e.to_string()))?;
    Ok(Zeroizing::new(hex::encode(bytes.as_ref())))
}

/// Equal, in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Pending {
    pub fn open(asked: Asked, wait: Duration) -> Result<Pending, ServerError> {
        let server = Server::http("127.0.0.1:0").map_err(|e| ServerError::Listen(e.to_string()))?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|a| a.port())
            .ok_or_else(|| ServerError::Listen("no port".into()))?;
        let host = format!("127.0.0.1:{port}");
        Ok(Pending {
            server,
            origin: format!("http://{host}"),
            host,
            path: secret()?,
            nonce: secret()?,
            asked,
            served: false,
            deadline: Instant::now() + wait,
            wait,
        })
    }

    /// The page's address: for the browser alone.
    pub fn url(&self) -> Zeroizing<String> {
        Zeroizing::new(format!("{}/{}", self.origin, self.path.as_str()))
    }

    /// Serves until the answer, the deadline, or `stop()` says so.
    pub fn wait(&mut self, stop: impl Fn() -> bool) -> Result<Answer, ServerError> {
        loop {
            if stop() {
                return Err(ServerError::Interrupted);
            }
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(Answer::Expired);
            }
            let slice = left.min(Duration::from_millis(100));
            let request = match self.server.recv_timeout(slice) {
                Ok(Some(request)) => request,
                Ok(None) => continue,
                Err(e) => return Err(ServerError::Listen(e.to_string())),
            };
            if let Some(answer) = self.handle(request)? {
                return Ok(answer);
            }
        }
    }

    /// One request: `Some` ends the wait.
    fn handle(&mut self, mut request: Request) -> Result<Option<Answer>, ServerError> {
        let ours = format!("/{}", self.path.as_str());
        if !same(request.url().as_bytes(), ours.as_bytes()) {
            respond(request, 404, "Not found", "Nothing is here.");
            return Ok(None);
        }
        let fault = match (request.method(), self.served) {
            (Method::Get, false) => match self.check_host(&request) {
                Ok(()) => {
                    self.served = true;
                    let left = self.deadline.saturating_duration_since(Instant::now());
                    let html = page::asking(
                        &self.asked,
                        &Secrets {
                            path: &self.path,
                            nonce: &self.nonce,
                        },
                        left.max(Duration::from_secs(1)).min(self.wait),
                    );
                    respond_html(request, 200, html, Some(&self.nonce));
                    return Ok(None);
                }
                Err(why) => why,
            },
            (Method::Get, true) => "the consent page was opened a second time".into(),
            (Method::Post, true) => match self.check_answer(&mut request) {
                Ok(answer) => {
                    let (title, text) = match answer {
                        Answer::Confirmed => {
                            ("Confirmed", "my-chrome goes on. You can close this tab.")
                        }
                        _ => ("Refused", "Nothing changed. You can close this tab."),
                    };
                    respond(request, 200, title, text);
                    return Ok(Some(answer));
                }
                Err(why) => why,
            },
            (Method::Post, false) => "an answer came before the page was shown".into(),
            (method, _) => format!("a {method} request reached the consent page"),
        };
        respond(
            request,
            403,
            "Refused",
            "This request was refused; nothing changed.",
        );
        Err(ServerError::Tampered(fault))
    }

    fn check_host(&self, request: &Request) -> Result<(), String> {
        match header(request, "Host") {
            Some(host) if host == self.host => Ok(()),
            other => Err(format!("the consent page was asked for as {other:?}")),
        }
    }

    /// A same-origin form post from the page, with its nonce.
    fn check_answer(&self, request: &mut Request) -> Result<Answer, String> {
        self.check_host(request)?;
        match header(request, "Origin") {
            Some(origin) if origin == self.origin => {}
            other => return Err(format!("an answer came from origin {other:?}")),
        }
        if let Some(site) = header(request, "Sec-Fetch-Site")
            && site != "same-origin"
        {
            return Err(format!("an answer came from a {site} request"));
        }
        let form = header(request, "Content-Type")
            .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
        if !form {
            return Err("an answer came that was not a form".into());
        }
        let mut body = Zeroizing::new(Vec::new());
        request
            .as_reader()
            .take(MOST_BODY + 1)
            .read_to_end(&mut body)
            .map_err(|e| format!("an answer could not be read ({e})"))?;
        if body.len() as u64 > MOST_BODY {
            return Err("an oversized answer came".into());
        }
        let mut nonce_ok = false;
        let mut answer = None;
        for (name, value) in url::form_urlencoded::parse(&body) {
            match name.as_ref() {
                "nonce" => nonce_ok = same(value.as_bytes(), self.nonce.as_bytes()),
                "answer" => answer = Some(value.into_owned()),
                _ => {}
            }
        }
        if !nonce_ok {
            return Err("an answer came without the page's secret".into());
        }
        match answer.as_deref() {
            Some("confirm") => Ok(Answer::Confirmed),
            Some("refuse") => Ok(Answer::Refused),
            Some("closed") => Ok(Answer::Closed),
            other => Err(format!("an answer came that was neither ({other:?})")),
        }
    }
}

fn header(request: &Request, name: &str) -> Option<String> {
    request
        .headers()
        .iter()
        .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str().to_string())
}

/// Any page but the question: no nonce, no script.
fn respond(request: Request, status: u16, title: &str, text: &str) {
    respond_html(request, status, page::said(title, text), None);
}

fn respond_html(request: Request, status: u16, html: String, nonce: Option<&str>) {
    let mut response = Response::from_string(html).with_status_code(status);
    for (name, value) in page::headers(nonce) {
        if let Ok(header) = Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            response.add_header(header);
        }
    }
    // The browser's tab alone reads the answer; a failed write changes nothing.
    let _ = request.respond(response);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpStream;
    use std::thread;

    struct Asking {
        url: String,
        host: String,
        waiting: thread::JoinHandle<Result<Answer, ServerError>>,
    }

    fn asking(wait: Duration) -> Asking {
        let asked = Asked {
            heading: "give tab t3 to agent b".into(),
            rows: vec![("Agent".into(), "b".into())],
        };
        let mut pending = Pending::open(asked, wait).unwrap();
        let url = pending.url().to_string();
        let host = pending.host.clone();
        let waiting = thread::spawn(move || pending.wait(|| false));
        Asking { url, host, waiting }
    }

    impl Asking {
        fn path(&self) -> String {
            self.url
                .trim_start_matches(&format!("http://{}", self.host))
                .into()
        }

        /// One raw HTTP/1.1 exchange; the answer's status, headers and body.
        fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> String {
            let mut stream = TcpStream::connect(&self.host).unwrap();
            let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
            for (name, value) in headers {
                request.push_str(&format!("{name}: {value}\r\n"));
            }
            request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
            stream.write_all(request.as_bytes()).unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).unwrap();
            answer
        }

        /// The page, as the user's tab loads it; its nonce.
        fn open_page(&self) -> String {
            let page = self.send("GET", &self.path(), &[("Host", &self.host)], "");
            assert!(page.starts_with("HTTP/1.1 200"), "{page}");
            assert!(page.contains("X-Frame-Options: DENY"), "{page}");
            let at = page.find("name=nonce value=\"").unwrap() + "name=nonce value=\"".len();
            page[at..at + 32].to_string()
        }

        fn post(&self, origin: &str, body: &str) -> String {
            self.send(
                "POST",
                &self.path(),
                &[
                    ("Host", &self.host),
                    ("Origin", origin),
                    ("Content-Type", "application/x-www-form-urlencoded"),
                ],
                body,
            )
        }

        fn own_origin(&self) -> String {
            format!("http://{}", self.host)
        }

        fn ended(self) -> Result<Answer, ServerError> {
            self.waiting.join().unwrap()
        }
    }

    #[test]
    fn the_page_answered_from_itself_confirms() {
        let asking = asking(Duration::from_secs(30));
        let elsewhere = asking.send("GET", "/", &[("Host", &asking.host)], "");
        assert!(elsewhere.starts_with("HTTP/1.1 404"), "{elsewhere}");
        assert!(!elsewhere.contains("nonce-"), "{elsewhere}");
        let nonce = asking.open_page();
        let said = asking.post(
            &asking.own_origin(),
            &format!("nonce={nonce}&answer=confirm"),
        );
        assert!(said.contains("Confirmed"), "{said}");
        assert_eq!(asking.ended().unwrap(), Answer::Confirmed);
    }

    #[test]
    fn refused_and_closed_are_told_apart() {
        for (word, expected) in [("refuse", Answer::Refused), ("closed", Answer::Closed)] {
            let asking = asking(Duration::from_secs(30));
            let nonce = asking.open_page();
            asking.post(
                &asking.own_origin(),
                &format!("nonce={nonce}&answer={word}"),
            );
            assert_eq!(asking.ended().unwrap(), expected);
        }
    }

    #[test]
    fn an_answer_of_the_bound_counts_and_one_byte_more_ends_the_request() {
        // The form padded with a field the server ignores.
        let padded = |nonce: &str, len: usize| {
            let form = format!("nonce={nonce}&answer=confirm&pad=");
            format!("{form}{}", "x".repeat(len - form.len()))
        };
        let at_bound = asking(Duration::from_secs(30));
        let nonce = at_bound.open_page();
        at_bound.post(&at_bound.own_origin(), &padded(&nonce, MOST_BODY as usize));
        assert_eq!(at_bound.ended().unwrap(), Answer::Confirmed);
        for over in [MOST_BODY as usize + 1, 4 * MOST_BODY as usize] {
            let oversized = asking(Duration::from_secs(30));
            let nonce = oversized.open_page();
            let said = oversized.post(&oversized.own_origin(), &padded(&nonce, over));
            assert!(said.starts_with("HTTP/1.1 403"), "{over}: {said}");
            assert!(matches!(oversized.ended(), Err(ServerError::Tampered(_))));
        }
    }

    #[test]
    fn equal_is_equal_at_every_byte() {
        assert!(same(b"abc", b"abc"));
        assert!(same(b"", b""));
        // Differences that would cancel out if combined by exclusive or.
        assert!(!same(b"ab", b"ba"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
    }

    #[test]
    fn an_unanswered_request_expires() {
        let asking = asking(Duration::from_secs(1));
        asking.open_page();
        assert_eq!(asking.ended().unwrap(), Answer::Expired);
    }

    #[test]
    fn anything_but_the_page_at_the_secret_path_ends_the_request() {
        type Attempt = fn(&Asking, &str) -> String;
        let attempts: [(&str, Attempt); 7] = [
            ("another origin", |a, n| {
                a.post("http://evil.test", &format!("nonce={n}&answer=confirm"))
            }),
            ("no origin", |a, n| {
                a.send(
                    "POST",
                    &a.path(),
                    &[
                        ("Host", &a.host),
                        ("Content-Type", "application/x-www-form-urlencoded"),
                    ],
                    &format!("nonce={n}&answer=confirm"),
                )
            }),
            ("a wrong nonce", |a, _| {
                a.post(
                    &a.own_origin(),
                    &format!("nonce={}&answer=confirm", "0".repeat(32)),
                )
            }),
            ("a second opening", |a, _| {
                a.send("GET", &a.path(), &[("Host", &a.host)], "")
            }),
            ("another host name", |a, n| {
                a.send(
                    "POST",
                    &a.path(),
                    &[
                        ("Host", "rebound.test"),
                        ("Origin", &a.own_origin()),
                        ("Content-Type", "application/x-www-form-urlencoded"),
                    ],
                    &format!("nonce={n}&answer=confirm"),
                )
            }),
            ("a cross-site fetch", |a, n| {
                a.send(
                    "POST",
                    &a.path(),
                    &[
                        ("Host", &a.host),
                        ("Origin", &a.own_origin()),
                        ("Sec-Fetch-Site", "cross-site"),
                        ("Content-Type", "application/x-www-form-urlencoded"),
                    ],
                    &format!("nonce={n}&answer=confirm"),
                )
            }),
            ("not a form", |a, n| {
                a.send(
                    "POST",
                    &a.path(),
                    &[
                        ("Host", &a.host),
                        ("Origin", &a.own_origin()),
                        ("Content-Type", "text/plain"),
                    ],
                    &format!("nonce={n}&answer=confirm"),
                )
            }),
        ];
        for (what, attempt) in attempts {
            let asking = asking(Duration::from_secs(30));
            let nonce = asking.open_page();
            let said = attempt(&asking, &nonce);
            assert!(said.starts_with("HTTP/1.1 403"), "{what}: {said}");
            match asking.ended() {
                Err(ServerError::Tampered(_)) => {}
                other => panic!("{what}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_answer_before_the_page_was_shown_ends_the_request() {
        let asking = asking(Duration::from_secs(30));
        let said = asking.post(&asking.own_origin(), "nonce=x&answer=confirm");
        assert!(said.starts_with("HTTP/1.1 403"), "{said}");
        assert!(matches!(asking.ended(), Err(ServerError::Tampered(_))));
    }

    #[test]
    fn secrets_are_long_and_fresh() {
        let (a, b) = (secret().unwrap(), secret().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a.as_str(), b.as_str());
        assert!(same(b"abc", b"abc") && !same(b"abc", b"abd") && !same(b"ab", b"abc"));
    }
}
