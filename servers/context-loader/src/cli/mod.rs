//! The tools as shell commands: a tool's subcommand is its parameters type; the
//! command reads what the flags name (a file, stdin), makes the same tool call the MCP
//! registry makes, and prints the result — the tool's rendering, or (`--json`)
//! exactly the structuredContent an MCP client would get. Exit codes: 0 success, 1 a
//! tool error (printed like the tool's), 2 a usage or configuration error.

pub mod args;

use std::process::ExitCode;
use std::sync::Arc;

use clap::{ArgMatches, FromArgMatches};
use serde::Serialize;

use crate::scan::TerminalScan;
use crate::service::Service;
use crate::tool::{Call, Register, Rendered, Tool};
use args::ToolCommand;

/// Exit code for a tool error (bad input); clap uses 2 for usage errors.
const TOOL_ERROR_EXIT: u8 = 1;

/// Run one tool command and print its result.
pub fn run(service: &Service, command: ToolCommand) -> ExitCode {
    let mut dispatch = Dispatch {
        service,
        command: &command,
        code: None,
    };
    crate::tools::register(&mut dispatch);
    // The parser only accepts the tools' own names.
    ExitCode::from(dispatch.code.unwrap_or(TOOL_ERROR_EXIT))
}

/// Finds the tool the command names and runs it.
struct Dispatch<'a> {
    service: &'a Service,
    command: &'a ToolCommand,
    code: Option<u8>,
}

impl Register for Dispatch<'_> {
    fn tool<T: Tool>(&mut self) {
        if T::COMMAND == self.command.name {
            self.code = Some(run_tool::<T>(self.service, &self.command.matches));
        }
    }
}

fn run_tool<T: Tool>(service: &Service, matches: &ArgMatches) -> u8 {
    let json = matches.get_flag("json");
    let params = T::Params::from_arg_matches(matches).unwrap_or_else(|e| e.exit());
    // One worker and the blocking pool: the tool runs as it does in the server, and
    // the exact counter has a runtime to send its requests on.
    let Some(runtime) = mcp_common::transport::runtime(Some(1)) else {
        return TOOL_ERROR_EXIT;
    };
    // A progress line on the terminal for long scans, cleared before the result.
    let progress = Arc::new(TerminalScan::new());
    let result = T::from_command_line(params, service).and_then(|params| {
        runtime.block_on(T::call(
            service,
            params,
            Call::command_line(progress.clone()),
        ))
    });
    progress.finish();
    match result {
        Ok(output) if json => print_json(&output),
        Ok(output) => print_rendered(T::render(&output)),
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

fn print_rendered(rendered: Rendered) -> u8 {
    if let Some(report) = &rendered.stderr {
        eprintln!("{report}");
    }
    match rendered.exact {
        true => print_text(&rendered.stdout),
        false => print_line(&rendered.stdout),
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
