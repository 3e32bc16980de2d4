//! `load-files` in steps: the budget, which files need counting, the packing
//! order, packing batch by batch (files read again, cut, kept or omitted), and the
//! exact count of the packed text that proves it fits. [`load_files`] runs them in
//! order; [`super::FileStore::load_files`] only hands it the store's cache and limits.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::error::FilesError;
use super::measure::{Measured, Measurer, Reading, walk_while_loading};
use super::open::reopen;
use super::output::{Excluded, FilesModel, WindowShare};
use super::output::{IncludedFile, LoadedFiles, OmittedFile, Skipped, cap_skipped_to};
use super::pack::{PackFormat, PackOrder, cut, piece, push_piece};
use super::query::{DEFAULT_LOAD_ROWS, FileLimits, FileQuery, LoadRequest};
use super::roots::Roots;
use super::walk::walk_query;
use crate::answer::{
    HIGHEST_ESTIMATE, answer_text, count_itself_until, js_length, json_escaped, json_escaped_len,
};
use crate::cache::FileStamp;
use crate::read::SkipReason;
use crate::scan_control::ScanControl;
use crate::{ResolvedModel, Tokenizer};

/// `load-files`: the files `query` reaches, packed into `request.budget` tokens;
/// `measurer` holds the store's cache and limits and this call's roots and control.
pub(super) fn load_files(
    measurer: &Measurer<'_>,
    query: &FileQuery,
    request: &LoadRequest,
    model: &ResolvedModel<'_>,
) -> Result<LoadedFiles, FilesError> {
    let budget = budget(request, model)?;
    let tokenizer = model.tokenizer();
    let (roots, limits, control) = (measurer.roots, measurer.limits, measurer.control);
    let walked = walk_while_loading(tokenizer, || walk_query(roots, query, limits, control))?;
    let (mut measured, mut skipped) =
        measurer.measure(walked.candidates, reading(request), walked.entries)?;
    skipped.splice(0..0, walked.skipped);
    let reserve = Reserve::of(
        request,
        model,
        roots,
        budget,
        &measured,
        &skipped,
        &walked.excluded,
    )?;
    let fit_by_bytes = all_fit_by_bytes(&measured, request, tokenizer, &reserve);
    if !fit_by_bytes.1 {
        measurer.count_missing(&mut measured)?;
    }
    order(&mut measured, request.order);
    let mut packing = Packing::new(request, measurer, (budget.0, reserve), fit_by_bytes);
    packing.pack(measurer, &mut measured, walked.entries, &mut skipped)?;
    packing.finish(model, budget.1, skipped, walked.excluded)
}

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
fn budget(
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

/// Rows listed per list: `rows`, [`DEFAULT_LOAD_ROWS`] when not given, every row
/// (`usize::MAX`) for 0.
fn list_rows(request: &LoadRequest) -> usize {
    match request.rows.unwrap_or(DEFAULT_LOAD_ROWS) {
        0 => usize::MAX,
        n => n,
    }
}

/// What the packed text may take of the answer: the budget, the answer limit's
/// characters and tokens, each less what the report around the text takes.
///
/// The report is measured before packing on a stand-in answer: the real model,
/// roots, skipped and excluded rows, numbers as wide as they can get, and as list
/// rows the first and last files measured. [`Packing::finish`] then measures the
/// real answer and drops pieces while it is over, so the stand-in only has to be
/// close for the budget to be used, never exact for it to hold.
#[derive(Debug, Clone, Copy)]
struct Reserve {
    /// Tokens (for the request's model) the escaped text may take.
    text_tokens: u64,
    /// Tokens by [`HIGHEST_ESTIMATE`] the escaped text may take.
    text_high: u64,
    /// Characters (UTF-16) the escaped text may take.
    text_chars: usize,
}

impl Reserve {
    #[allow(clippy::too_many_arguments)]
    fn of(
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
            answer_tokens: wide,
            tokens: wide,
            format: request.format,
            order: request.order,
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
        })
    }
}

/// Whether every file must be counted up front: counts decide the order and the
/// cuts; otherwise they are needed only when the files might not all fit, which
/// their bytes can rule out ([`all_fit_by_bytes`]).
fn needs_counts(request: &LoadRequest) -> bool {
    request.order == PackOrder::Smallest || request.max_file_tokens.is_some()
}

