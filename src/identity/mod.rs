//! Who is asking. A command runs as an agent: a name the agent chose
//! (`--agent NAME` / `MY_CHROME_AGENT`), which the first command under it
//! registers and which every later one proves with the key printed then;
//! or, with no name given, one derived from the caller's ancestry, which
//! holds while the process it names lives. Nothing else makes a command
//! an agent's: a name is not a claim anyone can write.
//!
//! The names live in the session's registry (`registry.rs`) and end with
//! `release`, the gone time (a chosen name), `disconnect` and the session.

pub mod derived;
pub mod registry;

use std::time::Duration;

use crate::agent_key::{AgentKey, Sealed};
use crate::config::{Claim, Config};
use crate::exit::Exit;
use crate::procs::{self, ProcError, ProcessId};
use crate::runtime::{Runtime, RuntimeError};
use registry::{Entry, Proof, Registry};

/// Who a command runs as, once shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    /// The name's registration in the session (none: not registered, for
    /// a command that registers nothing).
    pub registration: Option<u64>,
    /// The key this command registered the name with (and printed): what
    /// a second turn of the same command proves the name with.
    pub issued: Option<AgentKey>,
}

#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error(
        "agent name {name} is registered, and {}; nothing was run. Give the key printed when \
         {name} was registered (MY_CHROME_AGENT={name}:<key>, or --agent {name}:<key>); if \
         {name} is not yours, choose another name",
        if *.keyed { "the key given is not its key" } else { "a command under it must carry its key" }
    )]
    NotYours { name: String, keyed: bool },
    #[error(
        "no agent holds the name {name} now, so the key given opens nothing (a name ends with \
         `release`, after the gone time without a command, at `disconnect` and with the session); \
         nothing was run. Run without the key to register {name} again: a new key is printed, and \
         the tabs it had are the user's"
    )]
    Ended { name: String },
    #[error(
        "my-chrome cannot tell which agent runs this command: {why}; nothing was run. Choose a \
         name: the first command with --agent NAME (or MY_CHROME_AGENT=NAME) registers it and \
         prints its key"
    )]
    Nameless { why: String },
    #[error(
        "{} agent names are registered in this session, the most it holds; nothing was run. A \
         name ends with `release`, after the gone time without a command, and with the session",
        registry::MAX_NAMES
    )]
    Full,
    #[error("cannot make an agent key: the system's random source failed ({0}); nothing was run")]
    Random(String),
    #[error(transparent)]
    Malformed(#[from] registry::Malformed),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Processes(#[from] ProcError),
}

impl IdentityError {
    pub fn exit(&self) -> Exit {
        match self {
            IdentityError::NotYours { .. } | IdentityError::Ended { .. } => Exit::Busy,
            IdentityError::Nameless { .. } | IdentityError::Full => Exit::Usage,
            IdentityError::Random(_) | IdentityError::Processes(_) => Exit::Failure,
            IdentityError::Malformed(_) => Exit::Security,
            IdentityError::Runtime(e) => e.exit(),
        }
    }
}

/// Who the caller says it is, before any proof.
enum Asker {
    Chosen(Claim),
    Derived { name: String, process: ProcessId },
}

impl Asker {
    fn of(config: &Config) -> Result<Asker, IdentityError> {
        if let Some(claim) = &config.agent {
            return Ok(Asker::Chosen(claim.clone()));
        }
        if !crate::platform::process_table_is_ours() {
            return Err(IdentityError::Nameless {
                why: "the process table it sees (/proc) is not its own PID namespace's, so its \
                      ancestry cannot be read"
                    .into(),
            });
        }
        let lineage = procs::lineage(std::process::id(), derived::DEPTH);
        let nested = crate::platform::in_pid_namespace_of_its_own();
        let Some((name, pid)) = derived::derived(lineage, nested) else {
            return Err(IdentityError::Nameless {
                why: "its ancestry ends at pid 1, at a process that adopts orphans (an orphaned \
                      process), or, in a PID namespace of its own (an agent host's sandbox, a \
                      container), at that namespace's first process: which is every such \
                      command's"
                    .into(),
            });
        };
        match ProcessId::of(pid) {
            Ok(process) => Ok(Asker::Derived { name, process }),
            Err(_) => Err(IdentityError::Nameless {
                why: format!("the process its name would come from ({name}) has exited"),
            }),
        }
    }

