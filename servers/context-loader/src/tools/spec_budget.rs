//! `spec-budget`: do these specs fit a budget together, and what is the largest
//! README-first loading plan that does?

use context_budget::spec::SpecBudget;
use context_budget::spec::scan::ScanControl;
use mcp_common::{ErrorCode, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use super::AppState;
use super::count_tokens::count_error;
use super::spec_tokens::spec_error;

pub const NAME: &str = "spec-budget";
pub const DESCRIPTION: &str = "Check several specs against one token budget: each spec's cost README-only and with \
its sub-specs, whether all fit, and the largest loading plan that fits (every README first, in the order given; \
then whole specs; then single sub-spec files).";

/// Most specs one call accepts: a plan is for a handful of specs, not a repository.
pub const MAX_SPECS: usize = 200;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpecBudgetParams {
    /// Specs in priority order, in any form spec-tokens accepts: `["59", "066-spec-tokens", "archived/012"]`.
    pub specs: Vec<String>,
    /// The token budget for all of them together.
    pub budget: u64,
    /// Model or encoding to count for (default `gpt-4`).
    pub model: Option<String>,
}

pub fn run(
    state: &AppState,
    params: &SpecBudgetParams,
    control: &dyn ScanControl,
) -> Result<SpecBudget, ToolError> {
    if params.specs.is_empty() || params.specs.len() > MAX_SPECS {
        return Err(ToolError::new(
            ErrorCode::InvalidInput,
            format!(
                "`specs` has {} entries; give between 1 and {MAX_SPECS}",
                params.specs.len()
            ),
            "List the specs to load, most important first, e.g. [\"59\", \"66\", \"69\"].",
        ));
    }
    let model = state
        .counter
        .resolve(params.model.as_deref())
        .map_err(count_error)?;
    state
        .specs
        .spec_budget(&params.specs, params.budget, &model, control)
        .map_err(spec_error)
}
