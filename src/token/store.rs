//! Where the token lives: one item of this platform's keyring
//! (`platform::Keyring`: the macOS login Keychain or the Linux Secret
//! Service, bytes in and bytes out). Here the bytes become a token, and a
//! keyring's fault a message with its next step. There is no file
//! fallback: when the keyring cannot be used, the answer is an error.

use super::Token;
use crate::exit::Exit;
use crate::platform::{Keyring, KeyringFault};

/// One keyring item, named by service and account.
pub struct Store {
    keyring: Keyring,
}

impl Store {
    pub fn new(keyring: Keyring) -> Store {
        Store { keyring }
    }

    /// Whether the item exists, without fetching its secret (so no unlock
    /// prompt, and nothing secret in memory).
    pub fn exists(&self) -> Result<bool, StoreError> {
        self.keyring.exists().map_err(|f| self.error(f))
    }

    /// The stored token, `Ok(None)` when there is no item. An item that holds
    /// something other than a valid token is an error.
    pub fn read(&self) -> Result<Option<Token>, StoreError> {
        let Some(secret) = self.keyring.read().map_err(|f| self.error(f))? else {
            return Ok(None);
        };
        Token::parse(&secret, "the stored item")
            .map(Some)
            .map_err(|e| StoreError::Invalid {
                what: self.describe(),
                why: e.to_string(),
            })
    }

    /// Stores the token, replacing an older item.
    pub fn write(&self, token: &Token) -> Result<(), StoreError> {
        self.keyring
            .write(token.expose_to_store())
            .map_err(|f| self.error(f))
    }

    /// Deletes the item; `Ok(false)` when there was none.
    pub fn delete(&self) -> Result<bool, StoreError> {
        self.keyring.delete().map_err(|f| self.error(f))
    }

    /// Names the item for messages: "the Secret Service item service=… account=…".
    pub fn describe(&self) -> String {
        self.keyring.describe()
    }

    fn error(&self, fault: KeyringFault) -> StoreError {
        let what = self.describe();
        match fault {
            KeyringFault::Unavailable { keyring, why, next } => StoreError::Unavailable {
                what: keyring.into(),
                why,
                next: next.into(),
            },
            KeyringFault::Locked { unlock } => StoreError::Locked {
                what,
                next: unlock.into(),
            },
            KeyringFault::Denied(why) => StoreError::Denied { what, why },
            KeyringFault::Failed(why) => StoreError::Failed { what, why },
        }
    }
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
