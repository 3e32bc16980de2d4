//! Any files, folders and globs under a set of roots: what they cost for a model
//! (`file_tokens`) and the files themselves packed into a budget (`load_files`).
//!
//! One concept per module: [`roots`] (what a requested path means, and refusing
//! everything outside the roots), [`walk`] (ripgrep's `ignore` walker, globs,
//! filters, counting what the rules excluded), [`secrets`] (credential-looking
//! names), [`open`] (open, then verify the handle), [`pack`] (wrapping files and
//! keeping a budget). Files are measured on all cores, with the measurement cache
//! shared with specs ([`crate::cache`]).

pub mod open;
pub mod pack;
pub mod roots;
pub mod secrets;
pub mod walk;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use crate::cache::{FileStamp, MeasureCache};
use crate::counter::usd;
use crate::read::count_lines;
pub use crate::read::SkipReason;
use crate::scan_control::ScanControl;
use crate::{ResolvedModel, Tokenizer};
use open::{open_in_root, reopen};
use pack::{PackFormat, PackOrder, cut, piece, push_piece};
use roots::{Roots, Target, resolve};
use walk::{Candidate, Filters, WalkOptions, collect};

/// Most rows of `skipped` and of excluded examples an answer lists (counts cover all).
pub const MAX_EXAMPLES: usize = 100;

/// Why a file tools request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FilesError {
    #[error("no root folder is configured for file tools")]
    NoRoots,
    #[error("the client's roots ({}) share no folder with the server's roots ({})", client_roots.join(", "), server_roots.join(", "))]
    NoSharedRoot {
        server_roots: Vec<String>,
        client_roots: Vec<String>,
    },
    #[error("root `{root}` cannot be used: {reason}")]
    BadRoot { root: String, reason: String },
    #[error("`{path}` is not a usable path: {reason}")]
    InvalidPath { path: String, reason: String },
    #[error("`{path}` is outside every root")]
    OutsideRoot { path: String },
    #[error("`{path}` does not exist under any root: {reason}")]
    NotFound { path: String, reason: String },
    #[error("{found} files match, over the limit of {limit} files per call (--max-files)")]
    TooManyFiles { found: usize, limit: usize },
    #[error("the files read add up to over {limit} bytes, the limit per call (--max-total-bytes)")]
    TooManyBytes { limit: u64 },
    #[error("the walk visited over {limit} entries, the limit per call (--max-walk-entries)")]
    WalkTooLarge { limit: usize },
    #[error("the walk took over {limit_ms} ms, the limit per call (--walk-timeout-ms)")]
    WalkTooSlow { limit_ms: u64 },
    #[error("`{model}` has no context window, so there is no default budget")]
    NoDefaultBudget { model: String },
    #[error("the request was cancelled")]
    Cancelled,
}

/// A file left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Skipped {
    pub path: String,
    /// `binary`, `not_utf8`, `too_large`, `secret`, `outside_root`, `broken_symlink`,
    /// `not_regular`, `unreadable` or `duplicate`.
    pub reason: &'static str,
    /// The reason in words.
    pub detail: String,
}

impl Skipped {
    pub fn new(path: &str, reason: SkipReason) -> Skipped {
        Skipped {
            path: path.to_string(),
            reason: reason.code(),
            detail: reason.to_string(),
        }
    }
}

/// What ignore rules and the hidden-file rule kept out of the walk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Excluded {
    /// Entries matched by .gitignore, .ignore or git's excludes (a folder counts once).
    pub ignored: u64,
    /// Hidden entries (names starting with `.`), not walked unless `hidden` is set.
    pub hidden: u64,
    /// Some of the ignored entries, by path.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored_examples: Vec<String>,
}

/// The bounds of one call. Every one has a flag and a clear error.
#[derive(Debug, Clone)]
pub struct FileLimits {
    /// Files measured or loaded per call (`--max-files`).
    pub max_files: usize,
    /// Largest file read; larger ones are skipped as `too_large` (`--max-file-bytes`).
    pub max_file_bytes: u64,
    /// Bytes read per call, all files together (`--max-total-bytes`).
    pub max_total_bytes: u64,
    /// Directory entries a walk may visit (`--max-walk-entries`).
    pub max_walk_entries: usize,
    /// Time a walk may take (`--walk-timeout-ms`).
    pub walk_timeout: Duration,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            max_files: 20_000,
            max_file_bytes: 4 * 1024 * 1024,
            max_total_bytes: 256 * 1024 * 1024,
            max_walk_entries: 500_000,
            walk_timeout: Duration::from_secs(20),
        }
    }
}

