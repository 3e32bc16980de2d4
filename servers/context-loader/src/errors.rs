//! The one mapping from the engine's typed errors to tool errors: the code an agent
//! branches on, a message with the numbers, and a suggestion that says what to send
//! instead. A new engine error gets its code and suggestion here, once, for every
//! tool and the CLI.

use context_budget::files::FilesError;
use context_budget::limits::LimitError;
use context_budget::spec::{Closeness, SpecError};
use context_budget::tool_defs::McpTokensError;
use context_budget::{
    AnswerLimit, AnswerSize, AssembleError, CountError, DEFAULT_MODEL, FitError, HIGHEST_ESTIMATE,
};
use mcp_common::{ErrorCode, ToolError};

/// An engine error that has a tool-error form.
pub trait IntoToolError {
    fn into_tool_error(self) -> ToolError;
}

/// For `map_err`: `result.map_err(tool_error)?`.
pub fn tool_error(error: impl IntoToolError) -> ToolError {
    error.into_tool_error()
}

impl IntoToolError for CountError {
    fn into_tool_error(self) -> ToolError {
        match self {
            CountError::UnsupportedModel {
                requested,
                did_you_mean,
            } => {
                let suggestion = match did_you_mean.first() {
                    Some(closest) => format!(
                        "Did you mean `{closest}`? Omit `model` to use the default \
                         `{DEFAULT_MODEL}`; list-models lists every model (filter by a \
                         prefix, e.g. `gpt` or `claude`)."
                    ),
                    None => format!(
                        "Omit `model` to use the default `{DEFAULT_MODEL}`; list-models lists \
                         every model (filter by a prefix, e.g. `gpt` or `claude`)."
                    ),
                };
                ToolError::new(
                    ErrorCode::UnsupportedModel,
                    format!("model `{requested}` is not supported"),
                    suggestion,
                )
                .with_detail("requested_model", requested)
                .with_detail("did_you_mean", did_you_mean)
            }
            CountError::EmptyModel => ToolError::new(
                ErrorCode::InvalidInput,
                "`model` is empty",
                format!(
                    "Omit `model` to use the default `{DEFAULT_MODEL}`, or name one (list-models \
                     lists them, e.g. `gpt-4o` or `claude-sonnet-4-5`)."
                ),
            )
            .with_detail("field", "model"),
            CountError::Limit(limit) => limit.into_tool_error(),
            CountError::Cancelled => cancelled(),
        }
    }
}

/// The answer to a request that was cancelled (or timed out) while it ran.
/// `tool`'s answer is `size`, over the server's answer limit: the last-line check
/// every answer passes (tools are designed to stay under it by themselves; this
/// says which request to make instead of sending an answer clients would cut).
pub fn answer_too_large(tool: &str, size: AnswerSize, limit: AnswerLimit) -> ToolError {
    let measured = if size.tokens == 0 {
        format!("{} characters, {} bytes", size.chars, size.bytes)
    } else {
        format!(
            "{} characters, {} bytes, {} tokens",
            size.chars, size.bytes, size.tokens
        )
    };
    let mut error = ToolError::new(
        ErrorCode::AnswerTooLarge,
        format!(
            "the {tool} answer is {measured}, over the answer limit for this client, {limit}; \
             tokens are counted by the {} estimate",
            HIGHEST_ESTIMATE.name()
        ),
        format!(
            "{} Each client passes answers whole only up to its own size (the README's \
             client table); the server's operator sets the limit for every client with \
             --max-answer-tokens / --max-answer-chars / --max-answer-bytes.",
            match tool {
                "fit-messages" => "Pass a smaller `budget`: the answer holds every message kept.",
                "assemble-context" =>
                    "Pass a smaller `budget`: the answer holds the assembled text.",
                "spec-budget" => "Ask for fewer `specs` in one call: the plan lists each of them.",
                _ =>
                    "Ask for less: a smaller `limit` or `budget`, a narrower `paths` or `filter`, \
                      or the next page with `offset`.",
            }
        ),
    )
    .with_detail("answer_chars", size.chars)
    .with_detail("answer_bytes", size.bytes)
    .with_detail("max_answer_tokens", limit.tokens)
    .with_detail("answer_limit", limit.to_string());
    // A unit this client does not bound (`usize::MAX`) is left out.
    if limit.chars < usize::MAX {
        error = error.with_detail("max_answer_chars", limit.chars);
    }
    if limit.bytes < usize::MAX {
        error = error.with_detail("max_answer_bytes", limit.bytes);
    }
    error
}

