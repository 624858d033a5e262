//! my-chrome: parse, dispatch, map errors to exit codes.

use std::process::ExitCode;

use nix::sys::stat::{Mode, umask};

use my_chrome::cli::{self, Command, TokenCommand};
use my_chrome::command::failure::Failure;
use my_chrome::command::{
    agents, audit, connect, disconnect, doctor, ensure, forward, setup, token, uninstall, watch,
};
use my_chrome::config::Config;
use my_chrome::exit::Exit;
use my_chrome::output::{self, Stream};
use my_chrome::{handoff, host_sandbox, signals};

fn main() -> ExitCode {
    // Everything we create, and every child we start, is private to the user.
    umask(Mode::from_bits_truncate(0o077));
    let cli = match cli::parse() {
        Ok(cli) => cli,
        Err(said) => {
            said.show();
            return ExitCode::from(said.code);
        }
    };
    if let Err(e) = signals::install() {
        output::notice(&format!("my-chrome: cannot install signal handlers: {e}"));
        return ExitCode::FAILURE;
    }
    match Config::from_env()
        .and_then(|config| config.with_agent_flag(cli.agent.as_deref()))
        .map_err(Failure::from)
        .and_then(|config| {
            // Every print from here on hides the stored token's value too.
            output::init(&config.runtime);
            // Inside an agent host's sandbox that blocks the runtime or
            // the sockets, nothing runs (doctor reports it instead; the
            // help only reads).
            if !matches!(cli.command, Command::Doctor { .. } | Command::Help) {
                host_sandbox::check(&config.runtime.path, config.host.as_ref())?;
            }
            run(cli.command, &config)
        }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if !e.was_said() {
                // A message may quote what a page or the daemon said: it
                // passes the redactor, as everything printed does.
                output::notice(&format!("my-chrome: {e}"));
            }
            // An interrupt ends with 128 + N, whatever step it cut short.
            let exit = signals::pending().map_or(e.exit(), Exit::from);
            ExitCode::from(exit.code() as u8)
        }
    }
}

/// The relay's `my-chrome <connect URL>` is a courier; anything else is a
/// Playwright CLI command for the forwarder.
fn browser_command(config: &Config, args: &[std::ffi::OsString]) -> Result<(), Failure> {
    match args {
        [url] if url.to_string_lossy().starts_with("chrome-extension://") => Ok(handoff::courier(
            config.handoff.as_deref(),
            &url.to_string_lossy(),
        )?),
        _ => Ok(forward::forward(config, args)?),
    }
}

fn run(command: Command, config: &Config) -> Result<(), Failure> {
    match command {
        Command::Setup { browser, settings } => {
            let change = setup::settings_change(config, &settings)?;
            setup::run(config, browser.as_deref(), &change)?
        }
        Command::Doctor { json } => doctor::doctor(config, json),
        Command::Token { action } => match action {
            TokenCommand::Store { stdin, extra } => token::store(config, stdin, &extra)?,
            TokenCommand::Migrate {
                from_service,
                from_account,
                extra,
            } => token::migrate(config, &from_service, from_account.as_deref(), &extra)?,
            TokenCommand::Forget => token::forget(config)?,
            TokenCommand::Restore => token::restore(config)?,
        },
        Command::Connect { for_ } => connect::connect(config, for_.as_deref())?,
        Command::Ensure => ensure::ensure(config).map_err(Failure::Ensure)?,
        Command::Agents { json, log } => {
            agents::show(config, json, log).map_err(Failure::Agents)?
        }
        Command::TabClaim { tab, label } => {
            agents::claim(config, &tab, label.as_deref()).map_err(Failure::Agents)?
        }
        Command::TabGive { tab, agent } => {
            agents::give(config, &tab, &agent).map_err(Failure::Agents)?
        }
        Command::Release { tab, keep } => {
            agents::release(config, tab.as_deref(), keep).map_err(Failure::Agents)?
        }
        Command::SafetyAudit { json } => audit::safety_audit(config, json)?,
        Command::CleanupPlan { json } => audit::cleanup_plan(config, json)?,
        Command::Disconnect => disconnect::disconnect(config)?,
        Command::Uninstall {
            forget_token,
            dry_run,
        } => uninstall::uninstall(
            config,
            uninstall::Asked {
                forget_token,
                dry_run,
            },
        )?,
        // Started by `hand_over` (stdin: a daemon connection, stdout: the
        // session lock): it prints nothing.
        Command::WaitAbandoned { runtime } => {
            let location = my_chrome::config::RuntimeLocation { path: runtime };
            my_chrome::lease::finish::wait(&location)?;
        }
        // Started by `connect`, detached: it prints nothing.
        Command::WatchSession => watch::watch(config)?,
        Command::BeginTokenRotation => token::begin_rotation(config)?,
        Command::MarkTokenRegenerated => token::mark_regenerated(config)?,
        Command::RotationStatus => token::rotation_status(config)?,
        Command::External(args) => browser_command(config, &args)?,
        Command::Help => {
            let browser = forward::cli_help(config).map_err(Failure::Help)?;
            output::text(Stream::Out, &[&cli::usage()]);
            match browser {
                Some(text) => output::text(
                    Stream::Out,
                    &[
                        "\nBrowser commands (forwarded to the pinned @playwright/cli):\n\n",
                        &text,
                    ],
                ),
                None => output::line(
                    "\nBrowser commands appear here once `my-chrome setup` has installed the pinned CLI.",
                ),
            }
        }
        Command::Version => {
            output::line(&format!("my-chrome {}", env!("CARGO_PKG_VERSION")));
            output::line(&format!(
                "@playwright/cli {} (pinned)",
                my_chrome::helper::pin::Pin::shipped().version
            ));
        }
    }
    // A command that finished despite a signal (doctor, say) still reports it.
    match signals::pending() {
        Some(signal) => Err(Failure::Interrupted(signal)),
        None => Ok(()),
    }
}
