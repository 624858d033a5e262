//! What may be forwarded, decided from the command line alone: the
//! allowlist (the pinned CLI's documented commands), the refused commands
//! and options, the sessions, the addresses a navigation may open, and
//! (in `files`) which words name files and the rules for them that need no
//! disk. No I/O here, and nothing above it is imported: the forwarder
//! executes what this allows; `safety-audit` asks it what is refused.

pub mod files;
pub mod holds;
pub mod line;
pub mod tabs;

use crate::exit::Exit;
use crate::pinned_commands;
use crate::token::shape::redact_runs;
use line::Line;

/// Why a command line is not forwarded. Every refusal is a usage error
/// (exit 2); its text names the rule and what to do instead. Whatever it
/// quotes from the line is shown with token-like runs redacted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error(
        "an argument looks like the extension token; it was not passed on (command lines are \
         visible to every local user). Store the token with `my-chrome token store`"
    )]
    TokenInArguments,
    #[error("only the session {ours:?} is driven through my-chrome; {:?} is refused", redact_runs(.named))]
    OtherSession { ours: String, named: String },
    #[error("the option {:?} before the command is refused; {hint}", redact_runs(.option))]
    OptionBeforeCommand { option: String, hint: &'static str },
    #[error("`{command}` is refused: {why}")]
    Blocked {
        command: &'static str,
        why: &'static str,
    },
    #[error(
        "`{0}` is `my-chrome disconnect` (it detaches and leaves the browser running); run that, with \
         no options before it"
    )]
    Disconnect(&'static str),
    #[error(
        "`{}` is not a command my-chrome forwards (only the pinned CLI's documented ones); \
         {}`my-chrome --help` lists them",
        redact_runs(.command),
        .near.map(|n| format!("did you mean `{n}`? ")).unwrap_or_default()
    )]
    Unknown {
        command: String,
        near: Option<&'static str>,
    },
    /// A command of the pin nobody has reviewed for my-chrome yet.
    #[error(
        "`{0}` is a command of the pinned CLI that my-chrome has not reviewed yet, so it is not \
         forwarded (docs/DESIGN.md lists the forwarded ones)"
    )]
    Undecided(String),
    #[error(
        "`{command}` to a {}: address is refused: my-chrome opens web pages only (http, https, \
         about:blank); the extension's own pages show its token, and browser pages are not an \
         agent's",
        redact_runs(.scheme)
    )]
    Scheme { command: String, scheme: String },
    #[error(
        "the option {:?} of `{command}` is refused: no command has it, and the pinned client \
         would take it for one it knows (every JavaScript object has a key of that name) and \
         send the line on unchecked",
        redact_runs(.option)
    )]
    ObjectKey { command: String, option: String },
    /// The line cannot be read as the pinned client reads it.
    #[error("{}", redact_runs(.0))]
    Unreadable(String),
    /// `--tab` or `--label`, given wrong.
    #[error(transparent)]
    TabArg(#[from] tabs::TabArgError),
    #[error(
        "`{command}` {what} names no file; give it an absolute path. {}",
        files::NEVER
    )]
    NoFile { command: String, what: String },
    #[error(
        "`{command}` {what} {:?}: {}. {}",
        redact_runs(.path),
        redact_runs(.why),
        files::NEVER
    )]
    File {
        command: String,
        what: String,
        path: String,
        why: String,
    },
}

impl Refusal {
    pub fn exit(&self) -> Exit {
        Exit::Usage
    }
}

/// Keys every JavaScript object already has: the pinned client's
/// minimist and `key in flags` treat an option of such a name unlike any
/// other (an unknown one passes its check, and the line goes to the
/// daemon), and no command has one: refused.
pub const OBJECT_KEYS: [&str; 12] = [
    "__proto__",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
    "constructor",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
    "toString",
    "valueOf",
];

/// Commands my-chrome refuses, and what to use instead.
pub const BLOCKED: [(&str, &str); 13] = [
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
    (
        "recording-start",
        "it would record everything the user does in every tab of the session, typing and \
         passwords included, until stopped; ask the user for the steps instead",
    ),
    (
        "recording-stop",
        "recording is refused (`recording-start`), so there is nothing to stop",
    ),
];

/// The pinned CLI's own words for what `my-chrome disconnect` does.
const DISCONNECT_ALIASES: [&str; 2] = ["close", "detach"];

