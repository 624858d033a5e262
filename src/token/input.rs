//! Where a new token comes from: the clipboard (the extension's "copy"
//! button) or standard input (a password manager's pipe; on a terminal,
//! typed without echo). Never an argument: arguments are visible to every
//! local user in the process table. It prints nothing: the command that
//! reads a typed token asks for it ([`Prompt`]).

use std::io::{self, IsTerminal};
use std::os::fd::AsFd;
use std::path::Path;
use std::time::Duration;

use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
use zeroize::Zeroizing;

use crate::child::{ChildCommand, ChildEnv, Output};
use crate::config::Config;
use crate::exit::Exit;
use crate::platform::ClipboardTools;

const CLIPBOARD_TIMEOUT: Duration = Duration::from_secs(10);
/// Far more than a token; anything longer is not one.
const INPUT_LIMIT: u64 = 4096;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(
        "cannot read the clipboard: {0}. Nothing was stored; pipe the token instead: `… | my-chrome token store --stdin`"
    )]
    Clipboard(String),
    #[error("{0}")]
    Stdin(String),
}

impl InputError {
    pub fn exit(&self) -> Exit {
        Exit::Token
    }
}

/// The platform's clipboard tools (at fixed paths only) for the configured
/// display.
fn tools(config: &Config) -> Result<ClipboardTools, InputError> {
    crate::platform::clipboard_tools(
        config.display.wayland.is_some(),
        config.display.x11.is_some(),
    )
    .map_err(|why| InputError::Clipboard(why.into()))
}

fn clipboard_env(config: &Config, env: &ChildEnv) -> ChildEnv {
    config
        .display
        .vars()
        .into_iter()
        .fold(env.clone(), |env, (k, v)| env.with(k, v))
}

fn installed(program: &str) -> Result<(), InputError> {
    if Path::new(program).is_file() {
        Ok(())
    } else {
        Err(InputError::Clipboard(format!("{program} is not installed")))
    }
}

/// The clipboard's content. An empty clipboard is an empty answer; a tool
/// that fails for another reason (no X server, say) is an error.
pub fn read_clipboard(config: &Config, env: &ChildEnv) -> Result<Zeroizing<Vec<u8>>, InputError> {
    let (program, args) = tools(config)?.paste;
    installed(program)?;
    let finished = ChildCommand::new(
        "clipboard paste",
        program,
        Path::new("/"),
        CLIPBOARD_TIMEOUT,
    )
    .args(args)
    .run(&clipboard_env(config, env))
    .map_err(|e| InputError::Clipboard(e.to_string()))?;
    if finished.status.success() {
        return Ok(finished.stdout);
    }
    // Their complaints never contain the clipboard's content.
    let complaint = finished.stderr_text();
    if EMPTY_SELECTION.iter().any(|m| complaint.contains(m)) {
        return Ok(Zeroizing::new(Vec::new()));
    }
    Err(InputError::Clipboard(format!(
        "{program} failed ({}): {}",
        finished.status,
        complaint.trim()
    )))
}

/// What xclip and wl-paste say when there is nothing to paste.
const EMPTY_SELECTION: [&str; 3] = ["not available", "Nothing is copied", "No selection"];

/// Empties the clipboard (after the token was stored).
pub fn clear_clipboard(config: &Config, env: &ChildEnv) -> Result<(), InputError> {
    let (program, args) = tools(config)?.clear;
    installed(program)?;
    // xclip keeps a child running to serve the (now empty) selection: its
    // output must not be a pipe we would wait on.
    let finished = ChildCommand::new(
        "clipboard clear",
        program,
        Path::new("/"),
        CLIPBOARD_TIMEOUT,
    )
    .args(args)
    .stdout(Output::Discard)
    .stderr(Output::Discard)
    .run(&clipboard_env(config, env))
    .map_err(|e| InputError::Clipboard(e.to_string()))?;
    if finished.status.success() {
        Ok(())
    } else {
        Err(InputError::Clipboard(format!(
            "{program} failed ({})",
            finished.status
        )))
    }
}

/// What asks for a token typed on a terminal: the command's own words.
pub trait Prompt {
    /// Echo is off, and the line not read yet.
    fn ask(&self);
    /// The line is read, and echo on again.
    fn answered(&self);
}

/// Standard input: one line typed without echo on a terminal (`prompt`
/// asking for it), otherwise everything up to end-of-file; at most 4 KiB
/// either way. Read straight from descriptor 0 into a zeroizing buffer, so
/// no library buffer keeps a copy.
pub fn read_stdin(prompt: &impl Prompt) -> Result<Zeroizing<Vec<u8>>, InputError> {
    let stdin = io::stdin();
    if !stdin.is_terminal() {
        return read_fd(&stdin, false);
    }
    let failed = |e: nix::Error| {
        InputError::Stdin(format!(
            "cannot turn off terminal echo ({e}); nothing was stored. Pipe the token instead: \
             `… | my-chrome token store --stdin`"
        ))
    };
    let saved = tcgetattr(&stdin).map_err(failed)?;
    let mut quiet = saved.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    tcsetattr(&stdin, SetArg::TCSANOW, &quiet).map_err(failed)?;
    prompt.ask();
    let line = read_fd(&stdin, true);
    let _ = tcsetattr(&stdin, SetArg::TCSANOW, &saved);
    prompt.answered();
    line
}

/// Reads up to [`INPUT_LIMIT`] bytes, until end-of-file (or a newline when
/// `one_line`), into a buffer that never grows.
fn read_fd(fd: &impl AsFd, one_line: bool) -> Result<Zeroizing<Vec<u8>>, InputError> {
    let limit = INPUT_LIMIT as usize;
    let mut buf = Zeroizing::new(vec![0u8; limit + 1]);
    let mut len = 0;
    loop {
        let n = match nix::unistd::read(fd, &mut buf[len..]) {
            Ok(n) => n,
            Err(nix::Error::EINTR) => continue,
            Err(e) => {
                return Err(InputError::Stdin(format!(
                    "cannot read standard input: {e}"
                )));
            }
        };
        len += n;
        let line_done = one_line && buf[..len].contains(&b'\n');
        if n == 0 || line_done || len > limit {
            break;
        }
    }
    if len > limit {
        return Err(InputError::Stdin(format!(
            "standard input is longer than {limit} bytes, so it is not a token; nothing was stored"
        )));
    }
    buf.truncate(len);
    Ok(buf)
}
