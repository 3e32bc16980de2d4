//! The load generator behind `cargo xtask load` and the MCP rows of `cargo xtask bench`:
//! real MCP clients calling `count-tokens` on ~1 KB texts, every reply checked against
//! the engine's own count. Works against any server with that tool (ours, or the
//! TypeScript peer under bench/peers/), so both are measured by the same clients.
//!
//! ```text
//! mcp_load http --url URL [--clients 16] [--seconds 10] [--warmup 2] [--calls N]
//! mcp_load stdio [--calls 10000] [--warmup-calls 200] -- SERVER COMMAND...
//! common:  [--corpus FILE] [--text-bytes 1024] [--model gpt-4o]
//! ```
//!
//! Prints one `key=value` line to stdout (calls, errors, seconds, calls_per_s, p50_ms,
//! p90_ms, p99_ms, max_ms) and the first errors to stderr. Exits 1 if any call failed,
//! 2 on a usage error (an unknown flag, too: `--help` lists them).

mod http;
mod stats;
mod stdio;
mod texts;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

/// How many distinct texts the clients cycle through.
const DISTINCT_TEXTS: usize = 256;

/// Real MCP clients calling `count-tokens`, every reply checked against the engine.
#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand)]
enum Mode {
    /// Concurrent clients over streamable HTTP, for a fixed time.
    Http {
        /// The server's MCP endpoint.
        #[arg(long)]
        url: String,
        /// Concurrent clients, each on its own keep-alive connection (0 counts as 1).
        #[arg(long, default_value_t = 16)]
        clients: usize,
        /// Seconds measured, after the warm-up.
        #[arg(long, default_value_t = 10.0, value_parser = seconds)]
        seconds: f64,
        /// Seconds of calls before measuring (their errors still count).
        #[arg(long, default_value_t = 2.0, value_parser = seconds)]
        warmup: f64,
        /// Stop the measured window after this many calls in total, if sooner.
        #[arg(long)]
        calls: Option<usize>,
        #[command(flatten)]
        common: Common,
    },
    /// Sequential round trips over stdio to a server this spawns.
    Stdio {
        /// Measured calls.
        #[arg(long, default_value_t = 10_000)]
        calls: usize,
        /// Calls before measuring (their errors still count).
        #[arg(long, default_value_t = 200)]
        warmup_calls: usize,
        #[command(flatten)]
        common: Common,
        /// The server command line, after `--` (e.g. `-- context-loader stdio`).
        #[arg(last = true, required = true, value_name = "SERVER COMMAND")]
        command: Vec<String>,
    },
}

/// What the clients send (both modes).
#[derive(Args)]
struct Common {
    /// Text to cut into windows [default: this repository's README, docs/*.md and ARCHITECTURE].
    #[arg(long, value_name = "FILE")]
    corpus: Option<PathBuf>,
    /// Size of each text sent, in bytes.
    #[arg(long, default_value_t = 1024)]
    text_bytes: usize,
    /// The model every call names (its tokenizer gives the expected counts).
    #[arg(long, value_name = "NAME", default_value = "gpt-4o")]
    model: String,
}

/// A duration in seconds: finite and not negative (`Duration` panics otherwise).
fn seconds(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(s),
        _ => Err(format!("not a number of seconds: {value}")),
    }
}

fn main() -> ExitCode {
    // reqwest is built with `rustls-no-provider` (the server picks ring for its
    // Anthropic client): every process that builds a reqwest client installs one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mode = Cli::parse().mode;
    let common = match &mode {
        Mode::Http { common, .. } | Mode::Stdio { common, .. } => common,
    };
    let corpus = match common.corpus.as_deref().map(std::fs::read_to_string) {
        Some(Err(e)) => {
            eprintln!("mcp_load: cannot read the corpus: {e}");
            return ExitCode::from(2);
        }
        Some(Ok(text)) => Some(text),
        None => None,
    };
    let samples = match texts::samples(
        corpus.as_deref(),
        common.text_bytes,
        DISTINCT_TEXTS,
        &common.model,
    ) {
        Ok(samples) => samples,
        Err(e) => {
            eprintln!("mcp_load: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp_load: cannot start tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut run = match mode {
        Mode::Http {
            url,
            clients,
            seconds,
            warmup,
            calls,
            common,
        } => runtime.block_on(http::run(http::HttpLoad {
            url,
            clients: clients.max(1),
            warmup: Duration::from_secs_f64(warmup),
            duration: Duration::from_secs_f64(seconds),
            max_calls: calls,
            model: common.model,
            samples: Arc::new(samples),
        })),
        Mode::Stdio {
            calls,
            warmup_calls,
            common,
            command,
        } => runtime.block_on(stdio::run(stdio::StdioRoundTrips {
            command,
            warmup_calls,
            calls,
            model: common.model,
            samples,
        })),
    };
    println!("{}", run.summary_line());
    for sample in &run.error_samples {
        eprintln!("mcp_load: error: {sample}");
    }
    if run.errors > 0 || run.calls == 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
