//! This platform's keyring item for the token (`platform::Keyring`: the
//! macOS login Keychain or the Linux Secret Service), as a [`Store`].

use super::store::Store;
use crate::config::Config;

/// The item for `service`/`account` in this platform's keyring (on Linux,
/// reached through the configured D-Bus session).
pub fn item(config: &Config, service: &str, account: &str) -> Store {
    Store::new(crate::platform::Keyring::new(
        service,
        account,
        config.dbus_session.as_deref(),
    ))
}

/// The configured item (`MY_CHROME_KEYCHAIN_SERVICE` /
/// `MY_CHROME_KEYCHAIN_ACCOUNT`): the one connect reads.
pub fn configured(config: &Config) -> Store {
    item(config, &config.keychain_service, &config.keychain_account)
}
