//! One reading of a forwarded command line. The pinned client reads the
//! words with its minimist, and so does my-chrome, once (`minimist.rs`, a
//! port proven against the real one): every decision about the line —
//! which command, the session it names, the tab it runs on and the label
//! it gives, its arguments, its files, what it starts or ends — is read
//! from that one parsed form, and the request the daemon gets is built
//! from it too (`daemon::request::plan`). The words themselves are looked
//! at only to refuse (a token-shaped word anywhere, an option before the
//! command): never to decide what runs.

use super::tabs::{TabArgError, TabRef, label};
use super::{Refusal, files};
use crate::minimist::{self, Parsed, Value};
use crate::pinned_commands::{self, CliCommand, HoldChange, TabCommand};
use crate::token_shape::{looks_like_token, redact_runs};

/// The options my-chrome reads itself and takes out before the request is
/// built: the pinned client knows neither (`--tab <ref>`: the tab the
/// command runs on; `--label <name>`: for `tab-new`).
const TAB: &str = "tab";
const LABEL: &str = "label";
/// The session options (`-s`, `--session`): ours is implied.
const SESSION_KEYS: [&str; 2] = ["s", "session"];

/// Options the CLI takes before the command (with no value). Anything else
/// there is refused: it reads as part of the command to nobody who reads
/// the line by eye.
const LEADING_FLAGS: [&str; 2] = ["--json", "--raw"];

/// A forwarded command line, read once.
#[derive(Debug, PartialEq, Eq)]
pub struct Line {
    /// minimist's reading, without the session, `--tab` and `--label`.
    parsed: Parsed,
    pub tab: Option<TabRef>,
    pub label: Option<String>,
    /// Its command's table entry (none for a line without a command): all
    /// that is decided by the command's name.
    pub entry: Option<&'static CliCommand>,
    /// What it does to a hold, as the daemon will read it.
    pub hold: Option<HoldChange>,
    /// The parsed form that is sent: `tab-new` always names an address,
    /// a blank one when it loads its own (below) or names none.
    pub sent: Parsed,
    /// `tab-new <url>`'s load of its address: the `goto` line run on its
    /// blank tab once it is open (a tab opened with an address can leave
    /// `eval` waiting forever through the extension).
    pub load: Option<Parsed>,
}

/// The address of a blank tab.
pub const BLANK: &str = "about:blank";

impl Line {
    /// Reads `words` (everything after `my-chrome`), refusing what may not
    /// be forwarded for `session`.
    pub fn read(words: &[String], session: &str) -> Result<Line, Refusal> {
        // A child's arguments are visible to every local user: a token
        // pasted into the wrong place must not travel on.
        if words.iter().any(|w| looks_like_token(w)) {
            return Err(Refusal::TokenInArguments);
        }
        // What the client's own parser throws on, it never sends.
        let mut parsed = minimist::parse(words, pinned_commands::booleans())
            .map_err(|minimist::ParseError(why)| Refusal::Unreadable(why))?;
        for key in SESSION_KEYS {
            if let Some(value) = parsed.options.remove(key) {
                names_our_session(&value, session)?;
            }
        }
        leading_options(words)?;
        let tab = take_text(&mut parsed, TAB, "--tab")?
            .as_deref()
            .map(TabRef::parse)
            .transpose()?;
        let label = take_text(&mut parsed, LABEL, "--label")?
            .as_deref()
            .map(label)
            .transpose()?;
        let mut line = Line {
            sent: parsed.clone(),
            parsed,
            tab,
            label,
            entry: None,
            hold: None,
            load: None,
        };
        line.entry = line.check()?;
        line.decide();
        Ok(line)
    }

    /// What its command's entry decides of this line: its hold, and what
    /// `tab-new` sends.
    fn decide(&mut self) {
        let Some(entry) = self.entry else {
            return;
        };
        self.hold = entry.hold.and_then(|rule| rule.change(self.argument(1)));
        if entry.tab == Some(TabCommand::New) {
            if self
                .argument(1)
                .is_some_and(|u| !u.is_empty() && u != BLANK)
            {
                let mut goto = self.parsed.clone();
                goto.positional[0] = Value::Text(pinned_commands::goto().name.into());
                self.load = Some(goto);
            }
            self.sent = self.parsed_with_argument(1, BLANK);
        }
    }

