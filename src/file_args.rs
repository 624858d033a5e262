//! Checks a forwarded command's files against the disk, by the rules of
//! [`crate::policy::files`] (docs/DESIGN.md, invariant 8): each file, resolved
//! as the daemon resolves it, must lie inside a root, outside every refused
//! folder (compared by device and inode too), with no symbolic link and no
//! folder another user could change on its way; an existing file must be
//! the user's own plain, non-executable file with one name.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::minimist::Parsed;
use crate::policy::Refusal;
use crate::policy::files::{self, PROFILE_MARKERS, SYSTEM_TMP, hidden_below, resolve};
use crate::runtime::CLAIM_FILE;
use crate::settings::Settings;

/// A folder no forwarded command's file may be in, whatever the roots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Denied {
    /// my-chrome's private runtime.
    Runtime,
    /// A browser's user data directory (a profile).
    Profile,
    /// Other programs' data (`snap`).
    AppData,
}

impl Denied {
    fn words(self) -> &'static str {
        match self {
            Denied::Runtime => "my-chrome's private runtime",
            Denied::Profile => "a browser's user data directory",
            Denied::AppData => "other programs' data",
        }
    }
}

/// Why a file may not be passed on: said to the agent, after the file's
/// name (`Refusal::File`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FileRefusal {
    #[error(
        "the file root {} the user set is or passes a symbolic link; ask the user to name its \
         real path instead",
        .0.display()
    )]
    LinkedRoot(PathBuf),
    #[error(
        "the file root {} the user set is /, the home folder or a folder above it, which no \
         agent's file may be given; ask the user to set their file roots again",
        .0.display()
    )]
    WideRoot(PathBuf),
    /// What the names alone decide (`policy::files`): relative, in
    /// ms-playwright, a credential cache.
    #[error("{0}")]
    Named(files::ByName),
    #[error("it would land inside my-chrome's private runtime ({})", .0.display())]
    InRuntime(PathBuf),
    #[error("it lies in {}", .0.words())]
    In(Denied),
    #[error("{} ({}) cannot be checked: {error}", .denied.words(), .dir.display())]
    DeniedUnchecked {
        denied: Denied,
        dir: PathBuf,
        error: String,
    },
    #[error("{} cannot be checked ({error})", .path.display())]
    Unchecked { path: PathBuf, error: String },
    #[error("{} on its way is a symbolic link", .0.display())]
    Link(PathBuf),
    #[error("{} is a browser's user data directory", .0.display())]
    LooksLikeProfile(PathBuf),
    #[error(
        "{} is a folder another user can change (owner uid {uid}, mode {mode:o})",
        .path.display()
    )]
    OthersCanChange { path: PathBuf, uid: u32, mode: u32 },
    #[error(
        "{0:?} is a hidden file or folder under the home directory (where programs keep \
         settings, keys and code)"
    )]
    HiddenInHome(String),
    #[error(
        "{name:?} is a hidden file or folder in {} (where tools keep settings and hooks)",
        .root.display()
    )]
    HiddenInRoot { name: String, root: PathBuf },
    #[error(
        "it lies outside the allowed roots ({}); save or pick files there, or ask the user to \
         allow the folder (a file root is the user's setting, which they confirm in their \
         browser)",
        .0.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    OutsideRoots(Vec<PathBuf>),
    #[error("it exists and is not a plain file")]
    NotPlain,
    #[error(
        "it exists and is executable; my-chrome never lets a browser command replace or read a \
         program"
    )]
    Executable,
    #[error("it exists and has other names (hard links)")]
    HardLinks,
    #[error("it exists and belongs to another user (uid {0})")]
    OtherUsers(u32),
}

/// Where a forwarded command's files may be, for one run.
#[derive(Debug, Clone)]
pub struct FileRules {
    /// The runtime as configured (the daemon's working directory is its
    /// real path).
    runtime: PathBuf,
    /// `HOME` as given, and the user's own from the user database.
    homes: Vec<PathBuf>,
    /// The roots, as real paths.
    roots: Vec<PathBuf>,
    /// Configured roots that are, or pass, a symbolic link: every file is
    /// refused until the user names the real path.
    linked_roots: Vec<PathBuf>,
    /// Configured roots that are `/`, a home folder or above one (the
    /// settings file was written by something other than `setup`): every
    /// file is refused until the user sets the roots again.
    wide_roots: Vec<PathBuf>,
    /// Folders refused whatever the roots.
    denied: Vec<(PathBuf, Denied)>,
}

