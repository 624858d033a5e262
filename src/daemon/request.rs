//! The `run` request, built from a command line exactly as the pinned
//! client builds it (`program.js`, docs/DESIGN.md "The native client"): its
//! minimist with `help.json`'s booleans, `-s` taken as the session, its
//! checks of unknown options and too many arguments (with its own words),
//! `raw` forced for the commands `help.json` marks raw, the global options
//! taken out, and `JSON.stringify`'s bytes. What the client answers by
//! itself (help, version, no command, an unknown command) is left to it.

use std::path::Path;

use crate::minimist::{self, Parsed, Value};
use crate::pinned_commands::{self, HelpEntry};

/// The options the client removes before it sends (`program.js`).
const GLOBAL_OPTIONS: [&str; 3] = ["json", "raw", "session"];

/// What the pinned client would do with a command line.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// Send this request to the daemon.
    Run(Request),
    /// The client refuses it itself; this is what it prints, exit 1.
    Refused(ClientOutput),
    /// The client answers it without the daemon (help, version, no or an
    /// unknown command).
    ClientOnly,
    /// It names an option after a key every JavaScript object has: the
    /// client would take it for a known option and send the line on, so it
    /// is not built (the forwarder refuses it).
    ObjectKey(String),
}

/// A `run` request, and how the daemon will answer it.
#[derive(Debug, PartialEq, Eq)]
pub struct Request {
    /// The line (NDJSON, `\n` included), as the client writes it.
    pub bytes: Vec<u8>,
    /// The request's `json`: the reply is one JSON document.
    pub json: bool,
    /// The request's `raw` (forced for the commands `help.json` marks
    /// raw): the daemon answers with the bare result, and does so for
    /// `json` too (`raw: params.raw || params.json` in the daemon).
    pub raw: bool,
    /// The arguments it sends, as checked (the global options out).
    pub args: Parsed,
    /// The working directory it names, as JSON.
    cwd: serde_json::Value,
}

impl Request {
    /// The same request for the same line with other values in its file
    /// slots (its output files, staged where nobody sees them first): its
    /// bytes made again from `args`, its checks and mode kept.
    pub fn with_args(&self, args: Parsed) -> Request {
        build(args, self.cwd.clone(), self.json, self.raw)
    }

    /// How the daemon will form its reply.
    pub fn mode(&self) -> Mode {
        if self.json {
            Mode::Json
        } else if self.raw {
            Mode::Raw
        } else {
            Mode::Text
        }
    }
}

/// How a reply is formed: the daemon's sections, the bare result, or JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Text,
    Raw,
    Json,
}

/// What the client prints when it refuses a line.
#[derive(Debug, PartialEq, Eq)]
pub struct ClientOutput {
    pub stdout: String,
    pub stderr: String,
}

/// JavaScript's truthiness of an option's value (absent: false).
fn truthy(value: Option<&Value>) -> bool {
    value.is_some_and(Value::truthy)
}

/// The request for a fixed line of my-chrome's own (`tab-list`,
/// `tab-select 2`): read as the client reads it, then [`plan`].
pub fn plan_words(args: &[String], cwd: &Path) -> Plan {
    match minimist::parse(args, pinned_commands::booleans()) {
        Ok(parsed) => plan(parsed, cwd),
        // minimist throws: the client dies with that error, exit 1.
        Err(minimist::ParseError(why)) => Plan::Refused(ClientOutput {
            stdout: String::new(),
            stderr: format!("Error: {why}\n"),
        }),
    }
}

