//! The tools as shell commands: same `run` functions as the MCP registry, output as
//! readable text or (`--json`) the exact structuredContent an MCP client would get.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;
use context_budget::{
    AssembledContext, FittedMessages, Message, ModelListing, Section, Strategy, TokenCount,
};
use mcp_common::{ErrorCode, ToolError};
use serde::Serialize;
use serde::de::DeserializeOwned;

use context_budget::spec::{SortOrder, SpecBudget, SpecListing, SpecReport, SpecTokens};

use crate::scan::TerminalScan;
use crate::tools::AppState;
use crate::tools::assemble_context::{self, AssembleContextParams};
use crate::tools::count_tokens::{self, CountTokensParams};
use crate::tools::fit_messages::{self, FitMessagesParams};
use crate::tools::list_models::{self, ListModelsParams};
use crate::tools::spec_budget::{self, SpecBudgetParams};
use crate::tools::spec_tokens::{self, SpecTokensParams};

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
    #[arg(long, value_enum)]
    pub sort: Option<SortArg>,
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

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SortArg {
    Tokens,
    Name,
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
    #[arg(long, value_parser = ["last", "first"])]
    pub strategy: Option<String>,
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
    /// Print the JSON result (errors too); otherwise the text goes to stdout and a
    /// per-section summary to stderr.
    #[arg(long)]
    pub json: bool,
}

/// Exit code for a tool error (bad input); clap uses 2 for usage errors.
const TOOL_ERROR_EXIT: u8 = 1;

pub fn count(state: &AppState, args: CountArgs) -> u8 {
    let result = read_text(state, &args).and_then(|text| {
        let params = CountTokensParams {
            text,
            model: args.model.clone(),
        };
        let local = count_tokens::run(state, &params)?;
        if state.anthropic.is_none() {
            return Ok(local);
        }
        block_on(count_tokens::run_exact(state, &params, local))
    });
    report(result, args.json, describe_count)
}

pub fn fit_messages(state: &AppState, args: FitMessagesArgs) -> u8 {
    let result = read_source(state, args.file.as_deref())
        .and_then(|json| parse_list::<Message>(&json, "messages"))
        .and_then(|messages| {
            let params = FitMessagesParams {
                messages,
                model: args.model.clone(),
                margin: args.margin,
                reserve_output_tokens: args.reserve_output_tokens,
                strategy: args.strategy.as_deref().map(|s| match s {
                    "first" => Strategy::First,
                    _ => Strategy::Last,
                }),
                keep_system: Some(!args.no_keep_system),
            };
            block_on(async { fit_messages::run(state, params).await }).and_then(|r| r)
        });
    if let Ok(FittedMessages {
        warning: Some(warning),
        ..
    }) = &result
    {
        eprintln!("warning: {warning}");
    }
    report(result, args.json, describe_fit)
}

pub fn assemble(state: &AppState, args: AssembleArgs) -> u8 {
    let result = read_source(state, args.file.as_deref())
        .and_then(|json| parse_list::<Section>(&json, "sections"))
        .and_then(|sections| {
            assemble_context::run(
                state,
                &AssembleContextParams {
                    sections,
                    budget: args.budget,
                    model: args.model.clone(),
                },
            )
        });
    if let (Ok(assembled), false) = (&result, args.json) {
        eprintln!("{}", describe_assembly(assembled));
        return print_line(&assembled.text);
    }
    report(result, args.json, |a: &AssembledContext| a.text.clone())
}

/// Run async tool code from the synchronous CLI on a one-thread runtime.
fn block_on<T>(work: impl Future<Output = T>) -> Result<T, ToolError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            ToolError::new(
                ErrorCode::InternalError,
                format!("cannot start the async runtime: {e}"),
                "Retry; if it fails again, report it.",
            )
        })?;
    Ok(runtime.block_on(work))
}

/// A JSON array of `T`, or an object holding it under `key`.
fn parse_list<T: DeserializeOwned>(json: &str, key: &str) -> Result<Vec<T>, ToolError> {
    let invalid = |detail: String| {
        ToolError::new(
            ErrorCode::InvalidInput,
            format!("the input is not a JSON list of {key}: {detail}"),
            format!("Send a JSON array of {key}, or an object {{\"{key}\": [...]}}."),
        )
    };
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| invalid(e.to_string()))?;
    let list = match value {
        serde_json::Value::Object(mut object) => object
            .remove(key)
            .ok_or_else(|| invalid(format!("no `{key}` key")))?,
        other => other,
    };
    serde_json::from_value(list).map_err(|e| invalid(e.to_string()))
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