/// Which files a call is about.
#[derive(Debug, Clone, Default)]
pub struct FileQuery {
    /// Files, folders or globs relative to a root (or absolute inside one); empty
    /// means every root.
    pub paths: Vec<String>,
    /// Only files (reached through folders and globs) matching one of these.
    pub include: Vec<String>,
    /// Leave out files matching any of these.
    pub exclude: Vec<String>,
    /// Walk hidden files and folders too.
    pub hidden: bool,
}

/// How `file-tokens` rows are ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileSort {
    /// Largest first (ties by path).
    #[default]
    Tokens,
    /// By path.
    Path,
}

/// The numbers of one file. What the cache holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeasure {
    pub tokens: u64,
    pub lines: u64,
    pub bytes: u64,
}

/// One file's row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FileRow {
    pub path: String,
    /// The root it was found under, when the call has more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    pub tokens: u64,
    pub lines: u64,
    pub bytes: u64,
}

/// Tokens of the files under one folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FolderRow {
    /// The folder, relative to its root (`.` for files directly in it).
    pub path: String,
    pub tokens: u64,
    pub files: usize,
}

/// The model a measurement was made for.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FilesModel {
    pub model: String,
    pub encoding: &'static str,
    pub exact: bool,
    /// How counts are produced (and, for estimates, how they err).
    pub method: &'static str,
}

impl FilesModel {
    fn of(model: &ResolvedModel<'_>) -> FilesModel {
        let tokenizer = model.tokenizer();
        FilesModel {
            model: model.name().to_string(),
            encoding: tokenizer.name(),
            exact: tokenizer.is_exact(),
            method: tokenizer.method(),
        }
    }
}

/// What a total means for the model.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WindowShare {
    pub context_window: u64,
    /// `total` as a percentage of the window, one decimal.
    pub percent_of_window: f64,
    pub fits_window: bool,
    /// `total` at the model's list price for input tokens.
    pub estimated_input_cost_usd: f64,
}

impl WindowShare {
    fn of(model: &ResolvedModel<'_>, tokens: u64) -> Option<WindowShare> {
        let entry = model.entry()?;
        Some(WindowShare {
            context_window: entry.context_window,
            percent_of_window: (tokens as f64 * 1000.0 / entry.context_window.max(1) as f64).round()
                / 10.0,
            fits_window: tokens <= entry.context_window,
            estimated_input_cost_usd: usd(tokens as usize, entry.input_usd_per_mtok),
        })
    }
}

/// The answer of `file-tokens`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FileTokens {
    #[serde(flatten)]
    pub model: FilesModel,
    /// The roots searched (canonical paths).
    pub roots: Vec<String>,
    /// Tokens of every file measured (not only the rows shown).
    pub total: u64,
    pub files_measured: usize,
    pub bytes: u64,
    pub lines: u64,
    /// What `total` means for the model; absent for a bare encoding name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowShare>,
    pub sort: FileSort,
    /// True when `limit` cut rows off `files` (and `folders`).
    pub truncated: bool,
    pub files: Vec<FileRow>,
    /// Per folder, largest first: the folders one level below what all files share.
    pub folders: Vec<FolderRow>,
    /// Files found but not measured, with the reason (at most 100 listed).
    pub skipped: Vec<Skipped>,
    /// How many files were skipped, per reason.
    pub skipped_counts: BTreeMap<&'static str, usize>,
    pub excluded: Excluded,
    /// Files answered from the measurement cache (unchanged since last measured).
    pub cached: usize,
}

/// What `load-files` was asked, beyond the files.
#[derive(Debug, Clone, Default)]
pub struct LoadRequest {
    /// Token budget for `text`; default [`default_budget`].
    pub budget: Option<u64>,
    pub order: PackOrder,
    pub format: PackFormat,
    /// Cut any file above this many tokens, keeping its front.
    pub max_file_tokens: Option<u64>,
}

/// A file in the packed text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IncludedFile {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Tokens of this file's piece of `text`, wrapper included.
    pub tokens: u64,
    /// Cut by `max_file_tokens` (its front kept, with a marker).
    pub truncated: bool,
}