/// How [`Measurer::measure`] reads for `request`.
fn reading(request: &LoadRequest) -> Reading {
    if needs_counts(request) {
        Reading::Count
    } else {
        Reading::Check
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
/// [`FileMeasure::escaped`]: super::measure::FileMeasure::escaped
fn all_fit_by_bytes(
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
    let fits = super::measure::max_tokens_of_bytes(tokenizer, escaped) <= reserve.text_tokens
        && super::measure::max_tokens_of_bytes(HIGHEST_ESTIMATE, escaped) <= reserve.text_high
        && escaped <= reserve.text_chars as u64;
    (packed_bytes, fits)
}

/// Put `measured` in the order the request packs them.
fn order(measured: &mut [Measured], order: PackOrder) {
    match order {
        PackOrder::Given => {}
        PackOrder::Smallest => measured.sort_by(|a, b| {
            a.measure
                .tokens
                .cmp(&b.measure.tokens)
                .then_with(|| a.candidate.relative.cmp(&b.candidate.relative))
        }),
        PackOrder::Path => measured.sort_by(|a, b| {
            a.candidate
                .root
                .cmp(&b.candidate.root)
                .then_with(|| a.candidate.relative.cmp(&b.candidate.relative))
        }),
    }
}

/// The packed text as it grows, and what was left out of it.
///
/// Files are chosen in order by the count of their piece as the answer holds it
/// (JSON-escaped, counted alone for the request's model and by the highest
/// estimate), within what the [`Reserve`] leaves the text. [`Packing::finish`] then
/// counts the whole answer, the string the model receives, and drops pieces from
/// the end while it is over the budget or the answer limit; the packed text is
/// counted once for every file's exact share of it.
struct Packing<'a> {
    request: &'a LoadRequest,
    control: &'a dyn ScanControl,
    roots: &'a Roots,
    tokenizer: Tokenizer,
    budget: u64,
    reserve: Reserve,
    /// Every file fits by its bytes: no file is estimated or left out up front.
    all_fit: bool,
    text: String,
    chosen: Vec<Chosen>,
    omitted: Vec<OmittedFile>,
    /// Of the escaped text: tokens for the model, by the highest estimate, characters.
    used: (u64, u64, usize),
    /// Bytes read again so far, held to `--max-total-bytes` like the first read: a
    /// file that grew since it was measured must not take the text past it.
    read: AtomicU64,
}

impl<'a> Packing<'a> {
    fn new(
        request: &'a LoadRequest,
        measurer: &Measurer<'a>,
        (budget, reserve): (u64, Reserve),
        (packed_bytes, all_fit): (u64, bool),
    ) -> Packing<'a> {
        Packing {
            request,
            control: measurer.control,
            roots: measurer.roots,
            tokenizer: measurer.tokenizer,
            budget,
            reserve,
            all_fit,
            // When everything fits, the text's size is known: one allocation
            // instead of doubling copies of a growing buffer.
            text: String::with_capacity(if all_fit { packed_bytes as usize } else { 0 }),
            chosen: Vec::new(),
            omitted: Vec::new(),
            used: (0, 0, 0),
            read: AtomicU64::new(0),
        }
    }

    /// Read `measured` again batch by batch and pack what fits; files that are no
    /// longer readable text go to `skipped`.
    fn pack(
        &mut self,
        measurer: &Measurer<'_>,
        measured: &mut [Measured],
        walked_entries: usize,
        skipped: &mut Vec<Skipped>,
    ) -> Result<(), FilesError> {
        let control = measurer.control;
        let measured_len = measured.len();
        for (batch_index, batch) in measured.chunks_mut(READ_AGAIN_BATCH).enumerate() {
            if control.is_cancelled() {
                return Err(FilesError::Cancelled);
            }
            control.progress(
                walked_entries + measured_len + batch_index * READ_AGAIN_BATCH,
                walked_entries + 2 * measured_len,
            );
            let wanted = self.wanted(batch);
            let texts = read_again(self.roots, batch, &wanted, measurer.limits, &self.read)?;
            let worked = self.work_out(batch, &texts);
            for ((m, text), worked) in batch.iter_mut().zip(texts).zip(worked) {
                let read = text.map(|read| read.map(|(content, _)| (content, worked)));
                if let ControlFlow::Break(skip) = self.add(m, read) {
                    skipped.push(skip);
                }
            }
        }
        // Packed: what is left is the final count ([`Packing::finish`]).
        let total = walked_entries + 2 * measured_len;
        control.progress(total, total);
        Ok(())
    }

    /// Which files of `batch` to read again. A file whose known count alone is over
    /// what is left cannot fit (what is left only shrinks, and escaping only adds):
    /// it is not read again. A file to be cut is, as its cut's count is known only
    /// once cut.
    fn wanted(&self, batch: &[Measured]) -> Vec<bool> {
        let left = self.reserve.text_tokens.saturating_sub(self.used.0);
        batch
            .iter()
            .map(|m| {
                self.all_fit
                    || !m.counted
                    || m.measure.tokens <= left
                    || self
                        .request
                        .max_file_tokens
                        .is_some_and(|max| m.measure.tokens > max)
            })
            .collect()
    }

    /// [`Worked`] out for each file of `batch` read again (`texts`), on all cores
    /// when there is counting to do: a changed file's count, a cut, or the cost of
    /// each piece when the files might not all fit (escaping and counting every
    /// file twice, one after another, was most of a `load` of a 400 MB tree).
    fn work_out(&self, batch: &[Measured], texts: &[Option<ReadAgain>]) -> Vec<Worked> {
        let (tokenizer, request, all_fit) = (self.tokenizer, self.request, self.all_fit);
        let work = |(m, text): (&Measured, &Option<ReadAgain>)| match text {
            Some(Ok((content, stamp))) => {
                Worked::of(tokenizer, request, all_fit, m, content, stamp)
            }
            _ => Worked::default(),
        };
        let pairs: Vec<_> = batch.iter().zip(texts).collect();
        if all_fit && !needs_counts(request) {
            // Nothing to count: no threads.
            return pairs.into_iter().map(work).collect();
        }
        crate::fan_out::map_all(&pairs, crate::fan_out::cores(), work)
    }

    /// Pack one file read again (`None`: not read, it cannot fit), cut to
    /// `max_file_tokens`, or omit it when its escaped piece is over what is left of
    /// the text's share, with what [`Self::work_out`] found for it. Breaks with the
    /// file's skip when it is no longer readable text.
    fn add(
        &mut self,
        m: &mut Measured,
        read: Option<Result<(String, Worked), SkipReason>>,
    ) -> ControlFlow<Skipped> {
        let (tokenizer, format) = (self.tokenizer, self.request.format);
        let path = &m.candidate.relative;
        let root = self.roots.label(m.candidate.root);
        let (content, worked) = match read {
            None => {
                self.omitted.push(OmittedFile {
                    path: path.clone(),
                    root,
                    tokens: m.measure.tokens + tokenizer.count(&piece(format, path, "")) as u64,
                    reason: "over_budget",
                });
                return ControlFlow::Continue(());
            }
            Some(Ok(read)) => read,
            Some(Err(reason)) => return ControlFlow::Break(Skipped::new(path, reason)),
        };
        if let Some(tokens) = worked.counted {
            m.measure.tokens = tokens;
            m.counted = true;
        }
        let truncated = worked.cut.is_some();
        let content = worked.cut.unwrap_or(content);
        let start = self.text.len();
        push_piece(&mut self.text, format, path, &content);
        let cost = worked.cost;
        let reserve = self.reserve;
        if self.used.0 + cost.0 > reserve.text_tokens
            || self.used.1 + cost.1 > reserve.text_high
            || self.used.2 + cost.2 > reserve.text_chars
        {
            let tokens = tokenizer.count(&self.text[start..]) as u64;
            self.text.truncate(start);
            self.omitted.push(OmittedFile {
                path: path.clone(),
                root,
                tokens,
                reason: "over_budget",
            });
            return ControlFlow::Continue(());
        }
        self.used = (
            self.used.0 + cost.0,
            self.used.1 + cost.1,
            self.used.2 + cost.2,
        );
        self.chosen.push(Chosen {
            start,
            file: IncludedFile {
                path: path.clone(),
                root,
                tokens: cost.0,
                truncated,
            },
        });
        ControlFlow::Continue(())
    }

    /// The answer, proven: the packed text counted once for each file's share, the
    /// whole answer serialized as the model receives it and counted for the model
    /// (`answer_tokens`, which the answer itself holds: counted again until the
    /// number it states is its own count), and measured against the answer limit.
    /// While it is over the budget or the limit, pieces are dropped from the end, as
    /// many as the excess needs, and it is measured again.
    fn finish(
        mut self,
        model: &ResolvedModel<'_>,
        budget_source: &'static str,
        skipped: Vec<Skipped>,
        mut excluded: Excluded,
    ) -> Result<LoadedFiles, FilesError> {
        let rows = list_rows(self.request);
        let (skipped, skipped_counts) = cap_skipped_to(skipped, rows);
        excluded.ignored_examples.truncate(rows);
        let limit = self.request.answer_limit;
        loop {
            // Each round counts the whole text: a cancelled call stops here, and the
            // count itself stops within a chunk (about a megabyte).
            if self.control.is_cancelled() {
                return Err(FilesError::Cancelled);
            }
            let (tokens, shares) =
                count_pieces(self.tokenizer, &self.text, &self.chosen, self.control)
                    .ok_or(FilesError::Cancelled)?;
            for (chosen, tokens) in self.chosen.iter_mut().zip(shares) {
                chosen.file.tokens = tokens;
            }
            let included: Vec<IncludedFile> = self
                .chosen
                .iter()
                .take(rows)
                .map(|c| c.file.clone())
                .collect();
            let omitted: Vec<OmittedFile> = self.omitted.iter().take(rows).cloned().collect();
            let mut answer = LoadedFiles {
                model: FilesModel::of(model),
                roots: self.roots.shown_paths(),
                budget: self.budget,
                budget_source,
                answer_tokens: 0,
                tokens,
                format: self.request.format,
                order: self.request.order,
                window: WindowShare::of(model, tokens),
                included_files: self.chosen.len(),
                omitted_files: self.omitted.len(),
                omitted_tokens: self.omitted.iter().map(|o| o.tokens).sum(),
                rows: self.request.rows.unwrap_or(DEFAULT_LOAD_ROWS),
                truncated: self.chosen.len() > rows
                    || self.omitted.len() > rows
                    || skipped_counts.values().sum::<usize>() > skipped.len()
                    || excluded.ignored > excluded.ignored_examples.len() as u64,
                included,
                omitted,
                skipped: skipped.clone(),
                skipped_counts: skipped_counts.clone(),
                excluded: excluded.clone(),
                text: std::mem::take(&mut self.text),
            };
            let size = measure_answer(&mut answer, self.tokenizer, limit.tokens, self.control)
                .ok_or(FilesError::Cancelled)?;
            let over = [
                (answer.answer_tokens, self.budget),
                (size.high, limit.tokens),
                (size.chars as u64, limit.chars as u64),
            ]
            .iter()
            .filter(|(size, bound)| size > bound)
            .map(|&(size, bound)| 1.0 - bound as f64 / size.max(1) as f64)
            .fold(0.0f64, f64::max);
            if over == 0.0 {
                return Ok(answer);
            }
            self.text = std::mem::take(&mut answer.text);
            if self.chosen.is_empty() {
                return Err(FilesError::BudgetBelowReport {
                    budget: self.budget,
                    envelope: answer.answer_tokens,
                    rows: answer.rows,
                });
            }
            // The excess as a share of the answer, taken off the end of the text
            // (at least one piece), and at least as many tokens as the answer is over
            // its budget by the pieces' own shares: one more count, not one per piece
            // (dropping one piece per count took 31 s for 2,000 files).
            let drop_bytes = (over * size.bytes as f64).ceil() as usize;
            let keep_to = self.text.len().saturating_sub(drop_bytes);
            let excess = answer.answer_tokens.saturating_sub(self.budget);
            let mut dropped_tokens = 0;
            let mut dropped = Vec::new();
            while let Some(last) = self.chosen.pop() {
                dropped_tokens += last.file.tokens;
                let done = last.start <= keep_to && dropped_tokens >= excess;
                self.text.truncate(last.start);
                dropped.push(OmittedFile {
                    path: last.file.path,
                    root: last.file.root,
                    tokens: last.file.tokens,
                    reason: "over_budget",
                });
                if done {
                    break;
                }
            }
            // Back in packing order among the omitted.
            self.omitted.extend(dropped.into_iter().rev());
        }
    }
}

