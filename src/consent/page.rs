//! The consent page's HTML and the headers it is served with. Everything
//! shown is escaped; what a page of the session chose (a tab's title) is
//! cut short and stripped of control characters, and labelled as the
//! page's own words. The one script (expiry and a closed tab) runs only by
//! its nonce; nothing may frame the page, load anything else, or post
//! anywhere but back to it.

use std::time::Duration;

/// What the person is asked: a heading and the facts, one per row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked {
    pub heading: String,
    pub rows: Vec<(String, String)>,
}

/// How the page is reached and answered; `nonce` is both the answer's
/// secret and the script's CSP nonce (only this page ever holds it).
pub struct Secrets<'a> {
    pub path: &'a str,
    pub nonce: &'a str,
}

/// The longest a value of a page's is shown.
const SHOWN: usize = 120;

/// A value fit to show: no control characters, at most [`SHOWN`] characters.
pub fn shown(value: &str) -> String {
    let clean: String = value
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let clean = clean.trim();
    match clean.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &clean[..cut]),
        None => clean.to_string(),
    }
}

pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The headers every answer of the server carries; only the asking page
/// (`Some(nonce)`) may run its script and style.
pub fn headers(nonce: Option<&str>) -> Vec<(&'static str, String)> {
    let own = |kind: &str| match nonce {
        Some(nonce) => format!("{kind}-src 'nonce-{nonce}'"),
        None => format!("{kind}-src 'none'"),
    };
    vec![
        ("Content-Type", "text/html; charset=utf-8".into()),
        (
            "Content-Security-Policy",
            format!(
                "default-src 'none'; {}; {}; connect-src 'self'; form-action 'self'; \
                 frame-ancestors 'none'; base-uri 'none'",
                own("script"),
                own("style")
            ),
        ),
        ("X-Frame-Options", "DENY".into()),
        ("X-Content-Type-Options", "nosniff".into()),
        // Not `no-referrer`: with it, Chrome sends the answer's Origin as
        // `null`, and the origin is what the answer is checked by.
        ("Referrer-Policy", "same-origin".into()),
        ("Cache-Control", "no-store".into()),
        ("Cross-Origin-Opener-Policy", "same-origin".into()),
        ("Cross-Origin-Resource-Policy", "same-origin".into()),
    ]
}

/// How long after the page shows its buttons take a click.
const ARMED_MS: u64 = 1000;

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;\
padding:0 1em;color:#202124}h1{font-size:1.4em}dt{font-weight:600}dd{margin:0 0 .6em 1em;\
overflow-wrap:anywhere}.page{font-style:italic}button{font:inherit;padding:.5em 1.5em;\
margin-right:1em}#confirm{background:#1a73e8;color:#fff;border:0;border-radius:4px}";

/// The page that asks.
pub fn asking(asked: &Asked, secrets: &Secrets, left: Duration) -> String {
    let rows: String = asked
        .rows
        .iter()
        .map(|(label, value)| format!("<dt>{}</dt><dd>{}</dd>", escape(label), escape(value)))
        .collect();
    let nonce = secrets.nonce;
    let path = secrets.path;
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8>\
         <title>my-chrome asks you</title><style nonce=\"{nonce}\">{STYLE}</style></head><body>\
         <h1>my-chrome: {heading}</h1>\
         <p>A command run through my-chrome on this computer asks for this. Only you can \
         answer it, here: no agent can see or reach this page.</p><dl>{rows}</dl>\
         <p>Confirm only if you want this to happen. Nothing changes unless you click \
         Confirm; the request expires in {secs} seconds.</p>\
         <form id=answer method=post action=\"/{path}\">\
         <input type=hidden name=nonce value=\"{nonce}\">\
         <button id=confirm name=answer value=confirm disabled>Confirm</button>\
         <button id=refuse name=answer value=refuse disabled>Refuse</button></form>\
         <p id=expired hidden>This request expired; nothing changed.</p>\
         <script nonce=\"{nonce}\">{script}</script></body></html>",
        heading = escape(&asked.heading),
        secs = left.as_secs(),
        script = script(path, nonce, left),
    )
}

/// Arms the buttons a moment after the page shows (a click meant for
/// the page that was in front lands on nothing); shows "expired" at the
/// deadline; tells the server when the tab is closed or left unanswered,
/// so that the command ends at once.
fn script(path: &str, nonce: &str, left: Duration) -> String {
    format!(
        "let answered=false;const form=document.getElementById('answer');\
         setTimeout(()=>{{for(const b of form.querySelectorAll('button'))b.disabled=false;}},{ARMED_MS});\
         form.addEventListener('submit',()=>{{answered=true;}});\
         setTimeout(()=>{{if(answered)return;answered=true;form.remove();\
         document.getElementById('expired').hidden=false;document.title='Expired: my-chrome';}},{ms});\
         addEventListener('pagehide',()=>{{if(answered)return;\
         navigator.sendBeacon('/{path}',new URLSearchParams({{nonce:'{nonce}',answer:'closed'}}));}});",
        ms = left.as_millis()
    )
}

/// The page after an answer, or for a request no longer open.
pub fn said(title: &str, text: &str) -> String {
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title></head>\
         <body><h1>{title}</h1><p>{text}</p></body></html>",
        title = escape(title),
        text = escape(text)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_page_chose_cannot_become_markup() {
        let asked = Asked {
            heading: "give a tab".into(),
            rows: vec![(
                "Tab title (the page's own words)".into(),
                shown("</dd><button id=confirm>x</button><script>alert(1)</script>"),
            )],
        };
        let html = asking(
            &asked,
            &Secrets {
                path: "p",
                nonce: "n",
            },
            Duration::from_secs(120),
        );
        assert!(!html.contains("<script>alert"), "{html}");
        assert_eq!(html.matches("<button").count(), 2, "{html}");
        assert!(html.contains("&lt;/dd&gt;&lt;button"), "{html}");
    }

    #[test]
    fn long_and_control_laden_values_are_cut_and_cleaned() {
        let long = "a".repeat(500);
        assert_eq!(shown(&long).chars().count(), SHOWN + 1);
        assert_eq!(shown("line\nbreak\u{7}"), "line break");
        assert_eq!(shown("short"), "short");
    }

    #[test]
    fn the_page_can_neither_be_framed_nor_run_foreign_script() {
        assert!(
            headers(None)
                .iter()
                .any(|(_, v)| v.contains("script-src 'none'")),
            "a page that is not the question runs no script"
        );
        let headers = headers(Some("abc"));
        let get = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        let csp = get("Content-Security-Policy");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert!(csp.contains("script-src 'nonce-abc'"), "{csp}");
        assert!(csp.contains("default-src 'none'"), "{csp}");
        assert!(csp.contains("form-action 'self'"), "{csp}");
        assert_eq!(get("X-Frame-Options"), "DENY");
        assert_eq!(get("Cache-Control"), "no-store");
    }

    #[test]
    fn the_answer_goes_back_to_the_page_itself_with_its_secret() {
        let html = asking(
            &Asked {
                heading: "h".into(),
                rows: vec![],
            },
            &Secrets {
                path: "s3cr3t",
                nonce: "n0nce",
            },
            Duration::from_secs(90),
        );
        assert!(html.contains("action=\"/s3cr3t\""), "{html}");
        assert!(html.contains("name=nonce value=\"n0nce\""), "{html}");
        assert!(html.contains("},90000);"), "{html}");
    }
}
