//! What a list of tool definitions costs a model before the first message (issue 24):
//! MCP `tools/list` results, Anthropic or OpenAI tool lists, read into one
//! [`ToolDefinition`] shape, rendered as a client sends them ([`Rendering`]), counted
//! per tool and per server, and rewritten to measure what cutting would save
//! ([`savings`]); [`report`] puts it together as the `mcp-tokens` answer.
//!
//! Pure: the definitions come in as JSON values; connecting to servers is the
//! server crate's job.

pub mod client;
mod key_order;
mod parse;
mod render;
pub mod report;
pub mod savings;

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Tokenizer;

pub use key_order::legacy_client_key_order;
pub use parse::{MAX_SCHEMA_DEPTH, ToolDefsError, tool_definitions};
pub use render::{OpenAiRule, Rendered, anthropic_entry, render_tool, rendered_schema};
pub use report::{
    ClientCost, DEFAULT_MCP_MODEL, DeferredCost, Listed, McpTokens, McpTokensError, McpTokensQuery,
    MeasuredServer, Pays, ServerReport, Status, mcp_tokens, mcp_tokens_until, rendering_and_model,
};
pub use savings::{HoistWork, Savings};

/// The budgeting ADR's layer for tool definitions, in tokens (8th in priority).
pub const TOOL_LAYER_BUDGET: usize = 4_000;

/// Claude Code leaves out a tool whose full name (`mcp__<server>__<tool>`) is longer.
pub const MAX_TOOL_NAME_CHARS: usize = 128;

/// One tool's definition, whatever list it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    pub name: String,
    pub description: Option<String>,
    /// The JSON Schema object of its arguments (`inputSchema`, `input_schema` or
    /// `parameters`).
    pub input_schema: Value,
}

/// How a client puts a tool definition in front of the model.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Rendering {
    /// Claude Code's Messages API entry: compact JSON
    /// `{"name":"mcp__<server>__<tool>","description":…,"input_schema":…}`, the schema
    /// as listed (`$schema` included: Claude Code keeps it).
    #[default]
    Anthropic,
    /// An OpenAI function tool, counted by the function-calling rule of OpenAI's
    /// cookbook: an estimate (OpenAI does not publish how it renders tools).
    Openai,
    /// Codex CLI's namespace of functions, its schema rewrites included
    /// (`--client codex`; not a `--render` value).
    #[serde(rename = "codex", skip_deserializing)]
    #[schemars(skip)]
    Codex,
    /// Gemini CLI's function declarations with its `wait_for_previous` parameter
    /// (`--client gemini-cli`; not a `--render` value).
    #[serde(rename = "gemini-cli", skip_deserializing)]
    #[schemars(skip)]
    GeminiCli,
    /// GitHub Copilot CLI's functions, `<server>-<tool>`, its schema rewrites included
    /// (`--client copilot-cli`; not a `--render` value).
    #[serde(rename = "copilot-cli", skip_deserializing)]
    #[schemars(skip)]
    CopilotCli,
}

impl Rendering {
    /// `--render`'s values: the clients' own renderings come with `--client`.
    pub const NAMES: [&'static str; 2] = ["anthropic", "openai"];

    pub fn name(self) -> &'static str {
        match self {
            Rendering::Anthropic => "anthropic",
            Rendering::Openai => "openai",
            Rendering::Codex => "codex",
            Rendering::GeminiCli => "gemini-cli",
            Rendering::CopilotCli => "copilot-cli",
        }
    }

    /// How the client of `shape` renders its tools.
    pub fn of_client(shape: crate::clients::ToolShape) -> Rendering {
        match shape {
            crate::clients::ToolShape::ClaudeCode => Rendering::Anthropic,
            crate::clients::ToolShape::Codex => Rendering::Codex,
            crate::clients::ToolShape::GeminiCli => Rendering::GeminiCli,
            crate::clients::ToolShape::CopilotCli => Rendering::CopilotCli,
        }
    }

    pub fn from_name(name: &str) -> Option<Rendering> {
        match name {
            "anthropic" => Some(Rendering::Anthropic),
            "openai" => Some(Rendering::Openai),
            _ => None,
        }
    }
}

/// What one server (or one list of tools) advertises.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerDefinitions {
    /// The server's name in the client config; `None` for a bare tool list (tool
    /// names are then counted as given, without the `mcp__<server>__` prefix).
    pub name: Option<String>,
    pub tools: Vec<ToolDefinition>,
    /// The `instructions` of its initialize result: clients put them in the system
    /// prompt.
    pub instructions: Option<String>,
}

