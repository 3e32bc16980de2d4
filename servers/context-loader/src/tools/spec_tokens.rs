//! `spec-tokens`: what a spec costs before loading it, or a listing of every spec.

use context_budget::spec::{SortOrder, SpecListing, SpecQuery, SpecReport, SpecTokens};
use mcp_common::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::service::Service;
use crate::table::table;
use crate::tool::{Call, Rendered, Tool, paginate, row_limit, wire_name, wire_value};

pub struct SpecTokensTool;

#[derive(Debug, Default, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct SpecTokensParams {
    /// A spec: number (`59`), folder or name (`token-engine`), or sub-spec
    /// (`059/DESIGN.md`). Omit to list every spec.
    #[serde(rename = "specPath")]
    #[arg(
        value_name = "SPEC",
        help = "Spec to measure (`59`, `059-name`, `name`, `059/DESIGN.md`); omit to list all"
    )]
    pub spec_path: Option<String>,
    /// Count sub-specs too, not only the README.
    #[serde(rename = "includeSubSpecs", default)]
    #[arg(long, help = "Count sub-spec files too (default: README.md only)")]
    pub include_sub_specs: bool,
    /// Add the prose/code/tables breakdown.
    #[serde(default)]
    #[arg(
        long,
        help = "Add the breakdown (prose/code/tables/frontmatter) and performance figures"
    )]
    pub detailed: bool,
    /// Default `gpt-4`.
    #[arg(long, short, help = "Model or encoding name (default gpt-4)")]
    pub model: Option<String>,
    /// A budget to check the spec against.
    #[arg(long, help = "Token budget to check against")]
    pub budget: Option<u64>,
    /// Default `tokens`.
    #[arg(long, value_parser = wire_value::<SortOrder>(), help = "Listing order")]
    pub sort: Option<SortOrder>,
    /// Only specs up to this many tokens.
    #[arg(long, help = "Listing filter: at most this many tokens")]
    pub max_tokens: Option<u64>,
    /// Only specs from this many tokens.
    #[arg(long, help = "Listing filter: at least this many tokens")]
    pub min_tokens: Option<u64>,
    /// Rows (default 100; 0 = all).
    #[arg(
        long,
        help = "Most rows to list (default 100; 0 = all, within the answer limit)"
    )]
    pub limit: Option<usize>,
    /// A previous answer's `next`.
    #[arg(long, help = "Listing rows to skip (the previous page's `next`)")]
    pub offset: Option<usize>,
}

impl Tool for SpecTokensTool {
    const NAME: &'static str = "spec-tokens";
    const TITLE: &'static str = "Measure specs";
    const DESCRIPTION: &'static str = "Measure spec documents (`NNN-name/` folders) before loading them: one \
spec's tokens per file and whether it fits a `budget`, or, without `specPath`, every spec's total.";
    const COMMAND: &'static str = "spec-tokens";
    const ABOUT: &'static str = "Measure one spec or list all specs (the `spec-tokens` tool)";
    const EXAMPLES: &'static str = "\
context-loader spec-tokens\n\
context-loader spec-tokens 3 --include-sub-specs --detailed\n\
context-loader spec-tokens --sort name --max-tokens 20000";

    type Params = SpecTokensParams;
    type Output = SpecTokens;

    async fn call(
        service: &Service,
        params: Self::Params,
        call: Call,
    ) -> Result<SpecTokens, ToolError> {
        let query = SpecQuery {
            spec_path: params.spec_path,
            include_sub_specs: params.include_sub_specs,
            detailed: params.detailed,
            budget: params.budget,
            sort: params.sort.unwrap_or_default(),
            min_tokens: params.min_tokens,
            max_tokens: params.max_tokens,
            // Rows are paged here, within the answer limit too.
            limit: None,
        };
        let mut answer = service
            .on_specs(params.model, &call, move |specs, model, scan| {
                specs.spec_tokens(&query, model, scan)
            })
            .await?;
        if let SpecTokens::Listing(listing) = &mut answer {
            paginate(
                &mut **listing,
                |l| &mut l.specs,
                |l| &mut l.page,
                (params.offset.unwrap_or(0), row_limit(params.limit)),
                call.answer_limit,
            );
            listing.shown = listing.specs.len();
        }
        Ok(answer)
    }

    /// A spec's notes; a listing's broken specs and notes, each named.
    fn warnings(output: &SpecTokens) -> Vec<String> {
        match output {
            SpecTokens::Spec(report) => report.notes.clone(),
            SpecTokens::Listing(listing) => {
                let rows = listing.specs.iter().flat_map(|row| {
                    let error = row.error.iter();
                    error
                        .chain(&row.notes)
                        .map(|message| format!("{}: {message}", row.spec))
                });
                rows.chain(listing.notes.iter().cloned()).collect()
            }
        }
    }

    fn render(output: SpecTokens) -> Rendered {
        Rendered::line(spec_tokens(&output))
    }
}

