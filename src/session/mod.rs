//! The shared Playwright session `mychrome`, read natively from the CLI's
//! own registry.

pub mod bootstrap;
pub mod connect;
pub mod connect_tab;
pub mod disconnect;
pub mod ensure;
pub mod pinned;
pub mod registry;
pub mod state;
