//! Assembling a prompt from sections under a token budget.
//!
//! Sections (system prompt, tool definitions, working memory, search results,
//! archives, or any named text) are placed in priority order; each gets its own
//! budget and whatever the overall budget still allows. A section over its budget
//! keeps its beginning, cut at a token boundary and never inside a UTF-8 character,
//! and ends with [`TRUNCATION_MARK`] so a reader (human or model) sees the cut; a
//! budget too small for any content plus the mark drops the section, with a reason.
//!
//! A [`Preset`] is a named layout (layers with fixed budgets, in priority order), e.g.
//! [`ADR_LAYERED`]. When an [`ExactCounter`] counts the model (Claude with
//! Anthropic's API), the final text is counted by the provider and assembled again,
//! smaller, while that total is over ([`crate::exact::refine`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::counter::{CountError, TokenCounter, cost};
use crate::exact::{ExactCounter, MAX_EXACT_ROUNDS, Refined, exact_for, refine};
use crate::fit::{FitError, FitOptions, input_budget};
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

/// A layout a caller picks by name: layers with fixed token budgets, placed in the
/// order listed (the first is served first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    pub name: &'static str,
    /// `(layer name, tokens)`, highest priority first.
    pub layers: &'static [(&'static str, u64)],
}

impl Preset {
    /// The sum of the layers' budgets: the overall budget when the caller gives none
    /// (capped by the model's window).
    pub fn total(&self) -> u64 {
        self.layers.iter().map(|l| l.1).sum()
    }

    fn layer(&self, name: &str) -> Option<(usize, u64)> {
        self.layers
            .iter()
            .position(|l| l.0 == name)
            .map(|i| (i, self.layers[i].1))
    }

    pub fn layer_names(&self) -> Vec<&'static str> {
        self.layers.iter().map(|l| l.0).collect()
    }
}

/// The token-budgeting ADR's layered context (ADR-012): eight layers, 76,000 tokens,
/// in the ADR's priority order — 1 system prompt, 2 working memory, 3 stream buffer,
/// then semantic search, graph traversal, session archive, meta memory, tool
/// definitions. The ADR makes the layer budgets adjustable in configuration: a
/// section's own `budget`, or [`LayerBudgets`] (the server's `--adr-layer-budgets`).
pub const ADR_LAYERED: Preset = Preset {
    name: "adr-layered",
    layers: &[
        ("system_prompt", 8_000),
        ("working_memory", 40_000),
        ("stream_buffer", 2_000),
        ("semantic_search", 12_000),
        ("graph_traversal", 4_000),
        ("session_archive", 4_000),
        ("meta_memory", 2_000),
        ("tool_definitions", 4_000),
    ],
};

/// Every preset, by name.
pub const PRESETS: [Preset; 1] = [ADR_LAYERED];

/// Layer budgets that replace a preset's own, e.g. from configuration:
/// `system_prompt=8000,working_memory=30000` or the JSON object
/// `{"system_prompt": 8000, "working_memory": 30000}`. Layers not named keep the
/// preset's budget.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LayerBudgets(Vec<(String, u64)>);

/// A [`LayerBudgets`] text that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayerBudgetsError {
    #[error("`{0}` is not `layer=tokens` (e.g. `working_memory=40000`)")]
    Syntax(String),
    #[error("`{layer}` is not a layer of preset `{preset}`{}; its layers: {}",
        did_you_mean.as_ref().map(|d| format!(" (did you mean `{d}`?)")).unwrap_or_default(),
        layers.join(", "))]
    UnknownLayer {
        layer: String,
        preset: &'static str,
        did_you_mean: Option<String>,
        layers: Vec<&'static str>,
    },
    #[error("layer `{0}` is given twice")]
    Duplicate(String),
    #[error(
        "the layer budgets of preset `{preset}` total {total} tokens; they must total at least 1"
    )]
    ZeroTotal { preset: &'static str, total: u64 },
    #[error("not a JSON object of layer budgets: {0}")]
    Json(String),
}

