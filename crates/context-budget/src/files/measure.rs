//! Measuring the files a walk found: open (verified), read with the shared core
//! (`crate::read`), count, on all cores (`crate::fan_out`) and through the
//! measurement cache, under the call's byte budget. Both file tools start here.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use super::error::FilesError;
use super::open::{open_in_root, reopen};
use super::output::Skipped;
use super::query::FileLimits;
use super::roots::{Roots, relative_to};
use super::secrets::looks_secret_path;
use super::walk::Candidate;
use crate::Tokenizer;
use crate::cache::{FileStamp, MeasureCache};
use crate::outline::{Bounds, Language, NoOutline};
use crate::read::SkipReason;
use crate::scan_control::ScanControl;

/// The numbers of one file. What the cache holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeasure {
    pub tokens: u64,
    pub lines: u64,
    pub bytes: u64,
    /// Bytes of the text escaped in a JSON string, as an answer holds it: with the
    /// tokens' bound per byte, it can tell that a whole tree fits a budget without
    /// counting it (`load::budget::all_fit_by_bytes`).
    pub escaped: u64,
    /// Tokens of the file's outline ([`crate::outline`]), once a call asked for it.
    /// Held with the file's other numbers, it is valid for the same stamp.
    pub outline: OutlineTokens,
}

/// A file's outline, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutlineTokens {
    /// No call has asked for it yet.
    #[default]
    NotCounted,
    /// The file has no outline, for this reason ([`crate::outline::NoOutline::code`]).
    Missing(&'static str),
    /// Tokens of the outline's text, for the measure's tokenizer.
    Tokens(u64),
}

impl OutlineTokens {
    /// The count, when the file has an outline.
    pub fn tokens(self) -> Option<u64> {
        match self {
            OutlineTokens::Tokens(n) => Some(n),
            _ => None,
        }
    }
}

/// A file that was opened, checked and measured.
#[derive(Clone)]
pub(super) struct Measured {
    pub(super) candidate: Candidate,
    /// `tokens` is 0 until counted (see [`Reading`]).
    pub(super) measure: FileMeasure,
    pub(super) counted: bool,
    pub(super) cached: bool,
    pub(super) canonical: PathBuf,
    pub(super) stamp: FileStamp,
}

/// What [`Measurer::measure`] does with each file. Texts are never kept: a whole
/// tree's files held next to its packed text would double `load-files`' memory, so
/// the files packed are read again, one batch at a time
/// (`load::packing::read_again`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// Count it (from the cache when unchanged).
    Count,
    /// Check that it is text and take its size; count only what the cache knows
    /// (the caller may not need counts, see [`Measurer::count_missing`]).
    Check,
}

/// One call's measuring: the store's cache and limits, the call's roots, model and
/// control.
pub(super) struct Measurer<'a> {
    pub(super) roots: &'a Roots,
    pub(super) cache: &'a MeasureCache<FileMeasure>,
    pub(super) limits: &'a FileLimits,
    pub(super) tokenizer: Tokenizer,
    pub(super) control: &'a dyn ScanControl,
    /// Count each file's outline too (`file-tokens`' `outline`).
    pub(super) outline: bool,
}

