//! `spec-tokens`: what a spec costs before loading it, or a listing of every spec.

use std::sync::Arc;

use context_budget::spec::{SortOrder, SpecQuery, SpecTokens};
use mcp_common::{Structured, ToolError, parse_params};
use rmcp::RoleServer;
use rmcp::model::JsonObject;
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::scan::RequestScan;
use crate::service::Service;

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

impl SpecTokensParams {
    /// The engine's query, with the documented defaults filled in.
    pub fn query(&self) -> SpecQuery {
        SpecQuery {
            spec_path: self.spec_path.clone(),
            include_sub_specs: self.include_sub_specs,
            detailed: self.detailed,
            budget: self.budget,
            sort: self.sort.unwrap_or_default(),
            min_tokens: self.min_tokens,
            max_tokens: self.max_tokens,
            limit: match self.limit.unwrap_or(DEFAULT_LIMIT) {
                0 => None,
                n => Some(n),
            },
        }
    }
}

pub async fn call(
    service: &Service,
    args: JsonObject,
    context: &RequestContext<RoleServer>,
) -> Result<Structured<SpecTokens>, ToolError> {
    let params: SpecTokensParams = parse_params(NAME, Some(args))?;
    let scan = Arc::new(RequestScan::new(context));
    service.spec_tokens(params, scan).await.map(Structured)
}
