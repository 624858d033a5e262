//! The name derived from the caller's process ancestry, for a command
//! that names no agent: `<process>@<pid>` of the nearest ancestor that is
//! not a pass-through: a shell running a command string (`bash -c …`, how
//! agent hosts run each tool call), a forked subshell (`out=$(my-chrome …)`:
//! a copy of its parent, same name and command line), or a wrapper such as
//! `env`, `timeout` or `xargs`. For an agent host that is the host process
//! itself, so two hosts (two Claude Code or Codex sessions) are two agents
//! while each host's consecutive commands stay one. It cannot tell apart
//! agents that share one host process (sub-agents, say) or one interactive
//! shell: those choose names (`identity`).
//!
//! A derived name is the agent's only while that process lives (the
//! registry records its start time, `identity::registry`). No name is
//! derived from pid 1 — an orphan's parent, or the init of a PID namespace
//! such as an agent host's sandbox — nor, in a PID namespace of its own,
//! from that namespace's first process (pid 1's child: every sandbox of a
//! host starts the same way, so `python3@2` in one is `python3@2` in the
//! next), nor from an ancestry that cannot be read: every such caller
//! would be the same agent. (On Linux `host_sandbox` refuses every call
//! from a PID namespace of its own before this is asked; the rule stands
//! for whatever lets one through.)

use std::ffi::OsString;

use crate::procs::Ancestor;

/// Tools that only run another command: never the agent.
const WRAPPERS: [&str; 9] = [
    "env",
    "timeout",
    "nice",
    "nohup",
    "stdbuf",
    "time",
    "xargs",
    "setsid",
    "my-chrome",
];
/// Shells: pass-through when they run a command string, the agent's own
/// shell otherwise (an interactive one, or one running a script).
const SHELLS: [&str; 8] = [
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox",
];
/// How far up to look.
pub const DEPTH: usize = 32;
/// The init of the caller's PID namespace (the whole system's, or a
/// sandbox's): whoever it is, it is everyone's ancestor.
const INIT: u32 = 1;
/// Service managers and container inits that adopt the orphans below them
/// (Linux's child subreapers: `systemd --user` on a desktop, a
/// container's init, a supervisor): like init, each is the parent of
/// every orphaned call under it. Nothing in /proc says a process is a
/// subreaper, so they are known by name.
const ADOPTERS: [&str; 14] = [
    "systemd",
    "init",
    "tini",
    "dumb-init",
    "catatonit",
    "docker-init",
    "s6-svscan",
    "s6-supervise",
    "runsv",
    "runsvdir",
    "supervisord",
    "conmon",
    "containerd-shim",
    "launchd",
];

/// The agent's process in an ancestry (parent first) and the name derived
/// from it, read only as far as the agent: each ancestor read costs a few
/// files of /proc, and the agent is usually the first or second (in a PID
/// namespace of its own, `nested`, one more: is the agent's parent pid 1?).
/// `None` when the ancestry ends at the namespace's init, or shows nothing.
pub fn derived(chain: impl IntoIterator<Item = Ancestor>, nested: bool) -> Option<(String, u32)> {
    let mut chain = chain.into_iter().peekable();
    let mut last = None;
    while let Some(ancestor) = chain.next() {
        if ancestor.pid == INIT || adopts_orphans(&ancestor.name) {
            return None;
        }
        // Only a shell needs its parent read (is it a subshell, a copy of
        // it?): no other ancestor makes the walk read one more.
        let subshell =
            SHELLS.contains(&ancestor.name.as_str()) && is_subshell(&ancestor, chain.peek());
        if !passes_through(&ancestor) && !subshell {
            let first_of_namespace = nested && chain.peek().is_some_and(|p| p.pid == INIT);
            return (!first_of_namespace).then(|| named(&ancestor));
        }
        last = Some(ancestor);
    }
    // Every ancestor is a pass-through (the walk ended at the table's top
    // or its depth): the outermost one seen.
    last.map(|last| named(&last))
}

fn adopts_orphans(name: &str) -> bool {
    ADOPTERS.contains(&name) || name.starts_with("containerd-shim")
}

fn named(ancestor: &Ancestor) -> (String, u32) {
    (
        format!("{}@{}", clean(&ancestor.name), ancestor.pid),
        ancestor.pid,
    )
}

