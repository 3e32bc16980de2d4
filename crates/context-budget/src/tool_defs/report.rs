//! The `mcp-tokens` answer: every server's row, the totals, what is over a budget and
//! what went differently from what was asked, from tool lists a caller sent and servers
//! a client already connected to ([`MeasuredServer`]). Synchronous like the rest of
//! the engine: provider counts come in through [`ExactCounter`], which may block.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use super::{
    MAX_TOOL_NAME_CHARS, Rendering, ServerCost, ServerDefinitions, Summary, ToolDefsError,
    anthropic_entry, anthropic_tool_use_prompt, client as shapes, compact, full_name,
    measure_until, tool_definitions,
};
use crate::clients::{Client, Deferral, InstructionsPlace, ToolRules};
use crate::{CountError, ExactCounter, TokenCounter, Tokenizer};

/// The model when none is named: a current Claude, what most MCP clients talk to.
pub const DEFAULT_MCP_MODEL: &str = "claude";

/// Most count_tokens requests one call sends (a baseline, then one per server with
/// tools and one per server with instructions), one at a time: the API is rate
/// limited per minute. Servers past it keep the estimate, with a warning.
pub const MAX_EXACT_REQUESTS: usize = 64;
/// Largest tool list (compact JSON) sent in one count_tokens request.
pub const MAX_EXACT_REQUEST_BYTES: usize = 8 * 1024 * 1024;
/// No count_tokens request is started this long after the call's first one (each
/// is also bounded by `--anthropic-timeout-ms`).
pub const EXACT_DEADLINE: Duration = Duration::from_secs(30);
/// `method` of an answer in the `openai` rendering: the cookbook's rule is an
/// estimate of what OpenAI's API counts, whatever the encoding.
pub const OPENAI_RULE_METHOD: &str = "estimate: OpenAI cookbook function-calling rule \
(num_tokens_for_tools) over the model's encoding; OpenAI does not publish how it renders tools, \
and names are Claude Code's (`--client codex` renders what Codex sends)";
/// `method` of an answer whose servers were all counted by the API.
pub const EXACT_TOOLS_METHOD: &str = "exact: Anthropic count_tokens API with `tools`, per server: \
its request less the same request without tools, less the tool-use system prompt (counted once, \
in request_overhead); each tool: the estimate scaled to its server's exact total";

/// One server as a client found it: its definitions, or why there are none.
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
    /// The server `name` (of the config `source`), not measured for `error`.
    pub fn failed(name: String, source: Option<PathBuf>, error: String) -> MeasuredServer {
        MeasuredServer {
            definitions: ServerDefinitions {
                name: Some(name),
                ..ServerDefinitions::default()
            },
            error: Some(error),
            held: false,
            listed: None,
            source,
        }
    }
}

/// What else a server lists: not sent to the model with every request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Listed {
    pub prompts: usize,
    pub resources: usize,
    pub resource_templates: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Error,
    /// Not run: a project's server nobody approved.
    Skipped,
}

/// One server's row.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct McpTokens {
    pub model: String,
    pub encoding: &'static str,
    pub exact: bool,
    pub method: &'static str,
    pub render: Rendering,
    /// `client`: what that client sends, eager and deferred, and which it pays.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientCost>,
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
    /// The terminal table lists each tool under its server (`--per-tool`): set by
    /// the caller that draws it; never part of the answer.
    #[serde(skip)]
    pub per_tool: bool,
}

/// What to measure and how: a caller's tool list, servers already connected to, or
/// both.
#[derive(Debug, Clone, Default)]
pub struct McpTokensQuery {
    /// tools/list `tools`, Anthropic or OpenAI tools.
    pub tools: Vec<Value>,
    /// The server of `tools`: named `mcp__<server>__<tool>` when given.
    pub server: Option<String>,
    /// Default [`DEFAULT_MCP_MODEL`].
    pub model: Option<String>,
    pub render: Option<Rendering>,
    /// Render and count as this client sends the tools (its rendering, its default
    /// model, its deferral rule); overrides `render`.
    pub client: Option<&'static Client>,
    /// Claude Code's `ENABLE_TOOL_SEARCH` (command line: the environment's), which
    /// decides whether it defers.
    pub tool_search: Option<String>,
    /// Over this many tokens in total (or, with `per_server`, in any one server):
    /// `over_budget` says what.
    pub max_tokens: Option<usize>,
    pub per_server: bool,
    /// Servers a client connected to and listed.
    pub measured: Vec<MeasuredServer>,
    /// The client configs those servers came from.
    pub configs_read: Vec<PathBuf>,
}

