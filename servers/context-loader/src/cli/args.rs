//! The binary's command line: global flags, the server modes, and the tools as
//! subcommands. Engine types are used as they are (`Strategy`, `SortOrder`), parsed
//! by their wire names, so an unknown value is a usage error listing the choices.

use std::path::PathBuf;
use std::str::FromStr;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use context_budget::DEFAULT_MAX_INPUT_BYTES;
use context_budget::Strategy;
use context_budget::files::pack::{PackFormat, PackOrder};
use context_budget::files::{FileLimits, FileSort};
use context_budget::limits::{DEFAULT_MAX_MESSAGES, DEFAULT_MAX_NAME_BYTES, DEFAULT_MAX_SECTIONS};
use context_budget::spec::SortOrder;
use context_budget::wire::{UnknownName, WireName};

use crate::{anthropic, http, stdio};

#[derive(Debug, Parser)]
#[command(name = "context-loader", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every mode takes: limits, where specs are, the catalog, exact counting.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Largest text accepted in one call, in bytes; larger gets INPUT_TOO_LARGE.
    #[arg(long, global = true, env = "CONTEXT_LOADER_MAX_INPUT_BYTES", default_value_t = DEFAULT_MAX_INPUT_BYTES)]
    pub max_input_bytes: usize,
    /// Longest model name or spec path accepted, in bytes; longer gets INPUT_TOO_LARGE.
    #[arg(long, global = true, env = "CONTEXT_LOADER_MAX_NAME_BYTES", default_value_t = DEFAULT_MAX_NAME_BYTES)]
    pub max_name_bytes: usize,
    /// Most chat messages one fit-messages call accepts; more gets INPUT_TOO_LARGE.
    #[arg(long, global = true, env = "CONTEXT_LOADER_MAX_MESSAGES", default_value_t = DEFAULT_MAX_MESSAGES)]
    pub max_messages: usize,
    /// Most sections one assemble-context call accepts; more gets INPUT_TOO_LARGE.
    #[arg(long, global = true, env = "CONTEXT_LOADER_MAX_SECTIONS", default_value_t = DEFAULT_MAX_SECTIONS)]
    pub max_sections: usize,
    /// Folder holding the specs (`NNN-name/README.md`, ...), for spec-tokens and spec-budget.
    #[arg(
        long,
        global = true,
        env = "CONTEXT_LOADER_SPECS_DIR",
        default_value = "specs"
    )]
    pub specs_dir: PathBuf,
    /// Server log format on stderr: text or json (one object per line).
    #[arg(
        long,
        global = true,
        env = "CONTEXT_LOADER_LOG_FORMAT",
        default_value = "text"
    )]
    pub log_format: mcp_common::transport::LogFormat,
    /// JSON file of models that extends or overrides the built-in catalog (same format
    /// as data/models.json).
    #[arg(long, global = true, env = "CONTEXT_LOADER_MODELS_FILE")]
    pub models_file: Option<PathBuf>,
    /// Count Claude models exactly with Anthropic's count_tokens API (needs
    /// ANTHROPIC_API_KEY; falls back to the estimate, with a warning, on any failure).
    #[arg(long, global = true, env = "CONTEXT_LOADER_EXACT_CLAUDE")]
    pub exact_claude: bool,
    /// Base URL of the Anthropic API.
    #[arg(long, global = true, env = "ANTHROPIC_BASE_URL", default_value = anthropic::DEFAULT_BASE_URL)]
    pub anthropic_base_url: String,
    /// Give up on a count_tokens request after this many milliseconds (then estimate).
    #[arg(
        long,
        global = true,
        env = "CONTEXT_LOADER_ANTHROPIC_TIMEOUT_MS",
        default_value_t = 5000
    )]
    pub anthropic_timeout_ms: u64,
    /// A folder file-tokens and load-files may read (repeatable; the env variable is
    /// a path list, `:`-separated). Default: the working directory over stdio and on
    /// the command line; none over HTTP (file tools then answer ROOTS_NOT_CONFIGURED).
    #[arg(long = "root", global = true, env = "CONTEXT_LOADER_ROOTS", value_delimiter = PATH_LIST_SEPARATOR)]
    pub roots: Vec<PathBuf>,
    /// File tools: most files measured or loaded per call (more: FILE_LIMIT_EXCEEDED).
    #[arg(long, global = true, env = "CONTEXT_LOADER_MAX_FILES", default_value_t = FileLimits::default().max_files)]
    pub max_files: usize,
    /// File tools: larger files are skipped as `too_large`.
    #[arg(long, global = true, env = "CONTEXT_LOADER_MAX_FILE_BYTES", default_value_t = FileLimits::default().max_file_bytes)]
    pub max_file_bytes: u64,
    /// File tools: most bytes read per call, all files together.
    #[arg(long, global = true, env = "CONTEXT_LOADER_MAX_TOTAL_BYTES", default_value_t = FileLimits::default().max_total_bytes)]
    pub max_total_bytes: u64,
    /// File tools: most folder entries one call's walk visits.
    #[arg(long, global = true, env = "CONTEXT_LOADER_MAX_WALK_ENTRIES", default_value_t = FileLimits::default().max_walk_entries)]
    pub max_walk_entries: usize,
    /// File tools: longest time one call's walk may take, in milliseconds.
    #[arg(long, global = true, env = "CONTEXT_LOADER_WALK_TIMEOUT_MS", default_value_t = FileLimits::default().walk_timeout.as_millis() as u64)]
    pub walk_timeout_ms: u64,
    /// Do not load the vocabularies in the background at start (servers then load
    /// them on the first count). Only for `cargo xtask bench`'s unwarmed variant.
    #[arg(long, global = true, hide = true)]
    pub no_warm_up: bool,
}

