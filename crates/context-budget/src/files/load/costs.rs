//! What each file costs at each level of `detail: "auto"`, learned only as far as
//! the choice needs it.
//!
//! [`scan`] reads every file once for what is cheap: its path line's cost, its
//! ranking signals ([`rank::signals`], from a scan of its lines, no parser) and two
//! floors: under what its piece whole, and its outline, can cost. Its piece whole
//! is counted, and its outline parsed, only when the choice of levels reaches the
//! file with room its floor fits in ([`resolve`], a batch of files at a time on all
//! cores). A tree many times the budget is parsed only as far as outlines can still
//! be chosen, not whole.
//!
//! The floors are estimates, not proofs: the answer is proven after it is built
//! (`Packing::finish`) whatever they say. A floor over a file's real cost only shows
//! that file at less detail than would have fitted. The full piece's floor is half
//! its text's tokens (escaping adds characters: a piece counts more than its
//! text); the outline's is a [`OUTLINE_FLOOR_BYTES_PER_TOKEN`]th of the bytes of its
//! top-level lines, which an outline keeps (bodies are elided, and their lines are
//! indented), code's tokens holding about four bytes.

use std::sync::atomic::AtomicU64;

use super::packing::{READ_AGAIN_BATCH, ReadAgain, read_again};
use super::rank::{self, MAX_MENTIONED_TOTAL, Signals, TopLevel};
use crate::answer::{HIGHEST_ESTIMATE, js_length, json_escaped};
use crate::files::error::FilesError;
use crate::files::measure::{Measured, Measurer};
use crate::files::output::Skipped;
use crate::files::pack::{cut, path_line, piece};
use crate::files::query::LoadRequest;
use crate::outline::{Bounds, Language, MAX_OUTLINE_BYTES};

/// Of a piece as the answer holds it: tokens for the model, by the highest
/// estimate, characters (UTF-16), bytes.
pub(super) type Cost = (u64, u64, usize, usize);

/// Bytes of top-level lines per token of an outline's floor: twice the bytes a
/// token of code holds, so the floor stays under the outline's real count.
pub(super) const OUTLINE_FLOOR_BYTES_PER_TOKEN: u64 = 8;

/// How much of a file is in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Level {
    Omitted,
    Path,
    Outline,
    Full,
}

impl Level {
    pub(super) fn name(self) -> &'static str {
        match self {
            Level::Omitted => "omitted",
            Level::Path => "path",
            Level::Outline => "outline",
            Level::Full => "full",
        }
    }
}

/// What is known of a cost: not yet learned, or learned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Known<T> {
    Not,
    Is(T),
}

/// One file as `auto` knows it.
pub(super) struct Scanned {
    /// Its index among the measured files.
    pub(super) index: usize,
    /// Its full text's tokens, as its path line states.
    pub(super) tokens: u64,
    pub(super) path: Cost,
    /// Its outline and its piece's cost, when it has one smaller than its text.
    /// Kept for the call once learned (outlines are smaller than the texts, which the
    /// call's read limit bounds), so that each round does not parse again.
    pub(super) outline: Known<Option<(String, Cost)>>,
    pub(super) full: Known<Cost>,
    /// Under what the outline's piece costs (tokens), until it is learned.
    outline_floor: u64,
}

impl Scanned {
    /// The cost of the file at `level`, when known.
    pub(super) fn cost(&self, level: Level) -> Option<Cost> {
        match level {
            Level::Omitted => Some((0, 0, 0, 0)),
            Level::Path => Some(self.path),
            Level::Outline => match &self.outline {
                Known::Is(Some(o)) => Some(o.1),
                Known::Is(None) => self.cost(Level::Full),
                Known::Not => None,
            },
            Level::Full => match self.full {
                Known::Is(cost) => Some(cost),
                Known::Not => None,
            },
        }
    }

