//! `mcp-tokens`: what MCP tool definitions cost a model before the first message, and
//! what cutting them would save (issue 24). Over MCP it measures definitions the
//! caller sends; it never spawns a process or opens a connection for a caller. The
//! CLI also connects to configured servers ([`crate::mcp_servers`]).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::builder::TypedValueParser;

use context_budget::ExactCounter;
use context_budget::tool_defs::{
    self, MAX_TOOL_NAME_CHARS, Rendering, ServerCost, ServerDefinitions, Summary, anthropic_entry,
    anthropic_tool_use_prompt, full_name, tool_definitions,
};
use mcp_common::{ErrorCode, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::errors::tool_error;
use crate::service::Service;
use crate::tool::{Call, Rendered, Tool};

pub struct McpTokensTool;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct McpTokensParams {
    /// tools/list `tools`, or Anthropic or OpenAI tools.
    #[schemars(schema_with = "objects")]
    #[arg(skip)]
    #[serde(default)]
    pub tools: Vec<Value>,
    /// Their server's name (command line: `--file` only): tools are counted as
    /// `mcp__<server>__<tool>`. Not offered over MCP: a caller's Anthropic list
    /// already carries the names its client sends.
    #[serde(skip)]
    #[arg(
        long,
        requires = "file",
        help = "The server of a --file list: tools are named mcp__<server>__<tool>"
    )]
    pub server: Option<String>,
    #[arg(long, short, help = "Model or encoding name (default claude)")]
    pub model: Option<String>,
    #[arg(
        long,
        value_parser = clap::builder::PossibleValuesParser::new(Rendering::NAMES)
            .map(|name| Rendering::from_name(&name).unwrap_or_default()),
        help = "How tools are sent: `anthropic` (Claude Code's request, default) or `openai` \
                (OpenAI's cookbook function rule)"
    )]
    pub render: Option<Rendering>,
    /// A saved tool list (command line only).
    #[serde(skip)]
    #[arg(
        long,
        help = "JSON file with a tool list (tools/list result, Anthropic or OpenAI tools); `-` reads stdin"
    )]
    pub file: Option<PathBuf>,
    /// Show every tool (command line only).
    #[serde(skip)]
    #[arg(long, help = "Show each tool's tokens under its server")]
    pub per_tool: bool,
    /// Exit with 1 over this many tokens (command line only).
    #[serde(skip)]
    #[arg(
        long,
        value_name = "N",
        help = "Exit with code 1 when the total (with --per-server: any one server) is over N tokens"
    )]
    pub max_tokens: Option<usize>,
    #[serde(skip)]
    #[arg(
        long,
        requires = "max_tokens",
        help = "Apply --max-tokens to each server"
    )]
    pub per_server: bool,
    #[serde(skip)]
    #[arg(
        long,
        value_name = "FILE",
        help = "A client config (.mcp.json, claude_desktop_config.json, ~/.claude.json, .vscode/mcp.json, \
                ~/.cursor/mcp.json, Gemini settings.json, Codex config.toml); repeatable. Without it, \
                --url or a command, the configs of this project and user are read"
    )]
    pub config: Vec<PathBuf>,
    #[serde(skip)]
    #[arg(
        long,
        help = "Run the servers of this project's configs (.mcp.json, .vscode/, .cursor/, .gemini/) \
                without an approval recorded by Claude Code or Gemini CLI"
    )]
    pub trust_project: bool,
    #[serde(skip)]
    #[arg(
        long,
        value_name = "NAME",
        help = "Also give stdio servers this variable of ours (they get HOME, LOGNAME, PATH, SHELL, \
                TERM, USER and their config's env); repeatable"
    )]
    pub pass_env: Vec<String>,
    #[serde(skip)]
    #[arg(long, help = "Measure one streamable-HTTP server")]
    pub url: Option<String>,
    #[serde(skip)]
    #[arg(
        long,
        value_name = "NAME: VALUE",
        requires = "url",
        help = "An HTTP header for --url; repeatable"
    )]
    pub header: Vec<String>,
    #[serde(skip)]
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 30,
        help = "Time limit per server, connecting included"
    )]
    pub timeout: u64,
    #[serde(skip)]
    #[arg(
        long,
        value_name = "N",
        help = "Servers measured at once [default: the number of cores, at most 8]"
    )]
    pub concurrency: Option<usize>,
    /// One stdio server (command line only).
    #[serde(skip)]
    #[arg(
        last = true,
        value_name = "CMD ARGS",
        help = "Measure one stdio server: `-- CMD ARGS...`"
    )]
    pub command: Vec<String>,
    /// Servers the command line measured (filled by the CLI, never by a caller).
    #[serde(skip)]
    #[arg(skip)]
    pub measured: Vec<MeasuredServer>,
    #[serde(skip)]
    #[arg(skip)]
    pub configs_read: Vec<PathBuf>,
}

