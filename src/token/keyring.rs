//! This platform's keyring item for the token (`platform::Keyring`: the
//! macOS login Keychain or the Linux Secret Service), as a [`Store`].

use super::store::Store;
use crate::config::{Config, PREVIOUS_SUFFIX};

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

/// Where a replaced token is kept until a `connect` with the one that
/// replaced it succeeds (`token restore` puts it back): beside the
/// configured item, in the same service.
pub fn previous(config: &Config) -> Store {
    item(
        config,
        &config.keychain_service,
        &format!("{}{PREVIOUS_SUFFIX}", config.keychain_account),
    )
}
