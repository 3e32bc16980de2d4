//! `detail: "auto"`: every file at the most detail the budget allows.
//!
//! Every file is read once ([`scan`]): its path line is measured as the
//! answer holds it (JSON-escaped, counted alone), and under `order: "mentioned"`
//! (the default here) what ranking needs is taken ([`rank::signals`]). Files the
//! caller named come first, in order; the rest in the request's order
//! ([`rank::by_order`]). [`select`] then gives every file a path line (those that do
//! not fit even so are omitted, and the answer counts them), named files their
//! text, then in that order each file its outline, then its text, each upgrade
//! taken if it fits. The same scan ranks the files for `mentioned` at the other
//! details ([`mentioned`]).
//!
//! What each file costs is learned only as far as the choice needs it. [`scan`]
//! takes what is cheap: the path line's cost, the ranking signals (from a scan of
//! the lines, no parser) and two floors, under what its piece whole and its outline
//! can cost. A file's piece whole is counted, and its outline parsed, only when
//! [`select`] reaches it with room its floor fits in ([`resolve`], a batch at a time
//! on all cores): a tree many times the budget is parsed only as far as outlines
//! can still be chosen. The floors are estimates, not proofs (the answer is proven
//! after it is built, whatever they say; a floor over a file's real cost only shows
//! it at less detail than would have fitted): the whole piece's is half its text's
//! tokens (escaping adds characters: a piece counts more than its text), the
//! outline's a [`OUTLINE_FLOOR_BYTES_PER_TOKEN`]th of the bytes of its top-level
//! lines, which an outline keeps (bodies are elided, and their lines indented).
//!
//! The text is built in that order and proven by [`Packing::finish`], which drops
//! pieces from the end while the answer is over the budget. What the report around
//! the text takes is only estimated before ([`Reserve`]): when the proven answer
//! dropped a piece, the room for the text is narrowed, and when it uses under
//! [`FILL_PERCENT`] of the budget while more detail remains, widened, and files are
//! chosen again, at most [`ROUNDS`] times.

use std::sync::atomic::AtomicU64;

use super::budget::Reserve;
use super::packing::{Chosen, Packing, READ_AGAIN_BATCH, ReadAgain, read_again};
use super::rank::{self, Key, MAX_MENTIONED_TOTAL, Signals, TopLevel};
use crate::ResolvedModel;
use crate::answer::{HIGHEST_ESTIMATE, js_length, json_escaped};
use crate::files::error::FilesError;
use crate::files::measure::{Measured, Measurer};
use crate::files::output::{Excluded, IncludedFile, LoadedFiles, OmittedFile, Skipped};
use crate::files::pack::{PackOrder, cut, path_line, piece, push_piece};
use crate::files::query::LoadRequest;
use crate::outline::{Bounds, Language, MAX_OUTLINE_BYTES};

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
    let order = request.order();
    let ranking = order == PackOrder::Mentioned;
    let (mut files, signals) = scan(measurer, measured, &mut skipped, ranking)?;
    let degree = match ranking {
        true => rank::in_degree(&signals, &|| measurer.control.is_cancelled())
            .ok_or(FilesError::Cancelled)?,
        false => vec![0; files.len()],
    };
    drop(signals);
    // Named files first, as given; then the rest in the order asked.
    let (named, walked): (Vec<usize>, Vec<usize>) =
        (0..files.len()).partition(|&i| measured[files[i].index].candidate.explicit);
    let keys: Vec<Key<'_>> = walked
        .iter()
        .map(|&i| {
            let m = &measured[files[i].index];
            Key {
                root: m.candidate.root,
                path: &m.candidate.relative,
                tokens: files[i].tokens,
                modified: m.stamp.modified,
                degree: degree[i],
            }
        })
        .collect();
    let order: Vec<usize> = named
        .iter()
        .copied()
        .chain(rank::by_order(order, &keys).into_iter().map(|r| walked[r]))
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

/// Each of `measured`'s rank ([`rank::in_degree`]) for `order: "mentioned"` at a
/// detail other than auto, from the one read of every file that ranks auto's
/// ([`scan`]). The files that read no longer finds readable leave `measured` for
/// `skipped`, as under auto.
pub(super) fn mentioned(
    measurer: &Measurer<'_>,
    measured: &mut Vec<Measured>,
    skipped: &mut Vec<Skipped>,
) -> Result<Vec<u32>, FilesError> {
    let (files, signals) = scan(measurer, measured, skipped, true)?;
    let degree = rank::in_degree(&signals, &|| measurer.control.is_cancelled())
        .ok_or(FilesError::Cancelled)?;
    // `files` keeps `measured`'s order: what it holds, in turn, is what stays.
    let mut read = files.iter().map(|f| f.index).peekable();
    let mut index = 0;
    measured.retain(|_| {
        let kept = read.next_if_eq(&index).is_some();
        index += 1;
        kept
    });
    Ok(degree)
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
    resolve(measurer, request, measured, files, what, &learning.read)
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

/// Of a piece as the answer holds it: tokens for the model, by the highest
/// estimate, characters (UTF-16), bytes.
type Cost = (u64, u64, usize, usize);

/// Bytes of top-level lines per token of an outline's floor: twice the bytes a
/// token of code holds, so the floor stays under the outline's real count.
const OUTLINE_FLOOR_BYTES_PER_TOKEN: u64 = 8;

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

/// What is known of a cost: not yet learned, or learned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Known<T> {
    Not,
    Is(T),
}

/// One file as `auto` knows it.
struct Scanned {
    /// Its index among the measured files.
    index: usize,
    /// Its full text's tokens, as its path line states.
    tokens: u64,
    path: Cost,
    /// Its outline and its piece's cost, when it has one smaller than its text.
    /// Kept for the call once learned (outlines are smaller than the texts, which the
    /// call's read limit bounds), so that each round does not parse again.
    outline: Known<Option<(String, Cost)>>,
    full: Known<Cost>,
    /// Under what the outline's piece costs (tokens), until it is learned.
    outline_floor: u64,
}

impl Scanned {
    /// The cost of the file at `level`, when known.
    fn cost(&self, level: Level) -> Option<Cost> {
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
    fn floor(&self, level: Level) -> u64 {
        match level {
            Level::Omitted => 0,
            Level::Path => self.path.0,
            Level::Outline => self.path.0 + self.outline_floor,
            Level::Full => self.path.0.max(self.tokens / 2),
        }
    }

    /// Whether the file may have an outline: one is known, or not looked for yet.
    fn may_have_outline(&self) -> bool {
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
/// its floors and, when `ranking`, its ranking signals (else empty ones). Files no
/// longer readable go to `skipped`.
fn scan(
    measurer: &Measurer<'_>,
    measured: &[Measured],
    skipped: &mut Vec<Skipped>,
    ranking: bool,
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
            let file_signals = match ranking {
                true => rank::signals(path, &text, rank::top_level_lines(&text, top_level)),
                false => Signals::default(),
            };
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
enum Learn {
    Outline,
    Full,
}

/// Learn `what` of each of `wanted` (indices of `files`), reading them again on all
/// cores. A file no longer readable gets no outline and a piece that never fits;
/// the text built from the levels finds it unreadable again and skips it.
fn resolve(
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
