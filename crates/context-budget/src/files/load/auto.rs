//! `detail: "auto"`: every file at the most detail the budget allows.
//!
//! Every file is read once ([`costs::scan`]): its path line is measured as the
//! answer holds it (JSON-escaped, counted alone), and what ranking needs is taken
//! ([`rank::signals`]). Files the caller named come first, in order; the rest by
//! [`rank::by_rank`]. [`select`] then gives every file a path line (those that do not
//! fit even so are omitted, and the answer counts them), named files their text, then
//! by rank each file its outline, then its text, each upgrade taken if it fits.
//! A file's outline and whole piece are measured only when [`select`] reaches it
//! with room for them ([`costs::resolve`], a batch at a time on all cores), so a
//! tree many times the budget is not parsed whole.
//!
//! The text is built in that order and proven by [`Packing::finish`], which drops
//! pieces from the end while the answer is over the budget. What the report around
//! the text takes is only estimated before ([`Reserve`]): when the proven answer
//! dropped a piece, the room for the text is narrowed, and when it uses under
//! [`FILL_PERCENT`] of the budget while more detail remains, widened, and files are
//! chosen again, at most [`ROUNDS`] times.

use std::sync::atomic::AtomicU64;

use super::budget::Reserve;
use super::costs::{self, Cost, Known, Learn, Level, Scanned};
use super::packing::{Chosen, Packing, READ_AGAIN_BATCH, read_again};
use super::rank;
use crate::ResolvedModel;
use crate::files::error::FilesError;
use crate::files::measure::{Measured, Measurer};
use crate::files::output::{Excluded, IncludedFile, LoadedFiles, OmittedFile, Skipped};
use crate::files::pack::{cut, path_line, push_piece};
use crate::files::query::LoadRequest;

/// The share of the budget (percent) the answer fills whenever more detail remains.
pub(super) const FILL_PERCENT: u64 = 90;
/// Times a text is built and proven to fill the budget (each a count of the answer).
const ROUNDS: usize = 6;
/// Times files are chosen (no count: a pass over the files' costs).
const SELECTIONS: usize = 24;

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
    let (mut files, signals) = costs::scan(measurer, measured, &mut skipped)?;
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

    // Outlines and whole pieces are learned as the choice reaches them.
    let mut learning = Learning::default();
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
        let (levels, limit_bound) = loop {
            match select(&files, &order, named, &limits) {
                Ok(chosen) => break chosen,
                Err(need) => learn(
                    measurer,
                    request,
                    measured,
                    &mut files,
                    &order,
                    need,
                    &mut learning,
                )?,
            }
        };
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

/// A cost [`select`] needs and does not know: that of file `file` (at `at` in the
/// order) at `learn`'s level, with `room` tokens left for its upgrade.
#[derive(Debug, Clone, Copy)]
struct Need {
    file: usize,
    at: usize,
    learn: Learn,
    room: u64,
}

/// What was learned so far: files read again and how many of each kind (a batch
/// grows with them, so a choice that needs many waits on few batches).
#[derive(Default)]
struct Learning {
    read: AtomicU64,
    learned: usize,
}

/// Learn what `need` asks of its file and of the next files in `order` that the
/// same choice may ask it of (not known, their floor within the room left): a batch
/// of [`READ_AGAIN_BATCH`] at most, on all cores.
fn learn(
    measurer: &Measurer<'_>,
    request: &LoadRequest,
    measured: &[Measured],
    files: &mut [Scanned],
    order: &[usize],
    need: Need,
    learning: &mut Learning,
) -> Result<(), FilesError> {
    let size = learning
        .learned
        .max(2 * crate::fan_out::cores())
        .min(READ_AGAIN_BATCH);
    let level = match need.learn {
        Learn::Outline => Level::Outline,
        Learn::Full => Level::Full,
    };
    let unknown = |f: &Scanned| match need.learn {
        Learn::Outline => f.outline == Known::Not,
        Learn::Full => f.full == Known::Not,
    };
    let wanted: Vec<usize> = std::iter::once(need.file)
        .chain(order[need.at + 1..].iter().copied().filter(|&j| {
            let file = &files[j];
            unknown(file) && file.floor(level).saturating_sub(file.path.0) <= need.room
        }))
        .take(size)
        .collect();
    learning.learned += wanted.len();
    let what = (wanted.as_slice(), need.learn);
    costs::resolve(measurer, request, measured, files, what, &learning.read)
}

