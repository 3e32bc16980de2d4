//! Tool adapters: parse parameters, call the engine, shape the result. Each tool's
//! `run` is what both the MCP registry and the CLI call, so the two cannot drift.

pub mod count_tokens;
pub mod list_models;

use std::sync::Arc;

use context_budget::TokenCounter;

/// What every tool may use; shared by all sessions of one process.
#[derive(Debug, Clone)]
pub struct AppState {
    pub counter: Arc<TokenCounter>,
}

impl AppState {
    pub fn new(counter: TokenCounter) -> Self {
        AppState {
            counter: Arc::new(counter),
        }
    }
}