/// A tool's full name as Claude Code sends it: `mcp__<server>__<tool>`, every character
/// outside `A-Za-z0-9_-` replaced by `_` in both parts.
pub fn claude_code_name(server: &str, tool: &str) -> String {
    format!("mcp__{}__{}", normalize_name(server), normalize_name(tool))
}

fn normalize_name(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
            _ => '_',
        })
        .collect()
}

/// The provider's fixed tool-use system prompt, added once to a request that has tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ToolUsePrompt {
    /// With `tool_choice` `auto` or `none`.
    pub auto_none: usize,
    /// With `tool_choice` `any` or `tool`.
    pub any_tool: usize,
}

/// The table in `data/catalog-overrides.json` (`tool_use_system_prompt`).
#[derive(Debug, Deserialize)]
struct ToolUseTable {
    source: String,
    rows: Vec<ToolUseRow>,
}

#[derive(Debug, Deserialize)]
struct ToolUseRow {
    /// Model-name prefixes this row covers; empty: every other Claude model.
    prefixes: Vec<String>,
    auto_none: usize,
    any_tool: usize,
}

static TOOL_USE_TABLE: LazyLock<ToolUseTable> = LazyLock::new(|| {
    #[derive(Deserialize)]
    struct File {
        tool_use_system_prompt: ToolUseTable,
    }
    let file: File = serde_json::from_str(include_str!("../../data/catalog-overrides.json"))
        .expect("the shipped catalog overrides hold the tool-use system prompt table");
    file.tool_use_system_prompt
});

/// Anthropic's tool-use system prompt for a Claude model (by its catalog name), and
/// where the figures come from. `None` for a model that is not Claude.
pub fn anthropic_tool_use_prompt(model: &str) -> Option<(ToolUsePrompt, &'static str)> {
    if !model.starts_with("claude") {
        return None;
    }
    let table = &*TOOL_USE_TABLE;
    let row = table
        .rows
        .iter()
        .find(|row| row.prefixes.iter().any(|p| model.starts_with(p.as_str())))
        .or_else(|| table.rows.iter().find(|row| row.prefixes.is_empty()))?;
    Some((
        ToolUsePrompt {
            auto_none: row.auto_none,
            any_tool: row.any_tool,
        },
        table.source.as_str(),
    ))
}

/// One tool's cost.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ToolCost {
    /// The name the model sees.
    pub name: String,
    /// The whole definition as rendered.
    pub tokens: usize,
    pub description_tokens: usize,
    /// The input schema as compact JSON.
    pub schema_tokens: usize,
    /// Where the schema goes beyond what the rendering's counting rule covers
    /// (`--render openai`: nested schemas, `$ref`, non-string types).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub beyond_rule: Vec<String>,
}

/// A tool a client leaves out, and why.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LeftOut {
    pub name: String,
    pub reason: String,
}

/// One server's (or one tool list's) cost.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ServerCost {
    /// Its tools and its instructions.
    pub total_tokens: usize,
    pub tool_tokens: usize,
    pub instructions_tokens: usize,
    /// Heaviest first.
    pub tools: Vec<ToolCost>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
}

impl ServerCost {
    /// Take a provider's exact figures for the server: `tool_tokens` for all its
    /// tools together and `instructions_tokens`. A provider counts a request, not a
    /// tool, so each tool's figures become the estimate scaled to the exact total
    /// (largest remainders, so the tools still add up to it).
    pub fn scale_to(&mut self, tool_tokens: usize, instructions_tokens: usize) {
        let estimated = self.tool_tokens;
        let share = |part: usize| -> (usize, u128) {
            if estimated == 0 {
                return (0, 0);
            }
            let exact = part as u128 * tool_tokens as u128;
            (
                (exact / estimated as u128) as usize,
                exact % estimated as u128,
            )
        };
        let mut remainders = Vec::with_capacity(self.tools.len());
        for (i, tool) in self.tools.iter_mut().enumerate() {
            let (tokens, remainder) = share(tool.tokens);
            remainders.push((remainder, i));
            tool.tokens = tokens;
            tool.description_tokens = share(tool.description_tokens).0;
            tool.schema_tokens = share(tool.schema_tokens).0;
        }
        let assigned: usize = self.tools.iter().map(|t| t.tokens).sum();
        remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, i) in remainders
            .into_iter()
            .take(tool_tokens.saturating_sub(assigned))
        {
            self.tools[i].tokens += 1;
        }
        self.tools
            .sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.name.cmp(&b.name)));
        self.tool_tokens = if self.tools.is_empty() {
            0
        } else {
            tool_tokens
        };
        self.instructions_tokens = instructions_tokens;
        self.total_tokens = self.tool_tokens + self.instructions_tokens;
    }
}

