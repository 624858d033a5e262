//! Every other command is a Playwright CLI command: checked by the policy
//! (its line) and against the disk (its files), then run for the agent on
//! its own tab (src/tabs/) by our session's daemon, and its reply printed
//! through the redactor, narrowed to the agent's tabs (invariants 8, 9
//! and 14).

use std::ffi::OsString;
use std::io::Write;
use std::time::Duration;

use crate::child::{ChildCommand, Output};
use crate::command::start::{Start, Started};
use crate::config::Config;
use crate::daemon::request::{self, Plan};
use crate::daemon::{self, DaemonError, Reply};
use crate::error::Error;
use crate::exit::Exit;
use crate::file_args::FileRules;
use crate::helper::HelperError;
use crate::helper::check::Check;
use crate::lease::HeldLease;
use crate::policy;
use crate::policy::tabs::{
    Scope, TabArgError, TabArgs, TabRef, may_open_tabs, scope_of, split_tab_args,
};
use crate::redact::Redactor;
use crate::tabs::book::During;
use crate::tabs::listing::{self, Rewrite};
use crate::tabs::{Desk, TabsError};
use crate::token::fingerprint::{self, Fingerprint};

/// The pinned CLI's own help, when the helper is supported (never
/// otherwise: an unsupported copy's text is not ours to show). A runtime or
/// tree that fails its checks is refused as for any forwarded command.
pub fn cli_help(config: &Config) -> Result<Option<String>, Error> {
    // `--help` creates no runtime.
    if crate::runtime::Runtime::inspect(&config.runtime)?.is_none() {
        return Ok(None);
    }
    // A tree that is not what its check recorded (or an unsafe place) is
    // refused as for any forwarded command; anything else that keeps the
    // CLI from answering (no copy yet, no trusted node) leaves its part out.
    let started = match Start::new(config, Check::Supported).open() {
        Ok(started) => started,
        Err(e @ Error::Helper(HelperError::Changed { .. } | HelperError::Unsafe(_))) => {
            return Err(e);
        }
        Err(e @ Error::Runtime(_)) => return Err(e),
        Err(_) => return Ok(None),
    };
    let Ok(node) = started.node() else {
        return Ok(None);
    };
    let help = ChildCommand::new(
        "playwright-cli --help",
        &node.path,
        started.runtime.root(),
        Duration::from_secs(30),
    )
    .arg(started.helper.entry())
    .arg("--help")
    .run(&started.env);
    Ok(help
        .ok()
        .filter(|help| help.status.success())
        .map(|help| help.stdout_text()))
}

pub fn forward(config: &Config, raw: &[OsString]) -> Result<(), Error> {
    let args: Vec<String> = raw
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(refusal) = policy::refusal(&args, &config.session) {
        return Err(refusal.into());
    }
    let TabArgs { tab, label, rest } = split_tab_args(&policy::without_session(&args))?;
    if let Some(refusal) = FileRules::from_config(config).refusal(&rest) {
        return Err(refusal.into());
    }
    let start = Start::new(config, Check::Supported);
    // `list` reports every session and needs none of ours; a line without a
    // command only prints the CLI's usage: the pinned client answers both.
    let name = match policy::command_of(&rest) {
        Some(name) if name != "list" => name,
        _ => return run_pinned(config, &start.open()?, &rest, false),
    };
    // What runs nothing in the browser is decided before the session's
    // turn is taken: a refusal, or no session, costs the agents waiting
    // for the turn nothing.
    let started = start.on_session().open()?;
    let cwd = started.daemon_cwd()?;
    let line = match request::plan(&rest, &cwd) {
        Plan::Run(line) => line,
        Plan::Refused(output) => {
            let known = fingerprint::recorded(&started.runtime)?;
            print_redacted(&mut std::io::stdout(), &[&output.stdout], known.as_ref());
            print_redacted(&mut std::io::stderr(), &[&output.stderr], known.as_ref());
            return Err(Error::Silent(Exit::Code(1)));
        }
        Plan::ObjectKey(option) => {
            return Err(policy::Refusal::ObjectKey {
                command: name.into(),
                option,
            }
            .into());
        }
        // Help and version: the client prints them, the daemon is not asked.
        Plan::ClientOnly => return run_pinned(config, &started, &rest, true),
    };
    started.session_before_turn()?;
    // One browser command at a time: it waits for the one in flight, and
    // the session is read again once it has its turn.
    let mut started = started.take_turn(name)?;
    // Until it sends the browser something, the log calls it refused.
    started
        .lease_mut()
        .expect("a browser command holds the turn")
        .set_ran(false);
    let session = started.require_registered()?;
    let mut desk = started
        .desk(&session.socket_path, false)
        .map_err(|e| match e {
            Error::Tabs(e) => unreachable_as_stale(e),
            other => other,
        })?;
    let held = started
        .lease_mut()
        .expect("a browser command holds the turn");
    desk.touch(name);
    let asked = Asked {
        name,
        rest: &rest,
        tab: tab.as_ref(),
        label: label.as_deref(),
        mode: Mode::of(&rest),
    };
    let done = run_for_agent(config, &mut desk, held, &session.socket_path, &line, &asked);
    // The book is kept whatever happened: what a command saw counts.
    desk.save()?;
    done
}

