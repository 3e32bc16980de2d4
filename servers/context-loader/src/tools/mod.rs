//! Tool adapters, one module per tool: its name, description and parameters type,
//! and `call` = parse the arguments -> one [`crate::service::Service`] call -> the
//! structured result. The registry lists them; the CLI builds the same parameters
//! from flags and calls the same service, so the two cannot drift.

pub mod assemble_context;
pub mod count_tokens;
pub mod file_tokens;
pub mod fit_messages;
pub mod list_models;
pub mod load_files;
pub mod spec_budget;
pub mod spec_tokens;
