//! The checks every path of the runtime passes: a private folder (ours,
//! 0700, no link), a private file (ours, 0600), opened without following
//! a link, made private when missing.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use super::{RuntimeError, io_error, unsafe_path};

/// A directory we rely on for privacy: a real directory (not a symlink),
/// owned by us, mode exactly 0700.
pub fn check_private_dir(path: &Path) -> Result<(), RuntimeError> {
    let meta = fs::symlink_metadata(path).map_err(io_error("inspect", path))?;
    if meta.file_type().is_symlink() {
        return Err(unsafe_path(
            path,
            "is a symbolic link; it must be a real directory",
        ));
    }
    if !meta.is_dir() {
        return Err(unsafe_path(path, "is not a directory"));
    }
    check_owner_and_mode(path, &meta, 0o700)
}

/// The helper's directory: like [`check_private_dir`], but sealed read-only
/// (0500) as setup leaves it, or 0700 as older releases did.
pub fn check_helper_dir(path: &Path) -> Result<(), RuntimeError> {
    let meta = fs::symlink_metadata(path).map_err(io_error("inspect", path))?;
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return check_private_dir(path);
    }
    let mode = if meta.mode() & 0o7777 == 0o500 {
        0o500
    } else {
        0o700
    };
    check_owner_and_mode(path, &meta, mode)
}

pub(super) fn check_owner_and_mode(
    path: &Path,
    meta: &fs::Metadata,
    mode: u32,
) -> Result<(), RuntimeError> {
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(unsafe_path(
            path,
            format!("is owned by uid {}, not by you (uid {me})", meta.uid()),
        ));
    }
    let actual = meta.mode() & 0o7777;
    if actual != mode {
        return Err(unsafe_path(
            path,
            format!("has mode {actual:04o}; it must be {mode:04o}"),
        ));
    }
    Ok(())
}

pub(super) fn check_private_file(file: &File, path: &Path) -> Result<(), RuntimeError> {
    let meta = file.metadata().map_err(io_error("inspect", path))?;
    if !meta.is_file() {
        return Err(unsafe_path(path, "is not a regular file"));
    }
    check_owner_and_mode(path, &meta, 0o600)
}

pub(super) fn open_no_follow(path: &Path) -> io::Result<File> {
    // O_NONBLOCK: a planted FIFO must not hang us before the type check.
    OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
}

/// `O_NOFOLLOW` on a symlink fails with `ELOOP`: that is a refusal, not an I/O error.
pub(super) fn refusal_or_io(e: io::Error, path: &Path, action: &'static str) -> RuntimeError {
    if e.raw_os_error() == Some(nix::libc::ELOOP) {
        unsafe_path(path, "is a symbolic link; it must be a regular file")
    } else {
        io_error(action, path)(e)
    }
}

pub(super) fn ensure_private_subdir(path: &Path) -> Result<(), RuntimeError> {
    match DirBuilder::new().mode(0o700).create(path) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(io_error("create", path)(e)),
        _ => check_private_dir(path),
    }
}
