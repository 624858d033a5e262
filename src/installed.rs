//! What `scripts/install.sh` recorded it installed, one absolute path per
//! line in `~/.local/share/my-chrome/installed`: the binary, and a copy of
//! the skill for each agent asked for. `uninstall` removes the skill copies
//! it finds there, and only those: a recorded path that is not one of the
//! places install.sh puts the skill, or no longer holds the skill, is left.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The record, relative to `HOME`.
const RECORD: &str = ".local/share/my-chrome/installed";

/// Where install.sh puts the skill, for each agent it knows, relative to
/// `HOME`.
const SKILL_PLACES: [(&str, &str); 2] = [
    ("Claude Code", ".claude/skills/my-chrome"),
    ("Codex", ".agents/skills/my-chrome"),
];

/// A recorded copy of the skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillCopy {
    pub agent: &'static str,
    pub path: PathBuf,
}

/// Where install.sh keeps its record.
pub fn record_path(home: &Path) -> PathBuf {
    home.join(RECORD)
}

/// The record as read.
#[derive(Debug, Default)]
pub struct Record {
    path: PathBuf,
    lines: Vec<String>,
}

impl Record {
    /// Reads the record; an empty one when install.sh recorded nothing.
    pub fn read(home: &Path) -> io::Result<Record> {
        let path = record_path(home);
        let text = match fs::read_to_string(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            other => other?,
        };
        Ok(Record {
            path,
            lines: text.lines().map(str::to_string).collect(),
        })
    }

    /// The recorded copies of the skill, in install.sh's places.
    pub fn skill_copies(&self, home: &Path) -> Vec<SkillCopy> {
        SKILL_PLACES
            .iter()
            .map(|(agent, rel)| SkillCopy {
                agent,
                path: home.join(rel),
            })
            .filter(|copy| self.lines.iter().any(|l| Path::new(l) == copy.path))
            .collect()
    }

    /// Drops `removed` from the record, rewritten whole (a new file renamed
    /// over it); the record goes when nothing is left in it.
    pub fn forget(&mut self, removed: &[PathBuf]) -> io::Result<()> {
        self.lines
            .retain(|l| !removed.iter().any(|r| Path::new(l) == r));
        if self.lines.is_empty() {
            return match fs::remove_file(&self.path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            };
        }
        let dir = self.path.parent().unwrap_or(Path::new("/"));
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        for line in &self.lines {
            writeln!(file, "{line}")?;
        }
        file.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Whether `dir` still holds the skill install.sh copied: its `SKILL.md`
/// names my-chrome, and install.sh's `BINARY` note is beside it (both
/// regular files, not links).
pub fn holds_the_skill(dir: &Path) -> bool {
    let regular =
        |name: &str| fs::symlink_metadata(dir.join(name)).is_ok_and(|m| m.file_type().is_file());
    regular("SKILL.md")
        && regular("BINARY")
        && fs::read_to_string(dir.join("SKILL.md"))
            .is_ok_and(|text| text.lines().take(4).any(|l| l.trim() == "name: my-chrome"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home_with(record: &str) -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(RECORD);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, record).unwrap();
        home
    }

    #[test]
    fn only_the_skill_places_install_sh_uses_are_skill_copies() {
        let home = home_with("");
        let h = home.path();
        let text = format!(
            "{}\n{}\n{}\n/etc\n",
            h.join(".local/bin/my-chrome").display(),
            h.join(".claude/skills/my-chrome").display(),
            h.join(".claude/skills/other").display(),
        );
        fs::write(h.join(RECORD), text).unwrap();
        let record = Record::read(h).unwrap();
        assert_eq!(
            record.skill_copies(h),
            [SkillCopy {
                agent: "Claude Code",
                path: h.join(".claude/skills/my-chrome")
            }]
        );
        assert!(Record::read(&h.join("nobody")).unwrap().lines.is_empty());
        // A record that cannot be read is an error, not "nothing recorded".
        let odd = tempfile::tempdir().unwrap();
        fs::create_dir_all(odd.path().join(RECORD)).unwrap();
        assert!(Record::read(odd.path()).is_err());
    }

    #[test]
    fn forgetting_keeps_the_rest_and_removes_an_empty_record() {
        let home = home_with("/x/bin/my-chrome\n/h/.claude/skills/my-chrome\n");
        let mut record = Record::read(home.path()).unwrap();
        record
            .forget(&[PathBuf::from("/h/.claude/skills/my-chrome")])
            .unwrap();
        assert_eq!(
            fs::read_to_string(home.path().join(RECORD)).unwrap(),
            "/x/bin/my-chrome\n"
        );
        record.forget(&[PathBuf::from("/x/bin/my-chrome")]).unwrap();
        assert!(!home.path().join(RECORD).exists());
        // Already gone: nothing to do. Not removable: an error.
        record.forget(&[]).unwrap();
        fs::create_dir(home.path().join(RECORD)).unwrap();
        assert!(record.forget(&[]).is_err());
    }

    #[test]
    fn a_folder_is_the_skill_only_with_its_files_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(!holds_the_skill(d));
        fs::write(d.join("SKILL.md"), "---\nname: my-chrome\n---\n").unwrap();
        assert!(!holds_the_skill(d), "no BINARY note");
        fs::write(d.join("BINARY"), "/x/my-chrome\n").unwrap();
        assert!(holds_the_skill(d));
        fs::write(d.join("SKILL.md"), "---\nname: another\n---\n").unwrap();
        assert!(!holds_the_skill(d));
    }
}
