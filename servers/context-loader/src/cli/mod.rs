//! The tools as shell commands: read the input, build the tool's parameters, make
//! the same [`Service`] call the MCP registry makes, and print the result — a
//! readable rendering, or (`--json`) exactly the structuredContent an MCP client
//! would get. Exit codes: 0 success, 1 a tool error (printed like the tool's), 2 a
//! usage or configuration error.

pub mod args;
mod input;
pub mod render;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use context_budget::files::roots::Roots;
use context_budget::spec::SpecStore;
use context_budget::{Catalog, FittedMessages, InputLimits, Message, Section, TokenCounter};
use mcp_common::ToolError;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::anthropic::{AnthropicConfig, AnthropicCounter};
use crate::scan::TerminalScan;
use crate::service::{Service, SharedScan};
use crate::tools::assemble_context::AssembleContextParams;
use crate::tools::count_tokens::CountTokensParams;
use crate::tools::file_tokens::FileTokensParams;
use crate::tools::fit_messages::FitMessagesParams;
use crate::tools::list_models::ListModelsParams;
use crate::tools::load_files::LoadFilesParams;
use crate::tools::spec_budget::SpecBudgetParams;
use crate::tools::spec_tokens::SpecTokensParams;
use args::{FileSelectionArgs, GlobalArgs, ToolCommand};

/// Exit code for a tool error (bad input); clap uses 2 for usage errors.
const TOOL_ERROR_EXIT: u8 = 1;

/// The service the global flags describe: the catalog (built-in, or extended by
/// --models-file), the specs root, the file roots (the working directory when none is
/// given and `cwd_by_default`: stdio and the CLI, where the server runs where its
/// user works; never over HTTP), and the optional exact Claude counter.
pub fn service(global: &GlobalArgs, cwd_by_default: bool) -> anyhow::Result<Service> {
    let catalog = match &global.models_file {
        None => Catalog::builtin().clone(),
        Some(path) => {
            let json = std::fs::read_to_string(path).map_err(|e| {
                anyhow::anyhow!("cannot read --models-file {}: {e}", path.display())
            })?;
            // A `tokenizer_file` in it is relative to the file's own folder.
            let folder = path.parent().unwrap_or(std::path::Path::new("."));
            Catalog::builtin()
                .with_models_file(&json, &path.display().to_string(), folder)
                .map_err(|e| anyhow::anyhow!("invalid --models-file: {e}"))?
        }
    };
    let mut root_dirs = global.roots.clone();
    if root_dirs.is_empty() && cwd_by_default {
        root_dirs.push(std::env::current_dir().context("cannot read the working directory")?);
    }
    let roots = match root_dirs.is_empty() {
        true => None,
        false => Some(Roots::new(&root_dirs).map_err(|e| anyhow::anyhow!("invalid --root: {e}"))?),
    };
    let mut service = Service::new(
        TokenCounter::with_limits(
            Arc::new(catalog),
            InputLimits {
                max_input_bytes: global.max_input_bytes,
                max_name_bytes: global.max_name_bytes,
                max_messages: global.max_messages,
                max_sections: global.max_sections,
            },
        ),
        SpecStore::new(&global.specs_dir),
    )
    .with_files(roots, global.file_limits());
    if global.no_warm_up {
        service = service.without_warm_up();
    }
    if !global.exact_claude {
        return Ok(service);
    }
    let api_key = std::env::var("ANTHROPIC_API_KEY").unwrap_or_default();
    if api_key.trim().is_empty() {
        anyhow::bail!(
            "--exact-claude (CONTEXT_LOADER_EXACT_CLAUDE) needs ANTHROPIC_API_KEY in the environment"
        );
    }
    let counter = AnthropicCounter::new(AnthropicConfig {
        api_key,
        base_url: global.anthropic_base_url.clone(),
        timeout: Duration::from_millis(global.anthropic_timeout_ms),
    })?;
    Ok(service.with_exact(Arc::new(counter)))
}

/// A multi-threaded runtime (`workers` async threads, default one per core); on
/// failure the error is printed and the process should exit with failure.
pub fn runtime(workers: Option<usize>) -> Option<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(workers) = workers {
        builder.worker_threads(workers);
    }
    builder
        .enable_all()
        .build()
        .inspect_err(|e| eprintln!("error: cannot start the async runtime: {e}"))
        .ok()
}

