//! `cargo xtask catalog`: the shipped model catalog (crates/context-budget/data/
//! models.json) regenerated from LiteLLM's model list by the rules in
//! `context_budget::litellm`, with data/catalog-overrides.json merged on top.
//!
//! - `--from FILE [--litellm-version V]`: regenerate from a LiteLLM JSON file.
//! - `--check` (in `cargo xtask ci`): regenerate from the pinned LiteLLM release
//!   (fetched once from PyPI into target/xtask/litellm) and fail unless the result is
//!   byte for byte the shipped file, so the file never drifts from its rules.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::workspace_root;

/// The LiteLLM release the shipped catalog is generated from.
pub const LITELLM_VERSION: &str = "1.109.1";
/// SHA-256 of `model_prices_and_context_window_backup.json` in that release.
const LITELLM_JSON_SHA256: &str =
    "8f8060d8ce7a40c91b995c74d6a27657543d49e3c1c53430dabd556f244392c6";
const WHEEL_MEMBER: &str = "litellm/model_prices_and_context_window_backup.json";

/// `cargo xtask catalog` flags.
#[derive(Debug, clap::Args)]
pub struct CatalogArgs {
    /// Regenerate data/models.json from this LiteLLM model_prices_and_context_window JSON.
    #[arg(long, conflicts_with = "check", required_unless_present = "check")]
    from: Option<PathBuf>,
    /// The LiteLLM release the file comes from (named in the catalog's `source`).
    #[arg(long, default_value = LITELLM_VERSION)]
    litellm_version: String,
    /// Fail unless data/models.json is exactly what the pinned LiteLLM release gives.
    #[arg(long)]
    check: bool,
}

pub fn run(args: &CatalogArgs) -> anyhow::Result<()> {
    let root = workspace_root();
    let Some(from) = &args.from else {
        return check(&root);
    };
    let litellm =
        std::fs::read_to_string(from).with_context(|| format!("cannot read {}", from.display()))?;
    let text = generate(&root, &litellm, &args.litellm_version)?;
    let shipped = shipped_path(&root);
    std::fs::write(&shipped, &text).with_context(|| format!("write {}", shipped.display()))?;
    let models = text.lines().filter(|l| l.contains("\"name\"")).count();
    eprintln!("wrote {} ({models} models)", shipped.display());
    Ok(())
}

fn shipped_path(root: &Path) -> PathBuf {
    root.join("crates/context-budget/data/models.json")
}

/// The catalog text for a LiteLLM file of release `version`.
fn generate(root: &Path, litellm: &str, version: &str) -> anyhow::Result<String> {
    let overrides_path = root.join("crates/context-budget/data/catalog-overrides.json");
    let overrides = std::fs::read_to_string(&overrides_path)
        .with_context(|| format!("cannot read {}", overrides_path.display()))?;
    let source = format!(
        "LiteLLM {version} model_prices_and_context_window_backup.json (PyPI wheel `litellm`, \
         MIT: see models.LITELLM-LICENSE), selected and assigned tokenizers by the rules in \
         context-budget/src/litellm.rs, with data/catalog-overrides.json merged on top. \
         context_window is LiteLLM's max_input_tokens; prices are USD per 1M tokens, \
         standard tier."
    );
    let text = context_budget::litellm::catalog_document(litellm, &overrides, &source)?;
    // The result must load as the built-in catalog does.
    context_budget::Catalog::from_json(&text).context("generated catalog does not load")?;
    Ok(text)
}

pub fn check(root: &Path) -> anyhow::Result<()> {
    let litellm_path = pinned_litellm_json(&crate::target_dir())?;
    let litellm = std::fs::read_to_string(&litellm_path)?;
    let text = generate(root, &litellm, LITELLM_VERSION)?;
    let shipped_path = shipped_path(root);
    let shipped = std::fs::read_to_string(&shipped_path)?;
    if text != shipped {
        bail!(
            "{} differs from what `cargo xtask catalog --from {}` generates: \
             regenerate it (and commit), or fix the rules",
            shipped_path.display(),
            litellm_path.display()
        );
    }
    eprintln!(
        "catalog: {} is exactly LiteLLM {LITELLM_VERSION} + overrides",
        shipped_path.display()
    );
    Ok(())
}

/// The pinned LiteLLM JSON under target/xtask/litellm, fetched from PyPI (the wheel,
/// no dependencies, removed once the JSON is out) on first use and checked against
/// its SHA-256.
pub fn pinned_litellm_json(target: &Path) -> anyhow::Result<PathBuf> {
    let dir = target.join("xtask/litellm");
    let json = dir.join(format!("model_prices-{LITELLM_VERSION}.json"));
    if json.is_file() {
        return Ok(json);
    }
    std::fs::create_dir_all(&dir)?;
    eprintln!(
        "fetching litellm=={LITELLM_VERSION} from PyPI into {}",
        dir.display()
    );
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let status = Command::new(&python)
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
        ])
        .args(["--disable-pip-version-check", "-d"])
        .arg(&dir)
        .arg(format!("litellm=={LITELLM_VERSION}"))
        .status()
        .with_context(|| format!("cannot run {python} -m pip"))?;
    if !status.success() {
        bail!("pip download litellm=={LITELLM_VERSION} failed");
    }
    // Extract the one member and verify it, with Python's zipfile and hashlib.
    let script = "import glob, hashlib, sys, zipfile\n\
        wheel = sorted(glob.glob(sys.argv[1] + '/litellm-' + sys.argv[2] + '-*.whl'))[0]\n\
        data = zipfile.ZipFile(wheel).read(sys.argv[3])\n\
        if hashlib.sha256(data).hexdigest() != sys.argv[4]:\n    sys.exit('sha256 mismatch')\n\
        open(sys.argv[5], 'wb').write(data)\n";
    let partial = dir.join("model_prices.json.partial");
    let status = Command::new(&python)
        .args(["-c", script])
        .arg(&dir)
        .arg(LITELLM_VERSION)
        .arg(WHEEL_MEMBER)
        .arg(LITELLM_JSON_SHA256)
        .arg(&partial)
        .status()
        .context("cannot run python to unpack the wheel")?;
    if !status.success() {
        bail!("could not extract {WHEEL_MEMBER} from the litellm wheel (or its SHA-256 differs)");
    }
    std::fs::rename(&partial, &json)?;
    // The 40 MB wheel is read once: later runs take the JSON beside it.
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with(&format!("litellm-{LITELLM_VERSION}-")) && name.ends_with(".whl") {
            std::fs::remove_file(&path).with_context(|| format!("remove {}", path.display()))?;
        }
    }
    Ok(json)
}
