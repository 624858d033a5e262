//! The agent hosts' own sandboxes, real: Codex CLI (`codex sandbox`,
//! `codex execpolicy`) and Claude Code's sandbox runtime (`srt`), installed
//! once per run from tests/fixtures/agent-hosts (a lock, as the pinned CLI
//! is), and a command of the test's sandbox run inside either.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::Sandbox;

/// Where the fixture's packages are installed (`npm ci`, once per run).
fn installed() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agent-hosts");
        super::per_run::once_per_run("agent-hosts", || {
            let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent-hosts");
            std::fs::create_dir_all(&dir).unwrap();
            for file in ["package.json", "package-lock.json"] {
                std::fs::copy(fixture.join(file), dir.join(file)).unwrap();
            }
            let out = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "npm ci of the agent hosts failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        });
        dir
    })
}

pub fn codex() -> PathBuf {
    installed().join("node_modules/.bin/codex")
}

pub fn srt() -> PathBuf {
    installed().join("node_modules/.bin/srt")
}

/// Codex's folder for a test: not under /tmp, where `codex sandbox` will
/// not place its helper.
pub fn codex_home(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("codex-homes")
        .join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What the host runs a command in.
pub enum Host<'a> {
    /// `codex sandbox` in workspace-write mode (the mode of a trusted
    /// project), with these further `-c` settings.
    Codex {
        home: &'a Path,
        settings: &'a [String],
    },
    /// `srt` with this settings file (JSON), or none: its defaults.
    Srt { settings: Option<&'a Path> },
}

/// `args` (as `Sandbox::command` takes them) inside the host's sandbox,
/// in the workspace `cwd`.
pub fn inside(host: &Host, sandbox: &Sandbox, cwd: &Path, args: &[&str]) -> Command {
    let mut wrapper: Vec<String> = Vec::new();
    match host {
        Host::Codex { settings, .. } => {
            wrapper.push(codex().display().to_string());
            wrapper.extend(["sandbox", "-c", "sandbox_mode=\"workspace-write\""].map(String::from));
            for setting in *settings {
                wrapper.extend(["-c".to_string(), setting.clone()]);
            }
            wrapper.push("--".into());
        }
        Host::Srt { settings } => {
            wrapper.push(srt().display().to_string());
            if let Some(file) = settings {
                wrapper.extend(["--settings".to_string(), file.display().to_string()]);
            }
            // The command's own options are not srt's.
            wrapper.push("--".into());
        }
    }
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    let mut cmd = sandbox.command_through(&wrapper, args);
    cmd.current_dir(cwd);
    // The hosts are Node programs: their own PATH, beside the test's.
    cmd.env(
        "PATH",
        format!(
            "{}:/usr/bin:/bin",
            installed().join("node_modules/.bin").display()
        ),
    );
    if let Host::Codex { home, .. } = host {
        cmd.env("CODEX_HOME", home);
    }
    cmd
}
