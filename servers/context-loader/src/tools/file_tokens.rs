//! `file-tokens`: what files, folders and globs cost for a model, before loading
//! them: the largest files, a per-folder rollup, what was skipped and why, and what
//! .gitignore kept out.

use std::collections::BTreeMap;

use context_budget::files::{FileQuery, FileSort, FileTokens};
use mcp_common::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::service::Service;
use crate::tool::{Call, Rendered, Tool, paginate, row_limit, wire_value};

pub struct FileTokensTool;

#[derive(Debug, Default, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct FileTokensParams {
    /// Files, folders or globs, relative to a root (or absolute inside one). A glob
    /// with a `/` matches paths from the root (`src/*.rs`, `**/*.md`); without one it
    /// matches file names at any depth (`*.toml`). Default: every root.
    #[serde(default)]
    #[arg(
        help = "Files, folders or globs (`src`, `README.md`, `'src/**/*.rs'`); default: every root"
    )]
    pub paths: Vec<String>,
    /// Model or encoding to count for (default `gpt-4`).
    #[arg(long, short, help = "Model or encoding name (default gpt-4)")]
    pub model: Option<String>,
    /// Only files (reached through folders and globs) matching one of these globs.
    #[serde(default)]
    #[arg(long, help = "Only files matching one of these globs (repeatable)")]
    pub include: Vec<String>,
    /// Leave out files matching any of these globs.
    #[serde(default)]
    #[arg(long, help = "Leave out files matching these globs (repeatable)")]
    pub exclude: Vec<String>,
    /// Also walk hidden files and folders (names starting with `.`). Default false.
    #[serde(default)]
    #[arg(long, help = "Also walk hidden files and folders")]
    pub hidden: bool,
    /// Most file rows returned (default 100; 0 = all), fewer if the answer would be
    /// over the server's answer limit; `next` is then the `offset` of the rest.
    /// Totals cover every file.
    #[arg(
        long,
        help = "Most file rows (default 100; 0 = all, within the answer limit)"
    )]
    pub limit: Option<usize>,
    /// File rows to skip: the `next` of the previous page (folders come on the
    /// first page only).
    #[arg(long, help = "File rows to skip (the previous page's `next`)")]
    pub offset: Option<usize>,
    /// `tokens` (largest first, default) or `path`.
    #[arg(long, value_parser = wire_value::<FileSort>(), help = "Row order")]
    pub sort: Option<FileSort>,
}

impl Tool for FileTokensTool {
    const NAME: &'static str = "file-tokens";
    const TITLE: &'static str = "Measure files";
    const DESCRIPTION: &'static str = "Measure files before loading them: `paths` (files, folders or globs such as \
`src/**/*.rs`, relative to the server's root; default `.`) for a `model` (default gpt-4). Returns the total and \
what it means for the model's window and price, files largest first (`limit` rows, default 100, 0 = all), a \
per-folder rollup, files skipped with the reason (binary, not_utf8, too_large, secret, outside_root, \
not_regular, ...), and how many entries .gitignore and the hidden-file rule kept out. Reads nothing outside its \
roots; secret-looking files (.env*, keys, credentials) are skipped unless named explicitly.";
    const COMMAND: &'static str = "files";
    const ABOUT: &'static str =
        "Measure files, folders and globs under the roots (the `file-tokens` tool)";

    type Params = FileTokensParams;
    type Output = FileTokens;

    async fn call(
        service: &Service,
        params: Self::Params,
        call: Call,
    ) -> Result<FileTokens, ToolError> {
        let query = FileQuery {
            paths: params.paths,
            include: params.include,
            exclude: params.exclude,
            hidden: params.hidden,
        };
        let sort = params.sort.unwrap_or_default();
        let rows = row_limit(params.limit);
        let offset = params.offset.unwrap_or(0);
        let mut answer = service
            .on_files(params.model, &call, move |store, roots, model, scan| {
                store.file_tokens(roots, &query, model, sort, None, scan)
            })
            .await?;
        match offset {
            0 => answer.folders.truncate(rows.unwrap_or(usize::MAX)),
            _ => answer.folders.clear(),
        }
        paginate(
            &mut answer,
            |a| &mut a.files,
            |a| &mut a.page,
            (offset, rows),
            service.answer_limit(),
        );
        Ok(answer)
    }

    fn warnings(output: &FileTokens) -> Vec<String> {
        skipped_warning(&output.skipped_counts)
            .into_iter()
            .collect()
    }

    fn render(output: &FileTokens) -> Rendered {
        Rendered::line(file_tokens(output))
    }
}

/// `3 binary, 1 secret`: files skipped, per reason; `None` when none was.
pub(super) fn skipped_summary(counts: &BTreeMap<&'static str, usize>) -> Option<String> {
    let counts: Vec<String> = counts
        .iter()
        .map(|(reason, n)| format!("{n} {reason}"))
        .collect();
    (!counts.is_empty()).then(|| counts.join(", "))
}

/// The one warning a file tool sends about skipped files: how many and why, not one
/// message per file (a tree of images would flood the client's log).
pub(super) fn skipped_warning(counts: &BTreeMap<&'static str, usize>) -> Option<String> {
    let files: usize = counts.values().sum();
    skipped_summary(counts)
        .map(|summary| format!("{} not read: {summary} (see `skipped`)", files_count(files)))
}

/// `1 file`, `2 files`.
pub(super) fn files_count(n: usize) -> String {
    format!("{n} file{}", if n == 1 { "" } else { "s" })
}

/// `files`: the rows, the folders, the total and what it means, what was left out.
fn file_tokens(r: &FileTokens) -> String {
    let mut out = String::new();
    let kind = if r.model.exact { "exact" } else { "estimate" };
    for file in &r.files {
        let path = match &file.root {
            Some(root) => format!("{root}:{}", file.path),
            None => file.path.clone(),
        };
        out.push_str(&format!(
            "{path:<52} {:>9} tokens {:>7} lines\n",
            file.tokens, file.lines
        ));
    }
    if let Some(next) = r.page.next {
        out.push_str(&format!(
            "  ... (more rows: --offset {next}; --limit 0 lists all within --max-answer-chars/-tokens)\n"
        ));
    }
    if r.folders.len() > 1 {
        out.push_str("by folder:\n");
        for folder in &r.folders {
            out.push_str(&format!(
                "  {:<50} {:>9} tokens {:>5} files\n",
                folder.path, folder.tokens, folder.files
            ));
        }
    }
    out.push_str(&format!(
        "total {} tokens in {} files ({}, {}, {kind})",
        r.total, r.files_measured, r.model.model, r.model.encoding
    ));
    if let Some(w) = &r.window {
        out.push_str(&format!(
            "; {}% of the {}-token window, ${:.4} as input",
            w.percent_of_window, w.context_window, w.estimated_input_cost_usd
        ));
    }
    out.push('\n');
    if let Some(skipped) = skipped_summary(&r.skipped_counts) {
        out.push_str(&format!("skipped: {skipped}\n"));
    }
    out.push_str(&format!(
        "excluded by ignore rules: {}; hidden: {}",
        r.excluded.ignored, r.excluded.hidden
    ));
    out
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipped_files_are_one_warning_with_counts_per_reason() {
        let mut counts = BTreeMap::new();
        assert_eq!(skipped_warning(&counts), None);
        counts.insert("binary", 3);
        counts.insert("secret", 1);
        assert_eq!(
            skipped_warning(&counts).as_deref(),
            Some("4 files not read: 3 binary, 1 secret (see `skipped`)")
        );
    }
}
