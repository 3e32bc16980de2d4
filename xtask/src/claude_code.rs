//! `cargo xtask clients`, Claude Code part: the real agent, pinned, against the built
//! server over stdio, with a scripted loopback stand-in for Anthropic's Messages API
//! (`test_support::messages_api`) in place of a model. The server runs over a
//! generated tree of 2,000 files ([`write_tree`], target/xtask/claude-code/tree) and a
//! 2,000-spec folder (`spec_corpus`, target/xtask/claude-code/specs). It checks what a
//! model would see of us (issue 19):
//! - `claude mcp list` shows the server connected;
//! - the tool definitions Claude Code sends (the Messages request's `tools`) stay
//!   within the tool-list budget, counted with o200k_base;
//! - every tool's default answer over that tree and folder reaches the model whole,
//!   as JSON, not as a "saved to a file" preview or a refusal ([`KEPT`]);
//! - a `load-files` answer with a budget, as the model reads it and counted with the
//!   request's model, uses 85 % to 100 % of that budget ([`BUDGETS`] × [`MODELS`]).
//!
//! Claude Code comes from npm (`@anthropic-ai/claude-code` and its native binary
//! `@anthropic-ai/claude-code-linux-x64`, pinned) into target/xtask/claude-code, and
//! runs with HOME and its config under target/xtask/claude-code/run (recreated each
//! time), a cleared environment, and only loopback addresses. If it cannot start, the
//! step fails with the reason; it is never skipped.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use context_budget::answer::{DEFAULT_MAX_ANSWER_CHARS, DEFAULT_MAX_ANSWER_TOKENS, js_length};
use context_budget::{HIGHEST_ESTIMATE, TokenCounter, Tokenizer};
use serde_json::{Value, json};
use test_support::messages_api::FakeMessagesApi;

use crate::node::NodeEnv;
use crate::real_clients::KEPT;

const VERSION: &str = "2.1.328";
const PACKAGES: [&str; 2] = [
    "@anthropic-ai/claude-code",
    "@anthropic-ai/claude-code-linux-x64",
];
/// The native binary inside the platform package.
const BINARY: &str = "node_modules/@anthropic-ai/claude-code-linux-x64/claude";
/// The server's name in Claude Code: tools go out as `mcp__context-loader__<tool>`.
const SERVER: &str = "context-loader";
/// The tool list as Claude Code sends it (the same budget as
/// servers/context-loader/tests/tool_list.rs).
const TOOL_LIST_BUDGET: usize = 2_000;
/// Longest a `claude` command may take.
const PATIENCE: Duration = Duration::from_secs(120);

/// `load-files` budgets whose answer, as the model reads it, must use 85 % to 100 %.
const BUDGETS: [u64; 2] = [3_000, 10_000];
/// Models the budgets are counted with: an exact tokenizer and the highest estimate.
const MODELS: [&str; 2] = ["gpt-4o", "claude-opus-4-7"];
/// Least share of the budget a `load-files` answer over the tree uses, in percent.
const LEAST_USE: u64 = 85;

