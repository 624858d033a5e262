//! Every other command is a Playwright CLI command: checked by the policy
//! (its line) and against the disk (its files), then run for the agent on
//! its own tab (src/tabs/) by our session's daemon, and its reply printed
//! through the redactor, narrowed to the agent's tabs (invariants 8, 9
//! and 14).

use std::ffi::OsString;
use std::time::Duration;

use crate::child::{ChildCommand, Output};
use crate::command::start::{Need, Reopen, Start, Started};
use crate::config::Config;
use crate::daemon::request::{self, Mode, Plan, Request};
use crate::daemon::{self, DaemonError, Reply, Unanswered};
use crate::error::{Error, lifts_core};
use crate::exit::Exit;
use crate::file_args::FileRules;
use crate::helper::HelperError;
use crate::helper::check::Check;
use crate::lease::HeldLease;
use crate::minimist;
use crate::output::{self, Stream};
use crate::outputs::Outputs;
use crate::policy;
use crate::policy::holds::{self, HoldChange};
use crate::policy::line::Line;
use crate::policy::tabs::{Scope, TabArgError, TabRef, may_open_tabs, scope_of};
use crate::session_output;
use crate::tabs::book::During;
use crate::tabs::listing::{self, Rewrite};
use crate::tabs::proof;
use crate::tabs::{Closing, Desk, TabsError};
use crate::token::fingerprint;

/// Why a forwarded command did not run, or ran and failed.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    /// What it met below it.
    #[error(transparent)]
    Core(Error),
    /// A command line the policy refuses.
    #[error(transparent)]
    Line(#[from] policy::Refusal),
    /// The command ran, or the pinned client refused it, and its output
    /// already said why: the exit status is the client's, nothing more is
    /// printed.
    #[error("exit status {}", .0.code())]
    Said(Exit),
}

impl ForwardError {
    pub fn exit(&self) -> Exit {
        match self {
            ForwardError::Core(e) => e.exit(),
            ForwardError::Line(e) => e.exit(),
            ForwardError::Said(exit) => *exit,
        }
    }
}

lifts_core!(ForwardError);

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

pub fn forward(config: &Config, raw: &[OsString]) -> Result<(), ForwardError> {
    let words: Vec<String> = raw
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // The one reading every decision below is taken from.
    let line = Line::read(&words, &config.session)?;
    let settings = crate::settings::of(&config.runtime)?;
    if let Some(refusal) = FileRules::new(config, &settings).refusal(line.parsed()) {
        return Err(refusal.into());
    }
    let start = Start::new(config, Check::Supported);
    // `list` reports every session and needs none of ours; a line without a
    // command only prints the CLI's usage: the pinned client answers both.
    let name = match line.command() {
        Some(name) if name != "list" => name,
        _ => return run_pinned(config, &start.open()?, &line, false),
    };
    // What runs nothing in the browser is decided before the session's
    // turn is taken: a refusal, or no session, costs the agents waiting
    // for the turn nothing.
    let started = start.on_session().open()?;
    let cwd = started.daemon_cwd()?;
    // `tab-new` always opens a blank tab (a tab opened without an address
    // can leave `eval` waiting forever through the extension); the address
    // it names is then loaded there by a `goto` of its own, which may step
    // aside as any page command: a slow page keeps nobody else out.
    let load = match (name, line.argument(1)) {
        ("tab-new", Some(url)) if !url.is_empty() && url != BLANK => {
            let mut goto = line.parsed().clone();
            goto.positional[0] = minimist::Value::Text("goto".into());
            match request::plan(goto, &cwd) {
                Plan::Run(load) => Some(load),
                _ => {
                    return Err(policy::Refusal::Unreadable(format!(
                        "`tab-new {url}` could not be read as a load of that address; nothing was run"
                    ))
                    .into());
                }
            }
        }
        _ => None,
    };
    let sent = match name {
        "tab-new" => line.parsed_with_argument(1, BLANK),
        _ => line.parsed().clone(),
    };
    let request = match request::plan(sent.clone(), &cwd) {
        Plan::Run(request) => request,
        Plan::Refused(said) => {
            fingerprint::recorded(&started.runtime)?;
            // With `--json`, the client's refusal is a JSON document.
            output::json_text(Stream::Out, &said.stdout, "");
            output::text(Stream::Err, &[&said.stderr]);
            return Err(ForwardError::Said(Exit::Code(1)));
        }
        Plan::ObjectKey(option) => {
            return Err(policy::Refusal::ObjectKey {
                command: name.into(),
                option,
            }
            .into());
        }
        // Help and version: the client prints them, the daemon is not asked.
        Plan::ClientOnly => return run_pinned(config, &started, &line, true),
    };
    // One browser command at a time: it waits for the one in flight, and
    // the session is read again once it has its turn. Until it sends the
    // browser something, the log calls it refused.
    let (mut turn, session) = started.take_turn(name, Need::Registered)?;
    let mut desk = turn
        .desk(&session.socket_path, false)
        .map_err(|e| match e {
            Error::Tabs(e) => unreachable_as_stale(e),
            other => other,
        })?;
    // Its output files are written where nobody sees them first (under
    // the turn: earlier commands' leftovers go), and no file it names is
    // another agent's.
    let me = turn
        .registration()
        .ok_or_else(|| crate::identity::IdentityError::Nameless {
            why: "its name is not registered in the session".into(),
        })?;
    let (outputs, staged) = Outputs::stage(&turn.runtime, &cwd, &sent, me)?;
    // (Staging changes file names only: what the client would do with
    // the line stays what it was.)
    let Plan::Run(staged) = request::plan(staged, &cwd) else {
        return Err(policy::Refusal::Unreadable(
            "its output files could not be put where nobody sees them first; nothing was run"
                .into(),
        )
        .into());
    };
    let request = Request {
        // The mode is the line's, whatever the file's name.
        json: request.json,
        raw: request.raw,
        bytes: staged.bytes,
    };
    desk.touch(name);
    let asked = Asked {
        name,
        line: &line,
        request: &request,
        load: load.as_ref(),
        bound: settings.command_bound_for(config.command_timeout),
    };
    let reopen = turn.reopener(&session.socket_path)?;
    let done = run_for_agent(
        config,
        &mut desk,
        turn.lease(),
        &session.socket_path,
        &asked,
        (outputs, &reopen),
    );
    // The agent was here until its command ended (a command longer than
    // the gone time does not leave it gone); the book is kept whatever
    // happened: what a command saw counts. (A command that stood aside and
    // has not the turn back keeps nothing: the book was the others'.)
    desk.touch(name);
    if turn.lease().holds() {
        desk.save()?;
    }
    if let Some(registration) = turn.registration() {
        crate::identity::touch(config, &turn.runtime, &desk.agent, registration)?;
    }
    match done? {
        Outcome::Done => Ok(()),
        // The daemon runs it on: the next command waits for its end.
        Outcome::Abandoned { connection, error } => {
            turn.hand_over(connection)?;
            Err(error.into())
        }
    }
}

