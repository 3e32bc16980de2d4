//! `count-tokens`: how many tokens is this text for model X?

use context_budget::{CountError, DEFAULT_MODEL, TokenCount, Tokenizer, usd};
use mcp_common::{ErrorCode, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use super::AppState;
use crate::anthropic::{self, EXACT_ENCODING, EXACT_METHOD};

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

pub fn run(state: &AppState, params: &CountTokensParams) -> Result<TokenCount, ToolError> {
    state
        .counter
        .count(&params.text, params.model.as_deref())
        .map_err(count_error)
}

/// [`run`], then, for a Claude model with exact counting enabled, the API's count of
/// the text as one user message. Any API failure keeps the estimate and says why.
pub async fn run_exact(
    state: &AppState,
    params: &CountTokensParams,
    local: TokenCount,
) -> TokenCount {
    let mut count = local;
    let Some(api) = &state.anthropic else {
        return count;
    };
    let Ok(resolved) = state.counter.resolve(params.model.as_deref()) else {
        return count;
    };
    let Some(spec) = resolved.spec() else {
        return count;
    };
    if spec.tokenizer != Tokenizer::ClaudeEstimate || params.text.is_empty() {
        return count;
    }
    let requested = params.model.as_deref().unwrap_or(DEFAULT_MODEL);
    let body = anthropic::text_request(
        &anthropic::api_model_id(requested, &spec.name),
        &params.text,
    );
    match api.count(&body).await {
        Ok(tokens) => {
            count.token_count = tokens as usize;
            count.exact = true;
            count.encoding = EXACT_ENCODING;
            count.method = EXACT_METHOD;
            count.estimated_input_cost_usd = Some(usd(tokens as usize, spec.input_usd_per_mtok));
        }
        Err(failure) => count.warning = Some(failure.warning()),
    }
    count
}

/// Map the engine's counting errors onto structured tool errors.
pub fn count_error(error: CountError) -> ToolError {
    match error {
        CountError::UnsupportedModel {
            requested,
            did_you_mean,
            available,
        } => {
            let suggestion = match did_you_mean.first() {
                Some(closest) => format!(
                    "Did you mean `{closest}`? Omit `model` to use the default `{DEFAULT_MODEL}`, \
                     or pick one of available_options (list-models shows windows and prices)."
                ),
                None => format!(
                    "Omit `model` to use the default `{DEFAULT_MODEL}`, or pick one of available_options."
                ),
            };
            ToolError::new(
                ErrorCode::UnsupportedModel,
                format!("model `{requested}` is not supported"),
                suggestion,
            )
            .with_detail("requested_model", requested)
            .with_detail("did_you_mean", did_you_mean)
            .with_detail("available_options", available)
        }
        CountError::InputTooLarge { bytes, limit } => ToolError::new(
            ErrorCode::InputTooLarge,
            format!("text is {bytes} bytes; this server counts at most {limit} bytes per call"),
            "Split the text and count the parts separately (counts add up across \
             paragraph boundaries to within a token or two), or raise --max-input-bytes.",
        )
        .with_detail("input_bytes", bytes)
        .with_detail("limit_bytes", limit),
    }
}
