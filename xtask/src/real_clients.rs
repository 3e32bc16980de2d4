//! What the real-client checks of `cargo xtask clients` share (Claude Code, Codex CLI,
//! Gemini CLI, GitHub Copilot CLI): the setup lines of docs/clients.md with their placeholders filled,
//! a pinned npm install, the generated project the server reads, the scripted calls
//! and how their answers are judged, and the comparison with
//! `mcp-tokens --client`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail, ensure};
use context_budget::Tokenizer;
use context_budget::answer::js_length;
use serde_json::{Value, json};

use crate::node::NodeEnv;

/// The placeholders of docs/clients.md, longest first (one is the front of another).
const BINARY: &str = "/absolute/path/to/target/release/context-loader";
const SPECS_DIR: &str = "/absolute/path/to/your/specs";
const PROJECT: &str = "/absolute/path/to/your/project";

/// The block of docs/clients.md marked `<!-- xtask clients: NAME -->` (the next
/// fenced block after the marker), as written.
pub(crate) fn setup_block(root: &Path, name: &str) -> anyhow::Result<String> {
    let doc = root.join("docs/clients.md");
    let text =
        std::fs::read_to_string(&doc).with_context(|| format!("cannot read {}", doc.display()))?;
    let marker = format!("<!-- xtask clients: {name} -->");
    let mut lines = text.lines().skip_while(|l| l.trim() != marker);
    ensure!(
        lines.next().is_some(),
        "docs/clients.md has no `{marker}` block"
    );
    let mut lines = lines.skip_while(|l| !l.trim_start().starts_with("```"));
    lines
        .next()
        .with_context(|| format!("no code block after `{marker}`"))?;
    let body: Vec<&str> = lines
        .take_while(|l| !l.trim_start().starts_with("```"))
        .collect();
    ensure!(!body.is_empty(), "the block after `{marker}` is empty");
    Ok(body.join("\n") + "\n")
}

/// The generated project a client's server reads, and the paths that fill the
/// placeholders of docs/clients.md.
pub(crate) struct Project {
    pub binary: PathBuf,
    pub tree: PathBuf,
    pub specs: PathBuf,
}

impl Project {
    /// The tree and the spec folder under `dir` (replacing them).
    pub fn write(root: &Path, dir: &Path, client: &str) -> anyhow::Result<Project> {
        let binary = crate::target_dir().join("debug/context-loader");
        ensure!(
            binary.exists(),
            "{} is not built (cargo build -p context-loader)",
            binary.display()
        );
        let tree = dir.join("tree");
        let tree_bytes = write_tree(root, &tree)?;
        let specs = dir.join("specs");
        let (spec_files, spec_bytes) = crate::spec_corpus::generate(&specs, SPECS)?;
        println!(
            "{client}: the server reads a tree of {} files ({tree_bytes} bytes; {NON_LATIN_FILES} \
             Russian and Chinese) and {SPECS} specs ({spec_files} files, {spec_bytes} bytes)",
            TREE_FILES + NON_LATIN_FILES
        );
        for path in [&binary, &tree, &specs] {
            let text = path.to_str().context("a path is not UTF-8")?;
            ensure!(
                !text.contains([' ', '"', '\\', '\'']),
                "{text}: the setup lines take paths without spaces or quotes"
            );
        }
        Ok(Project {
            binary,
            tree,
            specs,
        })
    }

    /// A docs/clients.md block with this project's paths in place of the placeholders.
    pub fn fill(&self, block: &str) -> String {
        let path = |p: &PathBuf| p.to_string_lossy().into_owned();
        block
            .replace(BINARY, &path(&self.binary))
            .replace(SPECS_DIR, &path(&self.specs))
            .replace(PROJECT, &path(&self.tree))
    }
}