/// How a command that ran ended.
enum Outcome {
    /// Its reply was shown (or withheld, or an error said why).
    Done,
    /// It was sent, and not answered within its bound (or was interrupted):
    /// the daemon runs it on.
    Abandoned {
        connection: std::os::unix::net::UnixStream,
        error: DaemonError,
    },
}

/// What the agent asked for: its line, read once, and the request built
/// from it.
struct Asked<'a> {
    name: &'a str,
    line: &'a Line,
    request: &'a Request,
    /// `tab-new <url>`'s load of its address, once its blank tab is open.
    load: Option<&'a Request>,
    /// How long it may run: the user's bound, or the caller's if shorter.
    bound: std::time::Duration,
}

impl Asked<'_> {
    /// How the daemon forms its reply, read from the request itself.
    fn mode(&self) -> Mode {
        self.request.mode()
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
    asked: &Asked,
    (outputs, reopen): (Outputs, &Reopen),
) -> Result<Outcome, ForwardError> {
    desk.check_notices()?;
    // What no agent is left to end keeps nobody out for good.
    desk.end_orphaned_holds()?;
    desk.check_holds()?;
    // `tab-new <url>`: its blank tab, then the load of its address there.
    if let Some(load) = asked.load {
        held.mark_ran();
        let (id, _) = desk.open_tab_with(asked.request, asked.line.label.as_deref())?;
        held.on_tab(id);
        let sent = Sent {
            name: "goto",
            request: load,
            tab_command: true,
        };
        return run_on(
            config,
            desk,
            held,
            (socket, asked, &sent),
            id,
            (outputs, reopen),
        );
    }
    let scope = scope_of(asked.name);
    if scope == Scope::Tabs {
        return tab_command(desk, held, asked).map(|()| Outcome::Done);
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
    let named = asked
        .line
        .tab
        .as_ref()
        .map(|named| desk.resolve(named))
        .transpose()?;
    // From here it sends the browser something.
    held.mark_ran();
    let id = match named {
        Some(id) => id,
        // The agent's own tab, or a new one opened for it.
        None => desk.target(None)?,
    };
    desk.select(id)?;
    held.on_tab(id);
    let sent = Sent {
        name: asked.name,
        request: asked.request,
        tab_command: false,
    };
    run_on(
        config,
        desk,
        held,
        (socket, asked, &sent),
        id,
        (outputs, reopen),
    )
}

/// What is sent to the daemon for the agent's line: the line's own
/// request, or `tab-new`'s load of its address.
struct Sent<'a> {
    name: &'a str,
    request: &'a Request,
    /// Its reply is a tab command's: the agent's tabs are its result.
    tab_command: bool,
}

