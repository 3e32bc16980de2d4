//! Assembling a prompt from sections under a token budget.
//!
//! Sections (system prompt, tool definitions, working memory, search results,
//! archives, or any named text) are placed in priority order; each gets its own
//! budget and whatever the overall budget still allows. A section over its budget
//! keeps its beginning, cut at a token boundary and never inside a UTF-8 character,
//! and ends with [`TRUNCATION_MARK`] so a reader (human or model) sees the cut.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::counter::{CountError, TokenCounter, usd};
use crate::fit::{FitError, FitOptions, input_budget};
use crate::limits::sections_bytes;
use crate::{ResolvedModel, Tokenizer};

/// Appended where a section was cut.
pub const TRUNCATION_MARK: &str = "\n[…truncated]";
/// Between sections.
pub const SECTION_SEPARATOR: &str = "\n\n";
/// Priority of a section that names none and is not a named default.
pub const DEFAULT_PRIORITY: i64 = 10;

/// The named default sections: `(name, priority, share of the overall budget)`.
///
/// The layout of an agent prompt: the system prompt and tool definitions first
/// (without them the model misbehaves), then the working memory of the task, then
/// retrieved material, then archives. Shares sum to 1, so defaults alone never ask
/// for more than the budget; retrieval gets the largest share because it is the
/// part that grows with the question.
pub const DEFAULT_SECTIONS: [(&str, i64, f64); 5] = [
    ("system", 0, 0.10),
    ("tool_definitions", 1, 0.10),
    ("working_memory", 2, 0.25),
    ("semantic_search", 3, 0.40),
    ("archives", 4, 0.15),
];

/// One section of the prompt to assemble.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Section {
    /// A name; `system`, `tool_definitions`, `working_memory`, `semantic_search` and
    /// `archives` have default budgets and priorities.
    pub name: String,
    pub content: String,
    /// Most tokens this section may use. Default: its share for a named default,
    /// otherwise whatever the overall budget still has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    /// Lower comes first and is served first. Default: the named default's (0–4), else 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
}

/// What happened to one section.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SectionReport {
    pub name: String,
    pub priority: i64,
    /// Tokens of the section as placed (truncation mark included).
    pub tokens: u64,
    /// Tokens it was allowed: its own budget, capped by what the overall budget had left.
    pub budget: u64,
    /// Tokens of the full content.
    pub original_tokens: u64,
    pub truncated: bool,
    /// tokens / budget (0 when the budget is 0).
    pub utilization: f64,
}

/// The assembled prompt.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AssembledContext {
    /// The sections in priority order, separated by a blank line.
    pub text: String,
    /// Tokens of `text` (counted on the final text, separators included).
    pub total_tokens: u64,
    pub budget: u64,
    /// total_tokens / budget.
    pub utilization: f64,
    /// The model (or encoding) whose tokenizer was used.
    pub model: String,
    pub encoding: &'static str,
    pub exact: bool,
    pub truncated_sections: usize,
    pub sections: Vec<SectionReport>,
    /// `total_tokens` at the model's input price; absent for a bare encoding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_input_cost_usd: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AssembleError {
    #[error("the overall budget must be positive")]
    ZeroBudget,
    #[error("section #{index} has an empty name")]
    EmptyName { index: usize },
    #[error("give an overall `budget` or a `model` (its window sets the budget)")]
    NoBudget,
    #[error("`{name}` is an encoding without a context window")]
    NoContextWindow { name: String },
    /// The budget derived from the model's window is not positive.
    #[error(transparent)]
    Budget(#[from] FitError),
    /// The model is unknown or the input over the limit.
    #[error(transparent)]
    Count(#[from] CountError),
}

/// The text and its sections, before the model's catalog entry prices it.
#[derive(Debug, Clone, PartialEq)]
struct Assembly {
    text: String,
    total_tokens: u64,
    sections: Vec<SectionReport>,
}

fn defaults_for(name: &str) -> Option<(i64, f64)> {
    DEFAULT_SECTIONS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(_, priority, share)| (priority, share))
}

/// The whole `assemble-context`: check the input size, resolve `model` (default
/// [`crate::DEFAULT_MODEL`]), take `budget` or 90 % of the model's window, and
/// assemble `sections` within it.
pub fn assemble_context(
    counter: &TokenCounter,
    sections: &[Section],
    model: Option<&str>,
    budget: Option<u64>,
) -> Result<AssembledContext, AssembleError> {
    counter.check_sections(sections.len())?;
    counter.check_input(sections_bytes(sections))?;
    if budget.is_none() && model.is_none() {
        return Err(AssembleError::NoBudget);
    }
    let resolved = counter.resolve(model)?;
    let budget = match (budget, resolved.entry()) {
        (Some(budget), _) => budget,
        (None, Some(entry)) => input_budget(entry.context_window, &FitOptions::default())?,
        (None, None) => {
            return Err(AssembleError::NoContextWindow {
                name: resolved.name().to_string(),
            });
        }
    };
    let assembly = assemble_within(sections, resolved.tokenizer(), budget)?;
    Ok(priced(assembly, &resolved, budget))
}