    /// The rules that need the command: allowed, not refused, no option
    /// named after a JavaScript object key, web addresses only; the
    /// command's table entry, when the line has a command.
    fn check(&self) -> Result<Option<&'static CliCommand>, Refusal> {
        if let Some((key, _)) = self
            .parsed
            .options
            .iter()
            .find(|(key, _)| !minimist::plain_key(key))
        {
            return Err(Refusal::Unreadable(format!(
                "the option {:?} is no option name (letters, digits, '-', '_', '.', not starting with '-')",
                redact_runs(key)
            )));
        }
        if let Some(at) = self.parsed.positional.iter().position(|v| !is_text(v)) {
            return Err(Refusal::Unreadable(format!(
                "argument {at} is given as an option (`--_`/`--no-_`) without a word; give \
                 arguments as plain words"
            )));
        }
        let Some(command) = self.command() else {
            if self.label.is_some() {
                return Err(TabArgError::LabelWithout.into());
            }
            return Ok(None);
        };
        let entry = super::allowed(command)?;
        if self.label.is_some() && !entry.takes_label() {
            return Err(TabArgError::LabelWithout.into());
        }
        if let Some((key, _)) = self
            .parsed
            .options
            .iter()
            .find(|(key, _)| super::OBJECT_KEYS.contains(key))
        {
            return Err(Refusal::ObjectKey {
                command: command.to_string(),
                option: key.to_string(),
            });
        }
        if entry.navigates {
            // The address is an argument; an option's text is checked too,
            // whatever option it is (none of these commands has one that
            // navigates, and the client refuses unknown ones).
            let arguments = self.parsed.positional.iter().skip(1).flat_map(Value::texts);
            let options = self.parsed.options.iter().flat_map(|(_, v)| v.texts());
            if let Some(scheme) = arguments
                .chain(options)
                .filter(|a| a.trim() != BLANK)
                .filter_map(super::scheme_of)
                .find(|s| !super::web_scheme(s))
            {
                return Err(Refusal::Scheme {
                    command: command.to_string(),
                    scheme,
                });
            }
        }
        Ok(Some(entry))
    }

    /// The command: the first positional word (`None` for a line the
    /// client answers with its usage).
    pub fn command(&self) -> Option<&str> {
        self.argument(0).filter(|name| !name.is_empty())
    }

    /// The `n`th positional word (0 is the command), as the daemon gets it.
    pub fn argument(&self, n: usize) -> Option<&str> {
        match self.parsed.positional.get(n)? {
            Value::Text(text) => Some(text),
            _ => None,
        }
    }

    /// Every file the line names (its command's file options and
    /// arguments), as the daemon will read them.
    pub fn files(&self) -> Result<Vec<files::FileArg>, Refusal> {
        files::files_of(&self.parsed)
    }

    /// Whether the line asks for JSON (`json` true to JavaScript).
    pub fn asks_json(&self) -> bool {
        self.parsed.options.get("json").is_some_and(Value::truthy)
    }

    /// The parsed form the request is built from.
    pub fn parsed(&self) -> &Parsed {
        &self.parsed
    }

    /// The same line for the pinned client itself (what it answers alone:
    /// usage, help, `list`): words that its minimist reads back into
    /// exactly this parsed form.
    pub fn words(&self) -> Vec<String> {
        self.parsed.to_words(pinned_commands::booleans())
    }

    /// The parsed form with positional word `n` set (`tab-new` is sent
    /// with an address even when none was given).
    pub fn parsed_with_argument(&self, n: usize, word: &str) -> Parsed {
        let mut parsed = self.parsed.clone();
        while parsed.positional.len() <= n {
            parsed.positional.push(Value::Text(String::new()));
        }
        parsed.positional[n] = Value::Text(word.to_string());
        parsed
    }
}

