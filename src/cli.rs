//! The command line: wrapper commands that my-chrome implements itself;
//! anything else is a browser command for the forwarder.

use std::ffi::OsString;

use clap::{Parser, Subcommand};

use crate::token_shape::redact_runs;

#[derive(Debug, Parser)]
#[command(
    name = "my-chrome",
    version,
    about = "Let coding agents drive your own running, signed-in browser (Chrome, Chromium, Edge or Brave) through the Playwright Extension.",
    long_about = None
)]
pub struct Cli {
    /// Who you are (whose tabs you use); first, before the command (else
    /// MY_CHROME_AGENT, else a name derived from the calling process).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

/// The user's settings `setup` records (src/settings.rs).
#[derive(Debug, clap::Args)]
pub struct SettingsArgs {
    /// Your setting: an agent without a command for this long is gone
    /// and its tabs are held for it (90s, 30m, 2h; default 30m).
    #[arg(long, value_name = "DURATION")]
    pub agent_gone: Option<String>,
    /// Your setting: a folder where forwarded commands may read and
    /// write files, beside /tmp (repeat for more; replaces the ones
    /// recorded).
    #[arg(long, value_name = "PATH", conflicts_with = "no_file_roots")]
    pub file_root: Vec<std::path::PathBuf>,
    /// Your setting: no folder beside /tmp.
    #[arg(long)]
    pub no_file_roots: bool,
    /// Your setting: a session ends after this long without a browser
    /// command (10s to 24h; 0: never; default 30m).
    #[arg(long, value_name = "DURATION")]
    pub idle_limit: Option<String>,
    /// Your setting: a session ends this long after `connect`, whatever it
    /// does (10s to 7 days; default 8h).
    #[arg(long, value_name = "DURATION")]
    pub lifetime_limit: Option<String>,
    /// Your setting: how many tabs one agent may have (1 to 200; default
    /// 10); past it, it opens none and its pages' popups are yours.
    #[arg(long, value_name = "N")]
    pub agent_tabs: Option<String>,
    /// Your setting: how many tabs the session may hold before no agent
    /// opens another (2 to 500; default 30).
    #[arg(long, value_name = "N")]
    pub session_tabs: Option<String>,
    /// Your setting: how long an agent's browser command may run before it
    /// is given up (1s to 1h; default 2m); an agent's own
    /// MY_CHROME_COMMAND_TIMEOUT_SECS may only shorten it.
    #[arg(long, value_name = "DURATION")]
    pub command_bound: Option<String>,
    /// Whether `connect` asks you in the browser first (`on`, the
    /// default). Turning it off is itself asked of you there.
    #[arg(long, value_name = "on|off")]
    pub connect_consent: Option<OnOff>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Install the pinned @playwright/cli into the private runtime (once
    /// per machine), and record your settings.
    Setup {
        /// Use this browser from now on: chrome, chrome-beta, chrome-dev,
        /// chrome-canary, chromium, edge or brave.
        #[arg(long, value_name = "NAME")]
        browser: Option<String>,
        #[command(flatten)]
        settings: SettingsArgs,
    },
    /// Report the runtime, node, the pinned CLI, Chrome and the token; changes nothing.
    Doctor {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Store, copy or delete the extension token (never given as an argument).
    Token {
        #[command(subcommand)]
        action: TokenCommand,
    },
    /// Attach to your running Chrome (only after you approved it): the token
    /// goes straight to Chrome, never to another process.
    Connect {
        /// End the session this long after connecting (less than your
        /// lifetime limit, never more: 90s, 30m, 2h).
        #[arg(long = "for", value_name = "DURATION")]
        for_: Option<String>,
    },
    /// Is the session ready? Never attaches (exit 4 when a connect is needed).
    Ensure,
    /// Detach from the browser and remove the private output; the browser keeps running.
    #[command(visible_aliases = ["detach", "close"])]
    Disconnect,
    /// Remove what my-chrome installed: detach the session, then remove
    /// the runtime (the pinned CLI, state, logs) and the skill copies
    /// scripts/install.sh placed. The browser keeps running.
    Uninstall {
        /// Delete the extension token from the keyring too (kept otherwise).
        #[arg(long)]
        forget_token: bool,
        /// Say what would be removed and what left; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Every agent's tab ids and labels, its last command and when, the
    /// user's tabs, and what runs now; changes nothing.
    Agents {
        /// Print JSON instead of text.
        #[arg(long, conflicts_with = "log")]
        json: bool,
        /// Print the last N lines of the session's event log (default 20).
        #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "20")]
        log: Option<usize>,
    },
    /// Take again a tab held for you (one that left you), or the blank tab
    /// `connect` left; label one of yours. A tab of the user's is the
    /// user's to give.
    TabClaim {
        /// The tab's id (`t7`).
        #[arg(value_name = "ID")]
        tab: String,
        /// A name of yours for it.
        #[arg(long, value_name = "NAME")]
        label: Option<String>,
    },
    /// The user's step: give a tab no agent has (yours, or one held for an
    /// agent) to an agent. Never an agent's own step.
    TabGive {
        /// The tab's id (`t7`, from `my-chrome agents`).
        #[arg(value_name = "ID")]
        tab: String,
        /// The agent that gets it.
        #[arg(value_name = "AGENT")]
        agent: String,
    },
    /// Give your tabs back: those you opened are closed, the rest are the user's.
    Release {
        /// Only this tab of yours (id, index or label).
        #[arg(long, value_name = "TAB")]
        tab: Option<String>,
        /// Close nothing: leave every tab open, the user's.
        #[arg(long)]
        keep: bool,
    },
    /// my-chrome's own: holds the session's turn for a command the daemon
    /// still runs after its bound (`src/lease/finish.rs`). Never run by
    /// hand.
    #[command(name = "wait-abandoned", hide = true)]
    WaitAbandoned {
        /// The runtime whose turn it holds.
        #[arg(long, value_name = "PATH")]
        runtime: std::path::PathBuf,
    },
    /// my-chrome's own: ends the session at the user's idle and lifetime
    /// limits (`src/command/watch.rs`), started by `connect`. Never run by
    /// hand.
    #[command(name = "watch-session", hide = true)]
    WatchSession,
    /// Which safeguards hold right now (exit 6 when one does not).
    SafetyAudit {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The open Playwright sessions and the targeted action for each; runs nothing.
    CleanupPlan {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Start a token rotation: records which token is being replaced.
    BeginTokenRotation,
    /// After storing the regenerated token: records the running Chrome.
    MarkTokenRegenerated,
    /// Where the token rotation stands, and the next step.
    RotationStatus,
    /// `--help` / `-h`: our usage, then the pinned CLI's commands.
    #[command(skip)]
    Help,
    /// `--version` / `-V`: ours and the pinned CLI's.
    #[command(skip)]
    Version,
    /// Anything else: the relay's call `my-chrome <connect URL>` (the
    /// courier of a running `connect`), or an unknown command.
    #[command(external_subcommand)]
    External(Vec<OsString>),
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Store the token from the clipboard (or standard input with --stdin).
    Store {
        /// Read the token from standard input (not echoed on a terminal).
        #[arg(long)]
        stdin: bool,
        /// Refused: the token is never an argument.
        #[arg(hide = true, trailing_var_arg = true, allow_hyphen_values = true)]
        extra: Vec<OsString>,
    },
    /// Copy an existing keyring item into ours, without printing or deleting it.
    Migrate {
        /// The source item's service.
        #[arg(long)]
        from_service: String,
        /// The source item's account (default: ours).
        #[arg(long)]
        from_account: Option<String>,
        /// Refused: the token is never an argument.
        #[arg(hide = true, trailing_var_arg = true, allow_hyphen_values = true)]
        extra: Vec<OsString>,
    },
    /// Delete our stored token (and the previous one, if kept).
    Forget,
    /// Put back the token a `store` or `migrate` replaced, kept until a
    /// `connect` with the new one succeeded.
    Restore,
}

/// What the parser said instead of a command line (a subcommand's help,
/// or a usage error), rendered, with its exit code: `main` shows it.
#[derive(Debug)]
pub struct Said {
    pub text: String,
    pub to_stderr: bool,
    pub code: u8,
}

impl Said {
    pub fn show(&self) {
        let stream = if self.to_stderr {
            crate::output::Stream::Err
        } else {
            crate::output::Stream::Out
        };
        crate::output::text(stream, &[&self.text]);
    }
}

/// Parses the command line. clap's own errors quote the offending argument
/// (or part of it); anything in them that could be a token is replaced before
/// the error is shown.
pub fn parse() -> Result<Cli, Said> {
    // `my-chrome -s=… cmd` or `my-chrome --json tab-list`: flags of the
    // forwarded CLI come first; they go to the forwarder (which checks them).
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let agent = take_agent(&mut args).map_err(|message| Said {
        text: format!("error: {message}\n\nFor more information, try '--help'.\n"),
        to_stderr: true,
        code: 2,
    })?;
    let mut cli = parse_rest(args)?;
    cli.agent = agent;
    Ok(cli)
}

/// `--agent NAME` or `--agent=NAME` in first place, taken out of `args`
/// (validated later, with the configuration).
fn take_agent(args: &mut Vec<OsString>) -> Result<Option<String>, String> {
    let first = args.first().map(|a| a.to_string_lossy().into_owned());
    match first.as_deref() {
        Some("--agent") => {
            if args.len() < 2 {
                return Err("--agent needs a NAME before the command".into());
            }
            let name = args.remove(1).to_string_lossy().into_owned();
            args.remove(0);
            Ok(Some(name))
        }
        Some(arg) if arg.starts_with("--agent=") => {
            args.remove(0);
            Ok(Some(arg["--agent=".len()..].to_string()))
        }
        _ => Ok(None),
    }
}

fn parse_rest(args: Vec<OsString>) -> Result<Cli, Said> {
    let first = args
        .first()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default();
    let only = |command| Cli {
        agent: None,
        command,
    };
    if args.len() == 1 {
        match first.as_str() {
            "-h" | "--help" => return Ok(only(Command::Help)),
            "-V" | "--version" => return Ok(only(Command::Version)),
            _ => {}
        }
    }
    let ours = ["-h", "--help", "-V", "--version"];
    if first.starts_with('-') && !ours.contains(&first.as_str()) {
        return Ok(only(Command::External(args)));
    }
    Cli::try_parse_from(std::iter::once(OsString::from("my-chrome")).chain(args)).map_err(|e| {
        Said {
            text: redact_runs(&e.render().to_string()),
            to_stderr: e.use_stderr(),
            code: u8::try_from(e.exit_code()).unwrap_or(2),
        }
    })
}

/// The wrapper's own command names and their visible aliases (`token` and
/// its subcommands as `token store`, …).
pub fn wrapper_commands() -> Vec<String> {
    use clap::CommandFactory;
    let mut names = Vec::new();
    for command in Cli::command().get_subcommands() {
        let name = command.get_name().to_string();
        for sub in command.get_subcommands() {
            names.push(format!("{name} {}", sub.get_name()));
        }
        names.extend(command.get_visible_aliases().map(String::from));
        names.push(name);
    }
    names
}

/// The options the wrapper itself takes before a command (`--agent`,
/// `--help`, `--version` and their short forms).
pub fn wrapper_options() -> Vec<String> {
    use clap::CommandFactory;
    let mut options: Vec<String> = ["--help", "-h", "--version", "-V"].map(String::from).into();
    for arg in Cli::command().get_arguments() {
        options.extend(arg.get_long().map(|long| format!("--{long}")));
    }
    options
}

/// Our own usage text (clap's).
pub fn usage() -> String {
    use clap::CommandFactory;
    Cli::command().render_long_help().to_string()
}
