//! Where each named browser lives, on each platform: its main executable as
//! its own packages install it, and its default user data directory (where
//! its process singleton is). Plain data for both systems, so that the
//! tests read both tables on either; `linux/` and `macos/` each name theirs
//! as `BROWSERS`.
//!
//! Linux: Google's, Microsoft's and Brave's .deb/.rpm put the browser under
//! `/opt`; Chromium is Debian's and Arch's `/usr/lib/chromium/chromium`,
//! Fedora's `/usr/lib64/chromium-browser/chromium-browser` (the `/usr/bin`
//! names are scripts or launchers that exec these). Data under `$XDG_CONFIG_HOME`
//! (else `~/.config`). macOS: the app bundles in `/Applications`, data
//! under `~/Library/Application Support`.

use crate::browser_name::Browser;

pub struct Places {
    pub browser: Browser,
    /// Its main executable, where its packages put it; the first that
    /// exists is the one.
    pub executables: &'static [&'static str],
    /// Its default user data directory, under the platform's base.
    pub user_data: &'static str,
    /// Packages of it that run confined (snap, Flatpak): refused by name.
    pub confined: &'static [Confined],
}

/// A confined package: the folder that shows it is installed (`~/` means
/// under the home directory).
pub struct Confined {
    pub kind: &'static str,
    pub folder: &'static str,
}

const fn flatpak_system(id: &'static str) -> Confined {
    Confined {
        kind: "Flatpak",
        folder: id,
    }
}

/// Snap and Flatpak keep each browser in a sandbox of its own: the
/// singleton socket lives in the sandbox's private `/tmp` (out of reach, so
/// the token could not be handed over) and its processes run a path inside
/// the package, in another mount namespace, so the PID checks could not
/// recognise it.
pub const CONFINED_WHY: &str = "its process singleton lives in the sandbox's own /tmp, out of \
                                my-chrome's reach, so the token could not be handed to it \
                                directly; install the browser's own package (.deb or .rpm) \
                                instead";

// Each table is read by its own system's platform code, and both by the
// tests here.
#[cfg_attr(target_os = "macos", allow(dead_code))]
pub const LINUX: &[Places] = &[
    Places {
        browser: Browser::Chrome,
        executables: &["/opt/google/chrome/chrome"],
        user_data: "google-chrome",
        confined: &[flatpak_system("com.google.Chrome")],
    },
    Places {
        browser: Browser::ChromeBeta,
        executables: &["/opt/google/chrome-beta/chrome"],
        user_data: "google-chrome-beta",
        confined: &[],
    },
    Places {
        browser: Browser::ChromeDev,
        executables: &["/opt/google/chrome-unstable/chrome"],
        user_data: "google-chrome-unstable",
        confined: &[flatpak_system("com.google.ChromeDev")],
    },
    Places {
        browser: Browser::ChromeCanary,
        executables: &["/opt/google/chrome-canary/chrome"],
        user_data: "google-chrome-canary",
        confined: &[],
    },
    Places {
        browser: Browser::Chromium,
        executables: &[
            "/usr/lib/chromium/chromium",
            "/usr/lib64/chromium-browser/chromium-browser",
            "/usr/lib/chromium-browser/chromium-browser",
        ],
        user_data: "chromium",
        confined: &[
            Confined {
                kind: "snap",
                folder: "/snap/chromium",
            },
            flatpak_system("org.chromium.Chromium"),
        ],
    },
    Places {
        browser: Browser::Edge,
        executables: &["/opt/microsoft/msedge/msedge"],
        user_data: "microsoft-edge",
        confined: &[flatpak_system("com.microsoft.Edge")],
    },
    Places {
        browser: Browser::Brave,
        executables: &["/opt/brave.com/brave/brave"],
        user_data: "BraveSoftware/Brave-Browser",
        confined: &[
            Confined {
                kind: "snap",
                folder: "/snap/brave",
            },
            flatpak_system("com.brave.Browser"),
        ],
    },
];

#[cfg_attr(target_os = "linux", allow(dead_code))]
pub const MACOS: &[Places] = &[
    Places {
        browser: Browser::Chrome,
        executables: &["/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"],
        user_data: "Google/Chrome",
        confined: &[],
    },
    Places {
        browser: Browser::ChromeBeta,
        executables: &["/Applications/Google Chrome Beta.app/Contents/MacOS/Google Chrome Beta"],
        user_data: "Google/Chrome Beta",
        confined: &[],
    },
    Places {
        browser: Browser::ChromeDev,
        executables: &["/Applications/Google Chrome Dev.app/Contents/MacOS/Google Chrome Dev"],
        user_data: "Google/Chrome Dev",
        confined: &[],
    },
    Places {
        browser: Browser::ChromeCanary,
        executables: &[
            "/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
        ],
        user_data: "Google/Chrome Canary",
        confined: &[],
    },
    Places {
        browser: Browser::Chromium,
        executables: &["/Applications/Chromium.app/Contents/MacOS/Chromium"],
        user_data: "Chromium",
        confined: &[],
    },
    Places {
        browser: Browser::Edge,
        executables: &["/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge"],
        user_data: "Microsoft Edge",
        confined: &[],
    },
    Places {
        browser: Browser::Brave,
        executables: &["/Applications/Brave Browser.app/Contents/MacOS/Brave Browser"],
        user_data: "BraveSoftware/Brave-Browser",
        confined: &[],
    },
];