/// Asked between tools whether the caller still wants the answer (a cancelled
/// request, a command line's `--timeout`): true stops the work.
pub type Stop<'a> = &'a (dyn Fn() -> bool + Sync);

/// Never stops.
pub fn never() -> bool {
    false
}

/// The work was stopped by its [`Stop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// Count one server's definitions with `tokenizer` in `rendering`.
pub fn measure_server(
    server: &ServerDefinitions,
    tokenizer: Tokenizer,
    rendering: Rendering,
) -> ServerCost {
    measure_server_until(server, tokenizer, rendering, &never).expect("never stopped")
}

fn measure_server_until(
    server: &ServerDefinitions,
    tokenizer: Tokenizer,
    rendering: Rendering,
    stop: Stop,
) -> Result<ServerCost, Stopped> {
    let mut tools = Vec::with_capacity(server.tools.len());
    let mut left_out = Vec::new();
    for tool in &server.tools {
        if stop() {
            return Err(Stopped);
        }
        let name = rendered_name(server.name.as_deref(), &tool.name, rendering);
        if rendering == Rendering::Anthropic && name.chars().count() > MAX_TOOL_NAME_CHARS {
            left_out.push(LeftOut {
                reason: format!(
                    "its name is {} characters, over Claude Code's {MAX_TOOL_NAME_CHARS}: Claude Code \
                     leaves it out",
                    name.chars().count()
                ),
                name,
            });
            continue;
        }
        tools.push(tool_cost(tool, &name, tokenizer, rendering));
    }
    tools.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.name.cmp(&b.name)));
    let tool_tokens: usize = tools.iter().map(|t| t.tokens).sum();
    let instructions = server.instructions.as_deref();
    let instructions_tokens = match (rendering, server.name.as_deref()) {
        // The namespace around the tools, its description the instructions: the
        // whole namespace counted, less its tools.
        (Rendering::Codex, Some(name)) => {
            let functions = server
                .tools
                .iter()
                .map(|tool| client::codex_function(tool, &client::codex_name(&tool.name), false))
                .collect();
            let namespace = client::codex_namespace(name, instructions, functions);
            tokenizer
                .count(&compact(&namespace))
                .saturating_sub(tool_tokens)
        }
        (Rendering::Codex, None) => 0,
        (Rendering::GeminiCli, Some(name)) => instructions.map_or(0, |text| {
            tokenizer.count(&client::gemini_instructions(name, text))
        }),
        // Copilot CLI passes them to its model in no request.
        (Rendering::CopilotCli, _) => 0,
        _ => instructions.map_or(0, |text| tokenizer.count(text)),
    };
    Ok(ServerCost {
        total_tokens: tool_tokens + instructions_tokens,
        tool_tokens,
        instructions_tokens,
        tools,
        left_out,
    })
}

/// The name the model sees: `mcp__<server>__<tool>` for a server, the tool's own name
/// for a bare list.
pub fn full_name(server: Option<&str>, tool: &str) -> String {
    match server {
        Some(server) => claude_code_name(server, tool),
        None => tool.to_string(),
    }
}

/// The name the model sees in `rendering`: Claude Code's [`full_name`] (also for
/// the cookbook rule), Codex's function name inside its server's namespace, Gemini
/// CLI's `mcp_<server>_<tool>`, Copilot CLI's `<server>-<tool>`. A bare list keeps
/// its names (Codex's rule applied).
pub fn rendered_name(server: Option<&str>, tool: &str, rendering: Rendering) -> String {
    match (rendering, server) {
        (Rendering::Codex, _) => client::codex_name(tool),
        (Rendering::GeminiCli, Some(server)) => client::gemini_name(server, tool),
        (Rendering::CopilotCli, Some(server)) => client::copilot_name(server, tool),
        (Rendering::GeminiCli | Rendering::CopilotCli, None) => tool.to_string(),
        (Rendering::Anthropic | Rendering::Openai, server) => full_name(server, tool),
    }
}

fn tool_cost(
    tool: &ToolDefinition,
    name: &str,
    tokenizer: Tokenizer,
    rendering: Rendering,
) -> ToolCost {
    let rendered = render_tool(tool, name, tokenizer, rendering);
    let description = tool.description.as_deref().unwrap_or_default();
    ToolCost {
        name: name.to_string(),
        tokens: rendered.tokens,
        description_tokens: tokenizer.count(description),
        schema_tokens: tokenizer.count(&compact(&render::rendered_schema(
            &tool.input_schema,
            rendering,
        ))),
        beyond_rule: rendered.beyond_rule,
    }
}