/// An array of objects, without the words the field's description already says.
fn objects(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "array"})
}

/// One server as the CLI found it: its definitions, or why there are none.
#[derive(Debug, Clone)]
pub struct MeasuredServer {
    pub definitions: ServerDefinitions,
    pub error: Option<String>,
    /// Not run on purpose (`error` says why and how to allow it).
    pub held: bool,
    /// prompts, resources, resource templates listed (all pages).
    pub listed: Option<Listed>,
    /// The config file it came from.
    pub source: Option<PathBuf>,
}

impl MeasuredServer {
    pub fn failed(config: &crate::mcp_servers::ServerConfig, error: String) -> MeasuredServer {
        MeasuredServer {
            definitions: ServerDefinitions {
                name: Some(config.name.clone()),
                ..ServerDefinitions::default()
            },
            error: Some(error),
            held: false,
            listed: None,
            source: config.source.clone(),
        }
    }
}

/// What else a server lists: not sent to the model with every request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Listed {
    pub prompts: usize,
    pub resources: usize,
    pub resource_templates: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Error,
    /// Not run: a project's server nobody approved.
    Skipped,
}

/// One server's row.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ServerReport {
    pub name: String,
    pub status: Status,
    /// Why it could not be measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(flatten)]
    pub cost: ServerCost,
    /// With exact Claude counts on: whether this server's figures came from
    /// Anthropic's count_tokens API (else the estimate; `warnings` says why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listed: Option<Listed>,
    /// The config file that names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// The answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct McpTokens {
    pub model: String,
    pub encoding: &'static str,
    pub exact: bool,
    pub method: &'static str,
    pub render: Rendering,
    #[serde(flatten)]
    pub summary: Summary,
    pub servers: Vec<ServerReport>,
    /// `--max-tokens`: what is over it (command line only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_budget: Option<Vec<String>>,
    /// What went differently from what was asked: an exact count that fell back to
    /// the estimate, a hoisting search stopped at its budget.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The client configs read (command line only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<String>,
    #[serde(skip)]
    pub per_tool: bool,
}

/// The model when none is named: a current Claude, what most MCP clients talk to.
pub const DEFAULT_MCP_MODEL: &str = "claude";

impl Tool for McpTokensTool {
    const NAME: &'static str = "mcp-tokens";
    const TITLE: &'static str = "MCP tool tokens";
    const DESCRIPTION: &'static str = "What tool definitions cost per request (as Claude Code sends \
them) and what trimming saves. CLI `context-loader mcp-tokens` measures configured servers.";
    const COMMAND: &'static str = "mcp-tokens";
    const ABOUT: &'static str = "Measure MCP servers' tool definitions (the `mcp-tokens` tool)";
    const EXAMPLES: &'static str = "\
context-loader mcp-tokens --config docs/examples/mcp.json --per-tool\n\
context-loader mcp-tokens --model gpt-4o --max-tokens 3000 -- context-loader stdio\n\
context-loader mcp-tokens --file docs/examples/parcel-tools.json --render openai --model gpt-4o";

    type Params = McpTokensParams;
    type Output = McpTokens;

    async fn call(
        service: &Service,
        params: Self::Params,
        call: Call,
    ) -> Result<McpTokens, ToolError> {
        let bytes = serde_json::to_string(&params.tools).map_or(0, |text| text.len());
        service
            .counting(bytes, &call, move |counter, exact, _| {
                counter.check_input(bytes).map_err(tool_error)?;
                measure(counter, exact, params)
            })
            .await
    }

