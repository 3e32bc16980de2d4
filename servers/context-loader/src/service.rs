//! The one place a tool call is run: what runs inline and what on the blocking pool,
//! and which calls take the exact (provider API) pass. The MCP registry and the CLI
//! both call these methods, so a tool cannot behave differently in the two.
//!
//! The engine does the work and is synchronous; the exact Claude pass (an
//! [`ExactCounter`] that blocks on Anthropic's API) happens inside the engine's
//! count, fit and (later) assemble. So any call that may take that pass, and any large
//! input, runs on tokio's blocking pool: no async worker ever waits on the network or
//! on megabytes of tokenizing.

use std::sync::Arc;

use context_budget::spec::scan::ScanControl;
use context_budget::spec::{SpecBudget, SpecError, SpecStore, SpecTokens};
use context_budget::{
    AssembledContext, ExactCounter, FittedMessages, ModelListing, ResolvedModel, TokenCount,
    TokenCounter, assemble_context, fit_messages, limits,
};
use mcp_common::{ToolError, run_blocking};

use crate::errors::tool_error;
use crate::tools::assemble_context::AssembleContextParams;
use crate::tools::count_tokens::CountTokensParams;
use crate::tools::fit_messages::FitMessagesParams;
use crate::tools::list_models::ListModelsParams;
use crate::tools::spec_budget::SpecBudgetParams;
use crate::tools::spec_tokens::SpecTokensParams;

/// Inputs up to this many bytes are counted inline: a few hundred microseconds at
/// most, cheaper than a hop to another thread.
pub const INLINE_MAX_BYTES: usize = 64 * 1024;

/// A spec scan's progress and cancellation, shared with the blocking-pool thread.
pub type SharedScan = Arc<dyn ScanControl + Send + Sync>;

/// The process's tools: the catalog and limits, the specs root, and the optional
/// exact counter. Cheap to clone (shared by every session of one process).
#[derive(Clone)]
pub struct Service {
    counter: Arc<TokenCounter>,
    /// The specs root and its measurement cache (shared: a repeat call by any
    /// session is answered from it).
    specs: Arc<SpecStore>,
    /// Set when exact Claude counting is enabled (`--exact-claude` and a key).
    exact: Option<Arc<dyn ExactCounter>>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("counter", &self.counter)
            .field("specs", &self.specs)
            .field("exact", &self.exact.is_some())
            .finish()
    }
}

impl Service {
    pub fn new(counter: TokenCounter, specs: SpecStore) -> Self {
        Service {
            counter: Arc::new(counter),
            specs: Arc::new(specs),
            exact: None,
        }
    }

    /// Count the models `exact` covers with it (e.g. Claude with Anthropic's API).
    pub fn with_exact(mut self, exact: Arc<dyn ExactCounter>) -> Self {
        self.exact = Some(exact);
        self
    }

    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    fn exact(&self) -> Option<&dyn ExactCounter> {
        self.exact.as_deref()
    }

    /// Run `work` inline when it is small and cannot reach the network, else on the
    /// blocking pool.
    async fn run<T: Send + 'static>(
        &self,
        input_bytes: usize,
        work: impl FnOnce(&Service) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        if input_bytes <= INLINE_MAX_BYTES && self.exact.is_none() {
            return work(self);
        }
        let service = self.clone();
        run_blocking(move || work(&service)).await
    }

    pub async fn count_tokens(&self, params: CountTokensParams) -> Result<TokenCount, ToolError> {
        self.run(params.text.len(), move |service| {
            service
                .counter
                .count_with(&params.text, params.model.as_deref(), service.exact())
                .map_err(tool_error)
        })
        .await
    }

    pub async fn list_models(&self, params: ListModelsParams) -> Result<ModelListing, ToolError> {
        Ok(self.counter.catalog().listing(params.filter.as_deref()))
    }

    pub async fn fit_messages(
        &self,
        params: FitMessagesParams,
    ) -> Result<FittedMessages, ToolError> {
        let bytes = limits::messages_bytes(&params.messages);
        self.run(bytes, move |service| {
            fit_messages(
                &service.counter,
                &params.messages,
                params.model.as_deref(),
                &params.options(),
                service.exact(),
            )
            .map_err(tool_error)
        })
        .await
    }

    pub async fn assemble_context(
        &self,
        params: AssembleContextParams,
    ) -> Result<AssembledContext, ToolError> {
        // Truncation re-tokenizes sections: always off the async workers.
        let service = self.clone();
        run_blocking(move || {
            assemble_context(
                &service.counter,
                &params.sections,
                params.model.as_deref(),
                params.budget,
            )
            .map_err(tool_error)
        })
        .await
    }

    pub async fn spec_tokens(
        &self,
        params: SpecTokensParams,
        scan: SharedScan,
    ) -> Result<SpecTokens, ToolError> {
        let query = params.query();
        self.on_specs(params.model, move |specs, model| {
            specs.spec_tokens(&query, model, scan.as_ref())
        })
        .await
    }

    pub async fn spec_budget(
        &self,
        params: SpecBudgetParams,
        scan: SharedScan,
    ) -> Result<SpecBudget, ToolError> {
        limits::check_spec_count(params.specs.len()).map_err(tool_error)?;
        self.on_specs(params.model, move |specs, model| {
            specs.spec_budget(&params.specs, params.budget, model, scan.as_ref())
        })
        .await
    }

    /// Spec work for `model`: file reads and tokenizing, always on the blocking pool.
    async fn on_specs<T: Send + 'static>(
        &self,
        model: Option<String>,
        work: impl FnOnce(&SpecStore, &ResolvedModel<'_>) -> Result<T, SpecError> + Send + 'static,
    ) -> Result<T, ToolError> {
        let service = self.clone();
        run_blocking(move || {
            let model = service
                .counter
                .resolve(model.as_deref())
                .map_err(tool_error)?;
            work(&service.specs, &model).map_err(tool_error)
        })
        .await
    }
}
