//! What every tool runs on: the process's catalog, specs, file roots and optional exact
//! counter, and the one place that decides what runs inline and what on the blocking
//! pool, and how a call stops when it is cancelled or abandoned. It knows no tool:
//! each tool (`tools/`) calls [`Service::counting`], [`Service::on_files`] or
//! [`Service::on_specs`] with its own work.
//!
//! The engine does the work and is synchronous; the exact Claude pass (an
//! [`ExactCounter`] that blocks on Anthropic's API) happens inside the engine's
//! count, fit and assemble. So any call that may take that pass, and any large
//! input, runs on tokio's blocking pool: no async worker ever waits on the network or
//! on megabytes of tokenizing.

use std::sync::Arc;

use context_budget::clients::AnswerOverrides;
use context_budget::files::roots::Roots;
use context_budget::files::{FileLimits, FileStore, FilesError};
use context_budget::spec::{SpecError, SpecStore};
use context_budget::{
    AnswerLimit, ExactCountFailure, ExactCounter, Message, ModelEntry, ResolvedModel, TokenCounter,
    Tokenizer,
};
use context_budget::{LayerBudgets, ScanControl};
use mcp_common::{ToolError, run_blocking};
use tokio_util::sync::CancellationToken;

use crate::call::Call;
use crate::errors::tool_error;
use crate::scan::SharedScan;

