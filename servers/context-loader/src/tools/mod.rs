//! Tool adapters: parse parameters, call the engine, shape the result. Each tool's
//! `run` is what both the MCP registry and the CLI call, so the two cannot drift.

pub mod assemble_context;
pub mod count_tokens;
pub mod fit_messages;
pub mod list_models;

use std::sync::Arc;

use context_budget::TokenCounter;

use crate::anthropic::AnthropicCounter;

/// What every tool may use; shared by all sessions of one process.
#[derive(Debug, Clone)]
pub struct AppState {
    pub counter: Arc<TokenCounter>,
    /// Set when exact Claude counting is enabled (`--exact-claude` and a key).
    pub anthropic: Option<Arc<AnthropicCounter>>,
}

impl AppState {
    pub fn new(counter: TokenCounter) -> Self {
        AppState {
            counter: Arc::new(counter),
            anthropic: None,
        }
    }

    pub fn with_anthropic(mut self, anthropic: AnthropicCounter) -> Self {
        self.anthropic = Some(Arc::new(anthropic));
        self
    }
}
