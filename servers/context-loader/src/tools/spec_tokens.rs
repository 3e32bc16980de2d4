//! `spec-tokens`: what a spec costs before loading it, or a listing of every spec.

use context_budget::spec::scan::ScanControl;
use context_budget::spec::{SortOrder, SpecError, SpecQuery, SpecTokens};
use mcp_common::{ErrorCode, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use super::AppState;
use super::count_tokens::count_error;

pub const NAME: &str = "spec-tokens";
pub const DESCRIPTION: &str = "Measure spec documents before loading them. With `specPath` (a number like `59`, a \
folder or name, or `059/DESIGN.md`): the spec's tokens per file, what it is made of (`detailed`: prose, code, \
tables, frontmatter, adding up exactly), a performance level, and whether it fits a `budget`. Without `specPath`: \
every spec with its total and level, sorted by tokens or name, filterable by min/max tokens, with a summary. \
Broken specs are reported on their own row, never failing the listing.";

/// Rows a listing returns unless `limit` says otherwise (0 = all).
pub const DEFAULT_LIMIT: usize = 100;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpecTokensParams {
    /// Spec to measure: its number (`59` = `059`, matched exactly), folder name
    /// (`059-token-engine`), name (`token-engine`), a sub-spec (`059/DESIGN.md`), or a
    /// path inside the specs root. Omit to list every spec.
    #[serde(rename = "specPath", alias = "spec_path", alias = "spec")]
    pub spec_path: Option<String>,
    /// Count sub-spec files (DESIGN.md, TESTING.md, ...) too. Default false: README only.
    #[serde(rename = "includeSubSpecs", alias = "include_sub_specs", default)]
    pub include_sub_specs: bool,
    /// Add the breakdown (prose/code/tables/frontmatter) and performance figures.
    #[serde(default)]
    pub detailed: bool,
    /// Model or encoding to count for (default `gpt-4`).
    pub model: Option<String>,
    /// A token budget: says whether the spec fits and what would.
    pub budget: Option<u64>,
    /// Listing order: `tokens` (largest first, default) or `name`.
    pub sort: Option<SortOrder>,
    /// Listing filter: only specs with at most this many tokens (e.g. 2000).
    #[serde(alias = "maxTokens")]
    pub max_tokens: Option<u64>,
    /// Listing filter: only specs with at least this many tokens.
    #[serde(alias = "minTokens")]
    pub min_tokens: Option<u64>,
    /// Most rows a listing returns (default 100; 0 = all). The summary covers all.
    pub limit: Option<usize>,
}

pub fn run(
    state: &AppState,
    params: &SpecTokensParams,
    control: &dyn ScanControl,
) -> Result<SpecTokens, ToolError> {
    let model = state
        .counter
        .resolve(params.model.as_deref())
        .map_err(count_error)?;
    let query = SpecQuery {
        spec_path: params.spec_path.clone(),
        include_sub_specs: params.include_sub_specs,
        detailed: params.detailed,
        budget: params.budget,
        sort: params.sort.unwrap_or_default(),
        min_tokens: params.min_tokens,
        max_tokens: params.max_tokens,
        limit: match params.limit.unwrap_or(DEFAULT_LIMIT) {
            0 => None,
            n => Some(n),
        },
    };
    state
        .specs
        .spec_tokens(&query, &model, control)
        .map_err(spec_error)
}

/// Map the engine's spec errors onto structured tool errors.
pub fn spec_error(error: SpecError) -> ToolError {
    let message = error.to_string();
    match error {
        SpecError::RootNotFound { path, .. } => ToolError::new(
            ErrorCode::SpecsDirNotFound,
            message,
            "Start the server with --specs-dir DIR (or CONTEXT_LOADER_SPECS_DIR) pointing at the folder \
             that holds the NNN-name spec folders; a relative path is resolved from the server's \
             working directory.",
        )
        .with_detail("specs_dir", path),
        SpecError::InvalidQuery { .. } => ToolError::new(
            ErrorCode::InvalidInput,
            message,
            "Pass a spec number (`59`), folder name, `059/DESIGN.md`, or omit specPath to list all specs.",
        ),
        SpecError::OutsideRoot { query } => ToolError::new(
            ErrorCode::PathOutsideRoot,
            message,
            "Name a spec inside the specs root, e.g. `59` or `059/DESIGN.md`; `..`, absolute paths \
             elsewhere and symlinks out of the root are refused.",
        )
        .with_detail("requested", query),
        SpecError::NotFound { query, closest } => ToolError::new(
            ErrorCode::SpecNotFound,
            message,
            match closest.first() {
                Some(best) => format!(
                    "Did you mean `{best}`? Numbers match exactly (`59` is spec 059, never 1593); call \
                     spec-tokens without specPath to list every spec."
                ),
                None => "Call spec-tokens without specPath to list every spec.".into(),
            },
        )
        .with_detail("requested", query)
        .with_detail("available_options", closest),
        SpecError::Ambiguous { query, candidates } => ToolError::new(
            ErrorCode::AmbiguousSpec,
            message,
            "Use one of available_options (the full folder path) to pick one.",
        )
        .with_detail("requested", query)
        .with_detail("available_options", candidates),
        SpecError::FileNotFound {
            spec, available, ..
        } => ToolError::new(
            ErrorCode::SpecFileNotFound,
            message,
            format!("Use one of available_options, e.g. `{spec}/README.md`."),
        )
        .with_detail("spec", spec.clone())
        .with_detail(
            "available_options",
            available
                .iter()
                .map(|f| format!("{spec}/{f}"))
                .collect::<Vec<_>>(),
        ),
        SpecError::FileUnreadable { path, .. } => ToolError::new(
            ErrorCode::SpecUnreadable,
            message,
            "Fix or convert the file (specs are UTF-8 Markdown), or measure the spec's other files.",
        )
        .with_detail("path", path),
        SpecError::Cancelled => ToolError::new(
            ErrorCode::Cancelled,
            message,
            "Nothing to do: the request was cancelled. Repeat it to measure again; files measured \
             before the cancellation are cached.",
        ),
    }
}