/// How CONTEXT_LOADER_ROOTS separates folders (as PATH does).
#[cfg(unix)]
const PATH_LIST_SEPARATOR: char = ':';
#[cfg(not(unix))]
const PATH_LIST_SEPARATOR: char = ';';

impl GlobalArgs {
    /// The file tools' per-call bounds from the flags.
    pub fn file_limits(&self) -> FileLimits {
        FileLimits {
            max_files: self.max_files,
            max_file_bytes: self.max_file_bytes,
            max_total_bytes: self.max_total_bytes,
            max_walk_entries: self.max_walk_entries,
            walk_timeout: std::time::Duration::from_millis(self.walk_timeout_ms),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdin/stdout (for Claude Desktop, Claude Code, other agents).
    Stdio(stdio::StdioArgs),
    /// Serve MCP over streamable HTTP (default http://127.0.0.1:8787/mcp).
    Http(http::HttpArgs),
    #[command(flatten)]
    Tool(ToolCommand),
}

/// The tools as shell commands.
#[derive(Debug, Subcommand)]
pub enum ToolCommand {
    /// Count the tokens of a text (the `count-tokens` tool).
    Count(CountArgs),
    /// List supported models with windows and prices (the `list-models` tool).
    Models(ModelsArgs),
    /// Measure files, folders and globs under the roots (the `file-tokens` tool).
    Files(FilesArgs),
    /// Pack files into a token budget: the text on stdout, the report on stderr (the `load-files` tool).
    Load(LoadArgs),
    /// Measure one spec or list all specs (the `spec-tokens` tool).
    SpecTokens(SpecTokensArgs),
    /// Check several specs against one budget (the `spec-budget` tool).
    SpecBudget(SpecBudgetArgs),
    /// Trim a chat history (JSON) to a model's window (the `fit-messages` tool).
    FitMessages(FitMessagesArgs),
    /// Assemble a prompt from sections (JSON) within a budget (the `assemble-context` tool).
    Assemble(AssembleArgs),
}

#[derive(Debug, Args)]
pub struct CountArgs {
    /// The text to count; `-` or nothing reads stdin.
    pub text: Option<String>,
    /// Read the text from this file instead.
    #[arg(long, short, conflicts_with = "text")]
    pub file: Option<PathBuf>,
    /// Model or encoding name (default gpt-4).
    #[arg(long, short)]
    pub model: Option<String>,
    /// Print the JSON result (errors too) instead of a sentence.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// Name or family prefix, e.g. `claude` or `gpt-4.1`.
    pub filter: Option<String>,
    #[arg(long)]
    pub json: bool,
}

/// Which files: shared by `files` and `load`.
#[derive(Debug, Args)]
pub struct FileSelectionArgs {
    /// Files, folders or globs (`src`, `README.md`, `'src/**/*.rs'`); default: every root.
    pub paths: Vec<String>,
    /// Only files matching one of these globs (repeatable).
    #[arg(long)]
    pub include: Vec<String>,
    /// Leave out files matching these globs (repeatable).
    #[arg(long)]
    pub exclude: Vec<String>,
    /// Also walk hidden files and folders.
    #[arg(long)]
    pub hidden: bool,
    /// Model or encoding name (default gpt-4).
    #[arg(long, short)]
    pub model: Option<String>,
}

#[derive(Debug, Args)]
pub struct FilesArgs {
    #[command(flatten)]
    pub selection: FileSelectionArgs,
    /// Most file rows (default 100; 0 = all).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Row order.
    #[arg(long, value_parser = wire_value::<FileSort>())]
    pub sort: Option<FileSort>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    #[command(flatten)]
    pub selection: FileSelectionArgs,
    /// Token budget (default: 90 % of the model's window minus a reserve for the answer).
    #[arg(long)]
    pub budget: Option<u64>,
    /// Order of the files.
    #[arg(long, value_parser = wire_value::<PackOrder>())]
    pub order: Option<PackOrder>,
    /// How files are wrapped.
    #[arg(long, value_parser = wire_value::<PackFormat>())]
    pub format: Option<PackFormat>,
    /// Cut any file above this many tokens, keeping its front.
    #[arg(long)]
    pub max_file_tokens: Option<u64>,
    /// Print the whole JSON result (text included) on stdout instead.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SpecTokensArgs {
    /// Spec to measure (`59`, `059-name`, `name`, `059/DESIGN.md`); omit to list all.
    pub spec: Option<String>,
    /// Count sub-spec files too (default: README.md only).
    #[arg(long)]
    pub include_sub_specs: bool,
    /// Add the prose/code/tables/frontmatter breakdown and performance figures.
    #[arg(long)]
    pub detailed: bool,
    /// Model or encoding name (default gpt-4).
    #[arg(long, short)]
    pub model: Option<String>,
    /// Token budget to check against.
    #[arg(long)]
    pub budget: Option<u64>,
    /// Listing order.
    #[arg(long, value_parser = wire_value::<SortOrder>())]
    pub sort: Option<SortOrder>,
    /// Listing filter: at most this many tokens.
    #[arg(long)]
    pub max_tokens: Option<u64>,
    /// Listing filter: at least this many tokens.
    #[arg(long)]
    pub min_tokens: Option<u64>,
    /// Most rows to list (default 100; 0 = all).
    #[arg(long)]
    pub limit: Option<usize>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SpecBudgetArgs {
    /// Specs in priority order (`59 66 archived/012`).
    #[arg(required = true)]
    pub specs: Vec<String>,
    /// Token budget for all of them together.
    #[arg(long)]
    pub budget: u64,
    /// Model or encoding name (default gpt-4).
    #[arg(long, short)]
    pub model: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct FitMessagesArgs {
    /// JSON file with the messages (an array, or `{"messages": [...]}`); `-` or nothing reads stdin.
    pub file: Option<PathBuf>,
    /// Model name (default gpt-4).
    #[arg(long, short)]
    pub model: Option<String>,
    /// Share of the window to leave unused, in [0, 1) (default 0.10).
    #[arg(long)]
    pub margin: Option<f64>,
    /// Tokens to keep free for the reply (default 0).
    #[arg(long)]
    pub reserve_output_tokens: Option<u64>,
    /// Keep the newest (`last`, default) or the oldest (`first`) messages.
    #[arg(long, value_parser = wire_value::<Strategy>())]
    pub strategy: Option<Strategy>,
    /// Let a leading system message be dropped like any other.
    #[arg(long)]
    pub no_keep_system: bool,
    /// Print the JSON result (errors too) instead of a summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AssembleArgs {
    /// JSON file with the sections (an array, or `{"sections": [...]}`); `-` or nothing reads stdin.
    pub file: Option<PathBuf>,
    /// Total tokens for the assembled text (default: 90 % of the model's window).
    #[arg(long, short)]
    pub budget: Option<u64>,
    /// Model whose tokenizer counts (default gpt-4).
    #[arg(long, short)]
    pub model: Option<String>,
    /// A named layout whose layers the sections name (`adr-layered`: the
    /// token-budgeting ADR's eight layers, 76,000 tokens).
    #[arg(long)]
    pub preset: Option<String>,
    /// Print the JSON result (errors too); otherwise the text goes to stdout and a
    /// per-section summary to stderr.
    #[arg(long)]
    pub json: bool,
}

/// A flag value parsed by an engine enum's wire names (listed in `--help` and in
/// the usage error for anything else).
fn wire_value<T>() -> impl TypedValueParser<Value = T>
where
    T: WireName + FromStr<Err = UnknownName> + Clone + Send + Sync + 'static,
{
    PossibleValuesParser::new(T::NAMES).try_map(|name| name.parse::<T>())
}

#[cfg(test)]
mod tests {
    use clap::error::ErrorKind;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn enum_flags_take_the_wire_names_and_refuse_others_listing_the_choices() {
        let parsed = Cli::try_parse_from(["context-loader", "fit-messages", "--strategy", "first"])
            .expect("valid");
        let Command::Tool(ToolCommand::FitMessages(args)) = parsed.command else {
            panic!("fit-messages");
        };
        assert_eq!(args.strategy, Some(Strategy::First));

        let parsed = Cli::try_parse_from(["context-loader", "spec-tokens", "--sort", "name"])
            .expect("valid");
        let Command::Tool(ToolCommand::SpecTokens(args)) = parsed.command else {
            panic!("spec-tokens");
        };
        assert_eq!(args.sort, Some(SortOrder::Name));

        let error = Cli::try_parse_from(["context-loader", "fit-messages", "--strategy", "middle"])
            .expect_err("unknown strategy");
        assert_eq!(error.kind(), ErrorKind::InvalidValue);
        assert_eq!(error.exit_code(), 2);
        let text = error.to_string();
        assert!(
            text.contains("middle") && text.contains("last, first"),
            "{text}"
        );
    }
}
