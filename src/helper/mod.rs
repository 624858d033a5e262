//! The pinned `@playwright/cli`: the shipped pin, trusted node, checks of
//! the installed copy, and `my-chrome setup`.

pub mod check;
pub mod manifest;
pub mod node;
pub mod pin;
pub mod tree;

use std::path::{Path, PathBuf};
use std::time::Duration;

use check::{Check, Fault};
use node::{Node, NodeError};
use pin::Pin;

use crate::child::{ChildCommand, ChildEnv, ChildError};
use crate::exit::Exit;
use crate::runtime::{self, Runtime, RuntimeError, StateFile};
use std::os::unix::fs::MetadataExt;

/// The CLI's entry point, relative to the install directory.
pub const ENTRY: &str = "node_modules/@playwright/cli/playwright-cli.js";
/// The session daemon's own entry, inside the same tree: what `connect`
/// starts (and what the pinned client's `attach` would start).
pub const DAEMON_ENTRY: &str = "node_modules/playwright-core/lib/entry/cliDaemon.js";
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);
/// Longer than a clock tick of file times (at most 10 ms: a kernel of
/// 100 Hz), between the record and the check ([`Helper::verify_and_record`]).
const RECORD_SETTLES: Duration = Duration::from_millis(30);

#[derive(Debug, thiserror::Error)]
pub enum HelperError {
    #[error(transparent)]
    Unsafe(#[from] RuntimeError),
    #[error("the pinned @playwright/cli is not installed in {}; run `my-chrome setup`", .dir.display())]
    Missing { dir: PathBuf },
    #[error("the @playwright/cli in {} is not supported: {fault}; run `my-chrome setup`", .dir.display())]
    Unsupported { dir: PathBuf, fault: Fault },
    /// A complete install of a lock an earlier release of ours shipped:
    /// my-chrome was upgraded, and a session of that copy may be attached.
    #[error(
        "my-chrome was upgraded: the @playwright/cli in {} is {installed}, installed by an earlier \
         my-chrome, and this one pins {pinned}; nothing was run. Run `my-chrome disconnect` (it \
         lets a session of the old copy go; the browser keeps running), then `my-chrome setup`, then \
         `my-chrome connect` (after the user's approval)",
        .dir.display()
    )]
    Older {
        dir: PathBuf,
        installed: String,
        pinned: String,
    },
    #[error(transparent)]
    Node(#[from] NodeError),
    #[error(transparent)]
    Child(#[from] ChildError),
    /// The tree changed after its last full check: no code of it runs.
    #[error(
        "{} in the pinned @playwright/cli {what} after my-chrome verified it; none of its code was \
         run. Run `my-chrome setup` to install a verified copy again",
        .dir.join(.path).display()
    )]
    Changed {
        dir: PathBuf,
        path: String,
        what: &'static str,
    },
    #[error("could not {action}: {source}")]
    Io {
        action: String,
        source: std::io::Error,
    },
}

impl HelperError {
    pub fn exit(&self) -> Exit {
        match self {
            HelperError::Unsafe(e) => e.exit(),
            HelperError::Changed { .. } => Exit::Security,
            HelperError::Child(e) => e.exit(),
            HelperError::Node(e) => e.exit(),
            HelperError::Missing { .. }
            | HelperError::Unsupported { .. }
            | HelperError::Older { .. } => Exit::Usage,
            HelperError::Io { .. } => Exit::Failure,
        }
    }
}

/// The private copy of the CLI at `<runtime>/cli` (or a staging directory).
#[derive(Clone, Debug)]
pub struct Helper {
    dir: PathBuf,
}