fn cancelled() -> ToolError {
    ToolError::new(
        ErrorCode::Cancelled,
        "the request was cancelled",
        "Nothing to do: the request was cancelled or timed out. Repeat it if the answer is still wanted.",
    )
}

/// The flag that sets the limit on `field`.
fn limit_flag(field: &str) -> &'static str {
    match field {
        "messages" => "--max-messages",
        "sections" => "--max-sections",
        "tools" => "--max-tool-definitions",
        _ => "--max-name-bytes",
    }
}

/// Every input bound a call can cross, from whichever tool crossed it.
impl IntoToolError for LimitError {
    fn into_tool_error(self) -> ToolError {
        let message = self.to_string();
        match self {
            LimitError::TextTooLarge { bytes, limit } => ToolError::new(
                ErrorCode::InputTooLarge,
                format!("text is {bytes} bytes; this server counts at most {limit} bytes per call"),
                "Split the text and count the parts separately (counts add up across \
                 paragraph boundaries to within a token or two), or raise --max-input-bytes.",
            )
            .with_detail("input_bytes", bytes)
            .with_detail("limit_bytes", limit),
            LimitError::TextOverLimit { limit } => ToolError::new(
                ErrorCode::InputTooLarge,
                format!("text is over {limit} bytes; this server counts at most {limit} bytes per call"),
                "Split the text and count the parts separately (counts add up across \
                 paragraph boundaries to within a token or two), or raise --max-input-bytes.",
            )
            .with_detail("limit_bytes", limit),
            LimitError::NameTooLong {
                field,
                bytes,
                limit,
                ..
            } => ToolError::new(
                ErrorCode::InputTooLarge,
                message,
                format!(
                    "Send the name itself (list-models and spec-tokens list them); the server's \
                     operator can raise {}.",
                    limit_flag(field)
                ),
            )
            .with_detail("field", field)
            .with_detail("length_bytes", bytes)
            .with_detail("limit", limit)
            .with_detail("flag", limit_flag(field)),
            LimitError::TooMany {
                field,
                count,
                limit,
            } => ToolError::new(
                ErrorCode::InputTooLarge,
                message,
                format!(
                    "Send at most {limit} {field} per call (split the work), or raise {} on the server.",
                    limit_flag(field)
                ),
            )
            .with_detail("field", field)
            .with_detail("count", count)
            .with_detail("limit", limit)
            .with_detail("flag", limit_flag(field)),
            // Too few is refused alongside too many, so the code is the general one.
            LimitError::SpecCount { .. } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                "List the specs to load, most important first, e.g. [\"59\", \"66\", \"69\"].",
            ),
        }
    }
}

impl IntoToolError for FitError {
    fn into_tool_error(self) -> ToolError {
        let message = self.to_string();
        match self {
            FitError::InvalidMargin(margin) => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                "Send margin as a fraction in [0, 1), e.g. 0.1 to leave 10 % of the window unused.",
            )
            .with_detail("margin", margin),
            FitError::ReserveTooLarge {
                reserve,
                usable,
                context_window,
            } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                "Lower reserve_output_tokens or the margin, or pick a model with a larger window.",
            )
            .with_detail("reserve_output_tokens", reserve)
            .with_detail("usable_tokens", usable)
            .with_detail("context_window", context_window),
            FitError::ContextOverflow {
                system_tokens,
                budget,
            } => ToolError::new(
                ErrorCode::ContextOverflow,
                message,
                "Shorten the system message, lower the margin or reserve_output_tokens, pick a model \
                 with a larger window, or pass keep_system: false to let it be dropped.",
            )
            .with_detail("system_tokens", system_tokens)
            .with_detail("budget", budget),
            FitError::NoContextWindow { .. } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                "Name a model (e.g. `gpt-4o` or `claude-sonnet-4-5`); list-models shows their windows.",
            ),
            FitError::NotConfirmed { budget, .. } => ToolError::new(
                ErrorCode::ContextOverflow,
                message,
                "Raise the budget (smaller margin or reserve_output_tokens) or send fewer, shorter messages.",
            )
            .with_detail("budget", budget),
            FitError::Count(error) => error.into_tool_error(),
        }
    }
}