/// What the model receives of a `load-files` answer (the string [`answer_text`]
/// gives): its tokens by [`HIGHEST_ESTIMATE`] (or a bound on them under the answer
/// limit, see [`measure_in_parts`]), characters (UTF-16) and bytes. Its tokens for
/// the model are what `answer_tokens` states.
struct AnswerSize {
    high: u64,
    chars: usize,
    bytes: usize,
}

/// Set `answer.answer_tokens` to the count of the answer as the model receives it
/// (counted again until the number it states is its own count, as
/// [`crate::answer::count_itself`] does) and measure that string; `None` once the
/// call is cancelled.
///
/// The string is not built: the packed text, almost all of it, is escaped and
/// counted in parts of about [`COUNT_CHUNK_BYTES`] on all cores, each cut between
/// words, a cut that escaping keeps ([`Tokenizer::escape_stable_cut`]); only the
/// fields before the text and its first word are counted again while
/// `answer_tokens` settles. Built, a 400 MB answer was held three times (the text,
/// a JSON value, the string) and each of its three counts ran a megabyte at a time.
/// A family without that cut (gemma3, a tokenizer.json) counts the built string
/// ([`measure_whole`]).
fn measure_answer(
    answer: &mut LoadedFiles,
    tokenizer: Tokenizer,
    high_limit: u64,
    control: &dyn ScanControl,
) -> Option<AnswerSize> {
    let text = std::mem::take(&mut answer.text);
    let measured = match tokenizer.escape_stable_cut(&text, 1) {
        Some(first_cut) => {
            let parts = (tokenizer, high_limit, control);
            measure_in_parts(answer, &text, first_cut, parts)
        }
        None => Err(NoParts),
    };
    answer.text = text;
    match measured {
        Ok(size) => size,
        Err(NoParts) => measure_whole(answer, tokenizer, &|| control.is_cancelled()),
    }
}

