//! The one place a tool call is run: what runs inline and what on the blocking pool,
//! and which calls take the exact (provider API) pass. The MCP registry and the CLI
//! both call these methods, so a tool cannot behave differently in the two.
//!
//! The engine does the work and is synchronous; the exact Claude pass (an
//! [`ExactCounter`] that blocks on Anthropic's API) happens inside the engine's
//! count, fit and assemble. So any call that may take that pass, and any large
//! input, runs on tokio's blocking pool: no async worker ever waits on the network or
//! on megabytes of tokenizing.

use std::path::PathBuf;
use std::sync::Arc;

use context_budget::ScanControl;
use context_budget::files::roots::Roots;
use context_budget::files::{FileLimits, FileStore, FileTokens, FilesError, LoadedFiles};
use context_budget::spec::{SpecBudget, SpecError, SpecStore, SpecTokens};
use context_budget::{
    AssembleOptions, AssembledContext, ExactCountFailure, ExactCounter, FittedMessages, Message,
    ModelEntry, ModelListing, ResolvedModel, TokenCount, TokenCounter, Tokenizer, assemble_context,
    fit_messages, limits,
};
use mcp_common::{ToolError, run_blocking};
use tokio_util::sync::CancellationToken;

use crate::errors::tool_error;
use crate::tools::assemble_context::AssembleContextParams;
use crate::tools::count_tokens::CountTokensParams;
use crate::tools::file_tokens::FileTokensParams;
use crate::tools::fit_messages::FitMessagesParams;
use crate::tools::list_models::ListModelsParams;
use crate::tools::load_files::LoadFilesParams;
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
    /// The file tools' roots (`None`: none configured, e.g. HTTP without --root) and
    /// their measurement cache and limits.
    files: Arc<(Option<Roots>, FileStore)>,
    /// Whether [`Service::warm_up`] does anything (off only to measure its worth).
    warm: bool,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("counter", &self.counter)
            .field("specs", &self.specs)
            .field("exact", &self.exact.is_some())
            .field("file_roots", &self.files.0)
            .finish()
    }
}

impl Service {
    pub fn new(counter: TokenCounter, specs: SpecStore) -> Self {
        Service {
            counter: Arc::new(counter),
            specs: Arc::new(specs),
            exact: None,
            files: Arc::new((None, FileStore::new(FileLimits::default()))),
            warm: true,
        }
    }

    /// Make [`Service::warm_up`] a no-op (`--no-warm-up`, for the benchmark's
    /// unwarmed variant).
    pub fn without_warm_up(mut self) -> Self {
        self.warm = false;
        self
    }

    /// Load what the first count of each tokenizer would otherwise load on its way:
    /// the vocabularies (~100 ms, process-wide), the token tables the Claude estimate
    /// and the spec breakdowns weigh tokens with, by counting a few words with each.
    /// Servers run it on a background thread right after start, so `initialize` is
    /// answered at once and a first count that comes after finds everything loaded.
    /// (tiktoken's piece cache is per thread and fills with use; a fresh worker's
    /// costs an allocation, not a load.)
    pub fn warm_up(&self) {
        if !self.warm {
            return;
        }
        // Vocabularies first (every count needs one), o200k_base before cl100k_base
        // (gpt-4o and Claude are the common asks); then the token tables, which only
        // the Claude estimate and spec breakdowns need.
        for tokenizer in [Tokenizer::O200kBase, Tokenizer::Cl100kBase] {
            tokenizer.count("warm up");
        }
        for tokenizer in [Tokenizer::ClaudeEstimate, Tokenizer::Cl100kBase] {
            tokenizer.for_each_token("warm up", |_, _| {});
        }
    }

    /// Serve file tools under `roots` (none: they answer ROOTS_NOT_CONFIGURED) with
    /// these per-call limits.
    pub fn with_files(mut self, roots: Option<Roots>, limits: FileLimits) -> Self {
        self.files = Arc::new((roots, FileStore::new(limits)));
        self
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
    /// blocking pool. `work` gets a token that is cancelled when the request is, and
    /// also when this future is dropped (an HTTP timeout, a vanished client, shutdown):
    /// the pool thread cannot be stopped from outside, so it must notice by itself.
    async fn run<T: Send + 'static>(
        &self,
        input_bytes: usize,
        cancelled: &CancellationToken,
        work: impl FnOnce(&Service, &CancellationToken) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        if input_bytes <= INLINE_MAX_BYTES && self.exact.is_none() {
            return work(self, cancelled);
        }
        let service = self.clone();
        let token = cancelled.child_token();
        let abandoned = token.clone().drop_guard();
        let result = run_blocking(move || work(&service, &token)).await;
        abandoned.disarm();
        result
    }

