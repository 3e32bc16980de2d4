//! `count-tokens`: how many tokens is this text for model X?

use context_budget::TokenCount;
use mcp_common::{Structured, ToolError, parse_params};
use rmcp::RoleServer;
use rmcp::model::JsonObject;
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::service::Service;

pub const NAME: &str = "count-tokens";
pub const DESCRIPTION: &str = "Count the tokens of a text for a model before loading it into a context window. \
OpenAI models (cl100k_base / o200k_base) are exact; Claude models are a documented estimate that errs high \
(`exact: false`), or exact from Anthropic's count_tokens API when the server enables it (the text counted as one \
user message; on API failure the estimate comes back with a `warning`). Returns token_count, the model actually used, encoding, exact, method, context_window and the \
estimated input cost.";

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CountTokensParams {
    /// The text to count. Special-token markers such as `<|endoftext|>` count as plain text.
    pub text: String,
    /// Model name (e.g. `gpt-4o`, `gpt-4o-2024-08-06`, `claude-sonnet-4-5`) or encoding
    /// name (`cl100k_base`, `o200k_base`). Default: `gpt-4`. See `list-models`.
    pub model: Option<String>,
}

pub async fn call(
    service: &Service,
    args: JsonObject,
    context: &RequestContext<RoleServer>,
) -> Result<Structured<TokenCount>, ToolError> {
    let params: CountTokensParams = parse_params(NAME, Some(args))?;
    service
        .count_tokens(params, context.ct.clone())
        .await
        .map(Structured)
}