impl IntoToolError for McpTokensError {
    fn into_tool_error(self) -> ToolError {
        let message = self.to_string();
        match self {
            McpTokensError::Unreadable(_) => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                "Send `tools` as the `tools` array of a tools/list result, or as Anthropic \
                 (`name`, `input_schema`) or OpenAI (`function`) tool definitions.",
            ),
            McpTokensError::NoTools => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                "Send `tools`: the `tools` array of a tools/list result (the CLI measures \
                 configured servers: `context-loader mcp-tokens`).",
            ),
            McpTokensError::Count(error) => error.into_tool_error(),
        }
    }
}

impl IntoToolError for AssembleError {
    fn into_tool_error(self) -> ToolError {
        let message = self.to_string();
        match self {
            AssembleError::OverWindow {
                budget,
                model,
                context_window,
            } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                format!(
                    "Send a budget of at most {context_window} (the text must fit {model}'s \
                     window, with room for the reply), or omit `budget` for 90 % of the window."
                ),
            )
            .with_detail("field", "budget")
            .with_detail("budget", budget)
            .with_detail("context_window", context_window),
            AssembleError::EmptyName { index } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                "Give every section a name, e.g. `system` or `semantic_search`.",
            )
            .with_detail("section_index", index),
            AssembleError::UnknownPreset { name, available } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                format!(
                    "Use one of available_options (e.g. `{}`), or omit `preset` to set budgets per section.",
                    available.first().copied().unwrap_or_default()
                ),
            )
            .with_detail("requested", name)
            .with_detail("available_options", available),
            AssembleError::NotALayer {
                index,
                preset,
                layers,
                ..
            } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                format!(
                    "With preset `{preset}` every section names one of its layers (available_options), \
                     or omit `preset` to use your own names."
                ),
            )
            .with_detail("section_index", index)
            .with_detail("available_options", layers),
            AssembleError::PresetFixes {
                index,
                field,
                preset,
                ..
            } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                format!(
                    "Remove `{field}` from the section: preset `{preset}` sets each layer's \
                     order (a section's `budget` adjusts its layer). Omit `preset` to choose \
                     the order yourself."
                ),
            )
            .with_detail("section_index", index),
            AssembleError::DuplicateLayer { first, second, .. } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                "Join the two sections' content into one section for that layer.",
            )
            .with_detail("section_indices", [first, second]),
            AssembleError::NotConfirmed { budget, .. } => ToolError::new(
                ErrorCode::ContextOverflow,
                message,
                "Raise the budget or send shorter sections.",
            )
            .with_detail("budget", budget),
            AssembleError::NoContextWindow { .. } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                "Give an overall `budget`, or name a model instead of an encoding.",
            ),
            AssembleError::Budget(error) => error.into_tool_error(),
            AssembleError::Count(error) => error.into_tool_error(),
        }
    }
}

/// File tools when the working directory was too wide to be an implicit root.
pub fn implicit_root_refused(described: &str) -> ToolError {
    ToolError::new(
        ErrorCode::RootsNotConfigured,
        format!(
            "no root folder is configured for file tools: the working directory {described} \
             is never used as one unless named"
        ),
        "Start the server with --root DIR, the folder to serve (repeatable; or \
         CONTEXT_LOADER_ROOTS, a path list); in a client's config, add \"--root\", \"/path/to/project\" \
         to the server's args.",
    )
    .with_detail("working_directory", described)
}

