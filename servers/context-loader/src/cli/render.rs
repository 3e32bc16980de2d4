//! What a person reads: each tool's result as a sentence or a table. The JSON form
//! (`--json`) is the tool's structuredContent and needs no rendering.

use context_budget::files::{FileTokens, LoadedFiles};
use context_budget::spec::{SpecBudget, SpecListing, SpecReport, SpecTokens};
use context_budget::{AssembledContext, FittedMessages, ModelListing, TokenCount};
use serde::Serialize;

pub fn count(count: &TokenCount) -> String {
    let kind = if count.exact { "exact" } else { "estimate" };
    let mut line = format!(
        "{} tokens ({}, {}, {kind})",
        count.token_count, count.model, count.encoding
    );
    if let Some(window) = count.context_window {
        let share = count.token_count as f64 * 100.0 / window as f64;
        line.push_str(&format!(" = {share:.2}% of a {window}-token window"));
    }
    if let Some(cost) = count.estimated_input_cost_usd {
        line.push_str(&format!(", ~${cost:.6} as input"));
    }
    line
}

pub fn fit(fit: &FittedMessages) -> String {
    let kind = if fit.exact { "exact" } else { "estimate" };
    let total = fit.kept_indices.len() + fit.dropped_count;
    format!(
        "kept {} of {total} messages {}: {} of {} budget tokens ({}, window {}, {kind}), ~${:.6} as input",
        fit.kept_indices.len(),
        index_ranges(&fit.kept_indices),
        fit.total_tokens,
        fit.budget,
        fit.model,
        fit.context_window,
        fit.estimated_input_cost_usd
    )
}

/// `[0, 3-7, 9]`: kept indices as runs.
pub fn index_ranges(indices: &[usize]) -> String {
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let start = indices[i];
        while i + 1 < indices.len() && indices[i + 1] == indices[i] + 1 {
            i += 1;
        }
        runs.push(if indices[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", indices[i])
        });
        i += 1;
    }
    format!("[{}]", runs.join(", "))
}

