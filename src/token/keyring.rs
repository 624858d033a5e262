//! This platform's keyring: the macOS login Keychain or the Linux Secret
//! Service, behind the one `TokenStore` trait.

use super::store::TokenStore;
use crate::config::Config;

/// The item for `service`/`account` in the Secret Service reached through
/// the configured D-Bus session.
#[cfg(target_os = "linux")]
pub fn item(config: &Config, service: &str, account: &str) -> Box<dyn TokenStore> {
    Box::new(super::secret_service::SecretServiceStore::new(
        config.dbus_session.clone(),
        service,
        account,
    ))
}

/// The item for `service`/`account` in the login Keychain (which needs no
/// session address).
#[cfg(target_os = "macos")]
pub fn item(_config: &Config, service: &str, account: &str) -> Box<dyn TokenStore> {
    Box::new(super::keychain::KeychainStore::new(service, account))
}

/// The configured item (`MY_CHROME_KEYCHAIN_SERVICE` /
/// `MY_CHROME_KEYCHAIN_ACCOUNT`): the one connect reads.
pub fn configured(config: &Config) -> Box<dyn TokenStore> {
    item(config, &config.keychain_service, &config.keychain_account)
}