/// Run one tool command and print its result.
pub fn run(service: &Service, command: ToolCommand) -> ExitCode {
    // One worker and the blocking pool: the service's calls run as they do in the
    // server, and the exact counter has a runtime to send its requests on.
    let Some(runtime) = runtime(Some(1)) else {
        return ExitCode::FAILURE;
    };
    let counter = service.counter();
    let code = match command {
        ToolCommand::Count(args) => {
            let result =
                input::text(counter, args.text.as_deref(), args.file.as_deref()).and_then(|text| {
                    let params = CountTokensParams {
                        text,
                        model: args.model,
                    };
                    runtime.block_on(service.count_tokens(params, CancellationToken::new()))
                });
            report(result, args.json, render::count)
        }
        ToolCommand::Models(args) => {
            let params = ListModelsParams {
                filter: args.filter,
            };
            report(
                runtime.block_on(service.list_models(params)),
                args.json,
                render::models,
            )
        }
        ToolCommand::Files(args) => {
            let FileSelectionArgs {
                paths,
                include,
                exclude,
                hidden,
                model,
            } = args.selection;
            let params = FileTokensParams {
                paths,
                model,
                include,
                exclude,
                hidden,
                limit: args.limit,
                sort: args.sort,
            };
            let result =
                with_progress(|scan| runtime.block_on(service.file_tokens(params, None, scan)));
            report(result, args.json, render::file_tokens)
        }
        ToolCommand::Load(args) => {
            let FileSelectionArgs {
                paths,
                include,
                exclude,
                hidden,
                model,
            } = args.selection;
            let params = LoadFilesParams {
                paths,
                model,
                budget: args.budget,
                order: args.order,
                format: args.format,
                max_file_tokens: args.max_file_tokens,
                include,
                exclude,
                hidden,
            };
            let result =
                with_progress(|scan| runtime.block_on(service.load_files(params, None, scan)));
            match result {
                // The packed text is the output; the report goes beside it, on stderr.
                Ok(loaded) if !args.json => {
                    eprintln!("{}", render::loaded_files(&loaded));
                    print_text(&loaded.text)
                }
                result => report(result, args.json, |l| l.text.clone()),
            }
        }
        ToolCommand::SpecTokens(args) => {
            let params = SpecTokensParams {
                spec_path: args.spec,
                include_sub_specs: args.include_sub_specs,
                detailed: args.detailed,
                model: args.model,
                budget: args.budget,
                sort: args.sort,
                max_tokens: args.max_tokens,
                min_tokens: args.min_tokens,
                limit: args.limit,
            };
            let result = with_progress(|scan| runtime.block_on(service.spec_tokens(params, scan)));
            report(result, args.json, render::spec_tokens)
        }
        ToolCommand::SpecBudget(args) => {
            let params = SpecBudgetParams {
                specs: args.specs,
                budget: args.budget,
                model: args.model,
            };
            let result = with_progress(|scan| runtime.block_on(service.spec_budget(params, scan)));
            report(result, args.json, render::spec_budget)
        }
        ToolCommand::FitMessages(args) => {
            let result = input::source(counter, args.file.as_deref())
                .and_then(|json| input::list::<Message>(&json, "messages"))
                .and_then(|messages| {
                    let params = FitMessagesParams {
                        messages,
                        model: args.model,
                        margin: args.margin,
                        reserve_output_tokens: args.reserve_output_tokens,
                        strategy: args.strategy,
                        keep_system: Some(!args.no_keep_system),
                    };
                    runtime.block_on(service.fit_messages(params, CancellationToken::new()))
                });
            if let Ok(FittedMessages {
                warning: Some(warning),
                ..
            }) = &result
            {
                eprintln!("warning: {warning}");
            }
            report(result, args.json, render::fit)
        }
        ToolCommand::Assemble(args) => {
            let result = input::source(counter, args.file.as_deref())
                .and_then(|json| input::list::<Section>(&json, "sections"))
                .and_then(|sections| {
                    let params = AssembleContextParams {
                        sections,
                        budget: args.budget,
                        model: args.model,
                        preset: args.preset,
                    };
                    runtime.block_on(service.assemble_context(params, CancellationToken::new()))
                });
            match result {
                // The text is the output; the summary goes beside it, on stderr.
                Ok(assembled) if !args.json => {
                    eprintln!("{}", render::assembly(&assembled));
                    print_line(&assembled.text)
                }
                result => report(result, args.json, |a| a.text.clone()),
            }
        }
    };
    ExitCode::from(code)
}

/// Run a spec scan with a progress line on the terminal, cleared before the result.
fn with_progress<T>(scan: impl FnOnce(SharedScan) -> T) -> T {
    let progress = Arc::new(TerminalScan::new());
    let result = scan(progress.clone());
    progress.finish();
    result
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

/// Print `text` to stdout exactly (no newline added: the packed text is the output).
fn print_text(text: &str) -> u8 {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("error: cannot write to stdout: {e}");
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
