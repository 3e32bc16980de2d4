//! `cargo xtask mcp-tokens` (issue 24): `context-loader mcp-tokens` against real
//! servers, and our own tool list against its budget.
//! - Our own server (rmcp) measured over stdio with `--max-tokens`: the tool-list
//!   budget (2,000, tests/tool_list.rs) plus 100 for the instructions.
//! - A loopback fleet of Python `mcp` SDK servers (xtask/fleet/fleet_server.py: small,
//!   60 tools with deep repeated schemas, paginated, hangs, exits at once, needs a
//!   variable from its config) plus this server, named in a config file of every
//!   client format (Claude Desktop, `.mcp.json`, `~/.claude.json` per project, VS Code,
//!   Cursor, Gemini CLI, Codex TOML): each file gives the same servers and counts, and
//!   without `--config` all of them are found.
//! - Each measured server's tools listed again by the Python SDK's own client
//!   (`server/discover` handshake as Claude Code makes it, all pages), and the Claude Code entries counted here:
//!   the same tokens as mcp-tokens reports.
//! - `--render openai` against a Python implementation of the cookbook rule with
//!   tiktoken, its vocabulary read offline from tiktoken-rs's bundled file.
//! - With `--bench`: 20 configured servers, wall clock and our own CPU time, and PyPI
//!   `mcp-token-lint` 0.2.0 `check` on the same config (printed for BENCHMARKS.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use context_budget::Tokenizer;
use serde_json::{Value, json};

/// The tool-list budget, and what the instructions may add to it.
const TOOL_LIST_BUDGET: usize = 2_000;
const INSTRUCTIONS_ALLOWANCE: usize = 100;
/// Per-server time limit in the fleet checks: a Python SDK server spends about a
/// second of CPU importing the SDK, and seven start at once (`--concurrency 8`) on
/// two cores: about 4 s, so 10 s leaves a margin of 2.5x. A config holding the server
/// that hangs takes this long to read, so only the first format's holds it (the
/// seven formats, each with it, took 74 of the step's 115 s).
const TIMEOUT: &str = "10";

/// The server that never answers; in the first config only (see [`TIMEOUT`]).
const HANGS: &str = "hangs";
/// Python packages the fleet's checks add to the xtask venv.
const EXTRA_PACKAGES: [&str; 2] = ["tiktoken==0.14.0", "mcp-token-lint==0.2.0"];

pub fn run(root: &Path, bench: bool) -> anyhow::Result<()> {
    crate::build_server()?;
    let bin = crate::target_dir().join("debug/context-loader");
    let py_bin = crate::python::ensure_venv(&crate::target_dir())?;
    ensure_extra(&py_bin)?;
    let python = py_bin.join("python");
    own_budget(&bin)?;
    let dir = crate::target_dir().join("xtask/mcp-fleet");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    let script = root.join("xtask/fleet/fleet_server.py");
    let servers = fleet(&python, &script, &bin);
    let configs = write_configs(&dir, &servers)?;
    if bench {
        // The benchmark alone (the checks are the CI step): mcp-token-lint counts with
        // cl100k_base, read from the same offline cache.
        check_openai_rule(&bin, &python, root, &dir)?;
        return benchmark(&python, &script, &dir, &py_bin);
    }
    let measured = check_formats(&bin, &dir, &configs)?;
    check_discovery(&bin, &dir, configs.len())?;
    check_against_python_client(&python, root, &servers, &measured)?;
    check_openai_rule(&bin, &python, root, &dir)?;
    eprintln!("mcp-tokens: all checks passed");
    Ok(())
}