impl LayerBudgets {
    /// `layer=tokens,...` for `preset`, checked against its layers.
    pub fn parse(preset: &Preset, text: &str) -> Result<LayerBudgets, LayerBudgetsError> {
        let mut pairs = Vec::new();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let syntax = || LayerBudgetsError::Syntax(item.to_string());
            let (name, tokens) = item.split_once('=').ok_or_else(syntax)?;
            let tokens: u64 = tokens.trim().parse().map_err(|_| syntax())?;
            pairs.push((name.trim().to_string(), tokens));
        }
        LayerBudgets::new(preset, pairs)
    }

    /// A JSON object `{"layer": tokens, ...}` for `preset` (a configuration file).
    pub fn from_json(preset: &Preset, json: &str) -> Result<LayerBudgets, LayerBudgetsError> {
        let map: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(json).map_err(|e| LayerBudgetsError::Json(e.to_string()))?;
        let mut pairs = Vec::with_capacity(map.len());
        for (name, value) in map {
            let tokens = value.as_u64().ok_or_else(|| {
                LayerBudgetsError::Json(format!("`{name}`: {value} is not a token count"))
            })?;
            pairs.push((name, tokens));
        }
        LayerBudgets::new(preset, pairs)
    }

    fn new(preset: &Preset, pairs: Vec<(String, u64)>) -> Result<LayerBudgets, LayerBudgetsError> {
        for (i, (name, _)) in pairs.iter().enumerate() {
            if preset.layer(name).is_none() {
                return Err(LayerBudgetsError::UnknownLayer {
                    layer: name.clone(),
                    preset: preset.name,
                    did_you_mean: crate::closest_names(name, preset.layer_names(), 1)
                        .into_iter()
                        .next(),
                    layers: preset.layer_names(),
                });
            }
            if pairs[..i].iter().any(|(n, _)| n == name) {
                return Err(LayerBudgetsError::Duplicate(name.clone()));
            }
        }
        let budgets = LayerBudgets(pairs);
        let total = budgets.total(preset);
        if total == 0 {
            return Err(LayerBudgetsError::ZeroTotal {
                preset: preset.name,
                total,
            });
        }
        Ok(budgets)
    }

    /// The budget of `layer`: the one given here, else the preset's.
    pub fn budget(&self, preset: &Preset, layer: &str) -> Option<u64> {
        let own = preset.layer(layer)?.1;
        Some(
            self.0
                .iter()
                .find(|(name, _)| name == layer)
                .map_or(own, |l| l.1),
        )
    }

    /// Every layer of `preset` with its budget, in the preset's order.
    pub fn layers(&self, preset: &Preset) -> Vec<(&'static str, u64)> {
        preset
            .layers
            .iter()
            .map(|&(name, own)| {
                let tokens = self.budget(preset, name).unwrap_or(own);
                (name, tokens)
            })
            .collect()
    }

    /// The sum of the layers' budgets.
    pub fn total(&self, preset: &Preset) -> u64 {
        self.layers(preset).iter().map(|l| l.1).sum()
    }
}

/// One section of the prompt to assemble.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Section {
    /// A name; `system`, `tool_definitions`, `working_memory`, `semantic_search` and
    /// `archives` have default budgets and priorities. With a `preset`, the name of
    /// one of its layers.
    pub name: String,
    pub content: String,
    /// Most tokens this section may use. Default: its share for a named default,
    /// otherwise whatever the overall budget still has; with a preset, its layer's
    /// budget (which this replaces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    /// Lower comes first and is served first. Default: the named default's (0–4), else 10.
    /// Not allowed with a preset (its layer order is the priority).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
}

/// What happened to one section.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SectionReport {
    pub name: String,
    pub priority: i64,
    /// Tokens of the section as placed (truncation mark included); 0 when dropped.
    pub tokens: u64,
    /// Tokens it was allowed: its own budget, capped by what the overall budget had left.
    pub budget: u64,
    /// Tokens of the full content.
    pub original_tokens: u64,
    /// Part of the content was kept, ending with the truncation mark.
    pub truncated: bool,
    /// Why nothing of the section was placed (absent when it was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped: Option<String>,
    /// tokens / budget (0 when the budget is 0).
    pub budget_utilization: f64,
}

