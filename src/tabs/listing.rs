//! The daemon's tab lists read, and its replies rewritten so that an agent
//! sees its own tabs only: every `### Open tabs` section (every tab of the
//! session, in a reply that carries a snapshot) and the list a tab command
//! answers with become the agent's own list, with ids and labels.

use super::align::Seen;

/// The tabs of a `tab-list` reply (`- 0: (current) [title](url)`), or
/// `None` when its text is no list (an error): an attached session always
/// has a tab.
pub fn parse_list(text: &str) -> Option<Vec<Seen>> {
    let body = section(text, "Result").unwrap_or(text);
    let mut tabs = Vec::new();
    for line in body.lines() {
        if !line.starts_with("- ") {
            continue;
        }
        tabs.push(parse_entry(line, tabs.len())?);
    }
    (!tabs.is_empty()).then_some(tabs)
}

/// One line of a list, `- <index>: [(current) ][title](url)[ [crashed]]`,
/// when it is the tab at `index`. Titles and addresses hold no line break
/// (a page's title has its white space collapsed; an address has none), so
/// a line is one tab. The daemon's number, first in the title, is taken
/// out of the header (`number`).
pub fn parse_entry(line: &str, index: usize) -> Option<Seen> {
    let rest = line.strip_prefix("- ")?;
    let (at, rest) = rest.split_once(':')?;
    if at.parse::<usize>().ok()? != index {
        return None;
    }
    let (current, rest) = match rest.strip_prefix(" (current)") {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let header = rest.strip_prefix(' ')?;
    let header = header.strip_suffix(" [crashed]").unwrap_or(header);
    if !header.ends_with(')') {
        return None;
    }
    let (number, title_on) = super::number::split(header.strip_prefix('[')?);
    Some(Seen {
        header: format!("[{title_on}"),
        current,
        number,
    })
}

/// The body of the first `### <title>` section of a reply.
pub fn section<'a>(text: &'a str, title: &str) -> Option<&'a str> {
    sections(text)
        .into_iter()
        .find(|(t, _)| *t == Some(title))
        .map(|(_, body)| body)
}

/// A reply cut at its `### ` lines: (title, body), the text before the
/// first one with no title.
pub fn sections(text: &str) -> Vec<(Option<&str>, &str)> {
    let mut out = Vec::new();
    let mut title = None;
    let mut start = 0;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if let Some(next) = line.strip_prefix("### ") {
            if at > start || title.is_some() {
                out.push((title, &text[start..at]));
            }
            title = Some(next.trim_end_matches(['\n', '\r']));
            start = at + line.len();
        }
        at += line.len();
    }
    if at > start || title.is_some() {
        out.push((title, &text[start..at]));
    }
    out
}

/// One of the agent's tabs, as it is shown to it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Shown {
    pub index: usize,
    pub id: String,
    pub label: Option<String>,
    pub current: bool,
    pub title: String,
    pub url: String,
}

impl Shown {
    pub fn new(index: usize, id: u64, label: Option<&str>, current: bool, header: &str) -> Shown {
        let inner = header
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(')'))
            .unwrap_or(header);
        let (title, url) = inner.split_once("](").unwrap_or((inner, ""));
        Shown {
            index,
            id: format!("t{id}"),
            label: label.map(String::from),
            current,
            title: title.into(),
            url: url.into(),
        }
    }
}

/// `- 0: t3 cart (current) [title](url)`, one line per tab.
pub fn render(tabs: &[Shown]) -> String {
    if tabs.is_empty() {
        return "- (none: `my-chrome tab-new <url>` opens one)\n".into();
    }
    tabs.iter()
        .map(|t| {
            format!(
                "- {}: {}{}{} [{}]({})\n",
                t.index,
                t.id,
                t.label
                    .as_deref()
                    .map(|l| format!(" {l}"))
                    .unwrap_or_default(),
                if t.current { " (current)" } else { "" },
                t.title,
                t.url
            )
        })
        .collect()
}

