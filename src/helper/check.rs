//! Is the CLI under `<runtime>/cli` the one we ship?
//!
//! One vocabulary, three levels ([`Check`]), each including the one before:
//! *intact*, *supported*, *verified*.

use std::fs;
use std::io;
use std::path::Path;

use serde_json::Value;

use super::pin::{CLI_PACKAGE, Lock, Pin};
use super::tree::tree_digest;

/// How thoroughly an installed copy is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Check {
    /// A complete install of a lock some release of ours shipped: enough to
    /// send a `detach`, never enough to attach (disconnect, cleanup-plan).
    Intact,
    /// Its `package.json` and `package-lock.json` are byte-identical to the
    /// shipped pin, every locked package that applies to this platform is
    /// installed at its locked version, and `@playwright/cli` is the pinned
    /// version (cheap: every browser command).
    Supported,
    /// Supported, and the tree digest over every installed file matches the
    /// shipped one (setup, doctor, connect; `Helper::verify` also runs
    /// `--version`).
    Verified,
}

/// What is wrong with an installed copy, precisely enough to act on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    #[error("package-lock.json differs from the shipped lock")]
    LockDiffers,
    #[error("package.json differs from the shipped pin")]
    ManifestDiffers,
    #[error("package-lock.json is not a lock any my-chrome release shipped")]
    UnknownLock,
    #[error("package-lock.json cannot be used: {0}")]
    BadLock(String),
    #[error("missing {0}")]
    Missing(String),
    #[error("{name} is {installed}, lock says {locked}")]
    WrongVersion {
        name: String,
        installed: String,
        locked: String,
    },
    #[error("installed files differ from the pin (tree digest {found}, shipped {expected})")]
    TreeDiffers { found: String, expected: String },
    #[error("`playwright-cli --version` printed {found:?}, expected {expected}")]
    ReportedVersion { found: String, expected: String },
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: String, reason: String },
}

/// Checks the copy in `dir` against `pin` at `level`.
pub fn check(dir: &Path, pin: &Pin, level: Check) -> Result<(), Fault> {
    match level {
        Check::Intact => check_intact(dir, pin),
        Check::Supported | Check::Verified => check_supported(dir, pin, level),
    }
}

fn check_supported(dir: &Path, pin: &Pin, level: Check) -> Result<(), Fault> {
    if read(dir, "package-lock.json")? != pin.package_lock {
        return Err(Fault::LockDiffers);
    }
    if read(dir, "package.json")? != pin.package_json {
        return Err(Fault::ManifestDiffers);
    }
    check_packages(dir, &pin.lock)?;
    let cli = installed_version(dir, &format!("node_modules/{CLI_PACKAGE}"))?;
    if cli != pin.version {
        return Err(Fault::WrongVersion {
            name: CLI_PACKAGE.into(),
            installed: cli,
            locked: pin.version.clone(),
        });
    }
    if level == Check::Verified {
        let found = tree_digest(dir).map_err(|e| unreadable(&dir.join("node_modules"), e))?;
        if found != pin.tree_digest {
            return Err(Fault::TreeDiffers {
                found,
                expected: pin.tree_digest.clone(),
            });
        }
    }
    Ok(())
}

fn check_intact(dir: &Path, pin: &Pin) -> Result<(), Fault> {
    let lock_bytes = read(dir, "package-lock.json")?;
    if !pin.was_released(&lock_bytes) {
        return Err(Fault::UnknownLock);
    }
    let lock = Lock::parse(&lock_bytes).map_err(Fault::BadLock)?;
    check_packages(dir, &lock)?;
    let entry = dir.join(super::ENTRY);
    if !entry.is_file() {
        return Err(Fault::Missing(super::ENTRY.into()));
    }
    Ok(())
}

/// Every package of `lock` that npm installs here is present at its version.
fn check_packages(dir: &Path, lock: &Lock) -> Result<(), Fault> {
    for package in lock.packages.iter().filter(|p| p.applies_here()) {
        let installed = installed_version(dir, &package.path)?;
        if installed != package.version {
            return Err(Fault::WrongVersion {
                name: package.name.clone(),
                installed,
                locked: package.version.clone(),
            });
        }
    }
    Ok(())
}

/// The version a package's own manifest claims.
pub fn installed_version(dir: &Path, package_dir: &str) -> Result<String, Fault> {
    let manifest_path = dir.join(package_dir).join("package.json");
    let bytes = match fs::read(&manifest_path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(Fault::Missing(package_dir.into()));
        }
        other => other.map_err(|e| unreadable(&manifest_path, e))?,
    };
    let manifest: Value =
        serde_json::from_slice(&bytes).map_err(|e| unreadable(&manifest_path, e))?;
    manifest["version"]
        .as_str()
        .map(String::from)
        .ok_or_else(|| Fault::Unreadable {
            path: manifest_path.display().to_string(),
            reason: "no version field".into(),
        })
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>, Fault> {
    let path = dir.join(name);
    match fs::read(&path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Fault::Missing(name.into())),
        other => other.map_err(|e| unreadable(&path, e)),
    }
}

fn unreadable(path: &Path, e: impl std::fmt::Display) -> Fault {
    Fault::Unreadable {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}