/// The output for `assembly`, with the figures that depend on the model.
fn priced(assembly: Assembly, model: &ResolvedModel<'_>, budget: u64) -> AssembledContext {
    let tokenizer = model.tokenizer();
    AssembledContext {
        utilization: ratio(assembly.total_tokens, budget),
        truncated_sections: assembly.sections.iter().filter(|s| s.truncated).count(),
        estimated_input_cost_usd: model
            .entry()
            .map(|e| usd(assembly.total_tokens as usize, e.input_usd_per_mtok)),
        text: assembly.text,
        total_tokens: assembly.total_tokens,
        budget,
        model: model.name().to_string(),
        encoding: tokenizer.name(),
        exact: tokenizer.is_exact(),
        sections: assembly.sections,
    }
}

/// Assemble `sections` within `budget` tokens of `tokenizer`.
///
/// The final text is counted as a whole and re-cut while it is over: joining sections
/// can merge a token or two across a boundary. A provider's exact count of the final
/// text fits the same shape — [`crate::exact::refine`] with this function as the
/// candidate and `ExactCounter::count_text` as the exact total.
fn assemble_within(
    sections: &[Section],
    tokenizer: Tokenizer,
    budget: u64,
) -> Result<Assembly, AssembleError> {
    if budget == 0 {
        return Err(AssembleError::ZeroBudget);
    }
    if let Some(index) = sections.iter().position(|s| s.name.trim().is_empty()) {
        return Err(AssembleError::EmptyName { index });
    }
    // If the final count exceeds the budget, assemble again with the overshoot taken off.
    let mut allowance = budget;
    loop {
        let assembly = assemble_once(sections, tokenizer, allowance);
        if assembly.total_tokens <= budget || allowance == 0 {
            return Ok(assembly);
        }
        allowance = allowance.saturating_sub(assembly.total_tokens - budget);
    }
}

fn assemble_once(sections: &[Section], tokenizer: Tokenizer, budget: u64) -> Assembly {
    let count = |text: &str| tokenizer.count(text) as u64;
    let separator_tokens = count(SECTION_SEPARATOR);
    let mark_tokens = count(TRUNCATION_MARK);

    let mut order: Vec<(i64, usize)> = sections
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let default = defaults_for(&s.name).map_or(DEFAULT_PRIORITY, |d| d.0);
            (s.priority.unwrap_or(default), i)
        })
        .collect();
    order.sort(); // stable by input position within a priority

    let mut text = String::new();
    let mut remaining = budget;
    let mut reports = Vec::with_capacity(sections.len());
    for (priority, index) in order {
        let section = &sections[index];
        let own_budget = section
            .budget
            .unwrap_or_else(|| match defaults_for(&section.name) {
                Some((_, share)) => (budget as f64 * share).floor() as u64,
                None => remaining,
            });
        let original_tokens = count(&section.content);
        let separator = if text.is_empty() { 0 } else { separator_tokens };
        let allowed = own_budget.min(remaining.saturating_sub(separator));
        let (placed, truncated) = if original_tokens <= allowed {
            (section.content.clone(), false)
        } else {
            (
                truncate(&section.content, tokenizer, allowed, mark_tokens),
                true,
            )
        };
        let tokens = count(&placed);
        if !placed.is_empty() {
            if !text.is_empty() {
                text.push_str(SECTION_SEPARATOR);
                remaining = remaining.saturating_sub(separator_tokens);
            }
            text.push_str(&placed);
            remaining = remaining.saturating_sub(tokens);
        }
        reports.push(SectionReport {
            name: section.name.clone(),
            priority,
            tokens,
            budget: allowed,
            original_tokens,
            truncated,
            utilization: ratio(tokens, allowed),
        });
    }
    let total_tokens = count(&text);
    Assembly {
        text,
        total_tokens,
        sections: reports,
    }
}

/// The beginning of `content` plus the cut mark, within `allowed` tokens; empty when
/// not even the mark fits.
fn truncate(content: &str, tokenizer: Tokenizer, allowed: u64, mark_tokens: u64) -> String {
    let mut room = allowed.saturating_sub(mark_tokens);
    loop {
        if allowed < mark_tokens {
            return String::new();
        }
        let prefix = tokenizer.prefix_within(content, room as usize);
        let placed = format!("{prefix}{TRUNCATION_MARK}");
        let tokens = tokenizer.count(&placed) as u64;
        if tokens <= allowed {
            return placed;
        }
        if room == 0 {
            return String::new();
        }
        room = room.saturating_sub(tokens - allowed);
    }
}

