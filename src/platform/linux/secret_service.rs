//! The token in the freedesktop Secret Service (GNOME Keyring, KWallet),
//! as an item with attributes `service` and `account` in the default
//! collection. Mirrors `platform/macos/keychain.rs`.

use std::collections::HashMap;

use secret_service::EncryptionType;
use secret_service::SearchItemsResult;
use secret_service::blocking::{Item, SecretService};

use crate::token::Token;
use crate::token::store::{StoreError, TokenStore};

const UNLOCK_HINT: &str = "log in to your desktop session, or unlock the login keyring in your \
                           password manager";

pub struct SecretServiceStore {
    address: Option<String>,
    service: String,
    account: String,
}

impl SecretServiceStore {
    pub fn new(address: Option<String>, service: &str, account: &str) -> SecretServiceStore {
        SecretServiceStore {
            address,
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

    fn connect(&self) -> Result<SecretService<'static>, StoreError> {
        let unavailable = |why: String| StoreError::Unavailable {
            what: "the Secret Service".into(),
            why,
            next:
                "Run my-chrome inside your desktop session, with a keyring daemon (GNOME Keyring \
                   or KWallet) running"
                    .into(),
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
        f: impl FnOnce(&SearchItemsResult<Item<'_>>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let ss = self.connect()?;
        let found = ss
            .search_items(self.attributes())
            .map_err(|e| self.store_error(e))?;
        f(&found)
    }

    fn store_error(&self, e: secret_service::Error) -> StoreError {
        let what = self.describe();
        match e {
            secret_service::Error::Locked => StoreError::Locked {
                what,
                next: UNLOCK_HINT.into(),
            },
            secret_service::Error::Prompt | secret_service::Error::PromptDisconnected => {
                StoreError::Denied {
                    what,
                    why: e.to_string(),
                }
            }
            other => StoreError::Failed {
                what,
                why: other.to_string(),
            },
        }
    }
}

impl TokenStore for SecretServiceStore {
    fn exists(&self) -> Result<bool, StoreError> {
        self.with_items(|found| Ok(!found.unlocked.is_empty() || !found.locked.is_empty()))
    }

    fn read(&self) -> Result<Option<Token>, StoreError> {
        self.with_items(|found| {
            let Some(item) = found.unlocked.first() else {
                // Never prompt for an unlock: an agent may be the one asking.
                return if found.locked.is_empty() {
                    Ok(None)
                } else {
                    Err(self.store_error(secret_service::Error::Locked))
                };
            };
            let secret =
                zeroize::Zeroizing::new(item.get_secret().map_err(|e| self.store_error(e))?);
            Token::parse(&secret, "the stored item")
                .map(Some)
                .map_err(|e| StoreError::Invalid {
                    what: self.describe(),
                    why: e.to_string(),
                })
        })
    }

    fn write(&self, token: &Token) -> Result<(), StoreError> {
        let ss = self.connect()?;
        let collection = ss
            .get_default_collection()
            .map_err(|e| self.store_error(e))?;
        if collection.is_locked().map_err(|e| self.store_error(e))? {
            return Err(self.store_error(secret_service::Error::Locked));
        }
        let label = format!("my-chrome extension token ({})", self.service);
        collection
            .create_item(
                &label,
                self.attributes(),
                token.expose_to_store(),
                true,
                "text/plain",
            )
            .map_err(|e| self.store_error(e))?;
        Ok(())
    }

    fn delete(&self) -> Result<bool, StoreError> {
        self.with_items(|found| {
            if !found.locked.is_empty() {
                return Err(self.store_error(secret_service::Error::Locked));
            }
            for item in &found.unlocked {
                item.delete().map_err(|e| self.store_error(e))?;
            }
            Ok(!found.unlocked.is_empty())
        })
    }

    fn describe(&self) -> String {
        format!(
            "the Secret Service item service={:?} account={:?}",
            self.service, self.account
        )
    }
}
