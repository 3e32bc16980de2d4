//! Fitting a chat history into a model's context window.
//!
//! Each message is counted exactly once; selection then walks the counts in one
//! pass, so a 10,000-message history costs 10,000 counts, not the ~50 million a
//! trimmer that re-counts every prefix pays. Selection keeps whole messages in their
//! original order and never breaks an assistant tool call from its results: APIs
//! reject a `tool` message whose call is missing (the orphan-tool-result bug of
//! common trimmers).
//!
//! [`fit_messages`] is the whole tool: when an [`ExactCounter`] counts the model
//! (Claude with Anthropic's API), the locally chosen set is confirmed by the provider
//! and chosen again, smaller, while its exact total is over ([`crate::exact::refine`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::counter::{CountError, TokenCounter, cost};
use crate::exact::{ExactCounter, MAX_EXACT_ROUNDS, Refined, exact_for, refine};
use crate::messages::{
    ChatOverhead, Message, Role, message_tokens, messages_bytes, overhead_method,
};
use crate::{ModelEntry, Tokenizer};

/// Default share of the window left unused, for counting error and provider drift.
pub const DEFAULT_MARGIN: f64 = 0.10;

/// Which end of the history survives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Keep the newest messages (a chat continues from its end).
    #[default]
    Last,
    /// Keep the oldest messages (e.g. a document split into turns).
    First,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitOptions {
    /// Share of the window to leave unused, in [0, 1).
    pub margin: f64,
    /// Tokens kept free for the model's reply.
    pub reserve_output_tokens: u64,
    pub strategy: Strategy,
    /// Keep a leading system message first, whatever else is dropped.
    pub keep_system: bool,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            margin: DEFAULT_MARGIN,
            reserve_output_tokens: 0,
            strategy: Strategy::Last,
            keep_system: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("margin must be a number in [0, 1), got {0}")]
    InvalidMargin(f64),
    #[error(
        "reserve_output_tokens ({reserve}) leaves no room for input in {usable} usable tokens \
         (window {context_window} minus the margin)"
    )]
    ReserveTooLarge {
        reserve: u64,
        usable: u64,
        context_window: u64,
    },
    #[error("the system message alone is {system_tokens} tokens, over the budget of {budget}")]
    ContextOverflow { system_tokens: u64, budget: u64 },
    #[error("`{name}` is an encoding, not a model: it has no context window")]
    NoContextWindow { name: String },
    #[error("no selection confirmed within {budget} tokens after {rounds} exact counts")]
    NotConfirmed { budget: u64, rounds: usize },
    /// The model is unknown or the input over the limit.
    #[error(transparent)]
    Count(#[from] CountError),
}

/// Input tokens allowed: `floor(window × (1 − margin)) − reserve_output_tokens`.
pub fn input_budget(context_window: u64, options: &FitOptions) -> Result<u64, FitError> {
    let margin = options.margin;
    if !(0.0..1.0).contains(&margin) {
        return Err(FitError::InvalidMargin(margin));
    }
    let usable = (context_window as f64 * (1.0 - margin)).floor() as u64;
    match usable.checked_sub(options.reserve_output_tokens) {
        Some(budget) if budget > 0 => Ok(budget),
        _ => Err(FitError::ReserveTooLarge {
            reserve: options.reserve_output_tokens,
            usable,
            context_window,
        }),
    }
}

/// The messages chosen and what they cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Indices into the input, ascending.
    pub kept_indices: Vec<usize>,
    /// Kept messages' tokens plus the reply priming (0 when nothing is kept).
    pub total_tokens: u64,
}

/// A run of messages that is kept or dropped as a whole.
#[derive(Debug, Clone, Copy)]
struct Group {
    start: usize,
    end: usize,
    tokens: u64,
    /// A tool result whose call is not in the history: never sent first.
    orphan_tool_result: bool,
}

/// Split messages into atomic groups: an assistant message with `tool_calls` plus
/// the `tool` messages right after it that answer those calls; every other message
/// alone. A `tool` message not attached this way is an orphan.
fn groups(messages: &[Message], counts: &[u64], first: usize) -> Vec<Group> {
    let mut groups = Vec::new();
    let mut i = first;
    while i < messages.len() {
        let start = i;
        let mut tokens = counts[i];
        let message = &messages[i];
        i += 1;
        if message.role == Role::Assistant && !message.tool_calls.is_empty() {
            while i < messages.len() && answers(&messages[i], message) {
                tokens += counts[i];
                i += 1;
            }
        }
        groups.push(Group {
            start,
            end: i,
            tokens,
            orphan_tool_result: message.role == Role::Tool,
        });
    }
    groups
}

