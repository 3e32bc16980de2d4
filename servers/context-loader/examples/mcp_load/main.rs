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
//! p90_ms, p99_ms, max_ms) and the first errors to stderr. Exits 1 if any call failed.

mod http;
mod stats;
mod stdio;
mod texts;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// How many distinct texts the clients cycle through.
const DISTINCT_TEXTS: usize = 256;

struct Options {
    mode: String,
    url: Option<String>,
    clients: usize,
    seconds: f64,
    warmup: f64,
    calls: Option<usize>,
    warmup_calls: usize,
    corpus: Option<String>,
    text_bytes: usize,
    model: String,
    command: Vec<String>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        mode: args.first().cloned().ok_or("missing mode: http or stdio")?,
        url: None,
        clients: 16,
        seconds: 10.0,
        warmup: 2.0,
        calls: None,
        warmup_calls: 200,
        corpus: None,
        text_bytes: 1024,
        model: "gpt-4o".into(),
        command: Vec::new(),
    };
    let mut rest = args[1..].iter();
    while let Some(flag) = rest.next() {
        if flag == "--" {
            options.command = rest.cloned().collect();
            break;
        }
        let value = rest.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<f64>()
                .map_err(|_| format!("{flag}: not a number: {value}"))
        };
        match flag.as_str() {
            "--url" => options.url = Some(value.clone()),
            "--clients" => options.clients = number()? as usize,
            "--seconds" => options.seconds = number()?,
            "--warmup" => options.warmup = number()?,
            "--calls" => options.calls = Some(number()? as usize),
            "--warmup-calls" => options.warmup_calls = number()? as usize,
            "--corpus" => options.corpus = Some(value.clone()),
            "--text-bytes" => options.text_bytes = number()? as usize,
            "--model" => options.model = value.clone(),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    // reqwest is built with `rustls-no-provider` (the server picks ring for its
    // Anthropic client): every process that builds a reqwest client installs one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse(&args) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("mcp_load: {e}");
            return ExitCode::from(2);
        }
    };
    let corpus = match options.corpus.as_deref().map(std::fs::read_to_string) {
        Some(Err(e)) => {
            eprintln!("mcp_load: cannot read the corpus: {e}");
            return ExitCode::from(2);
        }
        Some(Ok(text)) => Some(text),
        None => None,
    };
    let samples = match texts::samples(
        corpus.as_deref(),
        options.text_bytes,
        DISTINCT_TEXTS,
        &options.model,
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
    let mut run = match options.mode.as_str() {
        "http" => {
            let Some(url) = options.url else {
                eprintln!("mcp_load: http needs --url");
                return ExitCode::from(2);
            };
            runtime.block_on(http::run(http::HttpLoad {
                url,
                clients: options.clients.max(1),
                warmup: Duration::from_secs_f64(options.warmup),
                duration: Duration::from_secs_f64(options.seconds),
                max_calls: options.calls,
                model: options.model,
                samples: Arc::new(samples),
            }))
        }
        "stdio" => runtime.block_on(stdio::run(stdio::StdioRoundTrips {
            command: options.command,
            warmup_calls: options.warmup_calls,
            calls: options.calls.unwrap_or(10_000),
            model: options.model,
            samples,
        })),
        other => {
            eprintln!("mcp_load: unknown mode {other} (http or stdio)");
            return ExitCode::from(2);
        }
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
