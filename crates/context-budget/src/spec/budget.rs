//! `spec-budget` from measurements: each chosen spec's cost with and without its
//! sub-specs, the totals, the README-first plan and a one-line suggestion. No files
//! are read here; [`super::SpecStore::spec_budget`] measures and calls these steps.

use super::layout::SpecFolder;
use super::measure::SpecWords;
use super::output::{ModelUsed, SpecBudget};
use super::report::{FileTokens, LoadPlan, SpecCost, plan};
use super::scan::Measured;
use crate::ResolvedModel;
use crate::read::SkipReason;

/// One spec's cost from its files' measurements (taken from `measured` in file
/// order); unmeasurable files and a missing README become notes.
pub(super) fn spec_cost(
    spec: &SpecFolder,
    measured: &mut impl Iterator<Item = Measured>,
    notes: &mut Vec<String>,
) -> SpecCost {
    let mut cost = SpecCost {
        spec: spec.id.clone(),
        readme_tokens: 0,
        full_tokens: 0,
        sub_specs: Vec::new(),
        readme_path: None,
    };
    for file in &spec.files {
        let m = measured
            .next()
            .unwrap_or_else(|| std::sync::Arc::new(Err(SkipReason::Unreadable("missing".into()))));
        let text = match m.as_ref() {
            Ok(text) => text,
            Err(issue) => {
                notes.push(format!(
                    "{}/{}: {}; not counted",
                    spec.id,
                    file.name,
                    SpecWords(issue)
                ));
                continue;
            }
        };
        // Relative to the spec folder, as in spec-tokens (`spec` names the folder).
        let path = file.name.clone();
        cost.full_tokens += text.tokens;
        if file.is_readme() {
            cost.readme_tokens = text.tokens;
            cost.readme_path = Some(path);
        } else {
            cost.sub_specs.push(FileTokens {
                path,
                tokens: text.tokens,
                lines: text.lines,
            });
        }
    }
    if cost.readme_path.is_none() {
        notes.push(format!("{}: no measurable README.md", spec.id));
    }
    cost
}

/// The answer for `costs` (in the caller's order) against `budget`.
pub(super) fn answer(
    costs: Vec<SpecCost>,
    budget: u64,
    model: &ResolvedModel<'_>,
    notes: Vec<String>,
) -> SpecBudget {
    let total_readme_only: u64 = costs.iter().map(|c| c.readme_tokens).sum();
    let total_full: u64 = costs.iter().map(|c| c.full_tokens).sum();
    let plan = plan(&costs, budget);
    SpecBudget {
        budget,
        model: ModelUsed::of(model),
        all_fit: total_full <= budget,
        all_fit_readme_only: total_readme_only <= budget,
        suggestion: suggestion(costs.len(), total_readme_only, total_full, budget, &plan),
        page: crate::answer::Page::of(0, costs.len(), costs.len()),
        specs: costs,
        total_readme_only,
        total_full,
        plan,
        notes,
    }
}

/// What to load, in words: everything, every README plus the plan, or the plan.
fn suggestion(
    specs: usize,
    total_readme_only: u64,
    total_full: u64,
    budget: u64,
    plan: &LoadPlan,
) -> String {
    if total_full <= budget {
        format!(
            "Everything fits: load all {specs} specs with their sub-specs ({total_full} tokens)."
        )
    } else if total_readme_only <= budget {
        format!(
            "All sub-specs together are over by {}: load every README ({total_readme_only} tokens) \
             plus the plan's sub-specs ({} tokens in all).",
            total_full - budget,
            plan.tokens
        )
    } else {
        format!(
            "Even the READMEs alone are over by {}: the plan loads the READMEs that fit, in the \
             order given ({} tokens).",
            total_readme_only - budget,
            plan.tokens
        )
    }
}
