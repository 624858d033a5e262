//! `my-chrome uninstall [--forget-token] [--dry-run]`: undoes what
//! my-chrome installed (docs/DESIGN.md, "Uninstall"). In this order:
//! every tree it would remove is surveyed (a refusal removes nothing); the
//! session is detached as `disconnect` detaches it, under its turn and the
//! wrapper lock, both held to the end, and its watcher let finish;
//! everything is surveyed again (the same folders, still passing); then
//! the skill copies `scripts/install.sh` recorded, the daemon's registry
//! folder and the runtime are removed (the runtime first renamed aside, so
//! that no command finds it half-removed and a run cut short is finished
//! by the next, its claim going last); the token last, only when asked.
//! Each step is said as it is done; what stays is said at the end.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::command::disconnect;
use crate::command::ending::{self, AtWork};
use crate::config::Config;
use crate::error::{Error, lifts_core};
use crate::exit::Exit;
use crate::helper::HelperError;
use crate::helper::check::Check;
use crate::installed::{self, Record, SkillCopy};
use crate::lease::Kind;
use crate::operation::start::{Start, Turn};
use crate::output;
use crate::procs::ProcessTable;
use crate::removal::{self, Identity, RemovalError, Rules, Survey};
use crate::runtime::{self, FileLock, Runtime};
use crate::session::state::SessionState;
use crate::session::{SessionError, limits, registry};
use crate::token::keyring;
use crate::token::store::Store;

/// How long uninstall lets the session's watcher notice that its session
/// is gone (it looks every second) before the runtime goes.
const WATCHER_ENDS_WITHIN: Duration = Duration::from_secs(5);

/// A runtime: only names my-chrome makes at its top, sealed only where
/// setup seals.
const RUNTIME: Rules<'static> = Rules {
    sealed: &runtime::sealed_place,
    top_level: Some(&runtime::made_here),
};

/// What `uninstall` was asked.
#[derive(Clone, Copy, Debug)]
pub struct Asked {
    pub forget_token: bool,
    pub dry_run: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum UninstallError {
    /// What it met below it.
    #[error(transparent)]
    Core(Error),
    #[error(transparent)]
    Removal(#[from] RemovalError),
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
    #[error(
        "{} changed while uninstall waited for the session's turn; nothing was removed. Run \
         `my-chrome uninstall` again",
        .0.display()
    )]
    Changed(PathBuf),
    #[error(
        "{}: a folder by the name an interrupted uninstall gives the runtime, but it carries no \
         my-chrome claim and is not empty, so it is not my-chrome's; nothing was removed. Move \
         or remove it yourself, then run `my-chrome uninstall` again",
        .0.display()
    )]
    Unclaimed(PathBuf),
}

impl UninstallError {
    pub fn exit(&self) -> Exit {
        match self {
            UninstallError::Core(e) => e.exit(),
            UninstallError::Removal(e) => e.exit(),
            UninstallError::Record { .. } => Exit::Failure,
            UninstallError::Changed(_) | UninstallError::Unclaimed(_) => Exit::Security,
        }
    }
}

lifts_core!(UninstallError);

/// What there is to remove, surveyed.
struct Plan {
    runtime: Option<(Runtime, Survey)>,
    /// A folder at the runtime's place without a claim, empty: not ours.
    unclaimed: Option<PathBuf>,
    /// The runtime an interrupted uninstall renamed aside.
    aside: Option<Survey>,
    /// The Playwright daemon's registry folder for the runtime.
    registry: Option<Survey>,
    skills: Vec<(SkillCopy, Survey)>,
    /// Recorded copies that no longer hold the skill: left as they are.
    changed: Vec<SkillCopy>,
    /// Recorded copies that are no longer there: dropped from the record.
    gone: Vec<SkillCopy>,
    record: Record,
}

impl Plan {
    fn is_empty(&self) -> bool {
        self.runtime.is_none()
            && self.aside.is_none()
            && self.registry.is_none()
            && self.skills.is_empty()
            && self.gone.is_empty()
    }

    /// The folders this plan would remove, each with what it is now.
    fn identities(&self) -> Vec<(PathBuf, Identity)> {
        let trees = self
            .runtime
            .iter()
            .map(|(_, tree)| tree)
            .chain(&self.aside)
            .chain(&self.registry)
            .chain(self.skills.iter().map(|(_, tree)| tree));
        trees
            .map(|tree| (tree.root().to_path_buf(), tree.identity()))
            .collect()
    }
}

