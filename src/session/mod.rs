//! The shared Playwright session `mychrome`, read natively from the CLI's
//! own registry.

pub mod connect;
pub mod registry;
pub mod state;
