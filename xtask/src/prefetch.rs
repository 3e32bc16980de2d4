//! `cargo xtask prefetch`: every pinned tool the later ci steps fetch (Node, the four
//! real clients, npx packages, the app host's and bench peers' `npm ci`, mcpb, the
//! Python venvs, LiteLLM's wheel), installed where those steps look for them. Each
//! install is the step's own function, which does nothing when its pin is already
//! there, so a step after a prefetch finds its tool ready, and a failed prefetch only
//! means the step tries again and fails with its own reason.
//!
//! Inside `cargo xtask ci` ([`start`], [`join`]) it runs as a child process at nice 10
//! while clippy and the test build keep both cores busy: these installs mostly wait on
//! the network and the disk (on a clean clone they were ~100 s inside the steps), but
//! unpacking and pip's byte-compiling do take CPU from clippy and the tests (measured:
//! the clients step 183 -> 151 s, while clippy and the tests ran slower beside it).
//! Its output goes to target/xtask/prefetch.log, not between the compiler's lines. Once every npm install is done, npm's tarball cache is
//! removed: it would only hold the installed packages a second time.

use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::node::NodeEnv;

/// The npx packages the steps run (conformance suite, MCP Inspector).
const NPX_PACKAGES: [&str; 2] = [crate::conformance::SUITE, crate::clients::INSPECTOR];

/// One install: its name, and the step's own function.
type Install<'a> = (&'a str, Box<dyn Fn() -> anyhow::Result<()> + Send + 'a>);

/// Install everything, two lanes at once (npm and Python), each item timed; fails
/// naming every install that failed, after trying them all.
pub fn run() -> anyhow::Result<()> {
    let target = crate::target_dir();
    let start = Instant::now();
    let node = crate::node::ensure(&target)?;
    let npm = npm_lane(&target, &node);
    let python = python_lane(&target);
    let [npm_failed, python_failed] = std::thread::scope(|scope| {
        [npm, python]
            .map(|lane| scope.spawn(move || run_lane(lane)))
            .map(|lane| {
                lane.join()
                    .unwrap_or_else(|_| vec!["a lane panicked".into()])
            })
    });
    if npm_failed.is_empty() {
        // npm's tarball cache (~650 MB: the clients' native binaries again) serves no
        // later step once every package is installed; npx keeps what it runs in _npx.
        crate::disk::remove_scratch(&["xtask/npm-cache/_cacache"])?;
    }
    let failed = [npm_failed, python_failed].concat();
    eprintln!("prefetch: done in {:.1} s", start.elapsed().as_secs_f64());
    if !failed.is_empty() {
        bail!("prefetch could not install: {}", failed.join("; "));
    }
    Ok(())
}

fn npm_lane<'a>(target: &'a Path, node: &'a NodeEnv) -> Vec<Install<'a>> {
    let mut lane: Vec<Install<'a>> = vec![
        (
            "Claude Code",
            Box::new(move || crate::claude_code::install(target, node).map(drop)),
        ),
        (
            "Codex",
            Box::new(move || crate::codex::install(&target.join("xtask/codex"), node).map(drop)),
        ),
        (
            "Gemini CLI",
            Box::new(move || {
                crate::gemini_cli::Gemini::install(&target.join("xtask/gemini-cli"), node).map(drop)
            }),
        ),
        (
            "Copilot CLI",
            Box::new(move || {
                crate::copilot::install(&target.join("xtask/copilot-cli"), node).map(drop)
            }),
        ),
        (
            "the MCP Apps host",
            Box::new(move || crate::app::build_host(target, node).map(drop)),
        ),
        (
            "mcpb",
            Box::new(move || crate::bundle::ensure_mcpb(target, node).map(drop)),
        ),
        (
            "the benchmark peer",
            Box::new(|| crate::peer::Peer::install().map(drop)),
        ),
        (
            "repomix",
            Box::new(|| crate::bench::install_repomix().map(drop)),
        ),
    ];
    for package in NPX_PACKAGES {
        lane.push((package, Box::new(move || npx_install(node, package))));
    }
    lane
}

fn python_lane(target: &Path) -> Vec<Install<'_>> {
    vec![
        (
            "the Python venv (mcp, mcp-fuzzer)",
            Box::new(move || crate::python::ensure_venv(target).map(drop)),
        ),
        (
            "the packaging venv",
            Box::new(move || crate::python::ensure_packaging_venv(target).map(drop)),
        ),
        (
            "the tokenizer references' venv",
            Box::new(move || crate::tokenizer_refs::venv(target).map(drop)),
        ),
        (
            "LiteLLM's wheel",
            Box::new(move || crate::catalog::pinned_litellm_json(target).map(drop)),
        ),
    ]
}

/// Each install in turn; the names of those that failed, with why.
fn run_lane(lane: Vec<Install<'_>>) -> Vec<String> {
    let mut failed = Vec::new();
    for (name, install) in lane {
        let start = Instant::now();
        match install() {
            Ok(()) => eprintln!(
                "prefetch: {name} ready ({:.1} s)",
                start.elapsed().as_secs_f64()
            ),
            Err(e) => {
                eprintln!("prefetch: {name} failed: {e:#}");
                failed.push(format!("{name}: {e:#}"));
            }
        }
    }
    failed
}

/// Put `package` (and its dependencies) in npx's cache, as `npx -y package` would,
/// running `true` rather than the package.
fn npx_install(node: &NodeEnv, package: &str) -> anyhow::Result<()> {
    let status = node
        .npx(&["--package", package, "--", "true"])
        .stdin(Stdio::null())
        .status()
        .context("cannot run npx")?;
    if !status.success() {
        bail!("npx could not fetch {package} ({status})");
    }
    Ok(())
}

/// Start `cargo xtask prefetch` (this same binary) at nice 10 in the background.
pub fn start() -> anyhow::Result<()> {
    let log = crate::background::start("prefetch", 10, &["prefetch"])?;
    eprintln!(
        "prefetch: the pinned tools later steps use, in the background (log: {})",
        log.display()
    );
    Ok(())
}

/// Wait for the prefetch started by [`start`], if any. A failure is said, with the
/// log's last lines, and is not ci's failure: the step that needs the tool installs
/// it again itself and fails there with its own reason.
pub fn join() {
    let Some(joined) = crate::background::join("prefetch") else {
        return;
    };
    // Its own time (the last line of `run`), not the time until this join.
    let took = joined.own_seconds("prefetch");
    crate::timing::beside("prefetch (npm, PyPI; nice 10)", took);
    match &joined.status {
        Ok(status) if status.success() => {
            eprintln!("prefetch: every pinned tool was ready {took:.0} s after it started")
        }
        other => {
            eprintln!(
                "prefetch: did not finish ({other:?}); the steps install what is missing. \
                 Its log ({}) ends:",
                joined.log.display()
            );
            for line in joined.tail(12).lines() {
                eprintln!("  {line}");
            }
        }
    }
}