/// [`measure_in_parts`] cannot cut this answer: measure it whole.
struct NoParts;

/// [`measure_answer`] of `answer` (its text taken out: `text`) in parts, the first
/// ending at `first_cut`.
///
/// The highest estimate matters only against the answer's token limit
/// (`high_limit`): when the answer's escaped bytes alone keep it under, its tokens
/// are only counted for the model, and the bound stands for the estimate. Weighing
/// each token for it needs the tokens themselves, encoded, where counting is about
/// twice as fast.
fn measure_in_parts(
    answer: &mut LoadedFiles,
    text: &str,
    first_cut: usize,
    (tokenizer, high_limit, control): (Tokenizer, u64, &dyn ScanControl),
) -> Result<Option<AnswerSize>, NoParts> {
    // `text` is the last field: the answer is `{…,"text":"` + escaped text + `"}`.
    const EMPTY_TEXT_END: &str = r#","text":""}"#;
    let shell = answer_text(answer);
    if !shell.ends_with(EMPTY_TEXT_END) {
        return Err(NoParts);
    }
    let suffix = &shell[shell.len() - 2..];
    // The parts after the first word, escaped and counted once; the last one holds
    // the closing `"}` (the text's last piece may run into it).
    let mut starts = vec![first_cut];
    while let Some(cut) =
        tokenizer.escape_stable_cut(text, starts[starts.len() - 1] + COUNT_CHUNK_BYTES)
    {
        starts.push(cut);
    }
    let ends: Vec<usize> = starts.iter().skip(1).copied().chain([text.len()]).collect();
    let spans: Vec<(usize, usize)> = starts.into_iter().zip(ends).collect();
    // The shell's numbers may grow while `answer_tokens` settles: 20 digits at most.
    let high_bound = super::measure::max_tokens_of_bytes(
        HIGHEST_ESTIMATE,
        shell.len() as u64 + 20 + json_escaped_len(text),
    );
    let high_differs = tokenizer != HIGHEST_ESTIMATE;
    let weigh_high = high_differs && high_bound > high_limit;
    let parts = crate::fan_out::map(
        spans.iter().copied(),
        crate::fan_out::cores(),
        |(from, to)| {
            if control.is_cancelled() {
                return None;
            }
            let mut escaped = json_escaped(&text[from..to]);
            if to == text.len() {
                escaped.push_str(suffix);
            }
            let (tenths, high) = match weigh_high {
                true => tokenizer.tenths_with_here(HIGHEST_ESTIMATE, &escaped),
                false => (tokenizer.tenths_here(&escaped), 0),
            };
            Some([
                tenths,
                high,
                js_length(&escaped) as u64,
                escaped.len() as u64,
            ])
        },
    );
    let mut body = [0u64; 4];
    for part in parts {
        // A part is missing only when the call was cancelled (or its worker panicked,
        // a bug): either way there is no answer to give.
        let Some(part) = part else {
            return Ok(None);
        };
        for (sum, value) in body.iter_mut().zip(part) {
            *sum += value;
        }
    }
    let [body_tenths, body_high, body_chars, body_bytes] = body;
    // The fields before the text, and its first word, as the answer now states.
    let head = |answer: &LoadedFiles| {
        let shell = answer_text(answer);
        let mut head = shell[..shell.len() - suffix.len()].to_string();
        head.push_str(&json_escaped(&text[..first_cut]));
        head
    };
    let mut highest = 0;
    for round in 0..8 {
        let tenths = tokenizer.tenths_here(&head(answer)) + body_tenths;
        let count = crate::ClaudeEstimate::tokens_from_tenths(tenths) as u64;
        let stated = answer.answer_tokens;
        if count == stated || (round > 4 && count < stated) {
            break;
        }
        highest = highest.max(count);
        answer.answer_tokens = if round < 4 { count } else { highest };
    }
    let head = head(answer);
    let high = match (high_differs, weigh_high) {
        (true, true) => crate::ClaudeEstimate::tokens_from_tenths(
            HIGHEST_ESTIMATE.tenths_here(&head) + body_high,
        ) as u64,
        (true, false) => high_bound,
        (false, _) => answer.answer_tokens,
    };
    Ok(Some(AnswerSize {
        high,
        chars: js_length(&head) + body_chars as usize,
        bytes: head.len() + body_bytes as usize,
    }))
}

