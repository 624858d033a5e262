//! A small local test site on 127.0.0.1: known text, links, a form with a
//! text and a password field, and a page that opens a popup. Enough for
//! `goto`, `snapshot`, `click`, `fill`, `type`, `tab-new` and `screenshot`.

use std::thread;

pub const HOME_TEXT: &str = "Known text on the home page";
pub const SECOND_TEXT: &str = "Second page reached";
pub const POPUP_TEXT: &str = "Popup content";

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
<h1>Popup content</h1></body></html>"#;

pub struct Site {
    pub base: String,
    server: std::sync::Arc<tiny_http::Server>,
}

impl Site {
    pub fn start() -> Site {
        let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let serving = std::sync::Arc::clone(&server);
        thread::spawn(move || {
            for request in serving.incoming_requests() {
                let path = request.url().split('?').next().unwrap_or("/").to_string();
                let body = match path.as_str() {
                    "/" => HOME,
                    "/second" => SECOND,
                    "/popup" => POPUP,
                    _ => {
                        let _ = request.respond(tiny_http::Response::empty(404));
                        continue;
                    }
                };
                let header =
                    tiny_http::Header::from_bytes("Content-Type", "text/html; charset=utf-8")
                        .unwrap();
                let _ = request.respond(tiny_http::Response::from_string(body).with_header(header));
            }
        });
        Site {
            base: format!("http://127.0.0.1:{port}"),
            server,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.server.unblock();
    }
}