fn spec_tokens(result: &SpecTokens) -> String {
    match result {
        SpecTokens::Spec(report) => spec_report(report),
        SpecTokens::Listing(listing) => spec_listing(listing),
    }
}
fn spec_report(r: &SpecReport) -> String {
    let mut out = r.spec.clone();
    if let Some(title) = &r.title {
        out.push_str(&format!(" — {title}"));
    }
    if let Some(status) = &r.status {
        out.push_str(&format!(" [{status}]"));
    }
    out.push('\n');
    for file in &r.files {
        out.push_str(&format!(
            "  {:<44} {:>8} tokens {:>6} lines\n",
            file.path, file.tokens, file.lines
        ));
    }
    for file in &r.excluded_sub_specs {
        out.push_str(&format!(
            "  {:<44} {:>8} tokens (not counted; --include-sub-specs)\n",
            file.path, file.tokens
        ));
    }
    let kind = if r.model.exact { "exact" } else { "estimate" };
    out.push_str(&format!(
        "  total {} tokens ({}, {}, {kind})\n",
        r.total, r.model.model, r.model.encoding
    ));
    if let Some(b) = &r.breakdown {
        out.push_str(&format!(
            "  breakdown: prose {} · code {} · tables {} · frontmatter {}\n",
            b.prose, b.code, b.tables, b.frontmatter
        ));
    }
    if let Some(p) = &r.performance {
        out.push_str(&format!(
            "  performance: {}, cost x{:.1}, effectiveness {}%\n",
            wire_name(&p.level),
            p.cost_multiplier,
            p.effectiveness
        ));
    }
    if let Some(b) = &r.budget {
        let verdict = if b.fits {
            "fits".to_string()
        } else {
            format!("over by {}", b.over_by)
        };
        out.push_str(&format!(
            "  budget {}: {verdict}. {}\n",
            b.budget, b.suggestion
        ));
    }
    if let Some(rec) = &r.recommendation {
        out.push_str(&format!("  recommendation: {rec}\n"));
    }
    for note in &r.notes {
        out.push_str(&format!("  note: {note}\n"));
    }
    out.trim_end().to_string()
}
fn spec_listing(l: &SpecListing) -> String {
    let rows = l.specs.iter().map(|row| {
        // A row with an error is not graded.
        let level = row.level.map_or_else(|| "-".to_string(), |l| wire_name(&l));
        let mut spec = row.spec.clone();
        if let Some(title) = &row.title {
            spec.push_str(&format!(" — {title}"));
        }
        if let Some(error) = &row.error {
            spec.push_str(&format!("  [error: {error}]"));
        }
        vec![row.total.to_string(), row.files.to_string(), level, spec]
    });
    let mut out = table(&["tokens", "files", "level", "spec"], &[0, 1], rows);
    out.push('\n');
    let s = &l.summary;
    out.push_str(&format!(
        "{} specs, {} tokens, average {}",
        s.specs, s.total_tokens, s.average_tokens
    ));
    if let Some(largest) = &s.largest {
        out.push_str(&format!(", largest {} ({})", largest.spec, largest.total));
    }
    if s.with_errors > 0 {
        out.push_str(&format!(", {} with errors", s.with_errors));
    }
    if l.page.truncated {
        out.push_str(&format!("; showing {} (--limit 0 for all)", l.shown));
    }
    out.push_str(&format!(" [{}, {}]", l.model.model, l.model.encoding));
    out
}
#[cfg(test)]
pub(super) mod tests {
    use std::path::PathBuf;

    use context_budget::TokenCounter;
    use context_budget::Unobserved;
    use context_budget::spec::SpecStore;

    use super::*;

    /// A specs root with one spec (README with a title and status, one sub-spec).
    pub(in crate::tools) struct Specs(pub PathBuf);

    impl Specs {
        pub(in crate::tools) fn new(tag: &str) -> Specs {
            let root = std::env::temp_dir().join(format!("cl-render-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            let spec = root.join("059-token-engine");
            std::fs::create_dir_all(&spec).expect("mkdir");
            std::fs::write(
                spec.join("README.md"),
                "---\nstatus: planned\n---\n# Token engine\n\nCount tokens exactly.\n",
            )
            .expect("write");
            std::fs::write(spec.join("DESIGN.md"), "# Design\n\nMore prose here.\n")
                .expect("write");
            Specs(root)
        }
    }

    impl Drop for Specs {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_spec_report_names_the_spec_its_files_and_its_total() {
        let specs = Specs::new("report");
        let store = SpecStore::new(&specs.0);
        let counter = TokenCounter::default();
        let model = counter.resolve(None).expect("gpt-4");
        let query = SpecQuery {
            spec_path: Some("59".into()),
            budget: Some(1),
            ..SpecQuery::default()
        };
        let result = store
            .spec_tokens(&query, &model, &Unobserved)
            .expect("measures");
        let SpecTokens::Spec(report) = &result else {
            panic!("one spec");
        };
        let text = spec_tokens(&result);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "059-token-engine — Token engine [planned]");
        assert!(lines[1].trim_start().starts_with("README.md"), "{text}");
        assert!(
            text.contains("DESIGN.md") && text.contains("(not counted; --include-sub-specs)"),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "  total {} tokens (gpt-4, cl100k_base, exact)",
                report.total
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!("  budget 1: over by {}.", report.total - 1)),
            "{text}"
        );
    }
    #[test]
    fn a_spec_listing_has_a_row_per_spec_and_a_summary() {
        let specs = Specs::new("listing");
        let store = SpecStore::new(&specs.0);
        let counter = TokenCounter::default();
        let model = counter.resolve(None).expect("gpt-4");
        let result = store
            .spec_tokens(&SpecQuery::default(), &model, &Unobserved)
            .expect("lists");
        let SpecTokens::Listing(listing) = &result else {
            panic!("a listing");
        };
        let total = listing.summary.total_tokens;
        let text = spec_tokens(&result);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "tokens  files  level      spec");
        assert!(
            lines[1].ends_with(" 059-token-engine — Token engine"),
            "{text}"
        );
        assert_eq!(
            lines[2],
            format!(
                "1 specs, {total} tokens, average {total}, largest 059-token-engine ({total}) \
                 [gpt-4, cl100k_base]"
            )
        );
    }
}