/// [`measure_answer`] by building the answer's string: [`crate::answer::count_itself`]
/// with each count in parts of about a megabyte that each look at `cancelled` first.
fn measure_whole(
    answer: &mut LoadedFiles,
    tokenizer: Tokenizer,
    cancelled: &dyn Fn() -> bool,
) -> Option<AnswerSize> {
    let serialized = count_itself_until(answer, tokenizer, |a| &mut a.answer_tokens, cancelled)?;
    let high = match tokenizer == HIGHEST_ESTIMATE {
        true => answer.answer_tokens,
        false => HIGHEST_ESTIMATE.count_until(&serialized, cancelled)? as u64,
    };
    Some(AnswerSize {
        high,
        chars: js_length(&serialized),
        bytes: serialized.len(),
    })
}

/// What packing a file read again takes counting to find out, worked out apart
/// from the packing itself so that a batch of files can do it on all cores
/// ([`Packing::work_out`]). Its default is nothing to work out (a file not read).
#[derive(Default)]
struct Worked {
    /// Its count, when it had to be counted again: changed since it was measured,
    /// or never counted, and the count is needed.
    counted: Option<u64>,
    /// Its text cut to `max_file_tokens`, when it is over.
    cut: Option<String>,
    /// Its piece as the answer holds it (JSON-escaped, counted alone): tokens for
    /// the model, by the highest estimate, characters; zero when every file fits.
    cost: (u64, u64, usize),
}

impl Worked {
    fn of(
        tokenizer: Tokenizer,
        request: &LoadRequest,
        all_fit: bool,
        m: &Measured,
        content: &str,
        stamp: &FileStamp,
    ) -> Worked {
        let counted = ((needs_counts(request) || !all_fit) && (*stamp != m.stamp || !m.counted))
            .then(|| tokenizer.count(content) as u64);
        let tokens = counted.unwrap_or(m.measure.tokens);
        let cut = request
            .max_file_tokens
            .and_then(|max| cut(tokenizer, content, tokens, max));
        let cost = if all_fit {
            (0, 0, 0)
        } else {
            let path = &m.candidate.relative;
            let escaped = json_escaped(&piece(
                request.format,
                path,
                cut.as_deref().unwrap_or(content),
            ));
            let tokens = tokenizer.count(&escaped) as u64;
            let high = match tokenizer == HIGHEST_ESTIMATE {
                true => tokens,
                false => HIGHEST_ESTIMATE.count(&escaped) as u64,
            };
            (tokens, high, js_length(&escaped))
        };
        Worked { counted, cut, cost }
    }
}

/// Files read again per batch while packing: enough to keep every core reading,
/// few enough that a batch's texts are a small part of the packed text.
const READ_AGAIN_BATCH: usize = 64;

/// A file read again: its text and the stamp it has now, or why it is no longer
/// readable text.
type ReadAgain = Result<(String, FileStamp), SkipReason>;

