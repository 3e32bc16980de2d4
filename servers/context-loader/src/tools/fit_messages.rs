//! `fit-messages`: which messages of a chat history fit a model's context window?

use context_budget::{
    ChatOverhead, DEFAULT_MARGIN, DEFAULT_MODEL, FitError, FitOptions, FittedMessages, Message,
    Selection, Strategy, Tokenizer, count_messages, input_budget, overhead_method, select, usd,
};
use mcp_common::{ErrorCode, ToolError, run_blocking};
use schemars::JsonSchema;
use serde::Deserialize;

use super::AppState;
use super::count_tokens::count_error;
use crate::anthropic::{self, EXACT_ENCODING, EXACT_METHOD};

pub const NAME: &str = "fit-messages";
pub const DESCRIPTION: &str = "Trim a chat history to fit a model's context window before sending it. Counts each \
message once with the model's chat overhead (OpenAI cookbook rule: exact for OpenAI models), keeps whole \
messages in their original order, keeps the system message first, keeps an assistant tool call and its tool \
results together, and never starts with an orphan tool result. Budget = context_window x (1 - margin) - \
reserve_output_tokens. Returns the kept messages, kept_indices, dropped_count, total_tokens, budget and the \
estimated input cost. Claude counts are estimates unless the server has exact counting enabled.";

/// Texts above this many bytes are counted on the blocking pool.
const INLINE_BYTES: usize = 64 * 1024;
/// API confirmations of a Claude selection before giving up (each shrinks it).
const MAX_CONFIRM_ROUNDS: usize = 4;

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

/// Everything the selection needs, resolved from the parameters.
struct Plan {
    model: String,
    api_model: String,
    tokenizer: Tokenizer,
    context_window: u64,
    input_usd_per_mtok: f64,
    budget: u64,
    options: FitOptions,
}

fn plan(state: &AppState, params: &FitMessagesParams) -> Result<Plan, ToolError> {
    let bytes: usize = params.messages.iter().map(Message::text_bytes).sum();
    let limit = state.counter.max_input_bytes();
    if bytes > limit {
        return Err(count_error(context_budget::CountError::InputTooLarge {
            bytes,
            limit,
        }));
    }
    let resolved = state
        .counter
        .resolve(params.model.as_deref())
        .map_err(count_error)?;
    let Some(spec) = resolved.spec() else {
        return Err(ToolError::new(
            ErrorCode::InvalidInput,
            format!(
                "`{}` is an encoding, not a model: it has no context window",
                resolved.name()
            ),
            "Name a model (e.g. `gpt-4o` or `claude-sonnet-4-5`); list-models shows their windows.",
        ));
    };
    let options = FitOptions {
        margin: params.margin.unwrap_or(DEFAULT_MARGIN),
        reserve_output_tokens: params.reserve_output_tokens.unwrap_or(0),
        strategy: params.strategy.unwrap_or_default(),
        keep_system: params.keep_system.unwrap_or(true),
    };
    let budget = input_budget(spec.context_window, &options).map_err(fit_error)?;
    let requested = params.model.as_deref().unwrap_or(DEFAULT_MODEL);
    Ok(Plan {
        model: spec.name.clone(),
        api_model: anthropic::api_model_id(requested, &spec.name),
        tokenizer: spec.tokenizer,
        context_window: spec.context_window,
        input_usd_per_mtok: spec.input_usd_per_mtok,
        budget,
        options,
    })
}

