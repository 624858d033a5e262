//! Where the token lives: one small trait, implemented once per platform
//! (`platform/macos/keychain.rs`, `platform/linux/secret_service.rs`;
//! `platform::token_store` picks one). There is no file
//! fallback: when the keyring cannot be used, the answer is an error.

use super::Token;
use crate::exit::Exit;

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
