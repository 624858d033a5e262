//! Every other command is a Playwright CLI command, forwarded to our session
//! through an allowlist and the redactor (invariants 8 and 9).

use std::ffi::OsString;
use std::io::Write;
use std::time::Duration;

use crate::child::{ChildCommand, Output};
use crate::commands;
use crate::config::Config;
use crate::daemon::request::{self, Plan};
use crate::daemon::{self, DaemonError, Reply};
use crate::error::Error;
use crate::exit::Exit;
use crate::file_args::FileRules;
use crate::helper::HelperError;
use crate::helper::check::Check;
use crate::redact::Redactor;
use crate::start::{Start, Started};
use crate::token::fingerprint::{self, Fingerprint};
use crate::token::shape::{looks_like_token, redact_runs};

/// Commands my-chrome refuses, and what to use instead.
const BLOCKED: [(&str, &str); 11] = [
    (
        "open",
        "it would launch a browser; use `my-chrome goto <url>` in the connected one",
    ),
    (
        "attach",
        "only `my-chrome connect` attaches, after the user's approval",
    ),
    (
        "show",
        "it opens a dashboard window; use `my-chrome tab-list` and `my-chrome snapshot`",
    ),
    (
        "install",
        "my-chrome installs its own pinned CLI with `my-chrome setup`",
    ),
    (
        "install-browser",
        "my-chrome never installs or launches a browser",
    ),
    (
        "close-all",
        "it would close every session; use `my-chrome disconnect`",
    ),
    (
        "kill-all",
        "it would kill every session; use `my-chrome disconnect`",
    ),
    ("delete-data", "my-chrome never deletes browser data"),
    (
        "run-code",
        "it runs arbitrary JavaScript in the pinned CLI's own process, outside any page (upstream \
         calls it RCE-equivalent): it could read your files and the extension's token; use \
         `my-chrome eval` for JavaScript in the page",
    ),
    (
        "video-start",
        "video needs Playwright's ffmpeg, a program my-chrome does not install and never lets \
         the daemon run from your folders (where anything could have been planted); take \
         `screenshot`s instead",
    ),
    (
        "state-load",
        "it replaces the browser's cookies and storage, and opens whatever origins its file \
         names (the extension's own among them, whose storage holds the token); sign in with \
         `goto` and the page itself",
    ),
];

/// The pinned CLI's own words for what `my-chrome disconnect` does.
const DISCONNECT_ALIASES: [&str; 2] = ["close", "detach"];

/// The documented commands my-chrome passes on.
fn forwarded_commands() -> impl Iterator<Item = &'static str> {
    commands::table().iter().map(|c| c.name).filter(|name| {
        !BLOCKED.iter().any(|(b, _)| b == name) && !DISCONNECT_ALIASES.contains(name)
    })
}

/// Commands that navigate to an address given as an argument.
const NAVIGATING: [&str; 2] = ["goto", "tab-new"];

/// The schemes a navigation may use (and `about:blank`). The extension's own
/// pages show its token (`status.html`) and carry it (`connect.html`), and the
/// debugger lets the session navigate there; browser pages are not an
/// agent's either. (The pinned CLI itself refuses `file:`, and Chrome aborts
/// `data:` navigations through the extension.)
const WEB_SCHEMES: [&str; 2] = ["http", "https"];

/// The names of the refused commands.
pub fn blocked_commands() -> impl Iterator<Item = &'static str> {
    BLOCKED.iter().map(|(name, _)| *name)
}

/// Options the CLI takes before the command (with no value). Anything else
/// there could hide the command from us (`--x y open`), so it is refused.
const LEADING_FLAGS: [&str; 2] = ["--json", "--raw"];

