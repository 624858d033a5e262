//! Which browser is the user's: the one named (`MY_CHROME_BROWSER`, else
//! the choice `my-chrome setup --browser NAME` recorded), else the one
//! supported browser installed; or the pair `MY_CHROME_CHROME` and
//! `MY_CHROME_USER_DATA_DIR` name (the escape hatch). Never a guess between
//! browsers: several installed and none chosen is refused with the way to
//! choose. Where each browser lives is `platform::BROWSERS`.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::browser_name::{Browser, UnknownBrowser};
use crate::config::Config;
use crate::exit::Exit;
use crate::platform::{self, browsers::Places};
use crate::procs::ProcessTable;
use crate::runtime::{Runtime, RuntimeError, StateFile};

/// The browser my-chrome works with, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    /// `None`: an executable `MY_CHROME_CHROME` names that is none of ours.
    pub browser: Option<Browser>,
    pub executable: PathBuf,
    /// Its user data directory, where its process singleton lives.
    pub user_data: PathBuf,
    pub how: How,
}

/// How it was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// `MY_CHROME_BROWSER`.
    Variable,
    /// `my-chrome setup --browser NAME`.
    Recorded,
    /// No choice: the one supported browser installed.
    OnlyInstalled,
    /// `MY_CHROME_CHROME` (and `MY_CHROME_USER_DATA_DIR`).
    Paths,
    /// `setup --browser NAME` (not recorded yet).
    Asked,
}

impl How {
    pub fn describe(self) -> &'static str {
        match self {
            How::Variable => "named by MY_CHROME_BROWSER",
            How::Recorded => "chosen with `my-chrome setup --browser`",
            How::OnlyInstalled => "the one supported browser installed",
            How::Paths => "named by MY_CHROME_CHROME",
            How::Asked => "asked for with `my-chrome setup --browser`",
        }
    }
}

impl Chosen {
    /// What messages call it: "Brave", or the browser the variable names.
    pub fn display(&self) -> String {
        match self.browser {
            Some(browser) => browser.display().into(),
            None => "the browser MY_CHROME_CHROME names".into(),
        }
    }
}

impl fmt::Display for Chosen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(
        "{path}: {0}. It holds the browser `my-chrome setup --browser NAME` chose: choose again \
         with it",
        path = .1.display()
    )]
    Recorded(UnknownBrowser, PathBuf),
    #[error(
        "{} ({}) is not installed: none of {} exists{}; nothing was read, recorded or \
         attached. Install it, or choose another ({})",
        .browser.display(),
        .how.describe(),
        listed(.looked),
        confined_note(.confined),
        choosing()
    )]
    NotInstalled {
        browser: Browser,
        how: How,
        looked: Vec<PathBuf>,
        confined: Vec<(Browser, String, PathBuf)>,
    },
    #[error(
        "no supported browser is installed (none of {names} at its own place){}; nothing was \
         read or attached. Install one of them, or point MY_CHROME_CHROME and \
         MY_CHROME_USER_DATA_DIR at yours",
        confined_note(.confined),
        names = Browser::names()
    )]
    NoneInstalled {
        confined: Vec<(Browser, String, PathBuf)>,
    },
    #[error(
        "several browsers are installed ({}) and none is chosen, so my-chrome will not guess \
         which one is yours; nothing was read or attached. Choose one: {}",
        .0.iter().map(|(b, path)| format!("{} as `{}` at {}", b.display(), b.name(), path.display())).collect::<Vec<_>>().join(", "),
        choosing()
    )]
    Several(Vec<(Browser, PathBuf)>),
    #[error(
        "MY_CHROME_CHROME names {}, which is none of the browsers my-chrome knows ({}), so its \
         user data directory is unknown: set MY_CHROME_USER_DATA_DIR to the folder it runs with \
         as well, or choose a browser by name instead",
        .0.display(),
        Browser::names()
    )]
    UnknownExecutable(PathBuf),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl BrowserError {
    pub fn exit(&self) -> Exit {
        match self {
            BrowserError::Recorded(..) | BrowserError::UnknownExecutable(_) => Exit::Usage,
            BrowserError::NotInstalled { .. }
            | BrowserError::NoneInstalled { .. }
            | BrowserError::Several(_) => Exit::Chrome,
            BrowserError::Runtime(e) => e.exit(),
        }
    }
}