impl Helper {
    pub fn at(dir: impl Into<PathBuf>) -> Helper {
        Helper { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn entry(&self) -> PathBuf {
        self.dir.join(ENTRY)
    }

    pub fn daemon_entry(&self) -> PathBuf {
        self.dir.join(DAEMON_ENTRY)
    }

    /// Checks the files at `level`: fails with `Missing`, `Unsafe` (exit 6:
    /// the directory is a symlink, not ours or not 0700) or `Unsupported`
    /// with the exact fault. Nothing is run.
    pub fn check(&self, pin: &Pin, level: Check) -> Result<(), HelperError> {
        self.check_dir()?;
        check::check(&self.dir, pin, level).map_err(|fault| self.unsupported(pin, level, fault))
    }

    /// The full check of setup, doctor and connect: the files verified, and
    /// `--version` run through node prints the pin.
    pub fn verify(
        &self,
        pin: &Pin,
        node: &Node,
        env: &ChildEnv,
        cwd: &Path,
    ) -> Result<(), HelperError> {
        self.check(pin, Check::Verified)?;
        self.check_reported_version(pin, node, env, cwd)
    }

    /// Runs `node <entry> --version` and compares it with the pin.
    pub fn check_reported_version(
        &self,
        pin: &Pin,
        node: &Node,
        env: &ChildEnv,
        cwd: &Path,
    ) -> Result<(), HelperError> {
        let finished =
            ChildCommand::new("playwright-cli --version", &node.path, cwd, VERSION_TIMEOUT)
                .arg(self.entry())
                .arg("--version")
                .run(env)?;
        let found = finished.stdout_text().trim().to_string();
        if !finished.status.success() || found != pin.version {
            return Err(self.unsupported(
                pin,
                Check::Verified,
                Fault::ReportedVersion {
                    found: if finished.status.success() {
                        found
                    } else {
                        format!("{found} ({})", finished.status)
                    },
                    expected: pin.version.clone(),
                },
            ));
        }
        Ok(())
    }

    fn check_dir(&self) -> Result<(), HelperError> {
        if std::fs::symlink_metadata(&self.dir)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        {
            return Err(HelperError::Missing {
                dir: self.dir.clone(),
            });
        }
        runtime::check_helper_dir(&self.dir)?;
        Ok(())
    }

    /// Takes write permission away from the whole tree (directories 0500,
    /// files keep only their read and execute bits) so that nothing writes
    /// into it by accident; the manifest is what notices a change.
    pub fn seal(&self) -> std::io::Result<()> {
        set_tree_modes(&self.dir, &|meta| {
            if meta.is_dir() {
                0o500
            } else {
                meta.mode() & 0o555
            }
        })
    }

    /// Gives the owner write permission on every directory back, so that
    /// a sealed tree can be removed (setup's old copy, say).
    pub fn unseal(dir: &Path) -> std::io::Result<()> {
        set_tree_modes(dir, &|meta| {
            if meta.is_dir() {
                0o700
            } else {
                meta.mode() & 0o7777
            }
        })
    }

    /// The full check ([`Helper::verify`]) and the record of the tree it
    /// checked, entry by entry, with the node it ran. The tree is sealed
    /// and recorded *before* it is checked, and the record is kept only if
    /// a full listing after the check still matches it: a file a process of
    /// the user changes while the check runs (waiting for its `--version`,
    /// say) is then refused (exit 6), never recorded as verified.
    pub fn verify_and_record(
        &self,
        pin: &Pin,
        node: &Node,
        env: &ChildEnv,
        runtime: &Runtime,
    ) -> Result<(), HelperError> {
        self.check_dir()?;
        self.seal()
            .map_err(io_error("seal the installed copy read-only"))?;
        let manifest =
            manifest::Manifest::take(&self.dir).map_err(io_error("record the installed copy"))?;
        // A change within the clock tick an entry's times were read in may
        // leave them as recorded (where ctimes are not fine-grained); after
        // this pause, every file the check reads is read later than that,
        // and any later change moves a time.
        std::thread::sleep(RECORD_SETTLES);
        self.verify(pin, node, env, runtime.root())?;
        manifest
            .listed_compare(&self.dir)
            .map_err(|d| HelperError::Changed {
                dir: self.dir.clone(),
                path: d.path,
                what: d.what,
            })?;
        runtime.write_state(StateFile::HelperManifest, &manifest.to_bytes())?;
        node::remember(runtime, node)?;
        Ok(())
    }

    /// Whether the tree is still exactly what the last full check recorded:
    /// `Ok(false)` when nothing was recorded (an install of an older
    /// release), `Changed` (exit 6) naming the first difference.
    pub fn unchanged(&self, runtime: &Runtime) -> Result<bool, HelperError> {
        let Some(bytes) = runtime.read_state(StateFile::HelperManifest)? else {
            return Ok(false);
        };
        let changed = |path: String, what| HelperError::Changed {
            dir: self.dir.clone(),
            path,
            what,
        };
        let recorded = manifest::Manifest::from_bytes(&bytes)
            .ok_or_else(|| changed(".".into(), "has a record that cannot be read"))?;
        recorded
            .compare(&self.dir)
            .map_err(|d| changed(d.path, d.what))?;
        Ok(true)
    }

    /// Why the copy does not pass at `level`: `Older` when it is a complete
    /// install of another release's lock (my-chrome was upgraded), else the
    /// exact fault.
    fn unsupported(&self, pin: &Pin, level: Check, fault: Fault) -> HelperError {
        let installed = || {
            check::check(&self.dir, pin, Check::Intact).ok()?;
            let package = format!("node_modules/{}", pin::CLI_PACKAGE);
            check::installed_version(&self.dir, &package)
                .ok()
                .filter(|v| *v != pin.version)
        };
        match installed().filter(|_| level > Check::Intact) {
            Some(installed) => HelperError::Older {
                dir: self.dir.clone(),
                installed,
                pinned: pin.version.clone(),
            },
            None => HelperError::Unsupported {
                dir: self.dir.clone(),
                fault,
            },
        }
    }
}

/// Sets the mode of every entry under `dir` (links excepted: a mode change
/// would follow them), `dir` itself last. An entry that has its mode already
/// is left alone: a chmod moves the ctime the manifest records.
fn set_tree_modes(dir: &Path, mode: &dyn Fn(&std::fs::Metadata) -> u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let set = |path: &Path, meta: &std::fs::Metadata| {
        let wanted = mode(meta);
        if meta.mode() & 0o7777 == wanted {
            return Ok(());
        }
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(wanted))
    };
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let meta = std::fs::symlink_metadata(&path)?;
        if meta.is_dir() {
            set_tree_modes(&path, mode)?;
        } else if !meta.file_type().is_symlink() {
            set(&path, &meta)?;
        }
    }
    set(dir, &std::fs::symlink_metadata(dir)?)
}

