//! `cargo xtask fuzz` (also a `cargo xtask ci` step): mcp-fuzzer 0.7.0 (PyPI) in
//! tools and protocol modes over stdio and streamable HTTP, with `--no-network`.
//!
//! mcp-fuzzer always exits 0, so its run_summary.json is read instead: every run must
//! have completed with runs actually made, no `crash` and no `hang` findings, and the
//! HTTP server must still answer /healthz afterwards. Other finding categories (e.g.
//! `accepted_malformed`: a request with extra or odd-but-valid fields got a normal
//! answer) are printed, not failed on: they are the fuzzer's opinions, not faults.
//!
//! `injection_reflection` (3-5 per run, in count-tokens and mcp-tokens so far) is the
//! UNSUPPORTED_MODEL error naming the model the caller sent (`<script>`,
//! `../../../etc/passwd`): the caller's own argument, capped by `--max-name-bytes`,
//! JSON-escaped, and shown by the MCP App as text, never as HTML. Naming it is what
//! lets the caller see its typo. Each such finding's tool and marker is printed, so
//! a reflection in another tool shows in the log.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

/// Per tool (tools mode) / per message type (protocol mode).
const TOOL_RUNS: &str = "25";
const PROTOCOL_RUNS: &str = "8";

pub fn run() -> anyhow::Result<()> {
    let target = crate::target_dir();
    let venv = crate::python::ensure_venv(&target)?;
    let mut server = crate::server::start(&[])?;
    let binary = target.join("debug/context-loader");
    let stdio_command = format!("{} stdio", binary.display());
    let out_root = target.join("xtask/fuzz");
    let _ = std::fs::remove_dir_all(&out_root);

    let mut other_findings: BTreeMap<String, u64> = BTreeMap::new();
    let mut lines = Vec::new();
    // `injection_reflection` findings as "tool: marker", across the four runs.
    let mut reflections: Vec<String> = Vec::new();
    for (transport, protocol, endpoint) in [
        ("stdio", "stdio", stdio_command.as_str()),
        ("http", "streamablehttp", server.url.as_str()),
    ] {
        for mode in ["tools", "protocol"] {
            let out_dir = out_root.join(format!("{mode}-{transport}"));
            let status = Command::new(venv.join("mcp-fuzzer"))
                .args([
                    "--mode",
                    mode,
                    "--protocol",
                    protocol,
                    "--endpoint",
                    endpoint,
                ])
                .args([
                    "--phase",
                    "both",
                    "--runs",
                    TOOL_RUNS,
                    "--runs-per-type",
                    PROTOCOL_RUNS,
                ])
                .args([
                    "--timeout",
                    "30",
                    "--no-network",
                    "--seed",
                    "5",
                    "--log-level",
                    "ERROR",
                ])
                .arg("--output-dir")
                .arg(&out_dir)
                .arg("--fs-root")
                .arg(out_root.join("fs-root"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .context("cannot run mcp-fuzzer")?;
            let summary_path = out_dir.join("run_summary.json");
            let summary: Value =
                serde_json::from_str(&std::fs::read_to_string(&summary_path).with_context(
                    || format!("mcp-fuzzer ({status}) wrote no {}", summary_path.display()),
                )?)
                .context("run_summary.json is not JSON")?;
            let runs = summary[if mode == "tools" {
                "tools"
            } else {
                "protocols"
            }]["total_runs"]
                .as_u64()
                .unwrap_or(0);
            let findings = summary["findings"]["by_category"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let count =
                |category: &str| findings.get(category).and_then(Value::as_u64).unwrap_or(0);
            let (crashes, hangs) = (count("crash"), count("hang"));
            reflections.extend(reflected(&out_dir.join("findings.json")));
            for (category, n) in &findings {
                if category != "crash" && category != "hang" {
                    *other_findings.entry(category.clone()).or_default() += n.as_u64().unwrap_or(0);
                }
            }
            let line = format!("{mode}/{transport}: {runs} runs, {crashes} crashes, {hangs} hangs");
            println!("fuzz {line}");
            ensure!(
                summary["status"] == "completed",
                "fuzz {line}: status {}",
                summary["status"]
            );
            ensure!(runs > 0, "fuzz {line}: the fuzzer made no runs");
            ensure!(
                crashes == 0 && hangs == 0,
                "fuzz {line}: see {}",
                out_dir.join("findings.json").display()
            );
            lines.push(line);
        }
    }
    if !server.healthy() {
        bail!("the HTTP server stopped answering /healthz after fuzzing");
    }
    println!(
        "fuzz summary: 0 crashes, 0 hangs in {}; other findings (not failures): {other_findings:?}",
        lines.join("; ")
    );
    let reflected_count = other_findings
        .get("injection_reflection")
        .copied()
        .unwrap_or(0);
    if reflected_count > 0 && reflections.is_empty() {
        println!(
            "fuzz: {reflected_count} injection_reflection findings, but no findings.json named \
             their tools (has mcp-fuzzer's format changed?)"
        );
    } else if !reflections.is_empty() {
        reflections.sort();
        reflections.dedup();
        println!(
            "fuzz: inputs reflected (tool: marker): {}",
            reflections.join(", ")
        );
    }
    Ok(())
}

/// The `injection_reflection` findings of one run's findings.json, as "tool: marker"
/// (capped, as the fuzzer's text is data); none when the file is missing or not what
/// mcp-fuzzer 0.7.0 writes (`{"findings": [...], "count": n}`).
fn reflected(findings: &std::path::Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(findings) else {
        return Vec::new();
    };
    let Ok(Value::Object(mut report)) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    let Some(Value::Array(findings)) = report.remove("findings") else {
        return Vec::new();
    };
    let field = |f: &Value, key: &str| -> String {
        f.pointer(key)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .chars()
            .take(60)
            .collect()
    };
    findings
        .iter()
        .filter(|f| f["category"] == "injection_reflection")
        .map(|f| {
            format!(
                "{}: {:?}",
                field(f, "/target"),
                field(f, "/evidence/marker")
            )
        })
        .collect()
}