/// Whether `result` is a tool result for one of `call`'s tool calls (a result without
/// an id is taken to answer the call right before it).
fn answers(result: &Message, call: &Message) -> bool {
    result.role == Role::Tool
        && result
            .tool_call_id
            .as_ref()
            .is_none_or(|id| call.tool_calls.iter().any(|c| &c.id == id))
}

/// Choose messages within `budget` given each message's token count (`counts[i]` for
/// `messages[i]`) and the reply priming. One pass over the groups; no re-counting.
pub fn select(
    messages: &[Message],
    counts: &[u64],
    reply_priming: u64,
    budget: u64,
    options: &FitOptions,
) -> Result<Selection, FitError> {
    debug_assert_eq!(messages.len(), counts.len());
    if messages.is_empty() {
        return Ok(Selection {
            kept_indices: Vec::new(),
            total_tokens: 0,
        });
    }
    let pinned_system = options.keep_system && messages[0].role == Role::System;
    let mut used = reply_priming;
    if pinned_system {
        used += counts[0];
        if used > budget {
            return Err(FitError::ContextOverflow {
                system_tokens: used,
                budget,
            });
        }
    }
    let groups = groups(messages, counts, usize::from(pinned_system));
    let fits = |used: u64, group: &Group| used + group.tokens <= budget;

    // The kept groups form one contiguous run: a gap would splice unrelated turns.
    let (from, to) = match options.strategy {
        Strategy::Last => {
            let mut from = groups.len();
            while from > 0 && fits(used, &groups[from - 1]) {
                from -= 1;
                used += groups[from].tokens;
            }
            // The run must not open with a tool result whose call was dropped.
            while from < groups.len() && groups[from].orphan_tool_result {
                used -= groups[from].tokens;
                from += 1;
            }
            (from, groups.len())
        }
        Strategy::First => {
            let mut from = 0;
            while from < groups.len() && groups[from].orphan_tool_result {
                from += 1;
            }
            let mut to = from;
            while to < groups.len() && fits(used, &groups[to]) {
                used += groups[to].tokens;
                to += 1;
            }
            (from, to)
        }
    };

    let mut kept_indices: Vec<usize> = Vec::new();
    if pinned_system {
        kept_indices.push(0);
    }
    for group in &groups[from..to] {
        kept_indices.extend(group.start..group.end);
    }
    let total_tokens = if kept_indices.is_empty() { 0 } else { used };
    Ok(Selection {
        kept_indices,
        total_tokens,
    })
}

/// Every message's tokens under `tokenizer`'s chat rule, each counted once.
pub fn count_messages(messages: &[Message], tokenizer: Tokenizer) -> Vec<u64> {
    messages
        .iter()
        .map(|m| message_tokens(m, tokenizer))
        .collect()
}

/// The whole `fit-messages`: check the input size, resolve `model` (default
/// [`DEFAULT_MODEL`](crate::DEFAULT_MODEL)), count every message once, select within the budget — and when
/// `exact` counts that model, confirm the selection with the provider and select
/// again while its total is over (see [`refine`]). May block on `exact`.
pub fn fit_messages(
    counter: &TokenCounter,
    messages: &[Message],
    model: Option<&str>,
    options: &FitOptions,
    exact: Option<&dyn ExactCounter>,
) -> Result<FittedMessages, FitError> {
    counter.check_messages(messages.len())?;
    counter.check_input(messages_bytes(messages))?;
    let resolved = counter.resolve(model)?;
    let Some(entry) = resolved.entry() else {
        return Err(FitError::NoContextWindow {
            name: resolved.name().to_string(),
        });
    };
    let budget = input_budget(entry.context_window, options)?;
    let tokenizer = entry.tokenizer;
    let counts = count_messages(messages, tokenizer);
    let priming = ChatOverhead::for_tokenizer(tokenizer).reply_priming;
    let select_within =
        |local_budget: u64| select(messages, &counts, priming, local_budget, options);
    let fitted = Fitted {
        entry,
        requested_model: resolved.requested_if_other(),
        budget,
        messages,
    };

    let Some((exact, id)) = exact_for(exact, &resolved) else {
        let selection = select_within(budget)?;
        return Ok(fitted.local(selection, None));
    };
    let refined = refine(
        budget,
        select_within,
        |selection| selection.total_tokens,
        |selection| exact.count_messages(&id, &kept(messages, &selection.kept_indices)),
    )?;
    match refined {
        Refined::Exact { value, total } => Ok(fitted.exact(value, total, exact)),
        Refined::Estimated { value, warning } => Ok(fitted.local(value, Some(warning))),
        Refined::NotConfirmed => Err(FitError::NotConfirmed {
            budget,
            rounds: MAX_EXACT_ROUNDS,
        }),
    }
}