pub fn assembly(assembled: &AssembledContext) -> String {
    let mut out = format!(
        "{:<20} {:>8} {:>8} {:>9} {:>6}\n",
        "section", "tokens", "budget", "truncated", "use"
    );
    for s in &assembled.sections {
        let state = match (&s.dropped, s.truncated) {
            (Some(_), _) => "dropped",
            (None, true) => "yes",
            (None, false) => "no",
        };
        out.push_str(&format!(
            "{:<20} {:>8} {:>8} {:>9} {:>5.0}%\n",
            s.name,
            s.tokens,
            s.budget,
            state,
            s.budget_utilization * 100.0
        ));
    }
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

pub fn models(listing: &ModelListing) -> String {
    let mut out = format!(
        "{:<20} {:<16} {:>5} {:>9} {:>8} {:>9} {:>9}\n",
        "model", "encoding", "exact", "window", "max out", "in $/1M", "out $/1M"
    );
    for m in &listing.models {
        out.push_str(&format!(
            "{:<20} {:<16} {:>5} {:>9} {:>8} {:>9.2} {:>9.2}\n",
            m.name,
            m.encoding,
            if m.exact { "yes" } else { "no" },
            m.context_window,
            m.max_output_tokens,
            m.input_usd_per_mtok,
            m.output_usd_per_mtok
        ));
    }
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
    out
}

pub fn spec_tokens(result: &SpecTokens) -> String {
    match result {
        SpecTokens::Spec(report) => spec_report(report),
        SpecTokens::Listing(listing) => spec_listing(listing),
    }
}

pub fn spec_report(r: &SpecReport) -> String {
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

pub fn spec_listing(l: &SpecListing) -> String {
    let mut out = format!("{:>8} {:>5}  {:<10} spec\n", "tokens", "files", "level");
    for row in &l.specs {
        // A row with an error is not graded.
        let level = row.level.map_or_else(|| "-".to_string(), |l| wire_name(&l));
        out.push_str(&format!(
            "{:>8} {:>5}  {:<10} {}",
            row.total, row.files, level, row.spec
        ));
        if let Some(title) = &row.title {
            out.push_str(&format!(" — {title}"));
        }
        if let Some(error) = &row.error {
            out.push_str(&format!("  [error: {error}]"));
        }
        out.push('\n');
    }
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
    if l.truncated {
        out.push_str(&format!("; showing {} (--limit 0 for all)", l.shown));
    }
    out.push_str(&format!(" [{}, {}]", l.model.model, l.model.encoding));
    out
}

pub fn spec_budget(b: &SpecBudget) -> String {
    let mut out = format!("{:>8} {:>8}  spec\n", "readme", "full");
    for spec in &b.specs {
        out.push_str(&format!(
            "{:>8} {:>8}  {}\n",
            spec.readme_tokens, spec.full_tokens, spec.spec
        ));
    }
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
    for planned in &b.plan.specs {
        out.push_str(&format!(
            "  {:<12} {:>8}  {}\n",
            wire_name(&planned.load),
            planned.tokens,
            planned.spec
        ));
    }
    out.push_str(&b.suggestion);
    for note in &b.notes {
        out.push_str(&format!("\nnote: {note}"));
    }
    out
}

/// How an enum value is spelled in the JSON output (`readme_only`, `good`).
fn wire_name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// `files`: the rows, the folders, the total and what it means, what was left out.
pub fn file_tokens(r: &FileTokens) -> String {
    let mut out = String::new();
    let kind = if r.model.exact { "exact" } else { "estimate" };
    for file in &r.files {
        let path = match &file.root {
            Some(root) => format!("{root}:{}", file.path),
            None => file.path.clone(),
        };
        out.push_str(&format!(
            "{path:<52} {:>9} tokens {:>7} lines\n",
            file.tokens, file.lines
        ));
    }
    if r.truncated {
        out.push_str("  ... (more rows: --limit 0 lists all)\n");
    }
    if r.folders.len() > 1 {
        out.push_str("by folder:\n");
        for folder in &r.folders {
            out.push_str(&format!(
                "  {:<50} {:>9} tokens {:>5} files\n",
                folder.path, folder.tokens, folder.files
            ));
        }
    }
    out.push_str(&format!(
        "total {} tokens in {} files ({}, {}, {kind})",
        r.total, r.files_measured, r.model.model, r.model.encoding
    ));
    if let Some(w) = &r.window {
        out.push_str(&format!(
            "; {}% of the {}-token window, ${:.4} as input",
            w.percent_of_window, w.context_window, w.estimated_input_cost_usd
        ));
    }
    out.push('\n');
    if !r.skipped_counts.is_empty() {
        let counts: Vec<String> = r
            .skipped_counts
            .iter()
            .map(|(reason, n)| format!("{n} {reason}"))
            .collect();
        out.push_str(&format!("skipped: {}\n", counts.join(", ")));
    }
    out.push_str(&format!(
        "excluded by ignore rules: {}; hidden: {}",
        r.excluded.ignored, r.excluded.hidden
    ));
    out
}

/// `load`'s report on stderr (the text itself goes to stdout).
pub fn loaded_files(r: &LoadedFiles) -> String {
    let mut out = format!(
        "loaded {} files: {} of {} tokens ({} budget; {}, {})",
        r.included.len(),
        r.tokens,
        r.budget,
        r.budget_source,
        r.model.model,
        r.model.encoding
    );
    let truncated = r.included.iter().filter(|f| f.truncated).count();
    if truncated > 0 {
        out.push_str(&format!("; {truncated} cut by --max-file-tokens"));
    }
    if !r.omitted.is_empty() {
        let shown: Vec<&str> = r.omitted.iter().take(5).map(|o| o.path.as_str()).collect();
        out.push_str(&format!(
            "\nomitted (over the budget): {}{}",
            shown.join(", "),
            if r.omitted.len() > 5 { ", ..." } else { "" }
        ));
    }
    if !r.skipped_counts.is_empty() {
        let counts: Vec<String> = r
            .skipped_counts
            .iter()
            .map(|(reason, n)| format!("{n} {reason}"))
            .collect();
        out.push_str(&format!("\nskipped: {}", counts.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use context_budget::Unobserved;
    use context_budget::spec::{SpecQuery, SpecStore};
    use context_budget::{Catalog, Message, Role, SectionReport, TokenCounter};

    use super::*;

    #[test]
    fn a_count_is_one_sentence_with_share_of_window_and_price() {
        let counter = TokenCounter::default();
        let exact = counter.count("hello world", None).expect("counts");
        assert_eq!(
            count(&exact),
            "2 tokens (gpt-4, cl100k_base, exact) = 0.02% of a 8192-token window, ~$0.000060 as input"
        );
        let estimate = counter
            .count("hello world", Some("claude"))
            .expect("counts");
        assert!(
            count(&estimate).starts_with(&format!(
                "{} tokens (claude-opus-4-7, claude_4_7_estimate, estimate) = ",
                estimate.token_count
            )),
            "{}",
            count(&estimate)
        );
        // A bare encoding has neither a window nor a price.
        let encoding = counter
            .count("hello world", Some("o200k_base"))
            .expect("counts");
        assert_eq!(count(&encoding), "2 tokens (o200k_base, o200k_base, exact)");
    }

    #[test]
    fn kept_indices_read_as_runs() {
        assert_eq!(index_ranges(&[]), "[]");
        assert_eq!(index_ranges(&[5]), "[5]");
        assert_eq!(index_ranges(&[0, 3, 4, 5, 6, 7, 9]), "[0, 3-7, 9]");
        assert_eq!(index_ranges(&[1, 2]), "[1-2]");
    }

    #[test]
    fn a_fit_says_what_was_kept_of_how_many_and_within_what() {
        let fitted = FittedMessages {
            messages: vec![
                Message::new(Role::System, "s"),
                Message::new(Role::User, "u"),
            ],
            kept_indices: vec![0, 3],
            dropped_count: 2,
            total_tokens: 120,
            budget: 7372,
            context_window: 8192,
            model: "gpt-4".into(),
            encoding: "cl100k_base",
            exact: true,
            method: "exact".into(),
            estimated_input_cost_usd: 0.0036,
            warning: None,
        };
        assert_eq!(
            fit(&fitted),
            "kept 2 of 4 messages [0, 3]: 120 of 7372 budget tokens (gpt-4, window 8192, exact), \
             ~$0.003600 as input"
        );
    }

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
            budget: 200,
            budget_utilization: 0.27,
            preset: None,
            model: "gpt-4".into(),
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
                "section                tokens   budget truncated    use",
                "system                      4       20        no    20%",
                "working_memory             50       50       yes   100%",
                "total 54 of 200 tokens (27%; gpt-4, exact)",
            ]
        );
    }

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
        let none = models(&catalog.listing(Some("zzz")));
        assert!(none.contains("no model matches; families: "), "{none}");
        assert!(
            none.ends_with(&format!("0 models; prices as of {}", catalog.as_of)),
            "{none}"
        );
    }

    /// A specs root with one spec (README with a title and status, one sub-spec).
    struct Specs(PathBuf);

    impl Specs {
        fn new(tag: &str) -> Specs {
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
        assert_eq!(lines[0], "  tokens files  level      spec");
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
        assert_eq!(lines[0], "  readme     full  spec");
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
        assert!(
            lines[4]
                .trim_start()
                .starts_with(&wire_name(&plan.plan.specs[0].load)),
            "{text}"
        );
    }
}
