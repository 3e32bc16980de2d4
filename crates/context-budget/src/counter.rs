//! Counting with a model name and an input limit: the engine behind `count-tokens`.

use std::sync::Arc;

use serde::Serialize;

use crate::exact::{ExactCounter, exact_for};
use crate::limits::{InputLimits, LimitError, check_count, check_input_bytes, check_name};
use crate::{Catalog, DEFAULT_MODEL, ModelEntry, ResolvedModel, closest_names};

/// The answer to "how many tokens is this text for model X?".
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TokenCount {
    pub token_count: usize,
    /// The catalog model actually used (canonical name), or the encoding name.
    pub model: String,
    /// The name asked for, when it is not `model` (a dated id, an alias): both are
    /// shown, so a swap is never silent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_model: Option<String>,
    /// The tokenizer: `cl100k_base` or `o200k_base` (OpenAI), `gemma3` (Gemini's
    /// Gemma 3 vocabulary), `huggingface` (an open-weight model's `tokenizer.json`),
    /// `claude_estimate` or `claude_4_7_estimate` (Claude), `estimate` (tokenizer not
    /// known here); `anthropic_count_tokens` when the server counted through
    /// Anthropic's API.
    pub encoding: &'static str,
    /// True when the count equals what the provider bills (or the model's own
    /// tokenizer gives); false for the estimates.
    pub exact: bool,
    /// How the count was produced (and, for estimates, how it errs).
    pub method: &'static str,
    /// The model's context window; absent for a bare encoding name.
    pub context_window: Option<u64>,
    pub max_output_tokens: Option<u64>,
    /// `token_count` at the model's list price for input tokens.
    pub estimated_input_cost_usd: Option<f64>,
    /// Set when an exact count was asked for but not obtained, saying why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CountError {
    #[error("model `{requested}` is not supported")]
    UnsupportedModel {
        requested: String,
        /// Closest supported names, best first (at most five; `list-models` lists
        /// every one: a catalog of 250 names in an error cost a model ~2,300 tokens).
        did_you_mean: Vec<String>,
    },
    /// The model name is empty (or only spaces): nothing to resolve or suggest from.
    #[error("the model name is empty")]
    EmptyModel,
    /// The input is over one of the counter's [`InputLimits`].
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// The caller stopped wanting the answer (request cancelled or timed out).
    #[error("the count was cancelled")]
    Cancelled,
}

/// Counts tokens for models of one catalog, refusing inputs over a size limit.
#[derive(Debug, Clone)]
pub struct TokenCounter {
    catalog: Arc<Catalog>,
    limits: InputLimits,
}

impl Default for TokenCounter {
    fn default() -> Self {
        TokenCounter::with_limits(Arc::new(Catalog::builtin().clone()), InputLimits::default())
    }
}

impl TokenCounter {
    /// A counter with the default [`InputLimits`] except the text size.
    pub fn new(catalog: Arc<Catalog>, max_input_bytes: usize) -> Self {
        TokenCounter::with_limits(
            catalog,
            InputLimits {
                max_input_bytes,
                ..InputLimits::default()
            },
        )
    }

    pub fn with_limits(catalog: Arc<Catalog>, limits: InputLimits) -> Self {
        TokenCounter { catalog, limits }
    }

