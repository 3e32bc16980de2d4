//! Development automation: `cargo xtask ci` (what CI runs) and `cargo xtask bench`.
//! Plain Rust instead of shell scripts, so it runs wherever cargo does.

mod bench;
mod load;
mod load_generator;
mod peer;
mod spawned;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  ci      fmt --check, clippy -D warnings, every test (unit, differential, e2e),
          and a quick bench run that only checks the harness works
  bench   counting throughput vs tiktoken-rs, encoder load, stdio cold start;
          writes BENCHMARKS.md (`--quick`: dev build, small corpora, no file)
  load    bounded load test: concurrent MCP clients against the stateless HTTP
          server on loopback for 60 s (`--seconds N`, `--clients N`; `--smoke`:
          dev build, a few seconds); fails on any error or memory growth";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("bench") => bench::run(&args[1..]),
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