/// Runs `sent` on the agent's tab `id`, already the daemon's current one,
/// and shows its reply while that tab is the agent's.
fn run_on(
    config: &Config,
    desk: &mut Desk,
    held: &mut HeldLease,
    (socket, asked, sent): (&std::path::Path, &Asked, &Sent),
    id: u64,
    (outputs, reopen): (Outputs, &Reopen),
) -> Result<Outcome, ForwardError> {
    let hold = holds::change(asked.line);
    // State a command may leave on for every tab holds from before it is
    // sent: a command that times out, fails or is killed may have started
    // it all the same.
    if let Some(HoldChange::Starts(kind)) = hold {
        let agent = desk.agent.clone();
        desk.book.start_hold(&agent, kind, crate::lease::now_ms());
        desk.save()?;
    }
    let during = During {
        agent: &desk.agent.clone(),
        acted_on: Some(id),
        closed: None,
        // A tab that appears while another agent's command past its bound
        // may still run could be of that command's page: the user's. So is
        // one that appears while `tab-new` loads its address, as when it
        // was one tab command: a popup the browser reports late (once its
        // first load commits) may be of a page already closed, another
        // agent's (an attack on the split).
        opens: !sent.tab_command && may_open_tabs(sent.name) && !desk.others_late(),
        moves_current: false,
    };
    let mut before = session_output::Before::read(desk.runtime().root(), desk.any_late());
    // A command on its own tab alone may step aside for another agent's
    // in line once the daemon has started it (docs/DESIGN.md, "A command
    // steps aside").
    let aside = Aside {
        may: scope_of(sent.name) == Scope::Page && hold.is_none(),
        sent: std::time::Instant::now(),
        since: crate::lease::now_ms(),
    };
    let mut stood_aside = false;
    let answer = {
        let desk: &mut Desk = desk;
        let mut waiting = |connection: &std::os::unix::net::UnixStream| {
            if !stood_aside && aside.due(connection, held) {
                // What the others read meanwhile is the book as it is now.
                stood_aside = desk.save().is_ok() && {
                    before.step_aside();
                    held.step_aside(aside.since).is_ok()
                };
            }
        };
        daemon::run_command(
            socket,
            &sent.request.bytes,
            asked.bound,
            config.reply_limit,
            &mut waiting,
        )
    };
    // The desk read before it stood aside is never saved again, whatever
    // happens from here: the others' commands wrote the book meanwhile.
    if stood_aside {
        desk.went_stale();
    }
    let reply = match answer {
        Ok(reply) => reply,
        Err(Unanswered::Failed(DaemonError::Unreachable(why))) => {
            return Err(crate::command::start::stale(why).into());
        }
        Err(Unanswered::Failed(e)) => return Err(e.into()),
        // Past its bound (or interrupted): what it did so far is read in
        // now, as the command's own, when the daemon still answers (not
        // without the turn: the others' commands run); its output files
        // stay private (they go with its folder).
        Err(Unanswered::Abandoned { error, connection }) => {
            if !stood_aside {
                let _ = desk.finish(&during);
            }
            outputs.discard();
            return Ok(Outcome::Abandoned { connection, error });
        }
    };
    // Answered while it stood aside: the turn again, in line, and the
    // tabs as the others' commands left them.
    if stood_aside {
        if let Err(e) = held.retake(config.lease_wait) {
            outputs.discard();
            return Err(Error::from(e).into());
        }
        *desk = reopen.open(held)?;
    }
    // What its reply proves about the tabs saves listing them again
    // (src/tabs/proof.rs); when it proves nothing, they are listed.
    let text_mode = sent.request.mode() == Mode::Text;
    let after = desk
        .after(proof::of_reply(&reply, text_mode), &during)
        .map(|_| ());
    let ran = matches!(
        &reply,
        Reply::Text {
            is_error: false,
            ..
        }
    );
    if let (Ok(()), true, Some(HoldChange::Ends(kind))) = (&after, ran, hold) {
        let agent = desk.agent.clone();
        desk.book.end_hold(&agent, kind);
    }
    // Its reply is of the tab it ran on (`tabs::stay`): shown while that
    // tab is the agent's. (Without stepping aside, that tab is the
    // current one.)
    let shown = if stood_aside {
        desk.is_own(id)
    } else {
        desk.current_is_own()
    };
    match after {
        Ok(()) => print_reply(
            desk,
            reply,
            asked,
            (sent.tab_command, shown),
            (outputs, &before),
        )
        .map(|()| Outcome::Done),
        // The session went away under the command (its browser quit or
        // died, or its daemon did): it did not finish as asked, whatever
        // the reply says: exit 4, as for any session that is gone. No list
        // after it tells whose tab the reply describes (the agent's tab may
        // have closed first, as when the user quits the browser): only the
        // error it reports is shown, never a page.
        Err(TabsError::Daemon(DaemonError::Unreachable(_))) => {
            print_error_only(desk, &reply, asked.mode())?;
            Err(ended_during(asked.name).into())
        }
        // Without the list after it, nothing tells whose tab the reply
        // describes: none of it is shown.
        Err(e) => Err(unreachable_as_stale(e).into()),
    }
}