/// The texts of the `wanted` files of `batch` (measured files), read again on all
/// cores, in order, each with the stamp it has now (`None` for those not wanted). A
/// file that is no longer readable text gets the reason.
///
/// Files may have grown since they were measured: each read is held to
/// `--max-file-bytes` and, with `read` (the bytes read again so far), all of them to
/// `--max-total-bytes`; over it the call fails as the first read would have.
fn read_again(
    roots: &Roots,
    batch: &[Measured],
    wanted: &[bool],
    limits: &FileLimits,
    read_so_far: &AtomicU64,
) -> Result<Vec<Option<ReadAgain>>, FilesError> {
    let over = AtomicBool::new(false);
    // At most what is left of the call's bytes is read of any one file.
    let max_bytes = limits.max_file_bytes.min(limits.max_total_bytes);
    let read = |(m, wanted): (&Measured, &bool)| {
        wanted.then(|| {
            let root = &roots.list()[m.candidate.root].path;
            let open = reopen(root, &m.canonical, max_bytes)?;
            let stamp = open.stamp;
            // Taken before reading, so a batch cannot hold more than the limit.
            let size = stamp.size;
            if read_so_far.fetch_add(size, Ordering::Relaxed) + size > limits.max_total_bytes {
                over.store(true, Ordering::Relaxed);
                return Err(SkipReason::TooLarge {
                    bytes: size,
                    limit: max_bytes,
                });
            }
            let text = open.read_text(max_bytes)?;
            // Grown while read (up to `max_bytes`): the growth counts too.
            let grown = (text.len() as u64).saturating_sub(size);
            if read_so_far.fetch_add(grown, Ordering::Relaxed) + grown > limits.max_total_bytes {
                over.store(true, Ordering::Relaxed);
            }
            Ok((text, stamp))
        })
    };
    let batch: Vec<(&Measured, &bool)> = batch.iter().zip(wanted).collect();
    let texts = crate::fan_out::map_all(&batch, crate::fan_out::cores(), read);
    if over.load(Ordering::Relaxed) {
        return Err(FilesError::TooManyBytes {
            limit: limits.max_total_bytes,
        });
    }
    Ok(texts)
}

/// A file chosen for the packed text: where its piece starts, and its row.
struct Chosen {
    start: usize,
    file: IncludedFile,
}

/// The exact count of the packed `text`, and each piece's share: every token is
/// attributed to the piece it starts in, so the shares add up to the count (for
/// the Claude estimate each share is rounded up on its own).
///
/// A large text is tokenized in chunks of about [`COUNT_CHUNK_BYTES`] on all cores,
/// cut only where the tokenizer says its parts add up ([`Tokenizer::additive_cut`]),
/// so the chunks' tokens are exactly the whole text's. `None` when `control` says
/// the call was cancelled (looked at before each chunk).
fn count_pieces(
    tokenizer: Tokenizer,
    text: &str,
    chosen: &[Chosen],
    control: &dyn ScanControl,
) -> Option<(u64, Vec<u64>)> {
    let starts: Vec<usize> = chosen.iter().map(|c| c.start).collect();
    let threads = crate::fan_out::cores();
    let parts = threads.max(text.len() / COUNT_CHUNK_BYTES);
    let chunks = chunk_starts(tokenizer, text, parts);
    let cancelled = AtomicBool::new(false);
    // Tokens of `text[from..to]` to the pieces they start in.
    let encode_into = |tenths: &mut [u64], from: usize, to: usize| {
        // The piece holding `from`: the last piece starting at or before it.
        let mut piece = starts.partition_point(|&s| s <= from).saturating_sub(1);
        tokenizer.for_each_token(&text[from..to], |start, weight| {
            let start = from + start;
            while piece + 1 < starts.len() && starts[piece + 1] <= start {
                piece += 1;
            }
            if let Some(slot) = tenths.get_mut(piece) {
                *slot += weight;
            }
        });
    };
    // Only the few bytes around where a piece starts need each token's position:
    // from the last cut before that start to the first cut after it, the text is
    // encoded and its tokens attributed; between two such spans it lies inside one
    // piece and is only counted (counting is about twice as fast as encoding).
    let attribute = |from: usize, to: usize| -> Vec<u64> {
        let mut tenths = vec![0u64; starts.len()];
        let mut at = from;
        while at < to {
            let piece = starts.partition_point(|&s| s <= at).saturating_sub(1);
            let Some(boundary) = starts.get(piece + 1).copied().filter(|&b| b < to) else {
                if let Some(slot) = tenths.get_mut(piece) {
                    *slot += tokenizer.tenths_here(&text[at..to]);
                }
                break;
            };
            if let Some(cut) = tokenizer.additive_cut_before(text, at, boundary) {
                if let Some(slot) = tenths.get_mut(piece) {
                    *slot += tokenizer.tenths_here(&text[at..cut]);
                }
                at = cut;
            }
            let end = tokenizer
                .additive_cut(text, boundary + 1)
                .filter(|&cut| cut <= to)
                .unwrap_or(to);
            encode_into(&mut tenths, at, end);
            at = end;
        }
        tenths
    };
    let ends: Vec<usize> = chunks.iter().skip(1).copied().chain([text.len()]).collect();
    let spans: Vec<(usize, usize)> = chunks.iter().copied().zip(ends).collect();
    let parts = crate::fan_out::map(spans.iter().copied(), threads, |(from, to)| {
        if control.is_cancelled() {
            cancelled.store(true, Ordering::Relaxed);
            return None;
        }
        Some(attribute(from, to))
    });
    if cancelled.load(Ordering::Relaxed) {
        return None;
    }
    // A panicking worker is a bug; recount its chunk here rather than lose it.
    let parts = parts
        .into_iter()
        .zip(&spans)
        .map(|(part, &(from, to))| part.unwrap_or_else(|| attribute(from, to)));
    let mut tenths = vec![0u64; starts.len()];
    for part in parts {
        for (sum, t) in tenths.iter_mut().zip(part) {
            *sum += t;
        }
    }
    let total = crate::ClaudeEstimate::tokens_from_tenths(tenths.iter().sum()) as u64;
    let shares = tenths
        .into_iter()
        .map(|t| crate::ClaudeEstimate::tokens_from_tenths(t) as u64)
        .collect();
    Some((total, shares))
}