    pub fn limits(&self) -> &InputLimits {
        &self.limits
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn max_input_bytes(&self) -> usize {
        self.limits.max_input_bytes
    }

    /// How many chat messages one call may send.
    pub fn check_messages(&self, count: usize) -> Result<(), CountError> {
        Ok(check_count("messages", count, self.limits.max_messages)?)
    }

    /// How many tool definitions one mcp-tokens call may send.
    pub fn check_tools(&self, count: usize) -> Result<(), CountError> {
        Ok(check_count(
            "tools",
            count,
            self.limits.max_tool_definitions,
        )?)
    }

    /// How many sections one call may send.
    pub fn check_sections(&self, count: usize) -> Result<(), CountError> {
        Ok(check_count("sections", count, self.limits.max_sections)?)
    }

    /// A spec path (or other name a caller sends) against the name-length limit.
    pub fn check_name(&self, field: &'static str, name: &str) -> Result<(), LimitError> {
        check_name(field, name, self.limits.max_name_bytes)
    }

    /// The model `model` names (default [`DEFAULT_MODEL`]), or an error listing
    /// the supported names and the closest ones. The one place the default applies:
    /// the result carries the name, so later steps never re-derive it.
    pub fn resolve<'a>(&'a self, model: Option<&'a str>) -> Result<ResolvedModel<'a>, CountError> {
        let requested = model.unwrap_or(DEFAULT_MODEL);
        // Before any lookup or suggestion search: their cost grows with the name.
        self.check_name("model", requested)?;
        if requested.trim().is_empty() {
            return Err(CountError::EmptyModel);
        }
        self.catalog.resolve(requested).ok_or_else(|| {
            let names = self.catalog.names();
            // A prefix that crossed into another model (`gpt-4-o`) means that model.
            let crossed = self.catalog.crossed_into(requested);
            let mut did_you_mean: Vec<String> = crossed.iter().map(|n| n.to_string()).collect();
            for name in closest_names(requested, names.iter().copied(), 5) {
                if did_you_mean.len() < 5 && !did_you_mean.contains(&name) {
                    did_you_mean.push(name);
                }
            }
            CountError::UnsupportedModel {
                requested: requested.to_string(),
                did_you_mean,
            }
        })
    }

    /// `bytes` of input against this counter's limit (see [`crate::limits`]).
    pub fn check_input(&self, bytes: usize) -> Result<(), CountError> {
        Ok(check_input_bytes(bytes, self.limits.max_input_bytes)?)
    }

    /// Count `text` for `model` (default [`DEFAULT_MODEL`]) with the local tokenizer.
    pub fn count(&self, text: &str, model: Option<&str>) -> Result<TokenCount, CountError> {
        self.count_with(text, model, None)
    }

    /// Count `text` for `model`; when `exact` counts that model, the provider's
    /// count of the text as one user message, else (or when it fails, with a
    /// `warning`) the local count. May block on `exact`.
    pub fn count_with(
        &self,
        text: &str,
        model: Option<&str>,
        exact: Option<&dyn ExactCounter>,
    ) -> Result<TokenCount, CountError> {
        self.count_until(text, model, exact, &|| false)
    }

    /// [`Self::count_with`] that gives up with [`CountError::Cancelled`] soon after
    /// `cancelled` turns true: a large text is counted in parts that check it.
    pub fn count_until(
        &self,
        text: &str,
        model: Option<&str>,
        exact: Option<&dyn ExactCounter>,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<TokenCount, CountError> {
        let resolved = self.resolve(model)?;
        // Checked before any work: a 1 GB paste must fail fast, not stall the server.
        self.check_input(text.len())?;
        let mut warning = None;
        if let Some((exact, id)) = exact_for(exact, &resolved)
            && let Some(entry) = resolved.entry()
            && !text.is_empty()
        {
            match exact.count_text(&id, text) {
                Ok(tokens) => {
                    let mut count = TokenCount::exact(entry, tokens as usize, exact);
                    count.requested_model = resolved.requested_if_other();
                    return Ok(count);
                }
                Err(failure) => warning = Some(failure.warning),
            }
        }
        let tokens = resolved
            .tokenizer()
            .count_until(text, cancelled)
            .ok_or(CountError::Cancelled)?;
        let mut count = TokenCount::local(&resolved, tokens);
        count.warning = warning;
        count.requested_model = resolved.requested_if_other();
        Ok(count)
    }
}

/// The name `resolved` was asked by, when it is not the name it resolved to.
impl TokenCount {
    /// `token_count` tokens of `model`'s local tokenizer.
    pub fn local(model: &ResolvedModel<'_>, token_count: usize) -> TokenCount {
        let tokenizer = model.tokenizer();
        let entry = model.entry();
        TokenCount {
            token_count,
            model: model.name().to_string(),
            requested_model: None,
            encoding: tokenizer.name(),
            exact: tokenizer.is_exact(),
            method: tokenizer.method(),
            context_window: entry.map(|e| e.context_window),
            max_output_tokens: entry.and_then(|e| e.max_output_tokens),
            estimated_input_cost_usd: entry.and_then(|e| cost(token_count, e)),
            warning: None,
        }
    }

    /// `token_count` tokens as `counter` (a provider API) counted them for `entry`.
    pub fn exact(entry: &ModelEntry, token_count: usize, counter: &dyn ExactCounter) -> TokenCount {
        TokenCount {
            token_count,
            model: entry.name.clone(),
            requested_model: None,
            encoding: counter.encoding(),
            exact: true,
            method: counter.method(),
            context_window: Some(entry.context_window),
            max_output_tokens: entry.max_output_tokens,
            estimated_input_cost_usd: cost(token_count, entry),
            warning: None,
        }
    }
}

/// Price of `tokens` at `usd_per_mtok`, rounded to a millionth of a dollar.
pub fn usd(tokens: usize, usd_per_mtok: f64) -> f64 {
    (tokens as f64 * usd_per_mtok).round() / 1_000_000.0
}

/// `tokens` at `entry`'s input price; `None` when the catalog has no price for it
/// (a models file may leave prices out: no cost is better than a made-up one).
pub fn cost(tokens: usize, entry: &ModelEntry) -> Option<f64> {
    entry.input_usd_per_mtok.map(|price| usd(tokens, price))
}

/// An input cost that may be unknown: serialized as the number or left out, shown
/// as the number (with the format's precision) or `?`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Usd(pub Option<f64>);

impl Usd {
    pub fn is_unknown(&self) -> bool {
        self.0.is_none()
    }
}

impl std::fmt::Display for Usd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(value) => std::fmt::Display::fmt(&value, f),
            None => f.write_str("?"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_model_is_gpt_4() {
        let count = TokenCounter::default()
            .count("hello world", None)
            .expect("counts");
        assert_eq!(count.model, "gpt-4");
        assert_eq!(count.encoding, "cl100k_base");
        assert_eq!(count.token_count, 2);
        assert!(count.exact);
        assert_eq!(count.context_window, Some(8192));
        // 2 tokens at $30 per 1M.
        assert_eq!(count.estimated_input_cost_usd, Some(0.00006));
    }

    #[test]
    fn model_actually_used_is_reported() {
        let count = TokenCounter::default()
            .count("hi", Some("gpt-4o-2024-08-06"))
            .expect("counts");
        assert_eq!(count.model, "gpt-4o");
        assert_eq!(count.encoding, "o200k_base");
        let claude = TokenCounter::default()
            .count("hi", Some("claude"))
            .expect("counts");
        // `claude` is the current tokenizer generation's first model.
        assert_eq!(claude.model, "claude-opus-4-7");
        assert_eq!(claude.encoding, "claude_4_7_estimate");
        assert!(!claude.exact);
        assert!(claude.method.starts_with("estimate"));
        let encoding = TokenCounter::default()
            .count("hi", Some("o200k_base"))
            .expect("counts");
        assert_eq!(
            (encoding.context_window, encoding.estimated_input_cost_usd),
            (None, None)
        );
    }

    #[test]
    fn unsupported_model_names_the_closest_names_only() {
        let err = TokenCounter::default()
            .count("hi", Some("gpt4o"))
            .expect_err("unknown model");
        let CountError::UnsupportedModel {
            requested,
            did_you_mean,
        } = err
        else {
            panic!("wrong error");
        };
        assert_eq!(requested, "gpt4o");
        assert_eq!(did_you_mean.first().map(String::as_str), Some("gpt-4o"));
        assert!(did_you_mean.len() <= 5);
    }

    /// Issue 39: a name the catalog does not hold resolves only by the vendors' own
    /// suffixes; a typo after a model's name is not that model.
    #[test]
    fn only_dated_and_vendor_suffixes_resolve_to_a_model() {
        let counter = TokenCounter::default();
        for (asked, model) in [
            ("gpt-4o-2024-08-06", "gpt-4o"),
            ("gpt-4-0613", "gpt-4"),
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
            ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
            ("gemini-2.5-pro-preview-06-05", "gemini-2.5-pro"),
        ] {
            let resolved = counter.resolve(Some(asked)).expect(asked);
            assert_eq!(resolved.name(), model, "{asked}");
        }
        for typo in [
            "gpt-4-oo",
            "gpt-4o-mini-typo",
            "claude-sonnet-4-5-fast",
            "gpt-4o-x",
        ] {
            assert!(
                matches!(
                    counter.resolve(Some(typo)),
                    Err(CountError::UnsupportedModel { .. })
                ),
                "{typo}"
            );
        }
    }

    #[test]
    fn a_crossed_prefix_or_an_empty_name_is_refused_clearly() {
        let counter = TokenCounter::default();
        let Err(CountError::UnsupportedModel { did_you_mean, .. }) =
            counter.resolve(Some("gpt-4-o"))
        else {
            panic!("gpt-4-o is not gpt-4");
        };
        assert_eq!(did_you_mean.first().map(String::as_str), Some("gpt-4o"));
        for empty in ["", "  "] {
            assert_eq!(counter.resolve(Some(empty)), Err(CountError::EmptyModel));
        }
    }

    /// Counts every text as 7 tokens, for Claude models only.
    struct Seven;

    impl ExactCounter for Seven {
        fn provider_model(&self, requested: &str, entry: &ModelEntry) -> Option<String> {
            entry
                .tokenizer
                .is_claude()
                .then(|| format!("api:{requested}"))
        }
        fn count_messages(
            &self,
            _: &str,
            _: &[crate::Message],
        ) -> Result<u64, crate::ExactCountFailure> {
            unreachable!("count-tokens counts text")
        }
        fn count_text(&self, model: &str, _: &str) -> Result<u64, crate::ExactCountFailure> {
            assert_eq!(
                model, "api:claude-sonnet-4-5-20250929",
                "the caller's dated id"
            );
            Ok(7)
        }
        fn encoding(&self) -> &'static str {
            "provider_count"
        }
        fn method(&self) -> &'static str {
            "exact: provider"
        }
    }

