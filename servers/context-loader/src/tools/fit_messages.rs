//! `fit-messages`: which messages of a chat history fit a model's context window?

use context_budget::{DEFAULT_MARGIN, FitOptions, FittedMessages, Message, Strategy};
use mcp_common::{Structured, ToolError, parse_params};
use rmcp::RoleServer;
use rmcp::model::JsonObject;
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::service::Service;

pub const NAME: &str = "fit-messages";
pub const DESCRIPTION: &str = "Trim a chat history to fit a model's context window before sending it. Counts each \
message once with the model's chat overhead (OpenAI cookbook rule: exact for OpenAI models), keeps whole \
messages in their original order, keeps the system message first, keeps an assistant tool call and its tool \
results together, and never starts with an orphan tool result. Budget = context_window x (1 - margin) - \
reserve_output_tokens. Returns the kept messages, kept_indices, dropped_count, total_tokens, budget and the \
estimated input cost. Claude counts are estimates unless the server has exact counting enabled.";

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FitMessagesParams {
    /// The history, oldest first: `{role: system|user|assistant|tool, content: string or
    /// [{type: "text", text}], name?, tool_calls?, tool_call_id?}`.
    pub messages: Vec<Message>,
    /// Model name (default `gpt-4`); it must have a context window (not a bare encoding).
    pub model: Option<String>,
    /// Share of the window to leave unused, in [0, 1). Default 0.10.
    pub margin: Option<f64>,
    /// Tokens to keep free for the reply. Default 0.
    pub reserve_output_tokens: Option<u64>,
    /// `last` (default): keep the newest messages; `first`: keep the oldest.
    pub strategy: Option<Strategy>,
    /// Keep a leading system message whatever else is dropped. Default true.
    pub keep_system: Option<bool>,
}

impl FitMessagesParams {
    /// The engine's options, with the documented defaults filled in.
    pub fn options(&self) -> FitOptions {
        FitOptions {
            margin: self.margin.unwrap_or(DEFAULT_MARGIN),
            reserve_output_tokens: self.reserve_output_tokens.unwrap_or(0),
            strategy: self.strategy.unwrap_or_default(),
            keep_system: self.keep_system.unwrap_or(true),
        }
    }
}

pub async fn call(
    service: &Service,
    args: JsonObject,
    context: &RequestContext<RoleServer>,
) -> Result<Structured<FittedMessages>, ToolError> {
    let params: FitMessagesParams = parse_params(NAME, Some(args))?;
    service
        .fit_messages(params, context.ct.clone())
        .await
        .map(Structured)
}
