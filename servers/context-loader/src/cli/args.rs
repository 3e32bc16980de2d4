//! The binary's command line: global flags, the server modes, and the tools as
//! subcommands. Engine types are used as they are (`Strategy`, `SortOrder`), parsed
//! by their wire names, so an unknown value is a usage error listing the choices.

use std::path::PathBuf;
use std::str::FromStr;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use context_budget::DEFAULT_MAX_INPUT_BYTES;
use context_budget::Strategy;
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
