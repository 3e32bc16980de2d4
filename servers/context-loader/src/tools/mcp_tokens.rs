//! `mcp-tokens`: what MCP tool definitions cost a model before the first message, and
//! what cutting them would save (issue 24). Over MCP it measures definitions the
//! caller sends; it never spawns a process or opens a connection for a caller. The
//! CLI also connects to configured servers ([`crate::mcp_servers`]).

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::TypedValueParser;

use context_budget::clients;
use context_budget::tool_defs::{
    McpTokens, McpTokensQuery, MeasuredServer, Rendering, Status, mcp_tokens_until,
};
use mcp_common::{ErrorCode, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::errors::tool_error;
use crate::service::Service;
use crate::tool::{Call, Rendered, Tool};

pub struct McpTokensTool;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct McpTokensParams {
    /// tools/list `tools`, Anthropic or OpenAI tools.
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
    /// Command line only: over MCP, `client` says the same in fewer of the tool
    /// list's tokens (`claude-code` is `anthropic`; `codex` what Codex sends, where
    /// `openai` is the cookbook's estimate), and an argument the schema does not list
    /// is never accepted (a schema-checking client would refuse it).
    #[serde(skip)]
    #[schemars(skip)]
    #[arg(
        long,
        value_parser = clap::builder::PossibleValuesParser::new(Rendering::NAMES)
            .map(|name| Rendering::from_name(&name).unwrap_or_default()),
        conflicts_with = "client",
        help = "How tools are sent: `anthropic` (Claude Code's request, default) or `openai` \
                (OpenAI's cookbook function rule, an estimate)"
    )]
    pub render: Option<Rendering>,
    #[schemars(schema_with = "client_names")]
    #[serde(default)]
    #[arg(
        long,
        value_parser = clap::builder::PossibleValuesParser::new(clients::IDS),
        help = "Render tools as this client sends them, count with its model's tokenizer, and \
                show eager and deferred costs and which it pays; without --config, read its \
                config files"
    )]
    pub client: Option<String>,
    /// Claude Code's `ENABLE_TOOL_SEARCH` (command line: read from the environment).
    #[serde(skip)]
    #[arg(skip)]
    pub tool_search: Option<String>,
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
        help = "An HTTP header for --url; repeatable. `${VAR}` in it is read from the \
                environment, so a token stays out of argv: --header 'Authorization: Bearer ${TOKEN}'"
    )]
    pub header: Vec<String>,
    #[serde(skip)]
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 30,
        help = "Time limit per server: connecting, listing and counting"
    )]
    pub timeout: u64,
    #[serde(skip)]
    #[arg(
        long,
        value_name = "N",
        help = "Servers measured at once [default: the number of cores, at most 8]"
    )]
    pub concurrency: Option<usize>,
    #[serde(skip)]
    #[arg(
        long,
        value_name = "N",
        default_value_t = crate::mcp_servers::DEFAULT_MAX_PAGES,
        help = "Most pages of one listing (tools, prompts, resources, templates) per server"
    )]
    pub max_pages: usize,
    #[serde(skip)]
    #[arg(
        long,
        value_name = "N",
        default_value_t = crate::mcp_servers::DEFAULT_MAX_TOOLS,
        help = "Most tools one server may list"
    )]
    pub max_tools: usize,
    #[serde(skip)]
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = crate::mcp_servers::DEFAULT_MAX_SERVER_BYTES,
        help = "Most bytes (as JSON) of everything one server lists"
    )]
    pub max_server_bytes: usize,
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

impl McpTokensParams {
    /// What the engine measures: the command line's flags that only the table reads
    /// stay here.
    fn query(self) -> McpTokensQuery {
        McpTokensQuery {
            tools: self.tools,
            server: self.server,
            model: self.model,
            render: self.render,
            client: self.client.as_deref().and_then(clients::by_id),
            tool_search: self.tool_search,
            max_tokens: self.max_tokens,
            per_server: self.per_server,
            measured: self.measured,
            configs_read: self.configs_read,
        }
    }
}

/// One of the table's clients.
fn client_names(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "enum": clients::IDS})
}