/// The assembled prompt.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AssembledContext {
    /// The sections in priority order, separated by a blank line.
    pub text: String,
    /// Tokens of `text` (counted on the final text, separators included; the
    /// provider's count when `exact` came from its API): what `budget` bounds.
    pub total_tokens: u64,
    /// Tokens of this whole answer as the model receives it (its compact JSON, `text`
    /// escaped inside it, the per-section report around it), counted locally for
    /// `model`. The budget is the assembled prompt's, the text a caller sends on;
    /// the answer carrying it is larger, and is bounded by the server's answer limit.
    pub answer_tokens: u64,
    pub budget: u64,
    /// total_tokens / budget.
    pub budget_utilization: f64,
    /// The preset whose layout was used, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<&'static str>,
    /// The model (or encoding) whose tokenizer was used.
    pub model: String,
    /// The name asked for, when it is not `model` (a dated id, an alias).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_model: Option<String>,
    pub encoding: &'static str,
    pub exact: bool,
    /// How `total_tokens` was produced (sections' own `tokens` are always local counts).
    pub method: &'static str,
    pub truncated_sections: usize,
    pub dropped_sections: usize,
    pub sections: Vec<SectionReport>,
    /// `total_tokens` at the model's input price; absent for a bare encoding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_input_cost_usd: Option<f64>,
    /// Why an exact count was not used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AssembleError {
    /// A budget the model cannot take: the text would not fit its window.
    #[error("budget {budget} is over {model}'s context window of {context_window} tokens")]
    OverWindow {
        budget: u64,
        model: String,
        context_window: u64,
    },
    #[error("section #{index} has an empty name")]
    EmptyName { index: usize },
    #[error("`{name}` is an encoding without a context window")]
    NoContextWindow { name: String },
    #[error("no preset is named `{name}`")]
    UnknownPreset {
        name: String,
        available: Vec<&'static str>,
    },
    #[error("section #{index} `{name}` is not a layer of preset `{preset}`")]
    NotALayer {
        index: usize,
        name: String,
        preset: &'static str,
        layers: Vec<&'static str>,
    },
    #[error("section #{index} `{name}` sets `{field}`, which preset `{preset}` fixes")]
    PresetFixes {
        index: usize,
        name: String,
        field: &'static str,
        preset: &'static str,
    },
    #[error("layer `{name}` of preset `{preset}` is given twice (sections #{first} and #{second})")]
    DuplicateLayer {
        name: String,
        preset: &'static str,
        first: usize,
        second: usize,
    },
    #[error("no assembly confirmed within {budget} tokens after {rounds} exact counts")]
    NotConfirmed { budget: u64, rounds: usize },
    /// The budget derived from the model's window is not positive.
    #[error(transparent)]
    Budget(#[from] FitError),
    /// The model is unknown or the input over the limit.
    #[error(transparent)]
    Count(#[from] CountError),
}

/// What `assemble-context` was asked besides the sections.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AssembleOptions<'a> {
    /// Default [`DEFAULT_MODEL`](crate::DEFAULT_MODEL).
    pub model: Option<&'a str>,
    /// Default: the preset's total capped by 90 % of the model's window, or without
    /// a preset 90 % of the window.
    pub budget: Option<u64>,
    /// A [`PRESETS`] name.
    pub preset: Option<&'a str>,
    /// The preset's layer budgets as configured (default: the preset's own).
    pub layer_budgets: Option<&'a LayerBudgets>,
}

/// The text and its sections, before the model's catalog entry prices it.
#[derive(Debug, Clone, PartialEq)]
struct Assembly {
    text: String,
    total_tokens: u64,
    sections: Vec<SectionReport>,
}

/// How much one section may use.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Allowance {
    Tokens(u64),
    Share(f64),
    /// Whatever the overall budget still has.
    Rest,
}

/// Where one section goes and what it may use; built once per call.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Placement {
    index: usize,
    priority: i64,
    allowance: Allowance,
}

fn defaults_for(name: &str) -> Option<(i64, f64)> {
    DEFAULT_SECTIONS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(_, priority, share)| (priority, share))
}

/// The named preset.
pub fn preset(name: &str) -> Result<&'static Preset, AssembleError> {
    PRESETS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| AssembleError::UnknownPreset {
            name: name.to_string(),
            available: PRESETS.iter().map(|p| p.name).collect(),
        })
}

/// Check `sections` and decide each one's place and allowance, in priority order
/// (ties keep input order).
fn layout(
    sections: &[Section],
    preset: Option<&Preset>,
    layer_budgets: &LayerBudgets,
) -> Result<Vec<Placement>, AssembleError> {
    if let Some(index) = sections.iter().position(|s| s.name.trim().is_empty()) {
        return Err(AssembleError::EmptyName { index });
    }
    let mut placements = Vec::with_capacity(sections.len());
    for (index, section) in sections.iter().enumerate() {
        let placement = match preset {
            None => {
                let default = defaults_for(&section.name);
                Placement {
                    index,
                    priority: section
                        .priority
                        .unwrap_or(default.map_or(DEFAULT_PRIORITY, |d| d.0)),
                    allowance: match (section.budget, default) {
                        (Some(tokens), _) => Allowance::Tokens(tokens),
                        (None, Some((_, share))) => Allowance::Share(share),
                        (None, None) => Allowance::Rest,
                    },
                }
            }
            Some(preset) => {
                let Some((position, _)) = preset.layer(&section.name) else {
                    return Err(AssembleError::NotALayer {
                        index,
                        name: section.name.clone(),
                        preset: preset.name,
                        layers: preset.layer_names(),
                    });
                };
                // The order is the preset's; a layer's budget may be adjusted.
                if section.priority.is_some() {
                    return Err(AssembleError::PresetFixes {
                        index,
                        name: section.name.clone(),
                        field: "priority",
                        preset: preset.name,
                    });
                }
                let tokens = match section.budget {
                    Some(tokens) => tokens,
                    None => layer_budgets
                        .budget(preset, &section.name)
                        .unwrap_or_default(),
                };
                if let Some(first) = sections[..index]
                    .iter()
                    .position(|s| s.name == section.name)
                {
                    return Err(AssembleError::DuplicateLayer {
                        name: section.name.clone(),
                        preset: preset.name,
                        first,
                        second: index,
                    });
                }
                Placement {
                    index,
                    priority: position as i64,
                    allowance: Allowance::Tokens(tokens),
                }
            }
        };
        placements.push(placement);
    }
    placements.sort_by_key(|p| (p.priority, p.index));
    Ok(placements)
}

