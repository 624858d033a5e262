//! An agent host's own sandbox (Codex's, Claude Code's) that keeps
//! my-chrome from its runtime or from Unix sockets, or gives it a PID
//! namespace of its own (where the process it records for the session's
//! turn means nothing to the agents outside: one stopped with the turn
//! could not be told from another process, and would keep them all out
//! without end; an attack found it). Found before a command
//! changes anything (`probe`, from `main`): such a command stops with exit
//! 9 and the one setting that lets my-chrome run, for the host it
//! recognises. It never calls the session stale, never sends the agent to
//! reconnect, and ends, scrubs or recovers nothing: a command inside such a
//! sandbox changes nothing for the agents outside it.
//!
//! The probes leave nothing behind: a Unix socket connected to a name that
//! is not there (a refusal is `EPERM` only inside a sandbox: seccomp's and
//! the macOS sandbox's answer, where a missing name gives `ENOENT`), and an
//! unnamed file in the runtime (`O_TMPFILE`, or made and removed at once).

use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::socket::{AddressFamily, SockFlag, SockType, UnixAddr, connect, socket};

use crate::exit::Exit;

/// The agent host my-chrome recognises from the variables it sets for the
/// commands it runs (config.rs reads them). Only the advice depends on it:
/// a variable anyone may set decides nothing else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    /// Codex CLI: its rules folder (`$CODEX_HOME/rules`, default
    /// `~/.codex/rules`).
    Codex { rules: PathBuf },
    /// Claude Code (its sandbox runtime): its user settings file
    /// (`$CLAUDE_CONFIG_DIR/settings.json`, default `~/.claude/settings.json`).
    ClaudeCode { settings: PathBuf },
}

/// What the sandbox keeps from my-chrome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// A PID namespace below the system's own (Linux).
    PidNamespace,
    /// Unix sockets: the session's daemon and the browser's singleton.
    Sockets(Errno),
    /// Writing in the runtime (or the folder it would be made in).
    Writing(PathBuf, Errno),
}

#[derive(Debug, thiserror::Error)]
#[error("{}", say(.blocked, .host.as_ref(), .binary))]
pub struct Sandboxed {
    pub blocked: Blocked,
    pub host: Option<Host>,
    /// This binary, by the path the host's setting names.
    pub binary: PathBuf,
}

impl Sandboxed {
    pub fn exit(&self) -> Exit {
        Exit::Sandboxed
    }
}

/// Whether a sandbox keeps my-chrome from its runtime or its sockets.
/// The most telling first: what the host's default blocks, then the
/// namespace, which is left when both are allowed.
pub fn probe(runtime: &Path) -> Option<Blocked> {
    sockets(runtime)
        .or_else(|| writing(runtime))
        .or_else(|| crate::platform::in_pid_namespace_of_its_own().then_some(Blocked::PidNamespace))
}

/// The same, as the refusal a command stops with.
pub fn check(runtime: &Path, host: Option<&Host>) -> Result<(), Sandboxed> {
    match probe(runtime) {
        None => Ok(()),
        Some(blocked) => Err(Sandboxed {
            blocked,
            host: host.cloned(),
            binary: this_binary(),
        }),
    }
}

/// This binary's path, as the host's rule must name it.
pub fn this_binary() -> PathBuf {
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("my-chrome"))
}

fn sockets(runtime: &Path) -> Option<Blocked> {
    let fd = match socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::empty(),
        None,
    ) {
        Ok(fd) => fd,
        Err(Errno::EPERM) => return Some(Blocked::Sockets(Errno::EPERM)),
        Err(_) => return None,
    };
    // A name that is never made: outside a sandbox the answer is ENOENT.
    // Beside the runtime, or at the root when that path is too long for a
    // socket's address (an attack padded it to skip the probe).
    let dir = nearest_folder(runtime).unwrap_or(Path::new("/"));
    let addr = UnixAddr::new(&dir.join(".my-chrome-no-socket"))
        .or_else(|_| UnixAddr::new("/.my-chrome-no-socket"))
        .ok()?;
    match connect(fd.as_raw_fd(), &addr) {
        Err(Errno::EPERM) => Some(Blocked::Sockets(Errno::EPERM)),
        _ => None,
    }
}

/// The runtime, or the folder it would be made in: what a command would
/// touch first.
fn nearest_folder(runtime: &Path) -> Option<&Path> {
    runtime.ancestors().find(|d| d.is_dir())
}