    fn name(&self) -> &str {
        match self {
            Asker::Chosen(claim) => &claim.name,
            Asker::Derived { name, .. } => name,
        }
    }
}

/// What the registry says of an asker.
enum Verdict {
    /// Its name, proven: registration number.
    Proven(u64),
    /// Its name is free: the asker may register it.
    Free,
}

fn judge(asker: &Asker, registry: &Registry) -> Result<Verdict, IdentityError> {
    let entry = registry.names.get(asker.name());
    match (asker, entry) {
        (Asker::Chosen(Claim { name, key }), Some(entry)) => match (&entry.proof, key) {
            (Proof::Key(sealed), Some(key)) if sealed.opens(key) => {
                Ok(Verdict::Proven(entry.registration))
            }
            _ => Err(IdentityError::NotYours {
                name: name.clone(),
                keyed: key.is_some(),
            }),
        },
        (Asker::Chosen(Claim { name, key: Some(_) }), None) => {
            Err(IdentityError::Ended { name: name.clone() })
        }
        (Asker::Chosen(Claim { key: None, .. }), None) => Ok(Verdict::Free),
        (Asker::Derived { process, .. }, Some(entry)) => match &entry.proof {
            Proof::Process(recorded) if recorded.same_as(process) => {
                Ok(Verdict::Proven(entry.registration))
            }
            // The process it named is gone (its pid reused): the name is
            // this one's now, registered anew.
            _ => Ok(Verdict::Free),
        },
        (Asker::Derived { .. }, None) => Ok(Verdict::Free),
    }
}

/// The caller's identity in the session `session` (`tabs::session_key`),
/// proven, or registered now if its name is free: a chosen name's key is
/// printed to the caller, this once. Under the registry's lock, so two
/// first commands under one name register it once.
pub fn establish(
    config: &Config,
    runtime: &Runtime,
    session: &str,
    gone_after: Duration,
) -> Result<Identity, IdentityError> {
    let asker = Asker::of(config)?;
    let _lock = registry::lock(runtime, config.lock_wait)?;
    let now = crate::lease::now_ms();
    let mut registry = registry::read(runtime)?
        .filter(|r| r.session == session)
        .unwrap_or_else(|| Registry::empty(session));
    registry.expire(now, gone_after, || at_work(runtime, now));
    let name = asker.name().to_string();
    let (registration, key, changed) = match judge(&asker, &registry)? {
        // A derived name's entry never changes while its process lives: no
        // write (a chosen name's records its last command, for the gone
        // time).
        Verdict::Proven(registration) => (registration, None, matches!(asker, Asker::Chosen(_))),
        Verdict::Free => {
            if !registry.names.contains_key(&name) && registry.names.len() >= registry::MAX_NAMES {
                // Names whose process is gone hold nothing: room is made
                // only when it is needed (it reads the process table).
                registry.names.retain(|_, e| match &e.proof {
                    Proof::Process(p) => p.is_running(),
                    Proof::Key(_) => true,
                });
                if registry.names.len() >= registry::MAX_NAMES {
                    return Err(IdentityError::Full);
                }
            }
            let (proof, key) = match &asker {
                Asker::Chosen(_) => {
                    let key = AgentKey::generate().map_err(IdentityError::Random)?;
                    let sealed = Sealed::seal(&key).map_err(IdentityError::Random)?;
                    (Proof::Key(sealed), Some(key))
                }
                Asker::Derived { process, .. } => (Proof::Process(*process), None),
            };
            let registration = match &asker {
                Asker::Chosen(_) => random_u64()?,
                // The same process is the same agent in every session:
                // what the book keeps for it (its notes) stays its.
                Asker::Derived { process, .. } => (u64::from(process.pid) << 32) ^ process.start,
            };
            registry.names.insert(
                name.clone(),
                Entry {
                    registration,
                    proof,
                    last: now,
                    asking: Vec::new(),
                },
            );
            (registration, key, true)
        }
    };
    if changed {
        if let Some(entry) = registry.names.get_mut(&name) {
            entry.last = now;
            // (A process that cannot be read leaves only `last`.)
            if let Ok(me) = ProcessId::current() {
                entry.asks(me);
            }
        }
        registry::write(runtime, &registry)?;
    }
    if let Some(key) = &key {
        tell_key(&name, key, gone_after);
    }
    Ok(Identity {
        name,
        registration: Some(registration),
        issued: key,
    })
}

