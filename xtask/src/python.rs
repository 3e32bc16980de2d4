//! A Python venv under target/xtask/py with the pinned PyPI packages the
//! interoperability checks use (the official `mcp` SDK client, `mcp-fuzzer`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

const PACKAGES: [&str; 2] = ["mcp==2.3.0", "mcp-fuzzer==0.7.0"];

/// The venv's `bin/` directory, created and filled on first use.
pub fn ensure_venv(target: &Path) -> anyhow::Result<PathBuf> {
    let venv = target.join("xtask/py");
    let bin = venv.join("bin");
    let stamp = venv.join("installed.txt");
    let wanted = PACKAGES.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(bin);
    }
    eprintln!("creating {} with {}", venv.display(), PACKAGES.join(", "));
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let status = Command::new(&python)
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .with_context(|| format!("cannot run {python} (Python 3.10+ is needed)"))?;
    if !status.success() {
        bail!("`{python} -m venv` failed");
    }
    let status = Command::new(bin.join("pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(PACKAGES)
        .status()
        .context("cannot run pip")?;
    if !status.success() {
        bail!("pip install {} failed", PACKAGES.join(" "));
    }
    std::fs::write(&stamp, wanted).context("write venv stamp")?;
    Ok(bin)
}