/// Why nothing was measured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpTokensError {
    #[error("`tools` cannot be read: {0}")]
    Unreadable(ToolDefsError),
    #[error("no tool definitions to measure")]
    NoTools,
    /// The model is unknown or a name over the limit.
    #[error(transparent)]
    Count(#[from] CountError),
}

/// Read, count and total the definitions.
pub fn mcp_tokens(
    counter: &TokenCounter,
    exact: Option<&dyn ExactCounter>,
    query: McpTokensQuery,
) -> Result<McpTokens, McpTokensError> {
    mcp_tokens_until(counter, exact, query, &super::never)
}

/// [`mcp_tokens`] asking `stop` between tools (and before each count_tokens
/// request): a cancelled call ends with [`CountError::Cancelled`] instead of
/// counting on for nobody.
pub fn mcp_tokens_until(
    counter: &TokenCounter,
    exact: Option<&dyn ExactCounter>,
    query: McpTokensQuery,
    stop: super::Stop,
) -> Result<McpTokens, McpTokensError> {
    let (render, requested) =
        rendering_and_model(query.client, query.render, query.model.as_deref());
    let model = counter.resolve(Some(requested))?;
    let tokenizer = model.tokenizer();
    let mut servers: Vec<MeasuredServer> = query.measured;
    let configs = query
        .configs_read
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if !query.tools.is_empty() || servers.is_empty() {
        if let Some(server) = &query.server {
            counter
                .check_name("server", server)
                .map_err(CountError::Limit)?;
        }
        let tools =
            tool_definitions(Value::Array(query.tools)).map_err(McpTokensError::Unreadable)?;
        if tools.is_empty() {
            return Err(McpTokensError::NoTools);
        }
        servers.push(MeasuredServer {
            definitions: ServerDefinitions {
                name: query.server,
                tools,
                instructions: None,
            },
            error: None,
            held: false,
            listed: None,
            source: None,
        });
    }
    let mut warnings = Vec::new();
    if let (Some(client), Some(asked)) = (query.client, query.render)
        && asked != render
    {
        warnings.push(format!(
            "`render` {} not used: `client` {} renders its own way",
            asked.name(),
            client.id
        ));
    }
    // Moved out, not copied: the rows below need only each server's name.
    let ok: Vec<ServerDefinitions> = servers
        .iter_mut()
        .filter(|s| s.error.is_none())
        .map(|s| ServerDefinitions {
            name: s.definitions.name.clone(),
            tools: std::mem::take(&mut s.definitions.tools),
            instructions: s.definitions.instructions.take(),
        })
        .collect();
    let window = model.entry().map(|e| e.context_window);
    let settings = (
        model.name(),
        tokenizer,
        window,
        render,
        counter.limits().hoist_work_factor,
    );
    let (costs, summary) = measure_until(&ok, settings, stop).map_err(|_| CountError::Cancelled)?;
    let (mut costs, mut summary) = (costs, summary);
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
    let rendered = query.client.and_then(|c| c.tools.map(|rules| (c, rules)));
    let client = rendered.map(|(client, rules)| {
        let context = ClientContext {
            model: requested,
            window,
            tool_search: query.tool_search.as_deref(),
        };
        client_cost((client, rules), &ok, &costs, tokenizer, context)
    });
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
    let over_budget = query.max_tokens.map(|limit| {
        if query.per_server {
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
        exact: all_exact || (tokenizer.is_exact() && render != Rendering::Openai),
        method: if all_exact {
            EXACT_TOOLS_METHOD
        } else if render == Rendering::Openai {
            OPENAI_RULE_METHOD
        } else {
            tokenizer.method()
        },
        render,
        client,
        summary,
        servers: reports,
        over_budget,
        configs,
        per_tool: false,
    })
}

/// The rendering and the model name of a call: a client's own rendering and (unless
/// `model` names one) its default model; else `render` and `model`, by default
/// Claude Code's rendering and [`DEFAULT_MCP_MODEL`].
pub fn rendering_and_model<'a>(
    client: Option<&'static Client>,
    render: Option<Rendering>,
    model: Option<&'a str>,
) -> (Rendering, &'a str) {
    match client.and_then(|client| client.tools) {
        Some(rules) => (
            Rendering::of_client(rules.shape),
            model.unwrap_or(rules.default_model),
        ),
        None => (
            render.unwrap_or_default(),
            model.unwrap_or(DEFAULT_MCP_MODEL),
        ),
    }
}