/// The caller's identity as the registry has it, changing nothing: for a
/// command that registers no name (`agents`, and the commands that start
/// or end the session). A registered name still needs its key.
pub fn verified(
    config: &Config,
    runtime: Option<&Runtime>,
    gone_after: Duration,
) -> Result<Identity, IdentityError> {
    let asker = Asker::of(config)?;
    let name = asker.name().to_string();
    let registry = match runtime {
        Some(runtime) => registry::read(runtime)?,
        None => None,
    };
    let Some(mut registry) = registry else {
        return match asker {
            Asker::Chosen(Claim { key: Some(_), .. }) => Err(IdentityError::Ended { name }),
            _ => Ok(Identity {
                name,
                registration: None,
                issued: None,
            }),
        };
    };
    let now = crate::lease::now_ms();
    registry.expire(now, gone_after, || {
        runtime.map(|r| at_work(r, now)).unwrap_or_default()
    });
    let registration = match judge(&asker, &registry)? {
        Verdict::Proven(registration) => Some(registration),
        Verdict::Free => None,
    };
    Ok(Identity {
        name,
        registration,
        issued: None,
    })
}

/// The agents with a command running: the one holding the turn, and
/// those whose command past its bound the daemon may still answer. A
/// record that cannot be read names nobody (the name ends as before).
fn at_work(runtime: &Runtime, now: u64) -> Vec<String> {
    let holder = crate::lease::holder(runtime).ok().flatten();
    let late = crate::lease::late::read(runtime).unwrap_or_default();
    holder
        .map(|h| h.agent)
        .into_iter()
        .chain(
            late.into_iter()
                .filter(|l| l.may_answer(now))
                .map(|l| l.agent),
        )
        .collect()
}

/// The agents present though quiet in the book: those `at_work`, and
/// those whose latest command's process lives (waiting for the turn, or
/// running), as the registry records them. What the tab book's gone time
/// spares (`Book::expire`).
pub fn present(runtime: &Runtime, now: u64) -> Vec<String> {
    let asking = registry::read(runtime).ok().flatten().map(|r| {
        r.names
            .into_iter()
            .filter(|(_, e)| e.asking_now())
            .map(|(name, _)| name)
            .collect::<Vec<_>>()
    });
    let mut names = at_work(runtime, now);
    names.extend(asking.unwrap_or_default());
    names
}

/// A command of `name` (the registration it proved) has ended: its gone
/// time counts from now, not from the command's start. A name that ended
/// or was registered anew meanwhile is left as it is.
pub fn touch(
    config: &Config,
    runtime: &Runtime,
    name: &str,
    registration: u64,
) -> Result<(), IdentityError> {
    let _lock = registry::lock(runtime, config.lock_wait)?;
    let Some(mut registry) = registry::read(runtime)? else {
        return Ok(());
    };
    match registry.names.get_mut(name) {
        Some(entry)
            if entry.registration == registration && matches!(entry.proof, Proof::Key(_)) =>
        {
            entry.last = crate::lease::now_ms();
            registry::write(runtime, &registry)?;
        }
        _ => {}
    }
    Ok(())
}