pub fn render_json(tabs: &[Shown]) -> String {
    serde_json::to_string_pretty(&serde_json::json!({ "tabs": tabs })).expect("tabs serialise")
}

/// How a reply is rewritten for the agent.
pub struct Rewrite<'a> {
    /// The agent's tabs, as its list shows them.
    pub own: &'a [Shown],
    /// The command was a tab command: its `Result` is the session's list
    /// (the agent's tabs), first in a reply of sections without one and
    /// without an error (`tab-new`'s load of its address: a `goto`'s).
    pub tab_command: bool,
}

/// A text reply (not `--raw`, not `--json`) rewritten by `how`.
pub fn rewrite_text(text: &str, how: &Rewrite) -> String {
    let mut out = String::new();
    let sections = sections(text);
    let titles: Vec<&str> = sections.iter().filter_map(|(title, _)| *title).collect();
    if how.tab_command
        && !titles.is_empty()
        && !titles.iter().any(|t| matches!(*t, "Result" | "Error"))
    {
        out.push_str("### Result\n");
        out.push_str(&render(how.own));
    }
    for (title, body) in sections {
        let Some(title) = title else {
            out.push_str(body);
            continue;
        };
        let mut replaced = match title {
            "Open tabs" if how.own.len() < 2 => continue,
            "Open tabs" => render(how.own),
            "Result" if how.tab_command => render(how.own),
            "Page" => unnumbered(body),
            _ => body.to_string(),
        };
        // The last section ends as the daemon's did (without a line break).
        if !body.ends_with('\n') && replaced.ends_with('\n') {
            replaced.pop();
        }
        out.push_str("### ");
        out.push_str(title);
        out.push('\n');
        out.push_str(&replaced);
    }
    out
}

/// A `### Page` section without the daemon's number in its title line:
/// the number is my-chrome's to read, not the agent's.
fn unnumbered(body: &str) -> String {
    body.split_inclusive('\n')
        .map(|line| match line.strip_prefix(PAGE_TITLE) {
            Some(title) => format!("{PAGE_TITLE}{}", super::number::split(title).1),
            None => line.to_string(),
        })
        .collect()
}

/// How the `### Page` section starts its title line.
pub const PAGE_TITLE: &str = "- Page Title: ";

