//! `detail: "auto"`: every file at the most detail the budget allows.
//!
//! Every file is read once ([`scan`]): its piece is measured as the answer holds it
//! (JSON-escaped, counted alone) at each level, `full` (its text, cut by
//! `max_file_tokens`), `outline` (when it has one smaller than its text) and `path`
//! (one line with its full text's tokens), and what ranking needs is taken
//! ([`rank::signals`]). Files the caller named come first, in order; the rest by
//! [`rank::by_rank`]. [`select`] then gives every file a path line (those that do not
//! fit even so are omitted, and the answer counts them), named files their text, then
//! by rank each file its outline, then its text, each upgrade taken if it fits.
//!
//! The text is built in that order and proven by [`Packing::finish`], which drops
//! pieces from the end while the answer is over the budget. What the report around
//! the text takes is only estimated before ([`Reserve`]): when the proven answer
//! dropped a piece, the room for the text is narrowed, and when it uses under
//! [`FILL_PERCENT`] of the budget while more detail remains, widened, and files are
//! chosen again, at most [`ROUNDS`] times.

use std::sync::atomic::AtomicU64;

use super::budget::Reserve;
use super::packing::{Chosen, Packing, READ_AGAIN_BATCH, read_again};
use super::rank::{self, MAX_MENTIONED_TOTAL, Signals};
use crate::answer::{HIGHEST_ESTIMATE, js_length, json_escaped};
use crate::files::error::FilesError;
use crate::files::measure::{Measured, Measurer};
use crate::files::output::{Excluded, IncludedFile, LoadedFiles, OmittedFile, Skipped};
use crate::files::pack::{cut, path_line, piece, push_piece};
use crate::files::query::LoadRequest;
use crate::outline::Bounds;
use crate::{ResolvedModel, Tokenizer};

/// The share of the budget (percent) the answer fills whenever more detail remains.
pub(super) const FILL_PERCENT: u64 = 90;
/// Times a text is built and proven to fill the budget (each a count of the answer).
const ROUNDS: usize = 6;
/// Times files are chosen (no count: a pass over the files' costs).
const SELECTIONS: usize = 24;

/// Of a piece as the answer holds it: tokens for the model, by the highest
/// estimate, characters (UTF-16), bytes.
type Cost = (u64, u64, usize, usize);

/// How much of a file is in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Omitted,
    Path,
    Outline,
    Full,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Omitted => "omitted",
            Level::Path => "path",
            Level::Outline => "outline",
            Level::Full => "full",
        }
    }
}

/// One file as read for `auto`.
struct Scanned {
    /// Its index among the measured files.
    index: usize,
    /// Its full text's tokens, as its path line states.
    tokens: u64,
    path: Cost,
    /// Its outline and its piece's cost, when it has one smaller than its text. Kept
    /// for the call (outlines are smaller than the texts, which the call's read limit
    /// bounds), so that each round does not parse again.
    outline: Option<(String, Cost)>,
    full: Cost,
}

impl Scanned {
    fn cost(&self, level: Level) -> Cost {
        match level {
            Level::Omitted => (0, 0, 0, 0),
            Level::Path => self.path,
            Level::Outline => self.outline.as_ref().map_or(self.full, |o| o.1),
            Level::Full => self.full,
        }
    }
}

/// A piece's [`Cost`].
fn cost_of(tokenizer: Tokenizer, piece: &str) -> Cost {
    let escaped = json_escaped(piece);
    let tokens = tokenizer.count(&escaped) as u64;
    let high = match tokenizer == HIGHEST_ESTIMATE {
        true => tokens,
        false => HIGHEST_ESTIMATE.count(&escaped) as u64,
    };
    (tokens, high, js_length(&escaped), escaped.len())
}

