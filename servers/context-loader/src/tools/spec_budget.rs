//! `spec-budget`: do these specs fit a budget together, and what is the largest
//! README-first loading plan that does?

use std::sync::Arc;

use context_budget::spec::SpecBudget;
use mcp_common::{Structured, ToolError, parse_params};
use rmcp::RoleServer;
use rmcp::model::JsonObject;
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::scan::RequestScan;
use crate::service::Service;

pub const NAME: &str = "spec-budget";
pub const DESCRIPTION: &str = "Check several specs against one token budget: each spec's cost README-only and with \
its sub-specs, whether all fit, and the largest loading plan that fits (every README first, in the order given; \
then whole specs; then single sub-spec files).";

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

pub async fn call(
    service: &Service,
    args: JsonObject,
    context: &RequestContext<RoleServer>,
) -> Result<Structured<SpecBudget>, ToolError> {
    let params: SpecBudgetParams = parse_params(NAME, Some(args))?;
    let scan = Arc::new(RequestScan::new(context));
    service.spec_budget(params, scan).await.map(Structured)
}
