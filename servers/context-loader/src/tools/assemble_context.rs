//! `assemble-context`: build a prompt from sections within a token budget.

use context_budget::{AssembledContext, Section};
use mcp_common::{Structured, ToolError, parse_params};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::service::Service;

pub const NAME: &str = "assemble-context";
pub const DESCRIPTION: &str = "Assemble a prompt from sections (system, tool_definitions, working_memory, \
semantic_search, archives, or any named text) within a token budget. Sections go in priority order (lower \
first); each gets its own budget (named defaults: 10/10/25/40/15 % of the total) and what the total still \
allows; a section over budget keeps its beginning, cut at a token boundary with a visible `[…truncated]` mark. \
Returns the text and per-section tokens, budget, truncated and utilization, plus totals.";

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssembleContextParams {
    /// Sections `{name, content, budget?, priority?}`.
    pub sections: Vec<Section>,
    /// Total tokens for the assembled text. Default: 90 % of `model`'s context window.
    pub budget: Option<u64>,
    /// Model whose tokenizer counts (default `gpt-4`); also sets the default budget.
    pub model: Option<String>,
}

pub async fn call(
    service: &Service,
    args: JsonObject,
) -> Result<Structured<AssembledContext>, ToolError> {
    let params: AssembleContextParams = parse_params(NAME, Some(args))?;
    service.assemble_context(params).await.map(Structured)
}