impl Measurer<'_> {
    /// Open, verify, read and count every candidate on all cores; the same file
    /// reached under two names is measured once. Returns the measured files in
    /// candidate order, and the skipped ones.
    pub(super) fn measure(
        &self,
        candidates: Vec<Candidate>,
        reading: Reading,
        walked_entries: usize,
    ) -> Result<(Vec<Measured>, Vec<Skipped>), FilesError> {
        let total = candidates.len();
        let done = AtomicUsize::new(0);
        let bytes_read = AtomicU64::new(0);
        let stop: std::sync::Mutex<Option<FilesError>> = std::sync::Mutex::new(None);
        let stop_with = |error: FilesError| {
            if let Ok(mut stop) = stop.lock() {
                stop.get_or_insert(error);
            }
        };
        if total > 0 {
            self.tokenizer.preload();
        }
        let workers = crate::fan_out::cores();
        let measure_one = |buffer: &mut Vec<u8>, candidate: Candidate| {
            if self.control.is_cancelled() {
                stop_with(FilesError::Cancelled);
                return None;
            }
            let waiting = total.saturating_sub(done.load(Ordering::Relaxed));
            let share = Share::of(waiting, workers);
            let result = match self.measure_one(candidate, reading, &bytes_read, buffer, share) {
                Ok(measured) => Ok(measured),
                Err((relative, Some(reason))) => Err(Skipped::new(&relative, reason)),
                Err((_, None)) => {
                    stop_with(FilesError::TooManyBytes {
                        limit: self.limits.max_total_bytes,
                    });
                    return None;
                }
            };
            let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
            self.control
                .progress(walked_entries + finished, walked_entries + total);
            Some(result)
        };
        let results = crate::fan_out::map_with(candidates, workers, Vec::new, measure_one);
        if let Some(error) = stop.into_inner().ok().flatten() {
            return Err(error);
        }
        Ok(once_per_file(results))
    }

    /// One candidate opened, verified, and measured (or answered from the cache),
    /// the candidate moved into the answer. `Err` gives its relative path back, with
    /// why it was skipped, or `None`: reading it would take the call over its byte
    /// budget.
    fn measure_one(
        &self,
        candidate: Candidate,
        reading: Reading,
        bytes_read: &AtomicU64,
        buffer: &mut Vec<u8>,
        share: Share,
    ) -> Result<Measured, (String, Option<SkipReason>)> {
        let (limits, tokenizer) = (self.limits, self.tokenizer);
        let root = &self.roots.list()[candidate.root].path;
        let mut opened = match open_in_root(
            root,
            &candidate.path,
            limits.max_file_bytes,
            candidate.seen_regular,
        ) {
            Ok(opened) => opened,
            Err(reason) => return Err((candidate.relative, Some(reason))),
        };
        let (canonical, stamp) = (std::mem::take(&mut opened.canonical), opened.stamp);
        // The secret rules hold for the path asked for (named ones too) and for the
        // file it leads to: `notes.md -> id_rsa` is the key. Opened as spelled, the
        // file is at the path asked for.
        if looks_secret_path(&candidate.relative)
            || (canonical.as_os_str() != candidate.path.as_os_str()
                && looks_secret_path(&relative_to(&canonical, root)))
        {
            return Err((candidate.relative, Some(SkipReason::Secret)));
        }
        // A file of no outlined language has none, known without reading it.
        let outline_wanted = self.outline && Language::of(&candidate.relative).is_some();
        let no_grammar = |mut measure: FileMeasure| {
            if self.outline && !outline_wanted {
                measure.outline = OutlineTokens::Missing(NoOutline::NoGrammar.code());
            }
            measure
        };
        // A cached measure answers when it holds all the call needs.
        let cached = self
            .cache
            .get(&canonical, tokenizer, &stamp)
            .map(no_grammar);
        let complete = cached.filter(|m| !outline_wanted || m.outline != OutlineTokens::NotCounted);
        let done = |candidate, canonical, measure, counted, cached| Measured {
            candidate,
            measure,
            counted,
            cached,
            canonical,
            stamp,
        };
        // Unchanged since measured: not read nor tokenized again here.
        if let (Some(measure), Reading::Count) = (complete, reading) {
            return Ok(done(candidate, canonical, measure, true, true));
        }
        // What a call reads (and, loading, holds) is bounded.
        let read = bytes_read.fetch_add(stamp.size, Ordering::Relaxed) + stamp.size;
        if read > limits.max_total_bytes {
            return Err((candidate.relative, None));
        }
        if let Some(measure) = complete {
            return Ok(done(candidate, canonical, measure, true, true));
        }
        let (text, (lines, escaped)) =
            match opened.read_text_measured_into(limits.max_file_bytes, buffer) {
                Ok(read) => read,
                Err(reason) => return Err((candidate.relative, Some(reason))),
            };
        let mut measure = cached.unwrap_or_else(|| {
            no_grammar(FileMeasure {
                tokens: 0,
                lines,
                bytes: text.len() as u64,
                escaped,
                outline: OutlineTokens::NotCounted,
            })
        });
        if outline_wanted {
            measure.outline = self.outline_tokens(&candidate.relative, text, share);
        }
        if cached.is_some() {
            // Counted before: only its outline was missing.
            self.cache.put(&canonical, tokenizer, stamp, measure);
            return Ok(done(candidate, canonical, measure, true, false));
        }
        if reading == Reading::Check {
            return Ok(done(candidate, canonical, measure, false, false));
        }
        measure.tokens = share.count(tokenizer, text) as u64;
        self.cache.put(&canonical, tokenizer, stamp, measure);
        Ok(done(candidate, canonical, measure, true, false))
    }

    /// The tokens of `text`'s outline (the file at `path`), or why it has none. A
    /// cancelled call's file is left uncounted (the call stops at its next file).
    fn outline_tokens(&self, path: &str, text: &str, share: Share) -> OutlineTokens {
        match crate::outline::outline(path, text, &Bounds::default(), self.control) {
            Ok(outline) => OutlineTokens::Tokens(share.count(self.tokenizer, &outline.text) as u64),
            Err(NoOutline::Cancelled) => OutlineTokens::NotCounted,
            Err(reason) => OutlineTokens::Missing(reason.code()),
        }
    }

    /// Count the files [`Reading::Check`] left uncounted (reading them again), on
    /// all cores.
    pub(super) fn count_missing(&self, measured: &mut [Measured]) -> Result<(), FilesError> {
        let pending: Vec<&mut Measured> = measured.iter_mut().filter(|m| !m.counted).collect();
        if pending.is_empty() {
            return Ok(());
        }
        let tokenizer = self.tokenizer;
        tokenizer.preload();
        let cancelled = AtomicBool::new(false);
        let over = AtomicBool::new(false);
        let (roots, cache, control) = (self.roots, self.cache, self.control);
        let limits = self.limits;
        let max_bytes = limits.max_file_bytes.min(limits.max_total_bytes);
        // Files that grew since they were measured are held to --max-total-bytes on
        // this read too.
        let read = AtomicU64::new(0);
        let (total, done) = (pending.len(), AtomicUsize::new(0));
        let workers = crate::fan_out::cores();
        let count = |buffer: &mut Vec<u8>, m: &mut Measured| {
            if control.is_cancelled() {
                cancelled.store(true, Ordering::Relaxed);
                return None;
            }
            let waiting = total.saturating_sub(done.fetch_add(1, Ordering::Relaxed));
            let share = Share::of(waiting, workers);
            // A file that cannot be read again keeps its size-bound count; the
            // packing pass reads it once more and skips it with the reason.
            let root = &roots.list()[m.candidate.root].path;
            if let Ok(open) = reopen(root, &m.canonical, max_bytes) {
                let stamp = open.stamp;
                if read.fetch_add(stamp.size, Ordering::Relaxed) + stamp.size
                    > limits.max_total_bytes
                {
                    over.store(true, Ordering::Relaxed);
                    return None;
                }
                if let Ok(text) = open.read_text_into(max_bytes, buffer) {
                    m.measure.tokens = share.count(tokenizer, text) as u64;
                    m.counted = true;
                    if stamp == m.stamp {
                        cache.put(&m.canonical, tokenizer, m.stamp, m.measure);
                    }
                    return Some(());
                }
            }
            m.measure.tokens = max_tokens_of_bytes(tokenizer, m.measure.bytes);
            Some(())
        };
        crate::fan_out::map_with(pending, workers, Vec::new, count);
        if cancelled.load(Ordering::Relaxed) {
            return Err(FilesError::Cancelled);
        }
        if over.load(Ordering::Relaxed) {
            return Err(FilesError::TooManyBytes {
                limit: limits.max_total_bytes,
            });
        }
        Ok(())
    }
}

