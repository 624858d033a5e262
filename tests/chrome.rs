//! Chrome as the process table shows it, with real processes: a copy of
//! /bin/sh stands in for the Chrome executable (MY_CHROME_CHROME points at it).

mod common;

use common::{FakeChrome, Sandbox};
use my_chrome::chrome::{
    ChromeState, Exposure, normal_chrome_pids, require_single, token_exposure,
};
use my_chrome::procs::ProcessTable;

const PAGE: &str = "chrome-extension://mmlmfjhmonkocbjadbfplnigmagldckm/connect.html";

fn pids(chrome: &FakeChrome) -> Vec<u32> {
    normal_chrome_pids(&ProcessTable::read().unwrap(), &chrome.path())
}

fn doctor_chrome(chrome: &FakeChrome) -> serde_json::Value {
    let mut sandbox = Sandbox::new();
    sandbox.browser_at(chrome.path());
    sandbox.doctor()["chrome"].clone()
}

#[test]
fn only_normal_main_processes_of_ours_count() {
    let chrome = FakeChrome::new();
    assert_eq!(require_single(&pids(&chrome)), ChromeState::Missing);
    assert_eq!(doctor_chrome(&chrome)["status"], "missing");

    let main = chrome.start(&[]);
    for flag in [
        "--type=renderer",
        "--user-data-dir=/tmp/other-profile",
        "--remote-debugging-port=9222",
        "--remote-debugging-pipe",
        "--headless=new",
        "--enable-automation",
        "--test-type=webdriver",
        "--no-startup-window",
    ] {
        chrome.start(&["--some-flag", flag]);
    }
    // Helpers whose command line Chrome rewrote into one string.
    chrome.start_rewritten("--type=gpu-process --field-trial-handle=1");
    chrome.start_rewritten("--user-data-dir=/tmp/x --headless");
    if nix::unistd::geteuid().is_root() {
        chrome.start_with(&[], &[], Some(65534)); // another user's Chrome
    }
    assert_eq!(require_single(&pids(&chrome)), ChromeState::Running(main));
    let report = doctor_chrome(&chrome);
    assert_eq!(report["status"], "running");
    assert_eq!(report["pids"], serde_json::json!([main]));

    let second = chrome.start(&["--profile-directory=Default"]);
    let mut both = vec![main, second];
    both.sort_unstable();
    assert_eq!(
        require_single(&pids(&chrome)),
        ChromeState::Ambiguous(both.clone())
    );
    let mut sandbox = Sandbox::new();
    sandbox.browser_at(chrome.path());
    let text = sandbox.run(&["doctor"]).stdout;
    assert!(
        text.contains(&format!(
            "(named by MY_CHROME_CHROME): ambiguous (pids {both:?})"
        )),
        "{text}"
    );

    chrome.stop(main);
    assert_eq!(require_single(&pids(&chrome)), ChromeState::Running(second));
}

#[test]
fn a_chrome_updated_underneath_still_counts() {
    let chrome = FakeChrome::new();
    let pid = chrome.start(&[]);
    std::fs::remove_file(chrome.path()).unwrap();
    std::fs::copy("/bin/sh", chrome.path()).unwrap();
    assert_eq!(pids(&chrome), vec![pid]);
}

#[test]
fn a_token_in_any_command_line_or_environment_is_exposure() {
    let carrier = FakeChrome::new();
    let url = format!(
        "{PAGE}?mcpRelayUrl=ws://127.0.0.1:1/extension/x&protocolVersion=2&token=canary-not-a-real-token"
    );
    let in_argv = carrier.start(&[&url]);
    let in_env = carrier.start_with(&[], &[("SOME_URL", &url)], None);
    let upstream = carrier.start_with(&[], &[("PLAYWRIGHT_MCP_EXTENSION_TOKEN", "canary")], None);
    let clean = carrier.start(&[&format!("{PAGE}?mcpRelayUrl=ws://127.0.0.1:1/extension/x")]);

    let exposed = match token_exposure(&ProcessTable::read().unwrap()) {
        Exposure::Exposed(pids) => pids,
        Exposure::Absent => panic!("nothing found"),
    };
    for pid in [in_argv, in_env, upstream] {
        assert!(exposed.contains(&pid), "{pid} missing from {exposed:?}");
    }
    assert!(
        !exposed.contains(&clean),
        "a URL without a token is not exposure"
    );

    let json = Sandbox::new().run(&["doctor", "--json"]);
    let report = json.json()["process_token"].clone();
    assert_eq!(report["status"], "exposed");
    let listed: Vec<u64> = report["pids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap())
        .collect();
    assert!(listed.contains(&(in_argv as u64)), "{report}");
    let text = Sandbox::new().run(&["doctor"]);
    // The status SKILL.md tells an agent to stop on is readable as text.
    assert!(
        text.stdout.contains("process-token: exposed (pids"),
        "{}",
        text.stdout
    );
    for run in [&json, &text] {
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(
            !all.contains("canary-not-a-real-token"),
            "doctor printed the value: {all}"
        );
    }

    for pid in [in_argv, in_env, upstream] {
        carrier.stop(pid);
    }
    if let Exposure::Exposed(pids) = token_exposure(&ProcessTable::read().unwrap()) {
        for pid in [in_argv, in_env, upstream] {
            assert!(!pids.contains(&pid));
        }
    }
}

#[test]
fn the_safety_audit_fails_while_a_process_carries_a_token() {
    let sandbox = Sandbox::installed();
    let carrier = FakeChrome::new();
    let pid = carrier.start_with(
        &[],
        &[("PLAYWRIGHT_MCP_EXTENSION_TOKEN", "canary-not-a-real-token")],
        None,
    );
    let exposed = sandbox.run(&["safety-audit", "--json"]);
    carrier.stop(pid);
    exposed.expect(6, "safeguard process-token does not hold");
    let report = exposed.json();
    let token = report["safeguards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "process-token")
        .unwrap();
    assert_eq!(token["holds"], false);
    assert!(token["detail"].as_str().unwrap().contains(&pid.to_string()));
    assert!(!exposed.stdout.contains("canary-not"), "{}", exposed.stdout);
}