fn kept(messages: &[Message], indices: &[usize]) -> Vec<Message> {
    indices.iter().map(|&i| messages[i].clone()).collect()
}

/// What every [`FittedMessages`] of one call shares.
struct Fitted<'a> {
    entry: &'a ModelEntry,
    requested_model: Option<String>,
    budget: u64,
    messages: &'a [Message],
}

impl Fitted<'_> {
    /// A selection counted by the local tokenizer and chat rule.
    fn local(&self, selection: Selection, warning: Option<String>) -> FittedMessages {
        let tokenizer = self.entry.tokenizer;
        self.output(
            selection.kept_indices,
            selection.total_tokens,
            (
                tokenizer.name(),
                tokenizer.is_exact(),
                overhead_method(tokenizer),
            ),
            warning,
        )
    }

    /// A selection whose total the provider counted.
    fn exact(
        &self,
        selection: Selection,
        total: u64,
        counter: &dyn ExactCounter,
    ) -> FittedMessages {
        self.output(
            selection.kept_indices,
            total,
            (counter.encoding(), true, counter.method()),
            None,
        )
    }

    fn output(
        &self,
        kept_indices: Vec<usize>,
        total_tokens: u64,
        (encoding, exact, method): (&'static str, bool, &'static str),
        warning: Option<String>,
    ) -> FittedMessages {
        FittedMessages {
            messages: kept(self.messages, &kept_indices),
            dropped_count: self.messages.len() - kept_indices.len(),
            kept_indices,
            total_tokens,
            budget: self.budget,
            context_window: self.entry.context_window,
            model: self.entry.name.clone(),
            requested_model: self.requested_model.clone(),
            encoding,
            exact,
            method: method.to_string(),
            estimated_input_cost_usd: cost(total_tokens as usize, self.entry),
            warning,
        }
    }
}

