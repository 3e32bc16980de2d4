//! `count-tokens`: how many tokens is this text for model X?

use std::path::PathBuf;

use context_budget::TokenCount;
use mcp_common::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::errors::tool_error;
use crate::service::Service;
use crate::tool::{Call, Rendered, Tool};

pub struct CountTokensTool;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema, clap::Args)]
pub struct CountTokensParams {
    /// The text to count.
    #[arg(
        default_value = "-",
        hide_default_value = true,
        help = "The text to count; `-` or nothing reads stdin"
    )]
    pub text: String,
    /// Model (`gpt-4o`, `claude-opus-4-7`) or encoding (`o200k_base`); default `gpt-4`.
    #[arg(long, short, help = "Model or encoding name (default gpt-4)")]
    pub model: Option<String>,
    /// Read the text from this file instead (command line only).
    #[serde(skip)]
    #[arg(long, short, conflicts_with = "text")]
    pub file: Option<PathBuf>,
}

impl Tool for CountTokensTool {
    const NAME: &'static str = "count-tokens";
    const TITLE: &'static str = "Count tokens";
    const DESCRIPTION: &'static str = "Count a text's tokens for a model: exact for OpenAI, Gemini and \
open-weight models; for Claude an estimate erring high (`exact: false`) unless the server asks Anthropic. \
Also window share, input cost.";
    const COMMAND: &'static str = "count";
    const ABOUT: &'static str = "Count the tokens of a text (the `count-tokens` tool)";
    const EXAMPLES: &'static str = "\
context-loader count --model gpt-4o \"How many tokens is this?\"\n\
context-loader count --model claude-opus-4-7 --file README.md\n\
cat ARCHITECTURE.md | context-loader count --model gemini-2.5-pro";
    const JSON_HELP: &'static str = "Print the JSON result (errors too) instead of a sentence";

    type Params = CountTokensParams;
    type Output = TokenCount;

    async fn call(
        service: &Service,
        params: Self::Params,
        call: Call,
    ) -> Result<TokenCount, ToolError> {
        service
            .counting(
                params.text.len(),
                &call,
                move |counter, exact, cancelled| {
                    let model = params.model.as_deref();
                    let stop = || cancelled.is_cancelled();
                    counter
                        .count_until(&params.text, model, exact, &stop)
                        .map_err(tool_error)
                },
            )
            .await
    }

    fn from_command_line(
        params: Self::Params,
        service: &Service,
    ) -> Result<Self::Params, ToolError> {
        let text = crate::input::text(
            service.counter(),
            Some(&params.text),
            params.file.as_deref(),
        )?;
        Ok(CountTokensParams { text, ..params })
    }

    fn warnings(output: &TokenCount) -> Vec<String> {
        output.warning.iter().cloned().collect()
    }

    fn render(output: TokenCount) -> Rendered {
        Rendered::line(count(&output))
    }
}

fn count(count: &TokenCount) -> String {
    let kind = if count.exact { "exact" } else { "estimate" };
    let mut line = format!(
        "{} tokens ({}, {}, {kind})",
        count.token_count, count.model, count.encoding
    );
    if let Some(window) = count.context_window {
        let share = count.token_count as f64 * 100.0 / window as f64;
        line.push_str(&format!(" = {share:.2}% of a {window}-token window"));
    }
    if let Some(cost) = count.estimated_input_cost_usd {
        line.push_str(&format!(", ~${cost:.6} as input"));
    }
    line
}
#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use context_budget::spec::SpecStore;
    use context_budget::{
        ExactCountFailure, ExactCounter, Message, ModelEntry, TokenCounter, Tokenizer,
    };

    use super::*;
    use crate::scan::TerminalScan;

    #[test]
    fn a_count_is_one_sentence_with_share_of_window_and_price() {
        let counter = TokenCounter::default();
        let exact = counter.count("hello world", None).expect("counts");
        assert_eq!(
            count(&exact),
            "2 tokens (gpt-4, cl100k_base, exact) = 0.02% of a 8192-token window, ~$0.000060 as input"
        );
        let estimate = counter
            .count("hello world", Some("claude"))
            .expect("counts");
        assert!(
            count(&estimate).starts_with(&format!(
                "{} tokens (claude-opus-4-7, claude_4_7_estimate, estimate) = ",
                estimate.token_count
            )),
            "{}",
            count(&estimate)
        );
        // A bare encoding has neither a window nor a price.
        let encoding = counter
            .count("hello world", Some("o200k_base"))
            .expect("counts");
        assert_eq!(count(&encoding), "2 tokens (o200k_base, o200k_base, exact)");
    }
    /// Counts every Claude text as 7 tokens.
    struct Seven;

    impl ExactCounter for Seven {
        fn provider_model(&self, requested: &str, entry: &ModelEntry) -> Option<String> {
            entry.tokenizer.is_claude().then(|| requested.to_string())
        }
        fn count_messages(&self, _: &str, m: &[Message]) -> Result<u64, ExactCountFailure> {
            Ok(7 * m.len() as u64)
        }
        fn count_text(&self, _: &str, _: &str) -> Result<u64, ExactCountFailure> {
            Ok(7)
        }
        fn encoding(&self) -> &'static str {
            "seven"
        }
        fn method(&self) -> &'static str {
            "exact: seven"
        }
    }

    fn service() -> Service {
        Service::new(TokenCounter::default(), SpecStore::new("specs")).with_exact(Arc::new(Seven))
    }

    fn params(text: &str, model: &str) -> CountTokensParams {
        CountTokensParams {
            text: text.into(),
            model: Some(model.into()),
            file: None,
        }
    }

    /// A call that is already cancelled, or one that never is.
    fn call(cancelled: bool) -> Call {
        let call = Call::command_line(
            Arc::new(TerminalScan::new()),
            context_budget::AnswerLimit::default(),
        );
        if cancelled {
            call.cancelled.cancel();
        }
        call
    }

    #[tokio::test]
    async fn the_exact_pass_runs_on_the_pool_and_a_cancelled_request_stops_asking() {
        let service = service();
        let exact = CountTokensTool::call(&service, params("hello there", "claude"), call(false))
            .await
            .expect("counts");
        assert_eq!((exact.token_count, exact.encoding), (7, "seven"));

        let local = CountTokensTool::call(&service, params("hello there", "claude"), call(true))
            .await
            .expect("counts");
        assert!(!local.exact);
        assert_eq!(local.encoding, "claude_4_7_estimate");
        assert!(
            local
                .warning
                .as_deref()
                .is_some_and(|w| w.contains("cancelled")),
            "{local:?}"
        );
    }

    #[tokio::test]
    async fn a_cancelled_request_stops_counting_a_large_text() {
        let service = Service::new(TokenCounter::default(), SpecStore::new("specs"));
        let text = "Plans change.\nSo do budgets.\n".repeat(120_000);
        let error = CountTokensTool::call(&service, params(&text, "gpt-4o"), call(true))
            .await
            .expect_err("cancelled before the first part");
        assert_eq!(error.code, mcp_common::ErrorCode::Cancelled);
        let count = CountTokensTool::call(&service, params(&text, "gpt-4o"), call(false))
            .await
            .expect("counts");
        assert_eq!(count.token_count, Tokenizer::O200kBase.count(&text));
    }

    #[tokio::test]
    async fn engine_errors_come_back_as_tool_errors() {
        let error = CountTokensTool::call(&service(), params("x", "gpt4o"), call(false))
            .await
            .expect_err("unknown model");
        assert_eq!(error.code, mcp_common::ErrorCode::UnsupportedModel);
    }
}
