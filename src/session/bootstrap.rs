//! The attach's private bootstrap directory and its record: created by
//! `connect`, scrubbed as soon as the attach is checked, and recovered by
//! the next command when a connect died (SIGKILL, power) before it could.

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use super::pinned::PinnedCli;
use crate::exit::Exit;
use crate::procs::{ProcError, ProcessTable};
use crate::runtime::{Runtime, RuntimeError, StateFile};

/// Why the bootstrap directory could not be made, used or recovered.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    #[error("cannot {what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    /// A record that names anything but a bootstrap directory of ours.
    #[error(
        "{} does not name a bootstrap directory of this runtime; nothing was stopped or \
         deleted. Remove it (`rm {}`) and run the command again",
        .0.display(),
        .0.display()
    )]
    ForeignRecord(PathBuf),
    /// Output that stayed (its record stays too).
    #[error("{0}")]
    Scrub(String),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Processes(#[from] ProcError),
    #[error(transparent)]
    Bound(#[from] super::bound::BoundError),
}

impl BootstrapError {
    pub fn exit(&self) -> Exit {
        match self {
            BootstrapError::ForeignRecord(_) => Exit::Security,
            BootstrapError::Runtime(e) => e.exit(),
            BootstrapError::Bound(e) => e.exit(),
            BootstrapError::Io { .. } | BootstrapError::Scrub(_) | BootstrapError::Processes(_) => {
                Exit::Failure
            }
        }
    }
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BootstrapError {
    let what = what.into();
    move |source| BootstrapError::Io { what, source }
}

const BOOTSTRAP_PREFIX: &str = "session-output.";
/// The attached session's output directory (`outputDir`), in the runtime.
pub const SESSION_OUTPUT: &str = crate::runtime::SESSION_OUTPUT;

/// The private place the attach writes to, recorded until it is scrubbed.
/// Deleted when dropped: an early failure scrubs it too. (A SIGKILL leaves
/// it, with its record, for the next command to recover.)
pub struct Bootstrap {
    dir: PathBuf,
    runtime: Runtime,
    /// The artifacts folders there before the attach (src/session/leftovers.rs).
    artifacts_before: Vec<String>,
}

impl Bootstrap {
    /// `idle`: the daemon's own idle timer (the pinned CLI's
    /// `timeouts.idle`, `session::limits::backstop`); none: it has none.
    pub fn create(runtime: &Runtime, idle: Option<Duration>) -> Result<Bootstrap, BootstrapError> {
        let dir = tempfile::Builder::new()
            .prefix(BOOTSTRAP_PREFIX)
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(runtime.root())
            .map_err(io("create the bootstrap directory"))?
            .keep();
        // What a daemon this attach starts will leave is what is new.
        let artifacts_before = super::leftovers::present(runtime);
        let record = json!({"dir": dir, "artifacts_before": artifacts_before});
        runtime.write_state(StateFile::Bootstrap, record.to_string().as_bytes())?;
        // The session's own output (snapshots, downloads) goes to a fixed
        // private directory that disconnect removes; this one is scrubbed
        // as soon as the attach is checked.
        let output_dir = runtime.root().join(SESSION_OUTPUT);
        if let Err(e) = fs::DirBuilder::new().mode(0o700).create(&output_dir)
            && e.kind() != std::io::ErrorKind::AlreadyExists
        {
            return Err(io(format!("create {}", output_dir.display()))(e));
        }
        crate::runtime::check_private_dir(&output_dir)?;
        let mut config = json!({"outputDir": output_dir});
        if let Some(idle) = idle {
            config["timeouts"] = json!({"idle": idle.as_millis() as u64});
        }
        fs::write(dir.join("attach-config.json"), config.to_string())
            .map_err(io("write the attach config"))?;
        Ok(Bootstrap {
            dir,
            runtime: runtime.clone(),
            artifacts_before,
        })
    }

    /// The artifacts folders that were there before this attach.
    pub fn artifacts_before(&self) -> &[String] {
        &self.artifacts_before
    }

    pub fn config(&self) -> PathBuf {
        self.dir.join("attach-config.json")
    }

    pub fn output(&self) -> Result<fs::File, BootstrapError> {
        fs::File::create(self.dir.join("attach-output.log"))
            .map_err(io("create the attach output file"))
    }

    /// Deletes the output (it may show the connect tab's URL), then the
    /// record. An output that could not be deleted keeps its record, so the
    /// next command's recovery tries again (and detaches, as after a connect
    /// that died): the error says why.
    pub fn scrub(self) -> Result<(), String> {
        let result = self.delete();
        std::mem::forget(self);
        result
    }

    fn delete(&self) -> Result<(), String> {
        remove_output(&self.dir)?;
        self.runtime
            .remove_state(StateFile::Bootstrap)
            .map_err(|e| e.to_string())
    }
}

impl Drop for Bootstrap {
    fn drop(&mut self) {
        // An early failure's own error is what the caller reports; a record
        // left behind is recovered by the next command.
        let _ = self.delete();
    }
}

/// Removes a bootstrap directory; one already gone counts as removed.
fn remove_output(dir: &Path) -> Result<(), String> {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!(
            "the private bootstrap output {} could not be deleted ({e}); its record stays, so \
             the next my-chrome command deletes it and detaches the session",
            dir.display()
        )),
        _ => Ok(()),
    }
}