/// A file that was readable but left out of `text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct OmittedFile {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Tokens its piece would have taken.
    pub tokens: u64,
    /// `over_budget`: it did not fit in what was left of the budget.
    pub reason: &'static str,
}

/// The answer of `load-files`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LoadedFiles {
    #[serde(flatten)]
    pub model: FilesModel,
    pub roots: Vec<String>,
    pub budget: u64,
    /// Where the budget came from: `given`, or `default` (90 % of the window minus
    /// a reserve for the answer).
    pub budget_source: &'static str,
    /// Exact count of `text` for the model, wrappers included; never over `budget`.
    pub tokens: u64,
    pub format: PackFormat,
    pub order: PackOrder,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowShare>,
    pub included: Vec<IncludedFile>,
    pub omitted: Vec<OmittedFile>,
    pub skipped: Vec<Skipped>,
    pub skipped_counts: BTreeMap<&'static str, usize>,
    pub excluded: Excluded,
    /// The packed files.
    pub text: String,
}

/// The default `load-files` budget: 90 % of the window minus a reserve for the
/// answer (the model's output limit, at most an eighth of the window).
pub fn default_budget(model: &ResolvedModel<'_>) -> Option<u64> {
    let spec = model.entry()?;
    let usable = spec.context_window * 9 / 10;
    let reserve = spec.max_output_tokens.min(spec.context_window / 8);
    Some(usable.saturating_sub(reserve))
}

/// A file that was opened, checked and measured.
struct Measured {
    candidate: Candidate,
    /// `tokens` is 0 until counted (see [`Reading`]).
    measure: FileMeasure,
    counted: bool,
    cached: bool,
    canonical: PathBuf,
    stamp: FileStamp,
}

/// What [`FileStore::measure`] does with each file. Texts are never kept: a whole
/// tree's files held next to its packed text would double `load-files`' memory, so
/// the files packed are read again, one batch at a time ([`read_again`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Count it (from the cache when unchanged).
    Count,
    /// Check that it is text and take its size; count only what the cache knows
    /// (the caller may not need counts, see [`FileStore::count_missing`]).
    Check,
}

/// The measurement cache and limits behind both file tools.
#[derive(Debug)]
pub struct FileStore {
    cache: Arc<MeasureCache<FileMeasure>>,
    limits: FileLimits,
}

impl FileStore {
    pub fn new(limits: FileLimits) -> FileStore {
        FileStore {
            cache: Arc::default(),
            limits,
        }
    }

    pub fn limits(&self) -> &FileLimits {
        &self.limits
    }

    /// Files remembered in the measurement cache.
    pub fn cached_files(&self) -> usize {
        self.cache.len()
    }

    /// `file-tokens`: every file `query` reaches, measured.
    pub fn file_tokens(
        &self,
        roots: &Roots,
        query: &FileQuery,
        model: &ResolvedModel<'_>,
        sort: FileSort,
        limit: Option<usize>,
        control: &dyn ScanControl,
    ) -> Result<FileTokens, FilesError> {
        let tokenizer = model.tokenizer();
        let walked = walk_while_loading(tokenizer, || self.walk(roots, query, control))?;
        let (measured, mut skipped) = self.measure(
            roots,
            walked.candidates,
            tokenizer,
            Reading::Count,
            walked.entries,
            control,
        )?;
        skipped.splice(0..0, walked.skipped);
        let root_label = |c: &Candidate| roots.label(c.root);

        let mut rows: Vec<FileRow> = measured
            .iter()
            .map(|m| FileRow {
                path: m.candidate.relative.clone(),
                root: root_label(&m.candidate),
                tokens: m.measure.tokens,
                lines: m.measure.lines,
                bytes: m.measure.bytes,
            })
            .collect();
        let total: u64 = rows.iter().map(|r| r.tokens).sum();
        let folders = folder_rollup(&rows);
        match sort {
            FileSort::Tokens => rows.sort_by(|a, b| {
                b.tokens
                    .cmp(&a.tokens)
                    .then_with(|| a.path.cmp(&b.path))
                    .then_with(|| a.root.cmp(&b.root))
            }),
            FileSort::Path => {
                rows.sort_by(|a, b| a.root.cmp(&b.root).then_with(|| a.path.cmp(&b.path)))
            }
        }
        let truncated = limit.is_some_and(|n| rows.len() > n || folders.len() > n);
        let mut folders = folders;
        if let Some(n) = limit {
            rows.truncate(n);
            folders.truncate(n);
        }
        let (skipped, skipped_counts) = cap_skipped(skipped);
        Ok(FileTokens {
            model: FilesModel::of(model),
            roots: roots.shown_paths(),
            total,
            files_measured: measured.len(),
            bytes: measured.iter().map(|m| m.measure.bytes).sum(),
            lines: measured.iter().map(|m| m.measure.lines).sum(),
            window: WindowShare::of(model, total),
            sort,
            truncated,
            files: rows,
            folders,
            skipped,
            skipped_counts,
            excluded: walked.excluded,
            cached: measured.iter().filter(|m| m.cached).count(),
        })
    }