fn is_text(value: &Value) -> bool {
    matches!(value, Value::Text(_))
}

/// Every session a session option names must be ours.
fn names_our_session(value: &Value, session: &str) -> Result<(), Refusal> {
    let other = |named: String| Refusal::OtherSession {
        ours: session.to_string(),
        named,
    };
    match value {
        Value::Text(name) if name == session => Ok(()),
        Value::Text(name) => Err(other(name.clone())),
        // `--no-s`, a bare `-s`: no session of ours.
        Value::Bool(b) => Err(other(b.to_string())),
        Value::List(values) => values
            .iter()
            .try_for_each(|value| names_our_session(value, session)),
    }
}

/// Only `--json` and `--raw` may come before the command (a refusal, never
/// a reading: what runs is read from the parsed form).
fn leading_options(words: &[String]) -> Result<(), Refusal> {
    let leading = words.iter().take_while(|w| w.starts_with('-'));
    let Some(option) = leading
        .filter(|w| !is_session_word(w))
        .find(|w| !LEADING_FLAGS.contains(&w.as_str()))
    else {
        return Ok(());
    };
    let hint = if option.starts_with("--agent") {
        "`--agent NAME` goes first, before any other option"
    } else {
        "put options after the command"
    };
    Err(Refusal::OptionBeforeCommand {
        option: option.clone(),
        hint,
    })
}

/// A word of a session option before the command (`-s=mychrome`, `-s`
/// followed by the name, `--session=mychrome`): what it names was checked
/// above, and it may stand there.
fn is_session_word(word: &str) -> bool {
    ["-s", "--s", "--session"].contains(&word)
        || ["-s=", "--s=", "--session="]
            .iter()
            .any(|p| word.starts_with(p))
}

