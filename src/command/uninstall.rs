//! `my-chrome uninstall [--forget-token] [--dry-run]`: undoes what
//! my-chrome installed. In this order: every tree it would remove is
//! surveyed first (a refusal removes nothing); the token is deleted, only
//! when asked; the session is detached as `disconnect` detaches it, under
//! its turn and the wrapper lock, both held to the end; the session's
//! watcher is let finish; then the skill copies `scripts/install.sh`
//! recorded, the runtime and the daemon's registry folder for it are
//! removed (src/removal.rs). It says what it leaves and how to remove that:
//! this program, the extension in the browser, the token unless asked.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::command::disconnect;
use crate::command::setup::sealed_place;
use crate::command::start::{Start, Started};
use crate::config::Config;
use crate::error::{CommandRefusal, Error};
use crate::exit::Exit;
use crate::helper::HelperError;
use crate::helper::check::Check;
use crate::installed::{self, Record, SkillCopy};
use crate::procs::ProcessTable;
use crate::removal::{self, RemovalError, Survey};
use crate::runtime::{FileLock, Runtime};
use crate::session::state::SessionState;
use crate::session::{SessionError, limits, registry};
use crate::token::keyring;

/// How long uninstall lets the session's watcher notice that its session
/// is gone (it looks every second) before the runtime goes.
const WATCHER_ENDS_WITHIN: Duration = Duration::from_secs(5);

/// What `uninstall` was asked.
#[derive(Clone, Copy, Debug)]
pub struct Asked {
    pub forget_token: bool,
    pub dry_run: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum UninstallError {
    #[error(
        "cannot read or rewrite {}, the record of what scripts/install.sh installed ({source}); \
         {done}. Fix or remove that file, then run `my-chrome uninstall` again",
        .path.display()
    )]
    Record {
        path: PathBuf,
        source: std::io::Error,
        done: &'static str,
    },
}

impl CommandRefusal for UninstallError {
    fn exit(&self) -> Exit {
        match self {
            UninstallError::Record { .. } => Exit::Failure,
        }
    }
}

/// What there is to remove, surveyed.
struct Plan {
    runtime: Option<(Runtime, Survey)>,
    /// The Playwright daemon's registry folder for this runtime.
    registry: Option<Survey>,
    skills: Vec<(SkillCopy, Survey)>,
    /// Recorded copies that no longer hold the skill: left as they are.
    changed: Vec<SkillCopy>,
    record: Record,
}

pub fn uninstall(config: &Config, asked: Asked) -> Result<(), Error> {
    let plan = survey(config)?;
    let token = keyring::configured(config);
    if asked.dry_run {
        crate::output::line(&dry_run(config, &plan, asked, &token));
        return Ok(());
    }
    let mut said = Vec::new();
    // First, so that a keyring that cannot be reached leaves everything else
    // as it was.
    if asked.forget_token {
        said.push(if token.delete()? {
            format!(
                "my-chrome: deleted the extension token ({})",
                token.describe()
            )
        } else {
            format!(
                "my-chrome: no extension token was stored ({})",
                token.describe()
            )
        });
    }
    let Plan {
        runtime,
        skills,
        changed,
        mut record,
        ..
    } = plan;
    let held = match &runtime {
        Some((runtime, _)) => Some(let_go(config, runtime, &mut said)?),
        None => None,
    };
    let mut removed = Vec::new();
    for (copy, tree) in skills {
        tree.remove()?;
        said.push(format!(
            "my-chrome: removed the skill for {} in {}",
            copy.agent,
            copy.path.display()
        ));
        removed.push(copy.path);
    }
    if !removed.is_empty() {
        record
            .forget(&removed)
            .map_err(|source| UninstallError::Record {
                path: installed::record_path(&config.home),
                source,
                done: "the skill copies are removed, the runtime is not",
            })?;
    }
    if let Some((runtime, _)) = runtime {
        // Surveyed again: the detach changed the tree, and nothing may run
        // from it now (the turn and the wrapper lock are held).
        let registry = registry_survey(config, &runtime)?;
        if let Some(tree) = removal::survey(runtime.root(), &sealed_place)? {
            tree.remove()?;
            said.push(format!(
                "my-chrome: removed the runtime {} (the pinned CLI, the session's state and logs)",
                runtime.root().display()
            ));
        }
        if let Some(tree) = registry {
            let path = tree.root().to_path_buf();
            tree.remove()?;
            // `ms-playwright/daemon` and `ms-playwright`, when that left them
            // empty: an empty folder holds nothing of anyone's.
            for dir in path.ancestors().skip(1).take(2) {
                let _ = std::fs::remove_dir(dir);
            }
            said.push(format!(
                "my-chrome: removed {} (the Playwright daemon's record of that runtime)",
                path.display()
            ));
        }
    }
    drop(held);
    if said.is_empty() {
        said.push(nothing_to_remove(config));
    }
    said.extend(left("left", &changed, &token, asked));
    crate::output::line(&said.join("\n"));
    Ok(())
}

