//! `cargo xtask app`: the MCP App in a real browser. The test itself
//! (servers/context-loader/tests/app_browser.rs, a module of the `tests` binary)
//! loads each command's `--html` report in headless Chromium, and drives a host built
//! on the official `AppBridge` (xtask/app/, npm `@modelcontextprotocol/ext-apps`,
//! pinned by its package-lock.json) against `context-loader http`: each linked tool
//! called, the app drawn in a frame on a second origin, its DOM read back over the
//! DevTools protocol. This step installs what that needs (Debian's `chromium`, Node
//! 22, the host's packages with `npm ci` from the cache under target/xtask/), bundles
//! the host with esbuild, runs the test, and prints the page's size and what the
//! links add to the tool list each client sends. Screenshots land in
//! target/xtask/app/; `--screenshots` also copies three of them to docs/img/.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::node::NodeEnv;

/// What the host's folder holds in the repository (xtask/app/).
const SOURCES: [&str; 7] = [
    "package.json",
    "package-lock.json",
    "host.js",
    "host.html",
    "sandbox.html",
    "sandbox.js",
    "drive.mjs",
];

/// The test reads these: the built host's folder, and the PATH whose `node` runs
/// drive.mjs (Node >= 22, for its WebSocket).
const HOST_DIR_ENV: &str = "CONTEXT_LOADER_APP_HOST";
const NODE_PATH_ENV: &str = "CONTEXT_LOADER_APP_NODE_PATH";

/// The README's screenshots: (the test's view, the file in docs/img/).
const README_SHOTS: [(&str, &str); 3] = [
    ("host-file-tokens.png", "app-file-tokens.png"),
    ("host-mcp-tokens.png", "app-mcp-tokens.png"),
    ("host-assemble-context.png", "app-assemble-context.png"),
];

pub fn run(screenshots: bool) -> anyhow::Result<()> {
    ensure_chromium()?;
    let target = crate::target_dir();
    let node = crate::node::ensure(&target)?;
    let host = build_host(&target, &node)?;
    let out = target.join("xtask/app");
    let summary = out.join("summary.txt");
    let _ = std::fs::remove_file(&summary);
    crate::ignored_tests(
        "app_browser::",
        &[
            (HOST_DIR_ENV, host.as_os_str()),
            (NODE_PATH_ENV, std::ffi::OsStr::new(&node.path)),
        ],
    )?;
    let text = std::fs::read_to_string(&summary)
        .with_context(|| format!("the test wrote no {}", summary.display()))?;
    eprintln!("{}", text.trim_end());
    if screenshots {
        copy_screenshots(&out, &crate::workspace_root().join("docs/img"))?;
    }
    Ok(())
}

/// `npm ci` the host's pinned packages into target/xtask/app-host (only when the
/// lockfile changed; from the npm cache under target/xtask), then bundle host.js with
/// esbuild into dist/ beside the static files. The bundle takes under a second, so
/// it is made every run rather than cached.
pub(crate) fn build_host(target: &Path, node: &NodeEnv) -> anyhow::Result<PathBuf> {
    let source = crate::workspace_root().join("xtask/app");
    let dir = target.join("xtask/app-host");
    let dist = dir.join("dist");
    std::fs::create_dir_all(&dist)?;
    for file in SOURCES {
        std::fs::copy(source.join(file), dir.join(file))
            .with_context(|| format!("cannot copy xtask/app/{file}"))?;
    }
    let lock = std::fs::read(source.join("package-lock.json"))?;
    let stamp = dir.join("node_modules/.installed-package-lock.json");
    if std::fs::read(&stamp).ok().as_deref() != Some(lock.as_slice()) {
        eprintln!("$ npm ci (the MCP Apps host, {})", dir.display());
        let status = Command::new("npm")
            .args([
                "ci",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
                "--prefer-offline",
            ])
            .env("PATH", &node.path)
            .env("npm_config_cache", &node.npm_cache)
            .env("npm_config_update_notifier", "false")
            .current_dir(&dir)
            .status()
            .context("cannot run npm")?;
        if !status.success() {
            bail!("npm ci for the MCP Apps host (xtask/app) failed ({status})");
        }
        std::fs::write(&stamp, &lock)?;
    }
    let status = Command::new(dir.join("node_modules/.bin/esbuild"))
        .args([
            "host.js",
            "--bundle",
            "--format=iife",
            "--platform=browser",
            "--target=chrome120",
            "--minify",
            "--legal-comments=none",
            "--log-level=warning",
            "--outfile=dist/host.js",
        ])
        .env("PATH", &node.path)
        .current_dir(&dir)
        .status()
        .context("cannot run esbuild (node_modules/.bin/esbuild)")?;
    if !status.success() {
        bail!("esbuild could not bundle xtask/app/host.js ({status})");
    }
    for file in ["host.html", "sandbox.html", "sandbox.js", "drive.mjs"] {
        std::fs::copy(dir.join(file), dist.join(file))?;
    }
    Ok(dist)
}

/// Copy the README's three screenshots into docs/img/, saying each one's size.
fn copy_screenshots(out: &Path, docs: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(docs)?;
    for (shot, name) in README_SHOTS {
        let to = docs.join(name);
        std::fs::copy(out.join(shot), &to)
            .with_context(|| format!("cannot copy {shot} to {}", to.display()))?;
        let size = std::fs::metadata(&to)?.len();
        eprintln!("wrote {} ({} KB)", to.display(), size.div_ceil(1024));
    }
    Ok(())
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