/// A client's isolated home, emptied of the last run, with its config folder
/// `config` (`.codex`, `.gemini`, `.copilot`) made.
pub(crate) fn fresh_home(home: &Path, config: &str) -> anyhow::Result<()> {
    if home.exists() {
        std::fs::remove_dir_all(home)
            .with_context(|| format!("cannot clear {}", home.display()))?;
    }
    std::fs::create_dir_all(home.join(config))
        .with_context(|| format!("cannot create {}", home.display()))
}

/// Fail at once, with the reason, where a client's pinned native binary (linux-x64)
/// cannot run.
pub(crate) fn require_linux_x64(client: &str) -> anyhow::Result<()> {
    ensure!(
        cfg!(all(target_os = "linux", target_arch = "x86_64")),
        "the {client} check runs the linux-x64 native binary; this machine is {}-{}",
        std::env::consts::OS,
        std::env::consts::ARCH
    );
    Ok(())
}

/// Install `package@version` for `client` into `dir` (once) and print the version
/// it answers: the first line of `version_command`'s output.
pub(crate) fn install_client(
    node: &NodeEnv,
    dir: &Path,
    (client, package, version): (&str, &str, &str),
    version_command: impl Fn() -> Command,
) -> anyhow::Result<()> {
    let answered = || {
        let out = version_command().stdin(Stdio::null()).output().ok()?;
        out.status.success().then(|| {
            let text = String::from_utf8_lossy(&out.stdout);
            text.lines().next().unwrap_or_default().trim().to_string()
        })
    };
    let answer = npm_install(
        node,
        dir,
        &[format!("{package}@{version}")],
        version,
        answered,
    )
    .with_context(|| format!("{client} {version} cannot start here"))?;
    println!("{client}: {answer}");
    Ok(())
}

/// `npm install --ignore-scripts PACKAGES` into `prefix` unless `installed` already
/// answers `version`; then `installed` must. Its answer, asked once: Gemini CLI takes
/// seconds to start.
pub(crate) fn npm_install(
    node: &NodeEnv,
    prefix: &Path,
    packages: &[String],
    version: &str,
    installed: impl Fn() -> Option<String>,
) -> anyhow::Result<String> {
    if let Some(answer) = installed().filter(|v| v.contains(version)) {
        return Ok(answer);
    }
    eprintln!(
        "npm install {} into {}",
        packages.join(" "),
        prefix.display()
    );
    std::fs::create_dir_all(prefix).with_context(|| format!("create {}", prefix.display()))?;
    let status = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--save-exact",
            "--prefix",
        ])
        .arg(prefix)
        .args(packages)
        .env("PATH", &node.path)
        .env("npm_config_cache", &node.npm_cache)
        .env("npm_config_update_notifier", "false")
        .status()
        .context("cannot run npm")?;
    ensure!(
        status.success(),
        "npm could not install {} ({status})",
        packages.join(" ")
    );
    match installed() {
        Some(v) if v.contains(version) => Ok(v),
        Some(v) => bail!(
            "installed {} reports {v:?}, not {version}",
            packages.join(" ")
        ),
        None => bail!("{} was installed but cannot start here", packages.join(" ")),
    }
}

/// What a scripted call is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expect {
    /// Its answer must reach the model whole.
    Whole,
    /// It must be refused, in at most [`MAX_ERROR_CHARS`] as the model sees it.
    Error,
}

/// Most characters of an error answer as the server sends it (issue 39). What a
/// client wraps around it is printed beside: Gemini CLI repeats the call's arguments
/// and the whole raw result (text and structuredContent) escaped once more, about
/// three times the server's error, which no size of ours under ~250 characters
/// would keep under 1,000.
pub(crate) const MAX_ERROR_CHARS: usize = 1_000;

/// The calls every client makes in one turn: every tool's default call (Claude
/// Code's [`KEPT`]), `load-files` over the Russian and the Chinese documents, and two
/// unknown models.
pub(crate) fn scripted_calls() -> Vec<(&'static str, Value, Expect)> {
    let mut calls: Vec<(&str, Value, Expect)> = KEPT
        .iter()
        .map(|(tool, input)| {
            let input = serde_json::from_str(input).expect("KEPT inputs are JSON");
            (*tool, input, Expect::Whole)
        })
        .collect();
    for lang in ["ru", "zh"] {
        calls.push((
            "load-files",
            json!({"paths": [format!("intl/{lang}")], "model": "gpt-4o"}),
            Expect::Whole,
        ));
    }
    for model in ["gpt-4-oo", "gpt-4.5"] {
        calls.push((
            "count-tokens",
            json!({"text": "hello world", "model": model}),
            Expect::Error,
        ));
    }
    calls
}