impl FileRules {
    /// The rules for `config`: the system temporary directory, and the
    /// roots the user set (`settings`). Not the working directory: the
    /// caller picks that with `cd`.
    pub fn new(config: &Config, settings: &Settings) -> FileRules {
        let mut roots = Vec::new();
        if let Ok(tmp) = fs::canonicalize(SYSTEM_TMP) {
            roots.push(tmp);
        }
        let mut linked_roots = Vec::new();
        let mut wide_roots = Vec::new();
        for root in &settings.file_roots {
            // As `setup` takes a root: a settings file is read back as
            // written, but nothing else may have written it.
            let wide = crate::settings::new_file_root(root, &config.homes()).is_err();
            if wide {
                wide_roots.push(root.clone());
                continue;
            }
            // A root must be its own real path: a link could be turned to
            // point anywhere after the user set it.
            match fs::canonicalize(root) {
                Ok(real) if &real == root => roots.push(real),
                Ok(_) => linked_roots.push(root.clone()),
                // A root that does not exist holds no file yet.
                Err(_) => roots.push(root.clone()),
            }
        }
        let homes: Vec<PathBuf> = config.homes().into_iter().map(Path::to_path_buf).collect();
        let mut denied = vec![(config.runtime.path.clone(), Denied::Runtime)];
        // The user's default runtime, whichever this call is configured with.
        denied.push((
            config
                .account_home
                .join(crate::platform::DEFAULT_RUNTIME_UNDER_HOME),
            Denied::Runtime,
        ));
        // Every browser's profile, whichever one is the user's.
        for dir in crate::browser::every_user_data(&config.user_data_base)
            .into_iter()
            .chain(config.chrome_user_data.clone())
        {
            denied.push((dir, Denied::Profile));
        }
        for name in crate::platform::APP_DATA_UNDER_HOME {
            for home in &homes {
                denied.push((home.join(name), Denied::AppData));
            }
        }
        FileRules {
            runtime: config.runtime.path.clone(),
            homes,
            roots,
            linked_roots,
            wide_roots,
            denied,
        }
    }

    /// Why the files `line` names may not be passed on, if they may not.
    pub fn line_refusal(&self, line: &crate::policy::line::Line) -> Option<Refusal> {
        self.refusal(line.parsed())
    }

    /// Why the files a parsed command line names (`Line::parsed`) may not
    /// be passed on, if they may not.
    pub fn refusal(&self, parsed: &Parsed) -> Option<Refusal> {
        let files = match files::files_of(parsed) {
            Ok(files) => files,
            Err(refusal) => return Some(refusal),
        };
        files.into_iter().find_map(|file| {
            let why = self.check(&file.path).err()?;
            Some(Refusal::File {
                command: file.command,
                what: file.what,
                path: file.path,
                why: why.to_string(),
            })
        })
    }

    /// Fine for a file of a forwarded command (see the module's rules), in
    /// steps: the roots usable, the path as the daemon resolves it, the
    /// refused folders by name and by identity, every part of the way,
    /// hidden names, the root it lies in, the file itself.
    pub fn check(&self, raw: &str) -> Result<(), FileRefusal> {
        if let Some(root) = self.wide_roots.first() {
            return Err(FileRefusal::WideRoot(root.clone()));
        }
        if let Some(root) = self.linked_roots.first() {
            return Err(FileRefusal::LinkedRoot(root.clone()));
        }
        let path = self.resolved(raw)?;
        let denied = self.denied_identities()?;
        if let Some((_, why)) = self.denied.iter().find(|(dir, _)| path.starts_with(dir)) {
            return Err(FileRefusal::In(*why));
        }
        files::by_name(&path).map_err(FileRefusal::Named)?;
        let last = self.walk(&path, &denied)?;
        self.not_hidden_in_home(&path)?;
        let root = self.root_of(&path)?;
        if let Some(name) = hidden_below(&path, root) {
            return Err(FileRefusal::HiddenInRoot {
                name,
                root: root.clone(),
            });
        }
        existing_file(last.as_ref())
    }

    /// The path as the daemon resolves it: absolute (a relative name would
    /// be resolved against its working directory, the runtime's real path,
    /// never what was meant), `..` after a link taken as it takes it; never
    /// inside the runtime.
    fn resolved(&self, raw: &str) -> Result<PathBuf, FileRefusal> {
        files::absolute(raw).map_err(FileRefusal::Named)?;
        let real_runtime = fs::canonicalize(&self.runtime).unwrap_or_else(|_| self.runtime.clone());
        let path = resolve(&real_runtime, raw);
        if path.starts_with(&self.runtime) || path.starts_with(&real_runtime) {
            return Err(FileRefusal::InRuntime(self.runtime.clone()));
        }
        Ok(path)
    }