/// The request for a parsed command line (without session options: the
/// session is implied), as the client run with `cwd` would send it.
pub fn plan(mut parsed: Parsed, cwd: &Path) -> Plan {
    if let Some((key, _)) = parsed
        .options
        .iter()
        .find(|(key, _)| crate::policy::OBJECT_KEYS.contains(key))
    {
        return Plan::ObjectKey(key.to_string());
    }
    // my-chrome ran the client as `-s=<session> …`, so `s` was always
    // truthy there (our name, or a list starting with it) and became the
    // session, which is not sent: whatever else names `s` goes with it.
    if let Some(session) = parsed.options.remove("s") {
        parsed.options.insert("session", session);
    }
    // `-g` is the client's short form of `--global` (only `install` has
    // it); a false one stays `g`, and is an unknown option.
    if truthy(parsed.options.get("g")) {
        parsed.options.insert("global", Value::Bool(true));
        parsed.options.remove("g");
    }
    let json = truthy(parsed.options.get("json"));
    let name = match parsed.positional.first() {
        Some(Value::Text(name)) if !name.is_empty() => name.clone(),
        _ => return Plan::ClientOnly,
    };
    let asks_client = ["version", "v", "help", "h"]
        .iter()
        .any(|key| truthy(parsed.options.get(key)));
    let Some(entry) = pinned_commands::help_entry(&name).filter(|_| !asks_client) else {
        return Plan::ClientOnly;
    };
    if let Some(refused) = check(&parsed, &entry, json) {
        return Plan::Refused(refused);
    }
    if entry.raw {
        parsed.options.insert("raw", Value::Bool(true));
    }
    let raw = truthy(parsed.options.get("raw"));
    for global in GLOBAL_OPTIONS {
        parsed.options.remove(global);
    }
    let cwd = serde_json::Value::String(cwd.to_string_lossy().into_owned());
    Plan::Run(build(parsed, cwd, json, raw))
}

/// The request's bytes, as the client writes them.
fn build(args: Parsed, cwd: serde_json::Value, json: bool, raw: bool) -> Request {
    let line = format!(
        "{{\"id\":1,\"method\":\"run\",\"params\":{{\"args\":{},\"cwd\":{cwd},\"raw\":{raw},\"json\":{json}}}}}\n",
        args.to_js_json()
    );
    Request {
        bytes: line.into_bytes(),
        json,
        raw,
        args,
        cwd,
    }
}

