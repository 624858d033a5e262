//! The pin of `@playwright/cli`, embedded at build time from `skill/cli/` so
//! that the binary and the pin it installs cannot drift apart.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use nodejs_semver::{Range, Version};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::platform::NPM_PLATFORM;

pub const CLI_PACKAGE: &str = "@playwright/cli";

const PACKAGE_JSON: &[u8] = include_bytes!("../../skill/cli/package.json");
const PACKAGE_LOCK: &[u8] = include_bytes!("../../skill/cli/package-lock.json");
const TREE_DIGESTS: &str = include_str!("../../skill/cli/tree.sha256");
const RELEASED_LOCKS: &str = include_str!("../../skill/cli/released-locks.sha256");

#[cfg(target_arch = "aarch64")]
const ARCH: &str = "arm64";
#[cfg(not(target_arch = "aarch64"))]
const ARCH: &str = "x64";

/// One package recorded in a lock.
#[derive(Clone, Debug)]
pub struct LockedPackage {
    /// Its directory relative to the install, e.g. `node_modules/playwright-core`.
    pub path: String,
    pub name: String,
    pub version: String,
    engines_node: Option<String>,
    os: Vec<String>,
    cpu: Vec<String>,
}

impl LockedPackage {
    /// Whether npm installs it on this platform (the lock's `os` and `cpu`
    /// fields, with npm's `!name` exclusions).
    pub fn applies_here(&self) -> bool {
        fn allowed(list: &[String], here: &str) -> bool {
            let excluded = list.iter().any(|x| x.strip_prefix('!') == Some(here));
            let positives: Vec<_> = list.iter().filter(|x| !x.starts_with('!')).collect();
            !excluded && (positives.is_empty() || positives.iter().any(|x| *x == here))
        }
        allowed(&self.os, NPM_PLATFORM) && allowed(&self.cpu, ARCH)
    }
}

/// A parsed `package-lock.json` (lockfile v3).
#[derive(Clone, Debug)]
pub struct Lock {
    pub packages: Vec<LockedPackage>,
}

impl Lock {
    pub fn parse(bytes: &[u8]) -> Result<Lock, String> {
        let doc: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
        if doc["lockfileVersion"] != 3 {
            return Err("lockfileVersion is not 3".into());
        }
        let entries = doc["packages"]
            .as_object()
            .ok_or("no \"packages\" object")?;
        let mut packages = Vec::new();
        for (path, entry) in entries {
            if path.is_empty() {
                continue; // the root project itself
            }
            let name = path
                .rsplit_once("node_modules/")
                .map(|(_, name)| name.to_string())
                .filter(|name| !name.is_empty() && !path.contains(".."))
                .ok_or_else(|| format!("unexpected package path {path:?}"))?;
            let version = entry["version"]
                .as_str()
                .ok_or_else(|| format!("{path} has no version"))?
                .to_string();
            let strings = |key: &str| -> Vec<String> {
                entry[key]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            packages.push(LockedPackage {
                path: path.clone(),
                name,
                version,
                engines_node: entry["engines"]["node"].as_str().map(String::from),
                os: strings("os"),
                cpu: strings("cpu"),
            });
        }
        Ok(Lock { packages })
    }
}

/// Node's version must satisfy `engines.node` of every package installed here.
#[derive(Clone, Debug)]
pub struct NodeRequirement {
    ranges: Vec<(String, Range)>,
}

impl NodeRequirement {
    pub fn of(lock: &Lock) -> Result<NodeRequirement, String> {
        let mut ranges = Vec::new();
        for package in lock.packages.iter().filter(|p| p.applies_here()) {
            if let Some(raw) = &package.engines_node {
                let range = Range::parse(raw)
                    .map_err(|e| format!("{}: engines.node {raw:?}: {e}", package.name))?;
                ranges.push((raw.clone(), range));
            }
        }
        Ok(NodeRequirement { ranges })
    }

    pub fn accepts(&self, version: &Version) -> bool {
        self.ranges
            .iter()
            .all(|(_, range)| range.satisfies(version))
    }
}

impl std::fmt::Display for NodeRequirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unique: BTreeSet<&str> = self.ranges.iter().map(|(raw, _)| raw.as_str()).collect();
        let text: Vec<&str> = unique.into_iter().collect();
        if text.is_empty() {
            f.write_str("any")
        } else {
            f.write_str(&text.join(" and "))
        }
    }
}

/// Everything my-chrome knows about the CLI it ships.
#[derive(Debug)]
pub struct Pin {
    pub version: String,
    pub package_json: &'static [u8],
    pub package_lock: &'static [u8],
    pub lock: Lock,
    pub node: NodeRequirement,
    /// Digest of a clean install's tree on this platform (see `tree.rs`).
    pub tree_digest: String,
    released_locks: BTreeSet<String>,
}

