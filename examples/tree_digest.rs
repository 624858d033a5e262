//! The tree digest of an install directory (`src/helper/tree.rs`), printed
//! as `scripts/pin-cli.sh` ships it in `skill/cli/tree.sha256`: the script
//! runs this, so the format has one implementation.
//!
//! Usage: tree_digest INSTALL_DIR   (the folder holding `node_modules`)

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: tree_digest INSTALL_DIR");
        return ExitCode::from(2);
    };
    match my_chrome::helper::tree::tree_digest(Path::new(&dir)) {
        Ok(digest) => {
            println!("{digest}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tree_digest: {e}");
            ExitCode::FAILURE
        }
    }
}
