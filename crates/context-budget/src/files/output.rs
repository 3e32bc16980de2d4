//! The answers of `file-tokens` and `load-files` as they go on the wire, and the
//! shaping shared by both: skipped-file lists capped with counts per reason, and
//! the per-folder rollup.

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::Serialize;

use super::pack::{Detail, PackFormat, PackOrder};
use super::query::FileSort;
use crate::ResolvedModel;
use crate::answer::Page;
use crate::counter::{Usd, cost};
use crate::read::SkipReason;

/// Most rows of `skipped` and of excluded examples an answer lists (counts cover all).
pub const MAX_EXAMPLES: usize = 100;

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

impl Excluded {
    /// `other`'s counts added to these; the examples stay the first
    /// [`MAX_EXAMPLES`] of both by path (so a walk holds no more than that many).
    pub(super) fn add(&mut self, other: Excluded) {
        self.ignored += other.ignored;
        self.hidden += other.hidden;
        self.ignored_examples.extend(other.ignored_examples);
        self.ignored_examples.sort();
        self.ignored_examples.dedup();
        self.ignored_examples.truncate(MAX_EXAMPLES);
    }
}

/// One file's row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FileRow {
    pub path: String,
    /// The root it was found under, when the call has more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    pub tokens: u64,
    /// Tokens of its outline (when asked for and it has one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outline_tokens: Option<u64>,
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
    /// The name asked for, when it is not `model` (a dated id, an alias).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_model: Option<String>,
    pub encoding: &'static str,
    pub exact: bool,
    /// How counts are produced (and, for estimates, how they err).
    pub method: &'static str,
}

