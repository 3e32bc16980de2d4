//! `load-files`: the files themselves, packed into one text within a token budget
//! that the answer never exceeds.

use context_budget::files::pack::{PackFormat, PackOrder};
use context_budget::files::{FileQuery, LoadRequest, LoadedFiles};
use mcp_common::{Structured, ToolError, parse_params};
use rmcp::RoleServer;
use rmcp::model::JsonObject;
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::roots::RequestRoots;
use crate::scan::RequestScan;
use crate::service::Service;

pub const NAME: &str = "load-files";
pub const DESCRIPTION: &str = "Load files into one text within a token budget: `paths` (files, folders or globs, \
relative to the server's root), `model` (default gpt-4), `budget` (default 90 % of the model's window minus a \
reserve for the answer), `order` (`given`, `smallest` first, or `path`), `format` (`xml` <file path=\"...\"> \
elements, `markdown` fenced blocks with a language tag, or `plain`), `max_file_tokens` (cut a file keeping its \
front, with a marker). Returns `text`, `tokens` (the exact count of `text` itself, wrappers included, never over \
the budget), `included`, `omitted` (over the budget) and `skipped` files (binary, secret-looking, outside the \
root, ...).";

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadFilesParams {
    /// Files, folders or globs, relative to a root (or absolute inside one), in the
    /// order wanted. Default: every root.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Model or encoding to count for (default `gpt-4`).
    pub model: Option<String>,
    /// Tokens `text` may take. Default: 90 % of the model's window minus a reserve
    /// for the answer (its output limit, at most an eighth of the window).
    pub budget: Option<u64>,
    /// `given` (default: `paths` in order, each folder's files by path), `smallest`
    /// first (the most files within the budget), or `path`.
    pub order: Option<PackOrder>,
    /// `xml` (default), `markdown` or `plain`.
    pub format: Option<PackFormat>,
    /// Cut any file above this many tokens, keeping its front, with a marker.
    #[serde(alias = "maxFileTokens")]
    pub max_file_tokens: Option<u64>,
    /// Only files (reached through folders and globs) matching one of these globs.
    #[serde(default)]
    pub include: Vec<String>,
    /// Leave out files matching any of these globs.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Also walk hidden files and folders. Default false.
    #[serde(default)]
    pub hidden: bool,
}

impl LoadFilesParams {
    pub fn query(&self) -> FileQuery {
        FileQuery {
            paths: self.paths.clone(),
            include: self.include.clone(),
            exclude: self.exclude.clone(),
            hidden: self.hidden,
        }
    }

    pub fn request(&self) -> LoadRequest {
        LoadRequest {
            budget: self.budget,
            order: self.order.unwrap_or_default(),
            format: self.format.unwrap_or_default(),
            max_file_tokens: self.max_file_tokens,
        }
    }
}

pub async fn call(
    service: &Service,
    args: JsonObject,
    context: &RequestContext<RoleServer>,
) -> Result<Structured<LoadedFiles>, ToolError> {
    let params: LoadFilesParams = parse_params(NAME, Some(args))?;
    let roots = RequestRoots::of(context).await;
    let scan = std::sync::Arc::new(RequestScan::new(context));
    service
        .load_files(params, roots.0, scan)
        .await
        .map(Structured)
}
