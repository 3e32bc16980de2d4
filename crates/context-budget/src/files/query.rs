//! What a file tools call asks for: which files, in what order, packed how.

use schemars::JsonSchema;
use serde::Serialize;

use super::pack::{PackFormat, PackOrder};
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
    pub order: PackOrder,
    pub format: PackFormat,
    /// Cut any file above this many tokens, keeping its front.
    pub max_file_tokens: Option<u64>,
    /// Rows listed in `included`, `omitted` and `skipped` each (`None`:
    /// [`DEFAULT_LOAD_ROWS`]; 0: every row). Counts always cover every file.
    pub rows: Option<usize>,
    /// The server's bound on any answer: the budget may not be over its tokens, and
    /// the answer stays within its characters and tokens too.
    pub answer_limit: AnswerLimit,
}

/// Rows `load-files` lists per list unless asked: enough to see what was left out,
/// few enough that the packed text, not the report, takes the budget.
pub const DEFAULT_LOAD_ROWS: usize = 10;