impl FilesModel {
    pub(super) fn of(model: &ResolvedModel<'_>) -> FilesModel {
        let tokenizer = model.tokenizer();
        FilesModel {
            model: model.name().to_string(),
            requested_model: model.requested_if_other(),
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
    /// `total` at the model's list price for input tokens; absent when the models
    /// file gives no price.
    #[serde(skip_serializing_if = "Usd::is_unknown")]
    pub estimated_input_cost_usd: Usd,
}

impl WindowShare {
    pub(super) fn of(model: &ResolvedModel<'_>, tokens: u64) -> Option<WindowShare> {
        let entry = model.entry()?;
        Some(WindowShare {
            context_window: entry.context_window,
            percent_of_window: (tokens as f64 * 1000.0 / entry.context_window.max(1) as f64)
                .round()
                / 10.0,
            fits_window: tokens <= entry.context_window,
            estimated_input_cost_usd: Usd(cost(tokens as usize, entry)),
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
    /// With `outline`: every file as its outline, those without one at `tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outline_total: Option<u64>,
    /// With `outline`: files without one, per reason (`no_grammar`, `too_large`,
    /// `timed_out`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub outline_missing: BTreeMap<&'static str, usize>,
    pub files_measured: usize,
    pub bytes: u64,
    pub lines: u64,
    /// What `total` means for the model; absent for a bare encoding name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowShare>,
    pub sort: FileSort,
    /// This page of `files`: cut by `limit` and by the server's answer limit; `next`
    /// is the `offset` for the rows after it.
    #[serde(flatten)]
    pub page: Page,
    pub files: Vec<FileRow>,
    /// Per folder, largest first: the folders one level below what all files share
    /// (on the first page; at most `limit`).
    pub folders: Vec<FolderRow>,
    /// Files found but not measured, with the reason (at most 100 listed).
    pub skipped: Vec<Skipped>,
    /// How many files were skipped, per reason.
    pub skipped_counts: BTreeMap<&'static str, usize>,
    pub excluded: Excluded,
    /// Files answered from the measurement cache (unchanged since last measured).
    pub cached: usize,
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
    /// Under a `detail` other than `full`: `outline`, `full` (it has none, see
    /// `no_outline`) or `path`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<&'static str>,
    /// Why a file asked for as an outline is whole: `no_grammar`, `too_large`,
    /// `timed_out`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_outline: Option<&'static str>,
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
///
/// The whole answer, as the model receives it (its compact JSON: what a client
/// passes on, whether it reads structuredContent or the text), is what the budget
/// bounds: `answer_tokens` is its count for `model`, never over `budget`. The packed
/// `text` takes most of it; the lists are cut to `rows` rows each, with counts of all.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LoadedFiles {
    #[serde(flatten)]
    pub model: FilesModel,
    pub roots: Vec<String>,
    pub budget: u64,
    /// Where the budget came from: `given`; `default` (90 % of the window minus a
    /// reserve for the reply); or `answer_limit` (that default, capped by the
    /// answer limit for this client's tokens).
    pub budget_source: &'static str,
    /// When the answer limit for this client, not `budget`, decided what was left
    /// out (or capped the default budget): that limit (e.g. `47,000 bytes, 20,000
    /// tokens (codex)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_limit: Option<String>,
    /// Tokens of this whole answer as the model receives it (its compact JSON, the
    /// escaped `text` and this report included), counted for `model`; never over
    /// `budget`.
    pub answer_tokens: u64,
    /// Exact count of `text` on its own (unescaped, as the CLI prints it), wrappers
    /// included.
    pub tokens: u64,
    pub format: PackFormat,
    pub order: PackOrder,
    /// How much of each file, when not `full`.
    #[serde(skip_serializing_if = "Detail::is_full")]
    pub detail: Detail,
    /// Under `detail: "auto"`: how many files of `text` are at each level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub levels: Option<Levels>,
    /// What `tokens` (the packed text) means for the model's window and price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowShare>,
    /// Files in `text`.
    pub included_files: usize,
    /// Files left out: over what was left of the budget.
    pub omitted_files: usize,
    /// Tokens the omitted files' pieces would take (unescaped).
    pub omitted_tokens: u64,
    /// Rows listed in `included`, `omitted`, `skipped` and `excluded`'s examples
    /// each; 0 means every row.
    pub rows: usize,
    /// True when a list was cut to `rows` rows (ask with a larger `rows`, or 0).
    pub truncated: bool,
    /// The first `rows` files in `text`, in order.
    pub included: Vec<IncludedFile>,
    /// The first `rows` files left out.
    pub omitted: Vec<OmittedFile>,
    /// The first `rows` files skipped, with the reason.
    pub skipped: Vec<Skipped>,
    pub skipped_counts: BTreeMap<&'static str, usize>,
    pub excluded: Excluded,
    /// The packed files.
    pub text: String,
}

/// How many files of a `detail: "auto"` text are at each level (every one, not only
/// the rows listed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Levels {
    pub full: usize,
    pub outline: usize,
    pub path: usize,
}

impl Levels {
    /// The count of each level among the rows' `detail`s.
    pub fn of(details: impl Iterator<Item = Option<&'static str>>) -> Levels {
        let mut levels = Levels::default();
        for detail in details {
            match detail {
                Some("outline") => levels.outline += 1,
                Some("path") => levels.path += 1,
                _ => levels.full += 1,
            }
        }
        levels
    }
}

/// The first [`MAX_EXAMPLES`] skipped files, and counts per reason of all.
pub(super) fn cap_skipped(skipped: Vec<Skipped>) -> (Vec<Skipped>, BTreeMap<&'static str, usize>) {
    cap_skipped_to(skipped, MAX_EXAMPLES)
}

/// The first `rows` skipped files, and counts per reason of all.
pub(super) fn cap_skipped_to(
    mut skipped: Vec<Skipped>,
    rows: usize,
) -> (Vec<Skipped>, BTreeMap<&'static str, usize>) {
    let mut counts = BTreeMap::new();
    for s in &skipped {
        *counts.entry(s.reason).or_insert(0) += 1;
    }
    skipped.truncate(rows);
    (skipped, counts)
}

/// Tokens per folder, one level below the folder every file shares, largest first.
///
/// Folders are slices of the rows' paths until a row is added: splitting and
/// joining every path into new strings took a few ms of one core for 16k files,
/// after the counting.
pub(super) fn folder_rollup(rows: &[FileRow]) -> Vec<FolderRow> {
    // A file's folder: its path before the last `/`; `None` directly in the root.
    fn folder_of(row: &FileRow) -> Option<&str> {
        row.path.rsplit_once('/').map(|(folder, _)| folder)
    }
    let names = |folder: Option<&str>| folder.map_or(0, |f| f.split('/').count());
    let common = rows.first().map_or(0, |first| {
        let first: Vec<&str> = folder_of(first).map_or(Vec::new(), |f| f.split('/').collect());
        rows.iter().fold(first.len(), |common, row| {
            let shared = folder_of(row).map_or(0, |folder| {
                folder
                    .split('/')
                    .zip(&first[..common])
                    .take_while(|(name, first)| name == *first)
                    .count()
            });
            common.min(shared)
        })
    });
    let mut folders: HashMap<(Option<&str>, &str), (u64, usize)> = HashMap::new();
    for row in rows {
        let folder = folder_of(row);
        let depth = (common + 1).min(names(folder));
        let shown = match (folder, depth) {
            (Some(folder), 1..) => folder
                .match_indices('/')
                .nth(depth - 1)
                .map_or(folder, |(end, _)| &folder[..end]),
            _ => ".",
        };
        let entry = folders.entry((row.root.as_deref(), shown)).or_default();
        entry.0 += row.tokens;
        entry.1 += 1;
    }
    let mut folders: Vec<FolderRow> = folders
        .into_iter()
        .map(|((root, path), (tokens, files))| FolderRow {
            path: match root {
                Some(root) => format!("{root}:{path}"),
                None => path.to_string(),
            },
            tokens,
            files,
        })
        .collect();
    folders.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.path.cmp(&b.path)));
    folders
}

/// `rows` in the order `file-tokens` was asked for.
pub(super) fn sort_rows(rows: &mut [FileRow], sort: FileSort) {
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
}

#[cfg(test)]
mod rollup_tests {
    use super::*;

    /// The rollup as first written, with new strings for every folder of every row.
    fn rollup_by_copies(rows: &[FileRow]) -> Vec<FolderRow> {
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

    fn row(root: Option<&str>, path: &str, tokens: u64) -> FileRow {
        FileRow {
            path: path.to_string(),
            root: root.map(str::to_string),
            tokens,
            outline_tokens: None,
            lines: 1,
            bytes: 1,
        }
    }

    #[test]
    fn slices_roll_up_as_joined_copies_did() {
        let trees: Vec<Vec<FileRow>> = vec![
            vec![],
            vec![row(None, "a.rs", 3)],
            vec![row(None, "src/a.rs", 3), row(None, "src/b/c.rs", 5)],
            vec![row(None, "x/y/z/a.rs", 1), row(None, "x/y/z/b.rs", 2)],
            vec![
                row(None, "x/y/a.rs", 1),
                row(None, "x/w/b.rs", 2),
                row(None, "x/c", 4),
            ],
            vec![
                row(None, "a//b/c", 1),
                row(None, "a//d", 2),
                row(None, "/e", 3),
            ],
            vec![row(None, "src/a.rs", 1), row(None, "README.md", 9)],
            vec![
                row(Some("one"), "src/a.rs", 1),
                row(Some("two"), "src/a.rs", 2),
                row(Some("two"), "src/deep/b.rs", 2),
                row(Some("one"), "top.md", 7),
            ],
            vec![
                row(None, "crates/a/src/lib.rs", 10),
                row(None, "crates/a/src/x/y.rs", 10),
                row(None, "crates/b/src/lib.rs", 20),
                row(None, "crates/b/Cargo.toml", 1),
            ],
        ];
        for rows in &trees {
            assert_eq!(folder_rollup(rows), rollup_by_copies(rows), "{rows:?}");
        }
    }
}