pub fn run(root: &Path, node: &NodeEnv) -> anyhow::Result<()> {
    let target = crate::target_dir();
    let claude = install(&target, node)?;
    let server = crate::target_dir().join("debug/context-loader");
    ensure!(
        server.exists(),
        "{} is not built (cargo build -p context-loader)",
        server.display()
    );
    let home = Home::fresh(&target.join("xtask/claude-code/run"), root)?;

    let version = home.run(&claude, &["--version"])?;
    ensure!(
        version.status.success() && stdout(&version).contains(VERSION),
        "Claude Code {VERSION} cannot start here ({}): {}{}",
        version.status,
        stdout(&version),
        stderr(&version)
    );

    // What the file and spec tools read: large enough that an unbounded answer
    // would be persisted to a file or refused.
    let project = crate::real_clients::Project::write(
        root,
        &target.join("xtask/claude-code"),
        "Claude Code",
    )?;
    let (tree, specs) = (&project.tree, &project.specs);

    // The server as a user adds it: the line of docs/clients.md.
    let line = project.fill(&crate::real_clients::setup_block(root, "claude-code")?);
    let words: Vec<&str> = line.split_whitespace().collect();
    ensure!(
        words.first() == Some(&"claude"),
        "the claude-code block of docs/clients.md is not a `claude` command: {line}"
    );
    let server = server.to_str().context("server path is not UTF-8")?;
    let tree_arg = tree.to_str().context("tree path is not UTF-8")?;
    let specs_arg = specs.to_str().context("specs path is not UTF-8")?;
    let added = home.run(&claude, &words[1..])?;
    ensure!(
        added.status.success(),
        "{} failed ({}): {}{}",
        line.trim(),
        added.status,
        stdout(&added),
        stderr(&added)
    );
    let listed = home.run(&claude, &["mcp", "list"])?;
    let line = stdout(&listed)
        .lines()
        .find(|l| l.starts_with(SERVER))
        .map(str::to_string)
        .unwrap_or_default();
    ensure!(
        listed.status.success() && line.contains("Connected"),
        "claude mcp list does not show {SERVER} connected ({}): {}{}",
        listed.status,
        stdout(&listed),
        stderr(&listed)
    );
    println!("Claude Code {VERSION}: claude mcp list: {line}");

    // mcp-tokens' rendering is checked against what Claude Code sends for the same
    // servers: ours and the Python SDK fleet of `cargo xtask mcp-tokens`.
    let python = crate::python::ensure_venv(&target)?.join("python");
    let fleet_script = root.join("xtask/fleet/fleet_server.py");
    let mut measured_servers = vec![(
        SERVER,
        json!({"command": server, "args": [
        "--root", tree_arg, "--specs-dir", specs_arg, "stdio"]}),
    )];
    for mode in FLEET {
        let (python, script) = (
            python.to_str().context("python path is not UTF-8")?,
            fleet_script.to_str().context("script path is not UTF-8")?,
        );
        let added = home.run(&claude, &["mcp", "add", mode, "--", python, script, mode])?;
        ensure!(
            added.status.success(),
            "claude mcp add {mode} failed ({}): {}{}",
            added.status,
            stdout(&added),
            stderr(&added)
        );
        measured_servers.push((mode, json!({"command": python, "args": [script, mode]})));
    }

    // Every check runs and prints its figures; the step then fails on any that failed.
    let mut failures = Vec::new();

    // 1. Every tool's default answer stays in the conversation.
    let mut definitions_checked = false;
    let mut rows = Vec::new();
    for (tool, input) in KEPT {
        let turn = home.call(&claude, tool, input)?;
        if !definitions_checked {
            if let Err(failure) = check_tool_definitions(&turn.definitions) {
                failures.push(failure.to_string());
            }
            let config = home.dir.join("mcp-tokens.json");
            if let Err(failure) =
                check_mcp_tokens(&turn.definitions, &measured_servers, &config, root)
            {
                failures.push(failure.to_string());
            }
            // Our tools as sent (eager: tool search is off here), against
            // `mcp-tokens --client claude-code` once the binary has it.
            let prefix = format!("mcp__{SERVER}__");
            let eager: usize = turn
                .definitions
                .iter()
                .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with(&prefix)))
                .map(crate::real_clients::o200k_json)
                .sum();
            if let Err(failure) = crate::real_clients::compare_mcp_tokens(
                "claude-code",
                "gpt-4o",
                &config,
                &[("eager", eager)],
            ) {
                failures.push(failure.to_string());
            }
            definitions_checked = true;
        }
        let received = received_text(&turn.result);
        let kept = match answer_json(&turn.result) {
            Ok(answer)
                if turn.result.get("is_error") != Some(&Value::Bool(true))
                    && answer.get("error_code").is_none() =>
            {
                true
            }
            Ok(answer) => {
                failures.push(format!("{tool} {input} failed: {answer}"));
                false
            }
            Err(_) => {
                failures.push(format!(
                    "Claude Code did not keep {tool}'s answer in the conversation: the model read {}",
                    preview(&turn.result)
                ));
                false
            }
        };
        rows.push(Kept {
            tool,
            chars: js_length(&received),
            tokens: HIGHEST_ESTIMATE.count(&received),
            kept,
        });
    }
    println!(
        "Claude Code: each tool's default answer as the model reads it (tokens: the Claude \
         Opus 4.7 estimate the answer limit uses; limits {DEFAULT_MAX_ANSWER_CHARS} \
         characters, {DEFAULT_MAX_ANSWER_TOKENS} tokens):"
    );
    println!("  {:<18} {:>8} {:>8}  kept", "tool", "chars", "tokens");
    for row in &rows {
        println!(
            "  {:<18} {:>8} {:>8}  {}",
            row.tool,
            row.chars,
            row.tokens,
            if row.kept { "yes" } else { "NO" }
        );
    }

    if let Err(failure) = check_deferred(&home, &claude, &measured_servers[0].1) {
        failures.push(format!("{failure:#}"));
    }

    // 2. load-files' budget bounds what the model reads, and is mostly used.
    let counter = TokenCounter::default();
    let mut rows = Vec::new();
    for budget in BUDGETS {
        for model in MODELS {
            let input = json!({"model": model, "budget": budget}).to_string();
            let (turn, answer) = load_files_whole(&home, &claude, &input)?;
            let received = received_text(&turn.result);
            let tokens = count_for(&counter, model, &received)?;
            rows.push(Used {
                budget,
                model,
                tokens,
                reported: answer["answer_tokens"].as_u64(),
                files: answer["included_files"].as_u64().unwrap_or(0),
            });
        }
    }
    println!(
        "Claude Code: load-files over the tree, the answer as the model reads it counted with \
         the request's model (must be {LEAST_USE}-100 % of the budget):"
    );
    println!(
        "  {:>7} {:<16} {:>8} {:>7} {:>14} {:>6}",
        "budget", "model", "received", "%", "answer_tokens", "files"
    );
    for row in &rows {
        println!(
            "  {:>7} {:<16} {:>8} {:>6.1}% {:>14} {:>6}",
            row.budget,
            row.model,
            row.tokens,
            row.tokens as f64 * 100.0 / row.budget as f64,
            row.reported.map_or("-".to_string(), |n| n.to_string()),
            row.files
        );
    }
    failures.extend(
        rows.iter()
            .filter(|r| r.tokens > r.budget || r.tokens * 100 < r.budget * LEAST_USE)
            .map(|r| {
                format!(
                    "load-files with budget {} for {}: the model read {} tokens, {:.1} % of the \
                     budget (must be {LEAST_USE}-100 %)",
                    r.budget,
                    r.model,
                    r.tokens,
                    r.tokens as f64 * 100.0 / r.budget as f64
                )
            }),
    );
    // 3. The whole tree at the detail the budget allows: what the model reads is
    //    90-100 % of the budget, and every file is a level or counted as left out.
    if let Err(failure) = check_auto(&home, &claude) {
        failures.push(format!("{failure:#}"));
    }
    ensure!(
        failures.is_empty(),
        "Claude Code {VERSION}: {} check(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    Ok(())
}