/// How a worker of a fan-out over files counts a file: on its own thread while more
/// than twice as many files wait as there are workers (every core is busy: a helper
/// thread splitting a large file would only take turns with a worker, each evicting
/// the other's piece memo from the cache; measured, 10 % of `files`' CPU went to the
/// helper), else with [`Tokenizer::count`], which may split a large file with the
/// helper once other workers have run out of files.
#[derive(Clone, Copy)]
enum Share {
    Crowded,
    Alone,
}

impl Share {
    fn of(waiting: usize, workers: usize) -> Share {
        if waiting > 2 * workers {
            Share::Crowded
        } else {
            Share::Alone
        }
    }

    fn count(self, tokenizer: Tokenizer, text: &str) -> usize {
        match self {
            Share::Crowded => tokenizer.count_here(text),
            Share::Alone => tokenizer.count(text),
        }
    }
}

/// The measured files in order, each file once: a file reached again under
/// another name (a link to it) is skipped as a duplicate of the first. A panicking
/// worker (a bug) leaves its files out: missing, not invented.
///
/// Canonical paths are compared by their bytes, borrowed: they are what `/proc`
/// names (or the spelling it confirmed), so equal files have equal bytes. Cloning
/// and hashing each path component by component took ~20 ms for 16k files, on one
/// core after both had counted.
fn once_per_file(results: Vec<Option<Result<Measured, Skipped>>>) -> (Vec<Measured>, Vec<Skipped>) {
    // Candidates are each a different path of their root (`walk::collect`): files of
    // one root each opened where it was found (no link on the way, the common case)
    // are different files, and the set of canonical paths has nothing to find.
    let mut measured = results.iter().filter_map(|r| match r {
        Some(Ok(m)) => Some(m),
        _ => None,
    });
    let first_root = measured.clone().next().map(|m| m.candidate.root);
    let as_found = measured.all(|m| {
        Some(m.candidate.root) == first_root
            && m.canonical.as_os_str().as_encoded_bytes()
                == m.candidate.path.as_os_str().as_encoded_bytes()
    });
    if as_found {
        let mut measured = Vec::with_capacity(results.len());
        let mut skipped = Vec::new();
        for result in results.into_iter().flatten() {
            match result {
                Ok(m) => measured.push(m),
                Err(s) => skipped.push(s),
            }
        }
        return (measured, skipped);
    }
    let first_of: Vec<Option<String>> = {
        let mut seen: HashMap<&[u8], &str> = HashMap::with_capacity(results.len());
        results
            .iter()
            .map(|result| match result {
                Some(Ok(m)) => match seen.entry(m.canonical.as_os_str().as_encoded_bytes()) {
                    Entry::Occupied(first) => Some(first.get().to_string()),
                    Entry::Vacant(slot) => {
                        slot.insert(&m.candidate.relative);
                        None
                    }
                },
                _ => None,
            })
            .collect()
    };
    let mut measured = Vec::with_capacity(results.len());
    let mut skipped = Vec::new();
    for (result, first) in results.into_iter().zip(first_of) {
        match (result, first) {
            (Some(Ok(m)), Some(first)) => skipped.push(Skipped::new(
                &m.candidate.relative,
                SkipReason::Duplicate(first),
            )),
            (Some(Ok(m)), None) => measured.push(m),
            (Some(Err(s)), _) => skipped.push(s),
            (None, _) => {}
        }
    }
    (measured, skipped)
}