impl IntoToolError for SpecError {
    fn into_tool_error(self) -> ToolError {
        let message = self.to_string();
        match self {
            SpecError::Limit(limit) => limit.into_tool_error(),
            SpecError::RootNotFound { path, .. } => ToolError::new(
                ErrorCode::SpecsDirNotFound,
                message,
                "Start the server with --specs-dir DIR (or CONTEXT_LOADER_SPECS_DIR) pointing at the folder \
                 that holds the NNN-name spec folders; a relative path is resolved from the server's \
                 working directory.",
            )
            .with_detail("specs_dir", path),
            SpecError::InvalidQuery { .. } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                "Pass a spec number (`59`), folder name, `059/DESIGN.md`, or omit specPath to list all specs.",
            ),
            SpecError::OutsideRoot { query } => ToolError::new(
                ErrorCode::PathOutsideRoot,
                message,
                "Name a spec inside the specs root, e.g. `59` or `059/DESIGN.md`; `..`, absolute paths \
                 elsewhere and symlinks out of the root are refused.",
            )
            .with_detail("requested", query),
            SpecError::NotFound { query, closest, by } => ToolError::new(
                ErrorCode::SpecNotFound,
                message,
                not_found_suggestion(&query, &closest, by),
            )
            .with_detail("requested", query)
            .with_detail("available_options", closest),
            SpecError::Ambiguous { query, candidates } => ToolError::new(
                ErrorCode::AmbiguousSpec,
                message,
                "Use one of available_options (the full folder path) to pick one.",
            )
            .with_detail("requested", query)
            .with_detail("available_options", candidates),
            SpecError::FileNotFound {
                spec, available, ..
            } => ToolError::new(
                ErrorCode::SpecFileNotFound,
                message,
                format!("Use one of available_options, e.g. `{spec}/README.md`."),
            )
            .with_detail("spec", spec.clone())
            .with_detail(
                "available_options",
                available
                    .iter()
                    .map(|f| format!("{spec}/{f}"))
                    .collect::<Vec<_>>(),
            ),
            SpecError::FileUnreadable { path, reason } => ToolError::new(
                ErrorCode::FileAccessError,
                message,
                format!(
                    "Add or fix `{path}` (specs are UTF-8 Markdown text), or measure another file of \
                     the spec by name (`{}/DESIGN.md`).",
                    path.rsplit_once('/').map_or(path.as_str(), |(folder, _)| folder)
                ),
            )
            .with_detail("path", path)
            .with_detail("reason", reason),
            SpecError::Cancelled => ToolError::new(
                ErrorCode::Cancelled,
                message,
                "Nothing to do: the request was cancelled. Repeat it to measure again; files measured \
                 before the cancellation are cached.",
            ),
        }
    }
}