/// Every tree uninstall would remove, surveyed; nothing is changed.
fn survey(config: &Config) -> Result<Plan, Error> {
    // A runtime that is not my-chrome's, or not the user's, is refused here
    // as every command refuses it (exit 6).
    let runtime = match Runtime::inspect(&config.runtime)? {
        Some(runtime) => {
            let tree = removal::survey(runtime.root(), &sealed_place)?;
            tree.map(|tree| (runtime, tree))
        }
        None => None,
    };
    let registry = match &runtime {
        Some((runtime, _)) => registry_survey(config, runtime)?,
        None => None,
    };
    let record = Record::read(&config.home).map_err(|source| UninstallError::Record {
        path: installed::record_path(&config.home),
        source,
        done: "nothing was removed",
    })?;
    let (mut skills, mut changed) = (Vec::new(), Vec::new());
    for copy in record.skill_copies(&config.home) {
        if !installed::holds_the_skill(&copy.path) {
            changed.push(copy);
            continue;
        }
        match removal::survey(&copy.path, &|_| false)? {
            Some(tree) => skills.push((copy, tree)),
            None => changed.push(copy),
        }
    }
    Ok(Plan {
        runtime,
        registry,
        skills,
        changed,
        record,
    })
}

/// The folder where the pinned CLI registers this runtime's sessions
/// (`~/.cache/ms-playwright/daemon/<hash of the runtime>`), surveyed.
fn registry_survey(config: &Config, runtime: &Runtime) -> Result<Option<Survey>, Error> {
    let dir =
        registry::daemon_dir(&config.home, runtime.root()).map_err(|source| RemovalError::Io {
            action: "resolve",
            path: runtime.root().to_path_buf(),
            source,
        })?;
    Ok(removal::survey(&dir, &|_| false)?)
}

/// What holds the session still while the runtime goes: its turn and the
/// wrapper lock.
/// Held, never read: dropping it lets other commands go on.
enum Held {
    Turn { _started: Box<Started> },
    Lock { _lock: FileLock },
}