    /// Each refused folder's identity (device and inode), as named and
    /// through its links. One that does not exist has no other spelling;
    /// one that cannot be read might: every file is refused then.
    fn denied_identities(&self) -> Result<Vec<(Identity, Denied)>, FileRefusal> {
        let mut out = Vec::new();
        for (dir, why) in &self.denied {
            for spelling in [Ok(dir.clone()), fs::canonicalize(dir)] {
                match spelling.and_then(fs::metadata) {
                    Ok(meta) => out.push((identity(&meta), *why)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(FileRefusal::DeniedUnchecked {
                            denied: *why,
                            dir: dir.clone(),
                            error: e.to_string(),
                        });
                    }
                }
            }
        }
        Ok(out)
    }

    /// Every part of the way, from `/`: no link, no refused folder by
    /// identity (another spelling of its path, a case-insensitive file
    /// system), nothing that looks like a profile, no folder another user
    /// could change. What exists of the file itself, if it does.
    fn walk(
        &self,
        path: &Path,
        denied: &[(Identity, Denied)],
    ) -> Result<Option<fs::Metadata>, FileRefusal> {
        let me = nix::unistd::geteuid().as_raw();
        let mut prefix = PathBuf::new();
        let mut last = None;
        for part in path.components() {
            prefix.push(part);
            let meta = match fs::symlink_metadata(&prefix) {
                Ok(meta) => meta,
                // What does not exist yet cannot be a link or a profile
                // (the daemon creates the file and its folders itself).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                // Anything else (no permission, a file where a folder
                // should be) is no answer: refused.
                Err(e) => {
                    return Err(FileRefusal::Unchecked {
                        path: prefix,
                        error: e.to_string(),
                    });
                }
            };
            if meta.file_type().is_symlink() {
                return Err(FileRefusal::Link(prefix));
            }
            if let Some((_, why)) = denied.iter().find(|(id, _)| *id == identity(&meta)) {
                return Err(match why {
                    Denied::Runtime => FileRefusal::InRuntime(self.runtime.clone()),
                    other => FileRefusal::In(*other),
                });
            }
            if meta.is_dir() && looks_like_a_profile(&prefix) {
                return Err(FileRefusal::LooksLikeProfile(prefix));
            }
            // Any runtime of my-chrome's, not only this call's: another
            // (`MY_CHROME_RUNTIME_DIR`) holds settings of its own.
            if meta.is_dir() && fs::symlink_metadata(prefix.join(CLAIM_FILE)).is_ok() {
                return Err(FileRefusal::InRuntime(prefix));
            }
            if meta.is_dir() && others_can_change(meta.uid(), meta.mode(), me) {
                return Err(FileRefusal::OthersCanChange {
                    path: prefix,
                    uid: meta.uid(),
                    mode: meta.mode() & 0o7777,
                });
            }
            last = Some(meta);
        }
        Ok(last)
    }

    /// Nothing hidden under the home directory (as given or as its real
    /// path), where programs keep settings, keys and code.
    fn not_hidden_in_home(&self, path: &Path) -> Result<(), FileRefusal> {
        let real_homes: Vec<PathBuf> = self
            .homes
            .iter()
            .filter_map(|home| fs::canonicalize(home).ok())
            .collect();
        match self
            .homes
            .iter()
            .chain(&real_homes)
            .find_map(|home| hidden_below(path, home))
        {
            Some(hidden) => Err(FileRefusal::HiddenInHome(hidden)),
            None => Ok(()),
        }
    }

    /// The innermost root `path` lies in.
    fn root_of(&self, path: &Path) -> Result<&PathBuf, FileRefusal> {
        self.roots
            .iter()
            .filter(|root| path.starts_with(root))
            .max_by_key(|root| root.components().count())
            .ok_or_else(|| FileRefusal::OutsideRoots(self.roots.clone()))
    }
}

/// An existing file must be the user's own plain, non-executable file with
/// one name; one that does not exist yet is fine.
fn existing_file(meta: Option<&fs::Metadata>) -> Result<(), FileRefusal> {
    let me = nix::unistd::geteuid().as_raw();
    match meta {
        Some(meta) if !meta.is_file() => Err(FileRefusal::NotPlain),
        Some(meta) if meta.permissions().mode() & 0o111 != 0 => Err(FileRefusal::Executable),
        Some(meta) if meta.nlink() > 1 => Err(FileRefusal::HardLinks),
        Some(meta) if meta.uid() != me => Err(FileRefusal::OtherUsers(meta.uid())),
        _ => Ok(()),
    }
}

/// A file's or folder's device and inode: what it is, whatever its path's
/// spelling.
pub(crate) type Identity = (u64, u64);

pub(crate) fn identity(meta: &fs::Metadata) -> Identity {
    (meta.dev(), meta.ino())
}

