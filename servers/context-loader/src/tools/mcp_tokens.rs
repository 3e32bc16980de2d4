//! `mcp-tokens`: what MCP tool definitions cost a model before the first message, and
//! what cutting them would save (issue 24). Over MCP it measures definitions the
//! caller sends; it never spawns a process or opens a connection for a caller. The
//! CLI also connects to configured servers ([`crate::mcp_servers`]).

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::TypedValueParser;

use context_budget::tool_defs::{
    self, Rendering, ServerCost, ServerDefinitions, Summary, tool_definitions,
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
        default_value_t = 8,
        help = "Servers measured at once"
    )]
    pub concurrency: usize,
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
context-loader mcp-tokens                                 # servers of the configs found here\n\
context-loader mcp-tokens --config .mcp.json --per-tool\n\
context-loader mcp-tokens --max-tokens 2000 -- context-loader serve\n\
context-loader mcp-tokens --url http://127.0.0.1:8080/mcp --header 'Authorization: Bearer $T'\n\
context-loader mcp-tokens --file tools.json --render openai --model gpt-4o";

    type Params = McpTokensParams;
    type Output = McpTokens;

    async fn call(
        service: &Service,
        params: Self::Params,
        call: Call,
    ) -> Result<McpTokens, ToolError> {
        let bytes = serde_json::to_string(&params.tools).map_or(0, |text| text.len());
        service
            .counting(bytes, &call, move |counter, _, _| {
                counter.check_input(bytes).map_err(tool_error)?;
                measure(counter, params)
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
                concurrency: params.concurrency,
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

    fn render(output: &McpTokens) -> Rendered {
        Rendered::line(crate::mcp_servers::table(output, output.per_tool))
    }
}

fn invalid(message: String, suggestion: &str) -> ToolError {
    ToolError::new(ErrorCode::InvalidInput, message, suggestion)
}

/// Read, count and total the definitions.
fn measure(
    counter: &context_budget::TokenCounter,
    params: McpTokensParams,
) -> Result<McpTokens, ToolError> {
    let model = counter
        .resolve(Some(params.model.as_deref().unwrap_or(DEFAULT_MCP_MODEL)))
        .map_err(tool_error)?;
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
                    status: Status::Error,
                    error: Some(error),
                    cost: ServerCost {
                        total_tokens: 0,
                        tool_tokens: 0,
                        instructions_tokens: 0,
                        tools: Vec::new(),
                        left_out: Vec::new(),
                    },
                    listed: server.listed,
                    config: server.source.as_ref().map(|p| p.display().to_string()),
                },
                None => ServerReport {
                    name,
                    status: Status::Ok,
                    error: None,
                    cost: costs.next().expect("one cost per measured server"),
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
    let mut warnings = Vec::new();
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
        encoding: tokenizer.name(),
        exact: tokenizer.is_exact(),
        method: tokenizer.method(),
        render,
        summary,
        servers: reports,
        over_budget,
        configs,
        per_tool: params.per_tool,
    })
}