/// A connect that died (SIGKILL, power) left its record: detach without the
/// token and scrub, before anything else happens.
/// `cli` gives the pinned CLI (finding node) only when there is something
/// to detach.
pub fn recover<'a, E: From<BootstrapError>>(
    runtime: &Runtime,
    home: &Path,
    session: &str,
    cli: impl FnOnce() -> Result<PinnedCli<'a>, E>,
) -> Result<(), E> {
    // Under the lock, any hand-off directory belongs to a connect that died.
    for entry in fs::read_dir(runtime.root()).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with("handoff.") {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
    let Some(dir) = recorded_dir(runtime).map_err(E::from)? else {
        return Ok(());
    };
    // What it started (the attach and its daemon) may still wait for the
    // extension. They carry the bootstrap directory in their arguments:
    // stop exactly those.
    let table = ProcessTable::read().map_err(BootstrapError::from)?;
    stop_processes(&table.mentioning(&dir));
    let detached = cli()?.detach();
    remove_output(&dir).map_err(BootstrapError::Scrub)?;
    // The artifacts folder its daemon made, now that the daemon is gone.
    // (A record without the list, from an earlier release, names none.)
    if let Some(before) = recorded_before(runtime)? {
        super::leftovers::remove_since(runtime, &before);
    }
    super::leftovers::remove_dead_socket(runtime, home, session);
    // The browser its daemon bound, if it got that far; after the scrub,
    // which must not wait on it. The record stays until both are done.
    super::bound::close(runtime, home).map_err(BootstrapError::from)?;
    runtime
        .remove_state(StateFile::Bootstrap)
        .map_err(BootstrapError::from)?;
    crate::output::notice(&format!(
        "my-chrome: an earlier connect was interrupted; its private output was scrubbed{}",
        if detached {
            " and its session detached"
        } else {
            ""
        }
    ));
    Ok(())
}

/// The bootstrap directory an interrupted connect recorded, checked before
/// any use: it must be a bootstrap directory of this runtime (our prefix,
/// not a link). A record naming anything else would have us stop every
/// process that mentions it: it is refused (exit 6) and nothing is touched.
pub fn recorded_dir(runtime: &Runtime) -> Result<Option<PathBuf>, BootstrapError> {
    let Some(record) = runtime.read_state(StateFile::Bootstrap)? else {
        return Ok(None);
    };
    let record: serde_json::Value = serde_json::from_slice(&record).unwrap_or_default();
    let dir = record["dir"].as_str().map(PathBuf::from).filter(|d| {
        d.parent() == Some(runtime.root())
            && d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(BOOTSTRAP_PREFIX))
            && match fs::symlink_metadata(d) {
                Ok(meta) => !meta.file_type().is_symlink(),
                // Already gone: there is only the record to remove.
                Err(e) => e.kind() == std::io::ErrorKind::NotFound,
            }
    });
    match dir {
        Some(dir) => Ok(Some(dir)),
        None => {
            let path = runtime.root().join(StateFile::Bootstrap.file_name());
            Err(BootstrapError::ForeignRecord(path))
        }
    }
}

