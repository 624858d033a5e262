//! The keyring in the macOS login Keychain: a generic password with service
//! and account, bytes in and bytes out. What the bytes mean, and what to
//! tell the user, is `token/store.rs`'s. Mirrors
//! `platform/linux/secret_service.rs`. (Built on macOS only; keep it small
//! enough to check by eye.)

use security_framework::base::Error;
use security_framework::item::{ItemClass, ItemSearchOptions};
use security_framework::passwords::{
    PasswordOptions, delete_generic_password, generic_password, set_generic_password,
};
use zeroize::Zeroizing;

use crate::platform::KeyringFault;

const NOT_FOUND: i32 = -25300; // errSecItemNotFound
const USER_CANCELED: i32 = -128; // errSecUserCanceled
const AUTH_FAILED: i32 = -25293; // errSecAuthFailed
const INTERACTION_NOT_ALLOWED: i32 = -25308; // errSecInteractionNotAllowed (locked)

pub struct Keyring {
    service: String,
    account: String,
}

impl Keyring {
    /// The item for `service`/`account` in the login Keychain (which needs
    /// no session address: `dbus_session` does not apply).
    pub fn new(service: &str, account: &str, _dbus_session: Option<&str>) -> Keyring {
        Keyring {
            service: service.to_string(),
            account: account.to_string(),
        }
    }

    /// Whether the item exists, without fetching its secret (so no access
    /// prompt, and nothing secret in memory).
    pub fn exists(&self) -> Result<bool, KeyringFault> {
        let found = ItemSearchOptions::new()
            .class(ItemClass::generic_password())
            .service(&self.service)
            .account(&self.account)
            .load_attributes(true)
            .search();
        match found {
            Ok(items) => Ok(!items.is_empty()),
            Err(e) if e.code() == NOT_FOUND => Ok(false),
            Err(e) => Err(fault(e)),
        }
    }

    /// The item's secret; `Ok(None)` when there is no item.
    pub fn read(&self) -> Result<Option<Zeroizing<Vec<u8>>>, KeyringFault> {
        let options = PasswordOptions::new_generic_password(&self.service, &self.account);
        match generic_password(options) {
            Ok(bytes) => Ok(Some(Zeroizing::new(bytes))),
            Err(e) if e.code() == NOT_FOUND => Ok(None),
            Err(e) => Err(fault(e)),
        }
    }

    /// Stores `secret`, replacing an older item.
    pub fn write(&self, secret: &[u8]) -> Result<(), KeyringFault> {
        set_generic_password(&self.service, &self.account, secret).map_err(fault)
    }

    /// Deletes the item; `Ok(false)` when there was none.
    pub fn delete(&self) -> Result<bool, KeyringFault> {
        match delete_generic_password(&self.service, &self.account) {
            Ok(()) => Ok(true),
            Err(e) if e.code() == NOT_FOUND => Ok(false),
            Err(e) => Err(fault(e)),
        }
    }

    /// Names the item for messages.
    pub fn describe(&self) -> String {
        format!(
            "the Keychain item service={:?} account={:?}",
            self.service, self.account
        )
    }
}

fn fault(e: Error) -> KeyringFault {
    match e.code() {
        INTERACTION_NOT_ALLOWED => KeyringFault::Locked {
            unlock: "unlock the login keychain in Keychain Access",
        },
        USER_CANCELED | AUTH_FAILED => KeyringFault::Denied(e.to_string()),
        _ => KeyringFault::Failed(e.to_string()),
    }
}