/// The client named `id`, or why not.
fn known_client(id: Option<&str>) -> Result<(), ToolError> {
    match id {
        Some(id) if clients::by_id(id).is_none() => Err(invalid(
            format!("`client` {id} is not a measured client"),
            &format!("Use one of: {}.", clients::IDS.join(", ")),
        )),
        _ => Ok(()),
    }
}

/// An array of objects, without the words the field's description already says.
fn objects(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "array"})
}

impl Tool for McpTokensTool {
    const NAME: &'static str = "mcp-tokens";
    const TITLE: &'static str = "MCP tool tokens";
    const DESCRIPTION: &'static str = "What tool definitions cost per request as `client` sends \
them, and what trimming saves; the CLI measures configured servers.";
    const COMMAND: &'static str = "mcp-tokens";
    const ABOUT: &'static str = "Measure MCP servers' tool definitions (the `mcp-tokens` tool)";
    const EXAMPLES: &'static str = "\
context-loader mcp-tokens --config docs/examples/mcp.json --per-tool\n\
context-loader mcp-tokens --model gpt-4o --max-tokens 3000 -- context-loader stdio\n\
context-loader mcp-tokens --client codex -- context-loader stdio\n\
context-loader mcp-tokens --file docs/examples/parcel-tools.json --render openai --model gpt-4o";

    type Params = McpTokensParams;
    type Output = McpTokens;

    async fn call(
        service: &Service,
        params: Self::Params,
        call: Call,
    ) -> Result<McpTokens, ToolError> {
        known_client(params.client.as_deref())?;
        // The count first, before any work: each tool costs the answer a row.
        if let Err(error) = service.counter().check_tools(params.tools.len()) {
            drop(params);
            give_back_memory();
            return Err(tool_error(error));
        }
        let bytes = json_bytes(&params.tools);
        let per_tool = params.per_tool;
        let answer = service
            .counting(bytes, &call, move |counter, exact, cancelled| {
                counter.check_input(bytes).map_err(tool_error)?;
                // A cancelled or timed-out request stops at the next tool.
                let stop = || cancelled.is_cancelled();
                let mut answer =
                    mcp_tokens_until(counter, exact, params.query(), &stop).map_err(tool_error)?;
                answer.per_tool = per_tool;
                Ok(answer)
            })
            .await;
        if bytes > GIVE_BACK_BYTES {
            give_back_memory();
        }
        answer
    }