/// Compact JSON (`JSON.stringify`), keys in their given order.
pub fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// What a request with these tools adds once, whatever the tools: the provider's
/// tool-use system prompt (Anthropic) or the rule's closing tokens (OpenAI).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RequestOverhead {
    /// With `tool_choice` `auto` (the default); what `request_tokens` adds.
    pub tokens: usize,
    /// With `tool_choice` `any` or a named tool, where the provider differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forced_choice_tokens: Option<usize>,
    pub source: &'static str,
}

/// The totals over every measured server.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// Every server's tools and instructions.
    pub total_tokens: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_overhead: Option<RequestOverhead>,
    /// `total_tokens` plus the request overhead: what the first request pays.
    pub request_tokens: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// `request_tokens` as a percentage of the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_percent: Option<f64>,
    /// The budgeting ADR's tool-definitions layer.
    pub layer_budget: usize,
    /// `total_tokens` as a percentage of that layer.
    pub layer_percent: f64,
    pub savings: Savings,
}

/// The compact JSON bytes of every tool's schema: what the hoisting budget scales with.
pub fn schema_bytes(servers: &[ServerDefinitions]) -> usize {
    servers
        .iter()
        .flat_map(|s| &s.tools)
        .map(|t| compact(&t.input_schema).len())
        .sum()
}

impl Summary {
    /// The totals again after servers' costs changed (exact figures taken in).
    pub fn retotal(&mut self, costs: &[ServerCost]) {
        self.total_tokens = costs.iter().map(|c| c.total_tokens).sum();
        self.request_tokens =
            self.total_tokens + self.request_overhead.as_ref().map_or(0, |o| o.tokens);
        self.window_percent = self
            .context_window
            .filter(|w| *w > 0)
            .map(|w| percent(self.request_tokens, w as f64));
        self.layer_percent = percent(self.total_tokens, self.layer_budget as f64);
    }
}

fn percent(part: usize, whole: f64) -> f64 {
    (part as f64 * 10_000.0 / whole).round() / 100.0
}

/// The cookbook rule's source, shown with its overhead.
pub const OPENAI_RULE_SOURCE: &str = "OpenAI cookbook, How to count tokens with tiktoken \
(num_tokens_for_tools): 12 tokens closing the function list";

/// Measure every server, and the totals, for the model whose tokenizer is
/// `tokenizer` (catalog name `model`, window `context_window`). The hoisting search
/// may do `hoist_work_factor` times the schemas' bytes of work ([`HoistWork`]).
pub fn measure(
    servers: &[ServerDefinitions],
    model: &str,
    tokenizer: Tokenizer,
    context_window: Option<u64>,
    rendering: Rendering,
    hoist_work_factor: usize,
) -> (Vec<ServerCost>, Summary) {
    let settings = (
        model,
        tokenizer,
        context_window,
        rendering,
        hoist_work_factor,
    );
    measure_until(servers, settings, &never).expect("never stopped")
}

