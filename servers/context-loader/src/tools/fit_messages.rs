//! `fit-messages`: which messages of a chat history fit a model's context window?

use std::path::PathBuf;

use context_budget::{
    DEFAULT_MARGIN, FitOptions, FittedMessages, Message, Strategy, fit_messages, messages_bytes,
};
use mcp_common::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::errors::tool_error;
use crate::service::Service;
use crate::tool::{Call, Rendered, Tool, wire_value};

pub struct FitMessagesTool;

#[derive(Debug, Clone, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct FitMessagesParams {
    /// The history, oldest first (OpenAI chat format).
    #[schemars(schema_with = "mcp_common::schema::shape_only::<Vec<Message>>")]
    #[arg(skip)]
    pub messages: Vec<Message>,
    /// A model (not a bare encoding). Default `gpt-4`.
    #[arg(long, short, help = "Model name (default gpt-4)")]
    pub model: Option<String>,
    /// Share of the window left unused. Default 0.1.
    #[arg(
        long,
        help = "Share of the window to leave unused, in [0, 1) (default 0.10)"
    )]
    pub margin: Option<f64>,
    /// Tokens kept free for the reply.
    #[arg(long, help = "Tokens to keep free for the reply (default 0)")]
    pub reserve_output_tokens: Option<u64>,
    /// Keep the newest (`last`, default) or oldest (`first`) messages.
    #[arg(
        long,
        value_parser = wire_value::<Strategy>(),
        help = "Keep the newest (`last`, default) or the oldest (`first`) messages"
    )]
    pub strategy: Option<Strategy>,
    /// Keep a leading system message. Default true.
    #[arg(
        long = "no-keep-system",
        action = clap::ArgAction::SetFalse,
        help = "Let a leading system message be dropped like any other"
    )]
    pub keep_system: Option<bool>,
    /// JSON file with the messages (command line only).
    #[serde(skip)]
    #[arg(
        help = "JSON file with the messages (an array, or `{\"messages\": [...]}`); `-` or nothing reads stdin."
    )]
    pub file: Option<PathBuf>,
}

impl Tool for FitMessagesTool {
    const NAME: &'static str = "fit-messages";
    const TITLE: &'static str = "Fit messages";
    const DESCRIPTION: &'static str = "Trim a chat history to fit a model's window: whole messages in order, the \
system message kept, tool calls kept with their results. Budget: window*(1-margin) - \
reserve_output_tokens.";
    const COMMAND: &'static str = "fit-messages";
    const ABOUT: &'static str =
        "Trim a chat history (JSON) to a model's window (the `fit-messages` tool)";
    const EXAMPLES: &'static str = "\
echo '[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"hi\"}]' | context-loader fit-messages --model gpt-4o --reserve-output-tokens 4000";

    type Params = FitMessagesParams;
    type Output = FittedMessages;

    async fn call(
        service: &Service,
        params: Self::Params,
        call: Call,
    ) -> Result<FittedMessages, ToolError> {
        let bytes = messages_bytes(&params.messages);
        let options = FitOptions {
            margin: params.margin.unwrap_or(DEFAULT_MARGIN),
            reserve_output_tokens: params.reserve_output_tokens.unwrap_or(0),
            strategy: params.strategy.unwrap_or_default(),
            keep_system: params.keep_system.unwrap_or(true),
        };
        service
            .counting(bytes, &call, move |counter, exact, _| {
                let model = params.model.as_deref();
                fit_messages(counter, &params.messages, model, &options, exact).map_err(tool_error)
            })
            .await
    }

    fn from_command_line(
        params: Self::Params,
        service: &Service,
    ) -> Result<Self::Params, ToolError> {
        let messages =
            crate::input::json_list(service.counter(), params.file.as_deref(), "messages")?;
        Ok(FitMessagesParams { messages, ..params })
    }

    fn warnings(output: &FittedMessages) -> Vec<String> {
        output.warning.iter().cloned().collect()
    }

    fn render(output: FittedMessages) -> Rendered {
        // Its warning goes to stderr with every tool's (see `Tool::warnings`).
        Rendered::line(fit(&output))
    }
}

fn fit(fit: &FittedMessages) -> String {
    let kind = if fit.exact { "exact" } else { "estimate" };
    let total = fit.kept_indices.len() + fit.dropped_count;
    let cost = fit
        .estimated_input_cost_usd
        .map(|usd| format!(", ~${usd:.6} as input"))
        .unwrap_or_default();
    format!(
        "kept {} of {total} messages {}: {} of {} budget tokens ({}, window {}, {kind}){cost}",
        fit.kept_indices.len(),
        index_ranges(&fit.kept_indices),
        fit.total_tokens,
        fit.budget,
        fit.model,
        fit.context_window,
    )
}
/// `[0, 3-7, 9]`: kept indices as runs.
fn index_ranges(indices: &[usize]) -> String {
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let start = indices[i];
        while i + 1 < indices.len() && indices[i + 1] == indices[i] + 1 {
            i += 1;
        }
        runs.push(if indices[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", indices[i])
        });
        i += 1;
    }
    format!("[{}]", runs.join(", "))
}
#[cfg(test)]
mod tests {
    use context_budget::{Message, Role};

    use super::*;

    #[test]
    fn kept_indices_read_as_runs() {
        assert_eq!(index_ranges(&[]), "[]");
        assert_eq!(index_ranges(&[5]), "[5]");
        assert_eq!(index_ranges(&[0, 3, 4, 5, 6, 7, 9]), "[0, 3-7, 9]");
        assert_eq!(index_ranges(&[1, 2]), "[1-2]");
    }
    #[test]
    fn a_fit_says_what_was_kept_of_how_many_and_within_what() {
        let fitted = FittedMessages {
            messages: vec![
                Message::new(Role::System, "s"),
                Message::new(Role::User, "u"),
            ],
            kept_indices: vec![0, 3],
            dropped_count: 2,
            total_tokens: 120,
            budget: 7372,
            context_window: 8192,
            model: "gpt-4".into(),
            requested_model: None,
            encoding: "cl100k_base",
            exact: true,
            method: "exact".into(),
            estimated_input_cost_usd: Some(0.0036),
            warning: None,
        };
        assert_eq!(
            fit(&fitted),
            "kept 2 of 4 messages [0, 3]: 120 of 7372 budget tokens (gpt-4, window 8192, exact), \
             ~$0.003600 as input"
        );
    }
}
