//! `cargo xtask clients`, Gemini CLI part: the real agent (npm `@google/gemini-cli`,
//! pinned, run by Node) against the built server over stdio, configured with the
//! settings.json block of docs/clients.md, and a scripted loopback stand-in for
//! Google's Gemini API (`test_support::gemini_api`). Gemini CLI runs in the generated
//! project (it offers its working directory to the server as an MCP root). From the
//! recorded requests it checks:
//! - the server connects (our tools reach the model), and what Gemini CLI announces
//!   at `initialize` (recorded by xtask/clients/init_probe.py, a second server);
//! - the tools part it sends: our function declarations and where our instructions
//!   go (target/xtask/gemini-cli/tools-sent.json), in o200k tokens, against
//!   `mcp-tokens --client gemini-cli` when the binary has it;
//! - every tool's default answer reaches the model whole, errors are small
//!   (`real_clients::judge`), and it prints no warnings about our output schemas.
//!
//! HOME is target/xtask/gemini-cli/run (recreated each time), the environment is
//! cleared, telemetry and updates are off, and only loopback addresses are served.
//! If Gemini CLI cannot start, the step fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, ensure};
use serde_json::{Value, json};
use test_support::gemini_api::{self, FakeGeminiApi, ScriptedCall};

use crate::claude_code::run_bounded;
use crate::node::NodeEnv;
use crate::real_clients::{self, Project, Received};

const VERSION: &str = "0.61.0";
const PACKAGE: &str = "@google/gemini-cli";
/// The CLI's entry point inside the package.
const ENTRY: &str = "node_modules/@google/gemini-cli/bundle/gemini.js";
const MODEL: &str = "gemini-2.5-pro";
/// Our server's name in settings.json: tools are declared `mcp_<server>_<tool>`.
const SERVER: &str = "context-loader";
/// The front of our server's instructions, to find where Gemini CLI puts them.
const INSTRUCTIONS_FRONT: &str = "Plan a context window before loading anything";