/// Why `args` may not be forwarded, if they may not.
pub fn refusal(args: &[String], session: &str) -> Option<String> {
    // A child's arguments are visible to every local user: a token pasted
    // into the wrong place must not travel on.
    if args.iter().any(|a| looks_like_token(a)) {
        return Some(
            "an argument looks like the extension token; it was not passed on (command lines are \
             visible to every local user). Store the token with `my-chrome token store`"
                .into(),
        );
    }
    let (rest, named) = split_session(args);
    if let Some(other) = named.iter().find(|n| *n != session) {
        return Some(format!(
            "only the session {session:?} is driven through my-chrome; {other:?} is refused"
        ));
    }
    if let Some(arg) = rest
        .iter()
        .take_while(|a| a.starts_with('-'))
        .find(|a| !LEADING_FLAGS.contains(&a.as_str()))
    {
        let hint = if arg.starts_with("--agent") {
            "`--agent NAME` goes first, before any other option"
        } else {
            "put options after the command"
        };
        return Some(format!(
            "the option {arg:?} before the command is refused; {hint}"
        ));
    }
    let command = command_of(&rest)?;
    if let Some((_, why)) = BLOCKED.iter().find(|(name, _)| *name == command) {
        return Some(format!("`{command}` is refused: {why}"));
    }
    if DISCONNECT_ALIASES.contains(&command) {
        return Some(format!(
            "`{command}` is `my-chrome disconnect` (it detaches and leaves Chrome running); run \
             that, with no options before it"
        ));
    }
    if commands::find(command).is_none() {
        let hint = match commands::nearest(command, forwarded_commands()) {
            Some(near) => format!("did you mean `{near}`? "),
            None => String::new(),
        };
        return Some(format!(
            "`{}` is not a command my-chrome forwards (only the pinned CLI's documented ones); \
             {hint}`my-chrome --help` lists them",
            redact_runs(command)
        ));
    }
    if NAVIGATING.contains(&command) {
        let after = rest.iter().skip_while(|a| *a != command).skip(1);
        let refused = after
            .filter(|a| a.trim() != "about:blank")
            .filter_map(|a| scheme_of(a))
            .find(|s| !web_scheme(s));
        if let Some(scheme) = refused {
            return Some(format!(
                "`{command}` to a {scheme}: address is refused: my-chrome opens web pages only \
                 (http, https, about:blank); the extension's own pages show its token, and \
                 browser pages are not an agent's"
            ));
        }
    }
    None
}

/// The scheme of an address, lower-case, read as a URL parser reads it (C0
/// controls and spaces around it dropped, tabs and line breaks anywhere);
/// `None` without one (`example.test/x`, to which the CLI adds `https://`).
/// `localhost:3000` has the scheme `localhost`, for the CLI as for us. In an
/// option (`--x=…`), the value counts.
fn scheme_of(arg: &str) -> Option<String> {
    let value = match arg.strip_prefix('-') {
        Some(option) => option.split_once('=')?.1,
        None => arg,
    };
    let cleaned: String = value
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let (scheme, _) = cleaned.split_once(':')?;
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| scheme.to_ascii_lowercase())
}

fn web_scheme(scheme: &str) -> bool {
    WEB_SCHEMES.contains(&scheme)
}

/// The command: the first argument that is not an option.
fn command_of(args: &[String]) -> Option<&str> {
    args.iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str)
}

/// The arguments without any session option, and the sessions they named
/// (`-s x`, `-s=x`, `-sx`, `--s x`, `--s=x`, `--session x`, `--session=x`:
/// the CLI's parser reads them all).
fn split_session(args: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut rest, mut named) = (Vec::new(), Vec::new());
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "-s" | "--s" | "--session" => named.push(iter.next().cloned().unwrap_or_default()),
            // Names no session of ours either.
            "--no-s" | "--no-session" => named.push("false".into()),
            other => {
                let value = ["-s=", "--s=", "--session="]
                    .iter()
                    .find_map(|p| other.strip_prefix(p))
                    .or_else(|| {
                        other
                            .strip_prefix("-s")
                            .filter(|v| !v.is_empty() && !other.starts_with("--"))
                    });
                match value {
                    Some(v) => named.push(v.to_string()),
                    None => rest.push(arg.clone()),
                }
            }
        }
    }
    (rest, named)
}

/// Without any session option: we add ours.
fn without_session(args: &[String]) -> Vec<String> {
    split_session(args).0
}

