//! Tool adapters: parse parameters, call the engine, shape the result. Each tool's
//! `run` is what both the MCP registry and the CLI call, so the two cannot drift.

pub mod assemble_context;
pub mod count_tokens;
pub mod fit_messages;
pub mod list_models;
pub mod spec_budget;
pub mod spec_tokens;

use std::sync::Arc;

use context_budget::TokenCounter;
use context_budget::spec::SpecStore;

use crate::anthropic::AnthropicCounter;

/// What every tool may use; shared by all sessions of one process.
#[derive(Debug, Clone)]
pub struct AppState {
    pub counter: Arc<TokenCounter>,
    /// The specs root and its measurement cache (shared: a repeat call by any
    /// session is answered from it).
    pub specs: Arc<SpecStore>,
    /// Set when exact Claude counting is enabled (`--exact-claude` and a key).
    pub anthropic: Option<Arc<AnthropicCounter>>,
}

impl AppState {
    pub fn new(counter: TokenCounter, specs: SpecStore) -> Self {
        AppState {
            counter: Arc::new(counter),
            specs: Arc::new(specs),
            anthropic: None,
        }
    }

    pub fn with_anthropic(mut self, anthropic: AnthropicCounter) -> Self {
        self.anthropic = Some(Arc::new(anthropic));
        self
    }
}