/// `part / whole` rounded to 4 decimals; 0 for an empty whole.
pub fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (part as f64 / whole as f64 * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(name: &str, content: &str, budget: Option<u64>, priority: Option<i64>) -> Section {
        Section {
            name: name.into(),
            content: content.into(),
            budget,
            priority,
        }
    }

    #[test]
    fn sections_fit_whole_and_appear_in_priority_order() {
        let sections = [
            section("notes", "third", None, Some(7)),
            section("semantic_search", "second", None, None),
            section("system", "You are terse.", None, None),
        ];
        let out = assemble_within(&sections, Tokenizer::Cl100kBase, 1000).expect("assembles");
        assert_eq!(out.text, "You are terse.\n\nsecond\n\nthird");
        let names: Vec<&str> = out.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["system", "semantic_search", "notes"]);
        assert!(out.sections.iter().all(|s| !s.truncated));
        // Default shares: system 10 %, semantic_search 40 % of 1000.
        assert_eq!(out.sections[0].budget, 100);
        assert_eq!(out.sections[1].budget, 400);
        assert_eq!(out.sections[0].tokens, 4);
        assert_eq!(out.sections[0].utilization, 0.04);
        assert_eq!(
            out.total_tokens,
            Tokenizer::Cl100kBase.count(&out.text) as u64
        );
    }

    #[test]
    fn a_section_over_its_budget_keeps_its_beginning_and_shows_the_cut() {
        let long = "안녕하세요 여러분, 오늘은 토큰 예산에 대해 이야기합니다. ".repeat(40);
        for tokenizer in [
            Tokenizer::Cl100kBase,
            Tokenizer::O200kBase,
            Tokenizer::ClaudeEstimate,
        ] {
            let sections = [section("memory", &long, Some(50), None)];
            let out = assemble_within(&sections, tokenizer, 1000).expect("assembles");
            let report = &out.sections[0];
            assert!(report.truncated);
            assert!(
                report.tokens <= 50 && report.tokens >= 40,
                "{tokenizer:?}: {report:?}"
            );
            assert!(out.text.ends_with(TRUNCATION_MARK));
            let kept = out.text.trim_end_matches(TRUNCATION_MARK);
            assert!(long.starts_with(kept), "keeps the beginning");
            assert!(!kept.is_empty());
            assert_eq!(report.original_tokens, tokenizer.count(&long) as u64);
        }
    }

    #[test]
    fn the_overall_budget_caps_later_sections() {
        let words = vec!["word"; 100].join(" "); // 100 cl100k tokens
        let sections = [
            section("a", &words, None, Some(0)),
            section("b", &words, None, Some(1)),
            section("c", "tail", None, Some(2)),
        ];
        let out = assemble_within(&sections, Tokenizer::Cl100kBase, 150).expect("assembles");
        assert!(!out.sections[0].truncated);
        assert_eq!(out.sections[0].tokens, 100);
        assert!(out.sections[1].truncated);
        assert_eq!(out.sections[1].budget, 150 - 100 - 1, "minus the separator");
        assert_eq!(out.sections[2].budget, 0);
        assert_eq!(out.sections[2].tokens, 0);
        assert!(out.sections[2].truncated);
        assert!(out.total_tokens <= 150, "{}", out.total_tokens);
        assert_eq!(out.text.matches(TRUNCATION_MARK).count(), 1);
    }

    #[test]
    fn a_budget_too_small_for_the_mark_drops_the_section() {
        let sections = [section("x", &"long text ".repeat(50), Some(2), None)];
        let out = assemble_within(&sections, Tokenizer::Cl100kBase, 100).expect("assembles");
        assert_eq!(out.text, "");
        assert_eq!(out.sections[0].tokens, 0);
        assert!(out.sections[0].truncated);
    }

    #[test]
    fn invalid_requests_are_typed_errors() {
        assert_eq!(
            assemble_within(&[], Tokenizer::Cl100kBase, 0),
            Err(AssembleError::ZeroBudget)
        );
        assert_eq!(
            assemble_within(&[section(" ", "x", None, None)], Tokenizer::Cl100kBase, 10),
            Err(AssembleError::EmptyName { index: 0 })
        );
    }

    #[test]
    fn the_whole_tool_prices_the_assembly_and_takes_the_budget_from_the_window() {
        let counter = TokenCounter::default();
        let sections = [section("system", "You are terse.", None, None)];
        let out = assemble_context(&counter, &sections, Some("gpt-4o"), None).expect("assembles");
        assert_eq!(out.budget, 115_200, "90 % of 128000");
        assert_eq!(
            (out.model.as_str(), out.encoding, out.exact),
            ("gpt-4o", "o200k_base", true)
        );
        assert_eq!(out.total_tokens, 4);
        assert_eq!(out.utilization, ratio(4, 115_200));
        assert_eq!(out.estimated_input_cost_usd, Some(usd(4, 2.5)));
        assert_eq!(out.truncated_sections, 0);
        assert_eq!(
            assemble_context(&counter, &sections, None, None),
            Err(AssembleError::NoBudget)
        );
        assert_eq!(
            assemble_context(&counter, &sections, Some("o200k_base"), None),
            Err(AssembleError::NoContextWindow {
                name: "o200k_base".into()
            })
        );
        let bare = assemble_context(&counter, &sections, Some("o200k_base"), Some(10))
            .expect("budget given");
        assert_eq!(bare.estimated_input_cost_usd, None);
    }

    #[test]
    fn default_shares_sum_to_the_whole_budget() {
        let sum: f64 = DEFAULT_SECTIONS.iter().map(|d| d.2).sum();
        assert!((sum - 1.0).abs() < 1e-9);
    }
}