impl IntoToolError for FilesError {
    fn into_tool_error(self) -> ToolError {
        let message = self.to_string();
        let limit = |flag: &str, what: &str| {
            format!(
                "Narrow `paths` (a folder or glob such as `src/**/*.rs`), add `exclude` globs, or ask the \
                 operator to raise {flag} ({what})."
            )
        };
        match self {
            FilesError::NoRoots => ToolError::new(
                ErrorCode::RootsNotConfigured,
                message,
                "Start the server with --root DIR (repeatable; or CONTEXT_LOADER_ROOTS, a path list). \
                 Over stdio the working directory is the default root (unless it is `/`, a home \
                 folder or a folder directly under `/`); over HTTP there is none.",
            ),
            FilesError::NoSharedRoot {
                server_roots,
                client_roots,
            } => ToolError::new(
                ErrorCode::RootsNotConfigured,
                message,
                "The client offered client_roots (Claude Code and Gemini CLI offer the folder they were \
                 started in) and the server reads only server_roots. Start the client in a folder inside \
                 one of server_roots, or add `--root` with your folder to the server's args in the \
                 client's MCP config (`claude mcp add`, Codex's config.toml, Gemini CLI's settings.json).",
            )
            .with_detail("server_roots", server_roots)
            .with_detail("client_roots", client_roots),
            FilesError::BadRoot { root, .. } => ToolError::new(
                ErrorCode::RootsNotConfigured,
                message,
                "Point --root at an existing folder.",
            )
            .with_detail("root", root),
            FilesError::InvalidPath { path, .. } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                "Pass files, folders or globs relative to the root, e.g. `src`, `README.md`, `src/**/*.rs`.",
            )
            .with_detail("requested", path),
            FilesError::OutsideRoot { path } => ToolError::new(
                ErrorCode::PathOutsideRoot,
                message,
                "Name paths inside the root, relative to it (`src/main.rs`); `..`, absolute paths \
                 elsewhere and symlinks that lead out of the root are refused.",
            )
            .with_detail("requested", path),
            FilesError::NotFound { path, .. } => ToolError::new(
                ErrorCode::PathNotFound,
                message,
                "Call file-tokens with a parent folder (or no paths) to see what exists.",
            )
            .with_detail("requested", path),
            FilesError::TooManyPatterns { count, limit: max } => ToolError::new(
                ErrorCode::InputTooLarge,
                message,
                "Send fewer paths and globs: one folder or a broader glob (`src/**/*.rs`) covers \
                 many files; or ask the operator to raise --max-patterns.",
            )
            .with_detail("count", count)
            .with_detail("limit", max)
            .with_detail("flag", "--max-patterns"),
            FilesError::PatternTooLong {
                field,
                bytes,
                limit: max,
            } => ToolError::new(
                ErrorCode::InputTooLarge,
                message,
                "Send a shorter path or glob; or ask the operator to raise --max-pattern-bytes.",
            )
            .with_detail("field", field)
            .with_detail("length_bytes", bytes)
            .with_detail("limit", max)
            .with_detail("flag", "--max-pattern-bytes"),
            FilesError::TooManyFiles { found, limit: max } => ToolError::new(
                ErrorCode::FileLimitExceeded,
                message,
                limit("--max-files", "files per call"),
            )
            .with_detail("found", found)
            .with_detail("limit", max),
            FilesError::IgnoreFilesTooLarge {
                path,
                bytes,
                limit: max,
            } => ToolError::new(
                ErrorCode::FileLimitExceeded,
                message,
                "The ignore rules on the way are too large to apply safely: narrow `paths` to \
                 fewer folders (or ones outside the folder holding that file), shorten the \
                 ignore files, or ask the operator to raise --max-ignore-bytes.",
            )
            .with_detail("ignore_file", path)
            .with_detail("length_bytes", bytes)
            .with_detail("limit", max)
            .with_detail("flag", "--max-ignore-bytes"),
            FilesError::TooManyIgnorePatterns { path, limit: max } => ToolError::new(
                ErrorCode::FileLimitExceeded,
                message,
                "The ignore rules on the way are too many to apply safely: narrow `paths` to \
                 fewer folders, shorten the ignore files, or ask the operator to raise \
                 --max-ignore-patterns.",
            )
            .with_detail("ignore_file", path)
            .with_detail("limit", max)
            .with_detail("flag", "--max-ignore-patterns"),
            FilesError::IgnorePatternTooLong {
                path,
                bytes,
                limit: max,
            } => ToolError::new(
                ErrorCode::FileLimitExceeded,
                message,
                "The folder's ignore rules are too large to apply safely: narrow `paths` to \
                 folders outside the one holding that file, shorten the pattern, or ask the \
                 operator to raise --max-pattern-bytes.",
            )
            .with_detail("ignore_file", path)
            .with_detail("length_bytes", bytes)
            .with_detail("limit", max)
            .with_detail("flag", "--max-pattern-bytes"),
            FilesError::TooManyBytes { limit: max } => ToolError::new(
                ErrorCode::FileLimitExceeded,
                message,
                limit("--max-total-bytes", "bytes read per call"),
            )
            .with_detail("limit_bytes", max),
            FilesError::WalkTooLarge { limit: max } => ToolError::new(
                ErrorCode::FileLimitExceeded,
                message,
                limit("--max-walk-entries", "folder entries visited per call"),
            )
            .with_detail("limit", max),
            FilesError::WalkTooSlow { limit_ms } => ToolError::new(
                ErrorCode::FileLimitExceeded,
                message,
                limit("--walk-timeout-ms", "time a walk may take"),
            )
            .with_detail("limit_ms", limit_ms),
            FilesError::NoDefaultBudget { model } => ToolError::new(
                ErrorCode::InvalidInput,
                message,
                "Pass `budget`, or name a model with a window (e.g. `gpt-4o`) instead of a bare encoding.",
            )
            .with_detail("model", model),
            FilesError::BudgetOverAnswerLimit { budget, limit } => ToolError::new(
                ErrorCode::AnswerTooLarge,
                message,
                format!(
                    "Pass a `budget` of at most {limit} (or omit it: the default is capped there), and \
                     load the rest in further calls (`omitted` lists what was left out). Clients such as \
                     Claude Code cut answers over ~25,000 tokens; the operator sets the limit with \
                     --max-answer-tokens (CONTEXT_LOADER_MAX_ANSWER_TOKENS)."
                ),
            )
            .with_detail("budget", budget)
            .with_detail("max_answer_tokens", limit),
            FilesError::BudgetBelowReport {
                budget,
                envelope,
                rows,
            } => ToolError::new(
                ErrorCode::ContextOverflow,
                message,
                format!(
                    "Raise `budget` above {envelope} tokens, or list fewer rows (`rows`: {}; \
                     1 lists one row per list), or narrow `paths`: the answer reports on the files it was \
                     given, and that report is part of what the budget bounds.",
                    match rows {
                        0 => "0 lists every row".to_string(),
                        n => format!("{n} now"),
                    }
                ),
            )
            .with_detail("budget", budget)
            .with_detail("report_tokens", envelope),
            FilesError::Cancelled => ToolError::new(
                ErrorCode::Cancelled,
                message,
                "Nothing to do: the request was cancelled. Files measured before it are cached.",
            ),
        }
    }
}