    fn from_command_line(
        mut params: Self::Params,
        service: &Service,
    ) -> Result<Self::Params, ToolError> {
        let client = params.client.as_deref().and_then(clients::by_id);
        params.tool_search = std::env::var("ENABLE_TOOL_SEARCH").ok();
        if params.file.is_none() {
            let sources = crate::mcp_servers::Sources {
                client,
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
                bounds: crate::mcp_servers::Bounds {
                    max_pages: params.max_pages.max(1),
                    max_tools: params.max_tools,
                    max_bytes: params.max_server_bytes,
                },
                counting: Some(crate::mcp_servers::Counting {
                    counter: service.counter().clone(),
                    model: params.model.clone(),
                    render: params.render,
                    client,
                }),
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
        Rendered::line(table(&output))
    }
}

/// A list this large (as JSON) leaves megabytes of small freed blocks behind (its
/// parsed trees): worth handing back to the system after the call.
const GIVE_BACK_BYTES: usize = 1024 * 1024;

/// Return the heap's free pages to the system: glibc keeps freed small blocks in its
/// arenas, so a 6.6 MB list once left 450 MB resident after its answer.
fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The bytes of `value` as compact JSON, counted without writing them anywhere.
fn json_bytes(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).map_or(0, |()| count.0)
}

fn invalid(message: String, suggestion: &str) -> ToolError {
    ToolError::new(ErrorCode::InvalidInput, message, suggestion)
}

/// The terminal rendering: one row per server, each tool under it with `--per-tool`,
/// then the totals and what cutting would save.
fn table(output: &McpTokens) -> String {
    let total = output.summary.total_tokens.max(1) as f64;
    let mut rows = Vec::new();
    for server in &output.servers {
        let share = format!("{:.1}%", server.cost.total_tokens as f64 * 100.0 / total);
        match server.status {
            Status::Ok => rows.push(vec![
                server.name.clone(),
                "ok".into(),
                server.cost.tools.len().to_string(),
                server.cost.total_tokens.to_string(),
                share,
            ]),
            Status::Error | Status::Skipped => rows.push(vec![
                server.name.clone(),
                match server.status {
                    Status::Skipped => server.error.clone().unwrap_or_default(),
                    _ => format!("error: {}", server.error.as_deref().unwrap_or_default()),
                },
                String::new(),
                String::new(),
                String::new(),
            ]),
        }
        if output.per_tool {
            for tool in &server.cost.tools {
                rows.push(vec![
                    format!("  {}", tool.name),
                    String::new(),
                    String::new(),
                    tool.tokens.to_string(),
                    format!("{:.1}%", tool.tokens as f64 * 100.0 / total),
                ]);
            }
        }
    }
    let mut text = crate::table::table(
        &["server", "status", "tools", "tokens", "share"],
        &[2, 3, 4],
        rows,
    );
    let kind = if output.exact { "exact" } else { "estimate" };
    let summary = &output.summary;
    text.push_str(&format!(
        "\n\ntotal: {} tokens ({}, {}, {} rendering, {kind}) = {:.1}% of the ADR's {}-token tool layer",
        summary.total_tokens,
        output.model,
        output.encoding,
        output.render.name(),
        summary.layer_percent,
        summary.layer_budget,
    ));
    if let Some(client) = &output.client {
        text.push_str(&format!(
            "\n{} {}: eager {} tokens on every request",
            client.product, client.version, client.eager_tokens
        ));
        if let Some(deferred) = &client.deferred {
            text.push_str(&format!(
                "; deferred {} on every request + {} once the model searches",
                deferred.every_request_tokens, deferred.searched_tokens
            ));
        }
        let pays = match client.pays {
            context_budget::tool_defs::Pays::Eager => "eager",
            context_budget::tool_defs::Pays::Deferred => "deferred",
        };
        let rule = crate::outside::line(&client.rule, crate::outside::MAX_MESSAGE_CHARS);
        text.push_str(&format!("\npays: {pays} ({rule})"));
    }
    if let Some(overhead) = &summary.request_overhead {
        text.push_str(&format!(
            "\nper request: {} tokens with the provider's fixed tool prompt (+{})",
            summary.request_tokens, overhead.tokens
        ));
        if let Some(percent) = summary.window_percent {
            text.push_str(&format!(
                " = {percent:.1}% of a {}-token window",
                summary.context_window.unwrap_or_default()
            ));
        }
    }
    let savings = &summary.savings;
    text.push_str(&format!(
        "\nsavings: {} tokens by hoisting repeated schema parts into $defs ({} tools), {} by \
         dropping keys models do not need ({} tools); with both: {} -> {} tokens",
        savings.hoisting.tokens_saved,
        savings.hoisting.tools.len(),
        savings.unneeded_keys.tokens_saved,
        savings.unneeded_keys.tools.len(),
        savings.tokens_before,
        savings.tokens_after,
    ));
    if savings.undescribed_parameter_count > 0 {
        text.push_str(&format!(
            "\nparameters without a description: {}",
            savings.undescribed_parameter_count
        ));
    }
    if let Some(heaviest) = savings.heaviest_tools.first() {
        text.push_str(&format!(
            "\nheaviest tool: {} ({} tokens)",
            crate::outside::line(&heaviest.name, crate::outside::MAX_CELL_CHARS),
            heaviest.tokens
        ));
    }
    for over in output.over_budget.iter().flatten() {
        let over = crate::outside::line(over, crate::outside::MAX_MESSAGE_CHARS);
        text.push_str(&format!("\nover budget: {over}"));
    }
    for warning in &output.warnings {
        let warning = crate::outside::line(warning, crate::outside::MAX_MESSAGE_CHARS);
        text.push_str(&format!("\nwarning: {warning}"));
    }
    text
}
