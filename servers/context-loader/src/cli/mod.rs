//! The tools as shell commands: a tool's subcommand is its parameters type; the
//! command reads what the flags name (a file, stdin), makes the same tool call the MCP
//! registry makes, and prints the result — the tool's rendering, or (`--json`)
//! exactly the structuredContent an MCP client would get. Exit codes: 0 success, 1 a
//! tool error (printed like the tool's), 2 a usage or configuration error.

pub mod args;
pub mod file_cache;
pub mod report;

use std::process::ExitCode;
use std::sync::Arc;

use clap::{ArgMatches, FromArgMatches};
use serde::Serialize;

use crate::scan::TerminalScan;
use crate::service::Service;
use crate::tool::{Call, Register, Rendered, Tool};
use args::ToolCommand;
use file_cache::FileCache;

/// Exit code for a tool error (bad input); clap uses 2 for usage errors.
const TOOL_ERROR_EXIT: u8 = 1;
/// Exit code for a flag's bad value or an unreadable file it names, as clap's.
const USAGE_EXIT: u8 = 2;

/// Run one tool command and print its result.
pub fn run(service: &Service, command: ToolCommand, cache: Option<FileCache>) -> ExitCode {
    let mut dispatch = Dispatch {
        service,
        command: &command,
        cache: cache.as_ref(),
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
    cache: Option<&'a FileCache>,
    code: Option<u8>,
}

impl Register for Dispatch<'_> {
    fn tool<T: Tool>(&mut self) {
        if T::COMMAND == self.command.name {
            let cache = self.cache.filter(|_| T::MEASURES_FILES);
            if let Some(cache) = cache {
                cache.load(self.service.file_store());
            }
            self.code = Some(run_tool::<T>(self.service, &self.command.matches));
            if let Some(cache) = cache {
                cache.save(self.service.file_store());
            }
        }
    }
}

fn run_tool<T: Tool>(service: &Service, matches: &ArgMatches) -> u8 {
    let json = matches.get_flag("json");
    // `--html FILE` (the commands the MCP App's page draws): refused before any work
    // when the file is there and not a regular one.
    let html = matches
        .try_get_one::<std::path::PathBuf>(report::HTML_FLAG)
        .ok()
        .flatten();
    if let Some(path) = html
        && let Err(error) = report::check(path)
    {
        eprintln!("error: {}", message(&error));
        return USAGE_EXIT;
    }
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
            Call::command_line(progress.clone(), service.command_line_answer_limit()),
        ))
    });
    progress.finish();
    if let (Some(path), Ok(output)) = (html, &result) {
        match report::write(path, T::NAME, output) {
            Ok(bytes) => eprintln!(
                "wrote the HTML report to {} ({} KB); open it in a browser",
                message(&path.display().to_string()),
                bytes.div_ceil(1024)
            ),
            Err(error) => {
                eprintln!("error: {}", message(&error));
                return USAGE_EXIT;
            }
        }
    }
    match result {
        Ok(output) if json => {
            let code = print_json(&output).max(T::exit_code(&output));
            // The process ends after this command (as for the service in `main`): the
            // kernel takes the answer's memory back at once, where freeing it row by
            // row took ~1 ms of one core after `files` over 16k files.
            std::mem::forget(output);
            code
        }
        Ok(output) => {
            let exit_code = T::exit_code(&output);
            let warnings = T::warnings(&output);
            let code = print_rendered(T::render(output)).max(exit_code);
            print_warnings(warnings);
            code
        }
        Err(error) => {
            // An error about a flag's value or the file it names (`usage` names the
            // flag) is a usage error, as clap's are.
            let code = match error.details.contains_key("usage") {
                true => USAGE_EXIT,
                false => TOOL_ERROR_EXIT,
            };
            if json {
                print_json(&error.to_json());
            } else {
                let suggestion = in_cli_words(&error.suggestion, T::COMMAND);
                eprintln!(
                    "error: {}\nsuggestion: {}",
                    message(&error.to_string()),
                    message(&suggestion)
                );
            }
            code
        }
    }
}