/// A `load-files` call with `input` through Claude Code, and its answer, which must
/// reach the model whole, as JSON, and not be an error.
fn load_files_whole(home: &Home, claude: &Path, input: &str) -> anyhow::Result<(Turn, Value)> {
    let turn = home.call(claude, "load-files", input)?;
    let answer = answer_json(&turn.result).with_context(|| {
        format!(
            "Claude Code did not keep load-files {input} whole: the model read {}",
            preview(&turn.result)
        )
    })?;
    ensure!(
        answer.get("error_code").is_none(),
        "load-files {input} failed: {answer}"
    );
    Ok((turn, answer))
}

/// The budget of the `detail: "auto"` check ([`check_auto`]).
const AUTO_BUDGET: u64 = 8_000;
/// Least share of that budget the answer the model reads uses, in percent.
const AUTO_LEAST_USE: u64 = 90;

/// `load-files` with `detail: "auto"` and an 8k budget over the whole tree
/// ([`crate::real_clients::TREE_FILES`] files and the non-Latin documents), through
/// Claude Code: the answer arrives whole, the model reads 90-100 % of the budget
/// (counted with o200k, the request's model's), and the levels and the files left
/// out add up to every file of the tree.
fn check_auto(home: &Home, claude: &Path) -> anyhow::Result<()> {
    let input = json!({"model": "gpt-4o", "budget": AUTO_BUDGET, "detail": "auto"}).to_string();
    let (turn, answer) = load_files_whole(home, claude, &input)?;
    let received = Tokenizer::O200kBase.count(&received_text(&turn.result)) as u64;
    let level = |name: &str| answer["levels"][name].as_u64().unwrap_or(0);
    let (full, outline, path) = (level("full"), level("outline"), level("path"));
    let omitted = answer["omitted_files"].as_u64().unwrap_or(0);
    let files = (crate::real_clients::TREE_FILES + crate::real_clients::NON_LATIN_FILES) as u64;
    println!(
        "Claude Code: load-files detail auto over the {files}-file tree, budget {AUTO_BUDGET}: \
         the model read {received} tokens ({:.1} %; answer_tokens {}): {full} full, \
         {outline} outlines, {path} paths, {omitted} left out (must be {AUTO_LEAST_USE}-100 %, \
         every file counted)",
        received as f64 * 100.0 / AUTO_BUDGET as f64,
        answer["answer_tokens"]
    );
    ensure!(
        received <= AUTO_BUDGET && received * 100 >= AUTO_BUDGET * AUTO_LEAST_USE,
        "load-files {input}: the model read {received} tokens, {:.1} % of the budget (must be \
         {AUTO_LEAST_USE}-100 %)",
        received as f64 * 100.0 / AUTO_BUDGET as f64
    );
    ensure!(
        full + outline + path + omitted == files,
        "load-files {input}: {full} full + {outline} outlines + {path} paths + {omitted} left \
         out is not the tree's {files} files"
    );
    Ok(())
}

