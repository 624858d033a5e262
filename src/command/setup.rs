//! `my-chrome setup`: install the pinned CLI into `<runtime>/cli` from the
//! shipped lock with `npm ci`, verify it, and swap it into place.
//!
//! Nothing is lost on failure: npm works in a private staging directory;
//! the old copy is moved aside only once the new one is verified, moved back
//! if the new one cannot take its place, and removed only after the swap.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::helper::pin::Pin;
use nix::sys::signal::Signal;

use crate::browser::How;
use crate::browser_name::Browser;
use crate::child::{ChildCommand, ChildEnv, ChildError, Output};
use crate::cli::{self, SettingsArgs};
use crate::config::Config;
use crate::exit::Exit;
use crate::helper::check::Fault;
use crate::helper::node::NodeError;
use crate::helper::{Helper, HelperError, io_error, trusted_node};
use crate::output::{Relay, Stream};
use crate::procs::{ProcError, ProcessTable};
use crate::runtime::{ASIDE_PREFIX, Runtime, RuntimeError, STAGING_PREFIX};
use crate::session::registry;
use crate::settings;
use crate::signals;

/// npm's cache during an install, in the runtime's private TMPDIR.
const NPM_CACHE: &str = "npm-cache";

/// Why setup installed nothing (the previous copy, if any, is unchanged).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Helper(#[from] HelperError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Node(#[from] NodeError),
    #[error(transparent)]
    Processes(#[from] ProcError),
    #[error(
        "the Playwright session {session:?} is open; setup was not started. \
         Run `my-chrome disconnect` first, then `my-chrome setup`, then `my-chrome connect`"
    )]
    SessionOpen { session: String },
    #[error(
        "processes {pids:?} are running code from {}; setup was not started. \
         Run `my-chrome disconnect`, let them finish, then run `my-chrome setup` again",
        .dir.display()
    )]
    InUse { dir: PathBuf, pids: Vec<u32> },
    #[error(
        "npm ci failed ({status}); nothing was installed and the previous copy, if any, is unchanged. \
         npm's output above says why (often the network or a proxy); fix that and run `my-chrome setup` again"
    )]
    NpmFailed { status: String },
    #[error(
        "{0}. Nothing was installed and the previous copy, if any, is unchanged. Run `my-chrome setup` \
         again (if npm is slow, check the network or raise MY_CHROME_SETUP_TIMEOUT_SECS)"
    )]
    NpmAborted(ChildError),
    #[error(
        "interrupted by {signal} before the new copy was put in place; the previous copy, if any, is unchanged"
    )]
    Interrupted { signal: Signal },
    #[error(
        "the freshly installed copy failed verification ({fault}); it was removed and the previous copy, \
         if any, is unchanged. With an unmodified my-chrome this should not happen: please report it"
    )]
    StagedUnsupported { fault: Fault },
    #[error(
        "cannot read the Playwright session registry ({reason}); setup was not started. If no my-chrome \
         session is running, remove that file and run `my-chrome setup` again"
    )]
    SessionUnreadable { reason: String },
    #[error("{0}")]
    Swap(String),
    #[error("--browser: {0}; nothing was recorded or installed")]
    UnknownBrowser(#[from] crate::browser_name::UnknownBrowser),
    #[error("{0}")]
    Browser(#[from] crate::browser::BrowserError),
    #[error(transparent)]
    Settings(#[from] settings::SettingsError),
    #[error("{0}")]
    Consent(#[from] crate::consent::ConsentError),
    #[error(
        "the settings changed while the user was asked, so what they confirmed is not what \
         this change would do now; nothing was recorded. Ask the user again if it is still wanted"
    )]
    ChangedWhileAsked,
}

impl SetupError {
    pub fn exit(&self) -> Exit {
        match self {
            SetupError::Helper(e) => e.exit(),
            SetupError::Runtime(e) => e.exit(),
            SetupError::Node(e) => e.exit(),
            SetupError::NpmAborted(e) => e.exit(),
            SetupError::Interrupted { signal } => Exit::from(*signal),
            SetupError::UnknownBrowser(_) => Exit::Usage,
            SetupError::Browser(e) => e.exit(),
            SetupError::Settings(e) => e.exit(),
            SetupError::Consent(e) => e.exit(),
            SetupError::ChangedWhileAsked => Exit::Busy,
            SetupError::Processes(_)
            | SetupError::SessionOpen { .. }
            | SetupError::SessionUnreadable { .. }
            | SetupError::InUse { .. }
            | SetupError::NpmFailed { .. }
            | SetupError::StagedUnsupported { .. }
            | SetupError::Swap(_) => Exit::Failure,
        }
    }
}

pub enum Outcome {
    Installed { dir: PathBuf },
    AlreadySupported { dir: PathBuf },
}

/// The settings `setup` was asked to record, checked before anything is
/// done (a value that is not one is refused with the accepted forms).
pub fn settings_change(
    config: &Config,
    asked: &SettingsArgs,
) -> Result<settings::Change, SetupError> {
    let roots = asked
        .file_root
        .iter()
        // Neither the home given nor the account's own (a caller's `HOME`
        // is its to pick).
        .map(|root| settings::new_file_root(root, &config.homes()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(settings::Change {
        agent_gone: asked
            .agent_gone
            .as_deref()
            .map(settings::agent_gone)
            .transpose()?,
        file_roots: (asked.no_file_roots || !roots.is_empty()).then_some(roots),
        idle_limit: asked
            .idle_limit
            .as_deref()
            .map(settings::idle_limit)
            .transpose()?,
        lifetime_limit: asked
            .lifetime_limit
            .as_deref()
            .map(settings::lifetime_limit)
            .transpose()?,
        connect_consent: asked.connect_consent.map(|on| on == cli::OnOff::On),
        agent_tabs: asked
            .agent_tabs
            .as_deref()
            .map(|raw| settings::tabs("--agent-tabs", raw, settings::AGENT_TABS_RANGE))
            .transpose()?,
        session_tabs: asked
            .session_tabs
            .as_deref()
            .map(|raw| settings::tabs("--session-tabs", raw, settings::SESSION_TABS_RANGE))
            .transpose()?,
        command_bound: asked
            .command_bound
            .as_deref()
            .map(settings::command_bound)
            .transpose()?,
    })
}

/// `my-chrome setup [--browser NAME] [settings]`: records the browser
/// chosen, if one is (it must be installed), and the settings given, then
/// runs [`setup`] and says what it did.
pub fn run(
    config: &Config,
    browser: Option<&str>,
    change: &settings::Change,
) -> Result<(), SetupError> {
    if !change.is_empty() {
        let runtime = Runtime::open(&config.runtime)?;
        // Asked with no lock held: the user's answer may take minutes.
        let widening = change.widening(&settings::load(&runtime)?);
        if !widening.is_empty() {
            let mut rows = widening.clone();
            rows.push(crate::consent::asked_by(config));
            crate::consent::ask(
                config,
                crate::consent::Asked {
                    heading: "let agents do more: change my-chrome's settings?".into(),
                    rows,
                },
            )?;
        }
        let _lock = runtime.wrapper_lock(config.lock_wait, &crate::output::waiting_for_another)?;
        if change.widening(&settings::load(&runtime)?) != widening {
            return Err(SetupError::ChangedWhileAsked);
        }
        let now = settings::record(&runtime, change)?;
        crate::output::line(&format!("my-chrome: your settings now: {}", now.describe()));
    }
    if let Some(word) = browser {
        let browser = Browser::parse(word)?;
        if crate::browser::installed_at(browser, Path::new("/")).is_none() {
            return Err(crate::browser::BrowserError::NotInstalled {
                browser,
                how: How::Asked,
                looked: crate::browser::places(browser)
                    .executables
                    .iter()
                    .map(PathBuf::from)
                    .collect(),
                confined: crate::browser::confined(&[browser], Path::new("/"), &config.home),
            }
            .into());
        }
        let runtime = Runtime::open(&config.runtime)?;
        let _lock = runtime.wrapper_lock(config.lock_wait, &crate::output::waiting_for_another)?;
        // Not under a session attached to the browser chosen before.
        if matches!(
            crate::session::state::session_state(
                &config.home,
                &runtime,
                &config.session,
                Pin::shipped().core_version()
            ),
            crate::session::state::SessionState::Ready(_)
        ) {
            return Err(SetupError::SessionOpen {
                session: config.session.clone(),
            });
        }
        crate::browser::record(&runtime, browser)?;
        crate::output::line(&format!(
            "my-chrome: {} ({}) is the browser from now on (the next `my-chrome connect` uses it)",
            browser.display(),
            browser.name()
        ));
    }
    let version = &Pin::shipped().version;
    match setup(config)? {
        Outcome::Installed { dir } => crate::output::line(&format!(
            "my-chrome: installed @playwright/cli {version} in {} and verified it",
            dir.display()
        )),
        Outcome::AlreadySupported { dir } => crate::output::line(&format!(
            "my-chrome: @playwright/cli {version} in {} is already supported; nothing changed",
            dir.display()
        )),
    }
    Ok(())
}

/// Runs setup under the wrapper lock.
pub fn setup(config: &Config) -> Result<Outcome, SetupError> {
    let runtime = Runtime::open(&config.runtime)?;
    let _lock = runtime.wrapper_lock(config.lock_wait, &crate::output::waiting_for_another)?;
    recover_abandoned(&runtime)?;

    let pin = Pin::shipped();
    let env = ChildEnv::new(config, &runtime.tmp_dir());
    let node = trusted_node(config, pin, &env)?;
    let current = Helper::at(runtime.cli_dir());
    match current.verify_and_record(pin, &node, &env, &runtime) {
        Ok(()) => {
            return Ok(Outcome::AlreadySupported {
                dir: runtime.cli_dir(),
            });
        }
        Err(
            HelperError::Missing { .. }
            | HelperError::Unsupported { .. }
            | HelperError::Older { .. },
        ) => {}
        Err(other) => return Err(other.into()),
    }
    let npm = node.npm()?;
    refuse_if_in_use(config, &runtime)?;

    let staging = stage(&runtime, pin)?;
    // npm's cache and logs in the private TMPDIR, gone after the install:
    // nothing of setup's stays in the user's home (`~/.npm`).
    let npm_cache = NpmCache::new(&runtime);
    let npm_env = config
        .proxy_vars
        .iter()
        .fold(env.clone().with_path_prefix(node.dir()), |env, (k, v)| {
            env.with(&k.to_string_lossy(), v)
        })
        .with("npm_config_cache", npm_cache.0.as_os_str());
    crate::output::notice(&format!(
        "my-chrome: installing @playwright/cli {} with {} ci ...",
        pin.version,
        npm.display()
    ));
    let finished = ChildCommand::new("npm ci", &npm, staging.path(), config.setup_timeout)
        .args([
            "ci",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--no-update-notifier",
        ])
        .stdout(Output::Streamed(Relay::new(Stream::Err).sink()))
        .stderr(Output::Streamed(Relay::new(Stream::Err).sink()))
        .run(&npm_env)
        .map_err(SetupError::NpmAborted)?;
    drop(npm_cache);
    if !finished.status.success() {
        return Err(SetupError::NpmFailed {
            status: finished.status.to_string(),
        });
    }

    let staged = Helper::at(staging.path());
    staged
        .verify(pin, &node, &env, runtime.root())
        .map_err(|e| match e {
            HelperError::Unsupported { fault, .. } => SetupError::StagedUnsupported { fault },
            other => other.into(),
        })?;
    // npm may have run for minutes: the copy we replace must still be idle,
    // and a signal that arrived after the last child must still stop us.
    if let Some(signal) = signals::pending() {
        return Err(SetupError::Interrupted { signal });
    }
    refuse_if_in_use(config, &runtime)?;
    swap_into_place(&runtime, staging)?;
    // Checked again where it now is, and recorded as that check found it.
    Helper::at(runtime.cli_dir()).verify_and_record(pin, &node, &env, &runtime)?;
    Ok(Outcome::Installed {
        dir: runtime.cli_dir(),
    })
}

/// npm's cache for one install, inside the runtime's private TMPDIR;
/// removed when dropped.
struct NpmCache(PathBuf);

impl NpmCache {
    fn new(runtime: &Runtime) -> NpmCache {
        NpmCache(runtime.tmp_dir().join(NPM_CACHE))
    }
}

impl Drop for NpmCache {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A staging directory (0700, removed when dropped) holding the shipped
/// manifest and lock.
fn stage(runtime: &Runtime, pin: &Pin) -> Result<TempDir, SetupError> {
    let staging = tempfile::Builder::new()
        .prefix(STAGING_PREFIX)
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir_in(runtime.root())
        .map_err(io_error("create a staging directory in the runtime"))?;
    fs::write(staging.path().join("package.json"), pin.package_json)
        .map_err(io_error("write package.json"))?;
    fs::write(staging.path().join("package-lock.json"), pin.package_lock)
        .map_err(io_error("write package-lock.json"))?;
    Ok(staging)
}

/// Setup must not replace code that is running: not under an open session,
/// not while any process runs code from `<runtime>/cli`.
fn refuse_if_in_use(config: &Config, runtime: &Runtime) -> Result<(), SetupError> {
    let entry =
        registry::read_entry(&config.home, runtime.root(), &config.session).map_err(|e| {
            SetupError::SessionUnreadable {
                reason: e.to_string(),
            }
        })?;
    if let Some(entry) = entry
        && entry.is_open()
    {
        return Err(SetupError::SessionOpen {
            session: config.session.clone(),
        });
    }
    let table = ProcessTable::read()?;
    let dir = runtime.cli_dir();
    let mut pids = table.using_path(&dir);
    // Processes name the tree by its real path too; not knowing it would
    // miss them.
    let real = fs::canonicalize(runtime.root()).map_err(|e| {
        SetupError::Swap(format!(
            "cannot resolve {} to look for processes running the installed copy ({e}); the \
             installed copy was left as it is",
            runtime.root().display()
        ))
    })?;
    pids.extend(table.using_path(&real.join(crate::runtime::CLI_DIR)));
    pids.sort_unstable();
    pids.dedup();
    if pids.is_empty() {
        Ok(())
    } else {
        Err(SetupError::InUse { dir, pids })
    }
}

/// Old copy aside, new copy in, old copy removed. If the new copy cannot
/// take its place, the old one goes back; if even that fails, both are kept
/// and named.
fn swap_into_place(runtime: &Runtime, staging: TempDir) -> Result<(), SetupError> {
    let cli = runtime.cli_dir();
    let aside = runtime
        .root()
        .join(format!("{ASIDE_PREFIX}{}", std::process::id()));
    let had_old = match fs::symlink_metadata(&cli) {
        Ok(_) => true,
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => return Err(io_error("inspect the installed copy")(e).into()),
    };
    if had_old {
        fs::rename(&cli, &aside).map_err(io_error("move the old copy aside"))?;
    }
    if let Err(e) = fs::rename(staging.path(), &cli) {
        if had_old && let Err(back) = fs::rename(&aside, &cli) {
            let kept = staging.keep();
            return Err(SetupError::Swap(format!(
                "could not move the new copy into place ({e}) nor the old copy back ({back}). \
                 Both are kept: the old copy at {}, the verified new copy at {}. \
                 Move one of them to {} by hand",
                aside.display(),
                kept.display(),
                cli.display()
            )));
        }
        let kept = if had_old {
            "the previous copy is unchanged"
        } else {
            "nothing was installed"
        };
        return Err(SetupError::Swap(format!(
            "could not move the new copy into place ({e}); {kept}"
        )));
    }
    // The staging path is now `cli`: nothing is left for the guard to delete.
    let _ = staging.keep();
    if had_old && let Err(e) = Helper::unseal(&aside).and_then(|()| fs::remove_dir_all(&aside)) {
        crate::output::notice(&format!(
            "my-chrome: warning: could not remove the old copy at {}: {e}",
            aside.display()
        ));
    }
    Ok(())
}

/// Under the lock, any staging or set-aside directory belongs to a setup
/// that died. A set-aside copy with no `cli` beside it is the last good
/// install of a setup killed mid-swap: it goes back first.
fn recover_abandoned(runtime: &Runtime) -> Result<(), SetupError> {
    let cli = runtime.cli_dir();
    let leftovers = leftovers(runtime.root()).map_err(io_error("list the runtime"))?;
    for path in &leftovers {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with(ASIDE_PREFIX) && fs::symlink_metadata(&cli).is_err() {
            crate::output::notice(&format!(
                "my-chrome: restoring the copy a previous setup left at {}",
                path.display()
            ));
            fs::rename(path, &cli).map_err(io_error("restore the previous copy"))?;
            continue;
        }
        crate::output::notice(&format!(
            "my-chrome: removing {} left by an earlier setup",
            path.display()
        ));
        Helper::unseal(path)
            .and_then(|()| fs::remove_dir_all(path))
            .map_err(io_error("remove an abandoned staging directory"))?;
    }
    Ok(())
}

fn leftovers(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(root)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if (name.starts_with(STAGING_PREFIX) || name.starts_with(ASIDE_PREFIX))
            && entry.file_type()?.is_dir()
        {
            out.push(entry.path());
        }
    }
    out.sort();
    Ok(out)
}