/// Each file's level (indexed like `files`) within `room`: path lines for all in
/// `order` (omitted when even that is over), named files (the first `named` of
/// `order`) their text or else their outline; then by `order` each file its
/// outline, then its text, every upgrade that fits (one that does not is passed
/// over, and later smaller ones may still fit). Also whether an upgrade that fit
/// the budget was refused for the answer limit's characters, bytes or estimate.
/// `Err`: the first cost the choice needs and does not know (its floor fits).
fn select(
    files: &[Scanned],
    order: &[usize],
    named: usize,
    room: &Reserve,
) -> Result<(Vec<Level>, bool), Need> {
    let mut chosen = Selection {
        files,
        room,
        levels: vec![Level::Omitted; files.len()],
        used: (0, 0, 0, 0),
        limit_bound: false,
    };
    for (at, &i) in order.iter().enumerate() {
        chosen.upgrade(i, at, Level::Path)?;
    }
    for (at, &i) in order[..named].iter().enumerate() {
        if chosen.levels[i] == Level::Path
            && !chosen.upgrade(i, at, Level::Full)?
            && files[i].may_have_outline()
        {
            chosen.upgrade(i, at, Level::Outline)?;
        }
    }
    for (at, &i) in order.iter().enumerate() {
        if chosen.levels[i] == Level::Path && files[i].may_have_outline() {
            chosen.upgrade(i, at, Level::Outline)?;
        }
    }
    for (at, &i) in order.iter().enumerate() {
        if matches!(chosen.levels[i], Level::Path | Level::Outline) {
            chosen.upgrade(i, at, Level::Full)?;
        }
    }
    Ok((chosen.levels, chosen.limit_bound))
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
    /// Take file `i` (at `at` in the order) to level `to` when that fits; `Err` when
    /// its cost there is not known and its floor fits.
    fn upgrade(&mut self, i: usize, at: usize, to: Level) -> Result<bool, Need> {
        let file = &self.files[i];
        // A level already chosen has its cost known.
        let old = file.cost(self.levels[i]).unwrap_or_default();
        let used = self.used;
        let room = self.room;
        let Some(new) = file.cost(to) else {
            let next = (used.0 + file.floor(to)).saturating_sub(old.0);
            if next > room.text_tokens {
                return Ok(false);
            }
            let learn = match (to, &file.outline) {
                (Level::Outline, Known::Not) => Learn::Outline,
                _ => Learn::Full,
            };
            return Err(Need {
                file: i,
                at,
                learn,
                room: (room.text_tokens + old.0).saturating_sub(used.0),
            });
        };
        let next = (
            (used.0 + new.0).saturating_sub(old.0),
            (used.1 + new.1).saturating_sub(old.1),
            (used.2 + new.2).saturating_sub(old.2),
            (used.3 + new.3).saturating_sub(old.3),
        );
        let within_budget = next.0 <= room.text_tokens;
        let within_limit =
            next.1 <= room.text_high && next.2 <= room.text_chars && next.3 <= room.text_bytes;
        self.limit_bound |= within_budget && !within_limit;
        let fits = within_budget && within_limit;
        if fits {
            self.used = next;
            self.levels[i] = to;
        }
        Ok(fits)
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
                let outline = match &file.outline {
                    Known::Is(Some(o)) => o.0.as_str(),
                    _ => "",
                };
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
