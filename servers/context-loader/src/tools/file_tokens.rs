//! `file-tokens`: what files, folders and globs cost for a model, before loading
//! them: the largest files, a per-folder rollup, what was skipped and why, and what
//! .gitignore kept out.

use context_budget::files::{FileQuery, FileSort, FileTokens};
use mcp_common::{Structured, ToolError, parse_params};
use rmcp::RoleServer;
use rmcp::model::JsonObject;
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::roots::RequestRoots;
use crate::scan::RequestScan;
use crate::service::Service;

pub const NAME: &str = "file-tokens";
pub const DESCRIPTION: &str = "Measure files before loading them: `paths` (files, folders or globs such as \
`src/**/*.rs`, relative to the server's root; default `.`) for a `model` (default gpt-4). Returns the total and \
what it means for the model's window and price, files largest first (`limit` rows, default 100, 0 = all), a \
per-folder rollup, files skipped with the reason (binary, not_utf8, too_large, secret, outside_root, \
not_regular, ...), and how many entries .gitignore and the hidden-file rule kept out. Reads nothing outside its \
roots; secret-looking files (.env*, keys, credentials) are skipped unless named explicitly.";

/// Rows returned unless `limit` says otherwise (0 = all).
pub const DEFAULT_LIMIT: usize = 100;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileTokensParams {
    /// Files, folders or globs, relative to a root (or absolute inside one). A glob
    /// with a `/` matches paths from the root (`src/*.rs`, `**/*.md`); without one it
    /// matches file names at any depth (`*.toml`). Default: every root.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Model or encoding to count for (default `gpt-4`).
    pub model: Option<String>,
    /// Only files (reached through folders and globs) matching one of these globs.
    #[serde(default)]
    pub include: Vec<String>,
    /// Leave out files matching any of these globs.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Also walk hidden files and folders (names starting with `.`). Default false.
    #[serde(default)]
    pub hidden: bool,
    /// Most file rows returned (default 100; 0 = all). Totals cover every file.
    pub limit: Option<usize>,
    /// `tokens` (largest first, default) or `path`.
    pub sort: Option<FileSort>,
}

impl FileTokensParams {
    pub fn query(&self) -> FileQuery {
        FileQuery {
            paths: self.paths.clone(),
            include: self.include.clone(),
            exclude: self.exclude.clone(),
            hidden: self.hidden,
        }
    }

    /// `limit` with its default; `None` means every row.
    pub fn row_limit(&self) -> Option<usize> {
        match self.limit.unwrap_or(DEFAULT_LIMIT) {
            0 => None,
            n => Some(n),
        }
    }
}

pub async fn call(
    service: &Service,
    args: JsonObject,
    context: &RequestContext<RoleServer>,
) -> Result<Structured<FileTokens>, ToolError> {
    let params: FileTokensParams = parse_params(NAME, Some(args))?;
    let roots = RequestRoots::of(context).await;
    let scan = std::sync::Arc::new(RequestScan::new(context));
    service
        .file_tokens(params, roots.0, scan)
        .await
        .map(Structured)
}