/// Bytes of the sections' contents: what the input limit measures.
fn sections_bytes(sections: &[Section]) -> usize {
    sections.iter().map(|s| s.content.len()).sum()
}

/// The whole `assemble-context`: check the input size, resolve `model` (default
/// [`DEFAULT_MODEL`](crate::DEFAULT_MODEL)), pick the budget (see [`AssembleOptions::budget`]), and
/// assemble `sections` within it — and when `exact` counts that model, count the
/// final text with the provider and assemble again, smaller, while it is over (see
/// [`refine`]). May block on `exact`.
pub fn assemble_context(
    counter: &TokenCounter,
    sections: &[Section],
    options: &AssembleOptions<'_>,
    exact: Option<&dyn ExactCounter>,
) -> Result<AssembledContext, AssembleError> {
    counter.check_sections(sections.len())?;
    counter.check_input(sections_bytes(sections))?;
    let preset = options.preset.map(preset).transpose()?;
    let own_budgets = LayerBudgets::default();
    let layer_budgets = options.layer_budgets.unwrap_or(&own_budgets);
    let resolved = counter.resolve(options.model)?;
    let window_budget = || match resolved.entry() {
        Some(entry) => Ok(input_budget(entry.context_window, &FitOptions::default())?),
        None => Err(AssembleError::NoContextWindow {
            name: resolved.name().to_string(),
        }),
    };
    let budget = match (options.budget, preset) {
        (Some(budget), _) => budget,
        // A preset's total, but never more than the model's window can take.
        (None, Some(preset)) => match resolved.entry() {
            Some(_) => layer_budgets.total(preset).min(window_budget()?),
            None => layer_budgets.total(preset),
        },
        (None, None) => window_budget()?,
    };
    // An overall budget the model cannot take is refused rather than met: the answer
    // would be a text that does not fit the model it was counted for. (Defaults never
    // are: they are capped by the window above; a section's budget is capped by the
    // overall one.)
    if let (Some(entry), Some(budget)) = (resolved.entry(), options.budget)
        && budget > entry.context_window
    {
        return Err(AssembleError::OverWindow {
            budget,
            model: entry.name.clone(),
            context_window: entry.context_window,
        });
    }
    // A budget of 0 places nothing: every section is dropped with its reason, as
    // load-files answers a budget of 0 with no files.
    let placements = layout(sections, preset, layer_budgets)?;
    let tokenizer = resolved.tokenizer();
    let assemble =
        |local_budget: u64| assemble_within(sections, &placements, tokenizer, local_budget);
    let priced = Priced {
        model: &resolved,
        budget,
        preset: preset.map(|p| p.name),
    };

    let Some((exact, id)) = exact_for(exact, &resolved) else {
        return Ok(priced.local(assemble(budget), None));
    };
    let refined = refine(
        budget,
        |local_budget| Ok::<_, AssembleError>(assemble(local_budget)),
        |assembly| assembly.total_tokens,
        |assembly| exact.count_text(&id, &assembly.text),
    )?;
    match refined {
        Refined::Exact { value, total } => Ok(priced.exact(value, total, exact)),
        Refined::Estimated { value, warning } => Ok(priced.local(value, Some(warning))),
        Refined::NotConfirmed => Err(AssembleError::NotConfirmed {
            budget,
            rounds: MAX_EXACT_ROUNDS,
        }),
    }
}

/// What every [`AssembledContext`] of one call shares.
struct Priced<'a, 'm> {
    model: &'a ResolvedModel<'m>,
    budget: u64,
    preset: Option<&'static str>,
}

impl Priced<'_, '_> {
    /// An assembly counted by the local tokenizer.
    fn local(&self, assembly: Assembly, warning: Option<String>) -> AssembledContext {
        let tokenizer = self.model.tokenizer();
        let total = assembly.total_tokens;
        self.output(
            assembly,
            total,
            (tokenizer.name(), tokenizer.is_exact(), tokenizer.method()),
            warning,
        )
    }