/// A tool error's suggestion said the way a command-line user acts on it: tools are
/// commands (`list-models` -> `context-loader models`), arguments are flags
/// (`` `model` `` -> `` `--model` ``), and the server's flags are passed, not "started
/// with". (`--json` prints the error exactly as MCP clients get it.)
fn in_cli_words(suggestion: &str, command: &str) -> String {
    let mut text = suggestion
        .replace("Start the server with ", "Pass ")
        .replace("start the server with ", "pass ");
    for (name, command) in crate::tools::commands() {
        text = replace_word(&text, name, &format!("context-loader {command}"));
    }
    text = text
        .replace("Call context-loader", "Run context-loader")
        .replace("call context-loader", "run context-loader");
    let mut args = Args(Vec::new());
    crate::tools::register(&mut args);
    let params = args
        .0
        .into_iter()
        .find(|(c, _)| *c == command)
        .map(|(_, a)| a);
    for arg in params.unwrap_or_default() {
        let id = arg.get_id().as_str().to_string();
        let flag = match arg.get_long() {
            Some(long) => format!("--{long}"),
            None => format!(
                "<{}>",
                arg.get_value_names()
                    .and_then(|names| names.first())
                    .map_or(id.to_uppercase(), |name| name.to_string())
            ),
        };
        for name in [id.clone(), camel_case(&id)] {
            text = text.replace(&format!("`{name}`"), &format!("`{flag}`"));
            if name.contains(char::is_uppercase) {
                text = replace_word(&text, &name, &flag);
            }
        }
    }
    text
}

/// Each tool command's arguments.
struct Args(Vec<(&'static str, Vec<clap::Arg>)>);

impl Register for Args {
    fn tool<T: Tool>(&mut self) {
        let command = <T::Params as clap::Args>::augment_args(clap::Command::new(T::COMMAND));
        self.0
            .push((T::COMMAND, command.get_arguments().cloned().collect()));
    }
}

/// `spec_path` -> `specPath`.
fn camel_case(id: &str) -> String {
    let mut parts = id.split('_');
    let first = parts.next().unwrap_or_default().to_string();
    parts.fold(first, |mut out, part| {
        let mut chars = part.chars();
        if let Some(c) = chars.next() {
            out.extend(c.to_uppercase());
            out.push_str(chars.as_str());
        }
        out
    })
}

/// `text` with `word` replaced where it stands alone (not inside a longer name).
fn replace_word(text: &str, word: &str, by: &str) -> String {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().last().or_else(|| out.chars().last());
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(is_name) || after.is_some_and(is_name) {
            out.push_str(word);
        } else {
            out.push_str(by);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// A tool's warnings on stderr, after its output, as many as an MCP client's log
/// gets (`--json` carries them all in the answer instead).
fn print_warnings(warnings: Vec<String>) {
    for warning in crate::client_log::capped(warnings, "(see --json)") {
        eprintln!("warning: {}", message(&warning));
    }
}

/// One message for the terminal: escaped, capped, one line.
fn message(text: &str) -> std::borrow::Cow<'_, str> {
    crate::outside::line(text, crate::outside::MAX_MESSAGE_CHARS)
}

fn print_rendered(rendered: Rendered) -> u8 {
    if let Some(report) = &rendered.stderr {
        eprintln!("{}", crate::outside::lines(report));
    }
    let stdout = match rendered.product {
        true => std::borrow::Cow::Borrowed(rendered.stdout.as_str()),
        false => crate::outside::lines(&rendered.stdout),
    };
    match rendered.exact {
        true => print_text(&stdout),
        false => print_line(&stdout),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_name_commands_and_flags() {
        assert_eq!(
            in_cli_words(
                "Omit `model` to use the default; list-models shows windows.",
                "count"
            ),
            "Omit `--model` to use the default; context-loader models shows windows."
        );
        assert_eq!(
            in_cli_words(
                "No spec is close; call spec-tokens without specPath to list every spec.",
                "spec-tokens"
            ),
            "No spec is close; run context-loader spec-tokens without <SPEC> to list every spec."
        );
        assert_eq!(
            in_cli_words("Start the server with --root DIR.", "files"),
            "Pass --root DIR."
        );
        // Inside a longer name, nothing changes.
        assert_eq!(
            replace_word("my-list-models-x", "list-models", "X"),
            "my-list-models-x"
        );
    }
}
