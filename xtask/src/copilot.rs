//! `cargo xtask clients`, GitHub Copilot CLI part: the real agent (npm
//! `@github/copilot`, its native binary from the optional dependency, pinned) against
//! the built server over stdio, configured with the mcp-config.json block of
//! docs/clients.md, and a scripted loopback stand-in for OpenAI's Responses API
//! (`test_support::responses_api`) as its model provider (`COPILOT_PROVIDER_*`,
//! offline). Copilot CLI offers MCP tools as top-level functions,
//! `context-loader-count-tokens` and so on, beside its own; the stand-in calls every
//! scripted call at once. From the recorded requests it checks:
//! - the server connects (our tools reach the model), and what Copilot CLI announces
//!   at `initialize` (recorded by xtask/clients/init_probe.py, a second server);
//! - the tools part it sends: our function definitions, and where our instructions
//!   go if anywhere (target/xtask/copilot-cli/tools-sent.json), in o200k tokens,
//!   against `mcp-tokens --client copilot-cli` when the binary has it;
//! - every tool's default answer reaches the model whole (not saved to a file with a
//!   preview), and errors are small (`real_clients::judge`); Copilot CLI passes a
//!   result's text as it is, an error's after `MCP server 'context-loader': `.
//!
//! Where Copilot CLI cuts (the `copilot-cli` row of the client table) was measured
//! with this setup and a server started with higher `--max-answer-*` limits:
//! `assemble-context` answers of exactly 20,480 bytes passed whole in ASCII, in
//! Chinese (7,100 characters) and in token-dense text; 20,481 bytes (ASCII) and
//! 20,482 (Chinese, also 7,100 characters) were saved to a file, the model getting
//! an ~850-character "Output too large to read at once (20.0 KB). Saved to: …"
//! preview, with Copilot's default model and with one it does not know. This step
//! checks only that our answers, held to 19,000 bytes, stay under it.
//!
//! HOME is target/xtask/copilot-cli/run (recreated each time), the environment is
//! cleared, `COPILOT_OFFLINE` keeps it off GitHub, and only loopback addresses are
//! served. If Copilot CLI cannot start, the step fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, ensure};
use serde_json::{Value, json};
use test_support::responses_api::{self, FakeResponsesApi, ScriptedCall};

use crate::claude_code::run_bounded;
use crate::node::NodeEnv;
use crate::real_clients::{self, Project, Received};

const VERSION: &str = "1.0.102";
const PACKAGE: &str = "@github/copilot";
/// The native binary of the linux-x64 optional dependency.
const BINARY: &str = "node_modules/@github/copilot-linux-x64/copilot";
/// The model Copilot CLI asks the stand-in for.
const MODEL: &str = "gpt-5";
/// Our server's name in mcp-config.json: tools are offered as `<server>-<tool>`.
const SERVER: &str = "context-loader";
/// The front of our server's instructions, to find where Copilot CLI puts them.
const INSTRUCTIONS_FRONT: &str = "Plan a context window before loading anything";

