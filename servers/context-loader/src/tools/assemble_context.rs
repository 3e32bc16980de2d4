//! `assemble-context`: build a prompt from sections within a token budget.

use context_budget::{
    AssembleError, AssembledContext, FitOptions, Section, assemble_context, input_budget, ratio,
    usd,
};
use mcp_common::{ErrorCode, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use super::AppState;
use super::count_tokens::count_error;
use super::fit_messages::fit_error;

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

pub fn run(
    state: &AppState,
    params: &AssembleContextParams,
) -> Result<AssembledContext, ToolError> {
    let bytes: usize = params.sections.iter().map(|s| s.content.len()).sum();
    let limit = state.counter.max_input_bytes();
    if bytes > limit {
        return Err(count_error(context_budget::CountError::InputTooLarge {
            bytes,
            limit,
        }));
    }
    if params.budget.is_none() && params.model.is_none() {
        return Err(ToolError::new(
            ErrorCode::InvalidInput,
            "give an overall `budget` or a `model` (its window sets the budget)",
            "Send e.g. {\"budget\": 8000} or {\"model\": \"gpt-4o\"}.",
        ));
    }
    let resolved = state
        .counter
        .resolve(params.model.as_deref())
        .map_err(count_error)?;
    let budget = match (params.budget, resolved.spec()) {
        (Some(budget), _) => budget,
        (None, Some(spec)) => {
            input_budget(spec.context_window, &FitOptions::default()).map_err(fit_error)?
        }
        (None, None) => {
            return Err(ToolError::new(
                ErrorCode::InvalidInput,
                format!(
                    "`{}` is an encoding without a context window",
                    resolved.name()
                ),
                "Give an overall `budget`, or name a model instead of an encoding.",
            ));
        }
    };
    let tokenizer = resolved.tokenizer();
    let assembly = assemble_context(&params.sections, tokenizer, budget).map_err(|e| match e {
        AssembleError::ZeroBudget => ToolError::new(
            ErrorCode::InvalidInput,
            e.to_string(),
            "Send a budget of at least 1 token.",
        ),
        AssembleError::EmptyName { index } => ToolError::new(
            ErrorCode::InvalidInput,
            e.to_string(),
            "Give every section a name, e.g. `system` or `semantic_search`.",
        )
        .with_detail("section_index", index),
    })?;
    Ok(AssembledContext {
        utilization: ratio(assembly.total_tokens, budget),
        truncated_sections: assembly.sections.iter().filter(|s| s.truncated).count(),
        estimated_input_cost_usd: resolved
            .spec()
            .map(|s| usd(assembly.total_tokens as usize, s.input_usd_per_mtok)),
        text: assembly.text,
        total_tokens: assembly.total_tokens,
        budget,
        model: resolved.name().to_string(),
        encoding: tokenizer.name(),
        exact: tokenizer.is_exact(),
        sections: assembly.sections,
    })
}