/// The folders that show a confined package installed, for `home`.
impl Confined {
    pub fn folders(&self, home: &std::path::Path) -> Vec<std::path::PathBuf> {
        if self.kind == "Flatpak" {
            let app = format!("flatpak/app/{}", self.folder);
            vec![
                std::path::Path::new("/var/lib").join(&app),
                home.join(".local/share").join(app),
            ]
        } else {
            vec![std::path::PathBuf::from(self.folder)]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_table_names_every_browser_once_at_absolute_places() {
        for table in [LINUX, MACOS] {
            let named: Vec<Browser> = table.iter().map(|p| p.browser).collect();
            assert_eq!(named, Browser::ALL, "in the order of Browser::ALL");
            for places in table {
                assert!(!places.executables.is_empty());
                for exe in places.executables {
                    assert!(exe.starts_with('/') && !exe.contains(".."), "{exe}");
                }
                assert!(!places.user_data.starts_with('/') && !places.user_data.contains(".."));
            }
        }
        // No two browsers share an executable or a profile.
        for table in [LINUX, MACOS] {
            let mut exes: Vec<&str> = table.iter().flat_map(|p| p.executables.to_vec()).collect();
            let mut data: Vec<&str> = table.iter().map(|p| p.user_data).collect();
            let (n, m) = (exes.len(), data.len());
            exes.sort_unstable();
            exes.dedup();
            data.sort_unstable();
            data.dedup();
            assert_eq!((exes.len(), data.len()), (n, m));
        }
    }

    #[test]
    fn the_packages_own_places() {
        let linux = |b: Browser| LINUX.iter().find(|p| p.browser == b).unwrap();
        let macos = |b: Browser| MACOS.iter().find(|p| p.browser == b).unwrap();
        for (browser, exe, data) in [
            (
                Browser::Chrome,
                "/opt/google/chrome/chrome",
                "google-chrome",
            ),
            (
                Browser::ChromeBeta,
                "/opt/google/chrome-beta/chrome",
                "google-chrome-beta",
            ),
            (
                Browser::ChromeDev,
                "/opt/google/chrome-unstable/chrome",
                "google-chrome-unstable",
            ),
            (
                Browser::ChromeCanary,
                "/opt/google/chrome-canary/chrome",
                "google-chrome-canary",
            ),
            (Browser::Chromium, "/usr/lib/chromium/chromium", "chromium"),
            (
                Browser::Edge,
                "/opt/microsoft/msedge/msedge",
                "microsoft-edge",
            ),
            (
                Browser::Brave,
                "/opt/brave.com/brave/brave",
                "BraveSoftware/Brave-Browser",
            ),
        ] {
            assert_eq!(linux(browser).executables[0], exe);
            assert_eq!(linux(browser).user_data, data);
        }
        for (browser, app, data) in [
            (Browser::Chrome, "Google Chrome", "Google/Chrome"),
            (
                Browser::ChromeBeta,
                "Google Chrome Beta",
                "Google/Chrome Beta",
            ),
            (Browser::ChromeDev, "Google Chrome Dev", "Google/Chrome Dev"),
            (
                Browser::ChromeCanary,
                "Google Chrome Canary",
                "Google/Chrome Canary",
            ),
            (Browser::Chromium, "Chromium", "Chromium"),
            (Browser::Edge, "Microsoft Edge", "Microsoft Edge"),
            (
                Browser::Brave,
                "Brave Browser",
                "BraveSoftware/Brave-Browser",
            ),
        ] {
            assert_eq!(
                macos(browser).executables,
                [format!("/Applications/{app}.app/Contents/MacOS/{app}").as_str()]
            );
            assert_eq!(macos(browser).user_data, data);
        }
        let home = std::path::Path::new("/home/u");
        let folders = linux(Browser::Brave).confined[1].folders(home);
        assert_eq!(
            folders,
            [
                std::path::PathBuf::from("/var/lib/flatpak/app/com.brave.Browser"),
                std::path::PathBuf::from("/home/u/.local/share/flatpak/app/com.brave.Browser"),
            ]
        );
    }
}