/// An I/O failure of `action`, as a helper error.
pub(crate) fn io_error(action: &'static str) -> impl FnOnce(std::io::Error) -> HelperError {
    move |source| HelperError::Io {
        action: action.to_string(),
        source,
    }
}

/// Resolves the trusted node for this pin.
pub fn trusted_node(
    config: &crate::config::Config,
    pin: &Pin,
    env: &ChildEnv,
) -> Result<Node, NodeError> {
    choose_node(config, pin, |path| node::probe(path, env))
}

/// The same choice, where a candidate that is the very file the last full
/// check ran (`runtime`'s record) is not run again to learn its version.
/// For a report: a command that runs the helper verifies it in full first.
pub fn known_node(
    config: &crate::config::Config,
    pin: &Pin,
    env: &ChildEnv,
    runtime: &Runtime,
) -> Result<Node, NodeError> {
    choose_node(config, pin, |path| {
        match node::recalled_version(runtime, path) {
            Some(version) => Ok(version),
            None => node::probe(path, env),
        }
    })
}

/// The configured node, else the first fixed candidate, that passes the
/// trust checks and the pin's engines (`probe` tells a version).
fn choose_node(
    config: &crate::config::Config,
    pin: &Pin,
    probe: impl Fn(&Path) -> Result<nodejs_semver::Version, node::Rejected>,
) -> Result<Node, NodeError> {
    node::select(
        config.node.as_deref(),
        &node::candidates(&config.home),
        &pin.node,
        probe,
    )
}
