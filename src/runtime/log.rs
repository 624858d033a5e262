//! The private logs: appended to, never rewritten, bounded, with one
//! older generation kept.

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;

use super::private::{check_private_file, open_no_follow, refusal_or_io};
use super::{Runtime, RuntimeError, io_error};

/// The private logs. Appended to, never rewritten; one older generation
/// (`<name>.1`) is kept when a log outgrows its bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFile {
    /// Which agent ran which command on which tab, waited, claimed or gave tabs back.
    Lease,
}

impl LogFile {
    pub fn file_name(self) -> &'static str {
        match self {
            LogFile::Lease => "lease.log",
        }
    }

    pub(super) fn older(self) -> String {
        format!("{}.1", self.file_name())
    }
}

impl Runtime {
    /// Appends `line` to a private log (created 0600; a link, another
    /// owner's file or a shared mode is refused, exit 6). When the log would
    /// outgrow `limit`, it first becomes `<name>.1`, replacing the older one.
    pub fn append_log(&self, which: LogFile, line: &[u8], limit: u64) -> Result<(), RuntimeError> {
        let path = self.root.join(which.file_name());
        let open = || {
            OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o600)
                .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
                .open(&path)
                .map_err(|e| refusal_or_io(e, &path, "open"))
        };
        let mut file = open()?;
        check_private_file(&file, &path)?;
        let size = file.metadata().map_err(io_error("inspect", &path))?.len();
        if size > 0 && size + line.len() as u64 > limit {
            fs::rename(&path, self.root.join(which.older())).map_err(io_error("rotate", &path))?;
            file = open()?;
            check_private_file(&file, &path)?;
        }
        file.write_all(line).map_err(io_error("write", &path))
    }

    /// A private log's lines, oldest first, the older generation included.
    /// Nothing when it does not exist; refused like a state file otherwise.
    pub fn read_log(&self, which: LogFile, limit: u64) -> Result<String, RuntimeError> {
        let mut text = String::new();
        for name in [which.older(), which.file_name().to_string()] {
            let path = self.root.join(name);
            let mut file = match open_no_follow(&path) {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(refusal_or_io(e, &path, "open")),
            };
            check_private_file(&file, &path)?;
            let mut bytes = Vec::new();
            (&mut file)
                .take(limit)
                .read_to_end(&mut bytes)
                .map_err(io_error("read", &path))?;
            text.push_str(&String::from_utf8_lossy(&bytes));
        }
        Ok(text)
    }
}
