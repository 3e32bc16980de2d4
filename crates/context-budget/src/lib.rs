//! The context-window planning engine behind the `context-loader` MCP server.
//!
//! It answers "how many tokens is this for model X?" and everything built on that:
//! which model a name means ([`Catalog`]), how a model's text is tokenized
//! ([`Tokenizer`]), a counter with input limits ([`TokenCounter`]), and spec documents
//! measured by part ([`spec::SpecStore`]).
//!
//! Pure, synchronous library: no MCP, no async. The only I/O is reading files
//! under a specs root the caller names. Errors are typed ([`CountError`], [`CatalogError`]) so adapters can map them
//! onto their own error codes.

mod catalog;
mod counter;
pub mod spec;
mod suggest;
mod tokenizer;

pub use catalog::{Catalog, CatalogError, ModelInfo, ModelListing, ModelSpec, ResolvedModel};
pub use counter::{CountError, DEFAULT_MAX_INPUT_BYTES, TokenCount, TokenCounter};
pub use suggest::closest_names;
pub use tokenizer::{ClaudeEstimate, Tokenizer};

/// The model used when a caller does not name one.
pub const DEFAULT_MODEL: &str = "gpt-4";
