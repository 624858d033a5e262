//! The pinned CLI's daemon, spoken to natively over its socket: one
//! newline-delimited JSON request, no helper code run on our side. Used
//! where running the helper is not an option (a tree that changed after it
//! was verified).

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// Asks the daemon behind `socket` (already checked to be in our private
/// TMPDIR) to stop, as the CLI's `detach` does, and waits for it to close
/// the connection (within `bound`).
pub fn stop(socket: &Path, bound: Duration) -> io::Result<()> {
    let mut stream = UnixStream::connect(socket)?;
    stream.set_read_timeout(Some(bound))?;
    stream.set_write_timeout(Some(bound))?;
    stream.write_all(b"{\"id\":1,\"method\":\"stop\",\"params\":{}}\n")?;
    let mut answer = Vec::new();
    match stream.take(64 * 1024).read_to_end(&mut answer) {
        Ok(_) => Ok(()),
        // It went away without a word: stopped all the same.
        Err(e) if e.kind() == io::ErrorKind::ConnectionReset => Ok(()),
        Err(e) => Err(e),
    }
}