    /// An assembly whose final text the provider counted at `total`.
    fn exact(
        &self,
        assembly: Assembly,
        total: u64,
        counter: &dyn ExactCounter,
    ) -> AssembledContext {
        self.output(
            assembly,
            total,
            (counter.encoding(), true, counter.method()),
            None,
        )
    }

    fn output(
        &self,
        assembly: Assembly,
        total_tokens: u64,
        (encoding, exact, method): (&'static str, bool, &'static str),
        warning: Option<String>,
    ) -> AssembledContext {
        let mut assembled = AssembledContext {
            budget_utilization: ratio(total_tokens, self.budget),
            truncated_sections: assembly.sections.iter().filter(|s| s.truncated).count(),
            dropped_sections: assembly
                .sections
                .iter()
                .filter(|s| s.dropped.is_some())
                .count(),
            estimated_input_cost_usd: self
                .model
                .entry()
                .and_then(|e| cost(total_tokens as usize, e)),
            text: assembly.text,
            total_tokens,
            budget: self.budget,
            preset: self.preset,
            model: self.model.name().to_string(),
            requested_model: self.model.requested_if_other(),
            encoding,
            exact,
            method,
            sections: assembly.sections,
            warning,
            answer_tokens: 0,
        };
        crate::answer::count_itself(&mut assembled, self.model.tokenizer(), |a| {
            &mut a.answer_tokens
        });
        assembled
    }
}

/// Assemble `sections` within `budget` tokens of `tokenizer`.
///
/// The final text is counted as a whole and re-cut while it is over: joining sections
/// can merge a token or two across a boundary. A budget of 0 places nothing.
fn assemble_within(
    sections: &[Section],
    placements: &[Placement],
    tokenizer: Tokenizer,
    budget: u64,
) -> Assembly {
    // If the final count exceeds the budget, assemble again with the overshoot taken off.
    let mut allowance = budget;
    loop {
        let assembly = assemble_once(sections, placements, tokenizer, allowance);
        if assembly.total_tokens <= budget || allowance == 0 {
            return assembly;
        }
        allowance = allowance.saturating_sub(assembly.total_tokens - budget);
    }
}

fn assemble_once(
    sections: &[Section],
    placements: &[Placement],
    tokenizer: Tokenizer,
    budget: u64,
) -> Assembly {
    let count = |text: &str| tokenizer.count(text) as u64;
    let separator_tokens = count(SECTION_SEPARATOR);
    let mark_tokens = count(TRUNCATION_MARK);

    let mut text = String::new();
    let mut remaining = budget;
    let mut reports = Vec::with_capacity(placements.len());
    for placement in placements {
        let section = &sections[placement.index];
        let own_budget = match placement.allowance {
            Allowance::Tokens(tokens) => tokens,
            Allowance::Share(share) => (budget as f64 * share).floor() as u64,
            Allowance::Rest => remaining,
        };
        let original_tokens = count(&section.content);
        let separator = if text.is_empty() { 0 } else { separator_tokens };
        let allowed = own_budget.min(remaining.saturating_sub(separator));
        let (placed, truncated, dropped) = if original_tokens <= allowed {
            (section.content.clone(), false, None)
        } else {
            match truncate(&section.content, tokenizer, allowed, mark_tokens) {
                Some(kept) => (kept, true, None),
                None if budget == 0 => (
                    String::new(),
                    false,
                    Some("the overall budget is 0 tokens".to_string()),
                ),
                None => (
                    String::new(),
                    false,
                    Some(format!(
                        "{allowed} tokens allowed ({}), too few for any of its {original_tokens} \
                         tokens plus the {mark_tokens}-token truncation mark",
                        if allowed < own_budget {
                            "what the overall budget had left"
                        } else {
                            "its budget"
                        }
                    )),
                ),
            }
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
            priority: placement.priority,
            tokens,
            budget: allowed,
            original_tokens,
            truncated,
            dropped,
            budget_utilization: ratio(tokens, allowed),
        });
    }
    let total_tokens = count(&text);
    Assembly {
        text,
        total_tokens,
        sections: reports,
    }
}