/// The artifacts folders an interrupted connect found before its attach.
fn recorded_before(runtime: &Runtime) -> Result<Option<Vec<String>>, BootstrapError> {
    let record = runtime
        .read_state(StateFile::Bootstrap)?
        .unwrap_or_default();
    let record: serde_json::Value = serde_json::from_slice(&record).unwrap_or_default();
    let Some(names) = record["artifacts_before"].as_array() else {
        return Ok(None);
    };
    Ok(Some(
        names
            .iter()
            .filter_map(|n| n.as_str().map(String::from))
            .collect(),
    ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::os::unix::process::ExitStatusExt;

    fn record(runtime: &Runtime, value: serde_json::Value) {
        runtime
            .write_state(StateFile::Bootstrap, value.to_string().as_bytes())
            .unwrap();
    }

    #[test]
    fn the_attach_config_carries_the_daemons_own_idle_timer_only_when_there_is_one() {
        let (_home, runtime) = crate::runtime::scratch();
        let config = |idle| {
            let bootstrap = Bootstrap::create(&runtime, idle).unwrap();
            let text = fs::read_to_string(bootstrap.config()).unwrap();
            serde_json::from_str::<serde_json::Value>(&text).unwrap()
        };
        let timed = config(Some(Duration::from_secs(4230)));
        assert_eq!(timed["timeouts"]["idle"], 4_230_000, "{timed}");
        assert!(
            timed["outputDir"]
                .as_str()
                .unwrap()
                .ends_with(SESSION_OUTPUT)
        );
        let never = config(None);
        assert!(never.get("timeouts").is_none(), "{never}");
    }

    #[test]
    fn a_bootstrap_is_private_recorded_and_scrubbed_with_its_record() {
        let (_home, runtime) = crate::runtime::scratch();
        fs::create_dir(runtime.tmp_dir().join("playwright-artifacts-OLD111")).unwrap();
        let bootstrap = Bootstrap::create(&runtime, None).unwrap();
        let dir = bootstrap.dir.clone();
        assert_eq!(dir.parent(), Some(runtime.root()));
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o7777, 0o700);
        assert_eq!(recorded_dir(&runtime).unwrap(), Some(dir.clone()));
        assert_eq!(
            bootstrap.artifacts_before(),
            ["playwright-artifacts-OLD111"]
        );
        assert_eq!(
            recorded_before(&runtime).unwrap().unwrap(),
            ["playwright-artifacts-OLD111"]
        );
        let output = runtime.root().join(SESSION_OUTPUT);
        assert_eq!(fs::metadata(&output).unwrap().mode() & 0o7777, 0o700);
        let config: serde_json::Value =
            serde_json::from_slice(&fs::read(bootstrap.config()).unwrap()).unwrap();
        assert_eq!(config, json!({"outputDir": output}));
        drop(bootstrap.output().unwrap());
        bootstrap.scrub().unwrap();
        assert!(!dir.exists());
        assert_eq!(recorded_dir(&runtime).unwrap(), None);
        // Dropped after an early failure: scrubbed the same.
        let bootstrap = Bootstrap::create(&runtime, None).unwrap();
        let dir = bootstrap.dir.clone();
        drop(bootstrap);
        assert!(!dir.exists());
        assert_eq!(runtime.read_state(StateFile::Bootstrap).unwrap(), None);
    }

    #[test]
    fn output_that_cannot_be_deleted_keeps_its_record_and_is_said() {
        let (_home, runtime) = crate::runtime::scratch();
        let bootstrap = Bootstrap::create(&runtime, None).unwrap();
        // Its folder became a file: remove_dir_all fails (ENOTDIR).
        fs::remove_dir_all(&bootstrap.dir).unwrap();
        fs::write(&bootstrap.dir, "x").unwrap();
        let said = bootstrap.scrub().unwrap_err();
        assert!(said.contains("could not be deleted"), "{said}");
        assert!(runtime.read_state(StateFile::Bootstrap).unwrap().is_some());
    }

    #[test]
    fn a_shared_session_output_folder_stops_the_bootstrap() {
        let (_home, runtime) = crate::runtime::scratch();
        let output = runtime.root().join(SESSION_OUTPUT);
        fs::create_dir(&output).unwrap();
        fs::set_permissions(&output, fs::Permissions::from_mode(0o755)).unwrap();
        let error = Bootstrap::create(&runtime, None).err().unwrap();
        assert_eq!(error.exit(), Exit::Security, "{error}");
    }

    #[test]
    fn a_record_naming_anything_but_a_bootstrap_folder_of_ours_is_refused() {
        let (home, runtime) = crate::runtime::scratch();
        let root = runtime.root().to_path_buf();
        let ours = root.join(format!("{BOOTSTRAP_PREFIX}abc"));
        fs::create_dir(&ours).unwrap();
        record(&runtime, json!({"dir": ours}));
        assert_eq!(recorded_dir(&runtime).unwrap(), Some(ours.clone()));
        // Gone already: only the record is left to remove.
        let gone = root.join(format!("{BOOTSTRAP_PREFIX}gone"));
        record(&runtime, json!({"dir": gone}));
        assert_eq!(recorded_dir(&runtime).unwrap(), Some(gone));
        let link = root.join(format!("{BOOTSTRAP_PREFIX}link"));
        std::os::unix::fs::symlink(home.path(), &link).unwrap();
        let outside = home.path().join(format!("{BOOTSTRAP_PREFIX}abc"));
        fs::create_dir(&outside).unwrap();
        for bad in [
            json!({"dir": link}),
            json!({"dir": outside}),
            json!({"dir": ours.join("deeper")}),
            json!({"dir": root.join("tmp")}),
            json!({"dir": 7}),
            json!({}),
        ] {
            record(&runtime, bad.clone());
            let error = recorded_dir(&runtime).unwrap_err();
            assert!(matches!(error, BootstrapError::ForeignRecord(_)), "{bad}");
            assert_eq!(error.exit(), Exit::Security);
        }
        runtime
            .write_state(StateFile::Bootstrap, b"not json")
            .unwrap();
        assert!(matches!(
            recorded_dir(&runtime),
            Err(BootstrapError::ForeignRecord(_))
        ));
        // An earlier release's record lists no folders.
        record(&runtime, json!({"dir": ours}));
        assert_eq!(recorded_before(&runtime).unwrap(), None);
        record(
            &runtime,
            json!({"dir": ours, "artifacts_before": ["a", 1, "b"]}),
        );
        assert_eq!(recorded_before(&runtime).unwrap().unwrap(), ["a", "b"]);
    }

    #[test]
    fn a_foreign_bound_browser_entry_keeps_its_own_exit() {
        let foreign = BootstrapError::from(crate::session::bound::BoundError::Foreign {
            paths: vec![PathBuf::from("/x")],
            why: "not ours".into(),
        });
        assert_eq!(foreign.exit(), Exit::Security);
    }

    #[test]
    fn output_already_gone_is_removed_and_output_that_cannot_go_is_said() {
        let (_home, runtime) = crate::runtime::scratch();
        assert_eq!(remove_output(&runtime.root().join("none")), Ok(()));
        let file = runtime.root().join("a-file");
        fs::write(&file, "x").unwrap();
        let said = remove_output(&file).unwrap_err();
        assert!(said.contains("could not be deleted"), "{said}");
    }

    /// A child reaped the moment it ends (as an orphan is by init), and how
    /// it ended.
    fn reaped(
        mut command: std::process::Command,
    ) -> (u32, std::thread::JoinHandle<std::process::ExitStatus>) {
        let mut child = command.spawn().unwrap();
        let pid = child.id();
        let waiter = std::thread::spawn(move || child.wait().unwrap());
        (pid, waiter)
    }

    fn until(what: &str, done: impl Fn() -> bool) {
        let started = Instant::now();
        while !done() {
            assert!(started.elapsed() < Duration::from_secs(10), "{what}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn what_a_dead_connect_started_gets_sigint_and_time_to_end_then_sigkill() {
        // Ends on SIGINT, once its current second is over.
        let (polite, polite_end) = reaped({
            use std::os::unix::process::CommandExt;
            let mut c = std::process::Command::new("sh");
            c.args(["-c", "trap 'exit 7' INT; while :; do sleep 1; done"]);
            // A test run started in the background ignores SIGINT, which a
            // shell could then not trap: this one takes it as it comes.
            // SAFETY: only an async-signal-safe call between fork and exec.
            #[allow(unsafe_code)]
            unsafe {
                c.pre_exec(|| {
                    use nix::sys::signal::{SigHandler, Signal, signal};
                    signal(Signal::SIGINT, SigHandler::SigDfl)
                        .map(drop)
                        .map_err(std::io::Error::from)
                });
            }
            c
        });
        // Ignores SIGINT.
        let mut deaf_shell = std::process::Command::new("sh");
        deaf_shell.args(["-c", "trap '' INT; exec sleep 30"]);
        let (deaf, deaf_end) = reaped(deaf_shell);
        // Both past their traps: the loop runs, the shell became sleep.
        until("the loop never started", || {
            fs::read_to_string(format!("/proc/{polite}/task/{polite}/children"))
                .is_ok_and(|c| !c.trim().is_empty())
        });
        until("sh never became sleep", || {
            fs::read_to_string(format!("/proc/{deaf}/comm")).unwrap() == "sleep\n"
        });
        stop_processes(&[polite, deaf]);
        assert_eq!(polite_end.join().unwrap().code(), Some(7));
        assert_eq!(deaf_end.join().unwrap().signal(), Some(nix::libc::SIGKILL));
    }
}
