//! `cargo xtask ci` step: third-party MCP clients against the built server over
//! stdio and streamable HTTP (stateful and stateless):
//! - the official Python SDK client, mcp 2.3 (xtask/clients/python_sdk.py), in both
//!   its default mode (server/discover, falling back to initialize) and legacy mode;
//! - the MCP Inspector CLI 2.12 (`npx @modelcontextprotocol/inspector --cli`).
//!
//! Each lists tools and calls count-tokens (a success and a structured tool error);
//! results are asserted, not just printed. Then the real agents, each against a
//! scripted stand-in for its model API: Claude Code (`claude_code`), Codex CLI
//! (`codex`), Gemini CLI (`gemini_cli`) and GitHub Copilot CLI (`copilot`). Each runs
//! even when one before it failed; the step then fails with every reason.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, ensure};
use serde_json::Value;

pub(crate) const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";

/// The real agents, by the name `--only` takes.
const AGENTS: [&str; 4] = ["claude-code", "codex", "gemini-cli", "copilot-cli"];

pub fn run(root: &Path, only: &[String]) -> anyhow::Result<()> {
    let target = crate::target_dir();
    if let Some(unknown) = only.iter().find(|o| !AGENTS.contains(&o.as_str())) {
        anyhow::bail!("--only {unknown}: the clients are {}", AGENTS.join(", "));
    }
    let node = crate::node::ensure(&target)?;
    if only.is_empty() {
        sdk_and_inspector(&node)?;
    }
    let mut failures = Vec::new();
    for agent in AGENTS {
        if !only.is_empty() && !only.iter().any(|o| o == agent) {
            continue;
        }
        let outcome = match agent {
            "claude-code" => crate::claude_code::run(root, &node),
            "codex" => crate::codex::run(root, &node),
            "gemini-cli" => crate::gemini_cli::run(root, &node),
            _ => crate::copilot::run(root, &node),
        };
        if let Err(e) = outcome {
            failures.push(format!("{agent}: {e:#}"));
        }
    }
    ensure!(
        failures.is_empty(),
        "{} real client(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    Ok(())
}

/// The Python SDK client and the MCP Inspector CLI.
fn sdk_and_inspector(node: &crate::node::NodeEnv) -> anyhow::Result<()> {
    let root = crate::workspace_root();
    let target = crate::target_dir();
    let venv = crate::python::ensure_venv(&target)?;
    let stateful = crate::server::start(&[])?;
    let stateless = crate::server::start(&["--stateless"])?;
    let binary = crate::target_dir().join("debug/context-loader");
    let binary = binary.to_str().context("binary path is not UTF-8")?;

    let script = root.join("xtask/clients/python_sdk.py");
    for (kind, where_) in [
        ("stdio", binary),
        ("http", stateful.url.as_str()),
        ("http", stateless.url.as_str()),
    ] {
        let out = Command::new(venv.join("python"))
            .arg(&script)
            .args([kind, where_])
            .stderr(Stdio::null())
            .output()
            .context("cannot run the Python client")?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        print!("{stdout}");
        ensure!(
            out.status.success() && stdout.lines().count() == 2,
            "Python mcp SDK client failed over {kind} {where_} ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let catalog = target.join("xtask/inspector-catalog.json");
    let inspector = |target_args: &[&str], method_args: &[&str]| -> anyhow::Result<Value> {
        let out = node
            .npx(&[INSPECTOR, "--cli"])
            .args(target_args)
            .args(method_args)
            .env("MCP_CATALOG_PATH", &catalog)
            .output()
            .context("cannot run the MCP Inspector CLI")?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if out.status.success() {
            return serde_json::from_str(&stdout)
                .with_context(|| format!("inspector output is not JSON: {stdout}"));
        }
        // A failed command prints {"error": {...}} as the last line of stderr, exit 1.
        let stderr = String::from_utf8_lossy(&out.stderr);
        stderr
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v.get("error").is_some())
            .with_context(|| {
                format!(
                    "inspector {target_args:?} {method_args:?} failed ({}): {stdout}\n{stderr}",
                    out.status
                )
            })
    };
    let targets: [(&str, Vec<&str>); 3] = [
        ("stdio", vec![binary, "stdio"]),
        ("http", vec![stateful.url.as_str(), "--transport", "http"]),
        (
            "http stateless",
            vec![stateless.url.as_str(), "--transport", "http"],
        ),
    ];
    for (label, target_args) in &targets {
        let listed = inspector(target_args, &["--method", "tools/list"])?;
        let names: Vec<&str> = listed["tools"]
            .as_array()
            .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
            .unwrap_or_default();
        ensure!(
            names.contains(&"count-tokens") && names.contains(&"list-models"),
            "inspector over {label}: tools/list gave {names:?}"
        );
        let call = |model: &str| {
            let model_arg = format!("model={model}");
            inspector(
                target_args,
                &[
                    "--method",
                    "tools/call",
                    "--tool-name",
                    "count-tokens",
                    "--tool-arg",
                    "text=hello world",
                    "--tool-arg",
                    &model_arg,
                ],
            )
        };
        let ok = call("gpt-4o")?;
        ensure!(
            ok["isError"] == Value::Bool(false) && ok["structuredContent"]["token_count"] == 2,
            "inspector over {label}: count-tokens gave {ok}"
        );
        // The Inspector validates error results against the outputSchema too; ours
        // admits the structured error object, so the CLI reports a tool error
        // (`tool_is_error`) rather than a schema violation.
        let refused = call("gpt-4.5")?;
        let reported_as_tool_error = refused["error"]["code"] == "tool_is_error"
            || (refused["isError"] == Value::Bool(true)
                && refused["structuredContent"]["error_code"] == "UNSUPPORTED_MODEL");
        ensure!(
            reported_as_tool_error,
            "inspector over {label}: unknown model gave {refused}"
        );
        let error_outcome = "gpt-4.5 -> isError tool result (schema accepted)";
        println!(
            "MCP Inspector CLI over {label}: {} tools; count-tokens = 2 tokens; {error_outcome}",
            names.len()
        );
    }
    Ok(())
}
