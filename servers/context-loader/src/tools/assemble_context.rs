//! `assemble-context`: build a prompt from sections within a token budget.

use context_budget::{AssembledContext, Section};
use mcp_common::{Structured, ToolError, parse_params};
use rmcp::RoleServer;
use rmcp::model::JsonObject;
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::service::Service;

pub const NAME: &str = "assemble-context";
pub const DESCRIPTION: &str = "Assemble a prompt from sections (system, tool_definitions, working_memory, \
semantic_search, archives, or any named text) within a token budget. Sections go in priority order (lower \
first); each gets its own budget (named defaults: 10/10/25/40/15 % of the total) and what the total still \
allows; a section over budget keeps its beginning, cut at a token boundary with a visible `[…truncated]` mark, \
or is dropped with a reason when not even that fits. `preset: \"adr-layered\"` uses the token-budgeting ADR's \
eight layers instead (system_prompt 8000, stream_buffer 2000, working_memory 40000, semantic_search 12000, \
graph_traversal 4000, session_archive 4000, meta_memory 2000, tool_definitions 4000; 76000 in all, in that \
order); sections then name those layers. Returns the text and per-section tokens, budget, truncated, dropped \
and budget_utilization, plus totals.";

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssembleContextParams {
    /// Sections `{name, content, budget?, priority?}`.
    pub sections: Vec<Section>,
    /// Total tokens for the assembled text. Default: 90 % of `model`'s context window
    /// (with a preset: the preset's total, capped by that).
    pub budget: Option<u64>,
    /// Model whose tokenizer counts (default `gpt-4`); also sets the default budget.
    pub model: Option<String>,
    /// A named layout whose layers the sections name: `adr-layered`.
    pub preset: Option<String>,
}

pub async fn call(
    service: &Service,
    args: JsonObject,
    context: &RequestContext<RoleServer>,
) -> Result<Structured<AssembledContext>, ToolError> {
    let params: AssembleContextParams = parse_params(NAME, Some(args))?;
    service
        .assemble_context(params, context.ct.clone())
        .await
        .map(Structured)
}
