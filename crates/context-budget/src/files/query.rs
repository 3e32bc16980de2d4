//! What a file tools call asks for: which files, in what order, packed how; and the
//! bounds the server sets on every call.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use super::pack::{Detail, PackFormat, PackOrder};
use crate::AnswerLimit;

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
    /// Count each file's outline too (`file-tokens`).
    pub outline: bool,
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

/// What `load-files` was asked, beyond the files.
#[derive(Debug, Clone, Default)]
pub struct LoadRequest {
    /// Token budget for `text`; default [`super::load::default_budget`].
    pub budget: Option<u64>,
    /// The order asked for; `None`: [`LoadRequest::order`]'s default.
    pub order: Option<PackOrder>,
    pub format: PackFormat,
    /// How much of each file: the text (default), its outline, or a path line.
    pub detail: Detail,
    /// Cut any file above this many tokens, keeping its front.
    pub max_file_tokens: Option<u64>,
    /// Rows listed in `included`, `omitted` and `skipped` each (`None`:
    /// [`DEFAULT_LOAD_ROWS`]; 0: every row). Counts always cover every file.
    pub rows: Option<usize>,
    /// The server's bound on any answer: the budget may not be over its tokens, and
    /// the answer stays within its characters and tokens too.
    pub answer_limit: AnswerLimit,
}

impl LoadRequest {
    /// The order the files take: the one asked for, else `mentioned` under
    /// `detail: "auto"` (a rank is what lets it show the files that matter in more
    /// detail) and `given` otherwise (the files as the caller listed them).
    pub fn order(&self) -> PackOrder {
        self.order.unwrap_or(match self.detail {
            Detail::Auto => PackOrder::Mentioned,
            _ => PackOrder::Given,
        })
    }
}

/// Rows `load-files` lists per list unless asked: enough to see what was left out,
/// few enough that the packed text, not the report, takes the budget.
pub const DEFAULT_LOAD_ROWS: usize = 10;

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
    /// Entries of `paths`, `include` and `exclude` together (`--max-patterns`): each
    /// becomes a compiled matcher, so their number bounds the call's memory and time.
    pub max_patterns: usize,
    /// Longest single entry, in bytes (`--max-pattern-bytes`).
    pub max_pattern_bytes: usize,
    /// Bytes of all `.gitignore`, `.ignore` and `.git/info/exclude` files one call
    /// reads together (`--max-ignore-bytes`): repository content, compiled before
    /// the walk can go on, at some 500 bytes of memory per byte.
    pub max_ignore_bytes: u64,
    /// Patterns of all ignore files one call reads together (`--max-ignore-patterns`).
    pub max_ignore_patterns: usize,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            max_files: 20_000,
            max_file_bytes: 4 * 1024 * 1024,
            max_total_bytes: 256 * 1024 * 1024,
            max_walk_entries: 500_000,
            walk_timeout: Duration::from_secs(20),
            max_patterns: 1_000,
            max_pattern_bytes: 4_096,
            max_ignore_bytes: 128 * 1024,
            max_ignore_patterns: 5_000,
        }
    }
}