pub fn spec_tokens(state: &AppState, args: SpecTokensArgs) -> u8 {
    let params = SpecTokensParams {
        spec_path: args.spec,
        include_sub_specs: args.include_sub_specs,
        detailed: args.detailed,
        model: args.model,
        budget: args.budget,
        sort: args.sort.map(|s| match s {
            SortArg::Tokens => SortOrder::Tokens,
            SortArg::Name => SortOrder::Name,
        }),
        max_tokens: args.max_tokens,
        min_tokens: args.min_tokens,
        limit: args.limit,
    };
    let scan = TerminalScan::new();
    let result = spec_tokens::run(state, &params, &scan);
    scan.finish();
    report(result, args.json, describe_spec_tokens)
}

pub fn spec_budget(state: &AppState, args: SpecBudgetArgs) -> u8 {
    let params = SpecBudgetParams {
        specs: args.specs,
        budget: args.budget,
        model: args.model,
    };
    let scan = TerminalScan::new();
    let result = spec_budget::run(state, &params, &scan);
    scan.finish();
    report(result, args.json, describe_spec_budget)
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

/// Read the text from the argument, a file, or stdin.
fn read_text(state: &AppState, args: &CountArgs) -> Result<String, ToolError> {
    match &args.text {
        Some(text) if text != "-" => Ok(text.clone()),
        _ => read_source(state, args.file.as_deref()),
    }
}

/// Read a file (or stdin for none or `-`) — refusing oversize input before reading
/// it all into memory.
fn read_source(state: &AppState, file: Option<&Path>) -> Result<String, ToolError> {
    let limit = state.counter.max_input_bytes();
    let file = file.filter(|path| path.as_os_str() != "-");
    let (bytes, source) = match file {
        Some(path) => {
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

fn describe_fit(fit: &FittedMessages) -> String {
    let kind = if fit.exact { "exact" } else { "estimate" };
    let total = fit.kept_indices.len() + fit.dropped_count;
    format!(
        "kept {} of {total} messages {}: {} of {} budget tokens ({}, window {}, {kind}), ~${:.6} as input",
        fit.kept_indices.len(),
        index_ranges(&fit.kept_indices),
        fit.total_tokens,
        fit.budget,
        fit.model,
        fit.context_window,
        fit.estimated_input_cost_usd
    )
}

/// `[0, 3-7, 9]`: kept indices as runs.
fn index_ranges(indices: &[usize]) -> String {
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let start = indices[i];
        while i + 1 < indices.len() && indices[i + 1] == indices[i] + 1 {
            i += 1;
        }
        runs.push(if indices[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", indices[i])
        });
        i += 1;
    }
    format!("[{}]", runs.join(", "))
}

fn describe_assembly(assembled: &AssembledContext) -> String {
    let mut out = format!(
        "{:<20} {:>8} {:>8} {:>9} {:>6}\n",
        "section", "tokens", "budget", "truncated", "use"
    );
    for s in &assembled.sections {
        out.push_str(&format!(
            "{:<20} {:>8} {:>8} {:>9} {:>5.0}%\n",
            s.name,
            s.tokens,
            s.budget,
            if s.truncated { "yes" } else { "no" },
            s.utilization * 100.0
        ));
    }
    out.push_str(&format!(
        "total {} of {} tokens ({}, {})",
        assembled.total_tokens,
        assembled.budget,
        assembled.model,
        if assembled.exact { "exact" } else { "estimate" }
    ));
    out
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

fn describe_spec_tokens(result: &SpecTokens) -> String {
    match result {
        SpecTokens::Spec(report) => describe_spec(report),
        SpecTokens::Listing(listing) => describe_listing(listing),
    }
}

fn describe_spec(r: &SpecReport) -> String {
    let mut out = r.spec.clone();
    if let Some(title) = &r.title {
        out.push_str(&format!(" — {title}"));
    }
    if let Some(status) = &r.status {
        out.push_str(&format!(" [{status}]"));
    }
    out.push('\n');
    for file in &r.files {
        out.push_str(&format!(
            "  {:<44} {:>8} tokens {:>6} lines\n",
            file.path, file.tokens, file.lines
        ));
    }
    for file in &r.excluded_sub_specs {
        out.push_str(&format!(
            "  {:<44} {:>8} tokens (not counted; --include-sub-specs)\n",
            file.path, file.tokens
        ));
    }
    let kind = if r.model.exact { "exact" } else { "estimate" };
    out.push_str(&format!(
        "  total {} tokens ({}, {}, {kind})\n",
        r.total, r.model.model, r.model.encoding
    ));
    if let Some(b) = &r.breakdown {
        out.push_str(&format!(
            "  breakdown: prose {} · code {} · tables {} · frontmatter {}\n",
            b.prose, b.code, b.tables, b.frontmatter
        ));
    }
    if let Some(p) = &r.performance {
        out.push_str(&format!(
            "  performance: {}, cost x{:.1}, effectiveness {}%\n",
            wire_name(&p.level),
            p.cost_multiplier,
            p.effectiveness
        ));
    }
    if let Some(b) = &r.budget {
        let verdict = if b.fits {
            "fits".to_string()
        } else {
            format!("over by {}", b.over_by)
        };
        out.push_str(&format!(
            "  budget {}: {verdict}. {}\n",
            b.budget, b.suggestion
        ));
    }
    if let Some(rec) = &r.recommendation {
        out.push_str(&format!("  recommendation: {rec}\n"));
    }
    for note in &r.notes {
        out.push_str(&format!("  note: {note}\n"));
    }
    out.trim_end().to_string()
}

fn describe_listing(l: &SpecListing) -> String {
    let mut out = format!("{:>8} {:>5}  {:<10} spec\n", "tokens", "files", "level");
    for row in &l.specs {
        let level = wire_name(&row.level);
        out.push_str(&format!(
            "{:>8} {:>5}  {:<10} {}",
            row.total, row.files, level, row.spec
        ));
        if let Some(title) = &row.title {
            out.push_str(&format!(" — {title}"));
        }
        if let Some(error) = &row.error {
            out.push_str(&format!("  [error: {error}]"));
        }
        out.push('\n');
    }
    let s = &l.summary;
    out.push_str(&format!(
        "{} specs, {} tokens, average {}",
        s.specs, s.total_tokens, s.average_tokens
    ));
    if let Some(largest) = &s.largest {
        out.push_str(&format!(", largest {} ({})", largest.spec, largest.total));
    }
    if s.with_errors > 0 {
        out.push_str(&format!(", {} with errors", s.with_errors));
    }
    if l.truncated {
        out.push_str(&format!("; showing {} (--limit 0 for all)", l.shown));
    }
    out.push_str(&format!(" [{}, {}]", l.model.model, l.model.encoding));
    out
}

fn describe_spec_budget(b: &SpecBudget) -> String {
    let mut out = format!("{:>8} {:>8}  spec\n", "readme", "full");
    for spec in &b.specs {
        out.push_str(&format!(
            "{:>8} {:>8}  {}\n",
            spec.readme_tokens, spec.full_tokens, spec.spec
        ));
    }
    out.push_str(&format!(
        "budget {}: all with sub-specs {} ({}), READMEs only {} ({})\n",
        b.budget,
        b.total_full,
        if b.all_fit { "fits" } else { "over" },
        b.total_readme_only,
        if b.all_fit_readme_only {
            "fits"
        } else {
            "over"
        }
    ));
    out.push_str(&format!(
        "plan: {} tokens, {} left\n",
        b.plan.tokens, b.plan.remaining
    ));
    for planned in &b.plan.specs {
        out.push_str(&format!(
            "  {:<12} {:>8}  {}\n",
            wire_name(&planned.load),
            planned.tokens,
            planned.spec
        ));
    }
    out.push_str(&b.suggestion);
    for note in &b.notes {
        out.push_str(&format!("\nnote: {note}"));
    }
    out
}

/// How an enum value is spelled in the JSON output (`readme_only`, `good`).
fn wire_name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
