//! The tools as shell commands: same `run` functions as the MCP registry, output as
//! readable text or (`--json`) the exact structuredContent an MCP client would get.

use std::io::Read;
use std::path::PathBuf;

use clap::Args;
use context_budget::{ModelListing, TokenCount};
use mcp_common::{ErrorCode, ToolError};
use serde::Serialize;

use crate::tools::AppState;
use crate::tools::count_tokens::{self, CountTokensParams};
use crate::tools::list_models::{self, ListModelsParams};

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

/// Exit code for a tool error (bad input); clap uses 2 for usage errors.
const TOOL_ERROR_EXIT: u8 = 1;

pub fn count(state: &AppState, args: CountArgs) -> u8 {
    let result = read_text(state, &args).and_then(|text| {
        count_tokens::run(
            state,
            &CountTokensParams {
                text,
                model: args.model.clone(),
            },
        )
    });
    report(result, args.json, describe_count)
}

pub fn models(state: &AppState, args: ModelsArgs) -> u8 {
    let result = list_models::run(
        state,
        &ListModelsParams {
            filter: args.filter,
        },
    );
    report(result, args.json, describe_models)
}

fn report<T: Serialize>(
    result: Result<T, ToolError>,
    json: bool,
    describe: fn(&T) -> String,
) -> u8 {
    match result {
        Ok(value) if json => print_json(&value),
        Ok(value) => print_line(&describe(&value)),
        Err(error) => {
            if json {
                print_json(&error.to_json());
            } else {
                eprintln!("error: {error}\nsuggestion: {}", error.suggestion);
            }
            TOOL_ERROR_EXIT
        }
    }
}

fn print_json<T: Serialize>(value: &T) -> u8 {
    match serde_json::to_string_pretty(value) {
        Ok(text) => print_line(&text),
        Err(e) => {
            eprintln!("error: cannot serialize the result: {e}");
            TOOL_ERROR_EXIT
        }
    }
}

/// Print to stdout; a closed pipe (`| head`) ends the output quietly, not in a panic.
fn print_line(text: &str) -> u8 {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("error: cannot write to stdout: {e}");
            TOOL_ERROR_EXIT
        }
    }
}

/// Read the text from the argument, a file, or stdin — refusing oversize input
/// before reading it all into memory.
fn read_text(state: &AppState, args: &CountArgs) -> Result<String, ToolError> {
    let limit = state.counter.max_input_bytes();
    let (bytes, source) = match (&args.text, &args.file) {
        (Some(text), _) if text != "-" => return Ok(text.clone()),
        (_, Some(path)) => {
            let file =
                std::fs::File::open(path).map_err(|e| io_error(&path.display().to_string(), e))?;
            (
                read_limited(file, limit).map_err(|e| io_error(&path.display().to_string(), e))?,
                path.display().to_string(),
            )
        }
        _ => (
            read_limited(std::io::stdin().lock(), limit).map_err(|e| io_error("stdin", e))?,
            "stdin".to_string(),
        ),
    };
    if bytes.len() > limit {
        return Err(count_tokens::count_error(
            context_budget::CountError::InputTooLarge {
                bytes: bytes.len(),
                limit,
            },
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        ToolError::new(
            ErrorCode::InvalidInput,
            format!(
                "{source} is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
            "Token counts are defined for text; convert the file to UTF-8 first.",
        )
    })
}

/// Read at most `limit + 1` bytes: enough to know the input is too large.
fn read_limited(reader: impl Read, limit: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn io_error(source: &str, error: std::io::Error) -> ToolError {
    ToolError::new(
        ErrorCode::InvalidInput,
        format!("cannot read {source}: {error}"),
        "Check the path and its permissions, or pass the text as an argument.",
    )
}

fn describe_count(count: &TokenCount) -> String {
    let kind = if count.exact { "exact" } else { "estimate" };
    let mut line = format!(
        "{} tokens ({}, {}, {kind})",
        count.token_count, count.model, count.encoding
    );
    if let Some(window) = count.context_window {
        let share = count.token_count as f64 * 100.0 / window as f64;
        line.push_str(&format!(" = {share:.2}% of a {window}-token window"));
    }
    if let Some(cost) = count.estimated_input_cost_usd {
        line.push_str(&format!(", ~${cost:.6} as input"));
    }
    line
}

fn describe_models(listing: &ModelListing) -> String {
    let mut out = format!(
        "{:<20} {:<16} {:>5} {:>9} {:>8} {:>9} {:>9}\n",
        "model", "encoding", "exact", "window", "max out", "in $/1M", "out $/1M"
    );
    for m in &listing.models {
        out.push_str(&format!(
            "{:<20} {:<16} {:>5} {:>9} {:>8} {:>9.2} {:>9.2}\n",
            m.name,
            m.encoding,
            if m.exact { "yes" } else { "no" },
            m.context_window,
            m.max_output_tokens,
            m.input_usd_per_mtok,
            m.output_usd_per_mtok
        ));
    }
    if listing.models.is_empty() {
        out.push_str(&format!(
            "no model matches; families: {}\n",
            listing.families.join(", ")
        ));
    }
    out.push_str(&format!(
        "{} models; prices as of {}",
        listing.count, listing.as_of
    ));
    out
}