/// One row of the "kept" table.
struct Kept {
    tool: &'static str,
    chars: usize,
    tokens: usize,
    kept: bool,
}

/// One row of the budget table.
struct Used {
    budget: u64,
    model: &'static str,
    /// The received string counted with the model.
    tokens: u64,
    /// What the answer says it costs.
    reported: Option<u64>,
    files: u64,
}

/// `text` counted as the server counts it for `model`: o200k_base for gpt-4o, the
/// engine's resolution (the Claude Opus 4.7 estimate) for claude-opus-4-7.
fn count_for(counter: &TokenCounter, model: &str, text: &str) -> anyhow::Result<u64> {
    let tokens = if model == "gpt-4o" {
        Tokenizer::O200kBase.count(text)
    } else {
        counter
            .count(text, Some(model))
            .with_context(|| format!("count {} characters for {model}", text.len()))?
            .token_count
    };
    Ok(tokens as u64)
}

/// The pinned packages in target/xtask/claude-code (once), and the native binary.
pub(crate) fn install(target: &Path, node: &NodeEnv) -> anyhow::Result<PathBuf> {
    let prefix = target.join("xtask/claude-code");
    let binary = prefix.join(BINARY);
    if installed_version(&binary).is_some_and(|v| v.contains(VERSION)) {
        return Ok(binary);
    }
    ensure!(
        cfg!(all(target_os = "linux", target_arch = "x86_64")),
        "the Claude Code check runs the linux-x64 native binary; this machine is {}-{}",
        std::env::consts::OS,
        std::env::consts::ARCH
    );
    eprintln!(
        "npm install {} @{VERSION} into {}",
        PACKAGES.join(", "),
        prefix.display()
    );
    std::fs::create_dir_all(&prefix).context("create the Claude Code prefix")?;
    // No install scripts: the native binary is run directly from its package.
    let status = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--prefix",
        ])
        .arg(&prefix)
        .args(PACKAGES.map(|p| format!("{p}@{VERSION}")))
        .env("PATH", &node.path)
        .env("npm_config_cache", &node.npm_cache)
        .env("npm_config_update_notifier", "false")
        .status()
        .context("cannot run npm (needed to fetch Claude Code)")?;
    ensure!(
        status.success(),
        "npm could not install Claude Code {VERSION} ({status})"
    );
    match installed_version(&binary) {
        Some(v) if v.contains(VERSION) => Ok(binary),
        Some(v) => bail!("{} reports version {v:?}, not {VERSION}", binary.display()),
        None => bail!(
            "Claude Code {VERSION} was installed but {} cannot start here",
            binary.display()
        ),
    }
}

