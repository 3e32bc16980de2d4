//! `cargo xtask clients`, Codex CLI part: the real agent (npm `@openai/codex`, its
//! native binary from the optional dependency, pinned) against the built server over
//! stdio, configured with the lines of docs/clients.md, and a scripted loopback
//! stand-in for OpenAI's Responses API (`test_support::responses_api`) as its model
//! provider. It runs twice: with Codex's default model, which defers MCP tools behind
//! its `tool_search` (the stand-in searches, then calls), and with a model Codex does
//! not know, which gets the tools in every request and a smaller answer limit. From
//! the recorded requests it checks:
//! - the server connects (our tools reach the model), and what Codex announces at
//!   `initialize` (recorded by xtask/clients/init_probe.py, a second server);
//! - the tools part Codex sends (target/xtask/codex/tools-sent.json), in o200k
//!   tokens, against `mcp-tokens --client codex` when the binary has it;
//! - every tool's default answer reaches the model whole, and errors are small
//!   (`real_clients::judge`).
//!
//! HOME and CODEX_HOME are target/xtask/codex/run-<model> (recreated each time), the
//! environment is cleared, and only loopback addresses are served (Codex's plugin
//! sync fails without a network, harmlessly). If Codex cannot start, the step fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, ensure};
use serde_json::{Value, json};
use test_support::responses_api::{self, FakeResponsesApi, RequestKind, ScriptedCall};

use crate::claude_code::run_bounded;
use crate::node::NodeEnv;
use crate::real_clients::{self, Project, Received};

const VERSION: &str = "0.169.0";
const PACKAGE: &str = "@openai/codex";
/// The native binary of the linux-x64 optional dependency.
const BINARY: &str =
    "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex";
/// How Codex names our server's tools: namespace `mcp__context_loader`, functions
/// with underscores for hyphens.
const NAMESPACE: &str = "mcp__context_loader";
/// Codex's default model (it defers MCP tools), and a model it does not know.
const DEFAULT_MODEL: &str = "gpt-5.5";
const UNKNOWN_MODEL: &str = "my-model";
/// What the scripted model searches for when the tools are deferred: words of every
/// tool's name.
const SEARCH: &str = "context loader count tokens list models file tokens load files spec \
                      tokens spec budget fit messages assemble context mcp tokens";

pub fn run(root: &Path, node: &NodeEnv) -> anyhow::Result<()> {
    let target = crate::target_dir();
    let dir = target.join("xtask/codex");
    let codex = install(&dir, node)?;
    let project = Project::write(root, &dir, "Codex")?;
    let mut failures = Vec::new();
    let mut sent = serde_json::Map::new();
    for model in [DEFAULT_MODEL, UNKNOWN_MODEL] {
        // For a model Codex does not know, docs/clients.md adds --max-answer-bytes.
        let block = match model {
            UNKNOWN_MODEL => "codex-unknown-model",
            _ => "codex",
        };
        let run = Run::new(root, &dir, &project, model, block)?;
        let outcome = run.turn(&codex)?;
        sent.insert(model.to_string(), outcome.tools_sent.clone());
        failures.extend(outcome.failures);
    }
    let file = dir.join("tools-sent.json");
    std::fs::write(&file, serde_json::to_string_pretty(&Value::Object(sent))?)
        .with_context(|| format!("cannot write {}", file.display()))?;
    println!("Codex: the tools part as sent is in {}", file.display());
    ensure!(
        failures.is_empty(),
        "Codex {VERSION}: {} check(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    Ok(())
}

/// The pinned package in target/xtask/codex (once), and its native binary.
pub(crate) fn install(dir: &Path, node: &NodeEnv) -> anyhow::Result<PathBuf> {
    real_clients::require_linux_x64("Codex")?;
    let binary = dir.join(BINARY);
    real_clients::install_client(node, dir, ("Codex", PACKAGE, VERSION), || {
        let mut command = Command::new(&binary);
        command
            .arg("--version")
            .env_clear()
            .env("PATH", "/usr/bin:/bin");
        command
    })?;
    Ok(binary)
}

/// One Codex run with one model: its isolated home and config.
struct Run<'a> {
    model: &'static str,
    home: PathBuf,
    project: &'a Project,
    /// config.toml without the model provider (added once the stand-in has a port).
    servers: String,
    probe_log: PathBuf,
}

/// What one run found.
struct Outcome {
    tools_sent: Value,
    failures: Vec<String>,
}

