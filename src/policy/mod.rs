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
use crate::pinned_commands::{self, CliCommand, Decision};
use crate::token_shape::redact_runs;
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

/// The pinned CLI's commands my-chrome forwards, each reviewed for what it
/// can do to the user's profile, files and token (`skill/cli/reviewed.txt`;
/// docs/DESIGN.md lists them with the refused ones), in the pin's order.
/// One a new pin brings is refused until it is reviewed.
pub fn forwarded_commands() -> impl Iterator<Item = &'static str> {
    pinned_commands::table()
        .iter()
        .filter(|c| c.forwarded())
        .map(|c| c.name)
}

/// The schemes a navigation may use (and `about:blank`). The extension's own
/// pages show its token (`status.html`) and carry it (`connect.html`), and the
/// debugger lets the session navigate there; browser pages are not an
/// agent's either. (The pinned CLI itself refuses `file:`, and Chrome aborts
/// `data:` navigations through the extension.)
const WEB_SCHEMES: [&str; 2] = ["http", "https"];

/// The names of the refused commands, in the review's order.
pub fn blocked_commands() -> impl Iterator<Item = &'static str> {
    pinned_commands::refused().map(|c| c.name)
}

/// Why `args` may not be forwarded, if they may not (read as
/// [`Line::read`] reads them).
pub fn refusal(args: &[String], session: &str) -> Option<Refusal> {
    Line::read(args, session).err()
}

/// The table's entry of `command` when my-chrome forwards it: documented
/// by the pin, reviewed, not refused, not one of `disconnect`'s names.
fn allowed(command: &str) -> Result<&'static CliCommand, Refusal> {
    let Some(entry) = pinned_commands::find(command) else {
        return Err(Refusal::Unknown {
            command: command.to_string(),
            near: pinned_commands::nearest(command, forwarded_commands()),
        });
    };
    match entry.decision {
        Decision::Forward => Ok(entry),
        Decision::Refuse(why) => Err(Refusal::Blocked {
            command: entry.name,
            why,
        }),
        Decision::Disconnect => Err(Refusal::Disconnect(entry.name)),
        Decision::Undecided => Err(Refusal::Undecided(command.to_string())),
    }
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