fn choosing() -> String {
    format!(
        "`my-chrome setup --browser NAME` once, or MY_CHROME_BROWSER=NAME per call; the names \
         are {}",
        Browser::names()
    )
}

fn listed(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn confined_note(confined: &[(Browser, String, PathBuf)]) -> String {
    confined
        .iter()
        .map(|(browser, kind, folder)| {
            format!(
                ". {} is installed as a {kind} ({}), which my-chrome does not support: {}",
                browser.display(),
                folder.display(),
                platform::browsers::CONFINED_WHY
            )
        })
        .collect()
}

/// What the configuration says of the browser (from `Config`, or given
/// directly by tests).
pub struct Wanted<'a> {
    pub named: Option<Browser>,
    pub executable: Option<&'a Path>,
    pub user_data: Option<&'a Path>,
    /// Where user data directories live (`platform::user_data_base`).
    pub base: &'a Path,
    pub home: &'a Path,
    /// Where each browser lives: this platform's table (a test may give
    /// the other's).
    pub table: &'static [Places],
}

impl<'a> Wanted<'a> {
    pub fn of(config: &'a Config) -> Wanted<'a> {
        Wanted {
            named: config.browser,
            executable: config.chrome.as_deref(),
            user_data: config.chrome_user_data.as_deref(),
            base: &config.user_data_base,
            home: &config.home,
            table: platform::BROWSERS,
        }
    }
}

/// The browser the configuration and the recorded choice name. Reads the
/// runtime only when one exists (never creates it).
pub fn resolve(config: &Config) -> Result<Chosen, BrowserError> {
    let recorded = match Runtime::inspect(&config.runtime)? {
        Some(runtime) => recorded(&runtime)?,
        None => None,
    };
    choose(&Wanted::of(config), recorded, Path::new("/"))
}

/// The choice `setup --browser` recorded, if any.
pub fn recorded(runtime: &Runtime) -> Result<Option<Browser>, BrowserError> {
    let Some(bytes) = runtime.read_state(StateFile::Browser)? else {
        return Ok(None);
    };
    let path = runtime.root().join(StateFile::Browser.file_name());
    let word = String::from_utf8_lossy(&bytes);
    Browser::parse(word.trim_end_matches('\n'))
        .map(Some)
        .map_err(|e| BrowserError::Recorded(e, path))
}

/// Records `browser` as the user's choice.
pub fn record(runtime: &Runtime, browser: Browser) -> Result<(), RuntimeError> {
    runtime.write_state(
        StateFile::Browser,
        format!("{}\n", browser.name()).as_bytes(),
    )
}

/// Records which browser the session just attached to.
pub fn record_attached(runtime: &Runtime, chosen: &Chosen) -> Result<(), RuntimeError> {
    let path = chosen.executable.as_os_str().as_encoded_bytes();
    runtime.write_state(StateFile::SessionBrowser, path)
}

/// The executable of the browser the session is attached to, if recorded.
pub fn attached(runtime: &Runtime) -> Result<Option<PathBuf>, RuntimeError> {
    Ok(runtime
        .read_state(StateFile::SessionBrowser)?
        .map(|bytes| PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())))
}

/// The table's entry for `browser` on this platform.
pub fn places(browser: Browser) -> &'static Places {
    places_in(platform::BROWSERS, browser)
}