/// One scripted call's answer as a client passed it to the model.
pub(crate) struct Received {
    pub tool: &'static str,
    pub input: Value,
    pub expect: Expect,
    /// Everything the client sent the model for this call.
    pub as_sent: String,
    /// The server's answer inside it (the client's wrapper taken off), if found.
    pub answer: Option<String>,
    /// The server's whole answer, where the client reports it (Codex's events).
    pub original: Option<String>,
}

/// Markers clients put in place of what they cut or saved elsewhere, looked for
/// outside the answer (our answers hold `"truncated": false` and files' text).
const CUT_MARKERS: [&str; 3] = ["saved to", "Output too large", "truncated"];

/// Codex's mark where it cut the middle out: `…N tokens truncated…`.
fn codex_cut(text: &str) -> Option<String> {
    let tail = " tokens truncated\u{2026}";
    let at = text.find(tail)?;
    let digits = text[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .count();
    let start = at - digits;
    (digits > 0 && text[..start].ends_with('\u{2026}'))
        .then(|| text[start - '\u{2026}'.len_utf8()..at + tail.len()].to_string())
}

/// Print each call's figures and return what failed: a whole answer cut, saved to a
/// file, not JSON or an error; an error answer not refused or over
/// [`MAX_ERROR_CHARS`] as the server sent it.
pub(crate) fn judge(client: &str, rows: &[Received]) -> Vec<String> {
    let mut failures = Vec::new();
    println!(
        "{client}: each call's answer (server: the server's whole answer where the client \
         reports it, else the answer as received; sent: all the client passed to the model, \
         its wrapper included; chars in UTF-16 units, tokens o200k):"
    );
    println!(
        "  {:<17} {:<34} {:>13} {:>13} {:>7} {:>11} {:>11}  verdict",
        "tool", "input", "server chars", "server bytes", "tokens", "sent chars", "sent bytes"
    );
    for row in rows {
        let input = row.input.to_string();
        let input: String = if input.chars().count() > 34 {
            input.chars().take(31).collect::<String>() + "..."
        } else {
            input
        };
        let answer = row.answer.as_deref().unwrap_or("");
        let parsed = serde_json::from_str::<Value>(answer)
            .ok()
            .filter(Value::is_object);
        let refused = parsed
            .as_ref()
            .is_some_and(|a| a.get("error_code").is_some());
        // A JSON string value may itself mention "truncated" (a file's text, a field
        // name): only a marker outside the parsed answer counts.
        // The answer may be inside a JSON string of what was sent (Gemini's): then it
        // is there escaped.
        let escaped = serde_json::to_string(answer).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        let outside = if answer.is_empty() {
            row.as_sent.clone()
        } else if row.as_sent.contains(answer) {
            row.as_sent.replacen(answer, "", 1)
        } else {
            row.as_sent.replacen(escaped, "", 1)
        };
        let marker = codex_cut(&row.as_sent).or_else(|| {
            CUT_MARKERS
                .iter()
                .find(|m| outside.contains(*m))
                .map(|m| m.to_string())
        });
        let sent_chars = js_length(&row.as_sent);
        let verdict = match row.expect {
            Expect::Whole => {
                let problem = if let Some(marker) = marker {
                    Some(format!("cut by the client (`{marker}`)"))
                } else if row.answer.is_none() || parsed.is_none() {
                    Some("not whole JSON".to_string())
                } else if refused {
                    Some(format!("refused: {answer}"))
                } else {
                    None
                };
                match problem {
                    None => "whole".to_string(),
                    Some(problem) => {
                        failures.push(format!(
                            "{client}: {} {} did not reach the model whole: {problem}; it read \
                             {sent_chars} characters starting {:?} and ending {:?}",
                            row.tool,
                            row.input,
                            head(&row.as_sent, 160),
                            tail(&row.as_sent, 160),
                        ));
                        format!("NO: {problem}")
                    }
                }
            }
            Expect::Error => {
                if !refused {
                    failures.push(format!(
                        "{client}: {} {} was not refused: the model read {:?}",
                        row.tool,
                        row.input,
                        head(&row.as_sent, 300)
                    ));
                    "NO: not refused".to_string()
                } else if js_length(answer) > MAX_ERROR_CHARS {
                    failures.push(format!(
                        "{client}: {} {} was refused in {} characters (the model reads \
                         {sent_chars}), over {MAX_ERROR_CHARS}",
                        row.tool,
                        row.input,
                        js_length(answer)
                    ));
                    format!("NO: error over {MAX_ERROR_CHARS} chars")
                } else {
                    format!("error, small ({sent_chars} chars as read)")
                }
            }
        };
        let server = row.original.as_deref().unwrap_or(answer);
        println!(
            "  {:<17} {:<34} {:>13} {:>13} {:>7} {:>11} {:>11}  {verdict}",
            row.tool,
            input,
            js_length(server),
            server.len(),
            Tokenizer::O200kBase.count(server),
            sent_chars,
            row.as_sent.len(),
        );
    }
    failures
}

pub(crate) fn head(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}

pub(crate) fn tail(text: &str, n: usize) -> String {
    let count = text.chars().count();
    text.chars().skip(count.saturating_sub(n)).collect()
}

/// The first string in `value` containing `needle`, with where it is
/// (`contents[0].parts[1].text`, `input[0].content[0].text`).
pub(crate) fn find_text(value: &Value, needle: &str, at: &str) -> Option<(String, String)> {
    match value {
        Value::String(s) if s.contains(needle) => Some((at.to_string(), s.clone())),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_text(v, needle, &format!("{at}[{i}]"))),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            let at = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            find_text(v, needle, &at)
        }),
        _ => None,
    }
}

