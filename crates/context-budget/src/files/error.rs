//! Why a file tools request failed as a whole (a file that cannot be read is
//! skipped with a [`crate::SkipReason`] instead).

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
    #[error(
        "{count} paths and globs (paths, include and exclude together), over the limit of {limit} per call (--max-patterns)"
    )]
    TooManyPatterns { count: usize, limit: usize },
    #[error(
        "a `{field}` entry is {bytes} bytes, over the limit of {limit} bytes (--max-pattern-bytes)"
    )]
    PatternTooLong {
        field: &'static str,
        bytes: usize,
        limit: usize,
    },
    #[error(
        "the ignore files read up to `{path}` ({bytes} bytes) take the call over its limit of {limit} bytes of ignore files (--max-ignore-bytes)"
    )]
    IgnoreFilesTooLarge {
        path: String,
        bytes: u64,
        limit: u64,
    },
    #[error(
        "the ignore files read up to `{path}` hold over {limit} patterns, the limit per call (--max-ignore-patterns)"
    )]
    TooManyIgnorePatterns { path: String, limit: usize },
    #[error(
        "the ignore file `{path}` has a pattern of {bytes} bytes, over the limit of {limit} (--max-pattern-bytes)"
    )]
    IgnorePatternTooLong {
        path: String,
        bytes: usize,
        limit: usize,
    },
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
    #[error(
        "a budget of {budget} tokens is over the server's answer limit of {limit} tokens (--max-answer-tokens)"
    )]
    BudgetOverAnswerLimit { budget: u64, limit: u64 },
    #[error(
        "the answer's report alone ({envelope} tokens) does not fit the budget of {budget} tokens"
    )]
    BudgetBelowReport {
        budget: u64,
        envelope: u64,
        rows: usize,
    },
    #[error("the request was cancelled")]
    Cancelled,
}