/// What the agent asked for.
struct Asked<'a> {
    name: &'a str,
    rest: &'a [String],
    tab: Option<&'a TabRef>,
    label: Option<&'a str>,
    mode: Mode,
}

/// How the reply is printed: as the daemon's sections, `--raw` lines, or
/// `--json`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Text,
    Raw,
    Json,
}

impl Mode {
    fn of(rest: &[String]) -> Mode {
        let options: Vec<&str> = rest
            .iter()
            .take_while(|a| *a != "--")
            .map(String::as_str)
            .collect();
        if options.contains(&"--json") {
            Mode::Json
        } else if options.contains(&"--raw") {
            Mode::Raw
        } else {
            Mode::Text
        }
    }
}

/// The session's daemon did not answer the tab list: stale, as for any
/// command.
fn unreachable_as_stale(e: TabsError) -> Error {
    match e {
        TabsError::Daemon(DaemonError::Unreachable(why)) => crate::command::start::stale(why),
        other => other.into(),
    }
}

fn run_for_agent(
    config: &Config,
    desk: &mut Desk,
    held: &mut HeldLease,
    socket: &std::path::Path,
    line: &[u8],
    asked: &Asked,
) -> Result<(), Error> {
    desk.check_notices()?;
    desk.check_holds()?;
    let scope = scope_of(asked.name);
    if scope == Scope::Tabs {
        return tab_command(desk, held, asked);
    }
    if matches!(scope, Scope::Context | Scope::Session) {
        let others = desk.book.others_with_tabs(&desk.agent);
        if !others.is_empty() {
            return Err(TabsError::OthersHaveTabs {
                command: asked.name.into(),
                agents: others,
            }
            .into());
        }
    }
    // Every command runs on a tab of the agent's (a browser-wide one too:
    // its reply may describe the current page).
    let id = match asked.tab {
        Some(named) => desk.resolve(named)?,
        // The agent's own tab, or a new one opened for it.
        None => {
            held.set_ran(true);
            desk.target(None)?
        }
    };
    // (Named: it runs from here.)
    held.set_ran(true);
    desk.select(id)?;
    held.on_tab(id);
    let during = During {
        agent: &desk.agent.clone(),
        acted_on: Some(id),
        closed: None,
        opens: may_open_tabs(asked.name),
        moves_current: false,
    };
    let reply = match daemon::run(socket, line, config.command_timeout, config.reply_limit) {
        Ok(reply) => reply,
        Err(DaemonError::Unreachable(why)) => return Err(crate::command::start::stale(why)),
        Err(e) => {
            // Abandoned past its bound: what it did is read in now, as
            // the command's own, when the daemon still answers.
            if matches!(e, DaemonError::TimedOut(_)) {
                let _ = desk.finish(&during);
            }
            return Err(e.into());
        }
    };
    let after = desk.finish(&during);
    if after.is_ok()
        && matches!(
            &reply,
            Reply::Text {
                is_error: false,
                ..
            }
        )
    {
        let agent = desk.agent.clone();
        let argument = positional(asked.rest, asked.name);
        desk.book.note_hold(&agent, asked.name, argument.as_deref());
    }
    match after {
        Ok(()) => print_reply(desk, reply, asked, false),
        // The session went away under the command (its browser quit or
        // died, or its daemon did): it did not finish as asked, whatever
        // the reply says: exit 4, as for any session that is gone. No list
        // after it tells whose tab the reply describes (the agent's tab may
        // have closed first, as when the user quits the browser): only the
        // error it reports is shown, never a page.
        Err(TabsError::Daemon(DaemonError::Unreachable(_))) => {
            print_error_only(desk, &reply, asked.mode)?;
            Err(ended_during(asked.name))
        }
        // Without the list after it, nothing tells whose tab the reply
        // describes: none of it is shown.
        Err(e) => Err(unreachable_as_stale(e)),
    }
}

/// The session went away while the command ran. Exit 4.
fn ended_during(command: &str) -> Error {
    crate::session::SessionError::Stale(format!(
        "the session ended during the command: `{command}`'s browser or the session's daemon \
         went away, so it did not finish as asked (the error it reported, if any, is above; \
         nothing of a page is shown)"
    ))
    .into()
}

/// What a reply reports as its error, and nothing else of it: the
/// `### Error` section of a text reply, or the daemon's own error. A reply
/// in `--json` or `--raw` form, or with no error, shows nothing.
fn print_error_only(desk: &Desk, reply: &Reply, mode: Mode) -> Result<(), Error> {
    let known = fingerprint::recorded(desk.runtime())?;
    match reply {
        Reply::Text {
            text: Some(text), ..
        } if mode == Mode::Text => {
            if let Some(error) = listing::section(text, "Error") {
                print_redacted(
                    &mut std::io::stdout(),
                    &["### Error\n", error],
                    known.as_ref(),
                );
            }
        }
        Reply::Error(message) => {
            print_redacted(
                &mut std::io::stderr(),
                &["Error: ", message, "\n"],
                known.as_ref(),
            );
        }
        _ => {}
    }
    Ok(())
}