fn installed_version(binary: &Path) -> Option<String> {
    let out = Command::new(binary)
        .arg("--version")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Claude Code's isolated world: HOME, config and work directory under target/.
struct Home {
    dir: PathBuf,
    /// Where `claude` runs (the server's project: `mcp add` is per directory).
    work: PathBuf,
}

/// What one scripted turn recorded.
struct Turn {
    /// The Messages request's `tools`, as sent to the model.
    definitions: Vec<Value>,
    /// The `tool_result` block sent back to the model.
    result: Value,
}

impl Home {
    fn fresh(dir: &Path, work: &Path) -> anyhow::Result<Home> {
        if dir.exists() {
            std::fs::remove_dir_all(dir)
                .with_context(|| format!("cannot clear {}", dir.display()))?;
        }
        for sub in [
            "home",
            "config",
            "xdg/config",
            "xdg/cache",
            "xdg/data",
            "xdg/state",
        ] {
            std::fs::create_dir_all(dir.join(sub))
                .with_context(|| format!("cannot create {}", dir.join(sub).display()))?;
        }
        Ok(Home {
            dir: dir.to_path_buf(),
            work: work.to_path_buf(),
        })
    }

    /// `claude <args>` in the isolated world, pointed at `api` (or at a closed
    /// loopback port: nothing may leave the machine).
    fn command(&self, claude: &Path, args: &[&str], api: Option<&str>) -> Command {
        let mut command = self.command_searching(claude, args, api);
        // Otherwise MCP tools are deferred behind a ToolSearch tool.
        command.env("ENABLE_TOOL_SEARCH", "false");
        command
    }

    /// [`Home::command`] with Claude Code's default: tool search on.
    fn command_searching(&self, claude: &Path, args: &[&str], api: Option<&str>) -> Command {
        let mut command = Command::new(claude);
        command
            .args(args)
            .current_dir(&self.work)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.join("home"))
            .env("CLAUDE_CONFIG_DIR", self.dir.join("config"))
            .env("XDG_CONFIG_HOME", self.dir.join("xdg/config"))
            .env("XDG_CACHE_HOME", self.dir.join("xdg/cache"))
            .env("XDG_DATA_HOME", self.dir.join("xdg/data"))
            .env("XDG_STATE_HOME", self.dir.join("xdg/state"))
            .env("TMPDIR", self.dir.join("home"))
            .env("ANTHROPIC_BASE_URL", api.unwrap_or("http://127.0.0.1:9"))
            .env("ANTHROPIC_API_KEY", "sk-xtask-stand-in")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            // The first request waits for every MCP server (else a server slower to start
            // than the first turn, as the Python fleet is on a loaded machine, is left
            // out of it: Claude Code offers WaitForMcpServers instead).
            .env("CLAUDE_CODE_MCP_STARTUP_WAIT_MS", "60000")
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("TERM", "dumb")
            .stdin(Stdio::null());
        command
    }

    fn run(&self, claude: &Path, args: &[&str]) -> anyhow::Result<Output> {
        run_bounded(self.command(claude, args, None), args)
    }

    /// One `claude -p` turn in which the stand-in has the model call `tool` with
    /// `input`; returns what Claude Code sent to the model.
    fn call(&self, claude: &Path, tool: &str, input: &str) -> anyhow::Result<Turn> {
        let name = format!("mcp__{SERVER}__{tool}");
        let input: Value = serde_json::from_str(input).context("a scripted input")?;
        let api = FakeMessagesApi::start(&name, input.clone())
            .context("cannot start the Messages API stand-in")?;
        let prompt = format!("Call {name} with {input}.");
        let args = [
            "-p",
            prompt.as_str(),
            "--allowedTools",
            name.as_str(),
            "--output-format",
            "json",
        ];
        let out = run_bounded(self.command(claude, &args, Some(api.url())), &args)?;
        let log = || {
            api.requests()
                .iter()
                .map(|r| format!("  {} {} ({:?})", r.method, r.path, r.kind))
                .collect::<Vec<_>>()
                .join("\n")
        };
        ensure!(
            out.status.success(),
            "claude -p calling {tool} failed ({}): {}{}\nrequests to the stand-in:\n{}",
            out.status,
            stdout(&out),
            stderr(&out),
            log()
        );
        let definitions = api.tool_definitions().with_context(|| {
            format!(
                "Claude Code never offered {name} to the model; requests to the stand-in:\n{}\n{}",
                log(),
                stderr(&out)
            )
        })?;
        let result = api.tool_result().with_context(|| {
            format!(
                "Claude Code never sent {name}'s result back; requests to the stand-in:\n{}\n{}{}",
                log(),
                stdout(&out),
                stderr(&out)
            )
        })?;
        Ok(Turn {
            definitions,
            result,
        })
    }
}