/// `release` gave back everything of the agent's: its name ends with it
/// (its key opens nothing from now on).
pub fn end(config: &Config, runtime: &Runtime, name: &str) -> Result<(), IdentityError> {
    let _lock = registry::lock(runtime, config.lock_wait)?;
    let Some(mut registry) = registry::read(runtime)? else {
        return Ok(());
    };
    if registry.names.remove(name).is_some() {
        registry::write(runtime, &registry)?;
    }
    Ok(())
}

/// The name the caller goes by, unproven: for a report that shows it
/// (`doctor`), never for a decision.
pub fn said(config: &Config) -> String {
    match Asker::of(config) {
        Ok(asker) => asker.name().to_string(),
        Err(_) => "none (choose one with --agent NAME)".into(),
    }
}

fn random_u64() -> Result<u64, IdentityError> {
    let mut bytes = [0; 8];
    getrandom::fill(&mut bytes).map_err(|e| IdentityError::Random(e.to_string()))?;
    Ok(u64::from_le_bytes(bytes))
}

/// The key, to the caller that registered the name: its only showing.
fn tell_key(name: &str, key: &AgentKey, gone_after: Duration) {
    crate::output::notice(&format!(
        "my-chrome: agent name {name} is now registered to you. Its key, shown this once (my-chrome \
         keeps only a salted hash of it):\n{}\nmy-chrome: give it with every later command, as \
         MY_CHROME_AGENT={name}:<key> or --agent {name}:<key>; without it the name is refused. \
         It ends with `release`, after {} s without a command, at `disconnect` and with the session",
        key.reveal(),
        gone_after.as_secs()
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chosen(name: &str, key: Option<&AgentKey>) -> Asker {
        Asker::Chosen(Claim {
            name: name.into(),
            key: key.cloned(),
        })
    }

    fn registry_with(entries: Vec<(&str, Proof)>) -> Registry {
        let mut registry = Registry::empty("s");
        for (i, (name, proof)) in entries.into_iter().enumerate() {
            registry.names.insert(
                name.into(),
                Entry {
                    registration: 10 + i as u64,
                    proof,
                    last: 1_000,
                    asking: Vec::new(),
                },
            );
        }
        registry
    }

    fn verdict(asker: &Asker, registry: &Registry) -> Result<Option<u64>, String> {
        match judge(asker, registry) {
            Ok(Verdict::Proven(n)) => Ok(Some(n)),
            Ok(Verdict::Free) => Ok(None),
            Err(e) => Err(format!("{} {e}", e.exit().code())),
        }
    }

    #[test]
    fn a_chosen_name_needs_its_key_and_a_derived_one_its_process() {
        let ann = AgentKey::generate().unwrap();
        let bob = AgentKey::generate().unwrap();
        let me = ProcessId { pid: 200, start: 5 };
        let registry = registry_with(vec![
            ("ann", Proof::Key(Sealed::seal(&ann).unwrap())),
            ("bob", Proof::Key(Sealed::seal(&bob).unwrap())),
            ("claude@200", Proof::Process(me)),
        ]);
        assert_eq!(verdict(&chosen("ann", Some(&ann)), &registry), Ok(Some(10)));
        for (asker, refused) in [
            (
                chosen("ann", None),
                "7 agent name ann is registered, and a command under it must carry its key",
            ),
            (
                chosen("ann", Some(&bob)),
                "7 agent name ann is registered, and the key given is not its key",
            ),
            (
                chosen("bob", Some(&ann)),
                "7 agent name bob is registered, and the key given is not its key",
            ),
            (
                chosen("cid", Some(&ann)),
                "7 no agent holds the name cid now",
            ),
        ] {
            let said = verdict(&asker, &registry).unwrap_err();
            assert!(said.starts_with(refused), "{said}");
            assert!(!said.contains(&ann.reveal()) && !said.contains(&bob.reveal()));
        }
        // A free name is the first asker's to register.
        assert_eq!(verdict(&chosen("cid", None), &registry), Ok(None));
        // The derived name's own process is proven; the same name from a
        // process that reused the pid (another start) is registered anew.
        let derived = |start| Asker::Derived {
            name: "claude@200".into(),
            process: ProcessId { pid: 200, start },
        };
        assert_eq!(verdict(&derived(5), &registry), Ok(Some(12)));
        assert_eq!(verdict(&derived(900), &registry), Ok(None));
    }

    /// A name whose command still runs is not gone, however long ago the
    /// command started; the others are; nobody is asked when none would end.
    #[test]
    fn a_name_at_work_does_not_end_with_the_gone_time() {
        let seal = || Proof::Key(Sealed::seal(&AgentKey::generate().unwrap()).unwrap());
        let mut registry = registry_with(vec![("ann", seal()), ("bob", seal()), ("cid", seal())]);
        // cid's latest command is this very process: waiting, or running.
        registry.names.get_mut("cid").unwrap().asking = vec![ProcessId::current().unwrap()];
        registry.expire(1_000 + 9_999, Duration::from_secs(10), || {
            panic!("asked with no name to end")
        });
        registry.expire(1_000 + 10_000, Duration::from_secs(10), || {
            vec!["ann".to_string(), "dan".to_string()]
        });
        assert_eq!(registry.names.keys().collect::<Vec<_>>(), ["ann", "cid"]);
    }

    /// What the book's gone time spares: the turn's holder, a late
    /// command that may still answer, a name whose command's process
    /// lives; never a late one past its cap or a name whose process ended.
    #[test]
    fn present_are_the_holder_the_late_and_the_asking() {
        use crate::lease::{Holder, late::Late};
        let (_home, runtime) = crate::runtime::scratch();
        let me = ProcessId::current().unwrap();
        let ended = ProcessId {
            pid: me.pid,
            start: me.start.wrapping_add(1000),
        };
        let now = crate::lease::now_ms();
        let holder = Holder {
            agent: "ann".into(),
            command: "eval".into(),
            since: now,
            process: me,
            abandoned: false,
        };
        crate::lease::write(&runtime, Some(holder), None).unwrap();
        let late = |agent: &str, since: u64| Late {
            agent: agent.into(),
            command: "eval".into(),
            since,
            process: me,
            handed: true,
            tab: None,
            aside: false,
        };
        crate::lease::late::add(&runtime, late("bob", now), None).unwrap();
        crate::lease::late::add(&runtime, late("eve", 0), None).unwrap();
        let seal = || Proof::Key(Sealed::seal(&AgentKey::generate().unwrap()).unwrap());
        let mut registry = registry_with(vec![("cid", seal()), ("dan", seal())]);
        registry.names.get_mut("cid").unwrap().asking = vec![ended, me];
        registry.names.get_mut("dan").unwrap().asking = vec![ended];
        registry::write(&runtime, &registry).unwrap();
        let mut named = present(&runtime, now);
        named.sort();
        assert_eq!(named, ["ann", "bob", "cid"]);
    }

    /// A command's end restarts its name's gone time, and only the name
    /// it proved: not a name registered anew meanwhile (another
    /// registration), not a derived name (it ends with its process), not
    /// a name that ended.
    #[test]
    fn a_commands_end_restarts_only_its_own_registrations_gone_time() {
        let (home, runtime) = crate::runtime::scratch();
        let vars = [
            ("HOME", home.path().as_os_str()),
            ("MY_CHROME_RUNTIME_DIR", runtime.root().as_os_str()),
        ]
        .map(|(k, v)| (std::ffi::OsString::from(k), v.to_os_string()));
        let config = Config::from_vars(vars).unwrap();
        let seal = || Proof::Key(Sealed::seal(&AgentKey::generate().unwrap()).unwrap());
        let derived = Proof::Process(ProcessId { pid: 200, start: 5 });
        let registry = registry_with(vec![
            ("ann", seal()),
            ("bob", seal()),
            ("claude@200", derived),
        ]);
        registry::write(&runtime, &registry).unwrap();
        let before = crate::lease::now_ms();
        touch(&config, &runtime, "ann", 10).unwrap();
        touch(&config, &runtime, "bob", 99).unwrap();
        touch(&config, &runtime, "claude@200", 12).unwrap();
        touch(&config, &runtime, "cid", 13).unwrap();
        let after = registry::read(&runtime).unwrap().unwrap();
        let last = |name: &str| after.names[name].last;
        assert!(last("ann") >= before, "ann's own command ended now");
        assert_eq!(last("bob"), 1_000, "another registration of bob's");
        assert_eq!(last("claude@200"), 1_000, "a derived name");
        assert!(!after.names.contains_key("cid"));
    }

    /// A registry is read only when each entry is of its kind: a key's
    /// name has no `@`, a derived name has one, and no name records more
    /// asking processes than [`registry::MAX_ASKING`]; anything else is
    /// refused, never read as another agent's.
    #[test]
    fn a_registry_out_of_shape_is_refused() {
        let (_home, runtime) = crate::runtime::scratch();
        let seal = || Proof::Key(Sealed::seal(&AgentKey::generate().unwrap()).unwrap());
        let process = || Proof::Process(ProcessId { pid: 200, start: 5 });
        let good = registry_with(vec![("ann", seal()), ("claude@200", process())]);
        registry::write(&runtime, &good).unwrap();
        assert_eq!(registry::read(&runtime).unwrap(), Some(good.clone()));
        let mut crowded = good.clone();
        crowded.names.get_mut("ann").unwrap().asking =
            vec![ProcessId { pid: 1, start: 1 }; registry::MAX_ASKING + 1];
        let mut full = good.clone();
        full.names.get_mut("ann").unwrap().asking =
            vec![ProcessId { pid: 1, start: 1 }; registry::MAX_ASKING];
        for (bad, why) in [
            (
                registry_with(vec![("ann@1", seal())]),
                "a key under a derived name",
            ),
            (
                registry_with(vec![("ann", process())]),
                "a process under a chosen name",
            ),
            (crowded, "too many asking processes"),
        ] {
            registry::write(&runtime, &bad).unwrap();
            assert!(registry::read(&runtime).is_err(), "{why}");
        }
        registry::write(&runtime, &full).unwrap();
        assert_eq!(registry::read(&runtime).unwrap(), Some(full));
    }

    /// Each ask records its process once; the ended ones go.
    #[test]
    fn a_name_keeps_the_processes_of_its_commands_that_live() {
        let me = ProcessId::current().unwrap();
        let ended = ProcessId {
            pid: me.pid,
            start: me.start.wrapping_add(1000),
        };
        let mut entry = Entry {
            registration: 1,
            proof: Proof::Key(Sealed::seal(&AgentKey::generate().unwrap()).unwrap()),
            last: 0,
            asking: vec![ended],
        };
        assert!(!entry.asking_now());
        entry.asks(me);
        entry.asks(me);
        assert_eq!(entry.asking, [me]);
        assert!(entry.asking_now());
    }

    #[test]
    fn a_chosen_name_ends_with_the_gone_time_a_derived_one_with_its_process() {
        let ann = AgentKey::generate().unwrap();
        let mut registry = registry_with(vec![
            ("ann", Proof::Key(Sealed::seal(&ann).unwrap())),
            (
                "claude@200",
                Proof::Process(ProcessId { pid: 200, start: 5 }),
            ),
        ]);
        registry.expire(1_000 + 9_999, Duration::from_secs(10), Vec::new);
        assert_eq!(registry.names.len(), 2, "within the gone time");
        registry.expire(1_000 + 10_000, Duration::from_secs(10), Vec::new);
        assert_eq!(
            registry.names.keys().collect::<Vec<_>>(),
            ["claude@200"],
            "a chosen name ends at the gone time; a derived one stays"
        );
        let ended = verdict(&chosen("ann", Some(&ann)), &registry).unwrap_err();
        assert!(
            ended.starts_with("7 no agent holds the name ann now"),
            "{ended}"
        );
    }
}
