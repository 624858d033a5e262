//! Why a run of my-chrome failed: one variant per command, each holding
//! that command's own error enum (which wraps the core errors it meets),
//! plus a configuration that could not be read and an interruption. main
//! maps it to the process's exit code; nothing else does.

use nix::sys::signal::Signal;

use crate::command::audit::AuditError;
use crate::command::connect::ConnectError;
use crate::command::disconnect::DisconnectError;
use crate::command::forward::ForwardError;
use crate::command::setup::SetupError;
use crate::command::token::TokenCommandError;
use crate::command::uninstall::UninstallError;
use crate::command::watch::WatchError;
use crate::config::ConfigError;
use crate::error::Error;
use crate::exit::Exit;
use crate::handoff::HandoffError;
use crate::host_sandbox::Sandboxed;
use crate::lease::LeaseError;

#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The environment or `--agent` before any command ran.
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Token(#[from] TokenCommandError),
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// `ensure`.
    #[error(transparent)]
    Ensure(Error),
    /// `agents`, `tab-claim`, `tab-give`, `release`.
    #[error(transparent)]
    Agents(Error),
    /// `safety-audit`, `cleanup-plan`.
    #[error(transparent)]
    Audit(#[from] AuditError),
    #[error(transparent)]
    Disconnect(#[from] DisconnectError),
    #[error(transparent)]
    Uninstall(#[from] UninstallError),
    /// `wait-abandoned`, started by a command past its bound.
    #[error(transparent)]
    WaitAbandoned(#[from] LeaseError),
    /// `watch-session`, started by `connect`.
    #[error(transparent)]
    Watch(#[from] WatchError),
    /// The relay's `my-chrome <connect URL>`.
    #[error(transparent)]
    Courier(#[from] HandoffError),
    /// A browser command for the pinned CLI.
    #[error(transparent)]
    Forward(#[from] ForwardError),
    /// `--help`, with the pinned CLI's own.
    #[error(transparent)]
    Help(Error),
    /// An agent host's sandbox keeps my-chrome from its runtime or sockets.
    #[error(transparent)]
    Sandboxed(#[from] Sandboxed),
    /// A command that finished despite a signal still reports it.
    #[error("interrupted by {0}")]
    Interrupted(Signal),
}

impl Failure {
    pub fn exit(&self) -> Exit {
        match self {
            Failure::Config(e) => e.exit(),
            Failure::Setup(e) => e.exit(),
            Failure::Token(e) => e.exit(),
            Failure::Connect(e) => e.exit(),
            Failure::Ensure(e) | Failure::Agents(e) | Failure::Help(e) => e.exit(),
            Failure::Audit(e) => e.exit(),
            Failure::Disconnect(e) => e.exit(),
            Failure::Uninstall(e) => e.exit(),
            Failure::WaitAbandoned(e) => e.exit(),
            Failure::Watch(e) => e.exit(),
            Failure::Courier(e) => e.exit(),
            Failure::Forward(e) => e.exit(),
            Failure::Sandboxed(e) => e.exit(),
            Failure::Interrupted(signal) => Exit::from(*signal),
        }
    }

    /// Whether the output already said why (a forwarded command's own
    /// status): nothing more is printed.
    pub fn was_said(&self) -> bool {
        matches!(self, Failure::Forward(ForwardError::Said(_)))
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;
    use crate::helper::HelperError;
    use crate::helper::check::Fault;
    use crate::removal::RemovalError;
    use crate::session::SessionError;
    use crate::singleton::DeliveryError;

    /// One of every variant of every command's own error enum, and of the
    /// top-level one. Each list is checked against an exhaustive match
    /// (`variant`): a new variant does not compile until it is placed
    /// there, and the test fails until a sample of it is here.
    fn samples() -> Vec<(&'static str, usize, Failure)> {
        let core = || Error::Session(SessionError::Missing);
        let path = || PathBuf::from("/home/u/.cache/my-chrome");
        let io = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let connect = vec![
            ConnectError::Core(core()),
            ConnectError::NoToken,
            ConnectError::LongerThanLimit {
                asked: Duration::from_secs(9 * 3600),
                limit: Duration::from_secs(8 * 3600),
            },
            ConnectError::Unwatched {
                why: "fork failed".into(),
                detached: true,
            },
            ConnectError::ThisProgram(io()),
            ConnectError::Attach {
                exit: Exit::Timeout,
                what: "the extension never connected.".into(),
                cleaned: "Nothing stayed attached.".into(),
                next: " Run `my-chrome connect` again.",
            },
            ConnectError::Unrecorded {
                why: "disk full".into(),
                detached: false,
            },
            ConnectError::Unscrubbed(
                "the private bootstrap output /run/x could not be deleted (busy); its record \
                 stays, so the next my-chrome command deletes it and detaches the session"
                    .into(),
            ),
            ConnectError::OtherBrowser {
                attached: None,
                chosen: "chromium".into(),
            },
            ConnectError::NotItsProfile {
                browser: "Chromium".into(),
                pid: 42,
                user_data: path(),
                why: DeliveryError::NotChrome("no singleton socket".into()),
                hint: " Set MY_CHROME_USER_DATA_DIR to the browser's profile folder.",
            },
        ];
        let audit = vec![
            AuditError::Core(core()),
            AuditError::Fails {
                name: "token-not-on-disk",
                detail: "found in a file".into(),
            },
            AuditError::Registry(io()),
            AuditError::RuntimePath(io()),
        ];
        let token = vec![
            TokenCommandError::Core(core()),
            TokenCommandError::Token(crate::token::TokenError::Empty {
                source_name: "the clipboard".into(),
            }),
            TokenCommandError::Argument,
            TokenCommandError::OwnItem,
            TokenCommandError::NoSource("service other, account me".into()),
            TokenCommandError::StoredMeanwhile,
            TokenCommandError::NoPrevious("service s, account me (previous)".into()),
        ];
        let disconnect = vec![
            DisconnectError::Core(core()),
            DisconnectError::HelperChanged {
                changed: HelperError::Missing { dir: path() },
                session: "No session was open.",
            },
        ];
        let uninstall = vec![
            UninstallError::Core(core()),
            UninstallError::Removal(RemovalError::Changed {
                path: path(),
                what: "its owner",
            }),
            UninstallError::Record {
                path: path(),
                source: io(),
                done: "nothing was removed",
            },
            UninstallError::Changed(path()),
            UninstallError::Unclaimed(path()),
        ];
        let watch = vec![WatchError::Core(core()), WatchError::NotStarted];
        let forward = vec![
            ForwardError::Core(core()),
            ForwardError::Line(crate::policy::Refusal::TokenInArguments),
            ForwardError::Said(Exit::Code(1)),
        ];
        let setup = vec![
            SetupError::Helper(HelperError::Missing { dir: path() }),
            SetupError::Runtime(crate::runtime::RuntimeError::Unsafe {
                path: path(),
                rule: "it is a link".into(),
            }),
            SetupError::Node(crate::helper::node::NodeError::Configured {
                path: path(),
                problem: "it is not executable".into(),
            }),
            SetupError::Processes(
                crate::procs::ProcessId::of(u32::MAX - 1).expect_err("no such process"),
            ),
            SetupError::SessionOpen {
                session: "mychrome".into(),
            },
            SetupError::InUse {
                dir: path(),
                pids: vec![7],
            },
            SetupError::NpmFailed {
                status: "exit status 1".into(),
            },
            SetupError::NpmAborted(crate::child::ChildError::TimedOut {
                what: "npm ci".into(),
                after: Duration::from_secs(600),
            }),
            SetupError::Interrupted {
                signal: Signal::SIGINT,
            },
            SetupError::StagedUnsupported {
                fault: Fault::LockDiffers,
            },
            SetupError::SessionUnreadable {
                reason: "not JSON".into(),
            },
            SetupError::Swap(
                "the new copy could not be put in place; the previous copy is unchanged. Run \
                 `my-chrome setup` again"
                    .into(),
            ),
            SetupError::UnknownBrowser(crate::browser_name::UnknownBrowser("netscape".into())),
            SetupError::Browser(crate::browser::BrowserError::Recorded(
                crate::browser_name::UnknownBrowser("netscape".into()),
                path(),
            )),
            SetupError::Settings(crate::settings::SettingsError::Malformed {
                path: path(),
                detail: "not JSON".into(),
            }),
            SetupError::Consent(crate::consent::ConsentError::Refused(
                "let agents do more?".into(),
            )),
            SetupError::ChangedWhileAsked,
        ];
        let top = vec![
            Failure::Config(ConfigError {
                var: "MY_CHROME_SESSION".into(),
                problem: "must be letters, digits, - or _; unset it for the default".into(),
            }),
            Failure::Ensure(core()),
            Failure::Agents(core()),
            Failure::WaitAbandoned(crate::lease::LeaseError::Handover(
                "the session lock could not be passed on".into(),
            )),
            Failure::Courier(HandoffError::NoHandoff),
            Failure::Help(core()),
            Failure::Interrupted(Signal::SIGTERM),
            Failure::Sandboxed(Sandboxed {
                blocked: crate::host_sandbox::Blocked::Sockets(nix::errno::Errno::EPERM),
                host: None,
                binary: PathBuf::from("/opt/bin/my-chrome"),
            }),
        ];
        let mut all = Vec::new();
        let mut put = |name, failures: Vec<Failure>| {
            all.extend(failures.into_iter().map(|f| (name, index(&f), f)))
        };
        put("connect", connect.into_iter().map(Failure::from).collect());
        put("audit", audit.into_iter().map(Failure::from).collect());
        put("token", token.into_iter().map(Failure::from).collect());
        put(
            "disconnect",
            disconnect.into_iter().map(Failure::from).collect(),
        );
        put(
            "uninstall",
            uninstall.into_iter().map(Failure::from).collect(),
        );
        put("watch", watch.into_iter().map(Failure::from).collect());
        put("forward", forward.into_iter().map(Failure::from).collect());
        put("setup", setup.into_iter().map(Failure::from).collect());
        put("top", top);
        all
    }

    /// Which variant, numbered within its enum; exhaustive, so that a new
    /// variant must be numbered (and sampled) before this compiles.
    fn index(failure: &Failure) -> usize {
        match failure {
            Failure::Connect(e) => match e {
                ConnectError::Core(_) => 0,
                ConnectError::NoToken => 1,
                ConnectError::LongerThanLimit { .. } => 2,
                ConnectError::Unwatched { .. } => 3,
                ConnectError::ThisProgram(_) => 4,
                ConnectError::Attach { .. } => 5,
                ConnectError::Unrecorded { .. } => 6,
                ConnectError::Unscrubbed(_) => 7,
                ConnectError::OtherBrowser { .. } => 8,
                ConnectError::NotItsProfile { .. } => 9,
            },
            Failure::Audit(e) => match e {
                AuditError::Core(_) => 0,
                AuditError::Fails { .. } => 1,
                AuditError::Registry(_) => 2,
                AuditError::RuntimePath(_) => 3,
            },
            Failure::Token(e) => match e {
                TokenCommandError::Core(_) => 0,
                TokenCommandError::Token(_) => 1,
                TokenCommandError::Argument => 2,
                TokenCommandError::OwnItem => 3,
                TokenCommandError::NoSource(_) => 4,
                TokenCommandError::StoredMeanwhile => 5,
                TokenCommandError::NoPrevious(_) => 6,
            },
            Failure::Disconnect(e) => match e {
                DisconnectError::Core(_) => 0,
                DisconnectError::HelperChanged { .. } => 1,
            },
            Failure::Uninstall(e) => match e {
                UninstallError::Core(_) => 0,
                UninstallError::Removal(_) => 1,
                UninstallError::Record { .. } => 2,
                UninstallError::Changed(_) => 3,
                UninstallError::Unclaimed(_) => 4,
            },
            Failure::Watch(e) => match e {
                WatchError::Core(_) => 0,
                WatchError::NotStarted => 1,
            },
            Failure::Forward(e) => match e {
                ForwardError::Core(_) => 0,
                ForwardError::Line(_) => 1,
                ForwardError::Said(_) => 2,
            },
            Failure::Setup(e) => match e {
                SetupError::Helper(_) => 0,
                SetupError::Runtime(_) => 1,
                SetupError::Node(_) => 2,
                SetupError::Processes(_) => 3,
                SetupError::SessionOpen { .. } => 4,
                SetupError::InUse { .. } => 5,
                SetupError::NpmFailed { .. } => 6,
                SetupError::NpmAborted(_) => 7,
                SetupError::Interrupted { .. } => 8,
                SetupError::StagedUnsupported { .. } => 9,
                SetupError::SessionUnreadable { .. } => 10,
                SetupError::Swap(_) => 11,
                SetupError::UnknownBrowser(_) => 12,
                SetupError::Browser(_) => 13,
                SetupError::Settings(_) => 14,
                SetupError::Consent(_) => 15,
                SetupError::ChangedWhileAsked => 16,
            },
            Failure::Config(_) => 0,
            Failure::Ensure(_) => 1,
            Failure::Agents(_) => 2,
            Failure::WaitAbandoned(_) => 3,
            Failure::Courier(_) => 4,
            Failure::Help(_) => 5,
            Failure::Interrupted(_) => 6,
            Failure::Sandboxed(_) => 7,
        }
    }

    /// Words that name a next step: a command to run, or what to do.
    const NEXT: [&str; 14] = [
        "`my-chrome",
        "run ",
        "rerun",
        "ask ",
        "again",
        "remove",
        "fix ",
        "look for",
        "copy ",
        "set ",
        "unset",
        "report",
        "use one of",
        "name the",
    ];

    #[test]
    fn every_variant_says_what_happened_and_the_next_step_with_a_documented_exit() {
        let samples = samples();
        let mut numbered: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
        for (name, index, _) in &samples {
            numbered.entry(name).or_default().push(*index);
        }
        for (name, indexes) in &numbered {
            let expected: Vec<usize> = (0..indexes.len()).collect();
            assert_eq!(
                indexes, &expected,
                "{name}: one sample of each variant, in order"
            );
        }
        let (mut silent, mut no_next) = (Vec::new(), Vec::new());
        for (name, index, failure) in &samples {
            let exit = failure.exit();
            let documented = Exit::DOCUMENTED.contains(&exit)
                || matches!(exit, Exit::Signal(_))
                || failure.was_said();
            assert!(
                documented,
                "{name} #{index}: exit {exit:?} is not documented"
            );
            if failure.was_said() {
                // Its output said why; the status is the client's own.
                silent.push(*name);
                continue;
            }
            let said = failure.to_string();
            assert!(
                said.len() > 20,
                "{name} #{index}: says too little: {said:?}"
            );
            let lower = said.to_lowercase();
            if matches!(failure, Failure::Interrupted(_)) {
                assert_eq!(said, "interrupted by SIGTERM");
                continue;
            }
            if !NEXT.iter().any(|next| lower.contains(next)) {
                no_next.push(format!("{name} #{index}: {said}"));
            }
        }
        assert!(
            no_next.is_empty(),
            "no next step named:\n{}",
            no_next.join("\n")
        );
        assert_eq!(
            silent,
            ["forward"],
            "only a forwarded command's status is said by it"
        );
    }
}