impl<'a> Run<'a> {
    fn new(
        root: &Path,
        dir: &Path,
        project: &'a Project,
        model: &'static str,
        block: &str,
    ) -> anyhow::Result<Run<'a>> {
        let home = dir.join(format!("run-{model}"));
        real_clients::fresh_home(&home, ".codex")?;
        let probe_log = home.join("initialize.jsonl");
        let (probe, probe_args) = real_clients::probe_command(root, &probe_log);
        let servers = format!(
            "{}\n[mcp_servers.init-probe]\ncommand = {}\nargs = {}\n",
            project.fill(&real_clients::setup_block(root, block)?),
            json!(probe),
            json!(probe_args)
        );
        Ok(Run {
            model,
            home,
            project,
            servers,
            probe_log,
        })
    }

    /// The config with the stand-in as the model provider.
    fn write_config(&self, base_url: &str) -> anyhow::Result<PathBuf> {
        let config = format!(
            "model = {model}\nmodel_provider = \"stand\"\n\n[model_providers.stand]\n\
             name = \"stand-in\"\nbase_url = {base_url}\nwire_api = \"responses\"\n\
             env_key = \"STAND_KEY\"\n\n{servers}",
            model = json!(self.model),
            base_url = json!(base_url),
            servers = self.servers
        );
        let file = self.home.join(".codex/config.toml");
        std::fs::write(&file, config)
            .with_context(|| format!("cannot write {}", file.display()))?;
        Ok(file)
    }

    fn command(&self, codex: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(codex);
        command
            .args(args)
            .current_dir(&self.project.tree)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("CODEX_HOME", self.home.join(".codex"))
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("TMPDIR", &self.home)
            .env("STAND_KEY", "sk-xtask-stand-in")
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("TERM", "dumb")
            .stdin(Stdio::null());
        command
    }

    /// One `codex exec` turn in which the stand-in has the model call every scripted
    /// call at once.
    fn turn(&self, codex: &Path) -> anyhow::Result<Outcome> {
        let model = self.model;
        let script = real_clients::scripted_calls();
        let calls = script
            .iter()
            .map(|(tool, input, _)| ScriptedCall {
                namespace: NAMESPACE.to_string(),
                name: tool.replace('-', "_"),
                arguments: input.clone(),
            })
            .collect();
        let api = FakeResponsesApi::start(calls, SEARCH)
            .context("cannot start the Responses API stand-in")?;
        let config = self.write_config(&api.base_url())?;
        let args = [
            "exec",
            "--skip-git-repo-check",
            "--json",
            "Measure this project with the context-loader tools.",
        ];
        let out = run_bounded(self.command(codex, &args), &args)?;
        // Codex's own events (the MCP results as the server gave them among them), and
        // what the stand-in received, for a look when a check fails.
        std::fs::write(self.home.join("exec.jsonl"), &out.stdout)?;
        let recorded: Vec<Value> = api
            .requests()
            .iter()
            .map(|r| json!({"path": r.path, "kind": format!("{:?}", r.kind), "body": r.body}))
            .collect();
        std::fs::write(
            self.home.join("requests.json"),
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
            "codex exec with {model} failed ({}): {}{}\nrequests to the stand-in:\n{}",
            out.status,
            text(&out.stdout),
            text(&out.stderr),
            log()
        );
        let init = real_clients::probed(&self.probe_log);
        let first = api.first().with_context(|| {
            format!(
                "Codex with {model} never asked the model; requests:\n{}\n{}",
                log(),
                text(&out.stdout)
            )
        })?;
        let called = api.calls_request().with_context(|| {
            format!(
                "Codex with {model} never offered our tools to the model (the server did not \
                 connect?); requests:\n{}\n{}{}",
                log(),
                text(&out.stdout),
                text(&out.stderr)
            )
        })?;
        let mut failures = Vec::new();

        // 1. The server connected, and what Codex announced.
        println!(
            "Codex {VERSION} with {model}: our tools reached the model; {}",
            real_clients::describe_init(&init)
        );

        // 2. The tools part.
        let server_line = strings(&first.body)
            .iter()
            .flat_map(|s| s.lines())
            .find(|l| l.starts_with(&format!("- {NAMESPACE}")))
            .map(str::to_string);
        let direct = namespace_in(called.body.get("tools"));
        // The item the search brings into the history (its ids included, as the model
        // reads them) with our namespace: what our server costs of it. The search may
        // also bring other namespaces (Codex's own deferred tools), not ours to count.
        let searched_item = responses_api::input_items(&called.body)
            .filter(|i| i["type"] == "tool_search_output")
            .find_map(|i| {
                let ours = namespace_in(i.get("tools"))?;
                let mut item = i.clone();
                item["tools"] = json!([ours]);
                Some(item)
            });
        let searched = searched_item
            .as_ref()
            .and_then(|i| namespace_in(i.get("tools")));
        let deferred = api.requests().iter().any(|r| r.kind == RequestKind::Search);
        let tokens = |v: &Option<Value>| v.as_ref().map(real_clients::o200k_json);
        let line_tokens = server_line
            .as_deref()
            .map(|l| context_budget::Tokenizer::O200kBase.count(l));
        let mut figures = Vec::new();
        if deferred {
            println!(
                "Codex with {model}: tools deferred behind tool_search: the first request \
                 carries our server line, {} o200k ({:?}); the search output item holding our \
                 namespace, {} o200k (the namespace alone {})",
                show(line_tokens),
                server_line.as_deref().unwrap_or("none"),
                show(tokens(&searched_item)),
                show(tokens(&searched))
            );
            if let (Some(line), Some(search)) = (line_tokens, tokens(&searched_item)) {
                figures.push(("deferred", line));
                figures.push(("search", search));
            } else {
                failures.push(format!(
                    "Codex with {model} deferred its tools, but the first request has no `- \
                     {NAMESPACE}` line ({}) or no search output has our namespace ({})",
                    server_line.is_some(),
                    searched.is_some()
                ));
            }
        } else {
            println!(
                "Codex with {model}: our namespace in every request's tools: {} o200k \
                 ({} functions)",
                show(tokens(&direct)),
                direct
                    .as_ref()
                    .and_then(|d| d["tools"].as_array())
                    .map_or(0, Vec::len)
            );
            match tokens(&direct) {
                Some(eager) => figures.push(("eager", eager)),
                None => failures.push(format!(
                    "Codex with {model} called without searching, but its tools have no \
                     {NAMESPACE} namespace"
                )),
            }
        }
        // Counted with o200k either way; gpt-4.1 is a model Codex does not know, so
        // its rule sends the tools eagerly, as it did for `my-model`.
        let counted_as = if deferred { DEFAULT_MODEL } else { "gpt-4.1" };
        if let Err(e) = real_clients::compare_mcp_tokens("codex", counted_as, &config, &figures) {
            failures.push(format!("Codex with {model}: {e}"));
        }
        let tools_sent = json!({
            "deferred": deferred,
            "first_request_server_line": server_line,
            "tools_namespace": direct,
            "tool_search_output_namespace": searched,
            "initialize": init,
        });

        // 3 and 4. Every answer, as the model reads it (and as the server gave it).
        let events = text(&out.stdout);
        let rows: Vec<Received> = script
            .into_iter()
            .enumerate()
            .map(|(i, (tool, input, expect))| {
                let as_sent = api
                    .output(i)
                    .map(|o| responses_api::output_text(&o))
                    .unwrap_or_default();
                let answer = as_sent
                    .split_once("Output:\n")
                    .map(|(_, answer)| answer.to_string())
                    .or_else(|| (!as_sent.is_empty()).then(|| as_sent.clone()));
                let original = server_answer(&events, tool, &input);
                Received {
                    tool,
                    input,
                    expect,
                    as_sent,
                    answer,
                    original,
                }
            })
            .collect();
        failures.extend(real_clients::judge(&format!("Codex with {model}"), &rows));
        Ok(Outcome {
            tools_sent,
            failures,
        })
    }
}

/// The text content of the server's result for `tool` with `input`, from the
/// `mcp_tool_call` items of `codex exec --json`'s events.
fn server_answer(events: &str, tool: &str, input: &Value) -> Option<String> {
    events
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "item.completed")
        .map(|e| e["item"].clone())
        .find(|i| i["type"] == "mcp_tool_call" && i["tool"] == tool && &i["arguments"] == input)
        .and_then(|i| {
            let texts: Vec<&str> = i["result"]["content"]
                .as_array()?
                .iter()
                .filter_map(|c| c["text"].as_str())
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        })
}

/// Our namespace in a list of tools.
fn namespace_in(tools: Option<&Value>) -> Option<Value> {
    tools?
        .as_array()?
        .iter()
        .find(|t| t["type"] == "namespace" && t["name"] == NAMESPACE)
        .cloned()
}

/// Every string in a JSON value.
fn strings(value: &Value) -> Vec<&str> {
    match value {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        Value::Object(map) => map.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

fn show(n: Option<usize>) -> String {
    n.map_or("-".to_string(), |n| n.to_string())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
