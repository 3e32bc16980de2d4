//! `cargo xtask app`: the MCP App's page in a real browser. The test itself
//! (servers/context-loader/tests/app_browser.rs, a module of the `tests` binary)
//! writes each command's `--html` report, loads it in headless Chromium and reads the
//! DOM back; this step makes sure Chromium is installed (Debian's `chromium`) and
//! runs it. Screenshots land in target/xtask/app/.

use std::process::Command;

use anyhow::bail;

pub fn run() -> anyhow::Result<()> {
    ensure_chromium()?;
    crate::cargo(&[
        "test",
        "--locked",
        "-p",
        "context-loader",
        "--test",
        "tests",
        "--",
        "--ignored",
        "app_browser::",
    ])
}

fn chromium_installed() -> bool {
    Command::new("chromium")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Install Chromium from Debian's packages when it is missing.
fn ensure_chromium() -> anyhow::Result<()> {
    if chromium_installed() {
        return Ok(());
    }
    crate::nginx::apt_install(&["chromium"], "the app's browser check")?;
    if !chromium_installed() {
        bail!("chromium was installed but `chromium --version` still fails");
    }
    Ok(())
}