    pub async fn count_tokens(
        &self,
        params: CountTokensParams,
        cancelled: CancellationToken,
    ) -> Result<TokenCount, ToolError> {
        self.run(params.text.len(), &cancelled, move |service, cancelled| {
            let exact = service.exact_for(cancelled);
            service
                .counter
                .count_until(
                    &params.text,
                    params.model.as_deref(),
                    exact.as_ref().map(|e| e as &dyn ExactCounter),
                    &|| cancelled.is_cancelled(),
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
        self.run(bytes, &cancelled, move |service, cancelled| {
            let exact = service.exact_for(cancelled);
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
        if let Some(path) = &params.spec_path {
            self.counter
                .check_name("specPath", path)
                .map_err(tool_error)?;
        }
        let query = params.query();
        self.on_specs(params.model, scan, move |specs, model, scan| {
            specs.spec_tokens(&query, model, scan)
        })
        .await
    }

    pub async fn spec_budget(
        &self,
        params: SpecBudgetParams,
        scan: SharedScan,
    ) -> Result<SpecBudget, ToolError> {
        limits::check_spec_count(params.specs.len()).map_err(tool_error)?;
        for spec in &params.specs {
            self.counter.check_name("specs", spec).map_err(tool_error)?;
        }
        self.on_specs(params.model, scan, move |specs, model, scan| {
            specs.spec_budget(&params.specs, params.budget, model, scan)
        })
        .await
    }

    /// `client_roots`: the folders the client offered (MCP roots), which narrow the
    /// server's; `None` when it offered none.
    pub async fn file_tokens(
        &self,
        params: FileTokensParams,
        client_roots: Option<Vec<PathBuf>>,
        scan: SharedScan,
    ) -> Result<FileTokens, ToolError> {
        self.on_files(
            params.model.clone(),
            client_roots,
            move |store, roots, model| {
                let sort = params.sort.unwrap_or_default();
                store.file_tokens(
                    roots,
                    &params.query(),
                    model,
                    sort,
                    params.row_limit(),
                    scan.as_ref(),
                )
            },
        )
        .await
    }

    pub async fn load_files(
        &self,
        params: LoadFilesParams,
        client_roots: Option<Vec<PathBuf>>,
        scan: SharedScan,
    ) -> Result<LoadedFiles, ToolError> {
        self.on_files(
            params.model.clone(),
            client_roots,
            move |store, roots, model| {
                store.load_files(
                    roots,
                    &params.query(),
                    &params.request(),
                    model,
                    scan.as_ref(),
                )
            },
        )
        .await
    }

    /// File work for `model` under the call's roots: walking, reading and
    /// tokenizing, always on the blocking pool.
    async fn on_files<T: Send + 'static>(
        &self,
        model: Option<String>,
        client_roots: Option<Vec<PathBuf>>,
        work: impl FnOnce(&FileStore, &Roots, &ResolvedModel<'_>) -> Result<T, FilesError>
        + Send
        + 'static,
    ) -> Result<T, ToolError> {
        let service = self.clone();
        run_blocking(move || {
            let model = service
                .counter
                .resolve(model.as_deref())
                .map_err(tool_error)?;
            let (roots, store) = service.files.as_ref();
            let server_roots = roots
                .as_ref()
                .ok_or(FilesError::NoRoots)
                .map_err(tool_error)?;
            let narrowed;
            let roots = match client_roots {
                Some(dirs) => {
                    narrowed = server_roots.narrow(&dirs).map_err(tool_error)?;
                    &narrowed
                }
                None => server_roots,
            };
            work(store, roots, &model).map_err(tool_error)
        })
        .await
    }

    /// Spec work for `model`: file reads and tokenizing, always on the blocking pool.
    /// The scan also stops when this future is dropped (HTTP timeout, shutdown), not
    /// only when the request is cancelled.
    async fn on_specs<T: Send + 'static>(
        &self,
        model: Option<String>,
        scan: SharedScan,
        work: impl FnOnce(&SpecStore, &ResolvedModel<'_>, &dyn ScanControl) -> Result<T, SpecError>
        + Send
        + 'static,
    ) -> Result<T, ToolError> {
        let service = self.clone();
        let abandoned = CancellationToken::new();
        let _stop_when_dropped = abandoned.clone().drop_guard();
        run_blocking(move || {
            let model = service
                .counter
                .resolve(model.as_deref())
                .map_err(tool_error)?;
            let scan = UntilAbandoned { scan, abandoned };
            work(&service.specs, &model, &scan).map_err(tool_error)
        })
        .await
    }
}

/// A scan that also stops once the future waiting for it is gone.
struct UntilAbandoned {
    scan: SharedScan,
    abandoned: CancellationToken,
}

impl ScanControl for UntilAbandoned {
    fn progress(&self, done: usize, total: usize) {
        self.scan.progress(done, total);
    }

    fn is_cancelled(&self) -> bool {
        self.abandoned.is_cancelled() || self.scan.is_cancelled()
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
    use context_budget::Tokenizer;

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
    async fn a_cancelled_request_stops_counting_a_large_text() {
        let service = Service::new(TokenCounter::default(), SpecStore::new("specs"));
        let text = "Plans change.\nSo do budgets.\n".repeat(120_000);
        let cancelled = CancellationToken::new();
        cancelled.cancel();
        let params = CountTokensParams {
            text: text.clone(),
            model: Some("gpt-4o".into()),
        };
        let error = service
            .count_tokens(params.clone(), cancelled)
            .await
            .expect_err("cancelled before the first part");
        assert_eq!(error.code, mcp_common::ErrorCode::Cancelled);
        let count = service
            .count_tokens(params, CancellationToken::new())
            .await
            .expect("counts");
        assert_eq!(count.token_count, Tokenizer::O200kBase.count(&text));
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