/// o200k_base tokens of a value as compact JSON.
pub(crate) fn o200k_json(value: &Value) -> usize {
    Tokenizer::O200kBase.count(&value.to_string())
}

/// How far `mcp-tokens --client`'s figures may be from what the client sent.
const TOLERANCE: f64 = 0.01;

/// Compare what `client` sent (`figures`: a name and o200k tokens) with
/// `context-loader mcp-tokens --client CLIENT --json --model MODEL --config CONFIG`,
/// counted with o200k_base (`model`: one counted with it, and for Codex one whose
/// deferral matches the run's). Each name reads one figure of the answer, within
/// [`TOLERANCE`]:
/// - `eager`: the tools part on every request, of the `context-loader` server (the
///   config also holds the tool-less init probe): Codex's namespace holds our
///   instructions, so its `total_tokens`; the others' tool entries alone, its
///   `tool_tokens`;
/// - `instructions`: that server's `instructions_tokens` (Gemini CLI's block);
/// - `deferred`: `client.deferred.every_request_tokens` (Codex's server line);
/// - `search`: `client.deferred.searched_tokens` (Codex's `tool_search_output` item).
///
/// A client `mcp-tokens --client` does not render (GitHub Copilot CLI) has its
/// figures printed, and nothing to compare them with: said so, not passed over.
pub(crate) fn compare_mcp_tokens(
    client: &str,
    model: &str,
    config: &Path,
    figures: &[(&str, usize)],
) -> anyhow::Result<()> {
    let shown: Vec<String> = figures.iter().map(|(n, t)| format!("{n} {t}")).collect();
    if !context_budget::clients::IDS.contains(&client) {
        println!(
            "{client}: sent (o200k) {}; mcp-tokens --client does not render this client's \
             tools (its rules are recorded here, not modelled)",
            shown.join(", ")
        );
        return Ok(());
    }
    let bin = crate::target_dir().join("debug/context-loader");
    let out = Command::new(&bin)
        .args(["mcp-tokens", "--client", client, "--model", model, "--json"])
        .arg("--config")
        .arg(config)
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run context-loader mcp-tokens --client")?;
    let answer: Value = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "mcp-tokens --client {client} gave no JSON ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stdout)
        )
    })?;
    let server = answer["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["name"] == "context-loader")
        .with_context(|| {
            format!("mcp-tokens --client {client} did not report context-loader: {answer}")
        })?;
    let cost = &answer["client"];
    // Claude Code's deferred tools' names alone: what stays in every request, less the
    // instructions, which are in the system prompt whether or not tools are deferred.
    let deferred_names = match (
        cost["deferred"]["every_request_tokens"].as_u64(),
        server["instructions_tokens"].as_u64(),
    ) {
        (Some(every), Some(instructions)) => json!(every.saturating_sub(instructions)),
        _ => Value::Null,
    };
    let mut failures = Vec::new();
    for (name, sent) in figures {
        let (figure, path) = match (*name, client) {
            ("eager", "codex") => (
                &server["total_tokens"],
                "servers[context-loader].total_tokens",
            ),
            ("eager", _) => (
                &server["tool_tokens"],
                "servers[context-loader].tool_tokens",
            ),
            ("instructions", _) => (
                &server["instructions_tokens"],
                "servers[context-loader].instructions_tokens",
            ),
            ("deferred", _) => (
                &cost["deferred"]["every_request_tokens"],
                "client.deferred.every_request_tokens",
            ),
            ("deferred names", _) => (
                &deferred_names,
                "client.deferred.every_request_tokens - servers[context-loader].instructions_tokens",
            ),
            ("search", _) => (
                &cost["deferred"]["searched_tokens"],
                "client.deferred.searched_tokens",
            ),
            (other, _) => bail!("no figure of mcp-tokens is named {other}"),
        };
        let Some(measured) = figure.as_u64() else {
            failures.push(format!(
                "mcp-tokens --client {client} --model {model} --json has no `{path}`: {answer}"
            ));
            continue;
        };
        let diff = (measured as f64 - *sent as f64) / (*sent).max(1) as f64;
        println!(
            "{client} ({model}): {name}: sent {sent} o200k, mcp-tokens --client {measured} \
             ({:+.2} %)",
            diff * 100.0
        );
        if diff.abs() > TOLERANCE {
            failures.push(format!(
                "mcp-tokens --client {client} counts {name} as {measured}; {client} sent {sent} \
                 ({:+.2} %, tolerance {:.0} %)",
                diff * 100.0,
                TOLERANCE * 100.0
            ));
        }
    }
    ensure!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// The `initialize` params the init probe (xtask/clients/init_probe.py) recorded.
pub(crate) fn probed(log: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(log).ok()?;
    text.lines().find_map(|l| serde_json::from_str(l).ok())
}

/// The init probe's command and arguments, writing to `log`.
pub(crate) fn probe_command(root: &Path, log: &Path) -> (String, Vec<String>) {
    (
        "python3".to_string(),
        vec![
            root.join("xtask/clients/init_probe.py")
                .to_string_lossy()
                .into_owned(),
            log.to_string_lossy().into_owned(),
        ],
    )
}

/// One line for the probe's record: clientInfo and protocol.
pub(crate) fn describe_init(init: &Option<Value>) -> String {
    match init {
        Some(init) => format!(
            "clientInfo {}, protocol {}",
            init["clientInfo"], init["protocolVersion"]
        ),
        None => "no initialize recorded".to_string(),
    }
}

/// Calls with default arguments (what a model sends first) whose answer must reach
/// the model whole: JSON, not a preview or a refusal. The file tools run over the
/// generated tree, the spec tools over the 2,000-spec folder.
pub(crate) const KEPT: &[(&str, &str)] = &[
    (
        "count-tokens",
        r#"{"text": "Before loading a file, ask what it costs."}"#,
    ),
    ("list-models", r#"{}"#),
    ("file-tokens", r#"{}"#),
    ("load-files", r#"{"model": "gpt-4o"}"#),
    ("spec-tokens", r#"{}"#),
    (
        "spec-budget",
        r#"{"specs": ["1", "2", "3"], "budget": 20000}"#,
    ),
    (
        "fit-messages",
        r#"{"messages": [
            {"role": "system", "content": "You plan what to load into a context window."},
            {"role": "user", "content": "Which specs fit in 20,000 tokens?"},
            {"role": "assistant", "content": "Specs 1 to 3 fit; 4 does not."},
            {"role": "user", "content": "Load them."}
        ], "model": "gpt-4o"}"#,
    ),
    (
        "assemble-context",
        r#"{"sections": [
            {"name": "system", "content": "You are a careful coding agent."},
            {"name": "working_memory", "content": "The budget is 3,000 tokens; the tree has 1,200 files."},
            {"name": "notes", "content": "Load the smallest files first when the budget is tight."}
        ], "model": "gpt-4o"}"#,
    ),
    (
        "mcp-tokens",
        r#"{"tools": [
            {"name": "ship", "description": "Ship a parcel.", "inputSchema": {"type": "object",
                "properties": {"to": {"type": "string", "description": "Address"}}, "required": ["to"]}},
            {"name": "track", "description": "Track a parcel.", "inputSchema": {"type": "object",
                "properties": {"id": {"type": "string"}}}}
        ]}"#,
    ),
];