fn writing(runtime: &Path) -> Option<Blocked> {
    let dir = nearest_folder(runtime)?;
    let meta = dir.metadata().ok()?;
    // A folder whose mode lets its owner write, and we are the owner: a
    // refusal then is not the file system's permissions.
    let ours = meta.uid() == nix::unistd::geteuid().as_raw() && meta.mode() & 0o200 != 0;
    let errno = Errno::from_raw(tempfile::tempfile_in(dir).err()?.raw_os_error()?);
    match errno {
        Errno::EROFS => Some(Blocked::Writing(dir.to_path_buf(), errno)),
        Errno::EACCES | Errno::EPERM if ours => Some(Blocked::Writing(dir.to_path_buf(), errno)),
        _ => None,
    }
}

/// The one sentence: what is blocked, and the setting for the host.
fn say(blocked: &Blocked, host: Option<&Host>, binary: &Path) -> String {
    let what = match blocked {
        Blocked::PidNamespace => "run in a PID namespace of its own, where the other agents could \
                                  not see its process (one stopped with the session's turn would \
                                  keep them all out)"
            .to_string(),
        Blocked::Sockets(errno) => format!(
            "open the Unix sockets of the session and the browser ({})",
            errno.desc()
        ),
        Blocked::Writing(dir, errno) => {
            format!("write its runtime in {} ({})", dir.display(), errno.desc())
        }
    };
    let bin = binary.display();
    let setting = match host {
        Some(Host::Codex { rules }) => format!(
            "ask the user to let Codex run my-chrome outside its sandbox (`scripts/install.sh \
             --agent codex` writes {}/my-chrome.rules with prefix_rule(pattern = [\"{bin}\"], \
             decision = \"allow\")), and do not work around it",
            rules.display()
        ),
        Some(Host::ClaudeCode { settings }) => format!(
            "run {bin} with the Bash tool's sandbox off (dangerouslyDisableSandbox), this binary \
             and no other command: the permission rule \"Bash({bin}:*)\" in {} lets it run so \
             without asking the user (`scripts/install.sh --agent claude-code` adds it; without \
             it Claude Code asks them)",
            settings.display()
        ),
        None => format!(
            "ask the user to let the agent host run {bin} outside its sandbox (the host's setting \
             for commands that run unsandboxed), and do not work around it"
        ),
    };
    format!(
        "inside this agent host's sandbox my-chrome cannot {what}, so nothing ran and the session \
         is as it was for everyone; {setting}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_a_sandbox_nothing_is_blocked() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(probe(dir.path()), None);
        // A runtime not made yet: its folder is probed, and left as it was.
        let missing = dir.path().join("not/yet");
        assert_eq!(probe(&missing), None);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_refusal_names_the_access_and_the_hosts_setting() {
        let binary = PathBuf::from("/opt/bin/my-chrome");
        let codex = say(
            &Blocked::Sockets(Errno::EPERM),
            Some(&Host::Codex {
                rules: "/h/.codex/rules".into(),
            }),
            &binary,
        );
        assert!(codex.contains("Unix sockets"), "{codex}");
        assert!(
            codex.contains("/h/.codex/rules/my-chrome.rules with prefix_rule(pattern = [\"/opt/bin/my-chrome\"], decision = \"allow\")"),
            "{codex}"
        );
        let claude = say(
            &Blocked::Writing("/h/.cache/my-chrome".into(), Errno::EROFS),
            Some(&Host::ClaudeCode {
                settings: "/h/.claude/settings.json".into(),
            }),
            &binary,
        );
        assert!(
            claude.contains("write its runtime in /h/.cache/my-chrome (Read-only file system)")
        );
        assert!(
            claude.contains(
                "\"Bash(/opt/bin/my-chrome:*)\" in /h/.claude/settings.json lets it run so"
            )
        );
        assert!(claude.contains("dangerouslyDisableSandbox), this binary and no other command"));
        let other = say(&Blocked::Sockets(Errno::EPERM), None, &binary);
        assert!(
            other.contains("run /opt/bin/my-chrome outside its sandbox"),
            "{other}"
        );
        for text in [codex, claude, other] {
            assert!(
                !text.contains("connect") && !text.contains("stale"),
                "{text}"
            );
        }
    }
}
