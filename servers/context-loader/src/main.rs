//! `context-loader`: an MCP server (stdio or streamable HTTP) and CLI that tells an
//! agent what text costs in a model's context window before it loads it.

mod cli;
mod http;
mod registry;
mod scan;
mod stdio;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let state = AppState::new(
        TokenCounter::new(Arc::new(Catalog::builtin().clone()), cli.max_input_bytes),
        SpecStore::new(cli.specs_dir),
    );
    match cli.command {
        Command::Count(args) => ExitCode::from(cli::count(&state, args)),
        Command::Models(args) => ExitCode::from(cli::models(&state, args)),
        Command::SpecTokens(args) => ExitCode::from(cli::spec_tokens(&state, args)),
        Command::SpecBudget(args) => ExitCode::from(cli::spec_budget(&state, args)),
        Command::Stdio => serve(stdio::run(state), cli.log_format),
        Command::Http(args) => serve(http::run(state, args), cli.log_format),
    }
}

/// Run a server on a multi-threaded runtime; logs (and a fatal error) go to stderr.
fn serve(
    server: impl Future<Output = anyhow::Result<()>>,
    log_format: mcp_common::transport::LogFormat,
) -> ExitCode {
    mcp_common::transport::init_logging_as("info", log_format);
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