/// Files in the generated tree, and the specs in the generated folder.
pub(crate) const TREE_FILES: usize = 2_000;
pub(crate) const SPECS: usize = 2_000;

/// A deterministic tree of [`TREE_FILES`] files of mixed sizes under `dir`
/// (replacing it), from the repository's own `.rs` and `.md` files: file `i` is the
/// front of one of them, cut at a line, most small, some whole; and
/// [`NON_LATIN_FILES`] Russian and Chinese documents under `intl/` (two and three
/// bytes a character, where a client's limit in bytes bites first). Returns its bytes.
pub(crate) fn write_tree(root: &Path, dir: &Path) -> anyhow::Result<usize> {
    let listed = Command::new("git")
        .args(["ls-files", "-z", "--", "*.rs", "*.md"])
        .current_dir(root)
        .output()
        .context("cannot run git ls-files (the tree is made from the repository's files)")?;
    ensure!(
        listed.status.success(),
        "git ls-files failed: {}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let mut sources: Vec<(String, String)> = Vec::new();
    for path in String::from_utf8_lossy(&listed.stdout).split('\0') {
        if path.is_empty() {
            continue;
        }
        // A file deleted in the work tree is still listed; skip what cannot be read.
        if let Ok(text) = std::fs::read_to_string(root.join(path)) {
            sources.push((path.to_string(), text));
        }
    }
    sources.sort();
    ensure!(
        sources.len() >= 20,
        "git ls-files found only {} .rs and .md files in {}",
        sources.len(),
        root.display()
    );
    crate::disk::remove_dir_if_present(dir)?;
    let mut bytes = 0;
    for i in 0..TREE_FILES {
        let (path, text) = &sources[(i * 7) % sources.len()];
        // Percent of the source kept: 60 % of files small, 30 % middling, 10 % whole.
        let step = (i * 37) % 100;
        let percent = match step {
            0..=59 => 1 + step / 4,
            60..=89 => 20 + (step - 60) * 2,
            _ => 100,
        };
        let mut end = text.len() * percent / 100;
        while !text.is_char_boundary(end) {
            end += 1;
        }
        end = text[end..].find('\n').map_or(text.len(), |at| end + at + 1);
        let name = Path::new(path)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("file.rs");
        let file = dir.join(format!("mod_{:02}/{i:04}-{name}", i % 40));
        std::fs::create_dir_all(file.parent().context("a file has a folder")?)?;
        let header = if name.ends_with(".rs") {
            format!("// variant {i} of {path}\n")
        } else {
            format!("<!-- variant {i} of {path} -->\n")
        };
        let body = header + &text[..end];
        bytes += body.len();
        std::fs::write(&file, body).with_context(|| format!("cannot write {}", file.display()))?;
    }
    for i in 0..NON_LATIN_FILES {
        let (lang, paragraph) = NON_LATIN[i % NON_LATIN.len()];
        let file = dir.join(format!("intl/{lang}/doc_{i:02}.md"));
        std::fs::create_dir_all(file.parent().context("a file has a folder")?)?;
        let mut body = format!("# {lang} {i}\n\n");
        for p in 0..3 + (i * 7) % 60 {
            body.push_str(&format!("{p}. {paragraph}\n\n"));
        }
        bytes += body.len();
        std::fs::write(&file, body).with_context(|| format!("cannot write {}", file.display()))?;
    }
    Ok(bytes)
}

/// Documents under `intl/` of the generated tree, alternately Russian and Chinese.
pub(crate) const NON_LATIN_FILES: usize = 32;

/// The paragraph each non-Latin document repeats, by folder.
const NON_LATIN: [(&str, &str); 2] = [
    (
        "ru",
        "Прежде чем загрузить файл, агент спрашивает, сколько он стоит в окне контекста. \
         Счётчик токенов отвечает точно для моделей OpenAI и с оценкой для Claude. Бюджет \
         делится между системной подсказкой, описаниями инструментов и историей разговора.",
    ),
    (
        "zh",
        "在加载文件之前，代理会先询问它在上下文窗口中占用多少令牌。计数器对 OpenAI \
         模型给出精确结果，对 Claude 给出偏高的估计。预算在系统提示、工具定义和对话历史之间分配。",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_read_from_the_doc_and_filled() {
        let root = crate::workspace_root();
        let project = Project {
            binary: "/b/context-loader".into(),
            tree: "/p".into(),
            specs: "/s".into(),
        };
        let codex = project.fill(&setup_block(&root, "codex").expect("codex block"));
        assert!(codex.starts_with("[mcp_servers."), "{codex}");
        assert!(
            codex.contains(r#"command = "/b/context-loader""#),
            "{codex}"
        );
        assert!(codex.contains(r#""--root", "/p""#), "{codex}");
        assert!(codex.contains(r#""--specs-dir", "/s""#), "{codex}");
        let gemini = project.fill(&setup_block(&root, "gemini-cli").expect("gemini block"));
        let gemini: Value = serde_json::from_str(&gemini).expect("gemini block is JSON");
        assert_eq!(
            gemini["mcpServers"]["context-loader"]["command"],
            "/b/context-loader"
        );
        let copilot = project.fill(&setup_block(&root, "copilot-cli").expect("copilot block"));
        let copilot: Value = serde_json::from_str(&copilot).expect("copilot block is JSON");
        assert_eq!(
            copilot["mcpServers"]["context-loader"]["args"][1], "/p",
            "{copilot}"
        );
        let claude = project.fill(&setup_block(&root, "claude-code").expect("claude block"));
        assert!(claude.starts_with("claude mcp add context-loader -- /b/context-loader --root /p"));
        assert!(setup_block(&root, "nobody").is_err());
        // The docs test (servers/context-loader/tests/readme.rs) reads the same file.
        let doc = std::fs::read_to_string(root.join("docs/clients.md")).expect("doc");
        test_support::readme::blocks(&doc).expect("docs/clients.md passes the docs check");
    }

    #[test]
    fn codex_cut_is_found_only_with_its_count() {
        let cut = "Output:\n{\"a\":\"x\u{2026}1234 tokens truncated\u{2026}y\"}";
        assert_eq!(
            codex_cut(cut).as_deref(),
            Some("\u{2026}1234 tokens truncated\u{2026}")
        );
        assert_eq!(codex_cut("no tokens truncated\u{2026} here"), None);
    }
}
