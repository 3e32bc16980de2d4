//! What a tool is. Each tool is one file in `tools/` implementing [`Tool`]: its
//! parameters (declared once: serde for MCP, schemars for the input schema, clap for
//! the CLI), its work (one call into the service or the engine) and the shaping of its
//! answer (the CLI rendering, the warnings a client's log shows). The MCP registry and
//! the CLI both take every tool from [`crate::tools::register`] and run it through
//! one generic path each, so no tool can behave differently from another in how its
//! arguments are checked, its warnings forwarded or its errors printed.

use std::str::FromStr;

use context_budget::answer::{AnswerLimit, Page, answer_text};
use context_budget::wire::{UnknownName, WireName};
use mcp_common::ToolError;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use crate::call::Call;
use crate::service::Service;

pub trait Tool: 'static {
    /// The MCP name (`count-tokens`).
    const NAME: &'static str;
    /// The MCP title annotation (`Count tokens`).
    const TITLE: &'static str;
    /// The MCP description: what the model reads to choose the tool.
    const DESCRIPTION: &'static str;
    /// The CLI subcommand (`count`) and its one-line help.
    const COMMAND: &'static str;
    const ABOUT: &'static str;
    /// Command lines shown under the CLI's `--help` (one per line, indented).
    const EXAMPLES: &'static str;
    /// Help of the CLI's `--json` flag.
    const JSON_HELP: &'static str = "Print the JSON result (errors too) instead of a summary";

    /// The arguments. Fields only the CLI has (an input file) are `#[serde(skip)]`;
    /// fields the CLI fills from a file or stdin are `#[arg(skip)]` and set by
    /// [`Tool::from_command_line`].
    type Params: DeserializeOwned + JsonSchema + clap::Args + Send + 'static;
    /// The answer: structuredContent, and `--json` on the CLI.
    type Output: Serialize + JsonSchema + Send + 'static;

    /// Run the tool.
    fn call(
        service: &Service,
        params: Self::Params,
        call: Call,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;

    /// The CLI's arguments made whole: read what the command line names instead of
    /// passing it (a file, stdin). Runs before [`Tool::call`].
    fn from_command_line(
        params: Self::Params,
        service: &Service,
    ) -> Result<Self::Params, ToolError> {
        let _ = service;
        Ok(params)
    }

    /// What went differently from what was asked (a fallback, a skipped file, a broken
    /// spec): sent to the client's log as well as kept in the answer, printed to stderr
    /// by the CLI after its text output (`--json` prints the answer, which holds them).
    fn warnings(output: &Self::Output) -> Vec<String> {
        let _ = output;
        Vec::new()
    }

    /// The CLI's exit code for an answer (a CI gate such as `mcp-tokens --max-tokens`
    /// exits 1 over its budget); 0 for every other tool.
    fn exit_code(output: &Self::Output) -> u8 {
        let _ = output;
        0
    }

    /// Whether the command measures files, so that a command-line run reads the
    /// file cache before it and writes it after (`cli::file_cache`).
    const MEASURES_FILES: bool = false;

    /// The answer as a person reads it on a terminal. It takes the answer, so a
    /// packed text of hundreds of megabytes moves to stdout instead of being copied.
    fn render(output: Self::Output) -> Rendered;
}

/// A CLI rendering: what goes to stdout, and a report beside it on stderr (for tools
/// whose output is a text to pipe on: the packed files, the assembled prompt).
pub struct Rendered {
    pub stdout: String,
    /// Printed exactly, without a newline added (the packed text is the output).
    pub exact: bool,
    /// `stdout` is what the tool made for the model (load's files, assemble's prompt),
    /// printed as it is; else it is a report for a person, and outside text in it is
    /// escaped ([`crate::outside`]).
    pub product: bool,
    pub stderr: Option<String>,
}

impl Rendered {
    /// A summary line or table on stdout.
    pub fn line(text: String) -> Rendered {
        Rendered {
            stdout: text,
            exact: false,
            product: false,
            stderr: None,
        }
    }
}

/// Something that takes the list of tools: the MCP router, the CLI's subcommands and
/// its dispatch. [`crate::tools::register`] hands it every tool in order.
pub trait Register {
    fn tool<T: Tool>(&mut self);
}

/// Rows a listing returns unless its `limit` says otherwise.
pub const DEFAULT_ROW_LIMIT: usize = 100;

/// A `limit` argument: absent means [`DEFAULT_ROW_LIMIT`], 0 means every row (`None`).
pub fn row_limit(limit: Option<usize>) -> Option<usize> {
    match limit.unwrap_or(DEFAULT_ROW_LIMIT) {
        0 => None,
        n => Some(n),
    }
}

/// Page `rows` of `answer`: from `offset`, at most `limit` rows (`None`: all), and
/// no more than keep the answer within the server's answer limit (measured as the
/// string the model receives, with the page fields set as they will be sent).
/// `page_of` names the answer's [`Page`], set to where this page stands. At least one
/// row is kept when any is left, so `next` always moves on (a single row over the
/// limit becomes ANSWER_TOO_LARGE in `registry::serve`, never an endless loop).
pub fn paginate<T: Serialize, R: Clone>(
    answer: &mut T,
    rows: fn(&mut T) -> &mut Vec<R>,
    page_of: fn(&mut T) -> &mut Page,
    (offset, limit): (usize, Option<usize>),
    answer_limit: AnswerLimit,
) {
    let mut all = std::mem::take(rows(answer));
    let total = all.len();
    let start = offset.min(total);
    let most = limit.map_or(total - start, |n| n.min(total - start));
    // The page asked for is tried first, its rows moved in: it fits in the common
    // case, and copying 16k rows to try it was a few ms of the answer's tail.
    all.truncate(start + most);
    all.drain(..start);
    *rows(answer) = all;
    *page_of(answer) = Page::of(offset, most, total.max(offset));
    let fits = |answer: &T| answer_limit.admits(answer_limit.measure(&answer_text(answer)));
    if most <= 1 || fits(answer) {
        return;
    }
    let all = std::mem::take(rows(answer));
    // From here the limit, not `limit`, ends the page: the page says so, and is
    // measured saying it.
    let set = |answer: &mut T, shown: usize| {
        *rows(answer) = all[..shown].to_vec();
        *page_of(answer) = Page::of(offset, shown, total.max(offset)).held_to(&answer_limit);
    };
    // The most rows that fit: `fit` does (one row is kept regardless), `over` does not.
    let (mut fit, mut over) = (1, most);
    while over - fit > 1 {
        let mid = fit + (over - fit) / 2;
        set(answer, mid);
        match fits(answer) {
            true => fit = mid,
            false => over = mid,
        }
    }
    set(answer, fit);
}

/// A CLI flag value parsed by an engine enum's wire names (listed in `--help` and in
/// the usage error for anything else).
pub fn wire_value<T>() -> impl clap::builder::TypedValueParser<Value = T>
where
    T: WireName + FromStr<Err = UnknownName> + Clone + Send + Sync + 'static,
{
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(T::NAMES).try_map(|name| name.parse::<T>())
}

/// How an enum value is spelled in the JSON output (`readme_only`, `good`), for
/// renderings that show it.
pub fn wire_name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