fn ensure_extra(py_bin: &Path) -> anyhow::Result<()> {
    let stamp = py_bin.join("../mcp-tokens-extra.txt");
    let wanted = EXTRA_PACKAGES.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(());
    }
    let status = Command::new(py_bin.join("pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(EXTRA_PACKAGES)
        .status()
        .context("cannot run pip")?;
    ensure!(
        status.success(),
        "pip install {} failed",
        EXTRA_PACKAGES.join(" ")
    );
    std::fs::write(&stamp, wanted)?;
    Ok(())
}

/// Our own server with --max-tokens: exit 0, and its figure.
fn own_budget(bin: &Path) -> anyhow::Result<()> {
    let limit = (TOOL_LIST_BUDGET + INSTRUCTIONS_ALLOWANCE).to_string();
    let out = Command::new(bin)
        .args([
            "mcp-tokens",
            "--json",
            "--model",
            "gpt-4o",
            "--max-tokens",
            &limit,
            "--",
        ])
        .arg(bin)
        .arg("stdio")
        .output()?;
    let answer: Value = serde_json::from_slice(&out.stdout).context("mcp-tokens --json")?;
    let server = &answer["servers"][0];
    eprintln!(
        "own server: {} tools = {} o200k tokens of tools + {} of instructions = {} (gate {limit})",
        server["tools"].as_array().map_or(0, Vec::len),
        server["tool_tokens"],
        server["instructions_tokens"],
        answer["total_tokens"]
    );
    ensure!(
        out.status.success(),
        "our own tool list is over its budget: {}",
        answer["over_budget"]
    );
    ensure!(
        server["tool_tokens"].as_u64().unwrap_or(u64::MAX) <= TOOL_LIST_BUDGET as u64,
        "tools alone over {TOOL_LIST_BUDGET}"
    );
    Ok(())
}

/// The fleet as config entries (JSON shape), by name.
fn fleet(python: &Path, script: &Path, bin: &Path) -> BTreeMap<&'static str, Value> {
    let py = |mode: &str| json!({"command": python, "args": [script, mode]});
    let mut servers = BTreeMap::new();
    for mode in ["small", "big", "paginated", "hangs", "exits"] {
        let name: &'static str = match mode {
            "small" => "small",
            "big" => "big",
            "paginated" => "paginated",
            "hangs" => "hangs",
            _ => "exits",
        };
        servers.insert(name, py(mode));
    }
    let mut env = py("needs-env");
    env["env"] = json!({"FLEET_SECRET": "${FLEET_SECRET_SOURCE}"});
    servers.insert("needs-env", env);
    servers.insert("rmcp", json!({"command": bin, "args": ["stdio"]}));
    servers
}

/// What each server must give: Some(tools) for ok, None for an error.
fn expected(name: &str) -> Option<usize> {
    match name {
        "small" => Some(3),
        "big" => Some(60),
        "paginated" => Some(25),
        "needs-env" => Some(1),
        "rmcp" => Some(9),
        _ => None,
    }
}

fn write(path: &Path, text: &str) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(path.parent().context("a parent")?)?;
    std::fs::write(path, text)?;
    Ok(path.to_path_buf())
}

/// The same fleet in every client format, at the paths the clients read (the fleet
/// folder is both the project and HOME for discovery).
fn write_configs(dir: &Path, servers: &BTreeMap<&str, Value>) -> anyhow::Result<Vec<PathBuf>> {
    let all: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let mut map = all.clone();
    map.remove(HANGS);
    let typed: serde_json::Map<String, Value> = map
        .iter()
        .map(|(k, v)| {
            let mut v = v.clone();
            v["type"] = json!("stdio");
            (k.clone(), v)
        })
        .collect();
    let mut toml = String::from("model = \"gpt-5\"\n");
    for (name, server) in servers.iter().filter(|(name, _)| **name != HANGS) {
        toml.push_str(&format!(
            "\n[mcp_servers.{}]\ncommand = {}\nargs = {}\n",
            name, server["command"], server["args"]
        ));
        if let Some(env) = server.get("env").and_then(Value::as_object) {
            let pairs: Vec<String> = env.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            toml.push_str(&format!("env = {{ {} }}\n", pairs.join(", ")));
        }
    }
    let pretty = |v: Value| serde_json::to_string_pretty(&v).unwrap_or_default();
    Ok(vec![
        write(
            &dir.join(".config/Claude/claude_desktop_config.json"),
            &pretty(json!({"mcpServers": all})),
        )?,
        write(
            &dir.join(".mcp.json"),
            &pretty(json!({"mcpServers": typed})),
        )?,
        write(
            &dir.join(".claude.json"),
            &pretty(
                json!({"numStartups": 4, "projects": {dir.to_string_lossy(): {"mcpServers": map}}}),
            ),
        )?,
        write(
            &dir.join(".vscode/mcp.json"),
            &pretty(json!({"servers": typed, "inputs": []})),
        )?,
        write(
            &dir.join(".cursor/mcp.json"),
            &pretty(json!({"mcpServers": map})),
        )?,
        write(
            &dir.join(".gemini/settings.json"),
            &pretty(json!({"theme": "Default", "mcpServers": map})),
        )?,
        write(&dir.join(".codex/config.toml"), &toml)?,
    ])
}