fn places_in(table: &'static [Places], browser: Browser) -> &'static Places {
    table
        .iter()
        .find(|p| p.browser == browser)
        .expect("every browser has its places")
}

/// `path` as it is found under `root` (`/` but in tests).
fn under(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// Where `browser` is installed (under `root`): its first executable that
/// is a file.
pub fn installed_at(browser: Browser, root: &Path) -> Option<PathBuf> {
    installed_at_in(platform::BROWSERS, browser, root)
}

fn installed_at_in(table: &'static [Places], browser: Browser, root: &Path) -> Option<PathBuf> {
    places_in(table, browser)
        .executables
        .iter()
        .map(|exe| under(root, Path::new(exe)))
        .find(|exe| exe.is_file())
}

/// Every supported browser installed (under `root`), in the table's order.
pub fn installed(root: &Path) -> Vec<(Browser, PathBuf)> {
    installed_in(platform::BROWSERS, root)
}

fn installed_in(table: &'static [Places], root: &Path) -> Vec<(Browser, PathBuf)> {
    Browser::ALL
        .into_iter()
        .filter_map(|b| installed_at_in(table, b, root).map(|exe| (b, exe)))
        .collect()
}

/// Confined packages of `browsers` found (under `root`).
pub fn confined(browsers: &[Browser], root: &Path, home: &Path) -> Vec<(Browser, String, PathBuf)> {
    confined_in(platform::BROWSERS, browsers, root, home)
}

fn confined_in(
    table: &'static [Places],
    browsers: &[Browser],
    root: &Path,
    home: &Path,
) -> Vec<(Browser, String, PathBuf)> {
    let mut found = Vec::new();
    for browser in browsers {
        for package in places_in(table, *browser).confined {
            for folder in package.folders(home) {
                let seen = under(root, &folder);
                if seen.exists() {
                    found.push((*browser, package.kind.to_string(), folder));
                }
            }
        }
    }
    found
}

/// The choice, with the filesystem seen under `root`.
pub fn choose(
    wanted: &Wanted,
    recorded: Option<Browser>,
    root: &Path,
) -> Result<Chosen, BrowserError> {
    if let Some(executable) = wanted.executable {
        // The escape hatch: a known executable brings its own profile.
        let known = Browser::ALL.into_iter().find(|b| {
            places_in(wanted.table, *b)
                .executables
                .iter()
                .any(|exe| under(root, Path::new(exe)) == executable)
        });
        let user_data = match (wanted.user_data, known) {
            (Some(dir), _) => dir.to_path_buf(),
            (None, Some(browser)) => wanted.base.join(places_in(wanted.table, browser).user_data),
            (None, None) => return Err(BrowserError::UnknownExecutable(executable.into())),
        };
        return Ok(Chosen {
            browser: known,
            executable: executable.into(),
            user_data,
            how: How::Paths,
        });
    }
    let named = match (wanted.named, recorded) {
        (Some(browser), _) => Some((browser, How::Variable)),
        (None, Some(browser)) => Some((browser, How::Recorded)),
        (None, None) => None,
    };
    let (browser, executable, how) = match named {
        Some((browser, how)) => match installed_at_in(wanted.table, browser, root) {
            Some(exe) => (browser, exe, how),
            None => {
                return Err(BrowserError::NotInstalled {
                    browser,
                    how,
                    looked: places_in(wanted.table, browser)
                        .executables
                        .iter()
                        .map(PathBuf::from)
                        .collect(),
                    confined: confined_in(wanted.table, &[browser], root, wanted.home),
                });
            }
        },
        None => match installed_in(wanted.table, root).as_slice() {
            [(browser, exe)] => (*browser, exe.clone(), How::OnlyInstalled),
            [] => {
                return Err(BrowserError::NoneInstalled {
                    confined: confined_in(wanted.table, &Browser::ALL, root, wanted.home),
                });
            }
            several => return Err(BrowserError::Several(several.to_vec())),
        },
    };
    let user_data = match wanted.user_data {
        Some(dir) => dir.to_path_buf(),
        None => wanted.base.join(places_in(wanted.table, browser).user_data),
    };
    Ok(Chosen {
        browser: Some(browser),
        executable,
        user_data,
        how,
    })
}

/// Other supported browsers running now (normal main processes of theirs):
/// they do not count, and `connect` says it ignored them.
pub fn others_running(table: &ProcessTable, chosen: &Chosen) -> Vec<(Browser, Vec<u32>)> {
    installed(Path::new("/"))
        .into_iter()
        .filter(|(b, exe)| Some(*b) != chosen.browser && *exe != chosen.executable)
        .filter_map(|(b, exe)| {
            let pids = crate::chrome::normal_chrome_pids(table, &exe);
            (!pids.is_empty()).then_some((b, pids))
        })
        .collect()
}

/// Every known browser's default user data directory, under `base`: no
/// forwarded command reads or writes a file inside one.
pub fn every_user_data(base: &Path) -> Vec<PathBuf> {
    platform::BROWSERS
        .iter()
        .map(|p| base.join(p.user_data))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A fake install of `browsers` under a temporary root: an empty file at
    /// each one's first executable.
    fn root_with(browsers: &[Browser]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for browser in browsers {
            let exe = under(root.path(), Path::new(places(*browser).executables[0]));
            fs::create_dir_all(exe.parent().unwrap()).unwrap();
            fs::write(&exe, "").unwrap();
        }
        root
    }

    fn wanted<'a>(named: Option<Browser>, base: &'a Path) -> Wanted<'a> {
        Wanted {
            named,
            executable: None,
            user_data: None,
            base,
            home: Path::new("/home/u"),
            table: platform::BROWSERS,
        }
    }

    #[test]
    fn every_name_finds_its_own_executable_and_profile() {
        let base = Path::new("/home/u/.config");
        for browser in Browser::ALL {
            let root = root_with(&[browser]);
            for (named, recorded, how) in [
                (Some(browser), None, How::Variable),
                (None, Some(browser), How::Recorded),
                (None, None, How::OnlyInstalled),
            ] {
                let chosen = choose(&wanted(named, base), recorded, root.path()).unwrap();
                assert_eq!(chosen.browser, Some(browser));
                assert_eq!(chosen.how, how);
                assert_eq!(
                    chosen.executable,
                    under(root.path(), Path::new(places(browser).executables[0]))
                );
                assert_eq!(chosen.user_data, base.join(places(browser).user_data));
            }
        }
    }

    /// Both systems' tables, each browser and each of its executables
    /// installed alone (fake files under a temporary root): chosen by name,
    /// by the record and as the one installed, with its own user data
    /// directory, where its process singleton is looked for.
    #[test]
    fn every_name_on_both_systems_at_every_place_its_packages_use() {
        use crate::platform::browsers::{LINUX, MACOS};
        let base = Path::new("/home/u/base");
        for table in [LINUX, MACOS] {
            for places in table {
                for exe in places.executables {
                    let root = tempfile::tempdir().unwrap();
                    let fake = under(root.path(), Path::new(exe));
                    fs::create_dir_all(fake.parent().unwrap()).unwrap();
                    fs::write(&fake, "").unwrap();
                    let w = Wanted {
                        table,
                        ..wanted(None, base)
                    };
                    for (named, recorded, how) in [
                        (Some(places.browser), None, How::Variable),
                        (None, Some(places.browser), How::Recorded),
                        (None, None, How::OnlyInstalled),
                    ] {
                        let w = Wanted { named, ..w };
                        let chosen = choose(&w, recorded, root.path()).unwrap();
                        assert_eq!(chosen.browser, Some(places.browser), "{exe}");
                        assert_eq!(chosen.how, how);
                        assert_eq!(chosen.executable, fake);
                        assert_eq!(chosen.user_data, base.join(places.user_data));
                    }
                    // Named by its executable (the escape hatch), it brings
                    // its own profile too.
                    let by_path = Wanted {
                        executable: Some(&fake),
                        ..w
                    };
                    let chosen = choose(&by_path, None, root.path()).unwrap();
                    assert_eq!(chosen.browser, Some(places.browser), "{exe}");
                    assert_eq!(chosen.user_data, base.join(places.user_data));
                    // Another browser named is not installed there.
                    let other = Browser::ALL
                        .into_iter()
                        .find(|b| *b != places.browser)
                        .unwrap();
                    let err = choose(
                        &Wanted {
                            named: Some(other),
                            ..w
                        },
                        None,
                        root.path(),
                    )
                    .unwrap_err();
                    assert_eq!(err.exit(), Exit::Chrome);
                }
            }
        }
        // The places Fedora's and Ubuntu's Chromium packages use.
        let chromium = |table: &[Places]| -> Vec<&str> {
            table
                .iter()
                .find(|p| p.browser == Browser::Chromium)
                .unwrap()
                .executables
                .to_vec()
        };
        assert_eq!(
            chromium(LINUX),
            [
                "/usr/lib/chromium/chromium",
                "/usr/lib64/chromium-browser/chromium-browser",
                "/usr/lib/chromium-browser/chromium-browser",
            ]
        );
        assert_eq!(
            chromium(MACOS),
            ["/Applications/Chromium.app/Contents/MacOS/Chromium"]
        );
    }

    #[test]
    fn the_variable_wins_over_the_record_and_a_missing_choice_is_named() {
        let base = Path::new("/b");
        let root = root_with(&[Browser::Brave, Browser::Chromium]);
        let chosen = choose(
            &wanted(Some(Browser::Chromium), base),
            Some(Browser::Brave),
            root.path(),
        )
        .unwrap();
        assert_eq!(chosen.browser, Some(Browser::Chromium));
        let err = choose(&wanted(Some(Browser::Edge), base), None, root.path()).unwrap_err();
        assert_eq!(err.exit(), Exit::Chrome);
        let text = err.to_string();
        assert!(
            text.starts_with("Microsoft Edge (named by MY_CHROME_BROWSER) is not installed"),
            "{text}"
        );
        assert!(text.contains("/opt/microsoft/msedge/msedge"), "{text}");
    }

    #[test]
    fn several_installed_and_none_chosen_is_refused_never_guessed() {
        let root = root_with(&[Browser::Chrome, Browser::Brave]);
        let err = choose(&wanted(None, Path::new("/b")), None, root.path()).unwrap_err();
        assert_eq!(err.exit(), Exit::Chrome);
        let text = err.to_string();
        for needle in [
            "Google Chrome as `chrome`",
            "Brave as `brave`",
            "setup --browser NAME",
            "MY_CHROME_BROWSER",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        let none = choose(&wanted(None, Path::new("/b")), None, root_with(&[]).path()).unwrap_err();
        assert!(
            none.to_string()
                .starts_with("no supported browser is installed"),
            "{none}"
        );
    }

    #[test]
    fn a_confined_package_is_refused_by_name() {
        let root = root_with(&[]);
        fs::create_dir_all(root.path().join("snap/chromium")).unwrap();
        let err = choose(
            &wanted(Some(Browser::Chromium), Path::new("/b")),
            None,
            root.path(),
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("Chromium is installed as a snap (/snap/chromium)"),
            "{text}"
        );
        assert!(text.contains("out of my-chrome's reach"), "{text}");
        let none = choose(&wanted(None, Path::new("/b")), None, root.path()).unwrap_err();
        assert!(none.to_string().contains("as a snap"), "{none}");
    }

    #[test]
    fn the_paths_name_a_pair() {
        let root = root_with(&[Browser::Brave]);
        let brave = under(
            root.path(),
            Path::new(places(Browser::Brave).executables[0]),
        );
        let base = Path::new("/home/u/.config");
        let mut w = wanted(None, base);
        w.executable = Some(&brave);
        let chosen = choose(&w, Some(Browser::Chrome), root.path()).unwrap();
        assert_eq!(
            (chosen.browser, chosen.how, chosen.user_data),
            (
                Some(Browser::Brave),
                How::Paths,
                base.join("BraveSoftware/Brave-Browser")
            )
        );
        let other = Path::new("/opt/mine/chrome");
        w.executable = Some(other);
        let err = choose(&w, None, root.path()).unwrap_err();
        assert_eq!(err.exit(), Exit::Usage);
        assert!(
            err.to_string().contains("set MY_CHROME_USER_DATA_DIR"),
            "{err}"
        );
        let dir = Path::new("/srv/profile");
        w.user_data = Some(dir);
        let chosen = choose(&w, None, root.path()).unwrap();
        assert_eq!((chosen.browser, chosen.user_data.as_path()), (None, dir));
        assert_eq!(chosen.display(), "the browser MY_CHROME_CHROME names");
    }
}
