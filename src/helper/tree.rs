//! The tree digest: one SHA-256 over everything installed under
//! `node_modules`, so that a file edited after setup is caught before it can
//! drive the user's browser. `scripts/pin-cli.sh` takes the digest of a
//! clean install from here (through `examples/tree_digest.rs`) and ships it
//! in `skill/cli/tree.sha256`: this is the format's one implementation.
//!
//! Format: for every entry under
//! `node_modules` except npm's own `node_modules/.package-lock.json`, sorted
//! by the bytes of its path relative to the install directory, one line —
//! `dir <path>`, `file <sha256 of content> <path>` or `link <target> <path>` —
//! and the digest is the SHA-256 of those lines.

use std::fs::{self, File};
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

const ROOT: &str = "node_modules";
const NPM_BOOKKEEPING: &str = "node_modules/.package-lock.json";

pub fn tree_digest(install_dir: &Path) -> io::Result<String> {
    let mut entries: Vec<Entry> = Vec::new();
    collect(install_dir, Path::new(ROOT), &mut entries)?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut manifest = Sha256::new();
    for (rel, full, kind) in entries {
        let line = if kind.is_symlink() {
            let target = fs::read_link(&full)?;
            [b"link ", target.as_os_str().as_bytes(), b" ", &rel].concat()
        } else if kind.is_dir() {
            [b"dir ", &rel[..]].concat()
        } else if kind.is_file() {
            [b"file ", file_digest(&full)?.as_bytes(), b" ", &rel].concat()
        } else {
            return Err(invalid(&full, "is neither a file, a directory nor a link"));
        };
        manifest.update(&line);
        manifest.update(b"\n");
    }
    Ok(hex::encode(manifest.finalize()))
}

/// Relative path bytes, full path, and type (not following links).
type Entry = (Vec<u8>, PathBuf, fs::FileType);

fn collect(base: &Path, rel: &Path, out: &mut Vec<Entry>) -> io::Result<()> {
    let full = base.join(rel);
    let bytes = rel.as_os_str().as_bytes().to_vec();
    if bytes.contains(&b'\n') {
        return Err(invalid(&full, "has a newline in its name"));
    }
    let kind = fs::symlink_metadata(&full)?.file_type();
    out.push((bytes, full.clone(), kind));
    if kind.is_dir() {
        for entry in fs::read_dir(&full)? {
            let child = rel.join(entry?.file_name());
            if child != Path::new(NPM_BOOKKEEPING) {
                collect(base, &child, out)?;
            }
        }
    }
    Ok(())
}

fn file_digest(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

fn invalid(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{} {what}", path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn sample() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let nm = dir.path().join("node_modules");
        fs::create_dir_all(nm.join("a/lib")).unwrap();
        fs::write(nm.join("a/lib/x.js"), "x").unwrap();
        fs::write(nm.join(".package-lock.json"), "{}").unwrap();
        fs::create_dir(nm.join(".bin")).unwrap();
        symlink("../a/lib/x.js", nm.join(".bin/x")).unwrap();
        dir
    }

    #[test]
    fn matches_the_documented_format() {
        let dir = sample();
        let x = hex::encode(Sha256::digest(b"x"));
        let manifest = format!(
            "dir node_modules\ndir node_modules/.bin\nlink ../a/lib/x.js node_modules/.bin/x\n\
             dir node_modules/a\ndir node_modules/a/lib\nfile {x} node_modules/a/lib/x.js\n"
        );
        assert_eq!(
            tree_digest(dir.path()).unwrap(),
            hex::encode(Sha256::digest(manifest))
        );
    }

    #[test]
    fn every_kind_of_change_moves_the_digest_but_npm_bookkeeping_does_not() {
        let dir = sample();
        let nm = dir.path().join("node_modules");
        let base = tree_digest(dir.path()).unwrap();
        fs::write(nm.join(".package-lock.json"), "{\"changed\":1}").unwrap();
        assert_eq!(tree_digest(dir.path()).unwrap(), base);

        fs::write(nm.join("a/lib/x.js"), "y").unwrap();
        assert_ne!(tree_digest(dir.path()).unwrap(), base, "edited content");
        fs::write(nm.join("a/lib/x.js"), "x").unwrap();
        assert_eq!(tree_digest(dir.path()).unwrap(), base);

        fs::write(nm.join("a/lib/extra.js"), "").unwrap();
        assert_ne!(tree_digest(dir.path()).unwrap(), base, "added file");
        fs::remove_file(nm.join("a/lib/extra.js")).unwrap();

        fs::remove_file(nm.join(".bin/x")).unwrap();
        symlink("/tmp/elsewhere.js", nm.join(".bin/x")).unwrap();
        assert_ne!(tree_digest(dir.path()).unwrap(), base, "retargeted link");
    }
}