/// Detaches the session as `disconnect` does, keeping its turn and the
/// wrapper lock; without an installed copy to run, there is no session,
/// and the wrapper lock alone is taken.
fn let_go(config: &Config, runtime: &Runtime, said: &mut Vec<String>) -> Result<Held, Error> {
    let start = Start::new(config, Check::Intact)
        .ending_waits()
        .turn("uninstall")
        .locked()
        .beyond_limits()
        .open();
    let started = match start {
        Ok(started) => started,
        Err(Error::Helper(
            HelperError::Missing { .. }
            | HelperError::Unsupported { .. }
            | HelperError::Changed { .. },
        )) => {
            let lock =
                runtime.wrapper_lock(config.lock_wait, &crate::output::waiting_for_another)?;
            // A copy changed since its check runs none of its code: a daemon
            // of it is asked to stop through its own socket.
            if disconnect::stop_through_socket(config, runtime) == Some(true) {
                said.push(format!(
                    "my-chrome: session {} was stopped through its daemon's socket; the browser \
                     keeps running",
                    config.session
                ));
            }
            return Ok(Held::Lock { _lock: lock });
        }
        Err(e) => return Err(e),
    };
    let watcher = limits::read(&started.runtime).map_err(SessionError::from)?;
    if !matches!(started.session_state(), SessionState::Missing) {
        said.push(started.detaching()?.run()?);
    }
    limits::forget(&started.runtime).map_err(SessionError::from)?;
    // The watcher ends once the limits no longer name it; until then it
    // could open the runtime again.
    if let Some(limits) = watcher {
        let until = Instant::now() + WATCHER_ENDS_WITHIN;
        while Instant::now() < until && limits::watcher_runs(&limits, &ProcessTable::read()?) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    Ok(Held::Turn {
        _started: Box::new(started),
    })
}

fn nothing_to_remove(config: &Config) -> String {
    format!(
        "my-chrome: nothing of my-chrome's to remove: no runtime at {}, and no skill copy that \
         scripts/install.sh recorded",
        config.runtime.path.display()
    )
}

/// What uninstall leaves, and how to remove each.
fn left(
    verb: &str,
    changed: &[SkillCopy],
    token: &crate::token::store::Store,
    asked: Asked,
) -> Vec<String> {
    let mut out = Vec::new();
    if !asked.forget_token {
        match token.exists() {
            Ok(false) => {}
            Ok(true) => out.push(format!(
                "my-chrome: {verb} the extension token ({}): `my-chrome uninstall --forget-token` \
                 deletes it",
                token.describe()
            )),
            Err(_) => out.push(format!(
                "my-chrome: {verb} the extension token, if one is stored ({}): `my-chrome uninstall \
                 --forget-token` deletes it",
                token.describe()
            )),
        }
    }
    for copy in changed {
        out.push(format!(
            "my-chrome: {verb} {}: scripts/install.sh recorded the skill for {} there, but it no \
             longer holds that copy; remove it yourself if it is not yours",
            copy.path.display(),
            copy.agent
        ));
    }
    let me = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "my-chrome".into());
    out.push(format!(
        "my-chrome: {verb} this program, {me}: `scripts/install.sh --uninstall` removes it if that \
         script installed it; otherwise delete the file"
    ));
    out.push(format!(
        "my-chrome: {verb} the Playwright Extension in your browser: remove it on the browser's \
         extensions page (chrome://extensions)"
    ));
    out
}

fn dry_run(
    config: &Config,
    plan: &Plan,
    asked: Asked,
    token: &crate::token::store::Store,
) -> String {
    let mut would = Vec::new();
    if let Some((runtime, tree)) = &plan.runtime {
        if session_open(config, runtime.root()) {
            would.push(format!(
                "  detach session {} (the browser keeps running)",
                config.session
            ));
        }
        would.push(format!(
            "  remove the runtime {} ({} entries: the pinned CLI, the session's state and logs)",
            runtime.root().display(),
            tree.entries()
        ));
    }
    if let Some(tree) = &plan.registry {
        would.push(format!(
            "  remove {} (the Playwright daemon's record of that runtime)",
            tree.root().display()
        ));
    }
    for (copy, _) in &plan.skills {
        would.push(format!(
            "  remove the skill for {} in {} (installed by scripts/install.sh)",
            copy.agent,
            copy.path.display()
        ));
    }
    if asked.forget_token {
        would.push(format!(
            "  delete the extension token ({})",
            token.describe()
        ));
    }
    let head = if would.is_empty() {
        nothing_to_remove(config)
    } else {
        format!(
            "my-chrome: uninstall --dry-run changed nothing; without --dry-run it would\n{}",
            would.join("\n")
        )
    };
    let mut out = vec![head];
    out.extend(left("would leave", &plan.changed, token, asked));
    out.join("\n")
}

/// Whether the registry names an open session for this runtime.
fn session_open(config: &Config, root: &Path) -> bool {
    registry::read_entry(&config.home, root, &config.session)
        .ok()
        .flatten()
        .is_some_and(|entry| entry.is_open())
}
