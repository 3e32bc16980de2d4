//! `load-files`: the files themselves, packed into one text within a token budget
//! that the answer never exceeds.

use context_budget::files::pack::{Detail, PackFormat, PackOrder};
use context_budget::files::{FileQuery, LoadRequest, LoadedFiles};
use mcp_common::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;

use super::file_tokens::{files_count, skipped_rows, skipped_summary, skipped_warning};
use crate::service::Service;
use crate::tool::{Call, Rendered, Tool, wire_value};

pub struct LoadFilesTool;

#[derive(Debug, Default, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct LoadFilesParams {
    /// Files, folders or globs, in order; default every root.
    #[serde(default)]
    #[arg(
        help = "Files, folders or globs (`src`, `README.md`, `'src/**/*.rs'`), in the order wanted; default: every root"
    )]
    pub paths: Vec<String>,
    /// Default gpt-4.
    #[arg(long, short, help = "Model or encoding name (default gpt-4)")]
    pub model: Option<String>,
    /// Most tokens of the answer.
    #[arg(
        long,
        help = "Token budget (default: 90 % of the model's window minus a reserve for the answer)"
    )]
    pub budget: Option<u64>,
    /// Default `given`, auto `mentioned`.
    #[arg(
        long,
        value_parser = wire_value::<PackOrder>(),
        help = "Order of the files (under --detail auto, of those not named): as given, smallest first, by path, mentioned (the files others name most first) or recent (last modified first); default mentioned with --detail auto, given otherwise"
    )]
    pub order: Option<PackOrder>,
    /// Default `xml`.
    #[arg(long, value_parser = wire_value::<PackFormat>(), help = "How files are wrapped")]
    pub format: Option<PackFormat>,
    /// Default `full`; `outline` elides bodies; `auto` fits all.
    #[arg(
        long,
        value_parser = wire_value::<Detail>(),
        help = "How much of each file: its text, its outline (declarations kept, bodies elided), its path with its tokens, or auto: every file at the most detail the budget allows, named files first, then the rest by --order"
    )]
    pub detail: Option<Detail>,
    /// Cut larger files.
    #[arg(long, help = "Cut any file above this many tokens, keeping its front")]
    pub max_file_tokens: Option<u64>,
    /// Globs a file must match.
    #[serde(default)]
    #[arg(long, help = "Only files matching one of these globs (repeatable)")]
    pub include: Vec<String>,
    /// Globs to leave out.
    #[serde(default)]
    #[arg(long, help = "Leave out files matching these globs (repeatable)")]
    pub exclude: Vec<String>,
    /// Walk hidden files too.
    #[serde(default)]
    #[arg(long, help = "Also walk hidden files and folders")]
    pub hidden: bool,
    /// Rows per list (default 10; 0 = all).
    #[arg(
        long,
        help = "Rows listed in included/omitted/skipped each (default 10; 0 = all); they take from the budget"
    )]
    pub rows: Option<usize>,
}

impl Tool for LoadFilesTool {
    const NAME: &'static str = "load-files";
    const TITLE: &'static str = "Load files within a budget";
    const DESCRIPTION: &'static str = "Load files, folders or globs under the roots as one text within a token \
budget the whole answer never exceeds.";
    const COMMAND: &'static str = "load";
    const MEASURES_FILES: bool = true;
    const ABOUT: &'static str = "Pack files into a token budget: the text on stdout, the report on stderr (the `load-files` tool)";
    const EXAMPLES: &'static str = "\
context-loader load README.md ARCHITECTURE.md --budget 20000 --model gpt-4o\n\
context-loader load crates/mcp-common/src --format markdown --order smallest --budget 8000";
    const JSON_HELP: &'static str =
        "Print the whole JSON result (text included) on stdout instead.";

    type Params = LoadFilesParams;
    type Output = LoadedFiles;

    async fn call(
        service: &Service,
        params: Self::Params,
        call: Call,
    ) -> Result<LoadedFiles, ToolError> {
        let query = FileQuery {
            paths: params.paths,
            include: params.include,
            exclude: params.exclude,
            hidden: params.hidden,
            outline: false,
        };
        let request = LoadRequest {
            budget: params.budget,
            order: params.order,
            format: params.format.unwrap_or_default(),
            detail: params.detail.unwrap_or_default(),
            max_file_tokens: params.max_file_tokens,
            rows: params.rows,
            answer_limit: call.answer_limit,
        };
        service
            .on_files(params.model, &call, move |store, roots, model, scan| {
                store.load_files(roots, &query, &request, model, scan)
            })
            .await
    }

    fn warnings(output: &LoadedFiles) -> Vec<String> {
        let omitted = (output.omitted_files > 0).then(|| match output.detail {
            Detail::Auto => format!(
                "{} left out: not even their path lines fit the budget of {} tokens (see \
                 `omitted`)",
                files_count(output.omitted_files),
                output.budget
            ),
            _ => format!(
                "{} left out: over the budget of {} tokens (see `omitted`)",
                files_count(output.omitted_files),
                output.budget
            ),
        });
        // Files were left out, yet the answer is well under the budget: the server's
        // answer limit bound first, or no file left out fits what was left.
        let short = (output.omitted_files > 0 && output.answer_tokens * 100 < output.budget * 85)
            .then(|| {
                format!(
                    "the answer is {} of the budget's {} tokens: the answer limit for this \
                     client (in characters or bytes, --max-answer-chars, --max-answer-bytes) was \
                     reached first, or none of the files left out fits what was left",
                    output.answer_tokens, output.budget
                )
            });
        omitted
            .into_iter()
            .chain(short)
            .chain(skipped_warning(&output.skipped_counts))
            .collect()
    }

    /// The packed text is the output; the report goes beside it, on stderr.
    fn render(output: LoadedFiles) -> Rendered {
        Rendered {
            stderr: Some(loaded_files(&output)),
            stdout: output.text,
            product: true,
            exact: true,
        }
    }
}

/// `load`'s report on stderr (the text itself goes to stdout).
fn loaded_files(r: &LoadedFiles) -> String {
    let mut out = format!(
        "loaded {} files: {} tokens of text, {} of {} tokens as a JSON answer ({} budget; {}, {})",
        r.included_files,
        r.tokens,
        r.answer_tokens,
        r.budget,
        r.budget_source,
        r.model.model,
        r.model.encoding
    );
    if !r.detail.is_full() {
        let outlines = r
            .included
            .iter()
            .filter(|f| f.detail == Some("outline"))
            .count();
        match (r.detail, r.levels) {
            (Detail::Outline, _) => out.push_str(&format!("; {outlines} as outlines")),
            (Detail::Auto, Some(l)) => out.push_str(&format!(
                "; {} full, {} as outlines, {} as paths (ranked)",
                l.full, l.outline, l.path
            )),
            _ => out.push_str("; as paths"),
        }
    }
    let truncated = r.included.iter().filter(|f| f.truncated).count();
    if truncated > 0 {
        out.push_str(&format!("; {truncated} cut by --max-file-tokens"));
    }
    if r.omitted_files > 0 {
        let shown: Vec<&str> = r.omitted.iter().take(5).map(|o| o.path.as_str()).collect();
        out.push_str(&format!(
            "\n{} omitted (over the budget): {}{}",
            r.omitted_files,
            shown.join(", "),
            if r.omitted_files > shown.len() {
                ", ..."
            } else {
                ""
            }
        ));
    }
    if let Some(skipped) = skipped_summary(&r.skipped_counts) {
        out.push_str(&format!("\nskipped: {skipped}\n"));
        out.push_str(skipped_rows(&r.skipped, &r.skipped_counts).trim_end());
    }
    out
}