pub fn run(root: &Path, node: &NodeEnv) -> anyhow::Result<()> {
    let target = crate::target_dir();
    let dir = target.join("xtask/gemini-cli");
    let gemini = Gemini::install(&dir, node)?;
    let project = Project::write(root, &dir, "Gemini CLI")?;
    let home = dir.join("run");
    real_clients::fresh_home(&home, ".gemini")?;

    // settings.json: the documented block, the init probe beside our server, and
    // what keeps Gemini CLI on the stand-in and off the network.
    let mut settings: Value =
        serde_json::from_str(&project.fill(&real_clients::setup_block(root, "gemini-cli")?))
            .context("the gemini-cli block of docs/clients.md is not JSON")?;
    let probe_log = home.join("initialize.jsonl");
    let (probe, probe_args) = real_clients::probe_command(root, &probe_log);
    // (A server without tools, the probe makes Gemini CLI print "MCP issues detected".)
    settings["mcpServers"]["init-probe"] = json!({"command": probe, "args": probe_args});
    settings["security"] = json!({"auth": {"selectedType": "gemini-api-key"}});
    settings["telemetry"] = json!({"enabled": false});
    settings["general"] = json!({"disableAutoUpdate": true});
    let config = home.join(".gemini/settings.json");
    std::fs::write(&config, serde_json::to_string_pretty(&settings)?)
        .with_context(|| format!("cannot write {}", config.display()))?;

    let script = real_clients::scripted_calls();
    let calls = script
        .iter()
        .map(|(tool, input, _)| ScriptedCall {
            name: format!("mcp_{SERVER}_{tool}"),
            args: input.clone(),
        })
        .collect();
    let api = FakeGeminiApi::start(calls).context("cannot start the Gemini API stand-in")?;
    // Without an approval mode that runs them, `-p` offers the model no tool that
    // asks for confirmation, MCP tools among them.
    let args = [
        "--approval-mode",
        "yolo",
        "-m",
        MODEL,
        "-p",
        "Measure this project with the context-loader tools.",
    ];
    let out = run_bounded(
        gemini.command(&home, &project.tree, api.url(), &args),
        &args,
    )?;
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
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let log = || {
        api.requests()
            .iter()
            .map(|r| format!("  {} {} ({:?})", r.method, r.path, r.kind))
            .collect::<Vec<_>>()
            .join("\n")
    };
    ensure!(
        out.status.success(),
        "gemini -p failed ({}): {}{}\nrequests to the stand-in:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        real_clients::tail(&stderr, 4000),
        log()
    );
    let called = api.calls_request().with_context(|| {
        format!(
            "Gemini CLI never declared our tools to the model (the server did not connect?); \
             requests:\n{}\n{}",
            log(),
            real_clients::tail(&stderr, 4000)
        )
    })?;
    let mut failures = Vec::new();

    // 1. The server connected, and what Gemini CLI announced.
    let init = real_clients::probed(&probe_log);
    println!(
        "Gemini CLI {VERSION} with {MODEL}: our tools reached the model; {}",
        real_clients::describe_init(&init)
    );

    // 2. The tools part: our declarations, and where our instructions went.
    let prefix = format!("mcp_{SERVER}_");
    let ours: Vec<Value> = gemini_api::declarations(&called.body)
        .filter(|d| d["name"].as_str().is_some_and(|n| n.starts_with(&prefix)))
        .cloned()
        .collect();
    let declared: usize = ours.iter().map(real_clients::o200k_json).sum();
    let extra = ours
        .iter()
        .filter(|d| d["parametersJsonSchema"]["properties"]["wait_for_previous"].is_object())
        .count();
    // Our instructions go into a user message, with a header and a wrapper: the
    // `<loaded_context>` element that holds them is what they cost.
    let instructions =
        real_clients::find_text(&called.body, INSTRUCTIONS_FRONT, "").map(|(at, text)| {
            let at_ours = text.find(INSTRUCTIONS_FRONT).unwrap_or(0);
            let start = text[..at_ours].rfind("<loaded_context>").unwrap_or(at_ours);
            let end = text[at_ours..]
                .find("</loaded_context>")
                .map_or(text.len(), |e| at_ours + e + "</loaded_context>".len());
            (at, text[start..end].to_string())
        });
    let instruction_tokens = instructions
        .as_ref()
        .map(|(_, text)| context_budget::Tokenizer::O200kBase.count(text));
    println!(
        "Gemini CLI: our {} function declarations: {declared} o200k ({extra} with \
         wait_for_previous); our instructions in {}, inside <loaded_context>: {} o200k",
        ours.len(),
        instructions
            .as_ref()
            .map_or("no part", |(at, _)| at.as_str()),
        instruction_tokens.map_or("-".to_string(), |n| n.to_string())
    );
    if ours.len() != real_clients::scripted_calls().len() - 4 {
        failures.push(format!(
            "Gemini CLI declared {} of our tools: {:?}",
            ours.len(),
            ours.iter().map(|d| &d["name"]).collect::<Vec<_>>()
        ));
    }
    let mut figures = vec![("eager", declared)];
    if let Some(tokens) = instruction_tokens {
        figures.push(("instructions", tokens));
    }
    if let Err(e) = real_clients::compare_mcp_tokens("gemini-cli", "gpt-4o", &config, &figures) {
        failures.push(format!("Gemini CLI: {e}"));
    }
    let sent = json!({
        "function_declarations": ours,
        "instructions": instructions.map(|(at, text)| json!({"at": at, "text": text})),
        "initialize": init,
    });
    let file = dir.join("tools-sent.json");
    std::fs::write(&file, serde_json::to_string_pretty(&sent)?)
        .with_context(|| format!("cannot write {}", file.display()))?;
    println!(
        "Gemini CLI: the tools part as sent is in {}",
        file.display()
    );

    // 3 and 4. Every answer, as the model reads it.
    let responses = api.responses();
    let rows: Vec<Received> = script
        .into_iter()
        .enumerate()
        .map(|(i, (tool, input, expect))| {
            let name = format!("{prefix}{tool}");
            let response = responses
                .get(i)
                .filter(|r| r["functionResponse"]["name"] == name.as_str())
                .map(|r| r["functionResponse"]["response"].clone());
            let as_sent = response.as_ref().map(Value::to_string).unwrap_or_default();
            let answer = response.as_ref().and_then(unwrap_response);
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
    if responses.len() != rows.len() {
        failures.push(format!(
            "Gemini CLI sent {} function responses for {} calls",
            responses.len(),
            rows.len()
        ));
    }
    failures.extend(real_clients::judge("Gemini CLI", &rows));

    // 5. No warnings about our output schemas.
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            let l = l.to_lowercase();
            l.contains("unknown format") || (l.contains("schema") && l.contains("warn"))
        })
        .collect();
    println!(
        "Gemini CLI: {} output-schema warnings on stderr{}",
        warnings.len(),
        warnings
            .first()
            .map_or(String::new(), |w| format!(", e.g. {w:?}"))
    );
    if !warnings.is_empty() {
        failures.push(format!(
            "Gemini CLI printed {} warnings about our output schemas, e.g. {:?}",
            warnings.len(),
            warnings.first()
        ));
    }
    ensure!(
        failures.is_empty(),
        "Gemini CLI {VERSION}: {} check(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    Ok(())
}

/// The server's answer inside a `functionResponse.response`: the text between
/// `<untrusted_context>` tags of `output`, or the raw result quoted in `error`.
fn unwrap_response(response: &Value) -> Option<String> {
    if let Some(output) = response["output"].as_str() {
        let inner = output
            .trim()
            .strip_prefix("<untrusted_context>")
            .and_then(|t| t.strip_suffix("</untrusted_context>"))
            .unwrap_or(output);
        return Some(inner.trim().to_string());
    }
    let error = response["error"].as_str()?;
    let raw = error
        .split_once("with response: ")
        .map_or(error, |(_, r)| r);
    // The raw result is JSON (its parts, with the content blocks inside): the answer
    // is the first text block.
    match serde_json::from_str::<Value>(raw) {
        Ok(value) => first_text(&value).map(str::to_string),
        _ => Some(raw.to_string()),
    }
}

/// The first `"text"` string in a JSON value, depth first.
fn first_text(value: &Value) -> Option<&str> {
    match value {
        Value::Object(map) => map
            .get("text")
            .and_then(Value::as_str)
            .or_else(|| map.values().find_map(first_text)),
        Value::Array(items) => items.iter().find_map(first_text),
        _ => None,
    }
}

/// The installed CLI and the Node that runs it.
pub(crate) struct Gemini {
    entry: PathBuf,
    path: String,
}

impl Gemini {
    /// The pinned package in target/xtask/gemini-cli (once).
    pub(crate) fn install(dir: &Path, node: &NodeEnv) -> anyhow::Result<Gemini> {
        let gemini = Gemini {
            entry: dir.join(ENTRY),
            path: node.path.clone(),
        };
        real_clients::install_client(node, dir, ("Gemini CLI", PACKAGE, VERSION), || {
            let mut command = Command::new("node");
            command
                .arg(&gemini.entry)
                .arg("--version")
                .env_clear()
                .env("PATH", &gemini.path)
                .env("HOME", dir)
                .env("GEMINI_CLI_NO_RELAUNCH", "true");
            command
        })?;
        Ok(gemini)
    }

    /// `gemini <args>` in the isolated home, in `work`, pointed at `api`.
    fn command(&self, home: &Path, work: &Path, api: &str, args: &[&str]) -> Command {
        let mut command = Command::new("node");
        command
            .arg(&self.entry)
            .args(args)
            .current_dir(work)
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("TMPDIR", home)
            .env("GEMINI_API_KEY", "xtask-stand-in")
            .env("GOOGLE_GEMINI_BASE_URL", api)
            .env("GEMINI_CLI_NO_RELAUNCH", "true")
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("TERM", "dumb")
            .stdin(Stdio::null());
        command
    }
}
