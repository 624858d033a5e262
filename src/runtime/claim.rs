//! What in the runtime is my-chrome's: the claim file (made in an empty
//! folder, checked before anything else is believed), the names
//! my-chrome makes there, and where setup seals.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

use super::log::LogFile;
use super::private::{check_private_file, open_no_follow, refusal_or_io};
use super::state::StateFile;
use super::turn::turn_ticket;
use super::{
    ASIDE_PREFIX, CLAIM, CLAIM_FILE, CLI_DIR, LATE_LOCK_FILE, LOCK_FILE, NAMES_LOCK_FILE,
    RuntimeError, SESSION_LOCK_FILE, SESSION_OUTPUT, STAGING_PREFIX, STATE_TEMP_PREFIX, TMP_DIR,
    TURN_TICKETS_FILE, WORKSPACE_DIR, io_error, unsafe_path,
};

/// Whether `name`, directly in the runtime, is one my-chrome makes there:
/// the claim, the locks, the workspace, the private TMPDIR, the pinned CLI
/// (and a setup's staged or set-aside copy), a state file or log, the
/// session's output. Uninstall removes a runtime only when every name in
/// it is one of these (a claim copied into another folder does not make
/// that folder ours).
pub fn made_here(name: &str) -> bool {
    [
        CLAIM_FILE,
        LOCK_FILE,
        SESSION_LOCK_FILE,
        TURN_TICKETS_FILE,
        NAMES_LOCK_FILE,
        LATE_LOCK_FILE,
        WORKSPACE_DIR,
        TMP_DIR,
        CLI_DIR,
    ]
    .contains(&name)
        || StateFile::ALL.iter().any(|f| f.file_name() == name)
        || [LogFile::Lease]
            .iter()
            .any(|log| log.file_name() == name || log.older() == name)
        || [
            STAGING_PREFIX,
            ASIDE_PREFIX,
            SESSION_OUTPUT,
            STATE_TEMP_PREFIX,
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        || turn_ticket(name).is_some()
}

/// Whether `rel` (a path inside the runtime) lies where setup seals
/// read-only: the installed copy, and a copy a setup set aside or staged.
pub fn sealed_place(rel: &Path) -> bool {
    let Some(std::path::Component::Normal(first)) = rel.components().next() else {
        return false;
    };
    let first = first.to_string_lossy();
    first == CLI_DIR || first.starts_with(STAGING_PREFIX) || first.starts_with(ASIDE_PREFIX)
}

/// Whether `dir` carries my-chrome's intact claim (a foreign or corrupted
/// one is refused, exit 6).
pub fn claimed(dir: &Path) -> Result<bool, RuntimeError> {
    check_claim(dir)
}

pub(super) fn create_root(root: &Path) -> Result<(), RuntimeError> {
    if let Some(parent) = root.parent() {
        fs::create_dir_all(parent).map_err(io_error("create", parent))?;
    }
    match DirBuilder::new().mode(0o700).create(root) {
        // Someone else created it meanwhile: it gets the checks of any existing directory.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io_error("create", root)(e)),
        Ok(()) => write_claim(root),
    }
}

/// `Ok(true)` when our claim is there and intact; `Ok(false)` when there is none.
pub(super) fn check_claim(root: &Path) -> Result<bool, RuntimeError> {
    let path = root.join(CLAIM_FILE);
    let file = match open_no_follow(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(refusal_or_io(e, &path, "open")),
    };
    check_private_file(&file, &path)?;
    let mut content = Vec::new();
    file.take(CLAIM.len() as u64 + 1)
        .read_to_end(&mut content)
        .map_err(io_error("read", &path))?;
    if content != CLAIM {
        return Err(unsafe_path(
            &path,
            "is not my-chrome's claim (foreign or corrupted content)",
        ));
    }
    Ok(true)
}

pub(super) fn unclaimed(root: &Path) -> RuntimeError {
    unsafe_path(
        root,
        format!(
            "is not empty and carries no my-chrome claim file ({CLAIM_FILE}), so it is not ours to use"
        ),
    )
}

pub(super) fn is_empty_dir(root: &Path) -> Result<bool, RuntimeError> {
    let mut entries = fs::read_dir(root).map_err(io_error("list", root))?;
    Ok(entries.next().is_none())
}

pub(super) fn claim_if_empty(root: &Path) -> Result<(), RuntimeError> {
    if !is_empty_dir(root)? {
        return Err(unclaimed(root));
    }
    write_claim(root)
}

pub(super) fn write_claim(root: &Path) -> Result<(), RuntimeError> {
    let path = root.join(CLAIM_FILE);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(io_error("create", &path))?;
    file.write_all(CLAIM).map_err(io_error("write", &path))?;
    file.sync_all().map_err(io_error("sync", &path))
}
