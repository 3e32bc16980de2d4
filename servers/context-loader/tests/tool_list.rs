//! What the tool list costs a model, and `--tools`. A client sends every listed tool's
//! name, description and input schema to the model on every request; Claude Code
//! sends each as `{"name": "mcp__<server>__<tool>", "description", "input_schema"}`
//! (`$schema` stripped). These tests measure the list exactly that way, with
//! o200k_base, and fail when it grows past its budget: a longer description or a new
//! parameter has to fit, or the budget has to be argued for.

use context_budget::Tokenizer;
use rmcp::model::{CallToolRequestParams, Tool};
use serde_json::{Value, json};
use test_support::{ALL, Binary, Transport};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// Every tool, as Claude Code sends them (the budget; the budgeting ADR gives
/// the whole tool-definitions layer 4,000).
const ALL_TOOLS_BUDGET: usize = 2_000;
/// `--tools minimal`: count-tokens, file-tokens, load-files.
const MINIMAL_BUDGET: usize = 700;

/// One tool's definition as Claude Code puts it in a Messages API request.
fn as_claude_code_sends(tool: &Tool) -> Value {
    let mut schema = (*tool.input_schema).clone();
    schema.remove("$schema");
    json!({
        "name": format!("mcp__context-loader__{}", tool.name),
        "description": tool.description.as_deref().unwrap_or_default(),
        "input_schema": schema,
    })
}

/// Each tool's tokens, and the total.
fn cost(tools: &[Tool]) -> (Vec<(String, usize)>, usize) {
    let per_tool: Vec<(String, usize)> = tools
        .iter()
        .map(|tool| {
            let json = serde_json::to_string(&as_claude_code_sends(tool)).expect("JSON");
            (tool.name.to_string(), Tokenizer::O200kBase.count(&json))
        })
        .collect();
    let total = per_tool.iter().map(|(_, n)| n).sum();
    (per_tool, total)
}

async fn listed(global_args: &[&str], env: &[(&str, &str)]) -> Vec<Tool> {
    let conn = BIN
        .connect_with_env(Transport::Stdio, global_args, env)
        .await;
    let mut tools = conn.client.list_all_tools().await.expect("tools/list");
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    tools
}

fn names(tools: &[Tool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_ref()).collect()
}

#[tokio::test]
async fn the_tool_list_stays_within_its_token_budget() {
    let tools = listed(&[], &[]).await;
    let mut every_tool = context_loader::toolset::tool_names();
    every_tool.sort_unstable();
    assert_eq!(
        names(&tools),
        every_tool,
        "tools/list is the one list of tools"
    );
    let (per_tool, total) = cost(&tools);
    for (name, tokens) in &per_tool {
        println!("{name:<18} {tokens:>5} o200k tokens");
    }
    println!("{:<18} {total:>5}", "all tools");
    assert!(
        total <= ALL_TOOLS_BUDGET,
        "the tool list costs {total} o200k tokens as Claude Code sends it, over its budget of \
         {ALL_TOOLS_BUDGET}: {per_tool:?}. Shorten descriptions (defaults said once, details in \
         docs/tools.md) before raising the budget."
    );
    for tool in &tools {
        assert!(
            !tool.input_schema.contains_key("$schema") && !tool.input_schema.contains_key("$defs"),
            "{}: the input schema is sent to the model on every request; no $schema or $defs",
            tool.name
        );
    }
}

#[tokio::test]
async fn the_minimal_toolset_stays_within_its_budget() {
    let tools = listed(&["--tools", "minimal"], &[]).await;
    assert_eq!(names(&tools), ["count-tokens", "file-tokens", "load-files"]);
    let (per_tool, total) = cost(&tools);
    println!("--tools minimal: {total} o200k tokens ({per_tool:?})");
    assert!(
        total <= MINIMAL_BUDGET,
        "--tools minimal costs {total} o200k tokens, over {MINIMAL_BUDGET}: {per_tool:?}"
    );
}

#[tokio::test]
async fn tools_filters_the_list_on_every_transport_and_hidden_tools_cannot_be_called() {
    for transport in ALL {
        let conn = BIN
            .connect(transport, &["--tools", "count-tokens,spec-tokens"])
            .await;
        let mut tools = conn.client.list_all_tools().await.expect("tools/list");
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(
            names(&tools),
            ["count-tokens", "spec-tokens"],
            "{transport:?}"
        );
        let instructions = conn
            .client
            .peer_info()
            .and_then(|info| info.instructions.clone())
            .unwrap_or_default();
        assert!(
            instructions.contains("count-tokens") && !instructions.contains("load-files"),
            "{transport:?}: the instructions name only exposed tools: {instructions}"
        );

        let hidden = conn
            .client
            .call_tool(
                CallToolRequestParams::new("load-files").with_arguments(
                    json!({"paths": ["."]})
                        .as_object()
                        .cloned()
                        .expect("object"),
                ),
            )
            .await
            .expect_err("a hidden tool is not served");
        let message = hidden.to_string();
        assert!(
            message.contains("load-files") && message.contains("-32602"),
            "{transport:?}: a hidden tool gets the unknown-tool error: {message}"
        );
        // The session goes on.
        let counted = conn
            .client
            .call_tool(
                CallToolRequestParams::new("count-tokens").with_arguments(
                    json!({"text": "hello world", "model": "gpt-4o"})
                        .as_object()
                        .cloned()
                        .expect("object"),
                ),
            )
            .await
            .expect("an exposed tool is served");
        assert_eq!(counted.is_error, Some(false), "{transport:?}");
    }
}

#[tokio::test]
async fn the_toolset_can_come_from_the_environment() {
    let tools = listed(&[], &[("CONTEXT_LOADER_TOOLS", "specs")]).await;
    assert_eq!(
        names(&tools),
        ["count-tokens", "spec-budget", "spec-tokens"]
    );
}

#[test]
fn an_unknown_tool_name_is_a_start_up_error_naming_the_choices() {
    let out = BIN
        .command()
        .args(["--tools", "minimal,load_files", "stdio"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`load_files` is neither a tool nor a toolset")
            && stderr.contains("load-files")
            && stderr.contains("minimal"),
        "{stderr}"
    );
}

/// Every registered tool is described where users look: its section in docs/tools.md
/// (`## \`name\``) and its row in the README's table (`| \`name\` | \`command\` |`).
/// A new tool is one file and one line in `tools::register`; this names the docs it
/// still needs (issue 38).
#[test]
fn every_registered_tool_has_its_docs_section_and_readme_row() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tools_md = std::fs::read_to_string(root.join("docs/tools.md")).expect("docs/tools.md");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let mut missing = Vec::new();
    for (name, command) in context_loader::tools::commands() {
        if !tools_md.lines().any(|l| l == format!("## `{name}`")) {
            missing.push(format!("docs/tools.md has no `## \\`{name}\\`` section"));
        }
        if !readme
            .lines()
            .any(|l| l.starts_with(&format!("| `{name}` | `{command}` |")))
        {
            missing.push(format!(
                "README.md's tool table has no `| \\`{name}\\` | \\`{command}\\` |` row"
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