pub fn run(root: &Path, node: &NodeEnv) -> anyhow::Result<()> {
    let target = crate::target_dir();
    let dir = target.join("xtask/copilot-cli");
    let copilot = install(&dir, node)?;
    let project = Project::write(root, &dir, "Copilot CLI")?;
    let home = dir.join("run");
    real_clients::fresh_home(&home, ".copilot")?;

    // mcp-config.json: the documented block, and the init probe beside our server.
    let mut config: Value =
        serde_json::from_str(&project.fill(&real_clients::setup_block(root, "copilot-cli")?))
            .context("the copilot-cli block of docs/clients.md is not JSON")?;
    let probe_log = home.join("initialize.jsonl");
    let (probe, probe_args) = real_clients::probe_command(root, &probe_log);
    config["mcpServers"]["init-probe"] =
        json!({"type": "local", "command": probe, "args": probe_args, "tools": ["*"]});
    let config_file = home.join(".copilot/mcp-config.json");
    std::fs::write(&config_file, serde_json::to_string_pretty(&config)?)
        .with_context(|| format!("cannot write {}", config_file.display()))?;

    let script = real_clients::scripted_calls();
    let calls = script
        .iter()
        .map(|(tool, input, _)| ScriptedCall {
            namespace: String::new(),
            name: format!("{SERVER}-{tool}"),
            arguments: input.clone(),
        })
        .collect();
    let api =
        FakeResponsesApi::start(calls, "").context("cannot start the Responses API stand-in")?;
    let args = [
        "-p",
        "Measure this project with the context-loader tools.",
        "--allow-all-tools",
    ];
    let mut command = Command::new(&copilot);
    command
        .args(args)
        .current_dir(&project.tree)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("TMPDIR", &home)
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_PROVIDER_BASE_URL", api.base_url())
        .env("COPILOT_PROVIDER_WIRE_API", "responses")
        .env("COPILOT_MODEL", MODEL)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("TERM", "dumb")
        .stdin(Stdio::null());
    let out = run_bounded(command, &args)?;
    std::fs::write(home.join("stdout.txt"), &out.stdout)?;
    std::fs::write(home.join("stderr.txt"), &out.stderr)?;
    let recorded: Vec<Value> = api
        .requests()
        .iter()
        .map(|r| json!({"path": r.path, "kind": format!("{:?}", r.kind), "body": r.body}))
        .collect();
    std::fs::write(
        home.join("requests.json"),
        serde_json::to_string_pretty(&recorded)?,
    )?;
    let log = || {
        api.requests()
            .iter()
            .map(|r| format!("  {} {} ({:?})", r.method, r.path, r.kind))
            .collect::<Vec<_>>()
            .join("\n")
    };
    ensure!(
        out.status.success(),
        "copilot -p failed ({}): {}{}\nrequests to the stand-in:\n{}",
        out.status,
        text(&out.stdout),
        real_clients::tail(&text(&out.stderr), 4000),
        log()
    );
    let called = api.calls_request().with_context(|| {
        format!(
            "Copilot CLI never offered our tools to the model (the server did not connect?); \
             requests:\n{}\n{}{}",
            log(),
            text(&out.stdout),
            real_clients::tail(&text(&out.stderr), 4000)
        )
    })?;
    let mut failures = Vec::new();

    // 1. The server connected, and what Copilot CLI announced.
    let init = real_clients::probed(&probe_log);
    println!(
        "Copilot CLI {VERSION} with {MODEL}: our tools reached the model; {}",
        real_clients::describe_init(&init)
    );

    // 2. The tools part: our functions among Copilot CLI's own, and where our
    // instructions went.
    let prefix = format!("{SERVER}-");
    let tools: Vec<&Value> = called
        .body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let ours: Vec<Value> = tools
        .iter()
        .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with(&prefix)))
        .map(|t| (*t).clone())
        .collect();
    let eager: usize = ours.iter().map(real_clients::o200k_json).sum();
    let instructions = api
        .requests()
        .iter()
        .find_map(|r| real_clients::find_text(&r.body, INSTRUCTIONS_FRONT, ""));
    println!(
        "Copilot CLI: our {} functions (of {} tools it offers): {eager} o200k; our \
         instructions: {}",
        ours.len(),
        tools.len(),
        instructions
            .as_ref()
            .map_or("in no request".to_string(), |(at, _)| format!("in {at}"))
    );
    let tool_count = real_clients::scripted_calls().len() - 4;
    if ours.len() != tool_count {
        failures.push(format!(
            "Copilot CLI offered {} of our {tool_count} tools: {:?}",
            ours.len(),
            ours.iter().map(|t| &t["name"]).collect::<Vec<_>>()
        ));
    }
    if let Err(e) =
        real_clients::compare_mcp_tokens("copilot-cli", "gpt-4o", &config_file, &[("eager", eager)])
    {
        failures.push(format!("Copilot CLI: {e}"));
    }
    let sent = json!({
        "functions": ours,
        "instructions": instructions.map(|(at, text)| json!({"at": at, "text": text})),
        "initialize": init,
    });
    let file = dir.join("tools-sent.json");
    std::fs::write(&file, serde_json::to_string_pretty(&sent)?)
        .with_context(|| format!("cannot write {}", file.display()))?;
    println!(
        "Copilot CLI: the tools part as sent is in {}",
        file.display()
    );

    // 3 and 4. Every answer, as the model reads it: the result's text, as it is; an
    // error (isError) after `MCP server 'context-loader': `.
    let error_front = format!("MCP server '{SERVER}': ");
    let rows: Vec<Received> = script
        .into_iter()
        .enumerate()
        .map(|(i, (tool, input, expect))| {
            let as_sent = api
                .output(i)
                .map(|o| responses_api::output_text(&o))
                .unwrap_or_default();
            let answer = as_sent
                .strip_prefix(&error_front)
                .unwrap_or(&as_sent)
                .to_string();
            let answer = (!answer.is_empty()).then_some(answer);
            Received {
                tool,
                input,
                expect,
                as_sent,
                answer,
                original: None,
            }
        })
        .collect();
    for row in rows
        .iter()
        .filter(|r| r.expect == real_clients::Expect::Error)
    {
        println!(
            "Copilot CLI: {} {} reads, as the model: {}",
            row.tool, row.input, row.as_sent
        );
    }
    failures.extend(real_clients::judge("Copilot CLI", &rows));
    ensure!(
        failures.is_empty(),
        "Copilot CLI {VERSION}: {} check(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The binary unpacks its runtime (~230 MB) into each fresh home's cache: scratch
    // once the run passed. What the run recorded stays beside it.
    crate::disk::remove_scratch(&["xtask/copilot-cli/run/.cache/copilot/pkg"])
}

/// The pinned package in target/xtask/copilot-cli (once), and its native binary.
pub(crate) fn install(dir: &Path, node: &NodeEnv) -> anyhow::Result<PathBuf> {
    real_clients::require_linux_x64("Copilot CLI")?;
    let binary = dir.join(BINARY);
    // Even `--version` unpacks the runtime (~235 MB, 1–3 s) into $HOME/.cache on a
    // home's first start: give it a home of its own and drop that once it answered.
    // Each run unpacks into its own fresh home anyway.
    let home = dir.join("version-home");
    // Its first line: "GitHub Copilot CLI 1.0.102." (then a hint to update).
    let installed =
        real_clients::install_client(node, dir, ("Copilot CLI", PACKAGE, VERSION), || {
            let mut command = Command::new(&binary);
            command
                .arg("--version")
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("HOME", &home)
                .env("COPILOT_OFFLINE", "true");
            command
        });
    crate::disk::remove_dir_if_present(&home)?;
    installed?;
    Ok(binary)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
