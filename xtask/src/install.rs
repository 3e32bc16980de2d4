//! `cargo xtask install-check` and the release binary every packaging check shares.
//!
//! The README's install line is `cargo install --locked --path servers/context-loader`.
//! ci runs exactly that into a temporary root, with the workspace's target/ as
//! CARGO_TARGET_DIR so the release build (LTO, minutes) happens once per run and the
//! bundle, image and Kubernetes checks reuse the installed binary.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use anyhow::{Context, bail};
use serde_json::json;

use crate::probe::{self, StdioSession};

/// `cargo install` the server once per xtask process; the installed binary's path.
pub fn release_binary(root: &Path) -> anyhow::Result<PathBuf> {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    if let Some(binary) = INSTALLED.get() {
        return Ok(binary.clone());
    }
    let target = crate::target_dir();
    let prefix = target.join("xtask/install");
    let args = [
        "install",
        "--locked",
        "--force",
        "--path",
        "servers/context-loader",
        "--root",
    ];
    eprintln!(
        "$ CARGO_TARGET_DIR={} cargo {} {}",
        target.display(),
        args.join(" "),
        prefix.display()
    );
    let status = Command::new(crate::cargo_bin())
        .args(args)
        .arg(&prefix)
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(root)
        .status()
        .context("cannot run cargo install")?;
    if !status.success() {
        bail!("`cargo install --locked --path servers/context-loader` failed ({status})");
    }
    let binary = prefix
        .join("bin")
        .join(format!("context-loader{}", std::env::consts::EXE_SUFFIX));
    if !binary.is_file() {
        bail!(
            "cargo install succeeded but {} is missing",
            binary.display()
        );
    }
    Ok(INSTALLED.get_or_init(|| binary).clone())
}

/// The install check: the installed binary's `--version`, then a stdio session.
pub fn run(root: &Path) -> anyhow::Result<()> {
    let binary = release_binary(root)?;
    check_version(&binary)?;
    let folder = root.join("servers/context-loader");
    let mut command = Command::new(&binary);
    command.args(["--root"]).arg(&folder).arg("stdio");
    let (mut session, init) = StdioSession::start(command)?;
    check_initialize(&init)?;
    let names = probe::tool_names(&session.request("tools/list", json!({}))?);
    if !names.iter().any(|n| n == "file-tokens") || names.len() < 5 {
        bail!("the installed binary lists too few tools: {names:?}");
    }
    session.close()?;
    eprintln!(
        "installed {} answers --version, initialize and tools/list ({} tools)",
        binary.display(),
        names.len()
    );
    Ok(())
}

/// `--version` prints `context-loader X.Y.Z (model catalog as of YYYY-MM-DD)` with
/// this crate's version and the shipped catalog's date.
pub fn check_version(binary: &Path) -> anyhow::Result<()> {
    let out = Command::new(binary)
        .arg("--version")
        .output()
        .with_context(|| format!("cannot run {} --version", binary.display()))?;
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let as_of = &context_budget::Catalog::builtin().as_of;
    let expected = format!(
        "context-loader {} (model catalog as of {as_of})",
        server_version()
    );
    if !out.status.success() || printed != expected {
        bail!("--version printed {printed:?}, expected {expected:?}");
    }
    Ok(())
}

/// The server crate's version, from its Cargo.toml (xtask's own is another crate's).
pub fn server_version() -> String {
    let manifest = include_str!("../../servers/context-loader/Cargo.toml");
    manifest
        .lines()
        .find_map(|line| line.strip_prefix("version = "))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_default()
}

/// `initialize` named our server and offered tools.
pub fn check_initialize(init: &serde_json::Value) -> anyhow::Result<()> {
    if init["serverInfo"]["name"].as_str().is_none() || init["capabilities"]["tools"].is_null() {
        bail!("initialize did not name the server or offer tools: {init}");
    }
    Ok(())
}