/// [`measure`] asking `stop` between tools.
pub fn measure_until(
    servers: &[ServerDefinitions],
    (model, tokenizer, context_window, rendering, hoist_work_factor): (
        &str,
        Tokenizer,
        Option<u64>,
        Rendering,
        usize,
    ),
    stop: Stop,
) -> Result<(Vec<ServerCost>, Summary), Stopped> {
    let costs: Vec<ServerCost> = servers
        .iter()
        .map(|server| measure_server_until(server, tokenizer, rendering, stop))
        .collect::<Result<_, _>>()?;
    let total_tokens = costs.iter().map(|c| c.total_tokens).sum();
    let request_overhead = match rendering {
        Rendering::Anthropic => {
            anthropic_tool_use_prompt(model).map(|(prompt, source)| RequestOverhead {
                tokens: prompt.auto_none,
                forced_choice_tokens: Some(prompt.any_tool),
                source,
            })
        }
        Rendering::Openai => Some(RequestOverhead {
            tokens: OpenAiRule::for_tokenizer(tokenizer).func_end,
            forced_choice_tokens: None,
            source: OPENAI_RULE_SOURCE,
        }),
        // What the client's own prompt adds is the client's, not the servers'.
        Rendering::Codex | Rendering::GeminiCli | Rendering::CopilotCli => None,
    };
    let any_tools = costs.iter().any(|c| !c.tools.is_empty());
    let request_overhead = request_overhead.filter(|_| any_tools);
    let request_tokens = total_tokens + request_overhead.as_ref().map_or(0, |o| o.tokens);
    let summary = Summary {
        total_tokens,
        request_overhead,
        request_tokens,
        context_window,
        window_percent: context_window
            .filter(|w| *w > 0)
            .map(|w| percent(request_tokens, w as f64)),
        layer_budget: TOOL_LAYER_BUDGET,
        layer_percent: percent(total_tokens, TOOL_LAYER_BUDGET as f64),
        savings: savings::savings_until(
            servers,
            tokenizer,
            rendering,
            &mut HoistWork::for_call(schema_bytes(servers), hoist_work_factor),
            stop,
        )?,
    };
    Ok((costs, summary))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str, description: &str, schema: Value) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: Some(description.into()),
            input_schema: schema,
        }
    }

    #[test]
    fn claude_code_names_replace_other_characters_and_leave_out_long_ones() {
        assert_eq!(
            claude_code_name("my server.v2", "get/item"),
            "mcp__my_server_v2__get_item"
        );
        let long = "x".repeat(120);
        let server = ServerDefinitions {
            name: Some("srv".into()),
            tools: vec![
                tool(&long, "too long", json!({})),
                tool("ok", "fine", json!({"type": "object"})),
            ],
            instructions: None,
        };
        let cost = measure_server(&server, Tokenizer::O200kBase, Rendering::Anthropic);
        assert_eq!(cost.tools.len(), 1);
        assert_eq!(cost.left_out.len(), 1);
        assert_eq!(cost.left_out[0].name, format!("mcp__srv__{long}"));
        let entry =
            r#"{"name":"mcp__srv__ok","description":"fine","input_schema":{"type":"object"}}"#;
        assert_eq!(cost.tools[0].tokens, Tokenizer::O200kBase.count(entry));
    }

    #[test]
    fn exact_totals_scale_the_tools_and_still_add_up() {
        let server = ServerDefinitions {
            name: Some("s".into()),
            tools: vec![
                tool("a", "first tool here", json!({"type": "object"})),
                tool(
                    "b",
                    "second",
                    json!({"type": "object", "properties": {"x": {"type": "string"}}}),
                ),
                tool("c", "third", json!({})),
            ],
            instructions: Some("hi".into()),
        };
        let mut cost = measure_server(&server, Tokenizer::O200kBase, Rendering::Anthropic);
        let estimate: Vec<usize> = cost.tools.iter().map(|t| t.tokens).collect();
        cost.scale_to(101, 7);
        assert_eq!(cost.tools.iter().map(|t| t.tokens).sum::<usize>(), 101);
        assert_eq!(
            (
                cost.tool_tokens,
                cost.instructions_tokens,
                cost.total_tokens
            ),
            (101, 7, 108)
        );
        // Each tool within one token of its share.
        let sum: usize = estimate.iter().sum();
        for (tool, before) in cost.tools.iter().zip(&estimate) {
            let share = *before as f64 * 101.0 / sum as f64;
            assert!(
                (tool.tokens as f64 - share).abs() < 1.0,
                "{} vs {share}",
                tool.tokens
            );
        }
    }

    #[test]
    fn the_tool_use_prompt_comes_from_the_catalog_table() {
        let (current, source) = anthropic_tool_use_prompt("claude-opus-4-7").expect("claude");
        assert_eq!((current.auto_none, current.any_tool), (346, 313));
        assert!(source.contains("anthropic.com"), "{source}");
        assert_eq!(anthropic_tool_use_prompt("gpt-4o"), None);
    }

    #[test]
    fn the_request_pays_the_prompt_once_and_instructions_count() {
        let server = |name: &str| ServerDefinitions {
            name: Some(name.into()),
            tools: vec![tool("a", "b", json!({"type": "object"}))],
            instructions: Some("Use a.".into()),
        };
        let servers = [server("one"), server("two")];
        let (costs, summary) = measure(
            &servers,
            "claude-opus-4-7",
            Tokenizer::Claude47Estimate,
            Some(200_000),
            Rendering::Anthropic,
            savings::DEFAULT_HOIST_WORK_FACTOR,
        );
        let instructions = Tokenizer::Claude47Estimate.count("Use a.");
        assert_eq!(costs[0].instructions_tokens, instructions);
        assert_eq!(
            summary.total_tokens,
            costs[0].total_tokens + costs[1].total_tokens
        );
        assert_eq!(summary.request_tokens, summary.total_tokens + 346);
    }
}