    /// `load-files`: the files `query` reaches, packed into `request.budget` tokens.
    pub fn load_files(
        &self,
        roots: &Roots,
        query: &FileQuery,
        request: &LoadRequest,
        model: &ResolvedModel<'_>,
        control: &dyn ScanControl,
    ) -> Result<LoadedFiles, FilesError> {
        let (budget, budget_source) = match request.budget {
            Some(budget) => (budget, "given"),
            None => (
                default_budget(model).ok_or_else(|| FilesError::NoDefaultBudget {
                    model: model.name().to_string(),
                })?,
                "default",
            ),
        };
        let tokenizer = model.tokenizer();
        let walked = walk_while_loading(tokenizer, || self.walk(roots, query, control))?;
        // Counts decide the order and the cuts; otherwise they are needed only when
        // the files might not all fit, which their bytes can rule out (below).
        let needs_counts =
            request.order == PackOrder::Smallest || request.max_file_tokens.is_some();
        let reading = if needs_counts {
            Reading::Count
        } else {
            Reading::Check
        };
        let (mut measured, mut skipped) = self.measure(
            roots,
            walked.candidates,
            tokenizer,
            reading,
            walked.entries,
            control,
        )?;
        skipped.splice(0..0, walked.skipped);
        // A token of cl100k/o200k covers at least one byte, so a text counts at most
        // its length in tokens (the Claude estimate at most 1.9 per byte, rounded
        // up). When every piece together is within the budget by that bound, all of
        // them fit and counting each file first would be wasted work: the one
        // count of the packed text below gives every file's share.
        let packed_bytes: u64 = measured
            .iter()
            .map(|m| {
                m.measure.bytes + 1 + piece(request.format, &m.candidate.relative, "").len() as u64
            })
            .sum();
        let all_fit = max_tokens_of_bytes(tokenizer, packed_bytes) <= budget;
        if !all_fit {
            self.count_missing(roots, &mut measured, tokenizer, control)?;
        }
        match request.order {
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
        let root_label = |c: &Candidate| roots.label(c.root);
        let measured_len = measured.len();

        // Choose files in order by their known counts (content from the
        // measurement, wrapper counted alone), then count the packed text once,
        // attributing every token to the piece it starts in: exact per-file counts
        // that add up to the exact total, in one pass over the text.
        let mut chosen: Vec<Chosen> = Vec::new();
        // When everything fits, the text's size is known: one allocation instead of
        // doubling copies of a growing buffer.
        let mut text = String::with_capacity(if all_fit { packed_bytes as usize } else { 0 });
        let mut omitted = Vec::new();
        let mut estimate_used = 0u64;
        let limits = &self.limits;
        for (batch_index, batch) in measured.chunks_mut(READ_AGAIN_BATCH).enumerate() {
            if control.is_cancelled() {
                return Err(FilesError::Cancelled);
            }
            control.progress(
                walked.entries + measured_len + batch_index * READ_AGAIN_BATCH,
                walked.entries + 2 * measured_len,
            );
            // A file whose known count alone is over what is left cannot fit (what
            // is left only shrinks): it is not read again. A file to be cut is, as
            // its cut's count is known only once cut.
            let left = budget.saturating_sub(estimate_used);
            let wanted: Vec<bool> = batch
                .iter()
                .map(|m| {
                    all_fit
                        || !m.counted
                        || m.measure.tokens <= left
                        || request
                            .max_file_tokens
                            .is_some_and(|max| m.measure.tokens > max)
                })
                .collect();
            let texts = read_again(roots, batch, &wanted, limits.max_file_bytes);
            for (m, content) in batch.iter_mut().zip(texts) {
                let path = &m.candidate.relative;
                let content = match content {
                    None => {
                        omitted.push(OmittedFile {
                            path: path.clone(),
                            root: root_label(&m.candidate),
                            tokens: m.measure.tokens
                                + tokenizer.count(&piece(request.format, path, "")) as u64,
                            reason: "over_budget",
                        });
                        continue;
                    }
                    Some(Ok((content, stamp))) => {
                        // Changed since it was measured, or never counted: the
                        // count is needed and the known one is stale or a bound.
                        if (needs_counts || !all_fit) && (stamp != m.stamp || !m.counted) {
                            m.measure.tokens = tokenizer.count(&content) as u64;
                            m.counted = true;
                        }
                        content
                    }
                    Some(Err(reason)) => {
                        skipped.push(Skipped::new(path, reason));
                        continue;
                    }
                };
                let (content, content_tokens, truncated) = match request
                    .max_file_tokens
                    .and_then(|max| cut(tokenizer, &content, m.measure.tokens, max))
                {
                    Some(cut) => {
                        let tokens = tokenizer.count(&cut) as u64;
                        (cut, tokens, true)
                    }
                    None => (content, m.measure.tokens, false),
                };
                let estimate = if all_fit {
                    0
                } else {
                    content_tokens + tokenizer.count(&piece(request.format, path, "")) as u64
                };
                if estimate_used + estimate > budget {
                    omitted.push(OmittedFile {
                        path: path.clone(),
                        root: root_label(&m.candidate),
                        tokens: estimate,
                        reason: "over_budget",
                    });
                    continue;
                }
                estimate_used += estimate;
                let start = text.len();
                push_piece(&mut text, request.format, path, &content);
                chosen.push(Chosen {
                    start,
                    file: IncludedFile {
                        path: path.clone(),
                        root: root_label(&m.candidate),
                        tokens: estimate,
                        truncated,
                    },
                });
            }
        }
        // The proof: the count of the final text. Estimates can be off by a token
        // or two where pieces meet; while the text is over, drop the last piece.
        let tokens = loop {
            let (tokens, per_piece) = count_pieces(tokenizer, &text, &chosen);
            if tokens <= budget {
                for (chosen, tokens) in chosen.iter_mut().zip(per_piece) {
                    chosen.file.tokens = tokens;
                }
                break tokens;
            }
            let Some(dropped) = chosen.pop() else {
                text.clear();
                break 0;
            };
            text.truncate(dropped.start);
            omitted.push(OmittedFile {
                path: dropped.file.path,
                root: dropped.file.root,
                tokens: dropped.file.tokens,
                reason: "over_budget",
            });
        };
        let (skipped, skipped_counts) = cap_skipped(skipped);
        Ok(LoadedFiles {
            model: FilesModel::of(model),
            roots: roots.shown_paths(),
            budget,
            budget_source,
            tokens,
            format: request.format,
            order: request.order,
            window: WindowShare::of(model, tokens),
            included: chosen.into_iter().map(|c| c.file).collect(),
            omitted,
            skipped,
            skipped_counts,
            excluded: walked.excluded,
            text,
        })
    }

    /// Count the files [`Reading::Check`] left uncounted (reading them again), on
    /// all cores.
    fn count_missing(
        &self,
        roots: &Roots,
        measured: &mut [Measured],
        tokenizer: Tokenizer,
        control: &dyn ScanControl,
    ) -> Result<(), FilesError> {
        let pending: Vec<&mut Measured> = measured.iter_mut().filter(|m| !m.counted).collect();
        if pending.is_empty() {
            return Ok(());
        }
        tokenizer.preload();
        let cancelled = AtomicBool::new(false);
        let cache = &self.cache;
        let max_bytes = self.limits.max_file_bytes;
        let count = |buffer: &mut Vec<u8>, m: &mut Measured| {
            if control.is_cancelled() {
                cancelled.store(true, Ordering::Relaxed);
                return None;
            }
            // A file that cannot be read again keeps its size-bound count; the
            // packing pass reads it once more and skips it with the reason.
            let root = &roots.list()[m.candidate.root].path;
            if let Ok(open) = reopen(root, &m.canonical, max_bytes) {
                let stamp = open.stamp;
                if let Ok(text) = open.read_text_into(max_bytes, buffer) {
                    m.measure.tokens = tokenizer.count(text) as u64;
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
        crate::fan_out::map_with(pending, crate::fan_out::cores(), Vec::new, count);
        if cancelled.load(Ordering::Relaxed) {
            return Err(FilesError::Cancelled);
        }
        Ok(())
    }

    fn walk(
        &self,
        roots: &Roots,
        query: &FileQuery,
        control: &dyn ScanControl,
    ) -> Result<walk::Walked, FilesError> {
        let paths: Vec<&str> = if query.paths.is_empty() {
            vec!["."]
        } else {
            query.paths.iter().map(String::as_str).collect()
        };
        let mut targets = Vec::new();
        for path in paths {
            match resolve(roots, path)? {
                // `.` (or empty) means every root.
                Target::Existing { relative, .. }
                    if relative.is_empty() && roots.list().len() > 1 =>
                {
                    for (index, root) in roots.list().iter().enumerate() {
                        targets.push(Target::Existing {
                            root: index,
                            relative: String::new(),
                            canonical: root.path.clone(),
                        });
                    }
                }
                target => targets.push(target),
            }
        }
        let filters = Filters::new(&query.include, &query.exclude)?;
        collect(
            roots,
            &targets,
            &filters,
            WalkOptions {
                hidden: query.hidden,
            },
            &self.limits,
            control,
        )
    }

    /// Open, verify, read and count every candidate on all cores; the same file
    /// reached under two names is measured once. Returns the measured files in
    /// candidate order, and the skipped ones.
    fn measure(
        &self,
        roots: &Roots,
        candidates: Vec<Candidate>,
        tokenizer: Tokenizer,
        reading: Reading,
        walked_entries: usize,
        control: &dyn ScanControl,
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
            tokenizer.preload();
        }
        let limits = &self.limits;
        let cache = &self.cache;
        let measure_one = |buffer: &mut Vec<u8>, candidate: &Candidate| {
            if control.is_cancelled() {
                stop_with(FilesError::Cancelled);
                return None;
            }
            let root = &roots.list()[candidate.root].path;
            let outcome = (|| {
                let opened = open_in_root(root, &candidate.path, limits.max_file_bytes)?;
                let (canonical, stamp) = (opened.canonical.clone(), opened.stamp);
                let cached = cache.get(&canonical, tokenizer, &stamp);
                let done = |measure, counted, cached| Measured {
                    candidate: candidate.clone(),
                    measure,
                    counted,
                    cached,
                    canonical: canonical.clone(),
                    stamp,
                };
                // Unchanged since measured: not read nor tokenized again here.
                if let (Some(measure), Reading::Count) = (cached, reading) {
                    return Ok(done(measure, true, true));
                }
                // What a call reads (and, loading, holds) is bounded.
                let read = bytes_read.fetch_add(stamp.size, Ordering::Relaxed) + stamp.size;
                if read > limits.max_total_bytes {
                    return Err(None);
                }
                if let Some(measure) = cached {
                    return Ok(done(measure, true, true));
                }
                let text = opened.read_text_into(limits.max_file_bytes, buffer)?;
                let mut measure = FileMeasure {
                    tokens: 0,
                    lines: count_lines(text),
                    bytes: text.len() as u64,
                };
                if reading == Reading::Check {
                    return Ok(done(measure, false, false));
                }
                measure.tokens = tokenizer.count(text) as u64;
                cache.put(&canonical, tokenizer, stamp, measure);
                Ok(done(measure, true, false))
            })();
            let result = match outcome {
                Ok(measured) => Ok(measured),
                Err(Some(reason)) => Err(Skipped::new(&candidate.relative, reason)),
                Err(None) => {
                    stop_with(FilesError::TooManyBytes {
                        limit: limits.max_total_bytes,
                    });
                    return None;
                }
            };
            let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
            control.progress(walked_entries + finished, walked_entries + total);
            Some(result)
        };
        // A panicking worker (a bug) leaves its files out: missing, not invented.
        let results = crate::fan_out::map_with(
            &candidates,
            crate::fan_out::cores(),
            Vec::new,
            measure_one,
        );
        if let Some(error) = stop.into_inner().ok().flatten() {
            return Err(error);
        }
        let mut measured = Vec::new();
        let mut skipped = Vec::new();
        let mut seen: HashMap<PathBuf, String> = HashMap::new();
        for result in results.into_iter().flatten() {
            match result {
                Ok(m) => match seen.get(&m.canonical) {
                    Some(first) => skipped.push(Skipped::new(
                        &m.candidate.relative,
                        SkipReason::Duplicate(first.clone()),
                    )),
                    None => {
                        seen.insert(m.canonical.clone(), m.candidate.relative.clone());
                        measured.push(m);
                    }
                },
                Err(s) => skipped.push(s),
            }
        }
        Ok((measured, skipped))
    }
}

/// Run `walk` while `tokenizer`'s vocabulary loads on another thread (tens of
/// milliseconds for o200k_base on a first call), since counting needs both.
fn walk_while_loading<T>(tokenizer: Tokenizer, walk: impl FnOnce() -> T) -> T {
    std::thread::scope(|scope| {
        scope.spawn(move || tokenizer.preload());
        walk()
    })
}

/// Files read again per batch while packing: enough to keep every core reading,
/// few enough that a batch's texts are a small part of the packed text.
const READ_AGAIN_BATCH: usize = 64;

/// The texts of the `wanted` files of `batch` (measured files), read again on all
/// cores, in order, each with the stamp it has now (`None` for those not wanted). A
/// file that is no longer readable text gets the reason.
fn read_again(
    roots: &Roots,
    batch: &[Measured],
    wanted: &[bool],
    max_bytes: u64,
) -> Vec<Option<Result<(String, FileStamp), SkipReason>>> {
    let read = |(m, wanted): (&Measured, &bool)| {
        wanted.then(|| {
            let root = &roots.list()[m.candidate.root].path;
            let open = reopen(root, &m.canonical, max_bytes)?;
            let stamp = open.stamp;
            Ok((open.read_text(max_bytes)?, stamp))
        })
    };
    let batch: Vec<(&Measured, &bool)> = batch.iter().zip(wanted).collect();
    let texts = crate::fan_out::map(batch.iter().copied(), crate::fan_out::cores(), |pair| {
        Some(read(pair))
    });
    // A panicking reader is a bug; read its files here rather than lose them.
    texts
        .into_iter()
        .zip(batch)
        .map(|(text, pair)| text.unwrap_or_else(|| read(pair)))
        .collect()
}

/// The most tokens a text of `bytes` bytes can count for `tokenizer`.
fn max_tokens_of_bytes(tokenizer: Tokenizer, bytes: u64) -> u64 {
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

/// A file chosen for the packed text: where its piece starts, and its row.
struct Chosen {
    start: usize,
    file: IncludedFile,
}

/// The exact count of the packed `text`, and each piece's share: every token is
/// attributed to the piece it starts in, so the shares add up to the count (for
/// the Claude estimate each share is rounded up on its own).
///
/// A large text is tokenized in chunks on all cores, cut only where both
/// encodings always end a pre-tokenizer piece (see [`chunk_starts`]), so the
/// chunks' tokens are exactly the whole text's.
fn count_pieces(tokenizer: Tokenizer, text: &str, chosen: &[Chosen]) -> (u64, Vec<u64>) {
    let starts: Vec<usize> = chosen.iter().map(|c| c.start).collect();
    let threads = crate::fan_out::cores();
    // The cut is proven for the tiktoken pre-tokenizers only (the OpenAI encodings and
    // the estimates built on o200k); other families count the text in one piece.
    let chunks = match tokenizer {
        Tokenizer::Gemma3 | Tokenizer::HuggingFace(_) => vec![0],
        _ => chunk_starts(text, threads),
    };
    let attribute = |from: usize, to: usize| -> Vec<u64> {
        let mut tenths = vec![0u64; starts.len()];
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
        tenths
    };
    let ends: Vec<usize> = chunks.iter().skip(1).copied().chain([text.len()]).collect();
    // One thread per chunk (there are at most as many chunks as cores).
    let spans: Vec<(usize, usize)> = chunks.iter().copied().zip(ends).collect();
    let parts = crate::fan_out::map(spans.iter().copied(), spans.len(), |(from, to)| {
        Some(attribute(from, to))
    });
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
    (total, shares)
}

/// Where to cut `text` into up to `parts` chunks of about equal size: just after a
/// `\n` followed by an ASCII letter, where the pre-tokenizers of cl100k_base and
/// o200k_base always end a piece (the argument is in `crate::parallel`), so BPE
/// never merges across a cut. Texts under [`crate::PARALLEL_MIN_BYTES`] are one
/// chunk. Always starts with 0.
fn chunk_starts(text: &str, parts: usize) -> Vec<usize> {
    let mut starts = vec![0];
    if text.len() < crate::PARALLEL_MIN_BYTES || parts < 2 {
        return starts;
    }
    for i in 1..parts {
        let from = (text.len() * i / parts).max(starts.last().copied().unwrap_or(0) + 1);
        if let Some(cut) = crate::parallel::cut_at_or_after(text, from) {
            starts.push(cut);
        }
    }
    starts.dedup();
    starts
}

/// The first [`MAX_EXAMPLES`] skipped files, and counts per reason of all.
fn cap_skipped(mut skipped: Vec<Skipped>) -> (Vec<Skipped>, BTreeMap<&'static str, usize>) {
    let mut counts = BTreeMap::new();
    for s in &skipped {
        *counts.entry(s.reason).or_insert(0) += 1;
    }
    skipped.truncate(MAX_EXAMPLES);
    (skipped, counts)
}

/// Tokens per folder, one level below the folder every file shares, largest first.
fn folder_rollup(rows: &[FileRow]) -> Vec<FolderRow> {
    let dirs: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| {
            let mut parts: Vec<&str> = r.path.split('/').collect();
            parts.pop();
            parts
        })
        .collect();
    let common = dirs.first().map_or(0, |first| {
        (0..first.len())
            .take_while(|&i| dirs.iter().all(|d| d.get(i) == first.get(i)))
            .count()
    });
    let mut folders: HashMap<(Option<String>, String), (u64, usize)> = HashMap::new();
    for (row, dir) in rows.iter().zip(&dirs) {
        let depth = (common + 1).min(dir.len());
        let folder = if depth == 0 {
            ".".to_string()
        } else {
            dir[..depth].join("/")
        };
        let entry = folders.entry((row.root.clone(), folder)).or_default();
        entry.0 += row.tokens;
        entry.1 += 1;
    }
    let mut folders: Vec<FolderRow> = folders
        .into_iter()
        .map(|((root, path), (tokens, files))| FolderRow {
            path: match root {
                Some(root) => format!("{root}:{path}"),
                None => path,
            },
            tokens,
            files,
        })
        .collect();
    folders.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.path.cmp(&b.path)));
    folders
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces of real code, enough of them that the text is counted in chunks.
    fn packed(format: PackFormat) -> (String, Vec<Chosen>) {
        let sources = [
            include_str!("mod.rs"),
            include_str!("walk.rs"),
            include_str!("pack.rs"),
            "대한민국의 수도는 서울이다. 🦊 emoji and `code`",
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
            assert!(chunk_starts(&text, 4).len() > 1, "the text is cut");
            for tokenizer in [Tokenizer::Cl100kBase, Tokenizer::O200kBase] {
                let (total, shares) = count_pieces(tokenizer, &text, &chosen);
                // count_here: the shared helper thread stays free for the parallel
                // module's own tests running beside this one.
                assert_eq!(total, tokenizer.count_here(&text) as u64, "{tokenizer:?}");
                assert_eq!(shares.iter().sum::<u64>(), total);
            }
            let (total, shares) = count_pieces(Tokenizer::ClaudeEstimate, &text, &chosen);
            assert_eq!(total, Tokenizer::ClaudeEstimate.count(&text) as u64);
            // Each share is rounded up on its own.
            assert!(shares.iter().sum::<u64>() >= total);
        }
    }

    #[test]
    fn chunks_start_after_a_newline_and_before_a_letter() {
        let (text, _) = packed(PackFormat::Xml);
        let starts = chunk_starts(&text, 8);
        assert_eq!(starts[0], 0);
        for &start in &starts[1..] {
            assert_eq!(text.as_bytes()[start - 1], b'\n');
            assert!(text.as_bytes()[start].is_ascii_alphabetic());
        }
        assert!(starts.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(chunk_starts("short\ntext", 8), [0]);
    }

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
