//! `context-loader`: an MCP server (stdio or streamable HTTP) and CLI that tells an
//! agent what text costs in a model's context window before it loads it.

mod anthropic;
mod cli;
mod http;
mod registry;
mod scan;
mod stdio;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use context_budget::spec::SpecStore;
use context_budget::{Catalog, DEFAULT_MAX_INPUT_BYTES, TokenCounter, Tokenizer};

use crate::tools::AppState;

#[derive(Debug, Parser)]
#[command(name = "context-loader", version, about, long_about = None)]
struct Cli {
    /// Largest text accepted in one call, in bytes; larger gets INPUT_TOO_LARGE.
    #[arg(long, global = true, env = "CONTEXT_LOADER_MAX_INPUT_BYTES", default_value_t = DEFAULT_MAX_INPUT_BYTES)]
    max_input_bytes: usize,
    /// Folder holding the specs (`NNN-name/README.md`, ...), for spec-tokens and spec-budget.
    #[arg(
        long,
        global = true,
        env = "CONTEXT_LOADER_SPECS_DIR",
        default_value = "specs"
    )]
    specs_dir: PathBuf,
    /// Server log format on stderr: text or json (one object per line).
    #[arg(
        long,
        global = true,
        env = "CONTEXT_LOADER_LOG_FORMAT",
        default_value = "text"
    )]
    log_format: mcp_common::transport::LogFormat,
    /// JSON file of models that extends or overrides the built-in catalog (same format
    /// as data/models.json).
    #[arg(long, global = true, env = "CONTEXT_LOADER_MODELS_FILE")]
    models_file: Option<PathBuf>,
    /// Count Claude models exactly with Anthropic's count_tokens API (needs
    /// ANTHROPIC_API_KEY; falls back to the estimate, with a warning, on any failure).
    #[arg(long, global = true, env = "CONTEXT_LOADER_EXACT_CLAUDE")]
    exact_claude: bool,
    /// Base URL of the Anthropic API.
    #[arg(long, global = true, env = "ANTHROPIC_BASE_URL", default_value = anthropic::DEFAULT_BASE_URL)]
    anthropic_base_url: String,
    /// Give up on a count_tokens request after this many milliseconds (then estimate).
    #[arg(
        long,
        global = true,
        env = "CONTEXT_LOADER_ANTHROPIC_TIMEOUT_MS",
        default_value_t = 5000
    )]
    anthropic_timeout_ms: u64,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP over stdin/stdout (for Claude Desktop, Claude Code, other agents).
    Stdio,
    /// Serve MCP over streamable HTTP (default http://127.0.0.1:8787/mcp).
    Http(http::HttpArgs),
    /// Count the tokens of a text (the `count-tokens` tool).
    Count(cli::CountArgs),
    /// List supported models with windows and prices (the `list-models` tool).
    Models(cli::ModelsArgs),
    /// Measure one spec or list all specs (the `spec-tokens` tool).
    SpecTokens(cli::SpecTokensArgs),
    /// Check several specs against one budget (the `spec-budget` tool).
    SpecBudget(cli::SpecBudgetArgs),
    /// Trim a chat history (JSON) to a model's window (the `fit-messages` tool).
    FitMessages(cli::FitMessagesArgs),
    /// Assemble a prompt from sections (JSON) within a budget (the `assemble-context` tool).
    Assemble(cli::AssembleArgs),
}

/// Exit code for a configuration error (as clap uses for usage errors).
const CONFIG_ERROR_EXIT: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let state = match app_state(&cli) {
        Ok(state) => state,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(CONFIG_ERROR_EXIT);
        }
    };
    match cli.command {
        Command::Count(args) => ExitCode::from(cli::count(&state, args)),
        Command::Models(args) => ExitCode::from(cli::models(&state, args)),
        Command::FitMessages(args) => ExitCode::from(cli::fit_messages(&state, args)),
        Command::Assemble(args) => ExitCode::from(cli::assemble(&state, args)),
        Command::SpecTokens(args) => ExitCode::from(cli::spec_tokens(&state, args)),
        Command::SpecBudget(args) => ExitCode::from(cli::spec_budget(&state, args)),
        Command::Stdio => serve(stdio::run(state), cli.log_format),
        Command::Http(args) => serve(http::run(state, args), cli.log_format),
    }
}

/// The catalog (built-in, or extended by --models-file) and the optional Claude client.
fn app_state(cli: &Cli) -> anyhow::Result<AppState> {
    let catalog = match &cli.models_file {
        None => Catalog::builtin().clone(),
        Some(path) => {
            let json = std::fs::read_to_string(path).map_err(|e| {
                anyhow::anyhow!("cannot read --models-file {}: {e}", path.display())
            })?;
            Catalog::builtin()
                .with_overrides(&json, &path.display().to_string())
                .map_err(|e| anyhow::anyhow!("invalid --models-file: {e}"))?
        }
    };
    let state = AppState::new(
        TokenCounter::new(Arc::new(catalog), cli.max_input_bytes),
        SpecStore::new(&cli.specs_dir),
    );
    if !cli.exact_claude {
        return Ok(state);
    }
    let api_key = std::env::var("ANTHROPIC_API_KEY").unwrap_or_default();
    if api_key.trim().is_empty() {
        anyhow::bail!(
            "--exact-claude (CONTEXT_LOADER_EXACT_CLAUDE) needs ANTHROPIC_API_KEY in the environment"
        );
    }
    let counter = anthropic::AnthropicCounter::new(anthropic::AnthropicConfig {
        api_key,
        base_url: cli.anthropic_base_url.clone(),
        timeout: Duration::from_millis(cli.anthropic_timeout_ms),
    })?;
    Ok(state.with_anthropic(counter))
}

/// Run a server on a multi-threaded runtime; logs (and a fatal error) go to stderr.
fn serve(
    server: impl Future<Output = anyhow::Result<()>>,
    log_format: mcp_common::transport::LogFormat,
) -> ExitCode {
    // rmcp logs several lines per request at info: under load, megabytes a second.
    mcp_common::transport::init_logging_as("info,rmcp=warn", log_format);
    // Load the vocabularies (~100 ms) beside start-up rather than in it: `initialize`
    // is answered at once, and by the time the first count arrives they are ready.
    std::thread::spawn(|| {
        for tokenizer in [Tokenizer::O200kBase, Tokenizer::Cl100kBase] {
            tokenizer.preload();
        }
    });
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(server) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            ExitCode::FAILURE
        }
    }
}
