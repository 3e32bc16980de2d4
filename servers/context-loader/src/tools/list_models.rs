//! `list-models`: the catalog, with windows, prices and whether counts are exact.

use context_budget::ModelListing;
use mcp_common::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::service::Service;
use crate::table::table;
use crate::tool::{Call, Rendered, Tool, paginate, row_limit};

pub struct ListModelsTool;

#[derive(Debug, Default, Deserialize, JsonSchema, clap::Args)]
pub struct ListModelsParams {
    /// Name or family prefix, e.g. `claude` or `gpt-4o`.
    #[arg(help = "Name or family prefix, e.g. `claude` or `gpt-4.1`")]
    pub filter: Option<String>,
    /// Rows (default 100; 0 = all).
    #[arg(
        long,
        help = "Most models listed (default 100; 0 = all, within the answer limit)"
    )]
    pub limit: Option<usize>,
    /// A previous answer's `next`.
    #[arg(long, help = "Models to skip (the previous page's `next`)")]
    pub offset: Option<usize>,
}

impl Tool for ListModelsTool {
    const NAME: &'static str = "list-models";
    const TITLE: &'static str = "List models";
    const DESCRIPTION: &'static str = "List known models: encoding, exactness, context window, max output \
tokens, USD per 1M input/output tokens.";
    const COMMAND: &'static str = "models";
    const ABOUT: &'static str =
        "List supported models with windows and prices (the `list-models` tool)";
    const EXAMPLES: &'static str = "\
context-loader models claude\n\
context-loader models gpt-4o --json";

    type Params = ListModelsParams;
    type Output = ModelListing;

    async fn call(
        service: &Service,
        params: Self::Params,
        call: Call,
    ) -> Result<ModelListing, ToolError> {
        let mut listing = service
            .counter()
            .catalog()
            .listing(params.filter.as_deref());
        paginate(
            &mut listing,
            |l| &mut l.models,
            |l| &mut l.page,
            (params.offset.unwrap_or(0), row_limit(params.limit)),
            call.answer_limit,
        );
        Ok(listing)
    }

    fn render(output: ModelListing) -> Rendered {
        Rendered::line(models(&output))
    }
}

fn models(listing: &ModelListing) -> String {
    // A models file may leave the output limit and prices out: `-`, not 0.
    let or_dash = |value: Option<String>| value.unwrap_or_else(|| "-".to_string());
    let rows = listing.models.iter().map(|m| {
        vec![
            m.name.clone(),
            m.encoding.to_string(),
            if m.exact { "yes" } else { "no" }.to_string(),
            m.context_window.to_string(),
            or_dash(m.max_output_tokens.map(|t| t.to_string())),
            or_dash(m.input_usd_per_mtok.map(|p| format!("{p:.2}"))),
            or_dash(m.output_usd_per_mtok.map(|p| format!("{p:.2}"))),
        ]
    });
    let headers = [
        "model", "encoding", "exact", "window", "max out", "in $/1M", "out $/1M",
    ];
    let mut out = table(&headers, &[3, 4, 5, 6], rows);
    out.push('\n');
    if listing.models.is_empty() {
        out.push_str(&format!(
            "no model matches; families: {}\n",
            listing.families.join(", ")
        ));
    }
    out.push_str(&format!(
        "{} models; prices as of {}",
        listing.count, listing.as_of
    ));
    if let Some(next) = listing.page.next {
        out.push_str(&format!(
            "\nshown {}-{}; more with --offset {next}",
            listing.page.offset + 1,
            next
        ));
    }
    out
}
#[cfg(test)]
mod tests {
    use context_budget::Catalog;

    use super::*;

    #[test]
    fn a_listing_has_a_row_per_model_or_says_which_families_exist() {
        let catalog = Catalog::builtin();
        let listing = catalog.listing(Some("gpt-4o"));
        let text = models(&listing);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("model") && lines[0].ends_with("out $/1M"),
            "{text}"
        );
        assert!(
            lines[1].starts_with("gpt-4o ")
                && lines[1].contains(" o200k_base ")
                && lines[1].contains(" yes "),
            "{text}"
        );
        assert_eq!(
            lines.last().copied(),
            Some(format!("{} models; prices as of {}", listing.count, listing.as_of).as_str())
        );
        // A models-file entry without an output limit or prices: `-`, never 0.
        let unpriced = catalog
            .with_models_file(
                r#"{"models": [{"name": "acme-local", "family": "acme",
                    "tokenizer": "cl100k_base", "context_window": 32000}]}"#,
                "m.json",
                std::path::Path::new("."),
            )
            .expect("valid");
        let text = models(&unpriced.listing(Some("acme-local")));
        let row = text.lines().nth(1).expect("a row");
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            ["acme-local", "cl100k_base", "yes", "32000", "-", "-", "-"],
            "{text}"
        );
        let none = models(&catalog.listing(Some("zzz")));
        assert!(none.contains("no model matches; families: "), "{none}");
        assert!(
            none.ends_with(&format!("0 models; prices as of {}", catalog.as_of)),
            "{none}"
        );
    }
}
