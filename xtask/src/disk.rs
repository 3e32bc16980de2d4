//! Disk use of `cargo xtask ci`: a clean run writes several GB under target/, and a
//! machine that runs out of disk fails with a linker "Bus error" half an hour in. So CI
//! checks the free space first and reports what it used at the end.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

/// What a clean `cargo xtask ci` needs in target/: it left 5.7 GB there on
/// 2026-11-29 (at ebce70b; 11.7 GB on 2026-11-27), and `du` every 20 s through two
/// whole runs never saw more than 5,892 MiB. 8 GiB leaves a quarter for growth (12
/// asked twice what a run uses, and would refuse a machine that has room).
pub const CI_NEEDS_BYTES: u64 = 8 << 30;

/// Fails, saying how much is needed, when the filesystem holding `dir` has less than
/// `needed` bytes free beyond what `already` (bytes `dir` holds now) covers.
pub fn require_free(dir: &Path, needed: u64) -> anyhow::Result<()> {
    let free = free_bytes(dir)?;
    let already = if dir.exists() { used_bytes(dir) } else { 0 };
    let missing = needed.saturating_sub(already);
    eprintln!(
        "disk: {} free at {}, {} already there; a clean run needs about {}",
        gb(free),
        dir.display(),
        gb(already),
        gb(needed)
    );
    if free < missing {
        bail!(
            "only {} free on the filesystem of {}, and CI needs about {} more: free some \
             disk (an old target/ is the usual culprit: `cargo clean`) and run again",
            gb(free),
            dir.display(),
            gb(missing)
        );
    }
    Ok(())
}

/// Bytes allocated under `dir` (hard links counted once; symlinks not followed).
pub fn used_bytes(dir: &Path) -> u64 {
    let mut seen = HashSet::new();
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.nlink() > 1 && !seen.insert((meta.dev(), meta.ino())) {
            continue;
        }
        total += meta.blocks() * 512;
        if meta.is_dir()
            && let Ok(entries) = std::fs::read_dir(&path)
        {
            stack.extend(entries.filter_map(|e| e.ok().map(|e| e.path())));
        }
    }
    total
}

/// Free bytes on the filesystem of `dir` (its nearest existing ancestor), from POSIX `df`.
fn free_bytes(dir: &Path) -> anyhow::Result<u64> {
    let existing = dir
        .ancestors()
        .find(|p| p.exists())
        .context("no existing directory above target/")?;
    let out = Command::new("df")
        .args(["-P", "-k"])
        .arg(existing)
        .output()
        .context("cannot run df to check the free disk space")?;
    let text = String::from_utf8_lossy(&out.stdout);
    // POSIX format: a header, then "fs 1024-blocks used available capacity mount".
    let available = text
        .lines()
        .nth(1)
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|field| field.parse::<u64>().ok())
        .with_context(|| format!("cannot read df's output: {text:?}"))?;
    Ok(available * 1024)
}

pub fn gb(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / (1u64 << 30) as f64)
}

/// Where `dir`'s bytes are: each folder directly under it, largest first, and inside
/// the largest of those its `inner` largest folders (for target/: debug, release, and
/// what xtask installed). So a run that grew says which part grew.
pub fn breakdown(dir: &Path, inner: usize) -> String {
    let sized = |dir: &Path| -> Vec<(u64, String)> {
        let mut sizes: Vec<(u64, String)> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| {
                (
                    used_bytes(&e.path()),
                    e.file_name().to_string_lossy().into_owned(),
                )
            })
            .collect();
        sizes.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        sizes
    };
    let mut parts = Vec::new();
    for (bytes, name) in sized(dir) {
        if bytes < (64 << 20) {
            continue;
        }
        let mut part = format!("{name} {}", gb(bytes));
        let inside: Vec<String> = sized(&dir.join(&name))
            .into_iter()
            .take(inner)
            .filter(|(b, _)| *b >= (64 << 20))
            .map(|(b, n)| format!("{n} {}", gb(b)))
            .collect();
        if !inside.is_empty() {
            part.push_str(&format!(" ({})", inside.join(", ")));
        }
        parts.push(part);
    }
    parts.join("; ")
}

/// Remove work folders under target/ once the check that made them passed (an image's
/// build context or extracted filesystem holds the release binary again, ~100 MB
/// each): on a failure they stay for a look.
pub fn remove_scratch(under_target: &[&str]) -> anyhow::Result<()> {
    for scratch in under_target {
        remove_dir_if_present(&crate::target_dir().join(scratch))?;
    }
    Ok(())
}

/// Remove `dir` and everything under it; a folder that is not there is already gone.
pub fn remove_dir_if_present(dir: &Path) -> anyhow::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("remove {}", dir.display()))
        }
        _ => Ok(()),
    }
}