impl Home {
    /// One `claude -p` turn with tool search on (Claude Code's default): the main
    /// conversation request, as sent to the model (the one offering `ToolSearch`).
    fn searching_request(&self, claude: &Path) -> anyhow::Result<Value> {
        let api = FakeMessagesApi::start("xtask-never-offered", json!({}))
            .context("cannot start the Messages API stand-in")?;
        let args = ["-p", "Say done.", "--output-format", "json"];
        let out = run_bounded(
            self.command_searching(claude, &args, Some(api.url())),
            &args,
        )?;
        let requests = api.requests();
        let offers_search = |r: &&test_support::messages_api::Recorded| {
            r.body["tools"]
                .as_array()
                .is_some_and(|tools| tools.iter().any(|t| t["name"] == "ToolSearch"))
        };
        requests
            .iter()
            .find(offers_search)
            .map(|r| r.body.clone())
            .with_context(|| {
                format!(
                    "with tool search on, Claude Code sent no request offering ToolSearch ({}); \
                 requests: {:?}\n{}",
                    out.status,
                    requests
                        .iter()
                        .map(|r| (&r.path, r.kind))
                        .collect::<Vec<_>>(),
                    stderr(&out)
                )
            })
    }
}

/// Every text a Messages request carries besides its tools: the system prompt and
/// the messages' text blocks, one after another.
fn request_texts(request: &Value) -> Vec<String> {
    // A system prompt or a message's content: a string, or blocks with `text`.
    let texts_of = |value: &Value| -> Vec<String> {
        match value {
            Value::String(text) => vec![text.clone()],
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    };
    let mut texts = texts_of(&request["system"]);
    for message in request["messages"].as_array().into_iter().flatten() {
        texts.extend(texts_of(&message["content"]));
    }
    texts
}

/// Claude Code's default, tool search on: our definitions stay out of `tools`, and what
/// every request carries for our server instead (its tools' names, one a line) is what
/// `mcp-tokens --client claude-code` says it is.
fn check_deferred(home: &Home, claude: &Path, server: &Value) -> anyhow::Result<()> {
    let request = home.searching_request(claude)?;
    let saved = home
        .dir
        .parent()
        .unwrap_or(&home.dir)
        .join("deferred-request.json");
    std::fs::write(&saved, serde_json::to_vec_pretty(&request)?)?;
    let prefix = format!("mcp__{SERVER}__");
    let offered: Vec<&str> = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    ensure!(
        offered.is_empty(),
        "with tool search on, Claude Code still sent our definitions {offered:?} (request in {})",
        saved.display()
    );
    let names: String = request_texts(&request)
        .iter()
        .flat_map(|text| text.lines())
        .filter(|line| line.starts_with(&prefix))
        .map(|line| format!("{line}\n"))
        .collect();
    ensure!(
        !names.is_empty(),
        "with tool search on, no line of the request names our tools (request in {})",
        saved.display()
    );
    let listed = names.lines().count();
    let sent = Tokenizer::O200kBase.count(&names);
    println!(
        "Claude Code with tool search on: our {listed} tools deferred, named one a line: \
         {sent} o200k in every request (the request is in {})",
        saved.display()
    );
    // Only our server, so the modelled figure covers what was found above; the
    // instructions are in the system prompt whether or not tools are deferred (and
    // compared with them there), so they are left out on both sides.
    let config = home.dir.join("mcp-tokens-ours.json");
    std::fs::write(
        &config,
        serde_json::to_vec_pretty(&json!({"mcpServers": {SERVER: server}}))?,
    )?;
    crate::real_clients::compare_mcp_tokens(
        "claude-code",
        "gpt-4o",
        &config,
        &[("deferred names", sent)],
    )
}

/// Run to completion within [`PATIENCE`], or kill it and fail.
pub(crate) fn run_bounded(mut command: Command, args: &[&str]) -> anyhow::Result<Output> {
    let started = Instant::now();
    let program = Path::new(command.get_program())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {program} {args:?}"))?;
    // Drain both pipes on threads so a chatty child never blocks.
    let mut out = child.stdout.take().context("stdout is piped")?;
    let mut err = child.stderr.take().context("stderr is piped")?;
    let out_reader = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        let _ = out.read_to_end(&mut buffer);
        buffer
    });
    let err_reader = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        let _ = err.read_to_end(&mut buffer);
        buffer
    });
    let status = loop {
        if let Some(status) = child.try_wait().context("wait for the client")? {
            break status;
        }
        if started.elapsed() > PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{program} {args:?} did not finish within {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ok(Output {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    })
}

/// The Python SDK fleet servers Claude Code also connects (`xtask/fleet`): small, 60
/// tools of deep repeated schemas, 25 tools served 10 a page.
const FLEET: [&str; 4] = ["small", "big", "paginated", "order"];

/// How far `mcp-tokens`' count of a server's tools may be from what Claude Code sent.
const MCP_TOKENS_TOLERANCE: f64 = 0.01;

/// `context-loader mcp-tokens` over the servers Claude Code had connected (same
/// commands, in a Claude Desktop-style config) must count each server's tools within
/// [`MCP_TOKENS_TOLERANCE`] of the o200k tokens of the entries Claude Code sent.
fn check_mcp_tokens(
    sent: &[Value],
    servers: &[(&str, Value)],
    config: &Path,
    root: &Path,
) -> anyhow::Result<()> {
    let entries: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(name, entry)| (name.to_string(), entry.clone()))
        .collect();
    std::fs::write(config, json!({"mcpServers": entries}).to_string())?;
    // What Claude Code sent, kept beside the config for a look when they differ.
    std::fs::write(
        config.with_file_name("claude-code-tools.json"),
        serde_json::to_string_pretty(sent)?,
    )?;
    let bin = crate::target_dir().join("debug/context-loader");
    let out = Command::new(&bin)
        .args(["mcp-tokens", "--json", "--model", "gpt-4o", "--config"])
        .arg(config)
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run context-loader mcp-tokens")?;
    let answer: Value = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "mcp-tokens gave no JSON ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stdout)
        )
    })?;
    let mut failures = Vec::new();
    println!(
        "Claude Code vs mcp-tokens: each server's tool entries as Claude Code sent them, o200k \
         (tolerance {:.0} %):",
        MCP_TOKENS_TOLERANCE * 100.0
    );
    println!(
        "  {:<16} {:>6} {:>9} {:>6} {:>11} {:>7}",
        "server", "tools", "sent", "tools", "mcp-tokens", "diff"
    );
    for (name, _) in servers {
        let prefix = format!("mcp__{name}__");
        let ours: Vec<&Value> = sent
            .iter()
            .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with(&prefix)))
            .collect();
        let sent_tokens: usize = ours
            .iter()
            .map(|t| Tokenizer::O200kBase.count(&t.to_string()))
            .sum();
        let measured = answer["servers"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["name"] == *name);
        let Some(measured) = measured else {
            failures.push(format!("mcp-tokens did not report {name}: {answer}"));
            continue;
        };
        let tokens = measured["tool_tokens"].as_u64().unwrap_or(0) as f64;
        let tools = measured["tools"].as_array().map_or(0, Vec::len);
        let diff = (tokens - sent_tokens as f64) / (sent_tokens.max(1) as f64);
        println!(
            "  {:<16} {:>6} {:>9} {:>6} {:>11} {:>+6.2}%",
            name,
            ours.len(),
            sent_tokens,
            tools,
            tokens,
            diff * 100.0
        );
        if measured["status"] != "ok" || tools != ours.len() || diff.abs() > MCP_TOKENS_TOLERANCE {
            failures.push(format!(
                "mcp-tokens counts {name} as {tokens} tokens over {tools} tools; Claude Code sent \
                 {} tools of {sent_tokens} tokens ({:+.2} %, status {})",
                ours.len(),
                diff * 100.0,
                measured["status"]
            ));
        }
    }
    ensure!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// Our tools as Claude Code sends them, within the budget.
