//! `my-chrome connect`: the one path to a fresh attachment (docs/DESIGN.md,
//! "Delivering the connect URL"). The CLI's attach runs without the token,
//! with this binary as the relay's "browser"; the courier hands us the
//! connect URL; we re-check Chrome's PID set, append the token, and deliver
//! the URL straight to the checked Chrome through its own singleton socket.
//! Then the PID set and every process's command line and environment are
//! checked again. Any failure after the attach started kills the attach,
//! detaches without the token, and scrubs the private bootstrap output.

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use zeroize::Zeroizing;

use super::pinned::{Need, PinnedCli, Prepared};
use super::state::{SessionState, session_state};
use crate::child::{ChildCommand, Spawned};
use crate::chrome::{self, Exposure};
use crate::config::Config;
use crate::error::{Error, Exit};
use crate::handoff::{Handoff, HandoffError};
use crate::helper::pin::Pin;
use crate::procs::ProcessTable;
use crate::runtime::{Runtime, StateFile};
use crate::signals;
use crate::singleton;
use crate::token::store;

const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);
const BOOTSTRAP_PREFIX: &str = "session-output.";
/// The attached session's output directory (`outputDir`), in the runtime.
pub const SESSION_OUTPUT: &str = "session-output";

/// How an attach that started can fail. What reached Chrome decides the
/// advice: the token only ever goes to the user's own Chrome, so only a
/// changed Chrome or a process holding the token calls for a rotation.
#[derive(Debug)]
enum AttachError {
    /// Nothing was sent to Chrome.
    NotSent { exit: Exit, message: String },
    /// Chrome has the connect page, and the extension never connected: it
    /// refused the token, or it is not there.
    NoAnswer { waited: Duration },
    /// Chrome has the connect page (and the token), then something failed.
    AfterDelivery { exit: Exit, message: String },
    /// Chrome's processes changed, or a process carries the token.
    Exposed(String),
}

impl AttachError {
    fn not_sent(exit: Exit, message: impl Into<String>) -> AttachError {
        AttachError::NotSent {
            exit,
            message: message.into(),
        }
    }

    /// A failure after delivery is only what it seems once the processes
    /// are checked: a changed Chrome or a process with the token (or a table
    /// that cannot be read) makes it an exposure.
    fn confirmed(self, config: &Config, before: &[u32]) -> AttachError {
        match self {
            AttachError::NoAnswer { .. } | AttachError::AfterDelivery { .. } => {
                match exposure_check(config, before) {
                    Ok(()) => self,
                    Err(why) => AttachError::Exposed(format!("{} Then: {why}", self.explain().0)),
                }
            }
            other => other,
        }
    }

    fn exit(&self) -> Exit {
        match self {
            AttachError::NotSent { exit, .. } | AttachError::AfterDelivery { exit, .. } => *exit,
            AttachError::NoAnswer { .. } => Exit::Timeout,
            AttachError::Exposed(_) => Exit::Security,
        }
    }

    /// What happened, then (after the cleanup is said) the next step.
    fn explain(&self) -> (String, &'static str) {
        match self {
            AttachError::NotSent { message, .. } => (message.clone(), ""),
            AttachError::NoAnswer { waited } => (
                format!(
                    "Chrome opened the Playwright Extension's connect page, but the extension never \
                     connected within {} s. Most likely the stored token is not the extension's \
                     current one (that tab then says \"Invalid token provided.\"), or the \
                     extension is not installed or not enabled in this Chrome.",
                    waited.as_secs()
                ),
                " Open the extension's status page (its toolbar icon), copy the token shown \
                 there, store it with `my-chrome token store`, close that connect tab, and run \
                 `my-chrome connect` again. The token went only to your own Chrome: no rotation \
                 is needed.",
            ),
            AttachError::AfterDelivery { message, .. } => (
                message.clone(),
                " The token went only to your own Chrome; close the extension's connect tab there \
                 if it is still open.",
            ),
            AttachError::Exposed(message) => (message.clone(), ROTATE_ADVICE),
        }
    }
}

const ROTATE_ADVICE: &str = " Treat the token as exposed: run `my-chrome begin-token-rotation` \
                             and follow `my-chrome rotation-status`";

/// A refusal or failure of `connect`, with its exit code.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ConnectError {
    pub exit: Exit,
    pub message: String,
}

