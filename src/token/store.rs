//! Where the token lives: one small trait, one implementation per platform
//! (the macOS login Keychain, the Linux Secret Service). There is no file
//! fallback: when the keyring cannot be used, the answer is an error.

use super::Token;
use crate::config::Config;
use crate::error::Exit;

/// One keyring item, named by service and account.
pub trait TokenStore {
    /// Whether the item exists, without fetching its secret (so no unlock
    /// prompt, and nothing secret in memory).
    fn exists(&self) -> Result<bool, StoreError>;
    /// The stored token, `Ok(None)` when there is no item. An item that holds
    /// something other than a valid token is an error.
    fn read(&self) -> Result<Option<Token>, StoreError>;
    /// Stores the token, replacing an older item.
    fn write(&self, token: &Token) -> Result<(), StoreError>;
    /// Deletes the item; `Ok(false)` when there was none.
    fn delete(&self) -> Result<bool, StoreError>;
    /// Names the item for messages: "the Secret Service item service=… account=…".
    fn describe(&self) -> String;
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{what} is not available ({why}); nothing was read or stored. {next}")]
    Unavailable {
        what: String,
        why: String,
        next: String,
    },
    #[error("{what} is locked; nothing was read or stored. Unlock it ({next}), then retry")]
    Locked { what: String, next: String },
    #[error(
        "{what} refused access ({why}); nothing was read or stored. Allow my-chrome when the \
         keyring asks, then retry"
    )]
    Denied { what: String, why: String },
    #[error(
        "{what} holds something that is not a valid token ({why}); store a new one with `my-chrome token store`"
    )]
    Invalid { what: String, why: String },
    #[error(
        "{what} failed ({why}); nothing was read or stored. Check that your keyring has a default \
         (login) collection and is working, then retry"
    )]
    Failed { what: String, why: String },
}

impl StoreError {
    pub fn exit(&self) -> Exit {
        Exit::Token
    }
}

/// The item for `service`/`account` in this platform's keyring.
pub fn open(config: &Config, service: &str, account: &str) -> Box<dyn TokenStore> {
    #[cfg(target_os = "linux")]
    return Box::new(super::secret_service::SecretServiceStore::new(
        config.dbus_session.clone(),
        service,
        account,
    ));
    #[cfg(target_os = "macos")]
    return Box::new(super::keychain::KeychainStore::new(service, account));
}

/// Our own item: `MY_CHROME_KEYCHAIN_SERVICE` / `MY_CHROME_KEYCHAIN_ACCOUNT`.
pub fn ours(config: &Config) -> Box<dyn TokenStore> {
    open(config, &config.keychain_service, &config.keychain_account)
}