    /// Under what the file costs at `level` (tokens), when that is not known yet.
    pub(super) fn floor(&self, level: Level) -> u64 {
        match level {
            Level::Omitted => 0,
            Level::Path => self.path.0,
            Level::Outline => self.path.0 + self.outline_floor,
            Level::Full => self.path.0.max(self.tokens / 2),
        }
    }

    /// Whether the file may have an outline: one is known, or not looked for yet.
    pub(super) fn may_have_outline(&self) -> bool {
        !matches!(self.outline, Known::Is(None))
    }
}

/// A piece's [`Cost`].
fn cost_of(tokenizer: crate::Tokenizer, piece: &str) -> Cost {
    let escaped = json_escaped(piece);
    let tokens = tokenizer.count(&escaped) as u64;
    let high = match tokenizer == HIGHEST_ESTIMATE {
        true => tokens,
        false => HIGHEST_ESTIMATE.count(&escaped) as u64,
    };
    (tokens, high, js_length(&escaped), escaped.len())
}

/// Which of a file's lines are its top level, by its language: none for a file
/// without an outline, headings for Markdown, lines not indented for source code.
fn top_level_of(path: &str) -> TopLevel {
    match Language::of(path) {
        None => TopLevel::None,
        Some(Language::Markdown) => TopLevel::Headings,
        Some(_) => TopLevel::Code,
    }
}

/// Every measured file read once (in batches on all cores): its path line's cost,
/// its ranking signals and its floors. Files no longer readable go to `skipped`.
pub(super) fn scan(
    measurer: &Measurer<'_>,
    measured: &[Measured],
    skipped: &mut Vec<Skipped>,
) -> Result<(Vec<Scanned>, Vec<Signals>), FilesError> {
    let (tokenizer, control) = (measurer.tokenizer, measurer.control);
    let read = AtomicU64::new(0);
    let (mut files, mut signals) = (Vec::new(), Vec::new());
    let mut mentioned = 0usize;
    for (batch_index, batch) in measured.chunks(READ_AGAIN_BATCH).enumerate() {
        if control.is_cancelled() {
            return Err(FilesError::Cancelled);
        }
        control.progress(batch_index * READ_AGAIN_BATCH, 2 * measured.len());
        let wanted = vec![true; batch.len()];
        let texts = read_again(measurer.roots, batch, &wanted, measurer.limits, &read)?;
        let pairs: Vec<(usize, &Measured, Option<_>)> = batch
            .iter()
            .zip(texts)
            .enumerate()
            .map(|(i, (m, t))| (batch_index * READ_AGAIN_BATCH + i, m, t))
            .collect();
        let work = |(index, m, text): (usize, &Measured, Option<_>)| {
            let (text, stamp): (String, _) = match text {
                Some(Ok(read)) => read,
                Some(Err(reason)) => return Some(Err(Skipped::new(&m.candidate.relative, reason))),
                None => return None,
            };
            let path = &m.candidate.relative;
            let tokens = match stamp == m.stamp && m.counted {
                true => m.measure.tokens,
                false => tokenizer.count(&text) as u64,
            };
            let top_level = top_level_of(path);
            let has_outline = top_level != TopLevel::None && text.len() <= MAX_OUTLINE_BYTES;
            let top_bytes: usize = rank::top_level_lines(&text, top_level)
                .map(|line| line.len() + 1)
                .sum();
            let file_signals = rank::signals(path, &text, rank::top_level_lines(&text, top_level));
            let scanned = Scanned {
                index,
                tokens,
                path: cost_of(tokenizer, &path_line(path, tokens)),
                outline: match has_outline {
                    true => Known::Not,
                    false => Known::Is(None),
                },
                full: Known::Not,
                outline_floor: top_bytes as u64 / OUTLINE_FLOOR_BYTES_PER_TOKEN,
            };
            Some(Ok((scanned, file_signals)))
        };
        let done = crate::fan_out::map(pairs, crate::fan_out::cores(), work);
        if control.is_cancelled() {
            return Err(FilesError::Cancelled);
        }
        for result in done.into_iter().flatten() {
            match result {
                Ok((scanned, mut file_signals)) => {
                    if mentioned + file_signals.mentioned.len() > MAX_MENTIONED_TOTAL {
                        file_signals.mentioned.clear();
                    }
                    mentioned += file_signals.mentioned.len();
                    files.push(scanned);
                    signals.push(file_signals);
                }
                Err(skip) => skipped.push(skip),
            }
        }
    }
    Ok((files, signals))
}

