//! What a caller asks the spec engine: which spec (or all), with or without
//! sub-specs, filtered, sorted and limited how.

use schemars::JsonSchema;
use serde::Serialize;

/// How a listing is ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortOrder {
    /// Largest first (ties by name).
    #[default]
    Tokens,
    /// By spec id.
    Name,
}

/// What `spec-tokens` was asked.
#[derive(Debug, Clone, Default)]
pub struct SpecQuery {
    /// A spec, sub-spec file or path; `None` lists every spec.
    pub spec_path: Option<String>,
    pub include_sub_specs: bool,
    pub detailed: bool,
    pub budget: Option<u64>,
    pub sort: SortOrder,
    pub min_tokens: Option<u64>,
    pub max_tokens: Option<u64>,
    /// Most rows a listing returns (the summary always covers every match).
    pub limit: Option<usize>,
}