/// "Did you mean" for a spec that matched nothing, from the candidates themselves.
fn not_found_suggestion(query: &str, closest: &[String], by: Closeness) -> String {
    let quoted = |ids: &[String]| {
        ids.iter()
            .map(|id| format!("`{id}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (by, closest) {
        (_, []) => format!(
            "No spec name is close to `{query}`; call spec-tokens without specPath to list every spec."
        ),
        (Closeness::Name, [best]) => {
            format!("Did you mean {}?", quoted(std::slice::from_ref(best)))
        }
        (Closeness::Name, [best, others @ ..]) => format!(
            "Did you mean {}? Also spelled alike: {}.",
            quoted(std::slice::from_ref(best)),
            quoted(others)
        ),
        (Closeness::Number, nearest) => format!(
            "No spec is numbered {query}; the nearest numbers are {}. Numbers match exactly \
             (`59` is spec 059, never 1593).",
            quoted(nearest)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_input_bound_maps_through_the_one_limit_error() {
        // Text size reaches the caller the way fit-messages and assemble-context carry it.
        let text = FitError::Count(CountError::Limit(LimitError::TextTooLarge {
            bytes: 11,
            limit: 10,
        }))
        .into_tool_error();
        assert_eq!(text.code, ErrorCode::InputTooLarge);
        assert_eq!(
            text.message,
            "text is 11 bytes; this server counts at most 10 bytes per call"
        );
        assert!(text.suggestion.contains("--max-input-bytes"));
        assert_eq!(
            (
                text.details.get("input_bytes"),
                text.details.get("limit_bytes")
            ),
            (Some(&json!(11)), Some(&json!(10)))
        );

        let specs = LimitError::SpecCount { count: 0 }.into_tool_error();
        assert_eq!(specs.code, ErrorCode::InvalidInput);
        assert_eq!(
            specs.message,
            "`specs` has 0 entries; give between 1 and 200"
        );
        assert!(specs.details.is_empty());

        let many = AssembleError::Count(CountError::Limit(LimitError::TooMany {
            field: "sections",
            count: 4,
            limit: 3,
        }))
        .into_tool_error();
        assert_eq!(many.code, ErrorCode::InputTooLarge);
        assert_eq!(many.details.get("flag"), Some(&json!("--max-sections")));
    }
}