/// Which of the two costs a client's user pays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Pays {
    /// Every definition on every request.
    Eager,
    /// What stays in every request, and the definitions once the model searches.
    Deferred,
}

/// What one client sends for the measured servers, both ways, and which it pays.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ClientCost {
    /// `--client`'s name.
    pub client: &'static str,
    pub product: &'static str,
    /// The version whose requests the rules were recorded from.
    pub version: &'static str,
    /// Every definition (and the instructions where the client puts them) on every
    /// request: the servers' `total_tokens`.
    pub eager_tokens: usize,
    /// With the tools deferred (absent: the client never defers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred: Option<DeferredCost>,
    /// Which of the two this client pays, by `rule`.
    pub pays: Pays,
    /// The client's rule, applied to this model and these tools.
    pub rule: String,
}

/// The deferred cost: what stays in every request, and what the model's search
/// brings in once (and keeps in the history).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DeferredCost {
    pub every_request_tokens: usize,
    pub searched_tokens: usize,
    /// What stays in every request.
    pub every_request: &'static str,
}

/// What decides a client's deferral besides the tools.
#[derive(Debug, Clone, Copy)]
struct ClientContext<'a> {
    model: &'a str,
    window: Option<u64>,
    tool_search: Option<&'a str>,
}

fn client_cost(
    (client, rules): (&'static Client, ToolRules),
    servers: &[ServerDefinitions],
    costs: &[ServerCost],
    tokenizer: Tokenizer,
    context: ClientContext,
) -> ClientCost {
    let eager_tokens: usize = costs.iter().map(|c| c.total_tokens).sum();
    let tool_tokens: usize = costs.iter().map(|c| c.tool_tokens).sum();
    let (deferred, pays, rule) = match rules.deferral {
        Deferral::Never => (
            None,
            Pays::Eager,
            format!("{} never defers tools", client.product),
        ),
        Deferral::ToolSearch { auto_percent } => {
            let names: usize = costs
                .iter()
                .map(|c| {
                    tokenizer.count(&shapes::claude_code_deferred_names(
                        c.tools.iter().map(|t| t.name.as_str()),
                    ))
                })
                .sum();
            let instructions: usize = costs.iter().map(|c| c.instructions_tokens).sum();
            let deferred = DeferredCost {
                every_request_tokens: names + instructions,
                searched_tokens: tool_tokens,
                every_request: "each deferred tool's name, one a line, and the instructions in \
                                the system prompt",
            };
            let (pays, rule) = claude_code_rule(context, auto_percent, tool_tokens);
            (Some(deferred), pays, rule)
        }
        Deferral::OwnModels { prefixes } => {
            let line_chars = match rules.instructions {
                InstructionsPlace::Namespace { line_chars } => line_chars,
                _ => usize::MAX,
            };
            let (mut lines, mut searched) = (0, 0);
            for server in servers.iter().filter(|s| !s.tools.is_empty()) {
                let name = server.name.as_deref().unwrap_or("tools");
                let instructions = server.instructions.as_deref();
                lines +=
                    tokenizer.count(&shapes::codex_server_line(name, instructions, line_chars));
                let functions = server
                    .tools
                    .iter()
                    .map(|t| shapes::codex_function(t, &shapes::codex_name(&t.name), true))
                    .collect();
                let namespace = shapes::codex_namespace(name, instructions, functions);
                searched += tokenizer.count(&compact(&shapes::codex_search_output(namespace)));
            }
            let own = prefixes.iter().any(|p| context.model.starts_with(p));
            let deferred = DeferredCost {
                every_request_tokens: lines,
                searched_tokens: searched,
                every_request: "one line per server: `- mcp__<server>: ` and its instructions \
                                (cut to 250 characters)",
            };
            let rule = match own {
                true => format!(
                    "Codex defers MCP tools behind tool_search for its own models ({}): `{}` is one",
                    prefixes.join("*, ") + "*",
                    context.model
                ),
                false => format!(
                    "Codex sends every definition for a model it does not know: `{}` is not one of \
                     its own ({})",
                    context.model,
                    prefixes.join("*, ") + "*"
                ),
            };
            let pays = if own { Pays::Deferred } else { Pays::Eager };
            (Some(deferred), pays, rule)
        }
    };
    ClientCost {
        client: client.id,
        product: client.product,
        version: client.version,
        eager_tokens,
        deferred,
        pays,
        rule,
    }
}

/// Claude Code 2.1.328's choice (its `ENABLE_TOOL_SEARCH` reading): unset, `true`,
/// `1`, `auto:0` or anything it does not know: tool search; `false`, `0`, `no`,
/// `off` or `auto:100`: none; `auto` or `auto:N`: only once the deferred tools reach
/// N % (default `auto_percent`) of the model's window.
fn claude_code_rule(
    context: ClientContext,
    auto_percent: u8,
    tool_tokens: usize,
) -> (Pays, String) {
    let setting = context.tool_search.map(str::trim).filter(|s| !s.is_empty());
    let percent = match setting {
        Some("auto") => Some(f64::from(auto_percent)),
        Some(value) => value
            .strip_prefix("auto:")
            .and_then(|n| n.trim().parse::<f64>().ok())
            .map(|n| n.clamp(0.0, 100.0)),
        None => None,
    };
    let shown = setting.map_or_else(|| "unset".to_string(), |s| format!("`{s}`"));
    match (setting, percent) {
        (_, Some(p)) if p <= 0.0 => (
            Pays::Deferred,
            format!("ENABLE_TOOL_SEARCH {shown}: tool search always"),
        ),
        (_, Some(p)) if p >= 100.0 => (
            Pays::Eager,
            format!("ENABLE_TOOL_SEARCH {shown}: no tool search"),
        ),
        (_, Some(p)) => match context.window {
            Some(window) => {
                let threshold = (window as f64 * p / 100.0).floor() as usize;
                let pays = match tool_tokens >= threshold {
                    true => Pays::Deferred,
                    false => Pays::Eager,
                };
                (
                    pays,
                    format!(
                        "ENABLE_TOOL_SEARCH {shown}: tool search once the tools reach {p}% of the \
                         {window}-token window ({threshold} tokens); these are {tool_tokens}"
                    ),
                )
            }
            None => (
                Pays::Deferred,
                format!(
                    "ENABLE_TOOL_SEARCH {shown}: the model's window is unknown; counted as deferred"
                ),
            ),
        },
        (Some(off), None)
            if ["false", "0", "no", "off"].contains(&off.to_ascii_lowercase().as_str()) =>
        {
            (
                Pays::Eager,
                format!("ENABLE_TOOL_SEARCH {shown}: no tool search"),
            )
        }
        _ => (
            Pays::Deferred,
            format!("ENABLE_TOOL_SEARCH {shown}: Claude Code defers MCP tools behind ToolSearch"),
        ),
    }
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
        let bytes =
            tools.iter().map(|t| compact(t).len()).sum::<usize>() + system.map_or(0, str::len);
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

    use serde_json::json;

    use super::super::{ToolDefinition, measure_server};
    use super::*;
    use crate::{ExactCountFailure, Message, ModelEntry, Tokenizer};

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

    /// A stopped call returns at its next check, not after measuring every tool.
    #[test]
    fn a_stopped_call_ends_at_once_as_cancelled() {
        let counter = TokenCounter::new(
            std::sync::Arc::new(crate::Catalog::builtin().clone()),
            crate::DEFAULT_MAX_INPUT_BYTES,
        );
        let query = || McpTokensQuery {
            tools: (0..1_000)
                .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
                .collect(),
            model: Some("gpt-4o".into()),
            ..McpTokensQuery::default()
        };
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let stop = || asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 10;
        let stopped = mcp_tokens_until(&counter, None, query(), &stop);
        assert_eq!(
            stopped.unwrap_err(),
            McpTokensError::Count(CountError::Cancelled)
        );
        assert_eq!(asked.into_inner(), 11, "asked once per tool until stopped");
        let whole = mcp_tokens_until(&counter, None, query(), &|| false).unwrap();
        assert_eq!(whole.servers[0].cost.tools.len(), 1_000);
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
