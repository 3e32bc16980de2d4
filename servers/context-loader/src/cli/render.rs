//! What a person reads: each tool's result as a sentence or a table. The JSON form
//! (`--json`) is the tool's structuredContent and needs no rendering.

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
        out.push_str(&format!(
            "{:<20} {:>8} {:>8} {:>9} {:>5.0}%\n",
            s.name,
            s.tokens,
            s.budget,
            if s.truncated { "yes" } else { "no" },
            s.utilization * 100.0
        ));
    }
    out.push_str(&format!(
        "total {} of {} tokens ({}, {})",
        assembled.total_tokens,
        assembled.budget,
        assembled.model,
        if assembled.exact { "exact" } else { "estimate" }
    ));
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
        let level = wire_name(&row.level);
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
