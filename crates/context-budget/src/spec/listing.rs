//! A listing's rows and summary from measurements: a broken spec is a row with an
//! error, never a failed listing.

use super::layout::{SpecFile, SpecFolder};
use super::markdown::FrontmatterState;
use super::measure::{Breakdown, SpecWords};
use super::output::SpecRow;
use super::report::{LargestSpec, Level, LevelCounts, ListingSummary};
use super::scan::Measured;

/// One listing row; a broken spec becomes a row with an `error`, never a failure.
pub(super) fn row(spec: &SpecFolder, files: &[(&SpecFile, &Measured)], detailed: bool) -> SpecRow {
    let (mut total, mut counted) = (0u64, 0usize);
    let mut breakdown = Breakdown::default();
    let (mut errors, mut notes) = (Vec::new(), Vec::new());
    let (mut title, mut status) = (None, None);
    for (file, measured) in files {
        match measured.as_ref() {
            Ok(text) => {
                total += text.tokens;
                counted += 1;
                breakdown.add(&text.breakdown);
                if file.is_readme() {
                    let mut found = Vec::new();
                    (title, status) = text.title_and_status(&file.name, &mut found);
                    match &text.frontmatter {
                        FrontmatterState::Invalid(_) => errors.extend(found),
                        _ => notes.extend(found),
                    }
                }
            }
            Err(issue) if issue.is_skip() && !file.is_readme() => {
                notes.push(format!("{}: {}; skipped", file.name, SpecWords(issue)))
            }
            Err(issue) => errors.push(format!("{}: {}", file.name, SpecWords(issue))),
        }
    }
    if spec.readme().is_none() {
        errors.push("no README.md".into());
    }
    let error = (!errors.is_empty()).then(|| errors.join("; "));
    SpecRow {
        spec: spec.id.clone(),
        title,
        status,
        total,
        files: counted,
        level: error.is_none().then(|| Level::of(total)),
        breakdown: detailed.then_some(breakdown),
        error,
        notes,
    }
}

pub(super) fn summarize(rows: &[SpecRow], detailed: bool) -> ListingSummary {
    let mut levels = LevelCounts::default();
    let mut breakdown = Breakdown::default();
    for row in rows {
        if let Some(level) = row.level {
            levels.add(level);
        }
        if let Some(b) = &row.breakdown {
            breakdown.add(b);
        }
    }
    let total_tokens: u64 = rows.iter().map(|r| r.total).sum();
    ListingSummary {
        specs: rows.len(),
        total_tokens,
        average_tokens: if rows.is_empty() {
            0
        } else {
            (total_tokens as f64 / rows.len() as f64).round() as u64
        },
        largest: rows
            .iter()
            .max_by_key(|r| (r.total, std::cmp::Reverse(r.spec.clone())))
            .map(|r| LargestSpec {
                spec: r.spec.clone(),
                total: r.total,
            }),
        levels,
        with_errors: rows.iter().filter(|r| r.error.is_some()).count(),
        breakdown: detailed.then_some(breakdown),
    }
}