pub(crate) fn fail(exit: Exit, message: impl Into<String>) -> Error {
    Error::Connect(ConnectError {
        exit,
        message: message.into(),
    })
}

/// The private place the attach writes to, recorded until it is scrubbed.
/// Deleted when dropped: an early failure scrubs it too. (A SIGKILL leaves
/// it, with its record, for the next command to recover.)
struct Bootstrap {
    dir: PathBuf,
    runtime: Runtime,
}

impl Bootstrap {
    fn create(runtime: &Runtime) -> Result<Bootstrap, Error> {
        let dir = tempfile::Builder::new()
            .prefix(BOOTSTRAP_PREFIX)
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(runtime.root())
            .map_err(|e| {
                fail(
                    Exit::Failure,
                    format!("cannot create the bootstrap directory: {e}"),
                )
            })?
            .keep();
        let record = json!({"dir": dir});
        runtime.write_state(StateFile::Bootstrap, record.to_string().as_bytes())?;
        // The session's own output (snapshots, downloads) goes to a fixed
        // private directory that disconnect removes; this one is scrubbed
        // as soon as the attach is checked.
        let output_dir = runtime.root().join(SESSION_OUTPUT);
        if let Err(e) = fs::DirBuilder::new().mode(0o700).create(&output_dir)
            && e.kind() != std::io::ErrorKind::AlreadyExists
        {
            return Err(fail(
                Exit::Failure,
                format!("cannot create {}: {e}", output_dir.display()),
            ));
        }
        crate::runtime::check_private_dir(&output_dir)?;
        let config = json!({"outputDir": output_dir});
        fs::write(dir.join("attach-config.json"), config.to_string()).map_err(|e| {
            fail(
                Exit::Failure,
                format!("cannot write the attach config: {e}"),
            )
        })?;
        Ok(Bootstrap {
            dir,
            runtime: runtime.clone(),
        })
    }

    fn config(&self) -> PathBuf {
        self.dir.join("attach-config.json")
    }

    fn output(&self) -> Result<fs::File, Error> {
        fs::File::create(self.dir.join("attach-output.log")).map_err(|e| {
            fail(
                Exit::Failure,
                format!("cannot create the attach output file: {e}"),
            )
        })
    }

    /// Deletes the output (it may show the helper tab's URL) and the record.
    fn scrub(self) {
        drop(self);
    }
}

impl Drop for Bootstrap {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
        let _ = self.runtime.remove_state(StateFile::Bootstrap);
    }
}

/// A connect that died (SIGKILL, power) left its record: detach without the
/// token and scrub, before anything else happens.
pub(crate) fn recover(runtime: &Runtime, cli: &PinnedCli) -> Result<(), Error> {
    // Under the lock, any hand-off directory belongs to a connect that died.
    for entry in fs::read_dir(runtime.root()).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with("handoff.") {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
    let Some(record) = runtime.read_state(StateFile::Bootstrap)? else {
        return Ok(());
    };
    let record: serde_json::Value = serde_json::from_slice(&record).unwrap_or_default();
    // The record is checked before any use: it must name a bootstrap
    // directory of this runtime (our prefix, not a link). A record naming
    // anything else would have us stop every process that mentions it.
    let dir = record["dir"].as_str().map(PathBuf::from).filter(|d| {
        d.parent() == Some(runtime.root())
            && d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(BOOTSTRAP_PREFIX))
            && !fs::symlink_metadata(d).is_ok_and(|m| m.file_type().is_symlink())
    });
    let Some(dir) = dir else {
        let path = runtime.root().join(StateFile::Bootstrap.file_name());
        return Err(fail(
            Exit::Security,
            format!(
                "{} does not name a bootstrap directory of this runtime; nothing was stopped or \
                 deleted. Remove it (`rm {}`) and run the command again",
                path.display(),
                path.display()
            ),
        ));
    };
    // What it started (the attach and its daemon) may still wait for the
    // extension. They carry the bootstrap directory in their arguments:
    // stop exactly those.
    stop_processes(&ProcessTable::read()?.mentioning(&dir));
    let detached = cli.detach();
    let _ = fs::remove_dir_all(dir);
    runtime.remove_state(StateFile::Bootstrap)?;
    eprintln!(
        "my-chrome: an earlier connect was interrupted; its private output was scrubbed{}",
        if detached {
            " and its session detached"
        } else {
            ""
        }
    );
    Ok(())
}

