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
    let keyring = Keyring::start(sandbox.home.path());
    sandbox.set("DBUS_SESSION_BUS_ADDRESS", keyring.address());
    sandbox.set("MY_CHROME_ATTACH_TIMEOUT_SECS", "20");
    let token = fresh_token();
    let stored = sandbox.run_input(&["token", "store", "--stdin"], &token);
    assert_eq!(stored.code, 0, "{}", stored.stderr);
    World {
        sandbox,
        keyring,
        token,
    }
}