impl Pin {
    /// The pin embedded in this binary. Its own tests prove it parses.
    pub fn shipped() -> &'static Pin {
        static PIN: OnceLock<Pin> = OnceLock::new();
        PIN.get_or_init(|| Pin::parse().expect("the embedded pin in skill/cli is malformed"))
    }

    fn parse() -> Result<Pin, String> {
        let manifest: Value = serde_json::from_slice(PACKAGE_JSON).map_err(|e| e.to_string())?;
        let version = manifest["dependencies"][CLI_PACKAGE]
            .as_str()
            .ok_or("package.json does not depend on @playwright/cli")?
            .to_string();
        Version::parse(&version).map_err(|_| format!("pin {version:?} is not an exact version"))?;
        let lock = Lock::parse(PACKAGE_LOCK)?;
        let node = NodeRequirement::of(&lock)?;
        let tree_digest = TREE_DIGESTS
            .lines()
            .find_map(
                |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                    [digest, os] if os == NPM_PLATFORM => Some(digest.to_string()),
                    _ => None,
                },
            )
            .ok_or_else(|| format!("tree.sha256 has no digest for {NPM_PLATFORM}"))?;
        let released_locks = RELEASED_LOCKS
            .lines()
            .filter_map(|line| line.split_whitespace().next().map(String::from))
            .collect();
        Ok(Pin {
            version,
            package_json: PACKAGE_JSON,
            package_lock: PACKAGE_LOCK,
            lock,
            node,
            tree_digest,
            released_locks,
        })
    }

    /// The playwright-core version the pin installs: the `version` a session
    /// made by our CLI records.
    pub fn core_version(&self) -> &str {
        self.lock
            .packages
            .iter()
            .find(|p| p.name == "playwright-core")
            .map(|p| p.version.as_str())
            .unwrap_or_default()
    }

    /// Whether `lock` is byte for byte a lock some release of ours shipped.
    pub fn was_released(&self, lock: &[u8]) -> bool {
        self.released_locks
            .contains(&hex::encode(Sha256::digest(lock)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_pin_parses_and_is_consistent() {
        let pin = Pin::shipped();
        assert_eq!(pin.version, "0.1.22");
        assert_eq!(pin.tree_digest.len(), 64);
        assert!(
            pin.was_released(pin.package_lock),
            "the current lock must be listed as released"
        );
        let cli = pin
            .lock
            .packages
            .iter()
            .find(|p| p.name == CLI_PACKAGE)
            .unwrap();
        assert_eq!(cli.version, pin.version);
        assert_eq!(cli.path, "node_modules/@playwright/cli");
        assert_eq!(pin.core_version(), "1.64.0-alpha-1790635538000");
    }

    #[test]
    fn node_requirement_combines_every_installed_package() {
        let pin = Pin::shipped();
        // @playwright/cli says >=18, but playwright-core (which it runs) says >=20.
        assert!(!pin.node.accepts(&Version::parse("18.20.0").unwrap()));
        assert!(pin.node.accepts(&Version::parse("20.20.2").unwrap()));
        assert!(pin.node.to_string().contains(">=20"), "{}", pin.node);
        // Since 0.1.18 no package is for one platform only (0.1.17 had
        // macOS's fsevents): the same tree on Linux and macOS.
        assert!(pin.lock.packages.iter().all(LockedPackage::applies_here));
    }

    #[test]
    fn a_lock_of_another_shape_is_rejected() {
        assert!(Lock::parse(b"{\"lockfileVersion\": 2, \"packages\": {}}").is_err());
        assert!(Lock::parse(b"not json").is_err());
        let no_version = br#"{"lockfileVersion":3,"packages":{"node_modules/a":{}}}"#;
        assert!(Lock::parse(no_version).unwrap_err().contains("no version"));
        let escape =
            br#"{"lockfileVersion":3,"packages":{"node_modules/../x":{"version":"1.0.0"}}}"#;
        assert!(Lock::parse(escape).is_err());
    }

    #[test]
    fn platform_filters_follow_npm() {
        let p = |os: &[&str]| LockedPackage {
            path: "node_modules/x".into(),
            name: "x".into(),
            version: "1.0.0".into(),
            engines_node: None,
            os: os.iter().map(|s| s.to_string()).collect(),
            cpu: vec![],
        };
        assert!(p(&[]).applies_here());
        assert!(p(&[NPM_PLATFORM]).applies_here());
        assert!(!p(&["win32"]).applies_here());
        assert!(!p(&[&format!("!{NPM_PLATFORM}")]).applies_here());
    }
}