/// `tab-list`, `tab-new`, `tab-select`, `tab-close`, on the agent's own
/// tabs: indexes, ids and labels are the agent's.
fn tab_command(desk: &mut Desk, held: &mut HeldLease, asked: &Asked) -> Result<(), Error> {
    // tab-select and tab-close name a tab of the agent's; tab-new an address.
    let named = match asked.name {
        "tab-select" | "tab-close" => positional(asked.rest, asked.name)
            .map(|raw| TabRef::parse(&raw))
            .transpose()?,
        _ => None,
    };
    let named = named.as_ref().or(asked.tab);
    match asked.name {
        "tab-new" => {
            held.set_ran(true);
            let url = positional(asked.rest, asked.name);
            let leading: Vec<String> = match asked.mode {
                Mode::Json => vec!["--json".into()],
                Mode::Raw => vec!["--raw".into()],
                Mode::Text => Vec::new(),
            };
            let (id, reply) = desk.open_tab_replying(url.as_deref(), asked.label, &leading)?;
            held.on_tab(id);
            return print_reply(desk, reply, asked, true);
        }
        "tab-select" => {
            let reference = named.ok_or(TabArgError::Missing("tab-select <tab>"))?;
            let id = desk.resolve(reference)?;
            held.set_ran(true);
            desk.select(id)?;
            desk.set_current(id);
            held.on_tab(id);
        }
        "tab-close" => {
            let id = match named {
                Some(reference) => desk.resolve(reference)?,
                None => desk.target(None)?,
            };
            held.set_ran(true);
            desk.close(id)?;
            held.on_tab(id);
        }
        _ => held.set_ran(true),
    }
    let own = desk.shown();
    let text = match asked.mode {
        Mode::Json => listing::render_json(&own) + "\n",
        Mode::Raw => listing::render(&own),
        Mode::Text => format!("### Result\n{}", listing::render(&own)),
    };
    // Titles are the pages' words: through the redactor, as any reply.
    let known = fingerprint::recorded(desk.runtime())?;
    print_redacted(&mut std::io::stdout(), &[&text], known.as_ref());
    Ok(())
}

/// The first word after the command that is not an option.
fn positional(rest: &[String], command: &str) -> Option<String> {
    rest.iter()
        .skip_while(|a| *a != command)
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .cloned()
}

/// The daemon's reply, shown as the pinned client shows it, with the
/// session's tabs narrowed to the agent's.
fn print_reply(desk: &Desk, reply: Reply, asked: &Asked, tab_command: bool) -> Result<(), Error> {
    let known = fingerprint::recorded(desk.runtime())?;
    let print = |out: &mut dyn Write, text: &[&str]| print_redacted(out, text, known.as_ref());
    let own = desk.shown();
    // The agent's tab closed during its command: the daemon's current tab,
    // which the reply describes (and which the command may even have run
    // on, if the tab closed just before it), is someone else's.
    if !desk.current_is_own() {
        forget_snapshots(desk, &reply);
        return Err(TabsError::Withheld {
            own: listing::render(&own),
        }
        .into());
    }
    match reply {
        Reply::Text { text, is_error } => {
            let text = text.as_deref().unwrap_or("undefined");
            let shown = match asked.mode {
                Mode::Text => listing::rewrite_text(
                    text,
                    &Rewrite {
                        own: &own,
                        tab_command,
                    },
                ),
                Mode::Json if tab_command => listing::render_json(&own),
                Mode::Raw if tab_command => listing::render(&own).trim_end().to_string(),
                Mode::Json | Mode::Raw => text.to_string(),
            };
            print(&mut std::io::stdout(), &[&shown, "\n"]);
            // The client prints a failed command's text and exits 1.
            if is_error {
                return Err(Error::Silent(Exit::Code(1)));
            }
            Ok(())
        }
        // The pinned client dies with a stack trace; its first line.
        Reply::Error(message) => {
            print(&mut std::io::stderr(), &["Error: ", &message, "\n"]);
            Err(Error::Silent(Exit::Code(1)))
        }
    }
}

/// The snapshot files a withheld reply pointed at describe another's tab:
/// removed, when they are plain files inside the runtime (where the daemon
/// writes them).
fn forget_snapshots(desk: &Desk, reply: &Reply) {
    let Reply::Text {
        text: Some(text), ..
    } = reply
    else {
        return;
    };
    let Ok(root) = std::fs::canonicalize(desk.runtime().root()) else {
        return;
    };
    for file in listing::snapshot_files(text) {
        let path = root.join(&file);
        let inside = std::fs::canonicalize(&path).is_ok_and(|real| real.starts_with(&root));
        let plain = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        if inside && plain {
            let _ = std::fs::remove_file(&path);
        }
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
