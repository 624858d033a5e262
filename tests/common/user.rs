//! What a user has after `setup` and `token store`: an installed runtime
//! with a throw-away token stored in a real keyring.

use super::*;

/// An installed runtime with a fresh throw-away token stored in a real
/// keyring: what a user has after `setup` and `token store`.
pub struct World {
    pub sandbox: Sandbox,
    pub keyring: Keyring,
    pub token: String,
}

/// The name of the user the tests run as (the keyring's account).
pub fn user_name() -> String {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .name
}

pub fn world() -> World {
    let mut sandbox = Sandbox::installed();
    sandbox.set("MY_CHROME_ATTACH_TIMEOUT_SECS", "20");
    let token = fresh_token();
    // The fixture's GNOME Keyring, started afresh per test, now and then
    // drops off its bus right after taking its name when the machine is
    // loaded ("disconnected from message bus without replying"): a keyring
    // that never answered is started again, twice at most. What a test
    // checks of the keyring runs on the one that answered.
    for attempt in 1..=3 {
        let keyring = Keyring::start(sandbox.home.path());
        sandbox.set("DBUS_SESSION_BUS_ADDRESS", keyring.address());
        let stored = sandbox.run_input(&["token", "store", "--stdin"], &token);
        if stored.code == 0 {
            return World {
                sandbox,
                keyring,
                token,
            };
        }
        let dropped = stored
            .stderr
            .contains("the Secret Service is not available");
        assert!(dropped && attempt < 3, "{}", stored.stderr);
        eprintln!(
            "the fixture's keyring did not answer; starting another: {}",
            stored.stderr
        );
    }
    unreachable!("the loop returns or panics")
}