pub fn uninstall(config: &Config, asked: Asked) -> Result<(), UninstallError> {
    let plan = survey(config)?;
    let token = keyring::configured(config);
    if asked.dry_run {
        output::line(&dry_run(config, &plan, asked, &token));
        return Ok(());
    }
    // Deleting the token is the user's step (as `token forget`), and so is
    // forgetting whose files are whose (after it, any agent reads what
    // another's commands saved): asked before anything is removed, so a
    // refusal leaves everything.
    let user_asked = asked.forget_token && token.exists()?;
    let agents_files = agents_files(&plan);
    // Other agents' work ends with the session it detaches.
    let at_work = ending::at_work_now(config);
    if user_asked || agents_files > 0 || !at_work.is_empty() {
        let mut rows = ending::rows(&at_work);
        if user_asked {
            rows.push(("Deleted from".into(), token.describe()));
        }
        if agents_files > 0 {
            rows.push((
                "Forgotten".into(),
                format!(
                    "which agent's command wrote which of {agents_files} files and folders still \
                     on disk (in /tmp and your file roots): any agent may read or replace them \
                     after"
                ),
            ));
        }
        rows.push(crate::consent::asked_by(config));
        let heading = if user_asked {
            "uninstall my-chrome and delete the token it connects with?"
        } else {
            "uninstall my-chrome?"
        };
        let asked = crate::consent::Asked {
            heading: heading.into(),
            rows,
        };
        crate::consent::ask(config, asked).map_err(Error::from)?;
    }
    if plan.is_empty() {
        output::line(&nothing_to_remove(config));
    } else {
        let held = match &plan.runtime {
            Some((runtime, _)) => Some(let_go(config, runtime, &at_work)?),
            None => None,
        };
        // Surveyed again, now that nothing of ours runs: the same folders,
        // still passing, or nothing goes.
        let plan = {
            let again = survey(config)?;
            if let Some((path, _)) = plan
                .identities()
                .into_iter()
                .find(|(path, was)| Identity::of(path) != Some(*was))
            {
                return Err(UninstallError::Changed(path));
            }
            again
        };
        remove(config, plan)?;
        drop(held);
    }
    if asked.forget_token && !user_asked && token.exists()? {
        // Stored while uninstall ran, after it found none: the user was not
        // asked about this one, so it stays.
        output::line(&format!(
            "my-chrome: a token was stored while uninstall ran ({}); it was left: deleting it \
             is the user's step (`my-chrome token forget` asks them)",
            token.describe()
        ));
    } else if asked.forget_token {
        // The one a replacement kept goes with it (the user was asked).
        if user_asked {
            let previous = keyring::previous(config);
            if let Ok(true) = previous.delete() {
                output::line(&format!(
                    "my-chrome: deleted the previous token ({})",
                    previous.describe()
                ));
            }
        }
        let deleted = match token.delete() {
            Ok(deleted) => deleted,
            Err(e) => {
                // Everything else is done: said, with what stays.
                output::line(&left("left", &plan, &token, asked).join("\n"));
                return Err(e.into());
            }
        };
        output::line(&if deleted {
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
    output::line(&left("left", &plan, &token, asked).join("\n"));
    Ok(())
}

/// How many files and folders agents' commands made are on record and
/// still there (a record that cannot be read counts as some: it is not
/// forgotten unasked).
fn agents_files(plan: &Plan) -> usize {
    plan.runtime.as_ref().map_or(0, |(runtime, _)| {
        crate::file_owners::FileOwners::read(runtime).map_or(1, |record| record.live())
    })
}

/// Removes what `plan` surveyed, saying each step as it is done.
fn remove(config: &Config, plan: Plan) -> Result<(), UninstallError> {
    let Plan {
        runtime,
        aside,
        registry,
        skills,
        gone,
        mut record,
        ..
    } = plan;
    let mut forget: Vec<PathBuf> = gone.into_iter().map(|copy| copy.path).collect();
    for (copy, tree) in skills {
        // Its marks last: cut short, what is left is still known as the skill.
        tree.remove(&["BINARY", "SKILL.md"])?;
        output::line(&format!(
            "my-chrome: removed the skill for {} in {}",
            copy.agent,
            copy.path.display()
        ));
        forget.push(copy.path);
    }
    if !forget.is_empty() {
        record
            .forget(&forget)
            .map_err(|source| UninstallError::Record {
                path: installed::record_path(&config.home),
                source,
                done: "the skill copies said above are removed, the runtime is not",
            })?;
    }
    if let Some(tree) = registry {
        let path = tree.root().to_path_buf();
        tree.remove(&[])?;
        output::line(&format!(
            "my-chrome: removed {} (the Playwright daemon's record of the runtime)",
            path.display()
        ));
    }
    if let Some(tree) = aside {
        let path = tree.root().to_path_buf();
        tree.remove(&[runtime::CLAIM_FILE])?;
        output::line(&format!(
            "my-chrome: removed {}, which an interrupted uninstall had left",
            path.display()
        ));
    }
    if let Some((runtime, tree)) = runtime {
        // Renamed aside first: a command that waited for the lock finds
        // its runtime gone (and says so), not half of it.
        let aside = aside_path(runtime.root());
        std::fs::rename(runtime.root(), &aside).map_err(|source| RemovalError::Io {
            action: "move aside",
            path: runtime.root().to_path_buf(),
            source,
        })?;
        tree.moved_to(&aside).remove(&[runtime::CLAIM_FILE])?;
        output::line(&format!(
            "my-chrome: removed the runtime {} (the pinned CLI, the session's state and logs)",
            runtime.root().display()
        ));
    }
    Ok(())
}

/// Where uninstall moves the runtime while it removes it:
/// `<parent>/.<name>.uninstalling`.
fn aside_path(root: &Path) -> PathBuf {
    let name = root.file_name().unwrap_or_default().to_string_lossy();
    root.with_file_name(format!(".{name}.uninstalling"))
}

/// Every tree uninstall would remove, surveyed; nothing is changed.
fn survey(config: &Config) -> Result<Plan, UninstallError> {
    let location = &config.runtime.path;
    // A runtime that is not my-chrome's, or not the user's, is refused here
    // as every command refuses it (exit 6).
    let (runtime, unclaimed) = match Runtime::inspect(&config.runtime)? {
        Some(rt) if runtime::claimed(rt.root())? => {
            let tree = removal::survey(rt.root(), &RUNTIME)?;
            (tree.map(|tree| (rt, tree)), None)
        }
        Some(rt) => (None, Some(rt.root().to_path_buf())),
        None => (None, None),
    };
    let aside_at = aside_path(location);
    // Ours when it carries the claim, or holds nothing at all (cut short
    // after the claim went).
    let holds_anything = std::fs::read_dir(&aside_at).is_ok_and(|mut d| d.next().is_some());
    if holds_anything && !runtime::claimed(&aside_at)? {
        return Err(UninstallError::Unclaimed(aside_at));
    }
    let aside = removal::survey(&aside_at, &RUNTIME)?;
    // The runtime's real path names its registry folder, even when the
    // runtime is gone (an interrupted uninstall).
    let registry = match location
        .parent()
        .and_then(|parent| std::fs::canonicalize(parent).ok())
    {
        Some(parent) => {
            let real = parent.join(location.file_name().unwrap_or_default());
            removal::survey(
                &registry::daemon_dir_of_real(&config.home, &real),
                &Rules::PLAIN,
            )?
        }
        None => None,
    };
    let record = Record::read(&config.home).map_err(|source| UninstallError::Record {
        path: installed::record_path(&config.home),
        source,
        done: "nothing was removed",
    })?;
    let (mut skills, mut changed, mut gone) = (Vec::new(), Vec::new(), Vec::new());
    for copy in record.skill_copies(&config.home) {
        if std::fs::symlink_metadata(&copy.path).is_err() {
            gone.push(copy);
        } else if !installed::holds_the_skill(&copy.path) {
            changed.push(copy);
        } else if let Some(tree) = removal::survey(&copy.path, &Rules::PLAIN)? {
            skills.push((copy, tree));
        }
    }
    Ok(Plan {
        runtime,
        unclaimed,
        aside,
        registry,
        skills,
        changed,
        gone,
        record,
    })
}

/// What holds the session still while the runtime goes: its turn and the
/// wrapper lock. Held, never read: dropping it lets other commands go on
/// (and find the runtime gone).
enum Held {
    Turn { _started: Box<Turn> },
    Lock { _lock: FileLock },
}

/// Detaches the session as `disconnect` does, saying so, and keeps its
/// turn and the wrapper lock; without an installed copy to run, there is
/// no session, and the wrapper lock alone is taken.
fn let_go(config: &Config, runtime: &Runtime, asked: &AtWork) -> Result<Held, UninstallError> {
    let start = Start::new(config, Check::Intact)
        .ending_waits()
        .open_turn("uninstall", Kind::Session);
    let started = match start {
        Ok(started) => started,
        Err(Error::Helper(
            HelperError::Missing { .. }
            | HelperError::Unsupported { .. }
            | HelperError::Changed { .. },
        )) => {
            let lock = runtime.wrapper_lock(config.lock_wait, &output::waiting_for_another)?;
            // A copy changed since its check runs none of its code: a daemon
            // of it is asked to stop through its own socket.
            if disconnect::stop_through_socket(config, runtime) == Some(true) {
                output::line(&format!(
                    "my-chrome: session {} was stopped through its daemon's socket; the browser \
                     keeps running",
                    config.session
                ));
            }
            return Ok(Held::Lock { _lock: lock });
        }
        Err(e) => return Err(e.into()),
    };
    ending::still_as_asked(&ending::at_work_now(config), asked).map_err(Error::from)?;
    let watcher = limits::read(&started.runtime).map_err(SessionError::from)?;
    if !matches!(started.session_state(), SessionState::Missing) {
        output::line(&started.detaching()?.run()?);
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
        "my-chrome: nothing of my-chrome's to remove: no runtime at {}, and no skill copy of \
         scripts/install.sh's",
        config.runtime.path.display()
    )
}

/// What uninstall leaves, and how to remove each.
fn left(verb: &str, plan: &Plan, token: &Store, asked: Asked) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(path) = &plan.unclaimed {
        out.push(format!(
            "my-chrome: {verb} {}: an empty folder without my-chrome's claim, not its to remove",
            path.display()
        ));
    }
    if !asked.forget_token {
        match token.exists() {
            Ok(false) => {}
            Ok(true) => out.push(format!(
                "my-chrome: {verb} the extension token ({}): `my-chrome uninstall --forget-token` \
                 deletes it",
                token.describe()
            )),
            Err(_) => out.push(format!(
                "my-chrome: {verb} the extension token, if one is stored ({}): `my-chrome \
                 uninstall --forget-token` deletes it",
                token.describe()
            )),
        }
    }
    for copy in &plan.changed {
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

fn dry_run(config: &Config, plan: &Plan, asked: Asked, token: &Store) -> String {
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
    if let Some(tree) = &plan.aside {
        would.push(format!(
            "  remove {}, which an interrupted uninstall left",
            tree.root().display()
        ));
    }
    if let Some(tree) = &plan.registry {
        would.push(format!(
            "  remove {} (the Playwright daemon's record of the runtime)",
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
    for copy in &plan.gone {
        would.push(format!(
            "  forget {}, recorded by scripts/install.sh and gone since",
            copy.path.display()
        ));
    }
    let agents_files = agents_files(plan);
    if agents_files > 0 {
        would.push(format!(
            "  first ask you in your browser, since it forgets which agent's command wrote which \
             of {agents_files} files and folders still on disk"
        ));
    }
    let at_work = ending::at_work_now(config);
    if !at_work.is_empty() {
        let whose: Vec<String> = ending::rows(&at_work)
            .into_iter()
            .map(|(who, what)| format!("{who} {what}"))
            .collect();
        would.push(format!(
            "  first ask you in your browser, since the session it detaches ends other agents' \
             work ({})",
            whose.join("; ")
        ));
    }
    if asked.forget_token {
        would.push(match token.exists() {
            Ok(true) => format!("  delete the extension token ({})", token.describe()),
            Ok(false) => format!("  find no extension token to delete ({})", token.describe()),
            Err(e) => format!("  fail to delete the extension token: {e}"),
        });
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
    out.extend(left("would leave", plan, token, asked));
    out.join("\n")
}

/// Whether the registry names an open session for this runtime.
fn session_open(config: &Config, root: &Path) -> bool {
    registry::read_entry(&config.home, root, &config.session)
        .ok()
        .flatten()
        .is_some_and(|entry| entry.is_open())
}
