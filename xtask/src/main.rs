//! Development automation: `cargo xtask ci` (what CI runs) and `cargo xtask bench`.
//! Plain Rust instead of shell scripts, so it runs wherever cargo does.

mod bench;
mod clients;
mod conformance;
mod fuzz;
mod load;
mod load_generator;
mod nginx;
mod node;
mod peer;
mod python;
mod server;
mod spawned;
mod spec_corpus;
mod timing;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  ci      fmt --check, clippy -D warnings, every test (unit, differential, e2e),
          and a quick bench run that only checks the harness works
  bench   counting throughput vs tiktoken-rs, encoder load, stdio cold start;
          writes BENCHMARKS.md (`--quick`: dev build, small corpora, no file)
  spec-corpus DIR [--specs N]
          write the deterministic benchmark spec repository (default 2,000 specs)
  conformance  the MCP conformance suite (npx, Node >= 22, fetched if older)
               against a fresh `context-loader http`; baseline in
               xtask/conformance-expected-failures.yml
  proxy   the e2e client suite through nginx (deploy/nginx) over two stateless
          replicas; installs nginx with apt-get when missing
  clients the Python mcp 2.3 SDK client and MCP Inspector 2.12 CLI over stdio
          and HTTP, results asserted
  fuzz    mcp-fuzzer 0.7.0, tools and protocol modes over stdio and HTTP:
          0 crashes, 0 hangs (read from its run summary)

  load    bounded load test: concurrent MCP clients against the stateless HTTP
          server on loopback for 60 s (`--seconds N`, `--clients N`; `--smoke`:
          dev build, a few seconds); fails on any error or memory growth";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("bench") => bench::run(&args[1..]),
        Some("spec-corpus") => spec_corpus::run(&args[1..]),
        Some("conformance") => conformance::run(&workspace_root()),
        Some("fuzz") => fuzz::run(&workspace_root()),
        Some("clients") => clients::run(&workspace_root()),
        Some("proxy") => nginx::run(),
        Some("load") => load::run(&args[1..]),
        Some("-h" | "--help" | "help") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{USAGE}"),
    }
}

fn ci() -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    cargo(&["fmt", "--all", "--", "--check"])?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--locked",
        "--",
        "-D",
        "warnings",
    ])?;
    // One test run covers unit tests, the tiktoken differential test and the e2e
    // suite (which starts the built binary over stdio and HTTP).
    cargo(&["test", "--workspace", "--all-targets", "--locked"])?;
    cargo(&["test", "--workspace", "--doc", "--locked"])?;
    // Deployment and interoperability: real nginx, the official conformance suite.
    timing::step(
        "e2e suite through nginx (two stateless replicas)",
        nginx::run,
    )?;
    timing::step("MCP conformance suite", || {
        conformance::run(&workspace_root())
    })?;
    timing::step("Python SDK and MCP Inspector clients", || {
        clients::run(&workspace_root())
    })?;
    timing::step("mcp-fuzzer (tools + protocol, stdio + HTTP)", || {
        fuzz::run(&workspace_root())
    })?;
    // Keep the benchmark harness working (figures are printed, never asserted: a timed
    // check on a shared 2-core machine is noise).
    bench::run(&["--quick".to_string()])?;
    load::run(&["--smoke".to_string()])?;
    eprintln!("xtask ci: all green in {:.0?}", started.elapsed());
    Ok(())
}

/// Run `cargo <args>` at the workspace root, failing on a non-zero exit.
fn cargo(args: &[&str]) -> anyhow::Result<()> {
    eprintln!("$ cargo {}", args.join(" "));
    let status = Command::new(cargo_bin())
        .args(args)
        .current_dir(workspace_root())
        .status()
        .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
    if !status.success() {
        bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

fn cargo_bin() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}