/// About how much of the packed text is counted between two looks at cancellation.
const COUNT_CHUNK_BYTES: usize = 1 << 20;

/// Where to cut `text` into up to `parts` chunks of about equal size, at the
/// tokenizer's [`Tokenizer::additive_cut`]s (none for a family that has none).
/// Texts under [`crate::PARALLEL_MIN_BYTES`] are one chunk. Always starts with 0.
fn chunk_starts(tokenizer: Tokenizer, text: &str, parts: usize) -> Vec<usize> {
    let mut starts = vec![0];
    if text.len() < crate::PARALLEL_MIN_BYTES || parts < 2 {
        return starts;
    }
    for i in 1..parts {
        let from = (text.len() * i / parts).max(starts.last().copied().unwrap_or(0) + 1);
        if let Some(cut) = tokenizer.additive_cut(text, from) {
            starts.push(cut);
        }
    }
    starts.dedup();
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::pack::PackFormat;
    use crate::scan_control::Unobserved;

    /// Pieces of real code, enough of them that the text is counted in chunks.
    fn packed(format: PackFormat) -> (String, Vec<Chosen>) {
        let sources = [
            include_str!("load.rs"),
            include_str!("walk.rs"),
            include_str!("pack.rs"),
            "대한민국의 수도는 서울이다. 🦊 emoji and `code`",
            // No cut inside at all, and pieces too short to hold one.
            "{}[]();\n=>+-*/\n",
            "x",
            "",
        ];
        let (mut text, mut chosen) = (String::new(), Vec::new());
        for round in 0..12 {
            for (i, source) in sources.iter().enumerate() {
                chosen.push(Chosen {
                    start: text.len(),
                    file: IncludedFile {
                        path: format!("f{round}-{i}.rs"),
                        root: None,
                        tokens: 0,
                        truncated: false,
                    },
                });
                text.push_str(&piece(format, &format!("f{round}-{i}.rs"), source));
            }
        }
        (text, chosen)
    }

    #[test]
    fn chunked_counts_equal_the_whole_and_shares_add_up() {
        for format in [PackFormat::Xml, PackFormat::Markdown, PackFormat::Plain] {
            let (text, chosen) = packed(format);
            assert!(text.len() > 2 * crate::PARALLEL_MIN_BYTES);
            assert!(
                chunk_starts(Tokenizer::O200kBase, &text, 4).len() > 1,
                "the text is cut"
            );
            for tokenizer in [
                Tokenizer::Cl100kBase,
                Tokenizer::O200kBase,
                Tokenizer::Gemma3,
            ] {
                let (total, shares) =
                    count_pieces(tokenizer, &text, &chosen, &Unobserved).expect("not cancelled");
                // count_here: the shared helper thread stays free for the parallel
                // module's own tests running beside this one.
                assert_eq!(total, tokenizer.count_here(&text) as u64, "{tokenizer:?}");
                assert_eq!(shares.iter().sum::<u64>(), total);
                assert_eq!(
                    shares,
                    shares_by_encoding(tokenizer, &text, &chosen),
                    "{tokenizer:?}"
                );
            }
            let (total, shares) =
                count_pieces(Tokenizer::ClaudeEstimate, &text, &chosen, &Unobserved)
                    .expect("not cancelled");
            assert_eq!(total, Tokenizer::ClaudeEstimate.count(&text) as u64);
            // Each share is rounded up on its own.
            assert!(shares.iter().sum::<u64>() >= total);
            assert_eq!(
                shares,
                shares_by_encoding(Tokenizer::ClaudeEstimate, &text, &chosen)
            );
        }
    }

    /// Each piece's share the plain way: every token of the whole text, by position.
    fn shares_by_encoding(tokenizer: Tokenizer, text: &str, chosen: &[Chosen]) -> Vec<u64> {
        let mut tenths = vec![0u64; chosen.len()];
        tokenizer.for_each_token(text, |start, weight| {
            let piece = chosen
                .partition_point(|c| c.start <= start)
                .saturating_sub(1);
            tenths[piece] += weight;
        });
        tenths
            .into_iter()
            .map(|t| crate::ClaudeEstimate::tokens_from_tenths(t) as u64)
            .collect()
    }

    #[test]
    fn chunks_start_at_additive_cuts() {
        let (text, _) = packed(PackFormat::Xml);
        // The answer as the model receives it, JSON-escaped, has no newline: it is
        // cut between words, and the chunks still add up.
        let escaped = serde_json::to_string(&text).unwrap();
        for text in [&text, &escaped] {
            let starts = chunk_starts(Tokenizer::O200kBase, text, 8);
            assert!(starts.len() > 4, "{}", starts.len());
            assert_eq!(starts[0], 0);
            let bytes = text.as_bytes();
            for &start in &starts[1..] {
                assert!(
                    (bytes[start - 1] == b'\n' && bytes[start].is_ascii_alphabetic())
                        || (bytes[start] == b' '
                            && bytes[start - 1].is_ascii_alphabetic()
                            && bytes[start + 1].is_ascii_alphabetic())
                );
            }
            assert!(starts.windows(2).all(|w| w[0] < w[1]));
            let ends = starts[1..].iter().copied().chain([text.len()]);
            let sum: usize = starts
                .iter()
                .zip(ends)
                .map(|(&a, b)| Tokenizer::O200kBase.count(&text[a..b]))
                .sum();
            assert_eq!(sum, Tokenizer::O200kBase.count(text));
        }
        assert_eq!(chunk_starts(Tokenizer::O200kBase, "short\ntext", 8), [0]);
    }
}

