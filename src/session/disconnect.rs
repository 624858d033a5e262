//! `my-chrome disconnect` (also `detach`, `close`): detaches our session
//! and removes its private output. Chrome keeps running: we never close it
//! and never kill processes by name (invariant 11). Needs only an intact
//! helper, so a copy that is no longer supported can still let go.

use std::fs;

use super::pinned::PinnedCli;
use crate::child::ChildEnv;
use crate::chrome::{self, ChromeState};
use crate::config::Config;
use crate::error::Error;
use crate::helper::pin::Pin;
use crate::helper::{Helper, HelperError, trusted_node};
use crate::procs::ProcessTable;
use crate::runtime::{Runtime, StateFile};

pub fn disconnect(config: &Config) -> Result<(), Error> {
    let runtime = Runtime::open(&config.runtime)?;
    let _lock = runtime.lock(config.lock_wait)?;
    let pin = Pin::shipped();
    let helper = Helper::at(runtime.cli_dir());
    helper.check_intact(pin)?;
    let env = ChildEnv::new(config, &runtime.tmp_dir());
    let node = trusted_node(config, pin, &env).map_err(HelperError::from)?;
    let cli = PinnedCli {
        node: &node,
        helper: &helper,
        env: &env,
        runtime: &runtime,
        session: &config.session,
    };
    super::connect::recover(&runtime, &cli)?;
    let detached = cli.detach();
    for entry in fs::read_dir(runtime.root()).into_iter().flatten().flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(super::connect::SESSION_OUTPUT)
        {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
    runtime.remove_state(StateFile::Bootstrap)?;
    let chrome = match ProcessTable::read().map(|t| chrome::state(&t, &config.chrome)) {
        Ok(ChromeState::Running(pid)) => format!("Chrome is still running (pid {pid})"),
        Ok(ChromeState::Ambiguous(pids)) => format!("Chrome is still running (pids {pids:?})"),
        Ok(ChromeState::Missing) => "no Chrome is running".to_string(),
        Err(_) => "Chrome was left alone".to_string(),
    };
    if detached {
        println!(
            "my-chrome: disconnected session {}; {chrome}",
            config.session
        );
    } else {
        println!(
            "my-chrome: session {} was not attached; {chrome}",
            config.session
        );
    }
    Ok(())
}