/// Takes option `key` out of `parsed`: one word, or refused (given twice,
/// or without a value).
fn take_text(
    parsed: &mut Parsed,
    key: &str,
    name: &'static str,
) -> Result<Option<String>, TabArgError> {
    match parsed.options.remove(key) {
        None => Ok(None),
        Some(Value::Text(text)) => Ok(Some(text)),
        Some(Value::List(_)) => Err(TabArgError::Twice(name)),
        Some(Value::Bool(_)) => Err(TabArgError::Missing(name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Result<Line, Refusal> {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        Line::read(&words, "mychrome")
    }

    fn refused(line: &str) -> Refusal {
        match read(line) {
            Err(refusal) => refusal,
            Ok(read) => panic!("{line}: {read:?}"),
        }
    }

    /// JSON is asked by `--json`, before or after the command, and only
    /// by it (`--json=value` and `--no-json` are refused, as the client
    /// refuses them).
    #[test]
    fn json_is_asked_by_the_json_option_alone() {
        for line in ["--json list", "list --json", "--json list --json"] {
            assert!(read(line).unwrap().asks_json(), "{line}");
        }
        for line in ["list", "--raw list", "snapshot --depth 2"] {
            assert!(!read(line).unwrap().asks_json(), "{line}");
        }
    }

    /// `tab-new <url>` sends a blank `tab-new`, then the `goto` of its
    /// address; a blank or empty address loads nothing, and no other
    /// command is changed.
    #[test]
    fn only_tab_new_with_an_address_is_sent_blank_then_loaded() {
        let texts = |parsed: &Parsed| -> Vec<String> {
            parsed
                .positional
                .iter()
                .map(|v| match v {
                    Value::Text(text) => text.clone(),
                    other => format!("{other:?}"),
                })
                .collect()
        };
        let line = read("tab-new https://example.com/").unwrap();
        assert_eq!(texts(&line.sent), ["tab-new", BLANK]);
        assert_eq!(
            line.load.as_ref().map(texts),
            Some(vec!["goto".to_string(), "https://example.com/".into()])
        );
        let empty = Line::read(&["tab-new".into(), String::new()], "mychrome").unwrap();
        for line in [
            read("tab-new").unwrap(),
            read("tab-new about:blank").unwrap(),
            empty,
        ] {
            assert_eq!(texts(&line.sent), ["tab-new", BLANK], "{line:?}");
            assert_eq!(line.load, None, "{line:?}");
        }
        let line = read("goto https://example.com/").unwrap();
        assert_eq!(texts(&line.sent), ["goto", "https://example.com/"]);
        assert_eq!(line.load, None);
    }

    #[test]
    fn tab_and_label_are_read_as_minimist_reads_them() {
        let line = read("--json snapshot --tab t3 --depth 2").unwrap();
        assert_eq!(line.tab, Some(TabRef::Id(3)));
        assert_eq!(line.words(), ["--json", "--depth=2", "--", "snapshot"]);
        let line = read("tab-new --label=cart https://example.test/").unwrap();
        assert_eq!(line.label.as_deref(), Some("cart"));
        assert_eq!(line.argument(1), Some("https://example.test/"));
        // After `--`, `--tab` is an argument, for minimist as for us.
        let line = read("fill e1 -- --tab x").unwrap();
        assert_eq!((line.tab.as_ref(), line.argument(2)), (None, Some("--tab")));
        assert_eq!(
            refused("click e1 --tab 0 --tab=1"),
            Refusal::TabArg(TabArgError::Twice("--tab"))
        );
        for bare in [
            "click e1 --tab",
            "click e1 --tab --json",
            "click e1 --no-tab",
        ] {
            assert_eq!(
                refused(bare),
                Refusal::TabArg(TabArgError::Missing("--tab")),
                "{bare}"
            );
        }
        assert_eq!(
            refused("click e1 --label x"),
            Refusal::TabArg(TabArgError::LabelWithout)
        );
        assert!(matches!(
            refused("tab-new --label t4"),
            Refusal::TabArg(TabArgError::BadLabel(_))
        ));
    }

    #[test]
    fn the_command_and_its_arguments_are_the_parsed_ones() {
        // `--raw true`: minimist takes `true` as the boolean's value.
        let line = read("--raw true snapshot").unwrap();
        assert_eq!(line.command(), Some("snapshot"));
        // `-1` is an argument to minimist, not an option.
        let line = read("unroute -1").unwrap();
        assert_eq!(line.argument(1), Some("-1"));
        let line = read("unroute -- **/x").unwrap();
        assert_eq!(line.argument(1), Some("**/x"));
        assert!(matches!(refused("unroute --no-_"), Refusal::Unreadable(_)));
        // Short flags can make the key `-`, which no word spells back.
        assert!(matches!(
            refused("snapshot -no-0 --- -no-"),
            Refusal::Unreadable(_)
        ));
        assert_eq!(read("--json").unwrap().command(), None);
    }

    #[test]
    fn every_session_option_must_name_ours() {
        for ours in [
            "-s=mychrome tab-list",
            "tab-list --session mychrome",
            "-s mychrome tab-list",
        ] {
            assert!(read(ours).is_ok(), "{ours}");
        }
        for other in [
            "tab-list -s x",
            "tab-list --no-s",
            "-s=mychrome tab-list -s=other",
            "tab-list -xs other",
            // minimist reads `-smychrome` as nine one-letter flags: `s` is
            // true, no session of ours.
            "-smychrome tab-list",
        ] {
            assert!(
                matches!(refused(other), Refusal::OtherSession { .. }),
                "{other}"
            );
        }
    }

    #[test]
    fn a_navigation_is_checked_wherever_the_address_stands() {
        let extension = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/status.html";
        for line in [
            format!("goto {extension}"),
            format!("goto -- {extension}"),
            format!("goto --x={extension}"),
            format!("tab-new --label=a {extension}"),
        ] {
            assert!(matches!(refused(&line), Refusal::Scheme { .. }), "{line}");
        }
        assert!(read("goto https://example.test/").is_ok());
    }

    #[test]
    fn a_line_minimist_throws_on_is_refused() {
        assert!(matches!(
            read("--json=true snapshot"),
            Err(Refusal::Unreadable(_))
        ));
    }
}