/// `load-files` under `detail: "auto"`, from the measured files on.
#[allow(clippy::too_many_arguments)]
pub(super) fn load_auto(
    measurer: &Measurer<'_>,
    request: &LoadRequest,
    model: &ResolvedModel<'_>,
    (budget, budget_source): (u64, &'static str),
    reserve: Reserve,
    measured: &[Measured],
    mut skipped: Vec<Skipped>,
    excluded: Excluded,
) -> Result<LoadedFiles, FilesError> {
    let (files, signals) = scan(measurer, request, measured, &mut skipped)?;
    let control = measurer.control;
    let degree =
        rank::in_degree(&signals, &|| control.is_cancelled()).ok_or(FilesError::Cancelled)?;
    drop(signals);
    // Named files first, as given; then the rest by rank.
    let (named, walked): (Vec<usize>, Vec<usize>) =
        (0..files.len()).partition(|&i| measured[files[i].index].candidate.explicit);
    let paths: Vec<&str> = walked
        .iter()
        .map(|&i| measured[files[i].index].candidate.relative.as_str())
        .collect();
    let tokens: Vec<u64> = walked.iter().map(|&i| files[i].tokens).collect();
    let degrees: Vec<u32> = walked.iter().map(|&i| degree[i]).collect();
    let order: Vec<usize> = named
        .iter()
        .copied()
        .chain(
            rank::by_rank(&degrees, &paths, &tokens)
                .into_iter()
                .map(|r| walked[r]),
        )
        .collect();
    let named = named.len();

    let slack = 4 + budget / 200;
    let mut room = reserve.text_tokens;
    // Rooms known to be proven within the budget (`good`) and to lose a piece (`bad`).
    let (mut good, mut bad) = (None::<u64>, None::<u64>);
    // The best answer built: see `key` below.
    let mut best: Option<(LoadedFiles, bool)> = None;
    // Each built round's levels and whether its proof lost a piece.
    let mut built: Vec<(Vec<Level>, bool)> = Vec::new();
    // A narrower room than `room`: halfway back to the last that lost no piece, or
    // down by a twentieth.
    let narrower = |room: u64, good: Option<u64>| match good {
        Some(g) => g + (room - g) / 2,
        None => room.saturating_sub(slack.max(room / 20)),
    };
    for _ in 0..SELECTIONS {
        let limits = Reserve {
            text_tokens: room,
            ..reserve
        };
        let (levels, limit_bound) = select(&files, &order, named, &limits);
        match built.iter().find(|(l, _)| *l == levels) {
            // The same choice lost a piece: narrower still, without building it.
            Some((_, true)) => {
                bad = Some(room);
                let next = narrower(room, good);
                if next == room || Some(next) == good {
                    break;
                }
                room = next;
                continue;
            }
            // Already proven: a wider room changes nothing (the answer limit binds).
            Some((_, false)) => break,
            None if built.len() == ROUNDS => break,
            None => {}
        }
        let omitted_chosen = levels.iter().filter(|l| **l == Level::Omitted).count();
        let more_detail = levels.iter().any(|l| *l < Level::Full);
        // A file left out costs a row of the report much as its path line would cost
        // the text: 90 % reached with files left out may be mostly those rows.
        let all_present = omitted_chosen == 0;
        let mut round_skipped = skipped.clone();
        let packing = build(
            measurer,
            request,
            (budget, reserve),
            measured,
            (&files, &order, &levels),
            &mut round_skipped,
            limit_bound,
        )?;
        let answer = packing.finish(model, budget_source, round_skipped, excluded.clone())?;
        let dropped = answer.omitted_files > omitted_chosen;
        match dropped {
            true => bad = Some(room),
            false => good = Some(room),
        }
        built.push((levels, dropped));
        let filled = answer.answer_tokens * 100 >= budget * FILL_PERCENT;
        let room_left = budget.saturating_sub(answer.answer_tokens);
        // Better: lost no piece to the proof; then more files present (a file left
        // out is only a row of the report); then fuller.
        let key = |a: &LoadedFiles, dropped: bool| {
            (
                !dropped,
                std::cmp::Reverse(a.omitted_files),
                a.answer_tokens,
            )
        };
        let better = match &best {
            None => true,
            Some((b, b_dropped)) => key(&answer, dropped) > key(b, *b_dropped),
        };
        if better {
            best = Some((answer, dropped));
        }
        let next = match (dropped, bad) {
            (true, _) => narrower(room, good),
            // Filled, nothing more to show, or the answer limit holds the rest back.
            (false, _)
                if (filled && all_present) || !more_detail || limit_bound || room_left <= slack =>
            {
                break;
            }
            (false, Some(b)) => room + (b - room) / 2,
            (false, None) => room + room_left - slack,
        };
        // Back to a room already proven: its answer is the best.
        if next == room || Some(next) == good {
            break;
        }
        room = next;
    }
    best.map(|(answer, _)| answer).ok_or(FilesError::Cancelled)
}

/// Every measured file read once (in batches on all cores): its pieces' costs at
/// each level, its outline, and its ranking signals. Files no longer readable go
/// to `skipped`.
fn scan(
    measurer: &Measurer<'_>,
    request: &LoadRequest,
    measured: &[Measured],
    skipped: &mut Vec<Skipped>,
) -> Result<(Vec<Scanned>, Vec<Signals>), FilesError> {
    let (tokenizer, control, format) = (measurer.tokenizer, measurer.control, request.format);
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
            let cut_text = request
                .max_file_tokens
                .and_then(|max| cut(tokenizer, &text, tokens, max));
            let full = cost_of(
                tokenizer,
                &piece(format, path, cut_text.as_deref().unwrap_or(&text)),
            );
            let outline = crate::outline::outline(path, &text, &Bounds::default(), control)
                .ok()
                .map(|o| {
                    let cost = cost_of(tokenizer, &piece(format, path, &o.text));
                    (o.text, cost)
                })
                .filter(|(_, cost)| cost.0 < full.0);
            let file_signals = rank::signals(path, &text, outline.as_ref().map(|o| o.0.as_str()));
            let scanned = Scanned {
                index,
                tokens,
                path: cost_of(tokenizer, &path_line(path, tokens)),
                outline,
                full,
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

/// Each file's level (indexed like `files`) within `room`: path lines for all in
/// `order` (omitted when even that is over), named files (the first `named` of
/// `order`) their text or else their outline; then by `order` each file its
/// outline, then its text, every upgrade that fits (one that does not is passed
/// over, and later smaller ones may still fit). Also whether an upgrade that fit
/// the budget was refused for the answer limit's characters, bytes or estimate.
fn select(files: &[Scanned], order: &[usize], named: usize, room: &Reserve) -> (Vec<Level>, bool) {
    let mut chosen = Selection {
        files,
        room,
        levels: vec![Level::Omitted; files.len()],
        used: (0, 0, 0, 0),
        limit_bound: false,
    };
    for &i in order {
        chosen.upgrade(i, Level::Path);
    }
    for &i in &order[..named] {
        if chosen.levels[i] == Level::Path
            && !chosen.upgrade(i, Level::Full)
            && files[i].outline.is_some()
        {
            chosen.upgrade(i, Level::Outline);
        }
    }
    for &i in order {
        if chosen.levels[i] == Level::Path && files[i].outline.is_some() {
            chosen.upgrade(i, Level::Outline);
        }
    }
    for &i in order {
        if matches!(chosen.levels[i], Level::Path | Level::Outline) {
            chosen.upgrade(i, Level::Full);
        }
    }
    (chosen.levels, chosen.limit_bound)
}

/// [`select`]'s levels as they are chosen, and what they use of the room.
struct Selection<'a> {
    files: &'a [Scanned],
    room: &'a Reserve,
    levels: Vec<Level>,
    used: Cost,
    limit_bound: bool,
}

impl Selection<'_> {
    /// Take file `i` to level `to` when that fits.
    fn upgrade(&mut self, i: usize, to: Level) -> bool {
        let file = &self.files[i];
        let (old, new) = (file.cost(self.levels[i]), file.cost(to));
        let used = self.used;
        let next = (
            (used.0 + new.0).saturating_sub(old.0),
            (used.1 + new.1).saturating_sub(old.1),
            (used.2 + new.2).saturating_sub(old.2),
            (used.3 + new.3).saturating_sub(old.3),
        );
        let room = self.room;
        let within_budget = next.0 <= room.text_tokens;
        let within_limit =
            next.1 <= room.text_high && next.2 <= room.text_chars && next.3 <= room.text_bytes;
        self.limit_bound |= within_budget && !within_limit;
        let fits = within_budget && within_limit;
        if fits {
            self.used = next;
            self.levels[i] = to;
        }
        fits
    }
}

/// The text for `levels`, in `order`: full texts read again (in batches), outlines
/// as scanned, path lines; files at no level omitted.
fn build<'a>(
    measurer: &Measurer<'a>,
    request: &'a LoadRequest,
    (budget, reserve): (u64, Reserve),
    measured: &[Measured],
    (files, order, levels): (&[Scanned], &[usize], &[Level]),
    skipped: &mut Vec<Skipped>,
    limit_bound: bool,
) -> Result<Packing<'a>, FilesError> {
    let (tokenizer, format, control) = (measurer.tokenizer, request.format, measurer.control);
    let roots = measurer.roots;
    // The full texts, read again batch by batch in text order.
    let full: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| levels[i] == Level::Full)
        .collect();
    // A full text read again, or `None`: no longer readable (skipped) or not read.
    let mut texts: std::collections::HashMap<usize, Option<String>> = Default::default();
    let read = AtomicU64::new(0);
    let (mut text, mut chosen, mut omitted) = (String::new(), Vec::new(), Vec::new());
    let mut next_full = 0usize;
    for &i in order {
        if control.is_cancelled() {
            return Err(FilesError::Cancelled);
        }
        let file = &files[i];
        let m = &measured[file.index];
        let path = &m.candidate.relative;
        let root = roots.label(m.candidate.root);
        let start = text.len();
        let level = levels[i];
        match level {
            Level::Omitted => {
                omitted.push(OmittedFile {
                    path: path.clone(),
                    root,
                    tokens: tokenizer.count(&path_line(path, file.tokens)) as u64,
                    reason: "over_budget",
                });
                continue;
            }
            Level::Path => text.push_str(&path_line(path, file.tokens)),
            Level::Outline => {
                let outline = file.outline.as_ref().map_or("", |o| o.0.as_str());
                push_piece(&mut text, format, path, outline);
            }
            Level::Full => {
                if !texts.contains_key(&i) {
                    let keys = &full[next_full..(next_full + READ_AGAIN_BATCH).min(full.len())];
                    next_full += keys.len();
                    let batch: Vec<Measured> = keys
                        .iter()
                        .map(|&j| measured[files[j].index].clone())
                        .collect();
                    let wanted = vec![true; batch.len()];
                    let read = read_again(roots, &batch, &wanted, measurer.limits, &read)?;
                    for (&key, result) in keys.iter().zip(read) {
                        let content = match result {
                            Some(Ok((content, _))) => Some(content),
                            Some(Err(reason)) => {
                                skipped
                                    .push(Skipped::new(&batch_path(measured, files, key), reason));
                                None
                            }
                            None => None,
                        };
                        texts.insert(key, content);
                    }
                }
                let Some(content) = texts.remove(&i).flatten() else {
                    continue;
                };
                // Counted again only to be cut: the proof counts the whole text.
                let content = request
                    .max_file_tokens
                    .and_then(|max| {
                        let tokens = tokenizer.count(&content) as u64;
                        cut(tokenizer, &content, tokens, max)
                    })
                    .unwrap_or(content);
                push_piece(&mut text, format, path, &content);
            }
        }
        let truncated =
            level == Level::Full && request.max_file_tokens.is_some_and(|max| file.tokens > max);
        chosen.push(Chosen {
            start,
            file: IncludedFile {
                path: path.clone(),
                root,
                tokens: 0,
                truncated,
                detail: Some(level.name()),
                no_outline: None,
            },
        });
    }
    Ok(Packing::built(
        request,
        measurer,
        (budget, reserve),
        (text, chosen, omitted),
        limit_bound,
    ))
}

fn batch_path(measured: &[Measured], files: &[Scanned], key: usize) -> String {
    measured[files[key].index].candidate.relative.clone()
}
