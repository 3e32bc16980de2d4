//! Spec documents: how many tokens a spec costs, with or without its sub-spec files,
//! what it is made of, and what fits a budget.
//!
//! A specs root holds folders `NNN-name/` with a `README.md` and sub-spec files
//! (`DESIGN.md`, ...), possibly one level down in group folders (`archived/`).
//! [`SpecStore`] (`store.rs`) finds them ([`layout`], remembered while unchanged by
//! [`discovery`]), resolves what a caller names
//! ([`resolve`]), measures files in parallel with a cache ([`scan`], [`measure`]) and
//! shapes the answers: sizes and plans ([`report`]), listing rows (`listing.rs`),
//! budgets (`budget.rs`), into the types of [`output`]. It reads files only inside the
//! root it was given.
//!
//! What it shares with the file tools ([`crate::files`]) lives at the engine's top
//! level: reading a file to count and why one was skipped (`crate::read`, with
//! spec answers' own wording in [`measure::SpecWords`]), the parallel for-each
//! (`crate::fan_out`), progress and cancellation ([`crate::ScanControl`]) and the
//! race-free open ([`crate::safe_open`]).

mod budget;
pub mod discovery;
mod error;
pub mod layout;
mod listing;
pub mod markdown;
pub mod measure;
pub mod output;
mod query;
pub mod report;
pub mod resolve;
pub mod scan;
mod store;

pub use error::{Closeness, SpecError};
pub use output::{ModelUsed, SpecBudget, SpecListing, SpecReport, SpecRow, SpecTokens};
pub use query::{SortOrder, SpecQuery};
pub use store::SpecStore;
