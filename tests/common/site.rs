//! A small local test site on 127.0.0.1: known text, links, a form with a
//! text and a password field, and a page that opens a popup. Enough for
//! `goto`, `snapshot`, `click`, `fill`, `type`, `tab-new` and `screenshot`.
//! `/agent/<name>` is a page of one's own for each agent of a lease test;
//! `/slow` (and `/slow/<any>`: Chromium's cache lets one load of an
//! address wait for another, so tabs loading at once need addresses of
//! their own) answers only after
//! [`SLOW`], to catch a command mid-flight, and `/slower/<any>` only after
//! [`SLOWER`], to outlast a longer bound;
//! `/trickle` sends its head at once and the rest after [`TRICKLE`]: its
//! tab shows its address while the `goto` still loads it.

use std::time::Duration;

use std::thread;

pub const HOME_TEXT: &str = "Known text on the home page";
pub const SECOND_TEXT: &str = "Second page reached";
pub const POPUP_TEXT: &str = "Popup content";
pub const SLOW: Duration = Duration::from_secs(20);
/// Under the stand-in's 30 s for any answer of Chromium's, a navigation
/// included.
pub const SLOWER: Duration = Duration::from_secs(28);
pub const TRICKLE: Duration = Duration::from_secs(5);
/// The heading of `/trickle`, sent last.
pub const TRICKLE_TEXT: &str = "Trickled to the end";

/// How long `/popup` takes to answer. Through the extension a popup is
/// attached while it already runs (no debugger holds it at its start), and
/// Playwright never reports a popup whose first navigation committed before
/// it was watching (it waits for one; about one popup in twenty here): a
/// popup document that comes a moment later keeps the tests off that race.
const POPUP_DELAY: Duration = Duration::from_millis(250);

/// The heading of `/agent/<name>`.
pub fn agent_text(name: &str) -> String {
    format!("Page of agent {name}")
}

const HOME: &str = r#"<!doctype html><html><head><title>Stand-in home</title></head><body>
<h1>Known text on the home page</h1>
<p><a href="/second">Go to the second page</a></p>
<form action="/second" method="get">
  <label>Name <input id="name" name="name" type="text"></label>
  <label>Password <input id="password" name="password" type="password"></label>
  <button type="submit">Send</button>
</form>
<p><button id="popup" onclick="window.open('/popup', 'popup', 'width=400,height=300')">Open popup</button></p>
</body></html>"#;

const SECOND: &str = r#"<!doctype html><html><head><title>Second</title></head><body>
<h1>Second page reached</h1><p><a href="/">Back home</a></p></body></html>"#;

const POPUP: &str = r#"<!doctype html><html><head><title>Popup</title></head><body>
<h1>Popup content</h1><button onclick="window.close()">Close me</button>
<button onclick="setTimeout(() => window.close(), 5000)">Close me later</button></body></html>"#;

/// A page whose button opens a popup three seconds after the click (within
/// the click's user activation, which lasts five): after the click's
/// command has ended, so a tab no command of an agent opened (a second
/// was within the click's command at times, under load).
const LATER_POPUP: &str = r#"<!doctype html><html><head><title>Later</title></head><body>
<h1>A popup comes three seconds after the click</h1>
<button onclick="setTimeout(() => window.open('/popup', 'later', 'width=400,height=300'), 3000)">Open later</button>
</body></html>"#;

/// What `/upload` shows once a file reached it.
pub const UPLOADED: &str = "Received file:";

/// A page that wants a file (an attacker's, in the tests that try to hand
/// it one): whatever reaches its input or its drop zone is shown in `#out`.
const UPLOAD: &str = r#"<!doctype html><html><head><title>Upload</title></head><body>
<h1>Send us a file</h1>
<input id="file" type="file" aria-label="Pick a file">
<div id="drop" style="width:300px;height:100px;border:1px solid">Drop here</div>
<pre id="out"></pre>
<script>
const show = f => f.text().then(t => { out.textContent = 'Received file: ' + f.name + ' ' + t; });
file.addEventListener('change', () => show(file.files[0]));
drop.addEventListener('dragover', e => e.preventDefault());
drop.addEventListener('drop', e => { e.preventDefault(); show(e.dataTransfer.files[0]); });
</script></body></html>"#;

/// What `/hostile` says (its title, its text, its console) to reach the
/// caller's terminal: an OSC 52 that would write the clipboard, and a
/// colour change.
pub const HOSTILE_TEXT: &str = "Hostile \u{1b}]52;c;aGVsbG8=\u{7} \u{1b}[31mred";