fn check_tool_definitions(tools: &[Value]) -> anyhow::Result<()> {
    let prefix = format!("mcp__{SERVER}__");
    let ours: Vec<&Value> = tools
        .iter()
        .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with(&prefix)))
        .collect();
    ensure!(
        !ours.is_empty(),
        "Claude Code sent none of our tools; it sent {:?}",
        tools.iter().map(|t| &t["name"]).collect::<Vec<_>>()
    );
    let mut total = 0;
    let mut rows = Vec::new();
    for tool in &ours {
        let tokens = Tokenizer::O200kBase.count(&serde_json::to_string(tool)?);
        total += tokens;
        rows.push(format!("{} {tokens}", tool["name"].as_str().unwrap_or("?")));
    }
    println!(
        "Claude Code sends our {} tools as {total} o200k tokens (budget {TOOL_LIST_BUDGET}): {}",
        ours.len(),
        rows.join(", ")
    );
    ensure!(
        total <= TOOL_LIST_BUDGET,
        "our tool definitions as Claude Code sends them cost {total} o200k tokens, over the \
         budget of {TOOL_LIST_BUDGET}: {rows:?}"
    );
    // Every tool the server lists has a call here: a new tool without one is named.
    let kept: Vec<String> = KEPT
        .iter()
        .map(|(tool, _)| tool.replace('-', "_"))
        .collect();
    let missing: Vec<&str> = ours
        .iter()
        .filter_map(|t| t["name"].as_str()?.strip_prefix(&prefix))
        .filter(|name| !kept.iter().any(|k| k == &name.replace('-', "_")))
        .collect();
    ensure!(
        missing.is_empty(),
        "tools with no default call in KEPT (xtask/src/real_clients.rs), so nobody checks their \
         answer reaches the model whole: {missing:?}"
    );
    let with_schema_url = ours
        .iter()
        .filter(|t| t["input_schema"].get("$schema").is_some())
        .count();
    if with_schema_url > 0 {
        println!("  note: {with_schema_url} tools still carry $schema as sent");
    }
    Ok(())
}

