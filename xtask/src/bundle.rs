//! `cargo xtask bundle`: the Claude Desktop bundle (MCPB) of the release binary, from
//! packaging/mcpb/manifest.json, with `@anthropic-ai/mcpb` (npm, pinned): validate,
//! then pack into target/xtask/bundle/context-loader-VERSION-OS-ARCH.mcpb.
//!
//! The ci check (`check`) unpacks that file as Claude Desktop does, asks the mcpb
//! library's own getMcpConfigForManifest what it would start for a user's settings,
//! starts exactly that command (args, env) and asserts initialize, tools/list and a
//! file-tokens call inside the configured folder, a refusal outside it, and that with
//! no folder set the bundle does not start at all (never an implicit root).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::node::NodeEnv;
use crate::probe::{self, StdioSession};

const MCPB: &str = "@anthropic-ai/mcpb@2.1.2";

/// The mcpb package installed under target/xtask/mcpb (its CLI, and its library for
/// the config resolution); returns the package directory.
pub(crate) fn ensure_mcpb(target: &Path, node: &NodeEnv) -> anyhow::Result<PathBuf> {
    let prefix = target.join("xtask/mcpb");
    let package = prefix.join("node_modules/@anthropic-ai/mcpb");
    let stamp = prefix.join("installed.txt");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == MCPB) && package.is_dir() {
        return Ok(package);
    }
    std::fs::create_dir_all(&prefix)?;
    eprintln!("$ npm install --prefix {} {MCPB}", prefix.display());
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&prefix)
        .arg(MCPB)
        .env("PATH", &node.path)
        .env("npm_config_cache", &node.npm_cache)
        .status()
        .context("cannot run npm (needed for @anthropic-ai/mcpb)")?;
    if !status.success() || !package.is_dir() {
        bail!("npm install {MCPB} failed");
    }
    std::fs::write(&stamp, MCPB)?;
    Ok(package)
}

fn mcpb(node: &NodeEnv, package: &Path, args: &[&std::ffi::OsStr]) -> anyhow::Result<()> {
    let cli = package.join("dist/cli/cli.js");
    eprintln!("$ mcpb {}", args.join(std::ffi::OsStr::new(" ")).display());
    let status = Command::new("node")
        .arg(&cli)
        .args(args)
        .env("PATH", &node.path)
        .status()
        .context("cannot run node")?;
    if !status.success() {
        bail!("mcpb {} failed", args[0].display());
    }
    Ok(())
}

/// The host as MCPB names platforms.
fn platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

/// Build the bundle; the path of the `.mcpb`.
pub fn build(root: &Path) -> anyhow::Result<PathBuf> {
    let binary = crate::install::release_binary(root)?;
    let target = crate::target_dir();
    let node = crate::node::ensure(&target)?;
    let package = ensure_mcpb(&target, &node)?;
    let version = crate::install::server_version();

    // The manifest with this build's version, for the platform the binary is for.
    let source = root.join("packaging/mcpb/manifest.json");
    let mut manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(&source).with_context(|| format!("read {}", source.display()))?,
    )?;
    manifest["version"] = json!(version);
    manifest["compatibility"]["platforms"] = json!([platform()]);

    let out = target.join("xtask/bundle");
    let stage = out.join("stage");
    crate::disk::remove_dir_if_present(&stage)?;
    std::fs::create_dir_all(stage.join("server"))?;
    std::fs::write(
        stage.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)?,
    )?;
    let file_name = binary.file_name().context("binary name")?;
    std::fs::copy(&binary, stage.join("server").join(file_name))?;

    mcpb(
        &node,
        &package,
        &["validate".as_ref(), stage.join("manifest.json").as_os_str()],
    )?;
    let bundle = out.join(format!(
        "context-loader-{version}-{}-{}.mcpb",
        platform(),
        std::env::consts::ARCH
    ));
    mcpb(
        &node,
        &package,
        &["pack".as_ref(), stage.as_os_str(), bundle.as_os_str()],
    )?;
    if !bundle.is_file() {
        bail!("mcpb pack did not write {}", bundle.display());
    }
    let size = std::fs::metadata(&bundle)?.len();
    eprintln!(
        "bundle: {} ({:.1} MiB)",
        bundle.display(),
        size as f64 / 1048576.0
    );
    Ok(bundle)
}

