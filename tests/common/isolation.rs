//! Which tests may run beside which. scripts/test.sh runs the tests with
//! cargo-nextest, many at once, and `.config/nextest.toml` puts the tests
//! that other tests would see into groups (docs/TESTING.md, "How the suite
//! runs"). The fixtures that make what others would see call these checks,
//! so a test left out of its group fails at once, naming the group, instead
//! of failing another test now and then.
//!
//! Under `cargo test` (no nextest) a test binary runs alone and the checks
//! pass; under nextest they read the group the test runs in.

use std::path::Path;

use my_chrome::chrome::carries_token;
use my_chrome::token_shape::VARIABLE;

/// A test that makes a process of the user carry a token (a token-bearing
/// connect URL or the upstream token variable in its argv or environment).
/// Every `connect`, `doctor`, `safety-audit` and rotation scans every
/// process of the user for one and stops (exit 6) when it sees it, so
/// these run in a phase of their own.
pub const CARRIERS: &str = "token-carriers";

/// A test of Debian's Chromium chosen by its name: it counts every process
/// of `/usr/lib/chromium/chromium` as the user's, so one at a time, and the
/// stand-in's Chromium runs from another path (`standin::chromium`).
pub const CHROMIUM_BY_NAME: &str = "chromium-by-name";

/// Stops the test unless nextest runs it in `group` (see above).
pub fn require_group(group: &str, because: &str) {
    let Ok(actual) = std::env::var("NEXTEST_TEST_GROUP") else {
        return;
    };
    assert_eq!(
        actual, group,
        "this test {because}, so it must run in nextest's test group {group:?}: add it to that \
         group's filter in .config/nextest.toml"
    );
}

/// Called with what a process of the test will hold in its argv and
/// environment: a token there makes the test one of the carriers.
pub fn check_carried<'a>(
    args: impl IntoIterator<Item = &'a str>,
    env: impl IntoIterator<Item = (&'a str, &'a str)>,
) {
    let in_args = args.into_iter().any(|a| carries_token(a.as_bytes()));
    let in_env = env
        .into_iter()
        .any(|(k, v)| (k == VARIABLE && !v.is_empty()) || carries_token(v.as_bytes()));
    if in_args || in_env {
        require_group(CARRIERS, "puts a token in a process's argv or environment");
    }
}

/// A test that runs Debian's Chromium at its own path (`path`).
pub fn check_runs_chromium(path: &Path) {
    if path.starts_with("/usr/lib/chromium") || path == Path::new("/usr/bin/chromium") {
        require_group(CHROMIUM_BY_NAME, "runs Debian's Chromium at its own path");
    }
}

/// Called with a my-chrome run's arguments and every variable it gets:
/// choosing Chromium by name (`--browser chromium`, `MY_CHROME_BROWSER`),
/// by its path (`MY_CHROME_CHROME`), or not at all for a `connect` (then
/// my-chrome takes the one supported browser installed, on this machine
/// Debian's Chromium) makes my-chrome count every process of Debian's
/// Chromium as the user's. A test that means "no browser here" names one
/// that is not there (`Sandbox::browser_at`).
pub fn check_browser_name<'a>(
    args: impl IntoIterator<Item = &'a str>,
    env: impl IntoIterator<Item = (&'a str, &'a str)>,
) {
    let args: Vec<&str> = args.into_iter().collect();
    let env: Vec<(&str, &str)> = env.into_iter().collect();
    let by_option = args
        .windows(2)
        .any(|w| w[0] == "--browser" && w[1] == "chromium")
        || args.contains(&"--browser=chromium");
    let by_variable = env
        .iter()
        .any(|(k, v)| *k == "MY_CHROME_BROWSER" && *v == "chromium");
    if by_option || by_variable {
        require_group(CHROMIUM_BY_NAME, "chooses Debian's Chromium by its name");
    }
    if let Some((_, path)) = env.iter().find(|(k, _)| *k == "MY_CHROME_CHROME") {
        check_runs_chromium(Path::new(path));
    }
    let chosen = env
        .iter()
        .any(|(k, _)| *k == "MY_CHROME_CHROME" || *k == "MY_CHROME_BROWSER");
    if args.contains(&"connect") && !chosen {
        require_group(
            CHROMIUM_BY_NAME,
            "connects without choosing a browser, so my-chrome takes the one installed (Debian's \
             Chromium); to mean \"no browser here\", name one that is not there",
        );
    }
}
