//! `cargo xtask conformance`: the official MCP conformance suite
//! (@modelcontextprotocol/conformance, `server` mode) against a freshly started
//! `context-loader http`. Scenarios that need the suite's fixture tools or
//! capabilities this server does not declare are listed, each with its reason, in
//! xtask/conformance-expected-failures.yml; anything else must pass.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;

use anyhow::{Context, bail};

pub(crate) const SUITE: &str = "@modelcontextprotocol/conformance@0.1.16";
const BASELINE: &str = "xtask/conformance-expected-failures.yml";

/// Added to the baseline for the stateless run only.
const STATELESS_ONLY: &str = "  - server-sse-multiple-streams  # stateless mode has no session, so no second SSE stream on one\n";

pub fn run(root: &Path) -> anyhow::Result<()> {
    let node = crate::node::ensure(&crate::target_dir())?;
    let baseline_path = root.join(BASELINE);
    let baseline_text = std::fs::read_to_string(&baseline_path).context(BASELINE)?;
    run_mode(root, &node, "stateful", &[], &baseline_path, &baseline_text)?;
    // The replica mode: the same baseline plus the one scenario that needs sessions.
    let stateless_path =
        crate::target_dir().join("xtask/conformance-expected-failures-stateless.yml");
    let stateless_text = format!("{baseline_text}{STATELESS_ONLY}");
    std::fs::write(&stateless_path, &stateless_text).context("write stateless baseline")?;
    run_mode(
        root,
        &node,
        "stateless",
        &["--stateless"],
        &stateless_path,
        &stateless_text,
    )
}

fn run_mode(
    root: &Path,
    node: &crate::node::NodeEnv,
    mode: &str,
    server_args: &[&str],
    baseline_path: &Path,
    baseline_text: &str,
) -> anyhow::Result<()> {
    let server = crate::server::start(server_args)?;
    let baseline = read_baseline(baseline_text);
    eprintln!("$ npx {SUITE} server --url {} ({mode})", server.url);
    let output = node
        .npx(&[SUITE, "server", "--url", &server.url, "--expected-failures"])
        .arg(baseline_path)
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run npx (Node's package runner)")?;
    drop(server);
    let stdout = String::from_utf8_lossy(&output.stdout);
    print!("{stdout}");
    let results = scenario_results(&stdout);
    if results.is_empty() {
        bail!(
            "the conformance suite reported no scenarios (exit {})",
            output.status
        );
    }
    let summary = Summary::new(&results, &baseline);
    println!("{}", summary.line(mode));
    if !summary.unexpected_failures.is_empty() || !summary.unexpected_passes.is_empty() {
        bail!(
            "conformance ({mode}): unexpected failures {:?}, unexpected passes {:?} (update {BASELINE} only with a reason)",
            summary.unexpected_failures,
            summary.unexpected_passes
        );
    }
    if !output.status.success() {
        bail!(
            "the conformance suite ({mode}) exited with {}",
            output.status
        );
    }
    Ok(())
}

/// Scenario names under `server:` in the baseline (`  - name  # reason`).
fn read_baseline(yaml: &str) -> BTreeSet<String> {
    yaml.lines()
        .filter_map(|l| l.trim_start().strip_prefix("- "))
        .map(|l| l.split('#').next().unwrap_or_default().trim().to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

/// `✓ name: N passed, M failed` lines of the suite's summary → (name, passed?);
/// `None` when no check ran (`0 passed, 0 failed`: only warnings, e.g. not applicable).
fn scenario_results(stdout: &str) -> Vec<(String, Option<bool>)> {
    stdout
        .lines()
        .filter_map(|l| {
            let (mark, rest) = l.trim().split_once(' ')?;
            let passed = match mark {
                "✓" => true,
                "✗" => false,
                _ => return None,
            };
            let (name, counts) = rest.split_once(": ")?;
            if !counts.contains(" passed, ") {
                return None;
            }
            let nothing_ran = counts.starts_with("0 passed, 0 failed");
            Some((name.to_string(), (!nothing_ran).then_some(passed)))
        })
        .collect()
}

struct Summary {
    applicable: usize,
    applicable_passed: usize,
    expected_failures: usize,
    unexpected_failures: Vec<String>,
    unexpected_passes: Vec<String>,
}

impl Summary {
    fn new(results: &[(String, Option<bool>)], baseline: &BTreeSet<String>) -> Self {
        let mut summary = Summary {
            applicable: 0,
            applicable_passed: 0,
            expected_failures: 0,
            unexpected_failures: Vec::new(),
            unexpected_passes: Vec::new(),
        };
        for (name, passed) in results {
            match (baseline.contains(name), passed) {
                (false, Some(true)) => {
                    summary.applicable += 1;
                    summary.applicable_passed += 1;
                }
                // Not run counts as failed unless baselined: the suite treats its
                // warnings as failures too.
                (false, Some(false) | None) => {
                    summary.applicable += 1;
                    summary.unexpected_failures.push(name.clone());
                }
                (true, Some(false) | None) => summary.expected_failures += 1,
                (true, Some(true)) => summary.unexpected_passes.push(name.clone()),
            }
        }
        summary
    }

    fn line(&self, mode: &str) -> String {
        format!(
            "conformance ({mode}): {}/{} applicable scenarios passed; {} expected failures (fixtures/capabilities, see {BASELINE}); {} unexpected failures; {} unexpected passes",
            self.applicable_passed,
            self.applicable,
            self.expected_failures,
            self.unexpected_failures.len(),
            self.unexpected_passes.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_separates_expected_from_unexpected() {
        let stdout = "=== SUMMARY ===\n✓ ping: 1 passed, 0 failed\n✗ tools-call-image: 0 passed, 1 failed\n\
                      ✗ tools-list: 0 passed, 1 failed\n✓ prompts-get-simple: 1 passed, 0 failed\n\
                      ✓ server-sse-multiple-streams: 0 passed, 0 failed\n\nTotal: 2 passed, 2 failed\n";
        let baseline = read_baseline(&format!(
            "server:\n  - tools-call-image   # fixture\n  - prompts-get-simple # fixture\n{STATELESS_ONLY}"
        ));
        let results = scenario_results(stdout);
        assert_eq!(results.len(), 5);
        assert_eq!(
            results[4],
            ("server-sse-multiple-streams".to_string(), None)
        );
        let summary = Summary::new(&results, &baseline);
        assert_eq!((summary.applicable, summary.applicable_passed), (2, 1));
        assert_eq!(
            summary.expected_failures, 2,
            "not run + baselined is expected"
        );
        assert_eq!(summary.unexpected_failures, ["tools-list"]);
        assert_eq!(summary.unexpected_passes, ["prompts-get-simple"]);
    }
}
