//! `list-models`: the catalog, with windows, prices and whether counts are exact.

use context_budget::ModelListing;
use mcp_common::{Structured, ToolError, parse_params};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::service::Service;

pub const NAME: &str = "list-models";
pub const DESCRIPTION: &str = "List the models this server knows: encoding, whether counts are exact, context \
window, max output tokens and USD per 1M input/output tokens, with the date of the figures. Filter by a name or \
family prefix (e.g. `claude`, `gpt-4.1`, `o-series`).";

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListModelsParams {
    /// Case-insensitive prefix of a model name or family, e.g. `claude-4.5` or `gpt-4o`.
    pub filter: Option<String>,
}

pub async fn call(
    service: &Service,
    args: JsonObject,
) -> Result<Structured<ModelListing>, ToolError> {
    let params: ListModelsParams = parse_params(NAME, Some(args))?;
    service.list_models(params).await.map(Structured)
}
