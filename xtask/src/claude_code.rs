//! `cargo xtask clients`, Claude Code part: the real agent, pinned, against the built
//! server over stdio, with a scripted loopback stand-in for Anthropic's Messages API
//! (`test_support::messages_api`) in place of a model. It checks what a model would
//! see of us:
//! - `claude mcp list` shows the server connected;
//! - the tool definitions Claude Code sends (the Messages request's `tools`) stay
//!   within the tool-list budget, counted with o200k_base;
//! - a tool's answer reaches the model whole, as JSON, not as a "saved to a file"
//!   preview or a refusal ([`KEPT`]; add a call there to hold it to that);
//! - and it prints, without asserting yet, what the model reads of a `load-files`
//!   call with a 3,000-token budget ([`SHOWN`]).
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
use context_budget::Tokenizer;
use serde_json::{Value, json};
use test_support::messages_api::FakeMessagesApi;

use crate::node::NodeEnv;

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

/// Calls whose default answer must reach the model whole (JSON, not a preview or a
/// refusal). Extend this list as tools' answers are bounded.
const KEPT: &[(&str, &str)] = &[
    (
        "count-tokens",
        r#"{"text": "hello world", "model": "gpt-4o"}"#,
    ),
    ("list-models", r#"{"filter": "claude"}"#),
];

/// Calls whose answer is printed for a person to check, not asserted (yet).
const SHOWN: &[(&str, &str)] = &[(
    "load-files",
    r#"{"paths": ["crates/context-budget/src"], "budget": 3000, "model": "gpt-4o"}"#,
)];

pub fn run(root: &Path, node: &NodeEnv) -> anyhow::Result<()> {
    let target = root.join("target");
    let claude = install(&target, node)?;
    let server = root.join("target/debug/context-loader");
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

    // The server as a user adds it; its file tools read the repository.
    let server = server.to_str().context("server path is not UTF-8")?;
    let root_arg = root.to_str().context("workspace path is not UTF-8")?;
    let added = home.run(
        &claude,
        &[
            "mcp", "add", SERVER, "--", server, "--root", root_arg, "stdio",
        ],
    )?;
    ensure!(
        added.status.success(),
        "claude mcp add failed ({}): {}{}",
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

    let mut definitions_checked = false;
    for (tool, input) in KEPT {
        let turn = home.call(&claude, tool, input)?;
        if !definitions_checked {
            check_tool_definitions(&turn.definitions)?;
            definitions_checked = true;
        }
        let answer = answer_json(&turn.result).with_context(|| {
            format!(
                "Claude Code did not keep {tool}'s answer in the conversation: the model read {}",
                preview(&turn.result)
            )
        })?;
        ensure!(
            turn.result.get("is_error") != Some(&Value::Bool(true))
                && answer.get("error_code").is_none(),
            "{tool} {input} failed: {answer}"
        );
        println!(
            "Claude Code: {tool} {input}: the model reads the answer whole ({} characters of JSON)",
            answer.to_string().len()
        );
    }
    for (tool, input) in SHOWN {
        let turn = home.call(&claude, tool, input)?;
        let content = content_text(&turn.result);
        println!(
            "Claude Code: {tool} {input}: the model reads {} characters (not asserted yet):",
            content.len()
        );
        match answer_json(&turn.result) {
            Ok(answer) => println!(
                "  JSON; tokens {}, budget {}, {} files included, {} omitted; text starts: {:?}",
                answer["tokens"],
                answer["budget"],
                answer["included"].as_array().map_or(0, Vec::len),
                answer["omitted"].as_array().map_or(0, Vec::len),
                answer["text"]
                    .as_str()
                    .unwrap_or_default()
                    .chars()
                    .take(120)
                    .collect::<String>()
            ),
            Err(_) => println!("  not JSON: {}", preview(&turn.result)),
        }
    }
    Ok(())
}

/// The pinned packages in target/xtask/claude-code (once), and the native binary.
fn install(target: &Path, node: &NodeEnv) -> anyhow::Result<PathBuf> {
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
            // Otherwise MCP tools are deferred behind a ToolSearch tool.
            .env("ENABLE_TOOL_SEARCH", "false")
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

/// Run to completion within [`PATIENCE`], or kill it and fail.
fn run_bounded(mut command: Command, args: &[&str]) -> anyhow::Result<Output> {
    let started = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start claude {args:?}"))?;
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
        if let Some(status) = child.try_wait().context("wait for claude")? {
            break status;
        }
        if started.elapsed() > PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            bail!("claude {args:?} did not finish within {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ok(Output {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    })
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

/// The tool's answer as the model reads it, if it is whole JSON: the content (or its
/// first text block), with anything Claude Code appends after the JSON (a
/// `<system-reminder>`) left aside.
fn answer_json(result: &Value) -> anyhow::Result<Value> {
    let text = match &result["content"] {
        Value::Array(blocks) => blocks
            .iter()
            .find_map(|b| b["text"].as_str())
            .unwrap_or_default()
            .to_string(),
        _ => content_text(result),
    };
    let json_part = match text.find("<system-reminder>") {
        Some(at) => text[..at].trim_end(),
        None => text.trim_end(),
    };
    let value: Value = serde_json::from_str(json_part).context("the tool result is not JSON")?;
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
        // What Claude Code 2.1.328 sends instead of an answer over ~50,000 characters.
        let persisted = json!({"type": "tool_result", "content":
            "<persisted-output>\nOutput too large (382.6KB). Full output saved to: /tmp/x.txt\n\nPreview (first 2KB):\n{\"model\":\"gpt-4o\",\"text\":\"<file\n...\n</persisted-output>"});
        assert!(answer_json(&persisted).is_err());
        assert!(preview(&persisted).contains("persisted-output"));
    }
}