/// The client's `validateFlags` and `validateArgs`, in its words.
fn check(parsed: &Parsed, entry: &HelpEntry, json: bool) -> Option<ClientOutput> {
    let unknown: Vec<&str> = parsed
        .keys_in_js_order()
        .into_iter()
        .filter(|key| *key != "_" && !GLOBAL_OPTIONS.contains(key))
        .filter(|key| !entry.flags.contains(key))
        // `--no-X` for a declared flag `no-X` reads as X = false.
        .filter(|key| {
            parsed.options.get(key) != Some(&Value::Bool(false))
                || !entry.flags.contains(&format!("no-{key}").as_str())
        })
        .collect();
    let error = if !unknown.is_empty() {
        let listed: Vec<String> = unknown.iter().map(|key| format!("--{key}")).collect();
        format!(
            "Unknown option{}: {}",
            if unknown.len() > 1 { "s" } else { "" },
            listed.join(", ")
        )
    } else {
        let received = parsed.positional.len().saturating_sub(1);
        if received <= entry.args || entry.variadic {
            return None;
        }
        format!(
            "error: too many arguments: expected {}, received {received}",
            entry.args
        )
    };
    Some(if json {
        // `JSON.stringify({ isError: true, error }, null, 2)`, in its order.
        let error = serde_json::Value::String(error);
        ClientOutput {
            stdout: format!("{{\n  \"isError\": true,\n  \"error\": {error}\n}}\n"),
            stderr: String::new(),
        }
    } else {
        ClientOutput {
            stdout: format!("\n{}\n", entry.help),
            stderr: format!("{error}\n"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &[&str]) -> Vec<String> {
        line.iter().map(|s| s.to_string()).collect()
    }

    fn request(line: &[&str]) -> String {
        match plan_words(&words(line), Path::new("/rt")) {
            Plan::Run(request) => String::from_utf8(request.bytes).unwrap(),
            other => panic!("{line:?}: {other:?}"),
        }
    }

    /// Other values in a line's file slots give the request that line
    /// would have been planned to, without checking it again.
    #[test]
    fn a_request_with_other_file_names_is_the_one_planned_for_them() {
        let planned = |line: &[&str]| match plan_words(&words(line), Path::new("/rt")) {
            Plan::Run(request) => request,
            other => panic!("{line:?}: {other:?}"),
        };
        let line = [
            "-s=mychrome",
            "--json",
            "screenshot",
            "--filename=/tmp/a.png",
            "e5",
        ];
        let first = planned(&line);
        let mut staged = first.args.clone();
        staged.options.insert(
            "filename",
            Value::Text("/rt/tmp/outputs/out.1/a.png".into()),
        );
        let restaged = first.with_args(staged);
        let mut other = line;
        other[3] = "--filename=/rt/tmp/outputs/out.1/a.png";
        assert_eq!(restaged, planned(&other));
        assert!(restaged.json && !restaged.raw);
        assert_ne!(restaged.bytes, first.bytes);
    }

    #[test]
    fn a_run_request_as_the_client_writes_it() {
        assert_eq!(
            request(&["--json", "tab-list"]),
            "{\"id\":1,\"method\":\"run\",\"params\":{\"args\":{\"_\":[\"tab-list\"]},\
             \"cwd\":\"/rt\",\"raw\":false,\"json\":true}}\n"
        );
        // help.json marks cookie-list raw; the global options go.
        assert_eq!(
            request(&["cookie-list", "--domain", "x.test"]),
            "{\"id\":1,\"method\":\"run\",\"params\":{\"args\":{\"_\":[\"cookie-list\"],\
             \"domain\":\"x.test\"},\"cwd\":\"/rt\",\"raw\":true,\"json\":false}}\n"
        );
    }

    #[test]
    fn the_client_refusals_in_its_own_words() {
        let Plan::Refused(out) =
            plan_words(&words(&["snapshot", "--bogus", "--x"]), Path::new("/"))
        else {
            panic!()
        };
        assert_eq!(out.stderr, "Unknown options: --bogus, --x\n");
        assert!(out.stdout.starts_with("\nplaywright-cli snapshot"));
        let Plan::Refused(out) = plan_words(&words(&["--json", "goto", "a", "b"]), Path::new("/"))
        else {
            panic!()
        };
        assert_eq!(
            out.stdout,
            "{\n  \"isError\": true,\n  \"error\": \"error: too many arguments: expected 1, received 2\"\n}\n"
        );
        // `-g` is `--global` to the client: unknown to every command but
        // `install`; `--no-X` passes where `no-X` is declared.
        let Plan::Refused(out) = plan_words(&words(&["snapshot", "-g"]), Path::new("/")) else {
            panic!()
        };
        assert_eq!(out.stderr, "Unknown option: --global\n");
        assert!(matches!(
            plan_words(&words(&["install", "-g"]), Path::new("/")),
            Plan::Run(_)
        ));
        let Plan::Refused(out) = plan_words(&words(&["snapshot", "-g", "false"]), Path::new("/"))
        else {
            panic!()
        };
        assert_eq!(out.stderr, "Unknown option: --g\n");
        assert!(matches!(
            plan_words(&words(&["install-browser", "--no-shell"]), Path::new("/")),
            Plan::Run(_)
        ));
        let Plan::Refused(out) = plan_words(&words(&["snapshot", "--no-shell"]), Path::new("/"))
        else {
            panic!()
        };
        assert_eq!(out.stderr, "Unknown option: --shell\n");
        // A variadic argument is never too many.
        assert!(matches!(
            plan_words(&words(&["upload", "/a", "/b", "/c"]), Path::new("/")),
            Plan::Run(_)
        ));
        for client_only in [
            &["--help", "snapshot"][..],
            &["snapshot", "-h"],
            &["--version"],
            &[],
            &["--json"],
            &["frobnicate"],
        ] {
            assert_eq!(
                plan_words(&words(client_only), Path::new("/")),
                Plan::ClientOnly,
                "{client_only:?}"
            );
        }
        // An option's text counts as JavaScript counts it: `-h=` (minimist
        // gives `h: ""`) asks for no help, an empty string being falsy, so
        // the line is the client's to check; `-h5` (`h: "5"`) asks for it.
        assert!(
            !matches!(
                plan_words(&words(&["snapshot", "-h="]), Path::new("/")),
                Plan::ClientOnly
            ),
            "an empty -h is no request for help"
        );
        assert_eq!(
            plan_words(&words(&["snapshot", "-h5"]), Path::new("/")),
            Plan::ClientOnly
        );
        // Every spelling minimist reads as such a key.
        for (line, key) in [
            (&["snapshot", "--toString", "x"][..], "toString"),
            (&["click", "e1", "--no-constructor"], "constructor"),
            (&["eval", "1", "--valueOf=2"], "valueOf"),
            (&["eval", "1", "--__proto__", "3"], "__proto__"),
        ] {
            assert_eq!(
                plan_words(&words(line), Path::new("/")),
                Plan::ObjectKey(key.into()),
                "{line:?}"
            );
        }
    }
}
