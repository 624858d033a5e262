//! `agent-names.json`: the names registered in the session, each with what
//! proves it (a sealed key, or the live process a derived name names), and
//! a registration number that tells a name registered anew from the one
//! before (the tab book forgets what the earlier one had: `tabs::Desk`).
//! Written only under its own lock, read by any command.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agent_key::Sealed;
use crate::procs::ProcessId;
use crate::runtime::{FileLock, Runtime, RuntimeError, StateFile};

const VERSION: u32 = 1;
/// How many names a session holds: the file stays far below the runtime's
/// bound on a state file.
pub const MAX_NAMES: usize = 128;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registry {
    pub version: u32,
    /// The daemon the names are registered with (`tabs::session_key`):
    /// a registry of another session holds no name.
    pub session: String,
    pub names: BTreeMap<String, Entry>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Random: a name registered anew gets another one.
    pub registration: u64,
    pub proof: Proof,
    /// When a command under it last ran (milliseconds since the epoch):
    /// a chosen name ends after the gone time without one.
    pub last: u64,
    /// The processes of its commands, each from when it asked (those that
    /// ended are dropped at the next ask): while one lives (waiting for the
    /// turn, or running), the name is at work, however long ago it asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asking: Vec<ProcessId>,
}

/// The most asking processes a name keeps (an agent's commands at once):
/// past it, the oldest goes.
pub const MAX_ASKING: usize = 16;

impl Entry {
    /// Whether a command of it is alive.
    pub fn asking_now(&self) -> bool {
        self.asking.iter().any(ProcessId::is_running)
    }

    /// `me` asks now: the processes that ended go, and `me` is added.
    pub fn asks(&mut self, me: ProcessId) {
        self.asking.retain(|p| !p.same_as(&me) && p.is_running());
        if self.asking.len() >= MAX_ASKING {
            self.asking.remove(0);
        }
        self.asking.push(me);
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Proof {
    /// A chosen name: its key, sealed.
    Key(Sealed),
    /// A derived name: the process it names, while it lives.
    Process(ProcessId),
}

impl Registry {
    pub fn empty(session: &str) -> Registry {
        Registry {
            version: VERSION,
            session: session.into(),
            names: BTreeMap::new(),
        }
    }

    /// Chosen names without a command for `gone_after` end now, but those
    /// at work: named by `at_work` (a command of theirs holds the turn or
    /// may still be answered), or whose latest command's process lives (it
    /// waits for the turn): its start is no measure of its agent's
    /// absence. Asked only when a name would end.
    pub fn expire(
        &mut self,
        now: u64,
        gone_after: Duration,
        at_work: impl FnOnce() -> Vec<String>,
    ) {
        let gone_after = gone_after.as_millis() as u64;
        let quiet = |entry: &Entry| {
            matches!(entry.proof, Proof::Key(_)) && entry.last.saturating_add(gone_after) <= now
        };
        if !self.names.values().any(quiet) {
            return;
        }
        let working = at_work();
        self.names
            .retain(|name, entry| !quiet(entry) || working.contains(name) || entry.asking_now());
    }

    fn well_formed(&self) -> bool {
        self.version == VERSION
            && self.names.len() <= MAX_NAMES
            && self.names.iter().all(|(name, entry)| {
                name_ok(name)
                    && entry.asking.len() <= MAX_ASKING
                    && match &entry.proof {
                        Proof::Key(sealed) => sealed.well_formed() && !name.contains('@'),
                        Proof::Process(_) => name.contains('@'),
                    }
            })
    }
}

/// A name as either kind is written: short, of name characters.
fn name_ok(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'))
}

#[derive(Debug, thiserror::Error)]
#[error(
    "{path}: is not my-chrome's record of agent names ({detail}); nothing was run. Run `my-chrome \
     disconnect` (it ends every name with the session) and connect again"
)]
pub struct Malformed {
    pub path: std::path::PathBuf,
    pub detail: String,
}

/// The registry as written, if there is one: one that is not ours is
/// refused (exit 6), never read as empty.
pub fn read(runtime: &Runtime) -> Result<Option<Registry>, super::IdentityError> {
    let Some(bytes) = runtime.read_state(StateFile::AgentNames)? else {
        return Ok(None);
    };
    let malformed = |detail: String| Malformed {
        path: runtime.root().join(StateFile::AgentNames.file_name()),
        detail,
    };
    // Where and what kind of fault, never the text.
    let registry: Registry =
        serde_json::from_slice(&bytes).map_err(|e| malformed(crate::runtime::json_fault(&e)))?;
    if !registry.well_formed() {
        return Err(malformed("unexpected version, names or proofs".into()).into());
    }
    Ok(Some(registry))
}

pub fn write(runtime: &Runtime, registry: &Registry) -> Result<(), RuntimeError> {
    let bytes = serde_json::to_vec(registry).expect("the registry serialises");
    runtime.write_state(StateFile::AgentNames, &bytes)
}

/// The registry's lock: held for a read and a write, never longer.
pub fn lock(runtime: &Runtime, wait: Duration) -> Result<FileLock, RuntimeError> {
    runtime.names_lock(wait)
}

/// The session's end ends every name.
pub fn remove(runtime: &Runtime) -> Result<(), RuntimeError> {
    runtime.remove_state(StateFile::AgentNames)
}
