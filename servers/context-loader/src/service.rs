//! The one place a tool call is run: what runs inline and what on the blocking pool,
//! and which calls take the exact (provider API) pass. The MCP registry and the CLI
//! both call these methods, so a tool cannot behave differently in the two.
//!
//! The engine does the work and is synchronous; the exact Claude pass (an
//! [`ExactCounter`] that blocks on Anthropic's API) happens inside the engine's
//! count, fit and assemble. So any call that may take that pass, and any large
//! input, runs on tokio's blocking pool: no async worker ever waits on the network or
//! on megabytes of tokenizing.

use std::sync::Arc;

use context_budget::spec::scan::ScanControl;
use context_budget::spec::{SpecBudget, SpecError, SpecStore, SpecTokens};
use context_budget::{
    AssembleOptions, AssembledContext, ExactCountFailure, ExactCounter, FittedMessages, Message,
    ModelEntry, ModelListing, ResolvedModel, TokenCount, TokenCounter, assemble_context,
    fit_messages, limits,
};
use mcp_common::{ToolError, run_blocking};
use tokio_util::sync::CancellationToken;

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

    /// The exact counter for one request: it stops asking the provider once the
    /// request is cancelled (a count already in flight ends within the client's
    /// timeout; the engine then keeps its local result).
    fn exact_for<'a>(&'a self, cancelled: &'a CancellationToken) -> Option<UntilCancelled<'a>> {
        self.exact
            .as_deref()
            .map(|exact| UntilCancelled { exact, cancelled })
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

    pub async fn count_tokens(
        &self,
        params: CountTokensParams,
        cancelled: CancellationToken,
    ) -> Result<TokenCount, ToolError> {
        self.run(params.text.len(), move |service| {
            let exact = service.exact_for(&cancelled);
            service
                .counter
                .count_with(
                    &params.text,
                    params.model.as_deref(),
                    exact.as_ref().map(|e| e as &dyn ExactCounter),
                )
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
        cancelled: CancellationToken,
    ) -> Result<FittedMessages, ToolError> {
        let bytes = limits::messages_bytes(&params.messages);
        self.run(bytes, move |service| {
            let exact = service.exact_for(&cancelled);
            fit_messages(
                &service.counter,
                &params.messages,
                params.model.as_deref(),
                &params.options(),
                exact.as_ref().map(|e| e as &dyn ExactCounter),
            )
            .map_err(tool_error)
        })
        .await
    }

    pub async fn assemble_context(
        &self,
        params: AssembleContextParams,
        cancelled: CancellationToken,
    ) -> Result<AssembledContext, ToolError> {
        // Truncation re-tokenizes sections, and the exact pass may wait on the
        // network: always off the async workers.
        let service = self.clone();
        run_blocking(move || {
            let exact = service.exact_for(&cancelled);
            let options = AssembleOptions {
                model: params.model.as_deref(),
                budget: params.budget,
                preset: params.preset.as_deref(),
            };
            assemble_context(
                &service.counter,
                &params.sections,
                &options,
                exact.as_ref().map(|e| e as &dyn ExactCounter),
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

/// An exact counter that answers "cancelled" instead of asking once its request is.
struct UntilCancelled<'a> {
    exact: &'a dyn ExactCounter,
    cancelled: &'a CancellationToken,
}

impl UntilCancelled<'_> {
    fn ask(
        &self,
        count: impl FnOnce() -> Result<u64, ExactCountFailure>,
    ) -> Result<u64, ExactCountFailure> {
        if self.cancelled.is_cancelled() {
            return Err(ExactCountFailure::new(
                "exact count not asked: the request was cancelled; using the local estimate",
            ));
        }
        count()
    }
}

impl ExactCounter for UntilCancelled<'_> {
    fn provider_model(&self, requested: &str, entry: &ModelEntry) -> Option<String> {
        self.exact.provider_model(requested, entry)
    }

    fn count_messages(&self, model: &str, messages: &[Message]) -> Result<u64, ExactCountFailure> {
        self.ask(|| self.exact.count_messages(model, messages))
    }

    fn count_text(&self, model: &str, text: &str) -> Result<u64, ExactCountFailure> {
        self.ask(|| self.exact.count_text(model, text))
    }

    fn encoding(&self) -> &'static str {
        self.exact.encoding()
    }

    fn method(&self) -> &'static str {
        self.exact.method()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts every Claude text as 7 tokens.
    struct Seven;

    impl ExactCounter for Seven {
        fn provider_model(&self, requested: &str, entry: &ModelEntry) -> Option<String> {
            entry.tokenizer.is_claude().then(|| requested.to_string())
        }
        fn count_messages(&self, _: &str, m: &[Message]) -> Result<u64, ExactCountFailure> {
            Ok(7 * m.len() as u64)
        }
        fn count_text(&self, _: &str, _: &str) -> Result<u64, ExactCountFailure> {
            Ok(7)
        }
        fn encoding(&self) -> &'static str {
            "seven"
        }
        fn method(&self) -> &'static str {
            "exact: seven"
        }
    }

    fn service() -> Service {
        Service::new(TokenCounter::default(), SpecStore::new("specs")).with_exact(Arc::new(Seven))
    }

    fn claude(text: &str) -> CountTokensParams {
        CountTokensParams {
            text: text.into(),
            model: Some("claude".into()),
        }
    }

    #[tokio::test]
    async fn the_exact_pass_runs_on_the_pool_and_a_cancelled_request_stops_asking() {
        let service = service();
        let exact = service
            .count_tokens(claude("hello there"), CancellationToken::new())
            .await
            .expect("counts");
        assert_eq!((exact.token_count, exact.encoding), (7, "seven"));

        let cancelled = CancellationToken::new();
        cancelled.cancel();
        let local = service
            .count_tokens(claude("hello there"), cancelled)
            .await
            .expect("counts");
        assert!(!local.exact);
        assert_eq!(local.encoding, "claude_4_7_estimate");
        assert!(
            local
                .warning
                .as_deref()
                .is_some_and(|w| w.contains("cancelled")),
            "{local:?}"
        );
    }

    #[tokio::test]
    async fn engine_errors_come_back_as_tool_errors() {
        let error = service()
            .count_tokens(
                CountTokensParams {
                    text: "x".into(),
                    model: Some("gpt4o".into()),
                },
                CancellationToken::new(),
            )
            .await
            .expect_err("unknown model");
        assert_eq!(error.code, mcp_common::ErrorCode::UnsupportedModel);
    }
}