const HOSTILE: &str = r#"<!doctype html><html><head><title>x</title></head><body>
<h1>Terminal sequences</h1>
<p id="said"></p>
<script>
const hostile = 'Hostile \x1b]52;c;aGVsbG8=\x07 \x1b[31mred';
document.title = hostile;
said.textContent = hostile;
console.log(hostile);
</script>
</body></html>"#;

/// Two tabs on it show exactly the same title and address.
pub const TWIN: &str = r#"<!doctype html><html><head><title>Twin</title></head><body>
<h1>Twin page</h1></body></html>"#;

/// A page that goes to another site by itself (`localhost` instead of
/// `127.0.0.1`: another origin), 1.5 s after it loads (or the
/// milliseconds its query names).
pub const MOVER: &str = r#"<!doctype html><html><head><title>Mover</title></head><body>
<h1>About to move</h1>
<script>setTimeout(() => { location.href = location.href.replace('127.0.0.1', 'localhost').replace('/mover', '/second'); }, Number(location.search.slice(1)) || 1500);</script>
</body></html>"#;

/// A button that opens a popup after the milliseconds the query names
/// (1000 without), within the click's user activation.
const POPUP_AFTER: &str = r#"<!doctype html><html><head><title>Popup after</title></head><body>
<button onclick="setTimeout(() => window.open('/popup', '_blank', 'width=400,height=300'), Number(location.search.slice(1)) || 1000)">Open after</button>
</body></html>"#;

/// A page whose title is its query, decoded (what a hostile page says).
const TITLED: &str = r#"<!doctype html><html><head><title>x</title></head><body>
<h1>Titled</h1>
<script>document.title = decodeURIComponent(location.search.slice(1));</script>
</body></html>"#;

/// What `/said` shows as its title and text (one test at a time sets it:
/// what a hostile page says, never a command line's word).
static SAID: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// Sets what `/said` says.
pub fn say(text: &str) {
    *SAID.lock().unwrap() = text.to_string();
}

/// The page `/said` is: its title and heading are [`SAID`], written by its
/// script (a title may hold what HTML text would not).
fn said_page() -> String {
    let said = serde_json::Value::String(SAID.lock().unwrap().clone()).to_string();
    format!(
        "<!doctype html><html><head><title>x</title></head><body><h1 id=\"said\"></h1>\
         <script>document.title = {said}; said.textContent = {said};</script></body></html>"
    )
}