/// The beginning of `content` plus the cut mark, within `allowed` tokens; `None`
/// when no content fits beside the mark (a marker alone would say nothing).
fn truncate(content: &str, tokenizer: Tokenizer, allowed: u64, mark_tokens: u64) -> Option<String> {
    if allowed <= mark_tokens {
        return None;
    }
    let mut room = allowed - mark_tokens;
    loop {
        let prefix = tokenizer.prefix_within(content, room as usize);
        if prefix.trim().is_empty() {
            return None;
        }
        let placed = format!("{prefix}{TRUNCATION_MARK}");
        let tokens = tokenizer.count(&placed) as u64;
        if tokens <= allowed {
            return Some(placed);
        }
        room = room.checked_sub((tokens - allowed).max(1))?;
        if room == 0 {
            return None;
        }
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
    use crate::counter::usd;

    fn assemble_within(sections: &[Section], tokenizer: Tokenizer, budget: u64) -> Assembly {
        let placements = layout(sections, None, &LayerBudgets::default()).expect("valid sections");
        super::assemble_within(sections, &placements, tokenizer, budget)
    }

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
        let out = assemble_within(&sections, Tokenizer::Cl100kBase, 1000);
        assert_eq!(out.text, "You are terse.\n\nsecond\n\nthird");
        let names: Vec<&str> = out.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["system", "semantic_search", "notes"]);
        assert!(out.sections.iter().all(|s| !s.truncated));
        // Default shares: system 10 %, semantic_search 40 % of 1000.
        assert_eq!(out.sections[0].budget, 100);
        assert_eq!(out.sections[1].budget, 400);
        assert_eq!(out.sections[0].tokens, 4);
        assert_eq!(out.sections[0].budget_utilization, 0.04);
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
            let out = assemble_within(&sections, tokenizer, 1000);
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
        let out = assemble_within(&sections, Tokenizer::Cl100kBase, 150);
        assert!(!out.sections[0].truncated);
        assert_eq!(out.sections[0].tokens, 100);
        assert!(out.sections[1].truncated);
        assert_eq!(out.sections[1].budget, 150 - 100 - 1, "minus the separator");
        assert_eq!(out.sections[2].budget, 0);
        assert_eq!(out.sections[2].tokens, 0);
        assert!(
            !out.sections[2].truncated,
            "nothing kept is not a truncation"
        );
        assert!(out.sections[2].dropped.is_some());
        assert!(out.total_tokens <= 150, "{}", out.total_tokens);
        assert_eq!(out.text.matches(TRUNCATION_MARK).count(), 1);
    }

    #[test]
    fn a_budget_too_small_for_the_mark_drops_the_section() {
        // The mark is 5 cl100k tokens: 2, 5 and 6 leave no room for content beside it.
        let mark = Tokenizer::Cl100kBase.count(TRUNCATION_MARK) as u64;
        for budget in [0, 2, mark, mark + 1] {
            let sections = [section("x", &"long text ".repeat(50), Some(budget), None)];
            let out = assemble_within(&sections, Tokenizer::Cl100kBase, 100);
            let report = &out.sections[0];
            if budget > mark && report.tokens > 0 {
                // Real content plus the mark.
                assert!(report.truncated && out.text.ends_with(TRUNCATION_MARK));
                assert!(out.text.len() > TRUNCATION_MARK.len());
                continue;
            }
            assert_eq!(out.text, "", "budget {budget}: never a marker alone");
            assert_eq!(report.tokens, 0);
            assert!(!report.truncated, "budget {budget}");
            let reason = report.dropped.as_deref().expect("a reason");
            assert!(reason.contains("truncation mark"), "{reason}");
        }
        // One token of room beside the mark keeps one token of content.
        let sections = [section("x", &"long text ".repeat(50), Some(mark + 2), None)];
        let out = assemble_within(&sections, Tokenizer::Cl100kBase, 100);
        assert!(out.sections[0].truncated && out.sections[0].dropped.is_none());
        assert!(out.text.starts_with("long") && out.text.ends_with(TRUNCATION_MARK));
    }

    #[test]
    fn invalid_requests_are_typed_errors() {
        assert_eq!(
            layout(
                &[section(" ", "x", None, None)],
                None,
                &LayerBudgets::default()
            ),
            Err(AssembleError::EmptyName { index: 0 })
        );
    }

    #[test]
    fn a_budget_of_zero_places_nothing_and_says_why() {
        // As load-files answers a budget of 0 with no files (issue 23): not an error.
        let counter = TokenCounter::default();
        let options = AssembleOptions {
            budget: Some(0),
            ..AssembleOptions::default()
        };
        let sections = [section("system", "You are terse.", None, None)];
        let out = assemble_context(&counter, &sections, &options, None).expect("assembles");
        assert_eq!(
            (out.text.as_str(), out.total_tokens, out.budget),
            ("", 0, 0)
        );
        assert_eq!(out.dropped_sections, 1);
        assert_eq!(
            out.sections[0].dropped.as_deref(),
            Some("the overall budget is 0 tokens")
        );
    }

    #[test]
    fn a_budget_over_the_models_window_is_refused() {
        // gpt-4's window is 8,192 tokens: 20,000 used to give a 15,001-token text.
        let counter = TokenCounter::default();
        let over = AssembleOptions {
            model: Some("gpt-4"),
            budget: Some(20_000),
            ..AssembleOptions::default()
        };
        let sections = [section("notes", &"word ".repeat(20_000), None, None)];
        assert_eq!(
            assemble_context(&counter, &sections, &over, None),
            Err(AssembleError::OverWindow {
                budget: 20_000,
                model: "gpt-4".into(),
                context_window: 8192,
            })
        );
        // The whole window is the most one may ask; an encoding has no window to check.
        let whole = AssembleOptions {
            budget: Some(8192),
            ..over
        };
        assert!(assemble_context(&counter, &sections, &whole, None).is_ok());
        let encoding = AssembleOptions {
            model: Some("cl100k_base"),
            ..over
        };
        assert!(assemble_context(&counter, &sections, &encoding, None).is_ok());
    }

    #[test]
    fn the_whole_tool_prices_the_assembly_and_takes_the_budget_from_the_window() {
        let counter = TokenCounter::default();
        let sections = [section("system", "You are terse.", None, None)];
        let with = |model: Option<&'static str>, budget: Option<u64>| AssembleOptions {
            model,
            budget,
            ..AssembleOptions::default()
        };
        let out = assemble_context(&counter, &sections, &with(Some("gpt-4o"), None), None)
            .expect("assembles");
        assert_eq!(out.budget, 115_200, "90 % of 128000");
        assert_eq!(
            (out.model.as_str(), out.encoding, out.exact),
            ("gpt-4o", "o200k_base", true)
        );
        assert_eq!(out.total_tokens, 4);
        assert_eq!(out.budget_utilization, ratio(4, 115_200));
        assert_eq!(out.estimated_input_cost_usd, Some(usd(4, 2.5)));
        assert_eq!(out.truncated_sections, 0);
        // Neither model nor budget: the schema's defaults, gpt-4 and 90 % of 8192.
        let defaults =
            assemble_context(&counter, &sections, &with(None, None), None).expect("defaults");
        assert_eq!((defaults.model.as_str(), defaults.budget), ("gpt-4", 7372));
        assert_eq!(
            assemble_context(&counter, &sections, &with(Some("o200k_base"), None), None),
            Err(AssembleError::NoContextWindow {
                name: "o200k_base".into()
            })
        );
        let bare = assemble_context(
            &counter,
            &sections,
            &with(Some("o200k_base"), Some(10)),
            None,
        )
        .expect("budget given");
        assert_eq!(bare.estimated_input_cost_usd, None);
    }

    #[test]
    fn the_adr_preset_places_its_layers_in_order_with_their_budgets() {
        assert_eq!(ADR_LAYERED.total(), 76_000);
        let counter = TokenCounter::default();
        // Given in reverse: the preset's order wins.
        let sections: Vec<Section> = ADR_LAYERED
            .layers
            .iter()
            .rev()
            .map(|(name, _)| section(name, &format!("{name} text"), None, None))
            .collect();
        let options = AssembleOptions {
            model: Some("claude-sonnet-4-5"),
            budget: None,
            preset: Some("adr-layered"),
            layer_budgets: None,
        };
        let out = assemble_context(&counter, &sections, &options, None).expect("assembles");
        assert_eq!(out.budget, 76_000);
        assert_eq!(out.preset, Some("adr-layered"));
        let placed: Vec<(&str, u64)> = out
            .sections
            .iter()
            .map(|s| (s.name.as_str(), s.budget))
            .collect();
        assert_eq!(placed, ADR_LAYERED.layers);
        assert!(
            out.text
                .starts_with("system_prompt text\n\nworking_memory text\n\nstream_buffer text")
        );
        // gpt-4's window caps the preset's total: later layers get what is left.
        let small = AssembleOptions {
            model: Some("gpt-4"),
            ..options
        };
        let capped = assemble_context(&counter, &sections, &small, None).expect("assembles");
        assert_eq!(capped.budget, 7372);
        assert!(capped.sections[0].budget <= 7372);
        // Names outside the preset, a priority (the order is the ADR's) and repeats
        // are refused.
        let refused = |sections: &[Section]| assemble_context(&counter, sections, &options, None);
        assert!(matches!(
            refused(&[section("system", "x", None, None)]),
            Err(AssembleError::NotALayer { .. })
        ));
        assert!(matches!(
            refused(&[section("meta_memory", "x", None, Some(0))]),
            Err(AssembleError::PresetFixes {
                field: "priority",
                ..
            })
        ));
        assert!(matches!(
            refused(&[
                section("meta_memory", "x", None, None),
                section("meta_memory", "y", None, None)
            ]),
            Err(AssembleError::DuplicateLayer {
                first: 0,
                second: 1,
                ..
            })
        ));
        let unknown = AssembleOptions {
            preset: Some("layered"),
            ..options
        };
        assert!(matches!(
            assemble_context(&counter, &sections, &unknown, None),
            Err(AssembleError::UnknownPreset { .. })
        ));
    }

    /// ADR-012 (the token-budgeting ADR, issue 23 seed 004), as quoted in the issue:
    /// "Priority: 1 system prompt, 2 working memory, 3 stream buffer, then semantic
    /// search, graph traversal, session archive, meta memory, tool definitions." The
    /// ADR is not in this repository; this is its list, word for word.
    const ADR_012_PRIORITY: [&str; 8] = [
        "system prompt",
        "working memory",
        "stream buffer",
        "semantic search",
        "graph traversal",
        "session archive",
        "meta memory",
        "tool definitions",
    ];

    #[test]
    fn the_adr_preset_follows_the_adrs_priority_list() {
        let layers: Vec<String> = ADR_LAYERED
            .layer_names()
            .iter()
            .map(|n| n.replace('_', " "))
            .collect();
        assert_eq!(layers, ADR_012_PRIORITY);
        let system = ADR_LAYERED.layers[0].1;
        assert_eq!(system, 8_000);
    }

    #[test]
    fn working_memory_is_served_before_the_stream_buffer() {
        // Issue 23: under 3,000 tokens the stream buffer kept all its 1,901 tokens
        // while working memory was cut to 596.
        let counter = TokenCounter::default();
        let sections = [
            section("stream_buffer", &"stream event ".repeat(950), None, None),
            section("working_memory", &"memory entry ".repeat(1_000), None, None),
            section("system_prompt", "You are terse.", None, None),
        ];
        let options = AssembleOptions {
            model: Some("gpt-4o"),
            budget: Some(3_000),
            preset: Some("adr-layered"),
            layer_budgets: None,
        };
        let out = assemble_context(&counter, &sections, &options, None).expect("assembles");
        let names: Vec<&str> = out.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["system_prompt", "working_memory", "stream_buffer"]);
        let memory = &out.sections[1];
        assert_eq!(memory.tokens, memory.original_tokens, "{memory:?}");
        assert!(out.sections[2].truncated, "the buffer gets what is left");
    }

    #[test]
    fn layer_budgets_adjust_the_preset_from_configuration_and_per_request() {
        let budgets = LayerBudgets::parse(&ADR_LAYERED, "working_memory=30000, tool_definitions=0")
            .expect("valid");
        assert_eq!(budgets.total(&ADR_LAYERED), 76_000 - 10_000 - 4_000);
        assert_eq!(
            LayerBudgets::from_json(
                &ADR_LAYERED,
                r#"{"working_memory": 30000, "tool_definitions": 0}"#
            ),
            Ok(budgets.clone())
        );
        assert!(matches!(
            LayerBudgets::parse(&ADR_LAYERED, "working_memroy=1"),
            Err(LayerBudgetsError::UnknownLayer { did_you_mean: Some(d), .. }) if d == "working_memory"
        ));
        assert!(matches!(
            LayerBudgets::parse(&ADR_LAYERED, "working_memory"),
            Err(LayerBudgetsError::Syntax(_))
        ));
        assert!(matches!(
            LayerBudgets::parse(&ADR_LAYERED, "meta_memory=1,meta_memory=2"),
            Err(LayerBudgetsError::Duplicate(_))
        ));
        let zero = ADR_LAYERED
            .layer_names()
            .iter()
            .map(|n| format!("{n}=0"))
            .collect::<Vec<_>>()
            .join(",");
        assert!(matches!(
            LayerBudgets::parse(&ADR_LAYERED, &zero),
            Err(LayerBudgetsError::ZeroTotal { .. })
        ));

        let counter = TokenCounter::default();
        let sections = [
            section("working_memory", &"memory entry ".repeat(1_000), None, None),
            section("meta_memory", &"meta ".repeat(1_000), Some(100), None),
        ];
        let options = AssembleOptions {
            model: Some("gpt-4o"),
            budget: None,
            preset: Some("adr-layered"),
            layer_budgets: Some(&budgets),
        };
        let out = assemble_context(&counter, &sections, &options, None).expect("assembles");
        assert_eq!(out.budget, 62_000, "the configured total");
        assert_eq!(out.sections[0].budget, 30_000, "configured");
        assert_eq!(out.sections[1].budget, 100, "the section's own");
        assert!(out.sections[1].truncated);
    }

    #[test]
    fn default_shares_sum_to_the_whole_budget() {
        let sum: f64 = DEFAULT_SECTIONS.iter().map(|d| d.2).sum();
        assert!((sum - 1.0).abs() < 1e-9);
    }
}