/// SIGINT to each (the CLI then stops its daemon), SIGKILL to what is
/// left after a grace period.
fn stop_processes(pids: &[u32]) {
    use nix::sys::signal::{Signal, kill};
    let alive = |pid: &u32| kill(nix::unistd::Pid::from_raw(*pid as i32), None).is_ok();
    for pid in pids {
        let _ = kill(nix::unistd::Pid::from_raw(*pid as i32), Signal::SIGINT);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && pids.iter().any(alive) {
        std::thread::sleep(Duration::from_millis(50));
    }
    for pid in pids.iter().filter(|p| alive(p)) {
        let _ = kill(nix::unistd::Pid::from_raw(*pid as i32), Signal::SIGKILL);
    }
}

pub fn connect(config: &Config) -> Result<(), Error> {
    // Another agent's turn with the browser is not interrupted by a (re)connect.
    let _lease = crate::lease::acquire(config, "connect")?;
    let prepared = Prepared::open(config, Need::Verified, true)?;
    let (runtime, helper, node, env) = (
        &prepared.runtime,
        &prepared.helper,
        &prepared.node,
        &prepared.env,
    );
    let pin = Pin::shipped();
    let cli = prepared.cli();
    recover(runtime, &cli)?;

    match session_state(&config.home, runtime, &config.session, pin.core_version()) {
        SessionState::Ready(_) => {
            println!(
                "my-chrome: already connected as session {}; reusing it",
                config.session
            );
            return Ok(());
        }
        SessionState::Unavailable(why) => {
            return Err(fail(
                Exit::Failure,
                format!("the session cannot be used ({why}); nothing was attached"),
            ));
        }
        SessionState::Stale(_) => {
            cli.detach();
        }
        SessionState::Missing => {}
    }

    // Exactly one normal Chrome, before the token is read.
    let before = chrome::normal_chrome_pids(&ProcessTable::read()?, &config.chrome);
    let chrome_pid = chrome::require_single(&before).single(&config.chrome)?;
    if let Some(other) = cli.other_attached(runtime.root())? {
        return Err(fail(
            Exit::Failure,
            format!(
                "another Playwright session is attached to Chrome: {other}; detach it first. Nothing was attached"
            ),
        ));
    }
    let token = store::ours(config).read()?.ok_or_else(|| {
        Error::TokenMissing("no token is stored; store it with `my-chrome token store`".into())
    })?;

    let bootstrap = Bootstrap::create(runtime)?;
    let handoff = Handoff::open(runtime)?;
    let me = std::env::current_exe()
        .map_err(|e| fail(Exit::Failure, format!("cannot find this program: {e}")))?;
    let attach_env = env
        .clone()
        .with("PLAYWRIGHT_MCP_EXECUTABLE_PATH", &me)
        .with("MY_CHROME_HANDOFF", handoff.socket_path());
    let session_arg = format!("--session={}", config.session);
    let config_arg = format!("--config={}", bootstrap.config().display());
    let mut attach = ChildCommand::new(
        "playwright-cli attach",
        &node.path,
        runtime.root(),
        config.attach_timeout,
    )
    .arg(helper.entry())
    .args(["attach", &session_arg, "--extension=chrome", &config_arg])
    .spawn_to(&attach_env, &bootstrap.output()?)?;

    let outcome = attach_and_check(config, &handoff, &mut attach, &before, chrome_pid, &token)
        .map_err(|error| error.confirmed(config, &before));
    drop(token);
    // The CLI stops the daemon it started only when interrupted, not killed.
    attach.stop_group(Duration::from_secs(5));
    // The connect tab keeps the token in its address: no session page may.
    let outcome = outcome.and_then(|()| {
        cli.close_connect_tabs()
            .map_err(|why| AttachError::AfterDelivery {
                exit: Exit::Failure,
                message: format!(
                    "the extension's connect tab, whose address carries the token, could not be \
                     taken out of the session ({why})."
                ),
            })
    });
    if let Err(error) = outcome {
        let detached = cli.detach();
        bootstrap.scrub();
        let (what, next) = error.explain();
        let cleaned = if detached {
            "The session was detached"
        } else {
            "Nothing stayed attached"
        };
        return Err(fail(
            error.exit(),
            format!("{what} {cleaned} and the private bootstrap output deleted.{next}"),
        ));
    }
    bootstrap.scrub();
    println!(
        "my-chrome: connected to Chrome (pid {chrome_pid}) as session {}; the token went straight to Chrome",
        config.session
    );
    Ok(())
}

/// Everything between starting the attach and the last check.
fn attach_and_check(
    config: &Config,
    handoff: &Handoff,
    attach: &mut Spawned,
    before: &[u32],
    chrome_pid: u32,
    token: &crate::token::Token,
) -> Result<(), AttachError> {
    let failed = |e: Error| AttachError::not_sent(e.exit(), e.to_string());
    let deadline = Instant::now() + config.attach_timeout;
    let courier = loop {
        if let Some(status) = attach.try_status().map_err(|e| failed(e.into()))? {
            return Err(AttachError::not_sent(
                Exit::Failure,
                format!(
                    "the attach ended ({status}) before Chrome was asked; nothing was sent to Chrome."
                ),
            ));
        }
        if Instant::now() >= deadline {
            return Err(AttachError::not_sent(
                Exit::Timeout,
                "the attach did not ask for Chrome in time; nothing was sent to Chrome.",
            ));
        }
        match handoff.accept(attach.pid(), Duration::from_millis(100)) {
            Ok(courier) => break courier,
            Err(HandoffError::TimedOut(_)) => continue,
            // A token was in the CLI's environment and the courier's
            // command line: exposed, though not by us.
            Err(e @ HandoffError::RefusedToken) => {
                return Err(AttachError::Exposed(format!("{e}.")));
            }
            Err(e) => return Err(AttachError::not_sent(e.exit(), format!("{e}."))),
        }
    };
    let table = ProcessTable::read().map_err(|e| failed(e.into()))?;
    let now = chrome::normal_chrome_pids(&table, &config.chrome);
    if now != before {
        courier.answer(false);
        return Err(AttachError::not_sent(
            Exit::Chrome,
            format!(
                "Chrome's processes changed before delivery ({before:?} → {now:?}); nothing was sent to Chrome."
            ),
        ));
    }
    let mut url = Zeroizing::new(courier.url.as_str().as_bytes().to_vec());
    url.extend_from_slice(b"&token=");
    url.extend_from_slice(token.expose_for_delivery());
    let delivery = singleton::deliver(
        &config.chrome_user_data,
        chrome_pid,
        &config.chrome,
        &url,
        DELIVERY_TIMEOUT,
    );
    drop(url);
    courier.answer(delivery.is_ok());
    if let Err(e) = delivery {
        let message = format!("{e}.");
        return Err(if e.sent() {
            AttachError::AfterDelivery {
                exit: e.exit(),
                message,
            }
        } else {
            AttachError::not_sent(e.exit(), message)
        });
    }
    let after_delivery = |exit: Exit, message: String| AttachError::AfterDelivery { exit, message };

    loop {
        let status = attach
            .try_status()
            .map_err(|e| after_delivery(Exit::Failure, format!("{e}.")))?;
        if let Some(status) = status {
            if !status.success() {
                return Err(after_delivery(
                    Exit::Failure,
                    format!("the attach failed ({status}) after the URL was delivered."),
                ));
            }
            break;
        }
        if let Some(signal) = signals::pending() {
            return Err(after_delivery(
                Exit::Signal(signal as i32),
                format!("interrupted by {signal} during the attach."),
            ));
        }
        if Instant::now() >= deadline {
            return Err(AttachError::NoAnswer {
                waited: config.attach_timeout,
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }

    exposure_check(config, before).map_err(AttachError::Exposed)
}

/// After delivery, whatever the outcome: the PID set must be the one
/// checked and no process may carry the token. A table that cannot be read
/// rules nothing out, so it counts as an exposure too.
fn exposure_check(config: &Config, before: &[u32]) -> Result<(), String> {
    let table = ProcessTable::read().map_err(|e| {
        format!("the process table could not be read after delivery, so an exposure cannot be ruled out ({e}).")
    })?;
    let after = chrome::normal_chrome_pids(&table, &config.chrome);
    if after != before {
        return Err(format!(
            "Chrome's processes changed during the attach ({before:?} → {after:?})."
        ));
    }
    if let Exposure::Exposed(pids) = chrome::token_exposure(&table) {
        return Err(format!(
            "processes {pids:?} carry an extension token in their command line or environment."
        ));
    }
    Ok(())
}