/// Whether `dir` holds one of the files that mark a browser profile.
fn looks_like_a_profile(dir: &Path) -> bool {
    PROFILE_MARKERS
        .iter()
        .any(|marker| fs::symlink_metadata(dir.join(marker)).is_ok())
}

/// Whether another user than `me` could change a folder owned by `uid`
/// with `mode`, and so swap what lies in it between this check and the
/// daemon's use: only folders of ours or root's pass, writable by others
/// only when root's and sticky (`/tmp`).
fn others_can_change(uid: u32, mode: u32, me: u32) -> bool {
    let owner_ok = uid == me || uid == 0;
    let shared = mode & 0o022 != 0;
    let sticky_roots = uid == 0 && mode & 0o1000 != 0;
    !owner_ok || (shared && !sticky_roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    impl FileRules {
        /// The check, as the agent reads it.
        fn says(&self, raw: &str) -> Result<(), String> {
            self.check(raw).map_err(|e| e.to_string())
        }
    }

    #[test]
    fn a_home_of_the_callers_choosing_uncovers_nothing_of_the_users_own() {
        let elsewhere = tempfile::tempdir().unwrap();
        let rules = rules_for(&[("HOME", elsewhere.path())]);
        let account = nix::unistd::User::from_uid(nix::unistd::getuid())
            .unwrap()
            .unwrap()
            .dir;
        assert_eq!(
            rules.not_hidden_in_home(&account.join(".bashrc")),
            Err(FileRefusal::HiddenInHome(".bashrc".into()))
        );
        assert!(
            rules.denied.iter().any(|(dir, why)| *why == Denied::Runtime
                && *dir == account.join(crate::platform::DEFAULT_RUNTIME_UNDER_HOME)),
            "{:?}",
            rules.denied
        );
    }

    #[test]
    fn any_runtime_of_my_chromes_is_refused_not_only_the_calls_own() {
        let other = tempfile::tempdir_in("/tmp").unwrap();
        let runtime = other.path().join("rt");
        fs::create_dir(&runtime).unwrap();
        fs::write(runtime.join(CLAIM_FILE), crate::runtime::CLAIM).unwrap();
        let rules = rules_for(&[("HOME", Path::new("/home/nobody-here"))]);
        let planted = runtime.join("settings.json");
        assert_eq!(
            rules.walk(&planted, &[]).err(),
            Some(FileRefusal::InRuntime(runtime.clone()))
        );
        // Without the claim it is a folder like any other.
        fs::remove_file(runtime.join(CLAIM_FILE)).unwrap();
        assert!(rules.walk(&planted, &[]).is_ok());
    }

    #[test]
    fn each_step_decides_alone() {
        let place = Place::new();
        let rules = &place.rules;
        // The path as the daemon resolves it.
        assert!(matches!(
            rules.resolved("x.png"),
            Err(FileRefusal::Named(_))
        ));
        let inside = format!("{}/x.png", rules.runtime.display());
        assert_eq!(
            rules.resolved(&inside),
            Err(FileRefusal::InRuntime(rules.runtime.clone()))
        );
        assert_eq!(rules.resolved("/a/b/../c"), Ok(PathBuf::from("/a/c")));
        // The innermost root.
        let deep = rules.roots[0].join("sub/file.png");
        assert_eq!(rules.root_of(&deep), Ok(&rules.roots[0]));
        assert!(matches!(
            rules.root_of(Path::new("/nowhere/x")),
            Err(FileRefusal::OutsideRoots(_))
        ));
        // Hidden under the home directory.
        assert_eq!(
            rules.not_hidden_in_home(&rules.homes[0].join(".ssh/id_ed25519")),
            Err(FileRefusal::HiddenInHome(".ssh".into()))
        );
        assert_eq!(
            rules.not_hidden_in_home(&rules.homes[0].join("work/a.png")),
            Ok(())
        );
        // The file itself.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        assert_eq!(existing_file(None), Ok(()));
        assert_eq!(existing_file(Some(&fs::metadata(&file).unwrap())), Ok(()));
        assert_eq!(
            existing_file(Some(&fs::metadata(dir.path()).unwrap())),
            Err(FileRefusal::NotPlain)
        );
        fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            existing_file(Some(&fs::metadata(&file).unwrap())),
            Err(FileRefusal::Executable)
        );
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        fs::hard_link(&file, dir.path().join("g")).unwrap();
        assert_eq!(
            existing_file(Some(&fs::metadata(&file).unwrap())),
            Err(FileRefusal::HardLinks)
        );
        // A refused folder's kind is said in words.
        assert_eq!(
            FileRefusal::In(Denied::Profile).to_string(),
            "it lies in a browser's user data directory"
        );
    }
    use std::os::unix::fs::symlink;

    fn args(words: &[&str]) -> Parsed {
        let words: Vec<String> = words.iter().map(|s| s.to_string()).collect();
        crate::minimist::parse(&words, crate::pinned_commands::booleans()).unwrap()
    }

    /// A home with a runtime, a browser profile, a working directory and
    /// `/tmp`-like scratch root, all under one temporary directory.
    struct Place {
        dir: tempfile::TempDir,
        rules: FileRules,
    }

    /// The user's file root setting, in these tests' tables.
    const ROOT: &str = "file root";

    /// The rules of a configuration made of `vars` (and the user's roots,
    /// named [`ROOT`]).
    fn rules_for(vars: &[(&str, &Path)]) -> FileRules {
        let (roots, vars): (Vec<_>, Vec<_>) = vars.iter().partition(|(k, _)| *k == ROOT);
        let vars = vars.iter().map(|(k, v)| (k.into(), v.into()));
        let config = Config::from_vars(vars).unwrap();
        let settings = Settings {
            file_roots: roots.iter().map(|(_, v)| v.to_path_buf()).collect(),
            ..Settings::default()
        };
        FileRules::new(&config, &settings)
    }

    impl Place {
        fn new() -> Place {
            let dir = tempfile::Builder::new().prefix("fa").tempdir().unwrap();
            let home = dir.path().join("home");
            let runtime = home.join("runtime");
            fs::create_dir_all(runtime.join("cli/node_modules")).unwrap();
            fs::create_dir_all(home.join("work/.git/hooks")).unwrap();
            fs::create_dir_all(home.join("profile/Default")).unwrap();
            fs::write(home.join("profile/Local State"), "{}").unwrap();
            fs::create_dir_all(home.join(".ssh")).unwrap();
            fs::create_dir_all(dir.path().join("scratch")).unwrap();
            let mut rules = rules_for(&[
                ("HOME", &home),
                ("MY_CHROME_RUNTIME_DIR", &runtime),
                ("MY_CHROME_USER_DATA_DIR", &home.join("profile")),
                (ROOT, &dir.path().join("scratch")),
                (ROOT, &home.join("work")),
            ]);
            // The place itself lies in the system's /tmp: without that root
            // here, what lies outside the others shows.
            rules.roots.retain(|root| !dir.path().starts_with(root));
            Place { rules, dir }
        }

        fn path(&self, rel: &str) -> String {
            self.dir.path().join(rel).display().to_string()
        }

        fn refused(&self, line: &[&str]) -> Option<String> {
            self.rules.refusal(&args(line)).map(|r| r.to_string())
        }
    }

    #[test]
    fn files_inside_the_runtime_or_through_a_link_are_refused() {
        let place = Place::new();
        let home = place.path("home");
        let runtime = format!("{home}/runtime");
        symlink(&runtime, format!("{home}/work/link")).unwrap();
        symlink("/nowhere", format!("{home}/work/dangling")).unwrap();
        let target = format!("{runtime}/cli/node_modules/@playwright/cli/playwright-cli.js");
        for (line, needle) in [
            (&["screenshot", "--filename=x.png"][..], "relative path"),
            (&["screenshot", "--filename", "x.png"], "relative path"),
            (&["pdf", &format!("--filename={target}")], "private runtime"),
            (
                &[
                    "response-body",
                    "3",
                    "--filename",
                    &format!("{home}/work/../runtime/cli/a"),
                ],
                "private runtime",
            ),
            (&["state-save", "state.json"], "relative path"),
            (
                &[
                    "video-start",
                    "--size",
                    "800x600",
                    &format!("{runtime}/v.webm"),
                ],
                "private runtime",
            ),
            (
                &["snapshot", &format!("--filename={home}/work/link/x.yml")],
                "is a symbolic link",
            ),
            (
                &["eval", "1", &format!("--filename={home}/work/dangling")],
                "is a symbolic link",
            ),
            (
                &[
                    "screenshot",
                    &format!("--filename={home}/work/ok.png"),
                    "--filename=x.png",
                ],
                "relative path",
            ),
            (&["upload", "session-output/page.yml"], "relative path"),
        ] {
            let why = place
                .refused(line)
                .unwrap_or_else(|| panic!("{line:?} passed"));
            assert!(why.contains(needle), "{line:?}: {why}");
            assert!(why.contains("ask the user"), "{why}");
            assert!(!why.contains("my-chrome setup"), "{why}");
        }
        for line in [
            &["screenshot", &format!("--filename={home}/work/x.png")][..],
            &["screenshot", "e5"],
            &[
                "video-start",
                "--size",
                "800x600",
                &place.path("scratch/v.webm"),
            ],
            &["cookie-set", "a", "b", "--path", "/"],
            &["goto", "https://example.test/x.png"],
            &["tab-list"],
        ] {
            assert_eq!(place.refused(line), None, "{line:?}");
        }
    }

    #[test]
    fn only_the_roots_are_open_and_never_what_holds_secrets_or_code() {
        let place = Place::new();
        let home = place.path("home");
        fs::write(format!("{home}/work/page.html"), "x").unwrap();
        fs::write(format!("{home}/notes.txt"), "x").unwrap();
        for (raw, needle) in [
            (
                format!("{home}/profile/Default/Cookies"),
                "user data directory",
            ),
            (format!("{home}/profile/Local State"), "user data directory"),
            (
                format!("{home}/.ssh/authorized_keys"),
                "\".ssh\" is a hidden",
            ),
            (format!("{home}/.bashrc"), "\".bashrc\" is a hidden"),
            (
                format!("{home}/work/.git/hooks/pre-commit"),
                "\".git\" is a hidden",
            ),
            (format!("{home}/notes.txt"), "outside the allowed roots"),
            ("/etc/passwd".into(), "outside the allowed roots"),
            (
                "/tmp/cache/ms-playwright/ffmpeg-1011/ffmpeg-linux".into(),
                "ms-playwright",
            ),
            (
                format!(
                    "{home}/{}/chromium/x",
                    crate::platform::APP_DATA_UNDER_HOME[0]
                ),
                "other programs' data",
            ),
        ] {
            let why = place.rules.says(&raw).expect_err(&raw);
            assert!(why.contains(needle), "{raw}: {why}");
        }
        for raw in [
            format!("{home}/work/page.html"),
            format!("{home}/work/new/folder/shot.png"),
            place.path("scratch/x.pdf"),
        ] {
            assert_eq!(place.rules.says(&raw), Ok(()), "{raw}");
        }
        // A folder anywhere that looks like a browser profile.
        let other = place.path("scratch/other-profile");
        fs::create_dir_all(format!("{other}/Default")).unwrap();
        symlink("host-1", format!("{other}/SingletonLock")).unwrap();
        let why = place
            .rules
            .says(&format!("{other}/Default/History"))
            .unwrap_err();
        assert!(why.contains("user data directory"), "{why}");
    }

    #[test]
    fn an_existing_file_must_be_plain_not_executable_and_alone() {
        let place = Place::new();
        let work = place.path("home/work");
        let tool = format!("{work}/build.sh");
        fs::write(&tool, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&tool, fs::Permissions::from_mode(0o700)).unwrap();
        fs::write(format!("{work}/a.txt"), "x").unwrap();
        fs::hard_link(format!("{work}/a.txt"), format!("{work}/b.txt")).unwrap();
        fs::create_dir(format!("{work}/folder")).unwrap();
        for (raw, needle) in [
            (tool, "executable"),
            (format!("{work}/b.txt"), "hard links"),
            (format!("{work}/folder"), "not a plain file"),
        ] {
            let why = place.rules.says(&raw).expect_err(&raw);
            assert!(why.contains(needle), "{raw}: {why}");
        }
    }

    #[test]
    fn a_file_option_or_argument_without_a_path_is_refused() {
        let place = Place::new();
        let work = place.path("home/work");
        for line in [
            &["screenshot", "--filename"][..],
            &["screenshot", "--no-filename"],
            &["screenshot", "--filename", "--full-page"],
            &["upload", "--no-_"],
        ] {
            let why = place.refused(line).expect("refused");
            assert!(why.contains("names no file"), "{line:?}: {why}");
        }
        let fine = format!("--filename={work}/shot.png");
        assert_eq!(place.refused(&["screenshot", &fine]), None);
    }

    #[test]
    fn what_a_file_refusal_quotes_is_redacted() {
        let place = Place::new();
        let work = place.path("home/work");
        let run = "A".repeat(43);
        for raw in [
            format!("{work}/.{run}/x.png"),
            format!("{work}/krb5cc_{run}"),
        ] {
            let line = format!("--filename={raw}");
            let why = place.refused(&["screenshot", &line]).expect("refused");
            assert!(!why.contains(&run), "{why}");
        }
    }

    #[test]
    fn a_refused_folder_that_cannot_be_read_refuses_every_file() {
        let place = Place::new();
        let work = place.path("home/work");
        // A refused folder reached through a loop of links: its other
        // spellings cannot be known, so nothing is let through.
        let lo = place.path("home/loop");
        symlink(&lo, &lo).unwrap();
        let mut rules = place.rules.clone();
        rules.denied.push((PathBuf::from(&lo), Denied::AppData));
        let why = rules.says(&format!("{work}/a.png")).expect_err("refused");
        assert!(why.contains("cannot be checked"), "{why}");
    }

    #[test]
    fn what_another_user_could_change_or_what_holds_credentials_is_refused() {
        let place = Place::new();
        let work = place.path("home/work");
        // A folder anyone may write to (not root's sticky /tmp): another
        // user could swap its files between the check and the write.
        let open = format!("{work}/open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        let why = place.rules.says(&format!("{open}/x.png")).unwrap_err();
        assert!(why.contains("another user can change"), "{why}");
        let group = format!("{work}/group");
        fs::create_dir(&group).unwrap();
        fs::set_permissions(&group, fs::Permissions::from_mode(0o750)).unwrap();
        assert_eq!(place.rules.says(&format!("{group}/x.png")), Ok(()));
        // Writable by its group: the group's other members could swap too.
        fs::set_permissions(&group, fs::Permissions::from_mode(0o2770)).unwrap();
        let why = place.rules.says(&format!("{group}/x.png")).unwrap_err();
        assert!(why.contains("mode 2770"), "{why}");
        // Kerberos' ticket cache lives in /tmp under a plain name.
        let why = place.rules.says("/tmp/krb5cc_1000").unwrap_err();
        assert!(why.contains("credential cache"), "{why}");
        // A file or folder of another user (root can make one).
        if nix::unistd::geteuid().is_root() {
            let nobody = nix::unistd::Uid::from_raw(65534);
            let theirs = format!("{work}/theirs.json");
            fs::write(&theirs, "{}").unwrap();
            nix::unistd::chown(theirs.as_str(), Some(nobody), None).unwrap();
            let why = place.rules.says(&theirs).unwrap_err();
            assert!(why.contains("belongs to another user"), "{why}");
            let their_dir = format!("{work}/their-dir");
            fs::create_dir(&their_dir).unwrap();
            nix::unistd::chown(their_dir.as_str(), Some(nobody), None).unwrap();
            let why = place.rules.says(&format!("{their_dir}/x")).unwrap_err();
            assert!(why.contains("another user can change"), "{why}");
        }
    }

    #[test]
    fn a_home_given_through_a_link_still_hides_its_hidden_folders() {
        let place = Place::new();
        let real_home = place.path("home");
        let linked_home = place.path("linked-home");
        symlink(&real_home, &linked_home).unwrap();
        fs::create_dir_all(format!("{real_home}/.local/share/keyrings")).unwrap();
        // A root the user set inside a hidden folder of the home.
        let root = format!("{real_home}/.local/share");
        let rules = rules_for(&[("HOME", Path::new(&linked_home)), (ROOT, Path::new(&root))]);
        let why = rules
            .says(&format!("{real_home}/.local/share/keyrings/login.keyring"))
            .unwrap_err();
        assert!(why.contains("\".local\" is a hidden"), "{why}");
    }

    #[test]
    fn dot_dot_after_a_link_is_taken_as_the_daemon_takes_it() {
        // The daemon resolves `..` in the text (`path.resolve`), before any
        // link is followed: `link/../x` is `x`, where it writes. The check
        // looks at that same path.
        let place = Place::new();
        let work = place.path("home/work");
        symlink(place.path("home/runtime/cli"), format!("{work}/link")).unwrap();
        assert_eq!(
            place.rules.says(&format!("{work}/link/../shot.png")),
            Ok(())
        );
        assert_eq!(
            resolve(Path::new("/r"), &format!("{work}/link/../shot.png")),
            Path::new(&format!("{work}/shot.png"))
        );
        let why = place.rules.says(&format!("{work}/link/x.js")).unwrap_err();
        assert!(why.contains("symbolic link"), "{why}");
        let why = place
            .rules
            .says(&format!("{work}/link/../link/../../runtime/cli/x.js"))
            .unwrap_err();
        assert!(why.contains("private runtime"), "{why}");
    }

    #[test]
    fn a_configured_root_through_a_link_refuses_every_file() {
        let place = Place::new();
        symlink(place.path("scratch"), place.path("via")).unwrap();
        let home = place.path("home");
        let via = place.path("via");
        let rules = rules_for(&[("HOME", Path::new(&home)), (ROOT, Path::new(&via))]);
        let why = rules.says(&place.path("via/x.png")).unwrap_err();
        assert!(why.contains("name its real path"), "{why}");
    }

    #[test]
    fn a_stored_root_of_slash_or_a_home_refuses_every_file() {
        // What `setup` refuses, read back from a settings file something
        // else wrote: no file at all, not the whole system.
        let place = Place::new();
        let home = place.path("home");
        let account = rules_for(&[("HOME", Path::new(&home))]).homes[1].clone();
        for wide in [Path::new("/"), Path::new(&home), place.dir.path(), &account] {
            let rules = rules_for(&[("HOME", Path::new(&home)), (ROOT, wide)]);
            for file in ["/etc/hostname".to_string(), place.path("scratch/x.png")] {
                let why = rules.says(&file).unwrap_err();
                assert!(
                    why.contains("set their file roots again"),
                    "{wide:?}: {why}"
                );
            }
        }
        // Nor is the working directory a root, whatever it is (the place
        // lies in /tmp: without that root, what lies outside shows).
        let mut rules = rules_for(&[("HOME", Path::new(&home))]);
        rules
            .roots
            .retain(|root| !place.dir.path().starts_with(root));
        for file in [format!("{home}/work/page.html"), "/etc/hostname".into()] {
            let why = rules.says(&file).unwrap_err();
            assert!(why.contains("outside the allowed roots"), "{why}");
            assert!(why.contains("ask the user to allow the folder"), "{why}");
        }
    }

    #[test]
    fn a_runtime_reached_through_a_link_is_still_the_runtime() {
        // Configured as /…/via/runtime where `via` links to the real parent:
        // the daemon's cwd is the real path, and `..` climbs from there.
        let home = tempfile::Builder::new().prefix("fa").tempdir().unwrap();
        let real = home.path().join("x/y");
        fs::create_dir_all(real.join("runtime")).unwrap();
        symlink(&real, home.path().join("via")).unwrap();
        let configured = home.path().join("via/runtime");
        let rules = rules_for(&[
            ("HOME", home.path()),
            ("MY_CHROME_RUNTIME_DIR", &configured),
        ]);
        let real_path = real.join("runtime/bootstrap.json");
        let via = home.path().join("via/runtime/../runtime/lease.json");
        for line in [
            &["state-save", &real_path.display().to_string()][..],
            &["state-save", &via.display().to_string()],
            &["pdf", "--filename=./cli/x"],
        ] {
            assert!(rules.refusal(&args(line)).is_some(), "{line:?} passed");
        }
        // Each spelling is the runtime by its name, whichever the path
        // starts with (`via/runtime/../runtime` is `via/runtime` in the text).
        let inside = format!(
            "it would land inside my-chrome's private runtime ({})",
            configured.display()
        );
        for raw in [&real_path, &via] {
            assert_eq!(rules.says(&raw.display().to_string()), Err(inside.clone()));
        }
    }

    #[test]
    fn a_profile_configured_through_a_link_is_known_by_its_identity() {
        // MY_CHROME_USER_DATA_DIR names the profile through a link; the file
        // names its real path, which no refused path's text starts with.
        let place = Place::new();
        let home = place.path("home");
        symlink(&home, place.path("via")).unwrap();
        let rules = rules_for(&[
            ("HOME", Path::new(&home)),
            (
                "MY_CHROME_RUNTIME_DIR",
                Path::new(&place.path("home/runtime")),
            ),
            (
                "MY_CHROME_USER_DATA_DIR",
                Path::new(&place.path("via/profile")),
            ),
        ]);
        assert_eq!(
            rules.says(&format!("{home}/profile/Default/Cookies")),
            Err("it lies in a browser's user data directory".into())
        );
    }

    #[test]
    fn a_path_through_a_file_cannot_be_checked() {
        // Not "does not exist yet": an answer other than that is no answer.
        let place = Place::new();
        let work = place.path("home/work");
        fs::write(format!("{work}/a.txt"), "x").unwrap();
        assert_eq!(
            place.rules.says(&format!("{work}/a.txt/x.png")),
            Err(format!(
                "{work}/a.txt/x.png cannot be checked (Not a directory (os error 20))"
            ))
        );
    }

    #[test]
    fn only_our_folders_and_roots_pass_and_roots_shared_ones_only_sticky() {
        // As a user other than root (1000): its own and root's folders.
        let me = 1000;
        assert!(!others_can_change(1000, 0o40700, me));
        assert!(!others_can_change(0, 0o40755, me));
        assert!(!others_can_change(0, 0o41777, me), "/tmp");
        // Another user's, or shared without root's sticky bit: no.
        assert!(others_can_change(1001, 0o40700, me));
        assert!(others_can_change(1000, 0o40775, me));
        assert!(
            others_can_change(1000, 0o41777, me),
            "ours, sticky: not root's"
        );
        assert!(others_can_change(0, 0o40777, me));
        assert!(others_can_change(0, 0o40757, me));
        // As root, the same rules.
        assert!(!others_can_change(0, 0o40700, 0));
        assert!(others_can_change(1000, 0o40700, 0));
    }
}