/// When a command steps aside for another agent's in line.
struct Aside {
    /// It may: it runs on its own tab alone, and starts or ends nothing
    /// that reaches every tab.
    may: bool,
    sent: std::time::Instant,
    /// When it was sent, for `late.json`.
    since: u64,
}

/// The address of a blank tab.
const BLANK: &str = "about:blank";

/// How long a command runs before it may step aside: most end sooner, and
/// stepping aside costs them a wait for the turn and a list of the tabs.
const ASIDE_AFTER: Duration = Duration::from_millis(250);

impl Aside {
    /// Whether to step aside now: it may, ran a moment, the daemon has
    /// read all of it (so it started, on its tab), and another agent's
    /// command waits in line.
    fn due(&self, connection: &std::os::unix::net::UnixStream, held: &HeldLease) -> bool {
        self.may
            && self.sent.elapsed() >= ASIDE_AFTER
            && daemon::started(connection) == Some(true)
            && held.others_waiting()
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
fn print_error_only(desk: &Desk, reply: &Reply, mode: Mode) -> Result<(), ForwardError> {
    fingerprint::recorded(desk.runtime())?;
    match reply {
        Reply::Text {
            text: Some(text), ..
        } if mode == Mode::Text => {
            if let Some(error) = listing::section(text, "Error") {
                output::text(Stream::Out, &["### Error\n", error]);
            }
        }
        Reply::Error(message) => output::text(Stream::Err, &["Error: ", message, "\n"]),
        _ => {}
    }
    Ok(())
}

/// What a tab command does, its tab resolved.
enum TabAct {
    New,
    Select(u64),
    /// The tab named, if one was.
    Close(Option<u64>),
    List,
}

/// `tab-list`, `tab-new`, `tab-select`, `tab-close`, on the agent's own
/// tabs: indexes, ids and labels are the agent's.
fn tab_command(desk: &mut Desk, held: &mut HeldLease, asked: &Asked) -> Result<(), ForwardError> {
    // tab-select and tab-close name a tab of the agent's; tab-new an address.
    let named = match asked.name {
        "tab-select" | "tab-close" => asked.line.argument(1).map(TabRef::parse).transpose()?,
        _ => None,
    };
    let named = named.as_ref().or(asked.line.tab.as_ref());
    // The tab it names is the agent's, or nothing is sent.
    let act = match asked.name {
        "tab-new" => TabAct::New,
        "tab-select" => {
            let reference = named.ok_or(TabArgError::Missing("tab-select <tab>"))?;
            TabAct::Select(desk.resolve(reference)?)
        }
        "tab-close" => TabAct::Close(named.map(|r| desk.resolve(r)).transpose()?),
        _ => TabAct::List,
    };
    held.mark_ran();
    match act {
        TabAct::New => {
            let before = session_output::Before::read(desk.runtime().root(), desk.any_late());
            let (id, reply) = desk.open_tab_with(asked.request, asked.line.label.as_deref())?;
            held.on_tab(id);
            let shown = desk.current_is_own();
            return print_reply(
                desk,
                reply,
                asked,
                (true, shown),
                (Outputs::none(), &before),
            );
        }
        TabAct::Select(id) => {
            desk.select(id)?;
            desk.set_current(id);
            held.on_tab(id);
        }
        TabAct::Close(named) => {
            // Unnamed: the agent's current tab (a blank one opened for it
            // when it has none).
            let id = match named {
                Some(id) => id,
                None => desk.target(None)?,
            };
            held.on_tab(id);
            let ours: Vec<u64> = desk.book.own(&desk.agent).iter().map(|t| t.id).collect();
            if desk.close(id, &ours)? == Closing::LeftOpen {
                let agent = desk.agent.clone();
                desk.book.left_open(&agent, id);
                desk.save()?;
                return Err(TabsError::LeftOpen(id).into());
            }
        }
        TabAct::List => {}
    }
    // Titles are the pages' words: through the redactor, as any reply.
    fingerprint::recorded(desk.runtime())?;
    let own = desk.shown();
    match asked.mode() {
        Mode::Json => output::json_text(Stream::Out, &listing::render_json(&own), "\n"),
        Mode::Raw => output::text(Stream::Out, &[&listing::render(&own)]),
        Mode::Text => output::text(Stream::Out, &["### Result\n", &listing::render(&own)]),
    }
    Ok(())
}

/// The daemon's reply, shown as the pinned client shows it, with the
/// session's tabs narrowed to the agent's; `files` are the command's
/// output files and what the session's output folder held before it;
/// `shown`: whether the tab the reply describes is the agent's.
fn print_reply(
    desk: &Desk,
    reply: Reply,
    asked: &Asked,
    (tab_command, shown): (bool, bool),
    files: (Outputs, &session_output::Before),
) -> Result<(), ForwardError> {
    let (outputs, before) = files;
    let known = fingerprint::recorded(desk.runtime())?;
    let own = desk.shown();
    // The agent's tab closed during its command: the daemon's current tab,
    // which the reply describes (and which the command may even have run
    // on, if the tab closed just before it), is someone else's: none of
    // it is shown, no file of it delivered.
    if !shown {
        outputs.discard();
        before.forget_created(reply_text(&reply));
        return Err(TabsError::Withheld {
            own: listing::render(&own),
        }
        .into());
    }
    // Its files go where the agent named them, then it is shown.
    let json = asked.mode() == Mode::Json;
    let reply = match reply {
        Reply::Text { text, is_error } => Reply::Text {
            text: text.map(|t| outputs.unstage(&t, json)),
            is_error,
        },
        error => error,
    };
    outputs.deliver(known.as_ref())?;
    before.redact_written(reply_text(&reply), known.as_ref());
    match reply {
        Reply::Text { text, is_error } => {
            let text = text.as_deref().unwrap_or("undefined");
            match asked.mode() {
                Mode::Text => {
                    let how = Rewrite {
                        own: &own,
                        tab_command,
                    };
                    output::text(Stream::Out, &[&listing::rewrite_text(text, &how), "\n"]);
                }
                Mode::Json if tab_command => {
                    output::json_text(Stream::Out, &listing::render_json(&own), "\n");
                }
                Mode::Raw if tab_command => {
                    output::text(Stream::Out, &[listing::render(&own).trim_end(), "\n"]);
                }
                Mode::Json => output::json_text(Stream::Out, text, "\n"),
                Mode::Raw => output::text(Stream::Out, &[text, "\n"]),
            }
            // The client prints a failed command's text and exits 1.
            if is_error {
                return Err(ForwardError::Said(Exit::Code(1)));
            }
            Ok(())
        }
        // The pinned client dies with a stack trace; its first line.
        Reply::Error(message) => {
            output::text(Stream::Err, &["Error: ", &message, "\n"]);
            Err(ForwardError::Said(Exit::Code(1)))
        }
    }
}

/// A reply's text, when it has one.
fn reply_text(reply: &Reply) -> Option<&str> {
    match reply {
        Reply::Text { text, .. } => text.as_deref(),
        Reply::Error(_) => None,
    }
}

/// The pinned CLI itself, for what its client answers alone (usage, help,
/// `list`), its output through the redactor.
fn run_pinned(
    config: &Config,
    started: &Started,
    line: &Line,
    ours: bool,
) -> Result<(), ForwardError> {
    let known = fingerprint::recorded(&started.runtime)?;
    let mut child = ChildCommand::new(
        "playwright-cli",
        &started.node()?.path,
        started.runtime.root(),
        started.settings.command_bound_for(config.command_timeout),
    )
    .arg(started.helper.entry());
    if ours {
        child = child.arg(format!("-s={}", config.session));
    }
    // A JSON answer is printed as JSON once it is whole (`list --json`).
    let json = line.asks_json();
    let finished = child
        .args(line.words())
        .known_token(known)
        .stdout(if json {
            Output::Capture
        } else {
            Output::Redacted
        })
        .stderr(Output::Redacted)
        .run(&started.env)?;
    if json {
        output::json_text(Stream::Out, &finished.stdout_text(), "");
    }
    match finished.status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(ForwardError::Said(Exit::Code(code))),
        None => Err(ForwardError::Said(Exit::Code(1))),
    }
}