    #[test]
    fn an_exact_counter_replaces_the_estimate_for_the_models_it_counts() {
        let counter = TokenCounter::default();
        let count = counter
            .count_with(
                "hello there",
                Some("claude-sonnet-4-5-20250929"),
                Some(&Seven),
            )
            .expect("counts");
        assert_eq!(
            (count.token_count, count.exact, count.encoding, count.method),
            (7, true, "provider_count", "exact: provider")
        );
        assert_eq!(count.model, "claude-sonnet-4-5");
        assert_eq!(count.estimated_input_cost_usd, Some(usd(7, 3.0)));
        assert_eq!(count.context_window, Some(200_000));
        // Models it does not count, and empty texts, keep the local count.
        let local = counter
            .count_with("hello there", Some("gpt-4o"), Some(&Seven))
            .expect("counts");
        assert_eq!(
            local,
            counter
                .count("hello there", Some("gpt-4o"))
                .expect("counts")
        );
        let empty = counter
            .count_with("", Some("claude-sonnet-4-5-20250929"), Some(&Seven))
            .expect("counts");
        assert_eq!((empty.token_count, empty.exact), (0, false));
    }

    #[test]
    fn input_over_the_limit_is_refused_before_counting() {
        let counter = TokenCounter::new(Arc::new(Catalog::builtin().clone()), 10);
        assert_eq!(
            counter.count("0123456789", None).map(|c| c.token_count),
            Ok(4)
        );
        assert_eq!(
            counter.count("0123456789a", None),
            Err(CountError::Limit(LimitError::TextTooLarge {
                bytes: 11,
                limit: 10
            }))
        );
    }
}