pub struct Site {
    pub base: String,
    server: std::sync::Arc<tiny_http::Server>,
    /// Every path requested, in order.
    requested: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Site {
    pub fn start() -> Site {
        let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let serving = std::sync::Arc::clone(&server);
        let requested: std::sync::Arc<std::sync::Mutex<Vec<String>>> = std::sync::Arc::default();
        let log = std::sync::Arc::clone(&requested);
        thread::spawn(move || {
            for request in serving.incoming_requests() {
                let path = request.url().split('?').next().unwrap_or("/").to_string();
                log.lock().unwrap().push(path.clone());
                let body = match path.as_str() {
                    "/" => HOME.to_string(),
                    "/second" => SECOND.to_string(),
                    "/later-popup" => LATER_POPUP.to_string(),
                    "/upload" => UPLOAD.to_string(),
                    "/hostile" => HOSTILE.to_string(),
                    "/twin" => TWIN.to_string(),
                    "/mover" => MOVER.to_string(),
                    "/popup-after" => POPUP_AFTER.to_string(),
                    "/titled" => TITLED.to_string(),
                    "/said" => said_page(),
                    // A page a test put (`put_page`), answered 300 ms late:
                    // a popup's first document.
                    p if p.starts_with("/put-late/") => {
                        let body = put(&p["/put-late/".len()..]);
                        thread::spawn(move || {
                            thread::sleep(Duration::from_millis(300));
                            respond(request, body);
                        });
                        continue;
                    }
                    // Answered aside, so that other pages stay quick.
                    p if p == "/slow"
                        || p.starts_with("/slow/")
                        || p.starts_with("/slower/")
                        || p == "/popup" =>
                    {
                        let (delay, body) = match p {
                            "/popup" => (POPUP_DELAY, POPUP),
                            _ if p.starts_with("/slower/") => (SLOWER, SECOND),
                            _ => (SLOW, SECOND),
                        };
                        thread::spawn(move || {
                            thread::sleep(delay);
                            respond(request, body.to_string());
                        });
                        continue;
                    }
                    "/trickle" => {
                        thread::spawn(move || trickle(request));
                        continue;
                    }
                    p if p.starts_with("/put/") => put(&p["/put/".len()..]),
                    other => match other.strip_prefix("/agent/") {
                        Some(name) => {
                            let text = agent_text(name);
                            // A field to fill and a button to press:
                            // what each agent did shows on its own page.
                            format!(
                                "<!doctype html><html><head><title>Agent {name}</title></head>\
                                 <body><h1>{text}</h1><input id=\"note\" aria-label=\"note\">\
                                 <button id=\"press\" onclick=\"this.textContent=\
                                 'pressed on {name}'\">press</button></body></html>"
                            )
                        }
                        None => {
                            let _ = request.respond(tiny_http::Response::empty(404));
                            continue;
                        }
                    },
                };
                respond(request, body);
            }
        });
        Site {
            base: format!("http://127.0.0.1:{port}"),
            server,
            requested,
        }
    }

    /// Whether `path` has been requested.
    pub fn was_requested(&self, path: &str) -> bool {
        self.requested.lock().unwrap().iter().any(|p| p == path)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// A page that learns the moment its tab is selected (the daemon asks the
/// page for its WebMCP tools then) and closes itself: at once, or the
/// milliseconds after that its query names; `popup` opens a popup first
/// (a tab appended as its own goes), so the session keeps its count. A
/// mark after a comma is requested from the site as `/probed-<mark>` when
/// it learns it. Its first second (or the milliseconds a third part
/// names) is left alone (the daemon asks as it opens the tab, and after a
/// `goto`); a third part `flag` leaves it alone until a script sets
/// `window.armed` (an agent's own `eval` there: no clock to race).
pub const CLOSER: &str = r#"<!doctype html><html><head><title>Closer</title></head><body>
<h1>Closes itself when selected</h1>
<script>
const [how, mark, arm] = location.search.slice(1).split(',');
const armed = () => arm === 'flag' ? window.armed === true : performance.now() > Number(arm || 1000);
const close = () => {
  if (how === 'popup') window.open('/popup', '_blank', 'width=400,height=300');
  window.close();
};
Object.defineProperty(navigator, 'modelContext', { configurable: true, value: { getTools() {
  if (armed()) {
    if (mark) navigator.sendBeacon('/probed-' + mark);
    if (how === 'popup' || how === '0') close(); else setTimeout(close, Number(how));
  }
  return [];
} } });
</script></body></html>"#;

/// A page that answers the daemon's question for its WebMCP tools (asked
/// when its tab is selected, before the daemon makes it current) after
/// the milliseconds its query names; its first second is left alone.
pub const LATE_SELECT: &str = r#"<!doctype html><html><head><title>Bob late</title></head><body>
<h1>Answers late when selected</h1>
<script>
const late = Number(location.search.slice(1));
Object.defineProperty(navigator, 'modelContext', { configurable: true, value: { getTools() {
  if (performance.now() < 1000) return [];
  navigator.sendBeacon('/late-asked');
  return new Promise(r => setTimeout(() => r([]), late));
} } });
</script></body></html>"#;

/// Pages tests put on the site, by name (what a hostile page is).
static PUT: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());

/// Serves `html` at `/put/<name>` (and at `/put-late/<name>`, 300 ms late).
pub fn put_page(name: &str, html: &str) {
    let mut pages = PUT.lock().unwrap();
    pages.retain(|(n, _)| n != name);
    pages.push((name.to_string(), html.to_string()));
}

fn put(name: &str) -> String {
    PUT.lock()
        .unwrap()
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, html)| html.clone())
        .unwrap_or_default()
}

/// The head of a page at once (the browser commits to its address), the
/// rest after [`TRICKLE`] (until then it is loading).
fn trickle(request: tiny_http::Request) {
    use std::io::Write;
    let first = "<!doctype html><html><head><title>Trickle</title></head><body>";
    let rest = format!("<h1>{TRICKLE_TEXT}</h1></body></html>");
    let mut out = request.into_writer();
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{first}",
        first.len() + rest.len()
    );
    let _ = out.write_all(head.as_bytes()).and_then(|()| out.flush());
    thread::sleep(TRICKLE);
    let _ = out.write_all(rest.as_bytes()).and_then(|()| out.flush());
}

fn respond(request: tiny_http::Request, body: String) {
    let header = tiny_http::Header::from_bytes("Content-Type", "text/html; charset=utf-8").unwrap();
    let _ = request.respond(tiny_http::Response::from_string(body).with_header(header));
}

impl Drop for Site {
    fn drop(&mut self) {
        self.server.unblock();
    }
}
