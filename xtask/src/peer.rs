//! The benchmark peer under bench/peers/ts-sdk: the same `count-tokens` tool on the
//! official TypeScript SDK with js-tiktoken. Installed with `npm ci` from its pinned
//! package-lock.json into target/bench/peers/ts-sdk (node_modules never lands in the
//! source tree), using the `node`/`npm` on PATH.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::workspace_root;

const FILES: [&str; 3] = ["package.json", "package-lock.json", "server.mjs"];
/// The SDK asks for node >= 18, its @hono/node-server dependency for >= 20.
const MIN_NODE_MAJOR: u32 = 20;

pub struct Peer {
    dir: PathBuf,
}

impl Peer {
    /// Install (or reuse) the peer; `npm ci` runs only when the lockfile changed.
    pub fn install() -> anyhow::Result<Peer> {
        check_node()?;
        let source = workspace_root().join("bench/peers/ts-sdk");
        let dir = crate::target_dir().join("bench/peers/ts-sdk");
        std::fs::create_dir_all(&dir)?;
        let stamp = dir.join("node_modules/.installed-package-lock.json");
        let lock = std::fs::read(source.join("package-lock.json"))
            .context("bench/peers/ts-sdk/package-lock.json is missing")?;
        for file in FILES {
            std::fs::copy(source.join(file), dir.join(file))
                .with_context(|| format!("cannot copy bench/peers/ts-sdk/{file}"))?;
        }
        if std::fs::read(&stamp).ok().as_deref() != Some(lock.as_slice()) {
            eprintln!("$ npm ci (benchmark peer, {})", dir.display());
            let status = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
                .current_dir(&dir)
                .status()
                .context("cannot run npm (Node.js must be on PATH)")?;
            if !status.success() {
                bail!("npm ci for the benchmark peer failed ({status})");
            }
            std::fs::write(&stamp, &lock)?;
        }
        Ok(Peer { dir })
    }

    /// `node server.mjs MODE ARGS...` as a command line.
    pub fn command_line(&self, mode_and_args: &[&str]) -> Vec<String> {
        let mut line = vec!["node".to_string(), self.script().display().to_string()];
        line.extend(mode_and_args.iter().map(|s| s.to_string()));
        line
    }

    pub fn command(&self, mode_and_args: &[&str]) -> Command {
        let mut command = Command::new("node");
        command.arg(self.script()).args(mode_and_args);
        command
    }

    fn script(&self) -> PathBuf {
        self.dir.join("server.mjs")
    }

    pub fn describe() -> String {
        let version = |program: &str| {
            Command::new(program)
                .arg("--version")
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default()
        };
        format!(
            "@modelcontextprotocol/sdk {} + js-tiktoken {} on Node {}",
            pinned("@modelcontextprotocol/sdk"),
            pinned("js-tiktoken"),
            version("node")
        )
    }
}

/// The version package.json pins for `package`.
fn pinned(package: &str) -> String {
    let path = workspace_root().join("bench/peers/ts-sdk/package.json");
    let text = std::fs::read_to_string(Path::new(&path)).unwrap_or_default();
    let key = format!("\"{package}\":");
    text.lines()
        .find_map(|l| l.trim().strip_prefix(&key))
        .map(|v| v.trim().trim_matches([',', '"', ' ']).to_string())
        .unwrap_or_else(|| "?".into())
}

fn check_node() -> anyhow::Result<()> {
    let output = Command::new("node")
        .arg("--version")
        .output()
        .context("the benchmark peer needs Node.js (>= 20) on PATH")?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .with_context(|| format!("cannot read node's version from {version:?}"))?;
    if major < MIN_NODE_MAJOR {
        bail!("the benchmark peer needs Node.js >= {MIN_NODE_MAJOR}; found {version}");
    }
    Ok(())
}
