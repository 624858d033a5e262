//! Where a new token comes from: the clipboard (the extension's "copy"
//! button) or standard input (a password manager's pipe; on a terminal,
//! typed without echo). Never an argument: arguments are visible to every
//! local user in the process table.

use std::io::{self, IsTerminal, Read};
use std::path::Path;
use std::time::Duration;

use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
use zeroize::Zeroizing;

use crate::child::{ChildCommand, ChildEnv, Output};
use crate::config::Config;
use crate::error::Exit;

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

/// The platform's clipboard tools, at fixed paths only.
struct Tools {
    paste: (&'static str, &'static [&'static str]),
    clear: (&'static str, &'static [&'static str]),
}

#[cfg(target_os = "macos")]
fn tools(_config: &Config) -> Result<Tools, InputError> {
    Ok(Tools {
        paste: ("/usr/bin/pbpaste", &[]),
        clear: ("/usr/bin/pbcopy", &[]),
    })
}

#[cfg(not(target_os = "macos"))]
fn tools(config: &Config) -> Result<Tools, InputError> {
    if config.display.wayland.is_some() {
        Ok(Tools {
            paste: ("/usr/bin/wl-paste", &["--no-newline"]),
            clear: ("/usr/bin/wl-copy", &["--clear"]),
        })
    } else if config.display.x11.is_some() {
        Ok(Tools {
            paste: ("/usr/bin/xclip", &["-selection", "clipboard", "-o"]),
            clear: ("/usr/bin/xclip", &["-selection", "clipboard", "-i"]),
        })
    } else {
        Err(InputError::Clipboard(
            "no display: neither WAYLAND_DISPLAY (with XDG_RUNTIME_DIR) nor DISPLAY is set".into(),
        ))
    }
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

/// The clipboard's content. An empty clipboard is an empty answer.
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
    .stderr(Output::Discard)
    .run(&clipboard_env(config, env))
    .map_err(|e| InputError::Clipboard(e.to_string()))?;
    // xclip and wl-paste fail on an empty clipboard; that is "empty", not an error.
    if finished.status.success() {
        Ok(finished.stdout)
    } else {
        Ok(Zeroizing::new(Vec::new()))
    }
}

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

/// Standard input: one line typed without echo on a terminal, otherwise
/// everything up to end-of-file (at most 4 KiB).
pub fn read_stdin() -> Result<Zeroizing<Vec<u8>>, InputError> {
    let stdin = io::stdin();
    if stdin.is_terminal() {
        return read_hidden_line();
    }
    let mut buf = Zeroizing::new(Vec::with_capacity(INPUT_LIMIT as usize + 1));
    stdin
        .lock()
        .take(INPUT_LIMIT + 1)
        .read_to_end(&mut buf)
        .map_err(|e| InputError::Stdin(format!("cannot read standard input: {e}")))?;
    if buf.len() as u64 > INPUT_LIMIT {
        return Err(InputError::Stdin(format!(
            "standard input is longer than {INPUT_LIMIT} bytes, so it is not a token; nothing was stored"
        )));
    }
    Ok(buf)
}

fn read_hidden_line() -> Result<Zeroizing<Vec<u8>>, InputError> {
    let stdin = io::stdin();
    let failed = |e: nix::Error| InputError::Stdin(format!("cannot turn off terminal echo: {e}"));
    let saved = tcgetattr(&stdin).map_err(failed)?;
    let mut quiet = saved.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    tcsetattr(&stdin, SetArg::TCSANOW, &quiet).map_err(failed)?;
    eprint!("Paste the extension token (it will not be shown), then press Enter: ");
    let mut line = Zeroizing::new(String::with_capacity(INPUT_LIMIT as usize));
    let read = stdin.read_line(&mut line);
    let _ = tcsetattr(&stdin, SetArg::TCSANOW, &saved);
    eprintln!();
    read.map_err(|e| InputError::Stdin(format!("cannot read standard input: {e}")))?;
    Ok(Zeroizing::new(line.as_bytes().to_vec()))
}
