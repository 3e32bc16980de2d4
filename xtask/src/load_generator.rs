//! Runs the load generator (example `mcp_load` of context-loader) and reads its
//! one-line `key=value` summary. Shared by `cargo xtask load` and the MCP rows of
//! `cargo xtask bench`, so both measure with the same clients.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

/// What one `mcp_load` run measured (latencies in milliseconds).
#[derive(Debug, Clone)]
pub struct LoadFigures {
    pub calls: f64,
    pub errors: f64,
    pub seconds: f64,
    pub calls_per_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// The first errors the generator printed, if any.
    pub error_samples: Vec<String>,
}

/// Run `mcp_load ARGS` for `who` (named in errors); a run that printed no summary,
/// made no call, or had any failed or wrong reply is an error.
pub fn run(binary: &Path, who: &str, args: &[String]) -> anyhow::Result<LoadFigures> {
    let figures = run_unchecked(binary, args)?;
    if figures.errors > 0.0 || figures.calls == 0.0 {
        bail!(
            "{who}: {} errors in {} calls:\n{}",
            figures.errors,
            figures.calls,
            figures.error_samples.join("\n")
        );
    }
    Ok(figures)
}

fn run_unchecked(binary: &Path, args: &[String]) -> anyhow::Result<LoadFigures> {
    let output = Command::new(binary)
        .args(args)
        .output()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let Some(line) = stdout.lines().find(|l| l.starts_with("calls=")) else {
        bail!(
            "mcp_load {} printed no summary ({}): {stderr}",
            args.join(" "),
            output.status
        );
    };
    let values = key_values(line);
    let get = |key: &str| {
        values
            .get(key)
            .copied()
            .with_context(|| format!("mcp_load summary has no {key}: {line}"))
    };
    Ok(LoadFigures {
        calls: get("calls")?,
        errors: get("errors")?,
        seconds: get("seconds")?,
        calls_per_s: get("calls_per_s")?,
        p50_ms: get("p50_ms")?,
        p99_ms: get("p99_ms")?,
        error_samples: stderr
            .lines()
            .filter(|l| l.contains("error"))
            .map(str::to_string)
            .collect(),
    })
}

/// `a=1 b=2.5 name=x` → numeric values by key (non-numbers are skipped).
pub fn key_values(line: &str) -> HashMap<String, f64> {
    line.split_whitespace()
        .filter_map(|pair| pair.split_once('='))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_line_parses_numbers_and_skips_the_rest() {
        let values = key_values("calls=12 errors=0 p99_ms=1.5 name=x p50_ms=NaN");
        assert_eq!(values.get("calls"), Some(&12.0));
        assert_eq!(values.get("p99_ms"), Some(&1.5));
        assert!(!values.contains_key("name"));
        assert!(values.get("p50_ms").is_some_and(|v| v.is_nan()));
    }
}