/// Run `walk` while `tokenizer`'s vocabulary loads on another thread (tens of
/// milliseconds for o200k_base on a first call), since counting needs both.
pub(super) fn walk_while_loading<T>(tokenizer: Tokenizer, walk: impl FnOnce() -> T) -> T {
    std::thread::scope(|scope| {
        scope.spawn(move || tokenizer.preload());
        walk()
    })
}

/// The most tokens a text of `bytes` bytes can count for `tokenizer`.
pub(super) fn max_tokens_of_bytes(tokenizer: Tokenizer, bytes: u64) -> u64 {
    // The estimates weigh each o200k token (at most one per byte) by at most their
    // heaviest weight; byte-level BPE and byte-fallback SentencePiece give at most one
    // token per byte. A tokenizer.json may normalize one character into many (NFKC
    // expands some into up to 18), so it gets a wide bound: it only decides whether a
    // per-file counting pass may be skipped.
    let tenths_per_byte = match tokenizer {
        Tokenizer::ClaudeEstimate => crate::claude::CLAUDE3_OTHER_TENTHS,
        Tokenizer::Claude47Estimate => crate::claude::CLAUDE47_RUN_TENTHS,
        Tokenizer::Estimate => crate::tokenizer::Estimate::OTHER_TENTHS,
        Tokenizer::Cl100kBase | Tokenizer::O200kBase | Tokenizer::Gemma3 => 10,
        Tokenizer::HuggingFace(_) => 180,
    };
    (bytes * tenths_per_byte).div_ceil(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_bound_holds() {
        for text in ["", "a", "한국어", "🦊🦊", "    \n\n\t", "<|endoftext|>"] {
            for tokenizer in [
                Tokenizer::Cl100kBase,
                Tokenizer::O200kBase,
                Tokenizer::ClaudeEstimate,
            ] {
                assert!(
                    tokenizer.count(text) as u64
                        <= max_tokens_of_bytes(tokenizer, text.len() as u64),
                    "{tokenizer:?} {text:?}"
                );
            }
        }
    }
}