/// What to learn of a file: its outline, or its piece whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Learn {
    Outline,
    Full,
}

/// Learn `what` of each of `wanted` (indices of `files`), reading them again on all
/// cores. A file no longer readable gets no outline and a piece that never fits;
/// the text built from the levels finds it unreadable again and skips it.
pub(super) fn resolve(
    measurer: &Measurer<'_>,
    request: &LoadRequest,
    measured: &[Measured],
    files: &mut [Scanned],
    (wanted, what): (&[usize], Learn),
    read: &AtomicU64,
) -> Result<(), FilesError> {
    let (tokenizer, control, format) = (measurer.tokenizer, measurer.control, request.format);
    if control.is_cancelled() {
        return Err(FilesError::Cancelled);
    }
    let batch: Vec<Measured> = wanted
        .iter()
        .map(|&i| measured[files[i].index].clone())
        .collect();
    let want = vec![true; batch.len()];
    let texts = read_again(measurer.roots, &batch, &want, measurer.limits, read)?;
    let items: Vec<(usize, Option<_>)> = wanted.iter().copied().zip(texts).collect();
    let shared: &[Scanned] = files;
    let work = |(i, text): (usize, Option<ReadAgain>)| {
        let file = &shared[i];
        let Some(Ok((text, _))) = text else {
            return Some((i, Known::Is(None), Some((u64::MAX / 4, 0, 0, 0))));
        };
        let path = measured[file.index].candidate.relative.as_str();
        // The whole piece, cut by `max_file_tokens`, when it is asked for or when a
        // cut may leave it smaller than the outline.
        let cut_text = request
            .max_file_tokens
            .and_then(|max| cut(tokenizer, &text, file.tokens, max));
        let full =
            (what == Learn::Full || (cut_text.is_some() && file.full == Known::Not)).then(|| {
                cost_of(
                    tokenizer,
                    &piece(format, path, cut_text.as_deref().unwrap_or(&text)),
                )
            });
        let outline = match what {
            Learn::Full => None,
            Learn::Outline => {
                let whole = full.or(match file.full {
                    Known::Is(cost) => Some(cost),
                    Known::Not => None,
                });
                let found = crate::outline::outline(path, &text, &Bounds::default(), control)
                    .ok()
                    .filter(|o| !o.elided.is_empty())
                    .map(|o| {
                        let cost = cost_of(tokenizer, &piece(format, path, &o.text));
                        (o.text, cost)
                    })
                    .filter(|(_, cost)| whole.is_none_or(|w| cost.0 < w.0));
                Some(found)
            }
        };
        Some((i, outline.map_or(Known::Not, Known::Is), full))
    };
    let done = crate::fan_out::map(items, crate::fan_out::cores(), work);
    if control.is_cancelled() {
        return Err(FilesError::Cancelled);
    }
    for (i, outline, full) in done.into_iter().flatten() {
        if let Known::Is(o) = outline {
            files[i].outline = Known::Is(o);
        }
        if let Some(cost) = full {
            files[i].full = Known::Is(cost);
        }
    }
    // A file the fan-out left undone (a bug in a worker) is settled so the choice
    // does not ask for it again: no outline, its piece never fitting.
    for &i in wanted {
        match what {
            Learn::Outline if files[i].outline == Known::Not => files[i].outline = Known::Is(None),
            Learn::Full if files[i].full == Known::Not => {
                files[i].full = Known::Is((u64::MAX / 4, 0, 0, 0));
            }
            _ => {}
        }
    }
    Ok(())
}
