//! `spec-budget`: do these specs fit a budget together, and what is the largest
//! README-first loading plan that does?

use context_budget::spec::SpecBudget;
use mcp_common::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::service::Service;
use crate::table::table;
use crate::tool::{Call, Rendered, Tool, paginate, wire_name};

pub struct SpecBudgetTool;

#[derive(Debug, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct SpecBudgetParams {
    /// Specs in priority order, as spec-tokens names them (`59`, `066-spec-tokens`).
    #[arg(
        required = true,
        help = "Specs in priority order (`59 66 archived/012`)"
    )]
    pub specs: Vec<String>,
    /// Token budget for all of them together.
    #[arg(long, help = "The token budget for all of them together")]
    pub budget: u64,
    /// Default `gpt-4`.
    #[arg(long, short, help = "Model or encoding name (default gpt-4)")]
    pub model: Option<String>,
    /// A previous answer's `next`; the plan covers all specs.
    #[serde(default)]
    #[arg(
        long,
        help = "Rows of per-spec costs to skip (the previous page's `next`)"
    )]
    pub offset: Option<usize>,
}

impl Tool for SpecBudgetTool {
    const NAME: &'static str = "spec-budget";
    const TITLE: &'static str = "Plan specs into a budget";
    const DESCRIPTION: &'static str = "Plan specs into one token budget: each spec's cost (README only, with \
sub-specs), whether all fit, and the largest plan that does, READMEs first.";
    const COMMAND: &'static str = "spec-budget";
    const ABOUT: &'static str = "Check several specs against one budget (the `spec-budget` tool)";
    const EXAMPLES: &'static str = "\
context-loader spec-budget 1 2 3 --budget 20000 --model gpt-4o";

    type Params = SpecBudgetParams;
    type Output = SpecBudget;

    async fn call(
        service: &Service,
        params: Self::Params,
        call: Call,
    ) -> Result<SpecBudget, ToolError> {
        let (names, budget) = (params.specs, params.budget);
        let mut answer = service
            .on_specs(params.model, &call, move |specs, model, scan| {
                specs.spec_budget(&names, budget, model, scan)
            })
            .await?;
        paginate(
            &mut answer,
            |a| &mut a.specs,
            |a| &mut a.page,
            (params.offset.unwrap_or(0), None),
            call.answer_limit,
        );
        Ok(answer)
    }

    fn warnings(output: &SpecBudget) -> Vec<String> {
        output.notes.clone()
    }

    fn render(output: SpecBudget) -> Rendered {
        Rendered::line(spec_budget(&output))
    }
}

fn spec_budget(b: &SpecBudget) -> String {
    let rows = b.specs.iter().map(|spec| {
        let (readme, full) = (spec.readme_tokens, spec.full_tokens);
        vec![readme.to_string(), full.to_string(), spec.spec.clone()]
    });
    let mut out = table(&["readme", "full", "spec"], &[0, 1], rows);
    out.push('\n');
    out.push_str(&format!(
        "budget {}: all with sub-specs {} ({}), READMEs only {} ({})\n",
        b.budget,
        b.total_full,
        if b.all_fit { "fits" } else { "over" },
        b.total_readme_only,
        if b.all_fit_readme_only {
            "fits"
        } else {
            "over"
        }
    ));
    out.push_str(&format!(
        "plan: {} tokens, {} left\n",
        b.plan.tokens, b.plan.remaining
    ));
    let rows = b.plan.specs.iter().map(|planned| {
        let load = wire_name(&planned.load);
        vec![load, planned.tokens.to_string(), planned.spec.clone()]
    });
    if !b.plan.specs.is_empty() {
        out.push_str(&table(&["load", "tokens", "spec"], &[1], rows));
        out.push('\n');
    }
    out.push_str(&b.suggestion);
    for note in &b.notes {
        out.push_str(&format!("\nnote: {note}"));
    }
    out
}
#[cfg(test)]
mod tests {
    use context_budget::TokenCounter;
    use context_budget::Unobserved;
    use context_budget::spec::SpecStore;

    use super::super::spec_tokens::tests::Specs;
    use super::*;

    #[test]
    fn a_spec_budget_shows_both_totals_and_the_plan() {
        let specs = Specs::new("budget");
        let store = SpecStore::new(&specs.0);
        let counter = TokenCounter::default();
        let model = counter.resolve(None).expect("gpt-4");
        let plan = store
            .spec_budget(&["59".to_string()], 100_000, &model, &Unobserved)
            .expect("plans");
        let text = spec_budget(&plan);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "readme  full  spec");
        assert_eq!(
            lines[2],
            format!(
                "budget 100000: all with sub-specs {} (fits), READMEs only {} (fits)",
                plan.total_full, plan.total_readme_only
            )
        );
        assert_eq!(
            lines[3],
            format!(
                "plan: {} tokens, {} left",
                plan.plan.tokens, plan.plan.remaining
            )
        );
        assert!(lines[4].starts_with("load"), "{text}");
        assert!(
            lines[5].starts_with(&wire_name(&plan.plan.specs[0].load)),
            "{text}"
        );
    }
}
