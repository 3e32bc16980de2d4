//! Row 8: what our tool list costs a model on every request. The built server's
//! `tools/list` over stdio, each tool as Claude Code sends it to the Messages API
//! (`{"name": "mcp__context-loader__<tool>", "description", "input_schema"}`, `$schema`
//! stripped), compact JSON, counted with o200k_base; beside the same measure of the
//! list before issue 19 (commit 8ab9342), which no longer exists to be run.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use context_budget::Tokenizer;
use serde_json::{Value, json};

use super::{Bench, table};

/// Per tool, at 8ab9342 (the same measure; 3,907 in all).
const BEFORE: &[(&str, usize)] = &[
    ("assemble-context", 587),
    ("count-tokens", 250),
    ("file-tokens", 507),
    ("fit-messages", 924),
    ("list-models", 132),
    ("load-files", 769),
    ("spec-budget", 189),
    ("spec-tokens", 549),
];
const BUDGET: usize = 2_000;
const MINIMAL_BUDGET: usize = 700;

pub fn definitions(bench: &mut Bench) -> anyhow::Result<String> {
    let binary = bench.artifact("context-loader");
    let all = tool_costs(&binary, &[])?;
    let minimal = tool_costs(&binary, &["--tools", "minimal"])?;
    let before = |name: &str| BEFORE.iter().find(|(n, _)| *n == name).map(|(_, t)| *t);
    let mut rows: Vec<Vec<String>> = all
        .iter()
        .map(|(name, tokens)| {
            vec![
                format!("`{name}`"),
                before(name).map_or("new".into(), |t| t.to_string()),
                tokens.to_string(),
            ]
        })
        .collect();
    let total: usize = all.iter().map(|(_, t)| t).sum();
    let total_before: usize = BEFORE.iter().map(|(_, t)| t).sum();
    let minimal_total: usize = minimal.iter().map(|(_, t)| t).sum();
    let minimal_before: usize = minimal.iter().filter_map(|(n, _)| before(n)).sum();
    rows.push(vec![
        "all tools".into(),
        total_before.to_string(),
        total.to_string(),
    ]);
    rows.push(vec![
        format!(
            "`--tools minimal` ({})",
            minimal
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        minimal_before.to_string(),
        minimal_total.to_string(),
    ]);
    bench.check(
        &format!("tool list as Claude Code sends it ≤ {BUDGET} o200k tokens"),
        total.to_string(),
        total <= BUDGET,
    );
    bench.check(
        &format!("`--tools minimal` ≤ {MINIMAL_BUDGET} o200k tokens"),
        minimal_total.to_string(),
        minimal_total <= MINIMAL_BUDGET,
    );
    Ok(format!(
        "## 8. The tool list as a model pays for it (o200k_base tokens, every request)\n\n\
         `tools/list` of the built server over stdio, each tool as Claude Code sends it \
         (`{{\"name\": \"mcp__context-loader__<tool>\", \"description\", \"input_schema\"}}`, \
         `$schema` stripped, compact JSON). Before: the same measure at commit 8ab9342, before \
         issue 19. Output schemas are not sent to the model and are not counted.\n\n{}",
        table(&["tool", "before", "now"], &rows)
    ))
}

/// Each listed tool's tokens, by name.
fn tool_costs(binary: &std::path::Path, global: &[&str]) -> anyhow::Result<Vec<(String, usize)>> {
    let mut child = Command::new(binary)
        .args(global)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let mut stdin = child.stdin.take().context("stdin is piped")?;
    let mut lines = BufReader::new(child.stdout.take().context("stdout is piped")?).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "xtask-bench", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    for message in &messages {
        writeln!(stdin, "{message}").context("write to the server")?;
    }
    let mut tools = None;
    for line in lines.by_ref() {
        let reply: Value = serde_json::from_str(&line.context("read from the server")?)?;
        if reply["id"] == 2 {
            tools = reply["result"]["tools"].as_array().cloned();
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let Some(tools) = tools else {
        bail!("the server answered no tools/list");
    };
    let mut costs: Vec<(String, usize)> = tools
        .iter()
        .map(|tool| {
            let mut schema = tool["inputSchema"].clone();
            if let Some(object) = schema.as_object_mut() {
                object.remove("$schema");
            }
            let name = tool["name"].as_str().unwrap_or_default().to_string();
            let sent = json!({
                "name": format!("mcp__context-loader__{name}"),
                "description": tool["description"],
                "input_schema": schema,
            });
            (name, Tokenizer::O200kBase.count(&sent.to_string()))
        })
        .collect();
    costs.sort();
    Ok(costs)
}