#[cfg(test)]
mod answer_tests {
    use super::*;
    use crate::files::pack::PackFormat;
    use crate::scan_control::Unobserved;

    fn answer(text: String, tokenizer: Tokenizer) -> LoadedFiles {
        let included: Vec<IncludedFile> = (0..40)
            .map(|i| IncludedFile {
                path: format!("src/\"odd\\name\"-{i}.rs"),
                root: None,
                tokens: 1234 + i,
                truncated: i % 7 == 0,
            })
            .collect();
        LoadedFiles {
            model: FilesModel {
                model: "gpt-4o".into(),
                encoding: tokenizer.name(),
                exact: tokenizer.is_exact(),
                method: "test",
            },
            roots: vec!["/tmp/root".into()],
            budget: 1 << 40,
            budget_source: "request",
            answer_tokens: 0,
            tokens: 98_765,
            format: PackFormat::Xml,
            order: PackOrder::Given,
            window: None,
            included_files: included.len(),
            omitted_files: 0,
            omitted_tokens: 0,
            rows: 50,
            truncated: false,
            included,
            omitted: Vec::new(),
            skipped: Vec::new(),
            skipped_counts: Default::default(),
            excluded: Excluded::default(),
            text,
        }
    }

    #[test]
    fn an_answer_measured_in_parts_is_the_string_the_model_receives() {
        let code = include_str!("load.rs");
        // Several parts, escapes of every kind, words at both ends of the text, and a
        // last piece that runs into the closing quote.
        let tricky =
            "\"quoted\" back\\slash \u{1}\u{7}\u{7f} tab\there\r\n é 🦊 한국어 문장 end.\"";
        let long = format!(
            "{}{tricky}",
            code.repeat(3 * COUNT_CHUNK_BYTES / code.len() + 1)
        );
        let texts = [
            long.clone(),
            format!("a b {long}"),
            format!("{long} x y"),
            "a b".to_string(),
            // No cut between words anywhere: measured whole.
            "{}[]();\n".repeat(1000),
            String::new(),
        ];
        for tokenizer in [
            Tokenizer::O200kBase,
            Tokenizer::Cl100kBase,
            Tokenizer::ClaudeEstimate,
            Tokenizer::Claude47Estimate,
            Tokenizer::Estimate,
            Tokenizer::Gemma3,
        ] {
            for text in &texts {
                // Gemma 3 is always measured whole (its counter is slow unoptimized).
                if tokenizer == Tokenizer::Gemma3 && text.len() > COUNT_CHUNK_BYTES {
                    continue;
                }
                let mut parts = answer(text.clone(), tokenizer);
                // Under a limit of 0 the highest estimate is always weighed.
                let size = measure_answer(&mut parts, tokenizer, 0, &Unobserved).unwrap();
                let built = answer_text(&parts);
                // Under no limit it may be bounded instead, never below the count.
                let mut unlimited = answer(text.clone(), tokenizer);
                let bounded =
                    measure_answer(&mut unlimited, tokenizer, u64::MAX, &Unobserved).unwrap();
                assert_eq!(unlimited.answer_tokens, parts.answer_tokens);
                assert!(
                    bounded.high >= size.high,
                    "{tokenizer:?}: a bound, not below"
                );
                assert_eq!((bounded.chars, bounded.bytes), (size.chars, size.bytes));
                let what = format!("{tokenizer:?} on {} bytes", text.len());
                assert_eq!(
                    tokenizer.count(&built) as u64,
                    parts.answer_tokens,
                    "{what}"
                );
                assert_eq!(HIGHEST_ESTIMATE.count(&built) as u64, size.high, "{what}");
                assert_eq!(js_length(&built), size.chars, "{what}");
                assert_eq!(built.len(), size.bytes, "{what}");
                assert_eq!(parts.text, *text, "the text is put back");
                let mut whole = answer(text.clone(), tokenizer);
                measure_whole(&mut whole, tokenizer, &|| false).unwrap();
                assert_eq!(whole.answer_tokens, parts.answer_tokens, "{what}");
            }
        }
    }

    #[test]
    fn measuring_a_large_answer_stops_when_cancelled() {
        struct Cancelled;
        impl ScanControl for Cancelled {
            fn is_cancelled(&self) -> bool {
                true
            }
        }
        let code = include_str!("load.rs");
        let text = code.repeat(3 * COUNT_CHUNK_BYTES / code.len() + 1);
        let mut answer = answer(text.clone(), Tokenizer::O200kBase);
        assert!(measure_answer(&mut answer, Tokenizer::O200kBase, 0, &Cancelled).is_none());
        assert_eq!(answer.text, text);
    }
}