    fn from_command_line(
        mut params: Self::Params,
        service: &Service,
    ) -> Result<Self::Params, ToolError> {
        if params.file.is_none() {
            let sources = crate::mcp_servers::Sources {
                configs: params.config.clone(),
                command: params.command.clone(),
                url: params.url.clone(),
                headers: params.header.clone(),
                timeout: Duration::from_secs(params.timeout.max(1)),
                concurrency: params
                    .concurrency
                    .unwrap_or_else(crate::mcp_servers::default_concurrency),
                trust_project: params.trust_project,
                pass_env: params.pass_env.clone(),
            };
            let (servers, read) = crate::mcp_servers::servers(&sources)?;
            params.configs_read = read;
            params.measured = crate::mcp_servers::measure_all(servers, &sources);
            if params.measured.is_empty() {
                return Err(invalid(
                    "the configs name no MCP servers".into(),
                    "Pass another --config, or measure one server with -- CMD ARGS or --url URL.",
                ));
            }
        } else {
            let text = crate::input::source(service.counter(), params.file.as_deref())?;
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                ToolError::new(
                    ErrorCode::InvalidInput,
                    format!("the tool list is not JSON: {e}"),
                    "Pass `--file` a tools/list result, or an Anthropic or OpenAI tool list.",
                )
            })?;
            params.tools = match value {
                Value::Object(mut object) => match object.remove("tools") {
                    Some(Value::Array(tools)) => tools,
                    _ => vec![Value::Object(object)],
                },
                Value::Array(tools) => tools,
                other => vec![other],
            };
        }
        Ok(params)
    }

    fn warnings(output: &McpTokens) -> Vec<String> {
        let mut warnings: Vec<String> = output
            .servers
            .iter()
            .filter_map(|s| s.error.as_ref().map(|e| format!("{}: {e}", s.name)))
            .collect();
        warnings.extend(output.warnings.iter().cloned());
        warnings
    }

    fn exit_code(output: &McpTokens) -> u8 {
        u8::from(
            output
                .over_budget
                .as_ref()
                .is_some_and(|over| !over.is_empty()),
        )
    }

    fn render(output: McpTokens) -> Rendered {
        Rendered::line(crate::mcp_servers::table(&output, output.per_tool))
    }
}

fn invalid(message: String, suggestion: &str) -> ToolError {
    ToolError::new(ErrorCode::InvalidInput, message, suggestion)
}

/// Most count_tokens requests one call sends (a baseline, then one per server with
/// tools and one per server with instructions), one at a time: the API is rate
/// limited per minute. Servers past it keep the estimate, with a warning.
pub const MAX_EXACT_REQUESTS: usize = 64;
/// Largest tool list (compact JSON) sent in one count_tokens request.
pub const MAX_EXACT_REQUEST_BYTES: usize = 8 * 1024 * 1024;
/// No count_tokens request is started this long after the call's first one (each
/// is also bounded by `--anthropic-timeout-ms`).
pub const EXACT_DEADLINE: Duration = Duration::from_secs(30);
/// `method` of an answer whose servers were all counted by the API.
pub const EXACT_TOOLS_METHOD: &str = "exact: Anthropic count_tokens API with `tools`, per server: \
its request less the same request without tools, less the tool-use system prompt (counted once, \
in request_overhead); each tool: the estimate scaled to its server's exact total";

