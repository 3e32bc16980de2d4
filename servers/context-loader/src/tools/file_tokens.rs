//! `file-tokens`: what files, folders and globs cost for a model, before loading
//! them: the largest files, a per-folder rollup, what was skipped and why, and what
//! .gitignore kept out.

use std::collections::BTreeMap;

use context_budget::files::{FileQuery, FileSort, FileTokens};
use mcp_common::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::service::Service;
use crate::table::table;
use crate::tool::{Call, Rendered, Tool, paginate, row_limit, wire_value};

pub struct FileTokensTool;

#[derive(Debug, Default, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct FileTokensParams {
    /// Files, folders or globs; default every root.
    #[serde(default)]
    #[arg(
        help = "Files, folders or globs (`src`, `README.md`, `'src/**/*.rs'`); default: every root"
    )]
    pub paths: Vec<String>,
    /// Default gpt-4.
    #[arg(long, short, help = "Model or encoding name (default gpt-4)")]
    pub model: Option<String>,
    /// Globs a file must match.
    #[serde(default)]
    #[arg(long, help = "Only files matching one of these globs (repeatable)")]
    pub include: Vec<String>,
    /// Globs to leave out.
    #[serde(default)]
    #[arg(long, help = "Leave out files matching these globs (repeatable)")]
    pub exclude: Vec<String>,
    /// Include hidden files.
    #[serde(default)]
    #[arg(long, help = "Also walk hidden files and folders")]
    pub hidden: bool,
    /// Rows (default 100; 0 = all).
    #[arg(
        long,
        help = "Most file rows (default 100; 0 = all, within the answer limit)"
    )]
    pub limit: Option<usize>,
    /// A previous answer's `next`.
    #[arg(long, help = "File rows to skip (the previous page's `next`)")]
    pub offset: Option<usize>,
    /// Default `tokens`.
    #[arg(long, value_parser = wire_value::<FileSort>(), help = "Row order")]
    pub sort: Option<FileSort>,
    /// Also count outlines.
    #[serde(default)]
    #[arg(
        long,
        help = "Also count each file's outline (declarations kept, bodies elided; Rust, Python, JS, TS, Go, Java, C, C++, Markdown)"
    )]
    pub outline: bool,
}

impl Tool for FileTokensTool {
    const NAME: &'static str = "file-tokens";
    const TITLE: &'static str = "Measure files";
    const DESCRIPTION: &'static str = "Measure files, folders or globs under the roots without loading them: \
tokens, largest files, folder totals, skipped files. Use before load-files.";
    const COMMAND: &'static str = "files";
    const MEASURES_FILES: bool = true;
    const ABOUT: &'static str =
        "Measure files, folders and globs under the roots (the `file-tokens` tool)";
    const EXAMPLES: &'static str = "\
context-loader files crates --model gpt-4o --limit 10\n\
context-loader files 'crates/**/*.rs' --exclude '**/tests/**' --limit 5\n\
context-loader --root crates files --sort path --limit 5";

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
            outline: params.outline,
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
            call.answer_limit,
        );
        Ok(answer)
    }

    fn warnings(output: &FileTokens) -> Vec<String> {
        skipped_warning(&output.skipped_counts)
            .into_iter()
            .collect()
    }

    fn render(output: FileTokens) -> Rendered {
        Rendered::line(file_tokens(&output))
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

/// Rows a rendering names of the files skipped (the JSON lists up to `MAX_EXAMPLES`).
const SKIPPED_ROWS: usize = 10;

/// `  data/latin1.txt: not UTF-8 ...` for the first skipped files, so a file named on
/// the command line and not read is named in the answer.
pub(super) fn skipped_rows(
    skipped: &[context_budget::files::Skipped],
    counts: &BTreeMap<&'static str, usize>,
) -> String {
    let mut out = String::new();
    for row in skipped.iter().take(SKIPPED_ROWS) {
        out.push_str(&format!("  {}: {}\n", row.path, row.detail));
    }
    let total: usize = counts.values().sum();
    if total > SKIPPED_ROWS.min(skipped.len()) {
        out.push_str(&format!(
            "  ... ({} more; --json lists them)\n",
            total - SKIPPED_ROWS.min(skipped.len())
        ));
    }
    out
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
    let outlines = r.outline_total.is_some();
    let rows = r.files.iter().map(|file| {
        let path = match &file.root {
            Some(root) => format!("{root}:{}", file.path),
            None => file.path.clone(),
        };
        let mut row = vec![path, file.tokens.to_string()];
        if outlines {
            row.push(
                file.outline_tokens
                    .map_or("-".to_string(), |n| n.to_string()),
            );
        }
        row.push(file.lines.to_string());
        row
    });
    if !r.files.is_empty() {
        match outlines {
            true => out.push_str(&table(
                &["file", "tokens", "outline", "lines"],
                &[1, 2, 3],
                rows,
            )),
            false => out.push_str(&table(&["file", "tokens", "lines"], &[1, 2], rows)),
        }
        out.push('\n');
    }
    if let Some(next) = r.page.next {
        out.push_str(&format!(
            "  ... (more rows: --offset {next}; --limit 0 lists all within --max-answer-chars/-tokens)\n"
        ));
    }
    if r.folders.len() > 1 {
        let rows = r.folders.iter().map(|folder| {
            let files = folder.files.to_string();
            vec![folder.path.clone(), folder.tokens.to_string(), files]
        });
        out.push_str(&table(&["folder", "tokens", "files"], &[1, 2], rows));
        out.push('\n');
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
    if let Some(outline_total) = r.outline_total {
        out.push_str(&format!("as outlines {outline_total} tokens"));
        if let Some(missing) = skipped_summary(&r.outline_missing) {
            out.push_str(&format!(" (at full tokens, without an outline: {missing})"));
        }
        out.push('\n');
    }
    if let Some(skipped) = skipped_summary(&r.skipped_counts) {
        out.push_str(&format!("skipped: {skipped}\n"));
        out.push_str(&skipped_rows(&r.skipped, &r.skipped_counts));
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