/// The text of a `tool_result` block: its string content, or its text blocks joined.
fn content_text(result: &Value) -> String {
    match &result["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// The tool's answer as the model reads it: the content (or its first text block),
/// with a `<system-reminder>` Claude Code appends at its end left aside. Only a
/// trailing one: a packed file may itself contain the tag.
fn received_text(result: &Value) -> String {
    let text = match &result["content"] {
        Value::Array(blocks) => blocks
            .iter()
            .find_map(|b| b["text"].as_str())
            .unwrap_or_default()
            .to_string(),
        _ => content_text(result),
    };
    let text = text.trim_end();
    let answer = match text.rfind("<system-reminder>") {
        Some(at) if text.ends_with("</system-reminder>") => text[..at].trim_end(),
        _ => text,
    };
    answer.to_string()
}

/// The tool's answer as the model reads it ([`received_text`]), if it is whole JSON.
fn answer_json(result: &Value) -> anyhow::Result<Value> {
    let value: Value =
        serde_json::from_str(&received_text(result)).context("the tool result is not JSON")?;
    ensure!(value.is_object(), "the tool result is not a JSON object");
    Ok(value)
}

/// The first characters of what the model read, for an error message.
fn preview(result: &Value) -> String {
    let text = content_text(result);
    let head: String = text.chars().take(400).collect();
    json!({"characters": text.len(), "starts": head, "is_error": result.get("is_error")})
        .to_string()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_kept_only_when_the_model_reads_it_as_whole_json() {
        let whole = json!({"type": "tool_result", "content": "{\"token_count\":2}"});
        assert_eq!(answer_json(&whole).expect("whole")["token_count"], 2);
        let reminded = json!({"type": "tool_result", "content": [
            {"type": "text", "text": "{\"n\":1}\n<system-reminder>\nbe brief\n</system-reminder>"}
        ]});
        assert_eq!(answer_json(&reminded).expect("reminder aside")["n"], 1);
        // A tag inside the answer (a packed file that mentions it) is the answer's.
        let quoted = json!({"type": "tool_result", "content":
            "{\"text\":\"<system-reminder>x</system-reminder>\"}\n<system-reminder>\nbe brief\n</system-reminder>\n"});
        assert_eq!(
            received_text(&quoted),
            "{\"text\":\"<system-reminder>x</system-reminder>\"}"
        );
        assert_eq!(
            answer_json(&quoted).expect("reminder aside")["text"],
            "<system-reminder>x</system-reminder>"
        );
        // What Claude Code 2.1.328 sends instead of an answer over ~50,000 characters.
        let persisted = json!({"type": "tool_result", "content":
            "<persisted-output>\nOutput too large (382.6KB). Full output saved to: /tmp/x.txt\n\nPreview (first 2KB):\n{\"model\":\"gpt-4o\",\"text\":\"<file\n...\n</persisted-output>"});
        assert!(answer_json(&persisted).is_err());
        assert!(preview(&persisted).contains("persisted-output"));
    }
}