/// The output of `fit-messages`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FittedMessages {
    /// The kept messages, in their original order.
    pub messages: Vec<Message>,
    /// Their positions in the input.
    pub kept_indices: Vec<usize>,
    pub dropped_count: usize,
    /// Tokens of the kept messages with chat overhead and reply priming.
    pub total_tokens: u64,
    /// Input tokens allowed: window × (1 − margin) − reserve_output_tokens.
    pub budget: u64,
    pub context_window: u64,
    /// The catalog model used.
    pub model: String,
    /// The name asked for, when it is not `model` (a dated id, an alias).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_model: Option<String>,
    pub encoding: &'static str,
    /// True when `total_tokens` equals what the provider bills.
    pub exact: bool,
    /// How `total_tokens` was produced.
    pub method: String,
    /// `total_tokens` at the model's input price; absent without a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_input_cost_usd: Option<f64>,
    /// Why an exact count was not used (or anything else worth knowing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{FunctionCall, ToolCall};

    fn text(role: Role, text: &str) -> Message {
        Message::new(role, text)
    }

    fn call(ids: &[&str]) -> Message {
        Message {
            role: Role::Assistant,
            content: None,
            name: None,
            tool_calls: ids
                .iter()
                .map(|id| ToolCall {
                    id: id.to_string(),
                    kind: "function".into(),
                    function: FunctionCall {
                        name: "lookup".into(),
                        arguments: "{}".into(),
                    },
                })
                .collect(),
            tool_call_id: None,
        }
    }

    fn result(id: &str) -> Message {
        Message {
            tool_call_id: Some(id.to_string()),
            ..text(Role::Tool, "ok")
        }
    }

    /// A counter whose catalog has one model, `small`, with a `window`-token window.
    fn window_of(window: u64, tokenizer: Tokenizer) -> TokenCounter {
        let json = format!(
            r#"{{"as_of": "2026-01-01", "models": [{{"name": "small", "family": "test",
            "tokenizer": "{}", "context_window": {window}, "max_output_tokens": 100,
            "input_usd_per_mtok": 1.0, "output_usd_per_mtok": 1.0}}]}}"#,
            tokenizer.name()
        );
        let catalog = crate::Catalog::builtin()
            .with_overrides(&json, "test")
            .expect("valid catalog");
        TokenCounter::new(std::sync::Arc::new(catalog), crate::DEFAULT_MAX_INPUT_BYTES)
    }

    /// Select with a fixed count per message, to reason about budgets by hand.
    fn pick(messages: &[Message], counts: &[u64], budget: u64, options: FitOptions) -> Vec<usize> {
        select(messages, counts, 0, budget, &options)
            .expect("fits")
            .kept_indices
    }

    #[test]
    fn budget_is_window_minus_margin_minus_reserve() {
        let options = FitOptions::default();
        assert_eq!(input_budget(8192, &options), Ok(7372)); // floor(8192 * 0.9)
        let reserve = FitOptions {
            reserve_output_tokens: 1000,
            margin: 0.0,
            ..options
        };
        assert_eq!(input_budget(8192, &reserve), Ok(7192));
        let quarter = FitOptions {
            margin: 0.25,
            reserve_output_tokens: 24,
            ..options
        };
        assert_eq!(input_budget(1000, &quarter), Ok(726));
        for bad in [-0.1, 1.0, 1.5, f64::NAN] {
            let options = FitOptions {
                margin: bad,
                ..options
            };
            assert!(matches!(
                input_budget(1000, &options),
                Err(FitError::InvalidMargin(_))
            ));
        }
        let all = FitOptions {
            reserve_output_tokens: 900,
            ..options
        };
        assert_eq!(
            input_budget(1000, &all),
            Err(FitError::ReserveTooLarge {
                reserve: 900,
                usable: 900,
                context_window: 1000
            })
        );
    }

    #[test]
    fn last_keeps_the_newest_whole_messages_and_the_system_message() {
        let messages = [
            text(Role::System, "s"),
            text(Role::User, "a"),
            text(Role::Assistant, "b"),
            text(Role::User, "c"),
            text(Role::Assistant, "d"),
        ];
        let counts = [10, 10, 10, 10, 10];
        assert_eq!(
            pick(&messages, &counts, 35, FitOptions::default()),
            [0, 3, 4]
        );
        assert_eq!(
            pick(&messages, &counts, 50, FitOptions::default()),
            [0, 1, 2, 3, 4]
        );
        let no_system = FitOptions {
            keep_system: false,
            ..FitOptions::default()
        };
        assert_eq!(pick(&messages, &counts, 35, no_system), [2, 3, 4]);
        let first = FitOptions {
            strategy: Strategy::First,
            ..FitOptions::default()
        };
        assert_eq!(pick(&messages, &counts, 35, first), [0, 1, 2]);
    }

    #[test]
    fn selection_is_contiguous_even_when_an_older_message_would_fit() {
        let messages = [
            text(Role::User, "small"),
            text(Role::Assistant, "huge"),
            text(Role::User, "new"),
        ];
        // "small" would fit after "huge" is skipped, but that would splice turns.
        assert_eq!(
            pick(&messages, &[1, 100, 5], 10, FitOptions::default()),
            [2]
        );
    }

    #[test]
    fn tool_calls_and_their_results_are_kept_or_dropped_together() {
        let messages = [
            text(Role::User, "q"),
            call(&["c1", "c2"]),
            result("c1"),
            result("c2"),
            text(Role::Assistant, "answer"),
        ];
        let counts = [5, 10, 10, 10, 5];
        // 35 fits the group (30) + answer (5): the whole group, not a tail of it.
        assert_eq!(
            pick(&messages, &counts, 35, FitOptions::default()),
            [1, 2, 3, 4]
        );
        // 30 cannot hold the group with the answer: never results without their call.
        assert_eq!(pick(&messages, &counts, 30, FitOptions::default()), [4]);
        let first = FitOptions {
            strategy: Strategy::First,
            ..FitOptions::default()
        };
        assert_eq!(pick(&messages, &counts, 20, first), [0]);
        assert_eq!(pick(&messages, &counts, 35, first), [0, 1, 2, 3]);
    }

    #[test]
    fn selection_never_starts_with_an_orphan_tool_result() {
        // History already trimmed by someone else: it opens with results of lost calls.
        let messages = [
            text(Role::System, "s"),
            result("gone"),
            result("gone2"),
            text(Role::User, "q"),
            text(Role::Assistant, "a"),
        ];
        let counts = [1, 1, 1, 1, 1];
        assert_eq!(
            pick(&messages, &counts, 100, FitOptions::default()),
            [0, 3, 4]
        );
        let first = FitOptions {
            strategy: Strategy::First,
            ..FitOptions::default()
        };
        assert_eq!(pick(&messages, &counts, 100, first), [0, 3, 4]);
        // A result whose call id does not match the preceding call is an orphan too.
        let mismatched = [call(&["c1"]), result("other"), text(Role::User, "q")];
        let kept = pick(&mismatched, &[1, 1, 1], 2, FitOptions::default());
        assert_eq!(kept, [2]);
    }

    #[test]
    fn system_message_over_budget_is_a_context_overflow_with_the_numbers() {
        let messages = [text(Role::System, "s"), text(Role::User, "u")];
        assert_eq!(
            select(&messages, &[50, 1], 3, 40, &FitOptions::default()),
            Err(FitError::ContextOverflow {
                system_tokens: 53,
                budget: 40
            })
        );
    }

    #[test]
    fn totals_include_overhead_and_priming_and_stay_within_budget() {
        let messages: Vec<Message> = (0..200)
            .map(|i| {
                let role = if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                };
                text(role, &format!("메시지 {i}: the quick brown fox {i}"))
            })
            .collect();
        let options = FitOptions {
            reserve_output_tokens: 100,
            ..FitOptions::default()
        };
        for tokenizer in [Tokenizer::Cl100kBase, Tokenizer::ClaudeEstimate] {
            let fitted = fit_messages(
                &window_of(2000, tokenizer),
                &messages,
                Some("small"),
                &options,
                None,
            )
            .expect("fits");
            let budget = fitted.budget;
            assert_eq!(budget, 1700);
            assert_eq!(
                fitted.total_tokens,
                crate::messages::conversation_tokens(&fitted.messages, tokenizer),
                "{tokenizer:?}"
            );
            assert!(fitted.total_tokens <= budget);
            assert_eq!(fitted.kept_indices.last(), Some(&199));
            assert_eq!(fitted.dropped_count, 200 - fitted.kept_indices.len());
            assert_eq!(fitted.exact, tokenizer.is_exact());
            // Greedy: the next older message would not have fitted.
            let first = fitted.kept_indices[0];
            let next = message_tokens(&messages[first - 1], tokenizer);
            assert!(fitted.total_tokens + next > budget, "{tokenizer:?}");
        }
    }

    /// A provider charging `charge(number of messages)`, or failing on `None`.
    struct Provider {
        charge: fn(u64) -> Option<u64>,
        asked: std::sync::Mutex<Vec<usize>>,
    }

    impl ExactCounter for Provider {
        fn provider_model(&self, requested: &str, entry: &ModelEntry) -> Option<String> {
            entry.tokenizer.is_claude().then(|| requested.to_string())
        }
        fn count_messages(
            &self,
            _model: &str,
            messages: &[Message],
        ) -> Result<u64, crate::ExactCountFailure> {
            self.asked.lock().expect("lock").push(messages.len());
            (self.charge)(messages.len() as u64)
                .ok_or_else(|| crate::ExactCountFailure::new("provider offline"))
        }
        fn count_text(&self, _model: &str, _text: &str) -> Result<u64, crate::ExactCountFailure> {
            unreachable!("fit counts messages")
        }
        fn encoding(&self) -> &'static str {
            "provider_count"
        }
        fn method(&self) -> &'static str {
            "exact: provider"
        }
    }

    fn provider(charge: fn(u64) -> Option<u64>) -> Provider {
        Provider {
            charge,
            asked: Default::default(),
        }
    }

    #[test]
    fn an_exact_counter_over_budget_makes_the_selection_shrink_until_it_fits() {
        let messages: Vec<Message> = (0..12)
            .map(|i| text(Role::User, &format!("turn {i}")))
            .collect();
        // 200000 × 0.9 − 176000 = 4000; the provider charges 1000 per message.
        let options = FitOptions {
            reserve_output_tokens: 176_000,
            ..FitOptions::default()
        };
        let exact = provider(|n| Some(1000 * n));
        let counter = TokenCounter::default();
        let fitted = fit_messages(
            &counter,
            &messages,
            Some("claude-sonnet-4-5"),
            &options,
            Some(&exact),
        )
        .expect("fits");
        assert_eq!(fitted.budget, 4000);
        assert!(fitted.exact);
        assert_eq!(fitted.encoding, "provider_count");
        assert_eq!(fitted.method, "exact: provider");
        assert_eq!(fitted.total_tokens, 1000 * fitted.kept_indices.len() as u64);
        assert!(fitted.total_tokens <= 4000 && !fitted.kept_indices.is_empty());
        assert_eq!(fitted.kept_indices.last(), Some(&11));
        let asked = exact.asked.lock().expect("lock").clone();
        assert_eq!(
            asked.first(),
            Some(&12),
            "the local selection is asked first"
        );
        assert!(
            asked.len() >= 2 && asked.len() <= MAX_EXACT_ROUNDS,
            "{asked:?}"
        );

        // Local models never ask; a failing provider leaves the estimate and says why.
        let openai = fit_messages(
            &counter,
            &messages,
            Some("gpt-4o"),
            &FitOptions::default(),
            Some(&exact),
        )
        .expect("fits");
        assert!(openai.exact && openai.warning.is_none());
        assert_eq!(exact.asked.lock().expect("lock").len(), asked.len());
        let offline = provider(|_| None);
        let estimated = fit_messages(
            &counter,
            &messages,
            Some("claude-sonnet-4-5"),
            &FitOptions::default(),
            Some(&offline),
        )
        .expect("fits");
        assert!(!estimated.exact);
        assert_eq!(estimated.encoding, "claude_estimate");
        assert_eq!(estimated.warning.as_deref(), Some("provider offline"));
        assert_eq!(estimated.kept_indices.len(), 12);
    }

    #[test]
    fn a_provider_that_never_confirms_and_an_encoding_are_typed_errors() {
        let messages: Vec<Message> = (0..50)
            .map(|i| text(Role::User, &format!("turn {i}")))
            .collect();
        let options = FitOptions {
            reserve_output_tokens: 179_000,
            ..FitOptions::default()
        };
        // Always one token over, however few messages are sent.
        let greedy = provider(|_| Some(1001));
        assert_eq!(
            fit_messages(
                &TokenCounter::default(),
                &messages,
                Some("claude-sonnet-4-5"),
                &options,
                Some(&greedy)
            ),
            Err(FitError::NotConfirmed {
                budget: 1000,
                rounds: MAX_EXACT_ROUNDS
            })
        );
        assert_eq!(
            fit_messages(
                &TokenCounter::default(),
                &messages,
                Some("cl100k_base"),
                &options,
                None
            ),
            Err(FitError::NoContextWindow {
                name: "cl100k_base".into()
            })
        );
        let tiny = TokenCounter::new(std::sync::Arc::new(crate::Catalog::builtin().clone()), 1);
        assert!(matches!(
            fit_messages(&tiny, &messages, None, &options, None),
            Err(FitError::Count(CountError::Limit(
                crate::LimitError::TextTooLarge { limit: 1, .. }
            )))
        ));
    }

    #[test]
    fn empty_history_and_nothing_fitting_are_not_errors() {
        assert_eq!(
            select(&[], &[], 3, 10, &FitOptions::default()),
            Ok(Selection {
                kept_indices: vec![],
                total_tokens: 0
            })
        );
        let huge = [text(Role::User, "u")];
        assert_eq!(
            select(&huge, &[100], 3, 10, &FitOptions::default()),
            Ok(Selection {
                kept_indices: vec![],
                total_tokens: 0
            })
        );
    }
}