/// Read, count and total the definitions.
fn measure(
    counter: &context_budget::TokenCounter,
    exact: Option<&dyn ExactCounter>,
    params: McpTokensParams,
) -> Result<McpTokens, ToolError> {
    let requested = params.model.as_deref().unwrap_or(DEFAULT_MCP_MODEL);
    let model = counter.resolve(Some(requested)).map_err(tool_error)?;
    let tokenizer = model.tokenizer();
    let mut servers: Vec<MeasuredServer> = params.measured;
    let configs = params
        .configs_read
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if !params.tools.is_empty() || servers.is_empty() {
        if let Some(server) = &params.server {
            counter.check_name("server", server).map_err(tool_error)?;
        }
        let tools = tool_definitions(&Value::Array(params.tools)).map_err(|e| {
            invalid(
                format!("`tools` cannot be read: {e}"),
                "Send `tools` as the `tools` array of a tools/list result, or as Anthropic \
                 (`name`, `input_schema`) or OpenAI (`function`) tool definitions.",
            )
        })?;
        if tools.is_empty() {
            return Err(invalid(
                "no tool definitions to measure".into(),
                "Send `tools`: the `tools` array of a tools/list result (the CLI measures \
                 configured servers: `context-loader mcp-tokens`).",
            ));
        }
        servers.push(MeasuredServer {
            definitions: ServerDefinitions {
                name: params.server,
                tools,
                instructions: None,
            },
            error: None,
            held: false,
            listed: None,
            source: None,
        });
    }
    let render = params.render.unwrap_or_default();
    let ok: Vec<ServerDefinitions> = servers
        .iter()
        .filter(|s| s.error.is_none())
        .map(|s| s.definitions.clone())
        .collect();
    let window = model.entry().map(|e| e.context_window);
    let (costs, summary) = tool_defs::measure(
        &ok,
        model.name(),
        tokenizer,
        window,
        render,
        counter.limits().hoist_work_factor,
    );
    let (mut costs, mut summary) = (costs, summary);
    let mut warnings = Vec::new();
    // Exact Claude counts: only for the Messages API's own rendering.
    let claude = exact
        .zip(model.entry())
        .is_some_and(|(exact, entry)| exact.provider_model(requested, entry).is_some());
    if claude && render != Rendering::Anthropic {
        warnings.push(
            "exact Claude counts go through the Messages API's `tools`: not asked for \
             the `openai` rendering; these are the local estimate"
                .to_string(),
        );
    }
    let api_model = exact
        .zip(model.entry())
        .filter(|_| render == Rendering::Anthropic && !ok.is_empty())
        .and_then(|(exact, entry)| Some((exact, exact.provider_model(requested, entry)?)));
    let exact_servers = api_model.as_ref().map(|(exact, api_model)| {
        let prompt = anthropic_tool_use_prompt(model.name()).map_or(0, |(p, _)| p.auto_none);
        let counted = exact_pass(*exact, api_model, &ok, &mut costs, prompt, &mut warnings);
        summary.retotal(&costs);
        counted
    });
    let all_exact = exact_servers
        .as_ref()
        .is_some_and(|counted| counted.iter().all(|c| *c));
    let mut exact_flags = exact_servers.clone().unwrap_or_default().into_iter();
    let mut costs = costs.into_iter();
    let reports: Vec<ServerReport> = servers
        .into_iter()
        .map(|server| {
            let name = server
                .definitions
                .name
                .clone()
                .unwrap_or_else(|| "tools".into());
            match server.error {
                Some(error) => ServerReport {
                    name,
                    status: match server.held {
                        true => Status::Skipped,
                        false => Status::Error,
                    },
                    error: Some(error),
                    cost: ServerCost {
                        total_tokens: 0,
                        tool_tokens: 0,
                        instructions_tokens: 0,
                        tools: Vec::new(),
                        left_out: Vec::new(),
                    },
                    exact: None,
                    listed: server.listed,
                    config: server.source.as_ref().map(|p| p.display().to_string()),
                },
                None => ServerReport {
                    name,
                    status: Status::Ok,
                    error: None,
                    cost: costs.next().expect("one cost per measured server"),
                    exact: exact_flags.next(),
                    listed: server.listed,
                    config: server.source.as_ref().map(|p| p.display().to_string()),
                },
            }
        })
        .collect();
    let over_budget = params.max_tokens.map(|limit| {
        if params.per_server {
            reports
                .iter()
                .filter(|s| s.cost.total_tokens > limit)
                .map(|s| format!("{}: {} tokens, over {limit}", s.name, s.cost.total_tokens))
                .collect()
        } else if summary.total_tokens > limit {
            vec![format!(
                "total: {} tokens, over {limit}",
                summary.total_tokens
            )]
        } else {
            Vec::new()
        }
    });
    if summary.savings.hoisting.partial {
        warnings.push(
            "hoisting: the search for repeated subtrees stopped at its work budget \
             (--max-hoist-work); its saving is what the hoists made so far save, a lower bound"
                .into(),
        );
    }
    Ok(McpTokens {
        warnings,
        model: model.name().to_string(),
        encoding: match (all_exact, api_model) {
            (true, Some((exact, _))) => exact.encoding(),
            _ => tokenizer.name(),
        },
        exact: all_exact || tokenizer.is_exact(),
        method: if all_exact {
            EXACT_TOOLS_METHOD
        } else {
            tokenizer.method()
        },
        render,
        summary,
        servers: reports,
        over_budget,
        configs,
        per_tool: params.per_tool,
    })
}