pub async fn run(state: &AppState, params: FitMessagesParams) -> Result<FittedMessages, ToolError> {
    let plan = plan(state, &params)?;
    let tokenizer = plan.tokenizer;
    let bytes: usize = params.messages.iter().map(Message::text_bytes).sum();
    let (messages, counts) = if bytes <= INLINE_BYTES {
        let counts = count_messages(&params.messages, tokenizer);
        (params.messages, counts)
    } else {
        let messages = params.messages;
        run_blocking(move || {
            let counts = count_messages(&messages, tokenizer);
            Ok((messages, counts))
        })
        .await?
    };
    let priming = ChatOverhead::for_tokenizer(tokenizer).reply_priming;
    let local =
        select(&messages, &counts, priming, plan.budget, &plan.options).map_err(fit_error)?;

    let exact_api = state
        .anthropic
        .as_ref()
        .filter(|_| tokenizer == Tokenizer::ClaudeEstimate);
    let Some(api) = exact_api else {
        return Ok(shape(
            &plan,
            &messages,
            local,
            tokenizer.is_exact(),
            overhead_method(tokenizer).into(),
            None,
        ));
    };

    // Claude with exact counting: select with local counts, confirm the chosen set with
    // one API call, and if the exact total is over budget, shrink the local budget by
    // the overshoot (scaled to local units) and select again — at most a few rounds.
    let mut selection = local;
    for _ in 0..MAX_CONFIRM_ROUNDS {
        if selection.kept_indices.is_empty() {
            return Ok(shape(
                &plan,
                &messages,
                selection,
                true,
                EXACT_METHOD.into(),
                None,
            ));
        }
        let kept: Vec<Message> = selection
            .kept_indices
            .iter()
            .map(|&i| messages[i].clone())
            .collect();
        let body = anthropic::messages_request(&plan.api_model, &kept);
        match api.count(&body).await {
            Err(failure) => {
                let method = overhead_method(tokenizer).into();
                return Ok(shape(
                    &plan,
                    &messages,
                    selection,
                    false,
                    method,
                    Some(failure.warning()),
                ));
            }
            Ok(exact) if exact <= plan.budget => {
                let confirmed = Selection {
                    total_tokens: exact,
                    ..selection
                };
                return Ok(shape(
                    &plan,
                    &messages,
                    confirmed,
                    true,
                    EXACT_METHOD.into(),
                    None,
                ));
            }
            Ok(exact) => {
                let over = exact - plan.budget;
                let scaled =
                    (over as f64 * selection.total_tokens as f64 / exact as f64).ceil() as u64;
                // Take the overshoot, in local units, off what this selection used.
                let local_budget = selection.total_tokens.saturating_sub(scaled.max(1));
                selection = select(&messages, &counts, priming, local_budget, &plan.options)
                    .map_err(fit_error)?;
            }
        }
    }
    Err(ToolError::new(
        ErrorCode::ContextOverflow,
        format!(
            "no selection confirmed within {} tokens after {MAX_CONFIRM_ROUNDS} exact counts",
            plan.budget
        ),
        "Raise the budget (smaller margin or reserve_output_tokens) or send fewer, shorter messages.",
    )
    .with_detail("budget", plan.budget))
}

fn shape(
    plan: &Plan,
    messages: &[Message],
    selection: Selection,
    exact: bool,
    method: String,
    warning: Option<String>,
) -> FittedMessages {
    let kept: Vec<Message> = selection
        .kept_indices
        .iter()
        .map(|&i| messages[i].clone())
        .collect();
    FittedMessages {
        dropped_count: messages.len() - kept.len(),
        messages: kept,
        kept_indices: selection.kept_indices,
        total_tokens: selection.total_tokens,
        budget: plan.budget,
        context_window: plan.context_window,
        model: plan.model.clone(),
        // A total confirmed by the API used no local tokenizer.
        encoding: if exact && !plan.tokenizer.is_exact() {
            EXACT_ENCODING
        } else {
            plan.tokenizer.name()
        },
        exact,
        method,
        estimated_input_cost_usd: usd(selection.total_tokens as usize, plan.input_usd_per_mtok),
        warning,
    }
}

pub fn fit_error(error: FitError) -> ToolError {
    match error {
        FitError::InvalidMargin(margin) => ToolError::new(
            ErrorCode::InvalidInput,
            error.to_string(),
            "Send margin as a fraction in [0, 1), e.g. 0.1 to leave 10 % of the window unused.",
        )
        .with_detail("margin", margin),
        FitError::ReserveTooLarge {
            reserve,
            usable,
            context_window,
        } => ToolError::new(
            ErrorCode::InvalidInput,
            error.to_string(),
            "Lower reserve_output_tokens or the margin, or pick a model with a larger window.",
        )
        .with_detail("reserve_output_tokens", reserve)
        .with_detail("usable_tokens", usable)
        .with_detail("context_window", context_window),
        FitError::ContextOverflow {
            system_tokens,
            budget,
        } => ToolError::new(
            ErrorCode::ContextOverflow,
            error.to_string(),
            "Shorten the system message, lower the margin or reserve_output_tokens, pick a model \
             with a larger window, or pass keep_system: false to let it be dropped.",
        )
        .with_detail("system_tokens", system_tokens)
        .with_detail("budget", budget),
    }
}
