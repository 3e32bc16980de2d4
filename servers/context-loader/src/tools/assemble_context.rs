//! `assemble-context`: build a prompt from sections within a token budget.

use std::path::PathBuf;

use context_budget::{AssembleOptions, AssembledContext, Section, assemble_context};
use mcp_common::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::errors::tool_error;
use crate::service::Service;
use crate::table::table;
use crate::tool::{Call, Rendered, Tool};

pub struct AssembleContextTool;

#[derive(Debug, Clone, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct AssembleContextParams {
    /// Lower `priority` goes first. `system`, `tool_definitions`, `working_memory`,
    /// `semantic_search`, `archives` (or a preset's layers) have default budgets and
    /// priorities.
    #[schemars(schema_with = "mcp_common::schema::shape_only::<Vec<Section>>")]
    #[arg(skip)]
    pub sections: Vec<Section>,
    /// Total tokens. Default 90% of the window (or the preset's total).
    #[arg(
        long,
        short,
        help = "Total tokens for the assembled text (default: 90 % of the model's window)"
    )]
    pub budget: Option<u64>,
    /// Default `gpt-4`.
    #[arg(long, short, help = "Model whose tokenizer counts (default gpt-4)")]
    pub model: Option<String>,
    /// `adr-layered`: the budgeting ADR's eight layers (a section's `budget` adjusts its
    /// layer's).
    #[arg(
        long,
        help = "A named layout whose layers the sections name (`adr-layered`: the token-budgeting ADR's eight layers, 76,000 tokens)"
    )]
    pub preset: Option<String>,
    /// JSON file with the sections (command line only).
    #[serde(skip)]
    #[arg(
        help = "JSON file with the sections (an array, or `{\"sections\": [...]}`); `-` or nothing reads stdin."
    )]
    pub file: Option<PathBuf>,
}

impl Tool for AssembleContextTool {
    const NAME: &'static str = "assemble-context";
    const TITLE: &'static str = "Assemble context";
    const DESCRIPTION: &'static str = "Build a prompt from prioritized sections within a token budget (and each \
section's own): an over-budget section is cut at a token boundary with a mark, or dropped with a reason. \
Returns the text and per-section tokens.";
    const COMMAND: &'static str = "assemble";
    const ABOUT: &'static str =
        "Assemble a prompt from sections (JSON) within a budget (the `assemble-context` tool)";
    const EXAMPLES: &'static str = "\
echo '{\"sections\":[{\"name\":\"system\",\"content\":\"Be brief.\"}]}' | context-loader assemble --budget 100 --model gpt-4o";
    const JSON_HELP: &'static str = "Print the JSON result (errors too); otherwise the text goes to stdout and a per-section summary to stderr";

    type Params = AssembleContextParams;
    type Output = AssembledContext;

    async fn call(
        service: &Service,
        params: Self::Params,
        call: Call,
    ) -> Result<AssembledContext, ToolError> {
        // Truncation re-tokenizes sections, and the exact pass may wait on the
        // network: always off the async workers.
        let layer_budgets = service.layer_budgets();
        service
            .counting(usize::MAX, &call, move |counter, exact, _| {
                let options = AssembleOptions {
                    model: params.model.as_deref(),
                    budget: params.budget,
                    preset: params.preset.as_deref(),
                    layer_budgets: Some(&layer_budgets),
                };
                assemble_context(counter, &params.sections, &options, exact).map_err(tool_error)
            })
            .await
    }

    fn from_command_line(
        params: Self::Params,
        service: &Service,
    ) -> Result<Self::Params, ToolError> {
        let sections =
            crate::input::json_list(service.counter(), params.file.as_deref(), "sections")?;
        Ok(AssembleContextParams { sections, ..params })
    }

    fn warnings(output: &AssembledContext) -> Vec<String> {
        output.warning.iter().cloned().collect()
    }

    /// The text is the output; the summary goes beside it, on stderr.
    fn render(output: AssembledContext) -> Rendered {
        Rendered {
            stderr: Some(assembly(&output)),
            stdout: output.text,
            product: true,
            exact: false,
        }
    }
}

fn assembly(assembled: &AssembledContext) -> String {
    let rows = assembled.sections.iter().map(|s| {
        let state = match (&s.dropped, s.truncated) {
            (Some(_), _) => "dropped",
            (None, true) => "yes",
            (None, false) => "no",
        };
        vec![
            s.name.clone(),
            s.tokens.to_string(),
            s.budget.to_string(),
            state.to_string(),
            format!("{:.0}%", s.budget_utilization * 100.0),
        ]
    });
    let headers = ["section", "tokens", "budget", "truncated", "use"];
    let mut out = table(&headers, &[1, 2, 4], rows);
    out.push('\n');
    for s in &assembled.sections {
        if let Some(reason) = &s.dropped {
            out.push_str(&format!("dropped {}: {reason}\n", s.name));
        }
    }
    out.push_str(&format!(
        "total {} of {} tokens ({:.0}%; {}, {})",
        assembled.total_tokens,
        assembled.budget,
        assembled.budget_utilization * 100.0,
        assembled.model,
        if assembled.exact { "exact" } else { "estimate" }
    ));
    if let Some(warning) = &assembled.warning {
        out.push_str(&format!("\nwarning: {warning}"));
    }
    out
}
#[cfg(test)]
mod tests {
    use context_budget::SectionReport;

    use super::*;

    #[test]
    fn an_assembly_is_a_table_of_sections_and_a_total() {
        let section = |name: &str, tokens, budget, truncated, budget_utilization| SectionReport {
            name: name.into(),
            priority: 0,
            tokens,
            budget,
            original_tokens: tokens,
            truncated,
            dropped: None,
            budget_utilization,
        };
        let assembled = AssembledContext {
            text: "Be brief.\n\nword".into(),
            total_tokens: 54,
            answer_tokens: 150,
            budget: 200,
            budget_utilization: 0.27,
            preset: None,
            model: "gpt-4".into(),
            requested_model: None,
            encoding: "cl100k_base",
            exact: true,
            method: "exact: OpenAI cl100k_base BPE",
            truncated_sections: 1,
            dropped_sections: 0,
            sections: vec![
                section("system", 4, 20, false, 0.2),
                section("working_memory", 50, 50, true, 1.0),
            ],
            estimated_input_cost_usd: None,
            warning: None,
        };
        let lines: Vec<String> = assembly(&assembled).lines().map(str::to_string).collect();
        assert_eq!(
            lines,
            [
                "section         tokens  budget  truncated   use",
                "system               4      20  no          20%",
                "working_memory      50      50  yes        100%",
                "total 54 of 200 tokens (27%; gpt-4, exact)",
            ]
        );
    }
}
