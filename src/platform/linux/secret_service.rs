//! The keyring in the freedesktop Secret Service (GNOME Keyring, KWallet):
//! an item with attributes `service` and `account` in the default
//! collection, bytes in and bytes out. What the bytes mean, and what to
//! tell the user, is `token/store.rs`'s. Mirrors `platform/macos/keychain.rs`.

use std::collections::HashMap;

use secret_service::EncryptionType;
use secret_service::SearchItemsResult;
use secret_service::blocking::{Item, SecretService};
use zeroize::Zeroizing;

use crate::platform::KeyringFault;

const UNLOCK_HINT: &str = "log in to your desktop session, or unlock the login keyring in your \
                           password manager";
const START_HINT: &str = "Run my-chrome inside your desktop session, with a keyring daemon (GNOME \
                          Keyring or KWallet) running";

pub struct Keyring {
    address: Option<String>,
    service: String,
    account: String,
}

impl Keyring {
    /// The item for `service`/`account` in the Secret Service reached
    /// through `dbus_session` (Linux's keyring is a D-Bus service, so it
    /// needs the session's address).
    pub fn new(service: &str, account: &str, dbus_session: Option<&str>) -> Keyring {
        Keyring {
            address: dbus_session.map(str::to_string),
            service: service.to_string(),
            account: account.to_string(),
        }
    }

    fn attributes(&self) -> HashMap<&str, &str> {
        HashMap::from([
            ("service", self.service.as_str()),
            ("account", self.account.as_str()),
        ])
    }

    fn connect(&self) -> Result<SecretService<'static>, KeyringFault> {
        let unavailable = |why: String| KeyringFault::Unavailable {
            keyring: "the Secret Service",
            why,
            next: START_HINT,
        };
        let address = self.address.as_deref().ok_or_else(|| {
            unavailable("no D-Bus session: DBUS_SESSION_BUS_ADDRESS is not set".into())
        })?;
        let connection = zbus::blocking::connection::Builder::address(address)
            .and_then(|builder| builder.build())
            .map_err(|e| unavailable(e.to_string()))?;
        SecretService::connect_with_existing(EncryptionType::Dh, connection)
            .map_err(|e| unavailable(e.to_string()))
    }

    /// Runs `f` on the items that carry our attributes.
    fn with_items<T>(
        &self,
        f: impl FnOnce(&SearchItemsResult<Item<'_>>) -> Result<T, KeyringFault>,
    ) -> Result<T, KeyringFault> {
        let ss = self.connect()?;
        let found = ss.search_items(self.attributes()).map_err(fault)?;
        f(&found)
    }

    /// Whether the item exists, without fetching its secret (so no unlock
    /// prompt, and nothing secret in memory).
    pub fn exists(&self) -> Result<bool, KeyringFault> {
        self.with_items(|found| Ok(!found.unlocked.is_empty() || !found.locked.is_empty()))
    }

    /// The item's secret; `Ok(None)` when there is no item.
    pub fn read(&self) -> Result<Option<Zeroizing<Vec<u8>>>, KeyringFault> {
        self.with_items(|found| {
            let Some(item) = found.unlocked.first() else {
                // Never prompt for an unlock: an agent may be the one asking.
                return if found.locked.is_empty() {
                    Ok(None)
                } else {
                    Err(fault(secret_service::Error::Locked))
                };
            };
            Ok(Some(Zeroizing::new(item.get_secret().map_err(fault)?)))
        })
    }

    /// Stores `secret`, replacing an older item.
    pub fn write(&self, secret: &[u8]) -> Result<(), KeyringFault> {
        let ss = self.connect()?;
        let collection = ss.get_default_collection().map_err(fault)?;
        if collection.is_locked().map_err(fault)? {
            return Err(fault(secret_service::Error::Locked));
        }
        let label = format!("my-chrome extension token ({})", self.service);
        collection
            .create_item(&label, self.attributes(), secret, true, "text/plain")
            .map_err(fault)?;
        Ok(())
    }

    /// Deletes the item; `Ok(false)` when there was none.
    pub fn delete(&self) -> Result<bool, KeyringFault> {
        self.with_items(|found| {
            if !found.locked.is_empty() {
                return Err(fault(secret_service::Error::Locked));
            }
            for item in &found.unlocked {
                item.delete().map_err(fault)?;
            }
            Ok(!found.unlocked.is_empty())
        })
    }

    /// Names the item for messages.
    pub fn describe(&self) -> String {
        format!(
            "the Secret Service item service={:?} account={:?}",
            self.service, self.account
        )
    }
}

fn fault(e: secret_service::Error) -> KeyringFault {
    match e {
        secret_service::Error::Locked => KeyringFault::Locked {
            unlock: UNLOCK_HINT,
        },
        secret_service::Error::Prompt | secret_service::Error::PromptDisconnected => {
            KeyringFault::Denied(e.to_string())
        }
        other => KeyringFault::Failed(other.to_string()),
    }
}