/// Count each server's tools (and instructions) with the provider, as Claude Code
/// sends them: one request with the server's tools and one short user message,
/// less the same request without tools (the baseline) and less the documented
/// tool-use system prompt, which the answer counts once as `request_overhead`.
/// Instructions: a request with them as `system`, less the baseline. Returns per
/// server whether its figures are the provider's; the others keep the estimate
/// and `warnings` says why. Bounded by [`MAX_EXACT_REQUESTS`],
/// [`MAX_EXACT_REQUEST_BYTES`] and [`EXACT_DEADLINE`]; after one failed request no
/// other is sent, unless the API refused that request's content (HTTP 400: a
/// schema it does not accept), which only that server's figures pay for.
fn exact_pass(
    exact: &dyn ExactCounter,
    api_model: &str,
    servers: &[ServerDefinitions],
    costs: &mut [ServerCost],
    prompt: usize,
    warnings: &mut Vec<String>,
) -> Vec<bool> {
    let started = Instant::now();
    let mut sent = 0usize;
    let stopped = std::cell::Cell::new(false);
    let mut not_asked = 0usize;
    let mut ask = |system: Option<&str>, tools: &[Value]| -> Result<u64, String> {
        let bytes = tools
            .iter()
            .map(|t| tool_defs::compact(t).len())
            .sum::<usize>()
            + system.map_or(0, str::len);
        if bytes > MAX_EXACT_REQUEST_BYTES {
            return Err(format!(
                "exact Claude count not asked: the request would carry {bytes} bytes, over the \
                 {MAX_EXACT_REQUEST_BYTES} one count_tokens request may; using the local estimate"
            ));
        }
        let reason = if sent >= MAX_EXACT_REQUESTS {
            Some(format!(
                "{MAX_EXACT_REQUESTS} count_tokens requests were sent"
            ))
        } else if started.elapsed() > EXACT_DEADLINE {
            Some(format!(
                "the call's count_tokens requests took over {} s",
                EXACT_DEADLINE.as_secs()
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            stopped.set(true);
            return Err(format!(
                "exact Claude count not asked: {reason}; using the local estimate"
            ));
        }
        sent += 1;
        exact
            .count_request(api_model, system, tools)
            .map_err(|failure| {
                // A request the API refused for its content says nothing of the
                // next one; any other failure (time, rate, server, network) would
                // repeat: stop.
                if !failure.request_refused {
                    stopped.set(true);
                }
                failure.warning
            })
    };
    let baseline = match ask(None, &[]) {
        Ok(tokens) => tokens as usize,
        Err(warning) => {
            warnings.push(format!("every server (the baseline request): {warning}"));
            return vec![false; servers.len()];
        }
    };
    let mut counted = Vec::with_capacity(servers.len());
    for (server, cost) in servers.iter().zip(costs.iter_mut()) {
        let name = server.name.clone().unwrap_or_else(|| "tools".into());
        if stopped.get() {
            not_asked += 1;
            counted.push(false);
            continue;
        }
        let entries: Vec<Value> = server
            .tools
            .iter()
            .filter_map(|tool| {
                let full = full_name(server.name.as_deref(), &tool.name);
                (full.chars().count() <= MAX_TOOL_NAME_CHARS).then(|| anthropic_entry(tool, &full))
            })
            .collect();
        let tools = if entries.is_empty() {
            Ok(0)
        } else {
            ask(None, &entries).map(|with| (with as usize).saturating_sub(baseline + prompt))
        };
        let instructions = match (&tools, server.instructions.as_deref()) {
            (Ok(_), Some(text)) if !text.is_empty() => {
                ask(Some(text), &[]).map(|with| (with as usize).saturating_sub(baseline))
            }
            (_, _) => Ok(0),
        };
        match (tools, instructions) {
            (Ok(tools), Ok(instructions)) => {
                cost.scale_to(tools, instructions);
                counted.push(true);
            }
            (Err(warning), _) | (_, Err(warning)) => {
                warnings.push(format!("{name}: {warning}"));
                counted.push(false);
            }
        }
    }
    if not_asked > 0 {
        warnings.push(format!(
            "exact Claude count not asked for {not_asked} more server(s) after that; they keep \
             the local estimate"
        ));
    }
    counted
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use context_budget::tool_defs::{ToolDefinition, measure_server};
    use context_budget::{ExactCountFailure, Message, ModelEntry, Tokenizer};
    use serde_json::json;

    use super::*;

    /// Counts `10 + system bytes + (346 + 100 per tool with tools)`; refuses (HTTP 400)
    /// a request with a tool named `*bad*`; fails (500) its `fail_at`-th request.
    struct Scripted {
        requests: Mutex<usize>,
        fail_at: Option<usize>,
    }

    impl ExactCounter for Scripted {
        fn provider_model(&self, _: &str, _: &ModelEntry) -> Option<String> {
            Some("claude-test".into())
        }
        fn count_messages(&self, _: &str, _: &[Message]) -> Result<u64, ExactCountFailure> {
            Err(ExactCountFailure::new("unused"))
        }
        fn count_text(&self, _: &str, _: &str) -> Result<u64, ExactCountFailure> {
            Err(ExactCountFailure::new("unused"))
        }
        fn count_request(
            &self,
            _: &str,
            system: Option<&str>,
            tools: &[Value],
        ) -> Result<u64, ExactCountFailure> {
            let mut requests = self.requests.lock().unwrap();
            *requests += 1;
            if Some(*requests) == self.fail_at {
                return Err(ExactCountFailure::new("server error (HTTP 500)"));
            }
            if tools
                .iter()
                .any(|t| t["name"].as_str().unwrap().contains("bad"))
            {
                return Err(ExactCountFailure::refused("request rejected (HTTP 400)"));
            }
            let tools = if tools.is_empty() {
                0
            } else {
                346 + 100 * tools.len()
            };
            Ok((10 + system.map_or(0, str::len) + tools) as u64)
        }
        fn encoding(&self) -> &'static str {
            "test"
        }
        fn method(&self) -> &'static str {
            "test"
        }
    }

    fn servers(names: &[&str]) -> Vec<ServerDefinitions> {
        names
            .iter()
            .map(|name| ServerDefinitions {
                name: Some((*name).into()),
                tools: vec![ToolDefinition {
                    name: name.to_string(),
                    description: Some("A tool.".into()),
                    input_schema: json!({"type": "object"}),
                }],
                instructions: Some("Use it.".into()),
            })
            .collect()
    }

    fn pass(
        fail_at: Option<usize>,
        names: &[&str],
    ) -> (Vec<bool>, Vec<ServerCost>, Vec<String>, usize) {
        let exact = Scripted {
            requests: Mutex::new(0),
            fail_at,
        };
        let servers = servers(names);
        let mut costs: Vec<ServerCost> = servers
            .iter()
            .map(|s| measure_server(s, Tokenizer::O200kBase, Rendering::Anthropic))
            .collect();
        let mut warnings = Vec::new();
        let counted = exact_pass(
            &exact,
            "claude-test",
            &servers,
            &mut costs,
            346,
            &mut warnings,
        );
        let sent = *exact.requests.lock().unwrap();
        (counted, costs, warnings, sent)
    }

    #[test]
    fn the_pass_subtracts_the_baseline_and_the_prompt_and_stops_at_its_request_cap() {
        let names: Vec<String> = (0..40).map(|i| format!("s{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let (counted, costs, warnings, sent) = pass(None, &names);
        assert_eq!(sent, MAX_EXACT_REQUESTS);
        // A baseline, then two requests a server: 31 servers whole, the 32nd's
        // instructions over the cap.
        assert_eq!(counted.iter().filter(|c| **c).count(), 31);
        assert!(!counted[31]);
        assert_eq!(
            (costs[0].tool_tokens, costs[0].instructions_tokens),
            (100, "Use it.".len())
        );
        assert!(warnings[0].starts_with("s31: ") && warnings[0].contains("64 count_tokens"));
        assert!(warnings[1].contains("8 more server"), "{warnings:?}");
    }

    #[test]
    fn a_refused_request_costs_its_server_only_and_any_other_failure_stops_the_pass() {
        let (counted, _, warnings, sent) = pass(None, &["a", "bad", "c"]);
        assert_eq!(counted, [true, false, true]);
        assert_eq!(sent, 6, "baseline, a (2), bad (1), c (2)");
        assert!(warnings[0].starts_with("bad: ") && warnings[0].contains("400"));
        let (counted, _, warnings, sent) = pass(Some(2), &["a", "b", "c"]);
        assert_eq!(counted, [false, false, false]);
        assert_eq!(sent, 2, "nothing after the 500");
        assert!(warnings[0].starts_with("a: ") && warnings[0].contains("500"));
        assert!(warnings[1].contains("2 more server"));
        let (counted, _, warnings, sent) = pass(Some(1), &["a", "b"]);
        assert_eq!((counted, sent), (vec![false, false], 1));
        assert!(warnings[0].contains("baseline"));
    }
}