fn mcp_tokens(bin: &Path, dir: &Path, args: &[&str]) -> anyhow::Result<(Value, Duration)> {
    let started = Instant::now();
    let out = Command::new(bin)
        .arg("mcp-tokens")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("CODEX_HOME", dir.join(".codex"))
        .env("FLEET_SECRET_SOURCE", "fleet-s3cret")
        .stderr(Stdio::inherit())
        .output()?;
    let elapsed = started.elapsed();
    let answer = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "mcp-tokens {args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })?;
    Ok((answer, elapsed))
}

/// name -> (status, tools, tool_tokens)
type Summary = BTreeMap<String, (String, usize, u64)>;

fn summary(answer: &Value) -> Summary {
    answer["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or_default().to_string(),
                (
                    s["status"].as_str().unwrap_or_default().to_string(),
                    s["tools"].as_array().map_or(0, Vec::len),
                    s["tool_tokens"].as_u64().unwrap_or_default(),
                ),
            )
        })
        .collect()
}

fn check_formats(bin: &Path, dir: &Path, configs: &[PathBuf]) -> anyhow::Result<Value> {
    let mut first: Option<(Summary, Value)> = None;
    for (index, config) in configs.iter().enumerate() {
        let holds_hangs = index == 0;
        let path = config.to_string_lossy();
        let (answer, took) = mcp_tokens(
            bin,
            dir,
            &[
                "--json",
                "--config",
                &path,
                "--timeout",
                TIMEOUT,
                "--model",
                "gpt-4o",
                "--concurrency",
                "8",
            ],
        )?;
        let mut found = summary(&answer);
        eprintln!("{path}: {} servers in {took:.1?}", found.len());
        for (name, (status, tools, _)) in &found {
            match expected(name) {
                Some(count) => ensure!(
                    status == "ok" && *tools == count,
                    "{path}: {name} should list {count} tools, got {status} with {tools}: {answer}"
                ),
                None => ensure!(status == "error", "{path}: {name} should fail"),
            }
        }
        let servers = if holds_hangs { 7 } else { 6 };
        ensure!(
            found.len() == servers,
            "{path}: {} servers, not {servers}",
            found.len()
        );
        let errors: BTreeMap<&str, &str> = answer["servers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| Some((s["name"].as_str()?, s["error"].as_str()?)))
            .collect();
        if holds_hangs {
            ensure!(
                errors[HANGS].contains(&format!("within {TIMEOUT} s")),
                "hangs: {}",
                errors[HANGS]
            );
        }
        ensure!(
            errors["exits"].contains("cannot open the database"),
            "exits: {}",
            errors["exits"]
        );
        match &first {
            None => first = Some((found, answer)),
            Some((expected, _)) => {
                let mut expected = expected.clone();
                expected.remove(HANGS);
                found.remove(HANGS);
                ensure!(
                    found == expected,
                    "{path} differs: {found:?} vs {expected:?}"
                );
            }
        }
    }
    let (found, answer) = first.context("no configs")?;
    for (name, (status, tools, tokens)) in &found {
        eprintln!("  {name:<10} {status:<5} {tools:>3} tools {tokens:>6} o200k tokens");
    }
    let savings = &answer["savings"];
    eprintln!(
        "  savings: hoisting {} tokens, unneeded keys {}, {} -> {}",
        savings["hoisting"]["tokens_saved"],
        savings["unneeded_keys"]["tokens_saved"],
        savings["tokens_before"],
        savings["tokens_after"]
    );
    Ok(answer)
}

fn check_discovery(bin: &Path, dir: &Path, files: usize) -> anyhow::Result<()> {
    let (answer, took) = mcp_tokens(
        bin,
        dir,
        &[
            "--json",
            "--timeout",
            TIMEOUT,
            "--model",
            "gpt-4o",
            "--concurrency",
            "16",
        ],
    )?;
    let read = answer["configs"].as_array().map_or(0, Vec::len);
    ensure!(
        read == files,
        "discovery read {read} of {files} configs: {}",
        answer["configs"]
    );
    let servers = answer["servers"].as_array().map_or(0, Vec::len);
    // Seven in the first config, six (all but the one that hangs) in each other.
    ensure!(servers == 6 * files + 1, "{servers} servers found");
    eprintln!("discovery: {read} configs, {servers} servers in {took:.1?}");
    Ok(())
}

/// The Python SDK's client lists each ok server's tools; the Claude Code entries are
/// counted here and must equal what mcp-tokens reported.
fn check_against_python_client(
    python: &Path,
    root: &Path,
    servers: &BTreeMap<&str, Value>,
    answer: &Value,
) -> anyhow::Result<()> {
    for (name, config) in servers {
        if expected(name).is_none() {
            continue;
        }
        let out = Command::new(python)
            .arg(root.join("xtask/fleet/list_tools.py"))
            .arg(config.to_string())
            .env("FLEET_SECRET", "fleet-s3cret")
            .stderr(Stdio::inherit())
            .output()?;
        ensure!(out.status.success(), "list_tools.py {name} failed");
        let tools: Vec<Value> = serde_json::from_slice(&out.stdout)?;
        let total: usize = tools
            .iter()
            .map(|t| {
                // As listed, `$schema` included: Claude Code sends it (see
                // claude_code.rs, which checks mcp-tokens against its real request).
                let schema = t["inputSchema"].clone();
                let entry = json!({
                    "name": format!("mcp__{name}__{}", t["name"].as_str().unwrap_or_default()),
                    "description": t["description"].as_str().unwrap_or_default(),
                    "input_schema": schema,
                });
                Tokenizer::O200kBase.count(&entry.to_string())
            })
            .sum();
        let server = answer["servers"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["name"] == *name)
            .context("server in the answer")?;
        let reported = server["tool_tokens"].as_u64().unwrap_or_default();
        let mut ours: Vec<&str> = server["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        let mut theirs: Vec<String> = tools
            .iter()
            .map(|t| format!("mcp__{name}__{}", t["name"].as_str().unwrap_or_default()))
            .collect();
        ours.sort_unstable();
        theirs.sort_unstable();
        ensure!(
            ours == theirs,
            "{name}: mcp-tokens lists {ours:?}, the Python client {theirs:?}"
        );
        // Both connect as Claude Code does (`server/discover`, falling back to
        // `initialize`): the Python SDK server orders schema keys differently in the
        // two eras, so the same handshake is counted.
        ensure!(
            reported == total as u64,
            "{name}: mcp-tokens says {reported}, the Python client's tools count {total}"
        );
        eprintln!("  {name:<10} mcp-tokens {reported:>6}, Python client's listing {total:>6}");
    }
    eprintln!("the Python SDK client lists the same tools, counted to the same tokens");
    Ok(())
}

/// `--render openai` against the cookbook rule in Python with tiktoken, offline.
fn check_openai_rule(bin: &Path, python: &Path, root: &Path, dir: &Path) -> anyhow::Result<()> {
    let cache = dir.join("tiktoken-cache");
    std::fs::create_dir_all(&cache)?;
    let vocab = tiktoken_rs_asset("o200k_base.tiktoken")?;
    // tiktoken's cache file name: the SHA-1 of the vocabulary's URL.
    let key = "fb374d419588a4632f3f557e76b4b70aebbca790";
    std::fs::copy(&vocab, cache.join(key))?;
    // cl100k_base too: mcp-token-lint counts with it (the benchmark gives it the real
    // vocabulary, not its regex fallback).
    std::fs::copy(
        tiktoken_rs_asset("cl100k_base.tiktoken")?,
        cache.join("9b5ad71b2ce5302211f9c61530b329a4922fc6a4"),
    )?;
    let list = root.join("docs/examples/parcel-tools.json");
    for file in [list.clone(), dir.join("big-tools.json")] {
        if !file.exists() {
            // The big server's list, saved by the Python client.
            let out = Command::new(python)
                .arg(root.join("xtask/fleet/list_tools.py"))
                .arg(json!({"command": python, "args": [root.join("xtask/fleet/fleet_server.py"), "big"]}).to_string())
                .output()?;
            std::fs::write(&file, &out.stdout)?;
        }
        let (ours, _) = mcp_tokens(
            bin,
            dir,
            &[
                "--json",
                "--render",
                "openai",
                "--model",
                "gpt-4o",
                "--file",
                &file.to_string_lossy(),
            ],
        )?;
        let out = Command::new(python)
            .arg(root.join("xtask/fleet/cookbook_rule.py"))
            .arg(&file)
            .env("TIKTOKEN_CACHE_DIR", &cache)
            .stderr(Stdio::inherit())
            .output()?;
        ensure!(out.status.success(), "cookbook_rule.py failed");
        let theirs: Value = serde_json::from_slice(&out.stdout)?;
        ensure!(
            ours["request_tokens"] == theirs["total"],
            "{}: ours {} (request_tokens), the cookbook's {}",
            file.display(),
            ours["request_tokens"],
            theirs["total"]
        );
        eprintln!(
            "openai rule: {} = {} tokens, as the cookbook's Python",
            file.display(),
            theirs["total"]
        );
    }
    Ok(())
}

/// A file tiktoken-rs bundles (its crate source, in cargo's registry).
fn tiktoken_rs_asset(name: &str) -> anyhow::Result<PathBuf> {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()?;
    let metadata: Value = serde_json::from_slice(&out.stdout)?;
    let manifest = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "tiktoken-rs")
        .and_then(|p| p["manifest_path"].as_str())
        .context("tiktoken-rs is not in the workspace's dependencies")?;
    let path = Path::new(manifest).with_file_name("assets").join(name);
    ensure!(path.is_file(), "{} is missing", path.display());
    Ok(path)
}

/// CPU seconds (user + system) a running process has used itself, from /proc.
fn own_cpu(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 (1-based); `rest` starts at field 3.
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn benchmark(python: &Path, script: &Path, dir: &Path, py_bin: &Path) -> anyhow::Result<()> {
    // What Claude Code sent for one server of each mode, recorded by `cargo xtask
    // clients`: the truth both tools are measured against.
    let recording = crate::target_dir().join("xtask/claude-code/run/claude-code-tools.json");
    let sent: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(&recording)
            .with_context(|| format!("cannot read {} (run `cargo xtask clients` first: it records what Claude Code sends)", recording.display()))?,
    )?;
    let sent_tokens = |mode: &str| -> usize {
        let prefix = format!("mcp__{mode}__");
        sent.iter()
            .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with(&prefix)))
            .map(|t| Tokenizer::O200kBase.count(&t.to_string()))
            .sum()
    };
    // The binary a user installs.
    crate::cargo(&[
        "build",
        "--locked",
        "--release",
        "-p",
        "context-loader",
        "--bin",
        "context-loader",
    ])?;
    let bin = crate::target_dir().join("release/context-loader");
    // 20 servers: 7 small, 7 paginated, 6 with 60 tools.
    let mut servers = serde_json::Map::new();
    let mut truth = 0;
    for i in 0..20 {
        let mode = match i % 3 {
            0 => "small",
            1 => "paginated",
            _ => "big",
        };
        let recorded = sent_tokens(mode);
        ensure!(
            recorded > 0,
            "{} holds no {mode} tools: run `cargo xtask clients` again",
            recording.display()
        );
        truth += recorded;
        servers.insert(
            format!("{mode}-{i:02}"),
            json!({"command": python, "args": [script, mode]}),
        );
    }
    let config = write(
        &dir.join("bench/claude_desktop_config.json"),
        &json!({"mcpServers": servers}).to_string(),
    )?;
    // The servers' own start-up: one small server measured alone.
    let (_, alone) = mcp_tokens(
        &bin,
        dir,
        &[
            "--json",
            "--config",
            &write(
                &dir.join("bench/one.json"),
                &json!({"mcpServers": {"small": {"command": python, "args": [script, "small"]}}})
                    .to_string(),
            )?
            .to_string_lossy(),
        ],
    )?;
    // Rounds alternate the two tools, so a change in the machine's load falls on both.
    const ROUNDS: usize = 3;
    let (mut ours, mut cpus, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    let (mut answer, mut lint_json) = (Value::Null, Value::Null);
    for _ in 0..ROUNDS {
        let (wall, cpu, measured) = time_mcp_tokens(&bin, &config)?;
        ours.push(wall);
        cpus.push(cpu);
        answer = measured;
        let started = Instant::now();
        let lint = Command::new(py_bin.join("mcp-token-lint"))
            .args(["check", "--json", "--timeout", "60"])
            .arg(&config)
            .env("TIKTOKEN_CACHE_DIR", dir.join("tiktoken-cache"))
            .output()?;
        theirs.push(started.elapsed().as_secs_f64());
        lint_json = serde_json::from_slice(&lint.stdout).with_context(|| {
            format!(
                "mcp-token-lint gave no JSON ({}): {}",
                lint.status,
                String::from_utf8_lossy(&lint.stderr)
            )
        })?;
    }
    let total = answer["total_tokens"].as_u64().unwrap_or_default() as usize;
    // Tools only: mcp-token-lint does not count instructions.
    let ours_tools: u64 = answer["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["tool_tokens"].as_u64())
        .sum();
    let ours_tools = ours_tools as usize;
    let ours_seen: usize = answer["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| s["tools"].as_array().map_or(0, Vec::len))
        .sum();
    let lint_total = lint_json["total_tokens"].as_u64().unwrap_or_default() as usize;
    let lint_seen: usize = lint_json["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["tool_count"].as_u64())
        .sum::<u64>() as usize;
    println!(
        "mcp-tokens bench rounds (wall s): ours {ours:.2?}, mcp-token-lint {theirs:.2?}; \
         1-minute load average at the end: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split(' ')
            .next()
            .unwrap_or("?")
    );
    let (ours_wall, cpu, lint_wall) = (median(&mut ours), median(&mut cpus), median(&mut theirs));
    let off = |n: usize| (n as f64 - truth as f64) / truth as f64 * 100.0;
    println!(
        "mcp-tokens bench: 20 servers, median of {ROUNDS} alternating rounds, release build, default --concurrency\n\
         | | wall clock | own CPU | tools seen | tool tokens | vs Claude Code's request ({truth} o200k) |\n\
         |---|---:|---:|---:|---:|---:|\n\
         | context-loader mcp-tokens --model gpt-4o | {ours_wall:.2} s | {cpu:.2} s | {ours_seen} | {ours_tools} | {:+.2} % |\n\
         | mcp-token-lint check --json 0.2.0 | {lint_wall:.2} s | | {lint_seen} | {lint_total} | {:+.2} % |\n\
         ratio (mcp-token-lint / ours, wall): {:.2}x; one small server alone: {:.2} s; our total with instructions: {total}",
        off(ours_tools),
        off(lint_total),
        lint_wall / ours_wall,
        alone.as_secs_f64(),
    );
    if cpu >= 2.0 {
        bail!("mcp-tokens used {cpu:.2} s of its own CPU on 20 servers, over 2 s");
    }
    Ok(())
}

/// One run of mcp-tokens over `config`: wall clock, its own CPU (servers excluded),
/// and its answer.
fn time_mcp_tokens(bin: &Path, config: &Path) -> anyhow::Result<(f64, f64, Value)> {
    let started = Instant::now();
    let mut child = Command::new(bin)
        .args(["mcp-tokens", "--json", "--model", "gpt-4o", "--config"])
        .arg(config)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let pid = child.id();
    // Read all along: the answer is larger than a pipe holds.
    let mut stdout = child.stdout.take().context("stdout is piped")?;
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut text).map(|_| text)
    });
    let mut cpu = 0.0;
    while child.try_wait()?.is_none() {
        cpu = own_cpu(pid).unwrap_or(cpu);
        std::thread::sleep(Duration::from_millis(5));
    }
    let wall = started.elapsed().as_secs_f64();
    let text = reader
        .join()
        .map_err(|_| anyhow::anyhow!("reader panicked"))??;
    let answer: Value = serde_json::from_slice(&text)?;
    let ok = answer["servers"]
        .as_array()
        .map_or(0, |s| s.iter().filter(|s| s["status"] == "ok").count());
    ensure!(ok == 20, "{ok} of 20 servers measured: {answer}");
    Ok((wall, cpu, answer))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