/// The pinned CLI's commands my-chrome forwards, each reviewed for what it
/// can do to the user's profile, files and token (docs/DESIGN.md lists them
/// with the refused ones). Every command of the pin is in exactly one of
/// this list, [`BLOCKED`] and [`DISCONNECT_ALIASES`] (a unit test); one a
/// new pin brings is refused until it is decided here.
const FORWARDED: [&str; 85] = [
    "goto",
    "type",
    "click",
    "dblclick",
    "fill",
    "drag",
    "drop",
    "hover",
    "select",
    "upload",
    "check",
    "uncheck",
    "snapshot",
    "find",
    "eval",
    "dialog-accept",
    "dialog-dismiss",
    "resize",
    "go-back",
    "go-forward",
    "reload",
    "press",
    "keydown",
    "keyup",
    "mousemove",
    "mousedown",
    "mouseup",
    "mousewheel",
    "screenshot",
    "pdf",
    "tab-list",
    "tab-new",
    "tab-close",
    "tab-select",
    "state-save",
    "cookie-list",
    "cookie-get",
    "cookie-set",
    "cookie-delete",
    "cookie-clear",
    "localstorage-list",
    "localstorage-get",
    "localstorage-set",
    "localstorage-delete",
    "localstorage-clear",
    "sessionstorage-list",
    "sessionstorage-get",
    "sessionstorage-set",
    "sessionstorage-delete",
    "sessionstorage-clear",
    "set-color-scheme",
    "set-reduced-motion",
    "set-forced-colors",
    "set-contrast",
    "set-media",
    "clear-color-scheme",
    "clear-reduced-motion",
    "clear-forced-colors",
    "clear-contrast",
    "clear-media",
    "requests",
    "request",
    "request-headers",
    "request-body",
    "response-headers",
    "response-body",
    "route",
    "route-list",
    "unroute",
    "network-state-set",
    "console",
    "tracing-start",
    "tracing-stop",
    "video-stop",
    "video-chapter",
    "video-show-actions",
    "video-hide-actions",
    "pause-at",
    "resume",
    "step-over",
    "generate-locator",
    "highlight",
    "webmcp-list",
    "webmcp-call",
    "list",
];

/// The commands my-chrome passes on: the reviewed ones the pin has.
pub fn forwarded_commands() -> impl Iterator<Item = &'static str> {
    FORWARDED
        .into_iter()
        .filter(|name| pinned_commands::find(name).is_some())
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

/// Why `args` may not be forwarded, if they may not (read as
/// [`Line::read`] reads them).
pub fn refusal(args: &[String], session: &str) -> Option<Refusal> {
    Line::read(args, session).err()
}

/// Whether `command` is one my-chrome forwards: documented by the pin,
/// reviewed, not refused, not one of `disconnect`'s names.
fn allowed(command: &str) -> Result<(), Refusal> {
    if let Some((name, why)) = BLOCKED.iter().find(|(name, _)| *name == command) {
        return Err(Refusal::Blocked { command: name, why });
    }
    if let Some(alias) = DISCONNECT_ALIASES.iter().find(|a| **a == command) {
        return Err(Refusal::Disconnect(alias));
    }
    if pinned_commands::find(command).is_none() {
        return Err(Refusal::Unknown {
            command: command.to_string(),
            near: pinned_commands::nearest(command, forwarded_commands()),
        });
    }
    if !FORWARDED.contains(&command) {
        return Err(Refusal::Undecided(command.to_string()));
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_command_of_the_pin_is_decided_once() {
        let pinned: BTreeSet<&str> = pinned_commands::table().iter().map(|c| c.name).collect();
        let mut decided = BTreeSet::new();
        let all = FORWARDED
            .iter()
            .chain(BLOCKED.iter().map(|(name, _)| name))
            .chain(DISCONNECT_ALIASES.iter());
        for name in all {
            assert!(decided.insert(*name), "{name} is decided twice");
        }
        // A pin move fails here until each new command is decided, and
        // each decision names a command the pin has.
        let undecided: Vec<_> = pinned.difference(&decided).collect();
        let stale: Vec<_> = decided.difference(&pinned).collect();
        assert!(
            undecided.is_empty(),
            "undecided commands of the pin: {undecided:?}"
        );
        assert!(stale.is_empty(), "decided, but not in the pin: {stale:?}");
    }
}