/// Build, unpack and start the bundle as Claude Desktop would.
pub fn check(root: &Path) -> anyhow::Result<()> {
    let bundle = build(root)?;
    let target = crate::target_dir();
    let node = crate::node::ensure(&target)?;
    let package = ensure_mcpb(&target, &node)?;
    let work = target.join("xtask/bundle/check");
    crate::disk::remove_dir_if_present(&work)?;
    let extension = work.join("extension");
    mcpb(
        &node,
        &package,
        &["unpack".as_ref(), bundle.as_os_str(), extension.as_os_str()],
    )?;

    // Without the required folder, Claude Desktop starts nothing.
    let unset = resolve(&node, &package, &extension, &json!({}))?;
    if !unset.is_null() {
        bail!("with no root folder set the bundle would still start: {unset}");
    }

    // A user's folder with one file of known content, and a file outside it.
    let folder = work.join("My Project");
    std::fs::create_dir_all(&folder)?;
    std::fs::write(
        folder.join("notes.md"),
        "# Notes\n\nHello from the bundle check.\n",
    )?;
    std::fs::write(work.join("outside.md"), "not in the configured folder\n")?;
    let specs = work.join("specs");
    std::fs::create_dir_all(specs.join("001-first"))?;
    std::fs::write(specs.join("001-first/README.md"), "# First\n\nA spec.\n")?;
    let user_config = json!({
        "root_folder": folder.to_string_lossy(),
        "specs_folder": specs.to_string_lossy(),
    });
    let config = resolve(&node, &package, &extension, &user_config)?;
    let command_line = config["command"]
        .as_str()
        .with_context(|| format!("no command in the resolved config: {config}"))?;
    let args: Vec<&str> = config["args"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if args.iter().any(|a| a.contains("${")) || config["env"].to_string().contains("${") {
        bail!("a variable was left unsubstituted: {config}");
    }
    eprintln!(
        "Claude Desktop would start: {command_line} {}",
        args.join(" ")
    );

    let mut command = Command::new(command_line);
    command.args(&args);
    // Claude Desktop's environment is not ours: drop the server's variables, then set
    // exactly the manifest's. Its working directory is not the user's folder.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CONTEXT_LOADER_")
            || name.to_string_lossy().starts_with("ANTHROPIC_")
        {
            command.env_remove(name);
        }
    }
    if let Some(env) = config["env"].as_object() {
        for (name, value) in env {
            command.env(name, value.as_str().unwrap_or_default());
        }
    }
    command.current_dir(&work);
    let (mut session, init) = StdioSession::start(command)?;
    crate::install::check_initialize(&init)?;
    let names = probe::tool_names(&session.request("tools/list", json!({}))?);
    if !names.iter().any(|n| n == "file-tokens") {
        bail!("the bundle's server lists no file-tokens: {names:?}");
    }
    let result = session.request(
        "tools/call",
        json!({"name": "file-tokens", "arguments": {"paths": ["notes.md"]}}),
    )?;
    let answer = probe::structured(&result)?;
    let files = answer.to_string();
    if !files.contains("notes.md") || answer["total"].as_u64().is_none_or(|t| t == 0) {
        bail!("file-tokens inside the configured folder: unexpected answer {answer}");
    }
    let outside = session.request(
        "tools/call",
        json!({"name": "file-tokens", "arguments": {"paths": ["../outside.md"]}}),
    )?;
    if outside["isError"] != json!(true) {
        bail!("file-tokens outside the configured folder was answered: {outside}");
    }
    let listed = session.request(
        "tools/call",
        json!({"name": "spec-tokens", "arguments": {}}),
    )?;
    if !probe::structured(&listed)?
        .to_string()
        .contains("001-first")
    {
        bail!("spec-tokens did not read the configured specs folder: {listed}");
    }
    session.close()?;
    eprintln!(
        "bundle {}: unpacked, started as Claude Desktop would, {} tools, file-tokens inside the folder only",
        bundle.display(),
        names.len()
    );
    // The staged and the unpacked copies hold the release binary again (~100 MB each);
    // the packed bundle stays.
    crate::disk::remove_scratch(&["xtask/bundle/stage", "xtask/bundle/check"])
}

/// The command Claude Desktop would run for `user_config` (`null`: it would not).
fn resolve(
    node: &NodeEnv,
    package: &Path,
    extension: &Path,
    user_config: &Value,
) -> anyhow::Result<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/mcpb_config.mjs");
    let out = Command::new("node")
        .arg(script)
        .arg(package)
        .arg(extension)
        .arg(user_config.to_string())
        .env("PATH", &node.path)
        .output()
        .context("cannot run node")?;
    if !out.status.success() {
        bail!(
            "resolving the bundle's config failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    serde_json::from_slice(&out.stdout).context("the config resolver printed no JSON")
}
