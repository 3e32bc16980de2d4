//! How much of the answer the packed text may take: the budget (given, or the
//! model's default capped by the answer limit), less the report around the text
//! ([`Reserve`], measured on a stand-in answer); and whether every file fits that by
//! its bytes alone, so that none needs counting first.

use super::answer::list_rows;
use crate::answer::{HIGHEST_ESTIMATE, answer_text, js_length, json_escaped_len};
use crate::files::error::FilesError;
use crate::files::measure::{Measured, max_tokens_of_bytes};
use crate::files::output::{Excluded, FilesModel, Levels, WindowShare};
use crate::files::output::{IncludedFile, LoadedFiles, OmittedFile, Skipped, cap_skipped_to};
use crate::files::pack::{Detail, PackFormat, piece};
use crate::files::query::{DEFAULT_LOAD_ROWS, LoadRequest};
use crate::files::roots::Roots;
use crate::{ResolvedModel, Tokenizer};

/// The default `load-files` budget: 90 % of the window minus a reserve for the
/// answer (the model's output limit, at most an eighth of the window).
pub fn default_budget(model: &ResolvedModel<'_>) -> Option<u64> {
    let entry = model.entry()?;
    // The margin in whole percent, so the result is integer arithmetic as before
    // (a float product can land a hair under a whole number and floor one lower).
    let kept_percent = 100 - (crate::DEFAULT_MARGIN * 100.0).round() as u64;
    let usable = entry.context_window * kept_percent / 100;
    let reserve = entry
        .max_output_tokens
        .unwrap_or(u64::MAX)
        .min(entry.context_window / 8);
    Some(usable.saturating_sub(reserve))
}

/// The budget asked for, or the model's default capped by the server's answer
/// limit; with where it came from. A budget asked for over the answer limit is
/// refused: the answer could not be sent whole.
pub(super) fn budget(
    request: &LoadRequest,
    model: &ResolvedModel<'_>,
) -> Result<(u64, &'static str), FilesError> {
    let limit = request.answer_limit.tokens;
    Ok(match request.budget {
        Some(budget) if budget > limit => {
            return Err(FilesError::BudgetOverAnswerLimit { budget, limit });
        }
        Some(budget) => (budget, "given"),
        None => {
            let default = default_budget(model).ok_or_else(|| FilesError::NoDefaultBudget {
                model: model.name().to_string(),
            })?;
            match default > limit {
                true => (limit, "answer_limit"),
                false => (default, "default"),
            }
        }
    })
}

/// What the packed text may take of the answer: the budget, the answer limit's
/// characters, bytes and tokens, each less what the report around the text takes.
///
/// The report is measured before packing on a stand-in answer: the real model,
/// roots, skipped and excluded rows, numbers as wide as they can get, and as list
/// rows the first and last files measured. [`Packing::finish`] then measures the
/// real answer and drops pieces while it is over, so the stand-in only has to be
/// close for the budget to be used, never exact for it to hold.
///
/// [`Packing::finish`]: super::packing::Packing::finish
#[derive(Debug, Clone, Copy)]
pub(super) struct Reserve {
    /// Tokens (for the request's model) the escaped text may take.
    pub(super) text_tokens: u64,
    /// Tokens by [`HIGHEST_ESTIMATE`] the escaped text may take.
    pub(super) text_high: u64,
    /// Characters (UTF-16) the escaped text may take.
    pub(super) text_chars: usize,
    /// UTF-8 bytes the escaped text may take.
    pub(super) text_bytes: usize,
}

