//! Throw-away tokens and the canary scan that ends every token test.

use std::fs;
use std::path::Path;

use super::*;

/// A throw-away token, fresh for each call: 43 characters of the token alphabet.
pub fn fresh_token() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    let mut bytes = [0u8; 43];
    use std::io::Read;
    fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut bytes)
        .unwrap();
    bytes
        .iter()
        .map(|b| ALPHABET[(*b as usize) % ALPHABET.len()] as char)
        .collect()
}

/// The canary scan: `secret` appears in none of `outputs` and in no file
/// under `home` except the keyring's own (encrypted) storage.
pub fn assert_nowhere(secret: &str, home: &Path, outputs: &[&Run]) {
    assert_nowhere_but(secret, home, outputs, &[]);
}

/// The same, also leaving out `exempt` directories (a browser profile that
/// keeps the token by design).
pub fn assert_nowhere_but(secret: &str, home: &Path, outputs: &[&Run], exempt: &[&Path]) {
    for run in outputs {
        assert!(
            !run.stdout.contains(secret),
            "the token leaked to stdout:\n{}",
            run.stdout
        );
        assert!(
            !run.stderr.contains(secret),
            "the token leaked to stderr:\n{}",
            run.stderr
        );
    }
    let keyrings = home.join(".local/share/keyrings");
    let mut stack = vec![home.to_path_buf()];
    // A sandbox's agent files lie in /tmp, beside its home.
    let files = Path::new("/tmp").join(super::sandbox::files_of(home));
    if files.is_dir() {
        stack.push(files);
    }
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if path == keyrings || exempt.contains(&path.as_path()) {
                continue;
            }
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let bytes = fs::read(&path).unwrap_or_default();
                let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
                assert!(!found, "the token is written in {}", path.display());
            }
        }
    }
}
