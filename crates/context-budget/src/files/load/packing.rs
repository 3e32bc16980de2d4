//! Packing: which files must be counted first and in what order they go; then the
//! files read again batch by batch, each cut, kept or omitted by its piece's cost
//! within the [`Reserve`]; and [`Packing::finish`], the whole answer counted and
//! pieces dropped from the end while it is over the budget or the answer limit.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::answer::{list_rows, measure_answer};
use super::attribution::count_pieces;
use super::budget::Reserve;
use super::rank::{self, Key};
use crate::answer::{HIGHEST_ESTIMATE, js_length, json_escaped};
use crate::cache::FileStamp;
use crate::files::error::FilesError;
use crate::files::measure::{Measured, Measurer, Reading};
use crate::files::open::reopen;
use crate::files::output::{Excluded, FilesModel, Levels, WindowShare};
use crate::files::output::{IncludedFile, LoadedFiles, OmittedFile, Skipped, cap_skipped_to};
use crate::files::pack::{Detail, PackOrder, cut, path_line, piece, push_piece};
use crate::files::query::{DEFAULT_LOAD_ROWS, FileLimits, LoadRequest};
use crate::files::roots::Roots;
use crate::outline::Bounds;
use crate::read::SkipReason;
use crate::scan_control::ScanControl;
use crate::{ResolvedModel, Tokenizer};

/// Whether every file must be counted up front: counts decide the order and the
/// cuts; otherwise they are needed only when the files might not all fit, which
/// their bytes can rule out ([`super::budget::all_fit_by_bytes`]).
fn needs_counts(request: &LoadRequest) -> bool {
    // `mentioned` and `recent` tie by tokens.
    !matches!(request.order(), PackOrder::Given | PackOrder::Path)
        || request.max_file_tokens.is_some()
        || matches!(request.detail, Detail::Path | Detail::Auto)
}

/// How [`Measurer::measure`] reads for `request`.
pub(super) fn reading(request: &LoadRequest) -> Reading {
    if needs_counts(request) {
        Reading::Count
    } else {
        Reading::Check
    }
}

/// Put `measured` in `order` ([`rank::by_order`]); `degree`, each file's rank,
/// is read under [`PackOrder::Mentioned`] alone.
pub(super) fn order(measured: &mut Vec<Measured>, order: PackOrder, degree: &[u32]) {
    let keys: Vec<Key<'_>> = measured
        .iter()
        .enumerate()
        .map(|(i, m)| Key {
            root: m.candidate.root,
            path: &m.candidate.relative,
            tokens: m.measure.tokens,
            modified: m.stamp.modified,
            degree: degree.get(i).copied().unwrap_or(0),
        })
        .collect();
    let sequence = rank::by_order(order, &keys);
    let mut taken: Vec<Option<Measured>> = std::mem::take(measured).into_iter().map(Some).collect();
    measured.extend(sequence.into_iter().filter_map(|i| taken[i].take()));
}

/// The packed text as it grows, and what was left out of it.
///
/// Files are chosen in order by the count of their piece as the answer holds it
/// (JSON-escaped, counted alone for the request's model and by the highest
/// estimate), within what the [`Reserve`] leaves the text. [`Packing::finish`] then
/// counts the whole answer, the string the model receives, and drops pieces from
/// the end while it is over the budget or the answer limit; the packed text is
/// counted once for every file's exact share of it.
pub(super) struct Packing<'a> {
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
    /// Of the escaped text: tokens for the model, by the highest estimate, characters, bytes.
    used: (u64, u64, usize, usize),
    /// A file was left out for the answer limit (its highest estimate, characters or
    /// bytes), not for the budget.
    limit_bound: bool,
    /// Bytes read again so far, held to `--max-total-bytes` like the first read: a
    /// file that grew since it was measured must not take the text past it.
    read: AtomicU64,
}