/// The pinned CLI's own help, when the helper is supported (never
/// otherwise: an unsupported copy's text is not ours to show). A runtime or
/// tree that fails its checks is refused as for any forwarded command.
pub fn cli_help(config: &Config) -> Result<Option<String>, Error> {
    // `--help` creates no runtime.
    if crate::runtime::Runtime::inspect(&config.runtime)?.is_none() {
        return Ok(None);
    }
    let started = match Start::new(config, Check::Supported).open() {
        Ok(started) => started,
        Err(Error::Helper(HelperError::Missing { .. } | HelperError::Unsupported { .. })) => {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let help = ChildCommand::new(
        "playwright-cli --help",
        &started.node()?.path,
        started.runtime.root(),
        Duration::from_secs(30),
    )
    .arg(started.helper.entry())
    .arg("--help")
    .run(&started.env)?;
    Ok(help.status.success().then(|| help.stdout_text()))
}

pub fn forward(config: &Config, raw: &[OsString]) -> Result<(), Error> {
    let args: Vec<String> = raw
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(why) = refusal(&args, &config.session) {
        return Err(Error::usage(redact_runs(&why)));
    }
    let rest = without_session(&args);
    if let Some(why) = FileRules::from_config(config).refusal(&rest) {
        return Err(Error::usage(redact_runs(&why)));
    }
    let start = Start::new(config, Check::Supported);
    // `list` reports every session and needs none of ours; a line without a
    // command only prints the CLI's usage: the pinned client answers both.
    let name = match command_of(&rest) {
        Some(name) if name != "list" => name,
        _ => return run_pinned(config, &start.open()?, &rest, false),
    };
    // Every command that may act on the browser waits for its turn first.
    let started = start.turn(name).open()?;
    let session = started.require_registered()?;
    let cwd = started.daemon_cwd()?;
    let known = fingerprint::recorded(&started.runtime)?;
    let print = |out: &mut dyn Write, text: &[&str]| print_redacted(out, text, known.as_ref());
    match request::plan(&rest, &cwd) {
        Plan::Run(line) => {
            let reply = daemon::run(
                &session.socket_path,
                &line,
                config.command_timeout,
                config.reply_limit,
            );
            match reply.map_err(|e| match e {
                DaemonError::Unreachable(why) => crate::start::stale(why),
                other => other.into(),
            })? {
                Reply::Text(text) => {
                    let text = text.as_deref().unwrap_or("undefined");
                    print(&mut std::io::stdout(), &[text, "\n"]);
                    Ok(())
                }
                // The pinned client dies with a stack trace; its first line.
                Reply::Error(message) => {
                    print(&mut std::io::stderr(), &["Error: ", &message, "\n"]);
                    Err(Error::Silent(Exit::Code(1)))
                }
            }
        }
        Plan::Refused(output) => {
            print(&mut std::io::stdout(), &[&output.stdout]);
            print(&mut std::io::stderr(), &[&output.stderr]);
            Err(Error::Silent(Exit::Code(1)))
        }
        Plan::ClientOnly => run_pinned(config, &started, &rest, true),
    }
}

/// `parts` through the redactor, as one stream, written as it comes (a
/// large reply is not copied whole again). A closed output (a pipe whose
/// reader left) is no failure of the command: the rest is dropped.
fn print_redacted(out: &mut dyn Write, parts: &[&str], known: Option<&Fingerprint>) {
    let mut redactor = Redactor::new(known.cloned());
    let slices = parts
        .iter()
        .flat_map(|part| part.as_bytes().chunks(64 * 1024));
    for slice in slices {
        if out.write_all(&redactor.feed(slice)).is_err() {
            return;
        }
    }
    let _ = out.write_all(&redactor.finish()).and_then(|()| out.flush());
}

/// The pinned CLI itself, for what its client answers alone (usage, help,
/// `list`), its output through the redactor.
fn run_pinned(
    config: &Config,
    started: &Started,
    rest: &[String],
    ours: bool,
) -> Result<(), Error> {
    let mut child = ChildCommand::new(
        "playwright-cli",
        &started.node()?.path,
        started.runtime.root(),
        config.command_timeout,
    )
    .arg(started.helper.entry());
    if ours {
        child = child.arg(format!("-s={}", config.session));
    }
    let finished = child
        .args(rest)
        .known_token(fingerprint::recorded(&started.runtime)?)
        .stdout(Output::Redacted)
        .stderr(Output::Redacted)
        .run(&started.env)?;
    match finished.status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(Error::Silent(Exit::Code(code))),
        None => Err(Error::Silent(Exit::Code(1))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn blocked_commands_and_other_sessions_are_refused() {
        for command in [
            "open",
            "attach",
            "show",
            "install",
            "install-browser",
            "close-all",
            "kill-all",
            "delete-data",
            "run-code",
            "state-load",
            "video-start",
        ] {
            assert!(
                refusal(&args(&[command]), "mychrome").is_some(),
                "{command}"
            );
        }
        assert!(
            refusal(&args(&["open"]), "mychrome")
                .unwrap()
                .contains("goto")
        );
        for list in [
            &["-s=other", "tab-list"][..],
            &["--session", "other", "tab-list"],
            &["tab-list", "-s", "x"],
            &["tab-list", "--no-s"],
            &["--no-session", "tab-list"],
        ] {
            assert!(refusal(&args(list), "mychrome").is_some(), "{list:?}");
        }
        assert_eq!(
            refusal(&args(&["-s=mychrome", "tab-list"]), "mychrome"),
            None
        );
        assert_eq!(
            refusal(&args(&["goto", "https://example.test/"]), "mychrome"),
            None
        );
        assert_eq!(
            without_session(&args(&["--session", "mychrome", "tab-list"])),
            args(&["tab-list"])
        );
    }

    #[test]
    fn only_documented_commands_pass_wherever_they_stand() {
        for (line, needle) in [
            (&["config-print"][..], "not a command my-chrome forwards"),
            (&["tray"], "not a command my-chrome forwards"),
            (&["--json", "tray"], "not a command my-chrome forwards"),
            (&["snapshto"], "did you mean `snapshot`?"),
            (&["--json", "close"], "is `my-chrome disconnect`"),
            (&["--raw", "detach"], "is `my-chrome disconnect`"),
            (
                &["--raw", "--json", "run-code", "x"],
                "`run-code` is refused",
            ),
            (
                &["-s=mychrome", "--json", "kill-all"],
                "`kill-all` is refused",
            ),
        ] {
            let why = refusal(&args(line), "mychrome").unwrap_or_else(|| panic!("{line:?}"));
            assert!(why.contains(needle), "{line:?}: {why}");
        }
        for line in [
            &["--json", "tab-list"][..],
            &["list"],
            &["--raw", "eval", "1"],
        ] {
            assert_eq!(refusal(&args(line), "mychrome"), None, "{line:?}");
        }
        // None of the refused ones is forwarded.
        assert!(!forwarded_commands().any(|c| ["open", "close", "run-code"].contains(&c)));
    }

    #[test]
    fn navigation_goes_to_web_pages_only() {
        let extension = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/status.html";
        for refused in [
            extension,
            "CHROME-EXTENSION://mmlmfjhmonkocbjadbfplnigmagldckm/status.html",
            " \u{1}chrome-extension://x/status.html",
            "chrome-\textension://x/status.html",
            "chrome://settings",
            "view-source:chrome-extension://x/status.html",
            "blob:chrome-extension://x/y",
            "javascript:alert(1)",
            "devtools://devtools/bundled/inspector.html",
            "about:settings",
            "javascript:0/alert(1)",
            "localhost:3000/page",
            "file:///tmp/page.html",
            "data:text/html,<p>hi</p>",
        ] {
            for command in ["goto", "tab-new"] {
                let why = refusal(&args(&[command, refused]), "mychrome")
                    .unwrap_or_else(|| panic!("{command} {refused:?} passed"));
                assert!(why.contains("web pages only"), "{why}");
                assert!(
                    !why.contains("status.html"),
                    "the address is not echoed: {why}"
                );
            }
        }
        assert!(refusal(&args(&["--json", "goto", extension]), "mychrome").is_some());
        assert!(refusal(&args(&["goto", "--", extension]), "mychrome").is_some());
        assert!(refusal(&args(&["goto", &format!("--x={extension}")]), "mychrome").is_some());
        for allowed in [
            "https://example.test/a?b=chrome-extension://x",
            "http://127.0.0.1:8080/",
            "HTTPS://example.test/",
            "example.test",
            "example.test/path?q=chrome-extension://x",
            "about:blank",
        ] {
            assert_eq!(
                refusal(&args(&["goto", allowed]), "mychrome"),
                None,
                "{allowed}"
            );
        }
        assert_eq!(refusal(&args(&["tab-new"]), "mychrome"), None);
        // Other commands may mention such addresses (typed text, say).
        assert_eq!(refusal(&args(&["type", extension]), "mychrome"), None);
    }
}