fn passes_through(ancestor: &Ancestor) -> bool {
    let name = ancestor.name.as_str();
    WRAPPERS.contains(&name) || (SHELLS.contains(&name) && runs_command_string(&ancestor.cmd))
}

/// A shell forked from its parent without an exec (command substitution,
/// `( … )`, a pipeline's group): the parent's own name and command line.
fn is_subshell(ancestor: &Ancestor, parent: Option<&Ancestor>) -> bool {
    SHELLS.contains(&ancestor.name.as_str())
        && parent.is_some_and(|p| p.name == ancestor.name && p.cmd == ancestor.cmd)
}

/// `-c`, or short options bundled with it (`-lc`, `-ec`), among the
/// options before the first operand (a script's own arguments do not count).
fn runs_command_string(cmd: &[OsString]) -> bool {
    cmd.iter()
        .skip(1)
        .map(|arg| arg.to_string_lossy())
        .take_while(|arg| arg.starts_with('-') || arg.starts_with('+'))
        .any(|arg| arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains('c'))
}

/// A process name as it may appear in a derived agent name.
fn clean(name: &str) -> String {
    let kept: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .take(15)
        .collect();
    if kept.is_empty() {
        "process".into()
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derived name, or "none".
    fn name_of(chain: impl IntoIterator<Item = Ancestor>) -> String {
        derived(chain, false).map_or_else(|| "none".into(), |(name, _)| name)
    }

    fn ancestor(pid: u32, name: &str, cmd: &[&str]) -> Ancestor {
        Ancestor {
            pid,
            name: name.into(),
            cmd: cmd.iter().map(OsString::from).collect(),
        }
    }

    #[test]
    fn an_agent_hosts_tool_shell_is_skipped() {
        // Claude Code / Codex: every tool call is a fresh `bash -c` (or -lc).
        let chain = [
            ancestor(
                300,
                "bash",
                &["/bin/bash", "-c", "-l", "my-chrome snapshot"],
            ),
            ancestor(200, "claude", &["claude"]),
            ancestor(100, "zsh", &["-zsh"]),
        ];
        assert_eq!(name_of(chain.clone()), "claude@200");
        let codex = [
            ancestor(301, "bash", &["bash", "-lc", "my-chrome tab-list"]),
            ancestor(302, "timeout", &["timeout", "60", "bash"]),
            ancestor(201, "codex", &["codex"]),
        ];
        assert_eq!(name_of(codex.clone()), "codex@201");
    }

    #[test]
    fn an_interactive_shell_or_a_script_is_the_agent() {
        let terminal = [
            ancestor(400, "bash", &["bash"]),
            ancestor(10, "tmux: server", &["tmux"]),
        ];
        assert_eq!(name_of(terminal.clone()), "bash@400");
        let script = [ancestor(401, "bash", &["bash", "scripts/demo.sh"])];
        assert_eq!(name_of(script.clone()), "bash@401");
        // `--rcfile` is a long option, not `-c`; a script's `-c` is its own.
        let long = [ancestor(402, "bash", &["bash", "--rcfile", "x"])];
        assert_eq!(name_of(long.clone()), "bash@402");
        let script_args = [ancestor(403, "bash", &["bash", "x.sh", "-c", "y"])];
        assert_eq!(name_of(script_args.clone()), "bash@403");
        // A sandbox whose pid 1 is the agent's host: pid 1 is every
        // process's ancestor there, so it names no one.
        let container = [
            ancestor(12, "bash", &["bash", "-lc", "my-chrome goto"]),
            ancestor(1, "codex", &["codex"]),
        ];
        assert_eq!(name_of(container.clone()), "none");
        // An orphan (`setsid -f my-chrome …`): its parent is init.
        let orphan = [ancestor(1, "systemd", &["/sbin/init"])];
        assert_eq!(name_of(orphan.clone()), "none");
        // Through wrappers to init: still no one.
        let wrapped = [
            ancestor(13, "setsid", &["setsid", "-f", "my-chrome"]),
            ancestor(1, "init", &["init"]),
        ];
        assert_eq!(name_of(wrapped.clone()), "none");
        // An orphan on a desktop: adopted by `systemd --user`, a subreaper,
        // not pid 1; and by a supervisor known by name.
        let adopted = [
            ancestor(14, "bash", &["bash", "-c", "exec my-chrome snapshot"]),
            ancestor(900, "systemd", &["/lib/systemd/systemd", "--user"]),
        ];
        assert_eq!(name_of(adopted.clone()), "none");
        let supervised = [ancestor(15, "tini", &["tini", "--", "x"])];
        assert_eq!(name_of(supervised.clone()), "none");
    }

    #[test]
    fn a_forked_subshell_is_its_scripts_not_an_agent_of_its_own() {
        // `out=$(my-chrome …)` and `( … )` in a script: copies of the script.
        let script = ["bash", "agent.sh"];
        let substitution = [
            ancestor(702, "bash", &script),
            ancestor(701, "bash", &script),
            ancestor(700, "bash", &script),
            ancestor(10, "tmux: server", &["tmux"]),
        ];
        assert_eq!(name_of(substitution.clone()), "bash@700");
        let through_xargs = [
            ancestor(703, "xargs", &["xargs", "my-chrome"]),
            ancestor(702, "bash", &script),
            ancestor(700, "bash", &script),
        ];
        assert_eq!(name_of(through_xargs.clone()), "bash@700");
        // A script that starts another script is that script's agent: only
        // an exact copy of the parent passes through.
        let nested = [
            ancestor(801, "bash", &["bash", "inner.sh"]),
            ancestor(800, "bash", &script),
        ];
        assert_eq!(name_of(nested.clone()), "bash@801");
        // An interactive shell started from another is its own.
        let terminal = [
            ancestor(901, "bash", &["bash"]),
            ancestor(900, "zsh", &["-zsh"]),
        ];
        assert_eq!(name_of(terminal.clone()), "bash@901");
    }

    #[test]
    fn odd_process_names_are_cleaned_and_an_empty_chain_names_no_one() {
        let chain = [ancestor(500, "weird name/: x", &["x"])];
        assert_eq!(name_of(chain.clone()), "weirdnamex@500");
        let only_wrappers = [ancestor(600, "env", &["env"])];
        assert_eq!(name_of(only_wrappers.clone()), "env@600");
        assert_eq!(name_of([]), "none", "an unreadable ancestry names no one");
        assert_eq!(derived(chain.clone(), false).map(|(_, pid)| pid), Some(500));
    }

    #[test]
    fn in_a_pid_namespace_of_its_own_the_namespaces_first_process_names_no_one() {
        // srt / bubblewrap: pid 1 starts the command, whatever it is.
        let sandboxed = || {
            [
                ancestor(3, "python3", &["python3", "agent.py"]),
                ancestor(2, "bash", &["bash", "agent.sh"]),
                ancestor(1, "bwrap", &["bwrap"]),
            ]
        };
        assert_eq!(derived(sandboxed()[1..].to_vec(), true), None);
        assert_eq!(
            derived(sandboxed(), true).map(|(n, _)| n),
            Some("python3@3".into())
        );
        // In the system's own namespace, a child of init may be the agent
        // (a macOS app, a daemon's own shell).
        assert_eq!(name_of(sandboxed()[1..].to_vec()), "bash@2");
    }

    /// The ancestry is read only as far as the agent: past a pass-through,
    /// and one further after a shell (is it a copy of its parent?).
    #[test]
    fn the_ancestry_is_read_only_as_far_as_the_agent() {
        let read = std::cell::Cell::new(0);
        let counted = |chain: Vec<Ancestor>| {
            read.set(0);
            let name = name_of(chain.into_iter().inspect(|_| read.set(read.get() + 1)));
            (name, read.get())
        };
        let host = vec![
            ancestor(300, "bash", &["bash", "-c", "my-chrome snapshot"]),
            ancestor(200, "claude", &["claude"]),
            ancestor(100, "zsh", &["-zsh"]),
            ancestor(1, "init", &["init"]),
        ];
        assert_eq!(counted(host), ("claude@200".into(), 2));
        let script = vec![
            ancestor(401, "bash", &["bash", "agent.sh"]),
            ancestor(10, "tmux: server", &["tmux"]),
            ancestor(1, "init", &["init"]),
        ];
        assert_eq!(counted(script), ("bash@401".into(), 2));
    }
}