/// Inputs up to this many bytes are counted inline: a few hundred microseconds at
/// most, cheaper than a hop to another thread.
pub const INLINE_MAX_BYTES: usize = 64 * 1024;

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
    /// The working directory, when it was refused as an implicit root, and why.
    refused_root: Option<String>,
    /// The `--max-answer-*` flags given, over each client's own answer limit.
    answer_overrides: AnswerOverrides,
    /// Whether [`Service::warm_up`] does anything (off only to measure its worth).
    warm: bool,
    /// The `adr-layered` preset's layer budgets as configured (`--adr-layer-budgets`).
    layer_budgets: Arc<LayerBudgets>,
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
            refused_root: None,
            answer_overrides: AnswerOverrides::default(),
            warm: true,
            layer_budgets: Arc::new(LayerBudgets::default()),
        }
    }

    /// The `adr-layered` preset's layer budgets from configuration.
    pub fn with_layer_budgets(mut self, budgets: LayerBudgets) -> Self {
        self.layer_budgets = Arc::new(budgets);
        self
    }

    /// The `adr-layered` preset's layer budgets (the ADR's unless configured).
    pub fn layer_budgets(&self) -> Arc<LayerBudgets> {
        Arc::clone(&self.layer_budgets)
    }

    /// Make [`Service::warm_up`] a no-op (`--no-warm-up`, for the benchmark's
    /// unwarmed variant).
    pub fn without_warm_up(mut self) -> Self {
        self.warm = false;
        self
    }

    /// Prepare what the first counts would otherwise prepare on their way: the
    /// vocabularies are read in place from the binary (nothing to load), but the
    /// pre-tokenizers' Unicode regexes compile on the first non-ASCII piece (a few ms
    /// each), and the estimates' weight table, which long texts and spec breakdowns
    /// weigh tokens with, is built once (a few ms). Servers run it on a background
    /// thread right after start, so `initialize` is answered at once.
    /// (tiktoken's piece cache is per thread and fills with use; a fresh worker's
    /// costs an allocation, not a load.)
    pub fn warm_up(&self) {
        if !self.warm {
            return;
        }
        // o200k_base first (gpt-4o and Claude are the common asks); "é" is not
        // ASCII, so the regex behind the ASCII scanners compiles now.
        for tokenizer in [Tokenizer::O200kBase, Tokenizer::Cl100kBase] {
            tokenizer.count("warm up, café");
        }
        Tokenizer::ClaudeEstimate.preload();
    }

    /// Serve file tools under `roots` (none: they answer ROOTS_NOT_CONFIGURED) with
    /// these per-call limits.
    pub fn with_files(mut self, roots: Option<Roots>, limits: FileLimits) -> Self {
        self.files = Arc::new((roots, FileStore::new(limits)));
        self
    }

    /// Keep no file measures in memory: for a command-line run that writes no
    /// cache file (`--no-cache`), where nothing would read them again.
    pub fn without_measure_cache(mut self) -> Self {
        let (roots, store) = &*self.files;
        let store = FileStore::without_cache(store.limits().clone());
        self.files = Arc::new((roots.clone(), store));
        self
    }

    /// Say why file tools have no root: the working directory `described` was too
    /// wide to be taken as one without being named (see `config`).
    pub fn with_refused_root(mut self, described: Option<String>) -> Self {
        self.refused_root = described;
        self
    }

    /// The working directory refused as an implicit root, described, if it was.
    pub fn refused_root(&self) -> Option<&str> {
        self.refused_root.as_deref()
    }

    /// Bound every answer by `limit`.
    pub fn with_answer_overrides(mut self, overrides: AnswerOverrides) -> Self {
        self.answer_overrides = overrides;
        self
    }

    /// The limit a call's answer is held to: the table's for the client that named
    /// itself `client` (`clientInfo.name`; the strictest for any other), under the
    /// flags given.
    pub fn answer_limit_for(&self, client: Option<&str>) -> AnswerLimit {
        self.answer_overrides.for_client(client)
    }

    /// The limit a command-line run's answer is held to.
    pub fn command_line_answer_limit(&self) -> AnswerLimit {
        self.answer_overrides.for_command_line()
    }

    /// Count the models `exact` covers with it (e.g. Claude with Anthropic's API).
    pub fn with_exact(mut self, exact: Arc<dyn ExactCounter>) -> Self {
        self.exact = Some(exact);
        self
    }

    /// The file tools' measurement cache and limits.
    pub fn file_store(&self) -> &FileStore {
        &self.files.1
    }

    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    /// Counting that may take the exact (provider API) pass: `work` gets the counter,
    /// the exact counter for this request (`None` when exact counting is off; it stops
    /// asking the provider once the request is cancelled, and the engine then keeps
    /// its local result) and the call's cancellation. It runs inline when the input
    /// is small and cannot reach the network, else on the blocking pool; there `work`
    /// is also cancelled when this future is dropped (an HTTP timeout, a vanished
    /// client, shutdown): the pool thread cannot be stopped from outside, so it must
    /// notice by itself.
    pub async fn counting<T: Send + 'static>(
        &self,
        input_bytes: usize,
        call: &Call,
        work: impl FnOnce(
            &TokenCounter,
            Option<&dyn ExactCounter>,
            &CancellationToken,
        ) -> Result<T, ToolError>
        + Send
        + 'static,
    ) -> Result<T, ToolError> {
        let counting = move |service: &Service, cancelled: &CancellationToken| {
            let exact = service
                .exact
                .as_deref()
                .map(|exact| UntilCancelled { exact, cancelled });
            work(
                &service.counter,
                exact.as_ref().map(|e| e as &dyn ExactCounter),
                cancelled,
            )
        };
        if input_bytes <= INLINE_MAX_BYTES && self.exact.is_none() {
            return counting(self, &call.cancelled);
        }
        let service = self.clone();
        let token = call.cancelled.child_token();
        let abandoned = token.clone().drop_guard();
        let result = run_blocking(move || counting(&service, &token)).await;
        abandoned.disarm();
        result
    }

    /// File work for `model` under the call's roots (the server's, narrowed by the
    /// client's when it offered some): walking, reading and tokenizing.
    pub async fn on_files<T: Send + 'static>(
        &self,
        model: Option<String>,
        call: &Call,
        work: impl FnOnce(
            &FileStore,
            &Roots,
            &ResolvedModel<'_>,
            &dyn ScanControl,
        ) -> Result<T, FilesError>
        + Send
        + 'static,
    ) -> Result<T, ToolError> {
        let client_roots = call.client_roots().await;
        self.on_scan(model, call, move |service, model, scan| {
            let (roots, store) = service.files.as_ref();
            let server_roots = match (roots, &service.refused_root) {
                (Some(roots), _) => roots,
                (None, Some(refused)) => return Err(crate::errors::implicit_root_refused(refused)),
                (None, None) => return Err(tool_error(FilesError::NoRoots)),
            };
            let narrowed;
            let roots = match client_roots {
                Some(dirs) => {
                    narrowed = server_roots.narrow(&dirs).map_err(tool_error)?;
                    &narrowed
                }
                None => server_roots,
            };
            work(store, roots, model, scan).map_err(tool_error)
        })
        .await
    }

    /// Spec work for `model`: file reads and tokenizing.
    pub async fn on_specs<T: Send + 'static>(
        &self,
        model: Option<String>,
        call: &Call,
        work: impl FnOnce(&SpecStore, &ResolvedModel<'_>, &dyn ScanControl) -> Result<T, SpecError>
        + Send
        + 'static,
    ) -> Result<T, ToolError> {
        self.on_scan(model, call, move |service, model, scan| {
            work(&service.specs, model, scan).map_err(tool_error)
        })
        .await
    }

    /// A scan over many files for `model`, always on the blocking pool. It stops when
    /// the request is cancelled and also when this future is dropped (HTTP timeout,
    /// a vanished client, shutdown).
    async fn on_scan<T: Send + 'static>(
        &self,
        model: Option<String>,
        call: &Call,
        work: impl FnOnce(&Service, &ResolvedModel<'_>, &dyn ScanControl) -> Result<T, ToolError>
        + Send
        + 'static,
    ) -> Result<T, ToolError> {
        let service = self.clone();
        let scan = call.scan.clone();
        let abandoned = CancellationToken::new();
        let _stop_when_dropped = abandoned.clone().drop_guard();
        run_blocking(move || {
            let model = service
                .counter
                .resolve(model.as_deref())
                .map_err(tool_error)?;
            let scan = UntilAbandoned { scan, abandoned };
            work(&service, &model, &scan)
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

    fn count_request(
        &self,
        model: &str,
        system: Option<&str>,
        tools: &[serde_json::Value],
    ) -> Result<u64, ExactCountFailure> {
        self.ask(|| self.exact.count_request(model, system, tools))
    }

    fn encoding(&self) -> &'static str {
        self.exact.encoding()
    }

    fn method(&self) -> &'static str {
        self.exact.method()
    }
}