impl<'a> Packing<'a> {
    pub(super) fn new(
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
            used: (0, 0, 0, 0),
            limit_bound: false,
            read: AtomicU64::new(0),
        }
    }

    /// A packing of a text already built (`detail: "auto"`, [`super::auto`]): its
    /// pieces (`chosen`) and the files left out, for [`Packing::finish`] to prove;
    /// `limit_bound` when the answer limit, not the budget, held a file back.
    pub(super) fn built(
        request: &'a LoadRequest,
        measurer: &Measurer<'a>,
        (budget, reserve): (u64, Reserve),
        (text, chosen, omitted): (String, Vec<Chosen>, Vec<OmittedFile>),
        limit_bound: bool,
    ) -> Packing<'a> {
        Packing {
            text,
            chosen,
            omitted,
            limit_bound,
            ..Packing::new(request, measurer, (budget, reserve), (0, false))
        }
    }

    /// Read `measured` again batch by batch and pack what fits; files that are no
    /// longer readable text go to `skipped`.
    pub(super) fn pack(
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
            if self.request.detail == Detail::Path {
                for m in batch.iter() {
                    self.add_path(m);
                }
                continue;
            }
            let wanted = self.wanted(batch);
            let texts = read_again(self.roots, batch, &wanted, measurer.limits, &self.read)?;
            let texts = self.shape(batch, texts);
            let worked = self.work_out(batch, &texts);
            for ((m, text), worked) in batch.iter_mut().zip(texts).zip(worked) {
                let read =
                    text.map(|read| read.map(|(content, _, shown)| (content, worked, shown)));
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
                    // An outline's count is known only once it is made.
                    || self.request.detail == Detail::Outline
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
    fn work_out(&self, batch: &[Measured], texts: &[Option<Shaped>]) -> Vec<Worked> {
        let (tokenizer, request, all_fit) = (self.tokenizer, self.request, self.all_fit);
        let work = |(m, text): (&Measured, &Option<Shaped>)| match text {
            Some(Ok((content, stamp, shown))) => {
                let changed = *stamp != m.stamp || shown.detail == Some("outline");
                Worked::of(tokenizer, request, all_fit, m, content, changed)
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
        read: Option<Result<(String, Worked, Shown), SkipReason>>,
    ) -> ControlFlow<Skipped> {
        let (tokenizer, format) = (self.tokenizer, self.request.format);
        let path = &m.candidate.relative;
        let root = self.roots.label(m.candidate.root);
        let (content, worked, shown) = match read {
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
        let row = IncludedFile {
            path: path.clone(),
            root,
            tokens: worked.cost.0,
            truncated,
            detail: shown.detail,
            no_outline: shown.no_outline,
        };
        self.place(start, row, worked.cost);
        ControlFlow::Continue(())
    }

    /// A file at [`Detail::Path`]: its line, counted as the answer holds it.
    fn add_path(&mut self, m: &Measured) {
        let path = &m.candidate.relative;
        let line = path_line(path, m.measure.tokens);
        let escaped = json_escaped(&line);
        let tokens = self.tokenizer.count(&escaped) as u64;
        let high = match self.tokenizer == HIGHEST_ESTIMATE {
            true => tokens,
            false => HIGHEST_ESTIMATE.count(&escaped) as u64,
        };
        let start = self.text.len();
        self.text.push_str(&line);
        let row = IncludedFile {
            path: path.clone(),
            root: self.roots.label(m.candidate.root),
            tokens,
            truncated: false,
            detail: Some("path"),
            no_outline: None,
        };
        self.place(
            start,
            row,
            (tokens, high, js_length(&escaped), escaped.len()),
        );
    }

    /// Keep the piece from `start` to the text's end (`row`, costing `cost`), or
    /// take it out and omit it when it is over what is left of the text's share.
    fn place(&mut self, start: usize, row: IncludedFile, cost: (u64, u64, usize, usize)) {
        let reserve = self.reserve;
        let over_budget = self.used.0 + cost.0 > reserve.text_tokens;
        let over_limit = self.used.1 + cost.1 > reserve.text_high
            || self.used.2 + cost.2 > reserve.text_chars
            || self.used.3 + cost.3 > reserve.text_bytes;
        if over_budget || over_limit {
            self.limit_bound |= !over_budget;
            let tokens = self.tokenizer.count(&self.text[start..]) as u64;
            self.text.truncate(start);
            self.omitted.push(OmittedFile {
                path: row.path,
                root: row.root,
                tokens,
                reason: "over_budget",
            });
            return;
        }
        self.used = (
            self.used.0 + cost.0,
            self.used.1 + cost.1,
            self.used.2 + cost.2,
            self.used.3 + cost.3,
        );
        self.chosen.push(Chosen { start, file: row });
    }

    /// Files read again for [`Detail::Outline`] as their outlines (on all cores),
    /// or whole with the reason they have none; otherwise as they are.
    fn shape(&self, batch: &[Measured], texts: Vec<Option<ReadAgain>>) -> Vec<Option<Shaped>> {
        if self.request.detail != Detail::Outline {
            return texts
                .into_iter()
                .map(|t| t.map(|r| r.map(|(text, stamp)| (text, stamp, Shown::default()))))
                .collect();
        }
        let control = self.control;
        let pairs: Vec<(&Measured, Option<ReadAgain>)> = batch.iter().zip(texts).collect();
        let outline = |(m, text): (&Measured, Option<ReadAgain>)| {
            text.map(|read| {
                read.map(|(text, stamp)| {
                    let path = &m.candidate.relative;
                    match crate::outline::outline(path, &text, &Bounds::default(), control) {
                        Ok(outline) => (outline.text, stamp, Shown::outline()),
                        Err(reason) => (text, stamp, Shown::whole(reason.code())),
                    }
                })
            })
        };
        // `None`: not read (or a worker's panic, a bug: left out, not invented).
        crate::fan_out::map(pairs, crate::fan_out::cores(), outline)
    }

    /// The answer, proven: the packed text counted once for each file's share, the
    /// whole answer serialized as the model receives it and counted for the model
    /// (`answer_tokens`, which the answer itself holds: counted again until the
    /// number it states is its own count), and measured against the answer limit.
    /// While it is over the budget or the limit, pieces are dropped from the end, as
    /// many as the excess needs, and it is measured again.
    pub(super) fn finish(
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
            let starts: Vec<usize> = self.chosen.iter().map(|c| c.start).collect();
            let (tokens, shares) = count_pieces(self.tokenizer, &self.text, &starts, self.control)
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
                answer_limit: (self.limit_bound || budget_source == "answer_limit")
                    .then(|| limit.to_string()),
                answer_tokens: 0,
                tokens,
                format: self.request.format,
                order: self.request.order(),
                detail: self.request.detail,
                levels: (self.request.detail == Detail::Auto)
                    .then(|| Levels::of(self.chosen.iter().map(|c| c.file.detail))),
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
            let over_limit = [
                (size.high, limit.tokens),
                (size.chars as u64, limit.chars as u64),
                (size.bytes as u64, limit.bytes as u64),
            ];
            self.limit_bound |= over_limit.iter().any(|(size, bound)| size > bound);
            let over = [(answer.answer_tokens, self.budget)]
                .into_iter()
                .chain(over_limit)
                .filter(|(size, bound)| size > bound)
                .map(|(size, bound)| 1.0 - bound as f64 / size.max(1) as f64)
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
    /// the model, by the highest estimate, characters, bytes; zero when every file
    /// fits.
    cost: (u64, u64, usize, usize),
}

impl Worked {
    fn of(
        tokenizer: Tokenizer,
        request: &LoadRequest,
        all_fit: bool,
        m: &Measured,
        content: &str,
        changed: bool,
    ) -> Worked {
        // `changed`: the file changed since it was measured, or `content` is its
        // outline, not its text.
        let counted = ((needs_counts(request) || !all_fit) && (changed || !m.counted))
            .then(|| tokenizer.count(content) as u64);
        let tokens = counted.unwrap_or(m.measure.tokens);
        let cut = request
            .max_file_tokens
            .and_then(|max| cut(tokenizer, content, tokens, max));
        let cost = if all_fit {
            (0, 0, 0, 0)
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
            (tokens, high, js_length(&escaped), escaped.len())
        };
        Worked { counted, cut, cost }
    }
}

/// Files read again per batch while packing: enough to keep every core reading,
/// few enough that a batch's texts are a small part of the packed text.
pub(super) const READ_AGAIN_BATCH: usize = 64;

/// A file read again: its text and the stamp it has now, or why it is no longer
/// readable text.
pub(super) type ReadAgain = Result<(String, FileStamp), SkipReason>;

/// A file read again as it is packed ([`Packing::shape`]): its text or outline.
type Shaped = Result<(String, FileStamp, Shown), SkipReason>;

/// What a file's row says of its detail (nothing under [`Detail::Full`]).
#[derive(Debug, Clone, Copy, Default)]
struct Shown {
    detail: Option<&'static str>,
    no_outline: Option<&'static str>,
}

impl Shown {
    fn outline() -> Shown {
        Shown {
            detail: Some("outline"),
            no_outline: None,
        }
    }

    /// Asked for as an outline, packed whole: it has none, for `reason`.
    fn whole(reason: &'static str) -> Shown {
        Shown {
            detail: Some("full"),
            no_outline: Some(reason),
        }
    }
}

/// The texts of the `wanted` files of `batch` (measured files), read again on all
/// cores, in order, each with the stamp it has now (`None` for those not wanted). A
/// file that is no longer readable text gets the reason.
///
/// Files may have grown since they were measured: each read is held to
/// `--max-file-bytes` and, with `read` (the bytes read again so far), all of them to
/// `--max-total-bytes`; over it the call fails as the first read would have.
pub(super) fn read_again(
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
pub(super) struct Chosen {
    pub(super) start: usize,
    pub(super) file: IncludedFile,
}