impl Reserve {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn of(
        request: &LoadRequest,
        model: &ResolvedModel<'_>,
        roots: &Roots,
        (budget, budget_source): (u64, &'static str),
        measured: &[Measured],
        skipped: &[Skipped],
        excluded: &Excluded,
    ) -> Result<Reserve, FilesError> {
        let rows = list_rows(request);
        let row_of = |m: &Measured| IncludedFile {
            path: m.candidate.relative.clone(),
            root: roots.label(m.candidate.root),
            tokens: m.measure.tokens,
            truncated: request.max_file_tokens.is_some(),
            // Room for the widest a row says of its detail.
            detail: (!request.detail.is_full()).then_some("outline"),
            no_outline: (request.detail == Detail::Outline).then_some("no_grammar"),
        };
        let included: Vec<IncludedFile> = measured.iter().take(rows).map(row_of).collect();
        let omitted: Vec<OmittedFile> = measured
            .iter()
            .rev()
            .take(rows)
            .map(|m| OmittedFile {
                path: m.candidate.relative.clone(),
                root: roots.label(m.candidate.root),
                tokens: m.measure.tokens,
                reason: "over_budget",
            })
            .collect();
        let (skipped, skipped_counts) = cap_skipped_to(skipped.to_vec(), rows);
        let mut excluded = excluded.clone();
        excluded.ignored_examples.truncate(rows);
        let wide = budget.max(request.answer_limit.tokens).saturating_mul(10);
        let stand_in = LoadedFiles {
            model: FilesModel::of(model),
            roots: roots.shown_paths(),
            budget,
            budget_source,
            // Room for the limit's name, should it bind.
            answer_limit: Some(request.answer_limit.to_string()),
            answer_tokens: wide,
            tokens: wide,
            format: request.format,
            order: request.order(),
            detail: request.detail,
            // Numbers as wide as they can get.
            levels: (request.detail == Detail::Auto).then_some(Levels {
                full: measured.len(),
                outline: measured.len(),
                path: measured.len(),
            }),
            window: WindowShare::of(model, wide),
            included_files: measured.len(),
            omitted_files: measured.len(),
            omitted_tokens: wide.saturating_mul(1000),
            rows: request.rows.unwrap_or(DEFAULT_LOAD_ROWS),
            truncated: true,
            included,
            omitted,
            skipped,
            skipped_counts,
            excluded,
            text: String::new(),
        };
        let report = answer_text(&stand_in);
        let tokenizer = model.tokenizer();
        let tokens = tokenizer.count(&report) as u64;
        // Where pieces meet, the whole text's count may differ from the pieces' by a
        // token or so: a little is kept back for it.
        let slack = 4 + budget / 200;
        if tokens + slack > budget {
            return Err(FilesError::BudgetBelowReport {
                budget,
                envelope: tokens,
                rows: request.rows.unwrap_or(DEFAULT_LOAD_ROWS),
            });
        }
        let limit = request.answer_limit;
        let high = HIGHEST_ESTIMATE.count(&report) as u64;
        Ok(Reserve {
            text_tokens: budget - tokens - slack,
            text_high: limit.tokens.saturating_sub(high + 4 + limit.tokens / 200),
            text_chars: limit.chars.saturating_sub(js_length(&report) + 16),
            text_bytes: limit.bytes.saturating_sub(report.len() + 16),
        })
    }
}

/// The bytes of every piece together, and whether they fit the text's share of the
/// answer whatever they count.
///
/// A token of cl100k/o200k covers at least one byte, so a text counts at most its
/// length in tokens (the Claude estimate at most 1.9 per byte, rounded up), and the
/// length that matters is the escaped one the answer's JSON holds: each file's was
/// taken as it was read ([`FileMeasure::escaped`]), its piece's frame is escaped
/// here, and a Markdown fence grows past three backticks only with a longer run in
/// the file (two fences, at most two bytes per byte of it). When every piece
/// together is within the reserve by those bounds, all of them fit and counting
/// each file first would be wasted work: the one count of the answer
/// ([`Packing::finish`]) proves it.
///
/// [`FileMeasure::escaped`]: crate::files::FileMeasure::escaped
/// [`Packing::finish`]: super::packing::Packing::finish
pub(super) fn all_fit_by_bytes(
    measured: &[Measured],
    request: &LoadRequest,
    tokenizer: Tokenizer,
    reserve: &Reserve,
) -> (u64, bool) {
    let (mut packed_bytes, mut escaped) = (0u64, 0u64);
    for m in measured {
        let frame = piece(request.format, &m.candidate.relative, "");
        let fence_growth = match request.format {
            PackFormat::Markdown => 2 * m.measure.bytes,
            PackFormat::Xml | PackFormat::Plain => 0,
        };
        // The newline a piece adds after a text that does not end with one. (A
        // longer fence is rare: the text's capacity does not reserve for it.)
        packed_bytes += m.measure.bytes + 1 + frame.len() as u64;
        escaped += m.measure.escaped + 2 + json_escaped_len(&frame) + fence_growth;
    }
    let fits = max_tokens_of_bytes(tokenizer, escaped) <= reserve.text_tokens
        && max_tokens_of_bytes(HIGHEST_ESTIMATE, escaped) <= reserve.text_high
        && escaped <= reserve.text_chars as u64
        && escaped <= reserve.text_bytes as u64;
    (packed_bytes, fits)
}
