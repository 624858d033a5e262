//! This platform's keyring: the macOS login Keychain or the Linux Secret
//! Service (`platform::token_store` picks it), behind the one `TokenStore`
//! trait.

use super::store::TokenStore;
use crate::config::Config;

/// The item for `service`/`account` in this platform's keyring (on Linux,
/// reached through the configured D-Bus session).
pub fn item(config: &Config, service: &str, account: &str) -> Box<dyn TokenStore> {
    crate::platform::token_store(service, account, config.dbus_session.as_deref())
}

/// The configured item (`MY_CHROME_KEYCHAIN_SERVICE` /
/// `MY_CHROME_KEYCHAIN_ACCOUNT`): the one connect reads.
pub fn configured(config: &Config) -> Box<dyn TokenStore> {
    item(config, &config.keychain_service, &config.keychain_account)
}