/// Every word of a reply that may name a file the daemon wrote (a link's
/// target, a `--json` reply's `"file"`, a bare path line): relative to its
/// working directory. The caller decides which of them to touch.
pub fn mentioned_files(text: &str) -> Vec<String> {
    let mut files: Vec<String> = text
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | '"' | '\'' | ','))
        .filter(|word| word.contains('/'))
        .map(String::from)
        .collect();
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text)
        && let Some(file) = value["snapshot"]["file"].as_str()
    {
        files.push(file.to_string());
    }
    files.sort();
    files.dedup();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = "### Result\n\
        - 0: [A](https://a.test/)\n\
        - 1: (current) [B ](x)](https://b.test/)\n\
        - 2: [](about:blank) [crashed]\n";

    #[test]
    fn a_tab_list_is_read_line_by_line() {
        let tabs = parse_list(LIST).unwrap();
        assert_eq!(tabs.len(), 3);
        assert_eq!(tabs[1].header, "[B ](x)](https://b.test/)");
        assert!(tabs[1].current && !tabs[0].current);
        assert_eq!(tabs[2].header, "[](about:blank)");
        assert_eq!(parse_list("### Error\nError: Browser closed\n"), None);
        assert_eq!(parse_list("- 1: [A](https://a.test/)\n"), None, "gap");
        assert_eq!(parse_list("- 0: A\n"), None);
        // A header is `[title](url)` at both ends, or the list is unread.
        assert_eq!(parse_list("- 0: [A](https://a.test/\n"), None);
        assert_eq!(parse_list("- 0: A](https://a.test/)\n"), None);
        // Only the Result section is the list: the Page section's lines are
        // no tabs.
        let reply =
            "### Result\n- 0: [A](https://a.test/)\n### Page\n- Page URL: https://a.test/\n";
        assert_eq!(
            parse_list(reply),
            Some(vec![Seen {
                header: "[A](https://a.test/)".into(),
                current: false,
                number: None,
            }])
        );
    }

    #[test]
    fn the_daemons_number_is_read_and_taken_out_of_the_header() {
        let list = "### Result\n\
            - 0: [<mc:4> <mc:9> Inbox](https://a.test/)\n\
            - 1: (current) [<mc:12> ](about:blank) [crashed]\n\
            - 2: [Plain](https://b.test/)\n";
        let tabs = parse_list(list).unwrap();
        // The page's own mark stays in its title; only the first is read.
        assert_eq!(tabs[0].header, "[<mc:9> Inbox](https://a.test/)");
        assert_eq!(tabs[0].number, Some(4));
        assert_eq!(tabs[1].header, "[](about:blank)");
        assert_eq!(tabs[1].number, Some(12));
        assert!(tabs[1].current);
        assert_eq!(tabs[2].number, None);
    }

    #[test]
    fn an_agent_never_sees_the_daemons_number() {
        let reply = "### Result\nok\n### Page\n- Page URL: https://a.test/\n\
            - Page Title: <mc:4> <mc:9> Inbox\n### Snapshot\nx";
        let out = rewrite_text(
            reply,
            &Rewrite {
                own: &[],
                tab_command: false,
            },
        );
        assert_eq!(
            out,
            "### Result\nok\n### Page\n- Page URL: https://a.test/\n\
             - Page Title: <mc:9> Inbox\n### Snapshot\nx"
        );
    }

    #[test]
    fn a_reply_is_cut_at_its_section_lines_and_nothing_is_lost() {
        assert_eq!(
            sections("intro\n### A\n### B\nbody\n"),
            vec![(None, "intro\n"), (Some("A"), ""), (Some("B"), "body\n")]
        );
        assert_eq!(sections("### A\nbody"), vec![(Some("A"), "body")]);
        assert_eq!(sections("### A\n"), vec![(Some("A"), "")]);
        assert_eq!(
            sections("Error: no session"),
            vec![(None, "Error: no session")]
        );
        assert!(sections("").is_empty());
        let reply =
            "### Result\n- 0: [A](https://a.test/)\n### Page\n- Page URL: https://a.test/\n";
        assert_eq!(
            section(reply, "Page"),
            Some("- Page URL: https://a.test/\n")
        );
        assert_eq!(
            section(reply, "Result"),
            Some("- 0: [A](https://a.test/)\n")
        );
        assert_eq!(section(reply, "Error"), None);
        // A reply with no sections passes through as it is.
        let how = Rewrite {
            own: &[],
            tab_command: true,
        };
        assert_eq!(rewrite_text("Error: no session", &how), "Error: no session");
    }

    #[test]
    fn a_tab_commands_reply_without_a_result_gets_the_agents_tabs_first() {
        let own = [Shown::new(0, 3, None, true, "[A](https://a.test/)")];
        let list = "### Result\n- 0: t3 (current) [A](https://a.test/)\n";
        let tab_command = Rewrite {
            own: &own,
            tab_command: true,
        };
        // A `goto`'s reply, as `tab-new`'s load of its address.
        let loaded = "### Ran Playwright code\nawait page.goto('https://a.test/');\n### Page\n- Page URL: https://a.test/";
        assert_eq!(
            rewrite_text(loaded, &tab_command),
            format!("{list}{loaded}")
        );
        // Not for a page command, nor in place of an error.
        let page = Rewrite {
            own: &own,
            tab_command: false,
        };
        assert_eq!(rewrite_text(loaded, &page), loaded);
        let failed = "### Error\nnet::ERR_NAME_NOT_RESOLVED\n### Page\n- Page URL: about:blank";
        assert_eq!(rewrite_text(failed, &tab_command), failed);
    }

    #[test]
    fn the_json_list_is_the_agents_tabs_only() {
        let own = [
            Shown::new(0, 3, Some("cart"), true, "[A](https://a.test/)"),
            Shown::new(1, 7, None, false, "[](about:blank)"),
        ];
        let got: serde_json::Value = serde_json::from_str(&render_json(&own)).unwrap();
        assert_eq!(
            got,
            serde_json::json!({ "tabs": [
                { "index": 0, "id": "t3", "label": "cart", "current": true, "title": "A",
                  "url": "https://a.test/" },
                { "index": 1, "id": "t7", "label": null, "current": false, "title": "",
                  "url": "about:blank" },
            ] })
        );
        assert_eq!(render_json(&[]), "{\n  \"tabs\": []\n}");
    }

    #[test]
    fn other_tabs_leave_every_reply() {
        let own = [
            Shown::new(0, 3, Some("cart"), true, "[A](https://a.test/)"),
            Shown::new(1, 7, None, false, "[](about:blank)"),
        ];
        let reply = "### Ran Playwright code\n```js\nawait page.click();\n```\n\
            ### Open tabs\n- 0: (current) [A](https://a.test/)\n- 1: [Other](https://other.test/)\n\
            - 2: [](about:blank)\n### Page\n- Page URL: https://a.test/\n### Snapshot\n```yaml\n- x\n```\n";
        let how = Rewrite {
            own: &own,
            tab_command: false,
        };
        let got = rewrite_text(reply, &how);
        assert!(!got.contains("other.test"), "{got}");
        assert!(got.contains(
            "- 0: t3 cart (current) [A](https://a.test/)\n- 1: t7 [](about:blank)\n### Page\n"
        ));
        assert!(got.starts_with("### Ran Playwright code\n```js\n"));
        assert!(got.ends_with("### Snapshot\n```yaml\n- x\n```\n"));
        // One tab of its own: no list, as the daemon does for one tab.
        let one = Rewrite {
            own: &own[..1],
            ..how
        };
        assert!(!rewrite_text(reply, &one).contains("Open tabs"));
        let tab = Rewrite {
            own: &own,
            tab_command: true,
        };
        let got = rewrite_text(
            "### Result\n- 0: [Other](https://other.test/)\n### Page\n- x\n",
            &tab,
        );
        assert_eq!(
            got,
            "### Result\n- 0: t3 cart (current) [A](https://a.test/)\n- 1: t7 [](about:blank)\n### Page\n- x\n"
        );
        // A page command's Result is its own (an `eval` value): kept.
        let value = "### Result\n\"- 0: t9\"\n### Page\n- x\n";
        assert_eq!(rewrite_text(value, &how), value);
        // The reply's last line break, or its lack, stays.
        let last = rewrite_text("### Open tabs\n- 0: [B](https://b.test/)", &how);
        assert_eq!(
            last,
            "### Open tabs\n- 0: t3 cart (current) [A](https://a.test/)\n- 1: t7 [](about:blank)"
        );
    }

    #[test]
    fn written_files_are_found_in_every_form() {
        let text =
            "### Page\n- Page URL: x\n### Snapshot\n- [Snapshot](session-output/page-1.yml)\n";
        assert_eq!(mentioned_files(text), ["session-output/page-1.yml"]);
        let json = r#"{"snapshot":{"file":"out/page-2.yml"}}"#;
        assert!(mentioned_files(json).contains(&"out/page-2.yml".to_string()));
        let bare = "### Result\nsession-output/response-1.bin\n";
        assert_eq!(mentioned_files(bare), ["session-output/response-1.bin"]);
        assert!(mentioned_files("### Result\n- done").is_empty());
    }
}
