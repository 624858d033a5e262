//! The token in the macOS login Keychain, as a generic password with
//! service and account. Mirrors `platform/linux/secret_service.rs`. (Built
//! on macOS only; keep it small enough to check by eye.)

use security_framework::base::Error;
use security_framework::item::{ItemClass, ItemSearchOptions};
use security_framework::passwords::{
    PasswordOptions, delete_generic_password, generic_password, set_generic_password,
};

use crate::token::Token;
use crate::token::store::{StoreError, TokenStore};

const NOT_FOUND: i32 = -25300; // errSecItemNotFound
const USER_CANCELED: i32 = -128; // errSecUserCanceled
const AUTH_FAILED: i32 = -25293; // errSecAuthFailed
const INTERACTION_NOT_ALLOWED: i32 = -25308; // errSecInteractionNotAllowed (locked)

pub struct KeychainStore {
    service: String,
    account: String,
}

impl KeychainStore {
    pub fn new(service: &str, account: &str) -> KeychainStore {
        KeychainStore {
            service: service.to_string(),
            account: account.to_string(),
        }
    }

    fn store_error(&self, e: Error) -> StoreError {
        let what = self.describe();
        match e.code() {
            INTERACTION_NOT_ALLOWED => StoreError::Locked {
                what,
                next: "unlock the login keychain in Keychain Access".into(),
            },
            USER_CANCELED | AUTH_FAILED => StoreError::Denied {
                what,
                why: e.to_string(),
            },
            _ => StoreError::Failed {
                what,
                why: e.to_string(),
            },
        }
    }
}

impl TokenStore for KeychainStore {
    fn exists(&self) -> Result<bool, StoreError> {
        // Attributes only: the secret is not loaded, so no access prompt.
        let found = ItemSearchOptions::new()
            .class(ItemClass::generic_password())
            .service(&self.service)
            .account(&self.account)
            .load_attributes(true)
            .search();
        match found {
            Ok(items) => Ok(!items.is_empty()),
            Err(e) if e.code() == NOT_FOUND => Ok(false),
            Err(e) => Err(self.store_error(e)),
        }
    }

    fn read(&self) -> Result<Option<Token>, StoreError> {
        let options = PasswordOptions::new_generic_password(&self.service, &self.account);
        let secret = match generic_password(options) {
            Ok(bytes) => zeroize::Zeroizing::new(bytes),
            Err(e) if e.code() == NOT_FOUND => return Ok(None),
            Err(e) => return Err(self.store_error(e)),
        };
        Token::parse(&secret, "the stored item")
            .map(Some)
            .map_err(|e| StoreError::Invalid {
                what: self.describe(),
                why: e.to_string(),
            })
    }

    fn write(&self, token: &Token) -> Result<(), StoreError> {
        set_generic_password(&self.service, &self.account, token.expose_to_store())
            .map_err(|e| self.store_error(e))
    }

    fn delete(&self) -> Result<bool, StoreError> {
        match delete_generic_password(&self.service, &self.account) {
            Ok(()) => Ok(true),
            Err(e) if e.code() == NOT_FOUND => Ok(false),
            Err(e) => Err(self.store_error(e)),
        }
    }

    fn describe(&self) -> String {
        format!(
            "the Keychain item service={:?} account={:?}",
            self.service, self.account
        )
    }
}
