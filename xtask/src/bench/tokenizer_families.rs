//! Counting per non-OpenAI tokenizer family against its Python reference on the same
//! text: Gemini (Gemma 3) vs `sentencepiece`, Llama 3.1 / Qwen3 / DeepSeek V3 vs
//! `tokenizers`. Each side runs in a fresh process per family (`engine_bench
//! family_throughput` of context-budget; `tokenizer_refs.py bench`), so first-count
//! latency includes the vocabulary load and memory is that vocabulary's alone.

use std::process::Command;

use anyhow::{Context, bail};

use super::{Bench, ratio, table};
use crate::load_generator::key_values;
use crate::tokenizer_refs;
use crate::workspace_root;

const FAMILIES: [&str; 4] = ["gemma3", "llama-3.1", "qwen3", "deepseek-v3"];

pub fn families(bench: &mut Bench) -> anyhow::Result<String> {
    let root = workspace_root();
    let refs = tokenizer_refs::ensure(&root)?;
    let python = tokenizer_refs::venv(&crate::target_dir())?;
    let script = refs.join("tokenizer_refs.py");
    // English prose, cut to keep the Python side (about 1 MB/s) within seconds.
    let english = std::fs::read_to_string(&bench.corpora.english)?;
    let size = bench.size(1 << 20, 64 << 10);
    let mut cut = size.min(english.len());
    while !english.is_char_boundary(cut) {
        cut -= 1;
    }
    let text_path = crate::target_dir().join("bench/family-english.txt");
    std::fs::write(&text_path, &english[..cut])?;
    let seconds = bench.size("3", "0.2");

    let mut rows = Vec::new();
    let mut one_thread = Vec::new();
    let mut worst_one_thread = f64::INFINITY;
    for family in FAMILIES {
        let output = bench
            .engine_bench("family_throughput")
            .arg(family)
            .arg(&text_path)
            .arg("--refs")
            .arg(&refs)
            .args(["--seconds", seconds])
            .output()
            .context("cannot run family_throughput")?;
        if !output.status.success() {
            bail!(
                "family_throughput {family} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let line = stdout
            .lines()
            .find(|l| l.starts_with("row "))
            .with_context(|| format!("family_throughput {family} printed no row"))?;
        let ours = key_values(line);
        let output = Command::new(&python)
            .arg(&script)
            .args(["bench"])
            .arg(&refs)
            .arg(&text_path)
            .args([seconds, family])
            .output()
            .context("cannot run the Python reference bench")?;
        if !output.status.success() {
            bail!(
                "reference bench {family} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let reference: serde_json::Value =
            serde_json::from_slice(&output.stdout).context("reference bench output")?;
        let theirs = |key: &str| reference[key].as_f64().unwrap_or(f64::NAN);
        let mine = |key: &str| ours.get(key).copied().unwrap_or(f64::NAN);
        if mine("tokens") != theirs("tokens") {
            bail!(
                "{family}: ours counted {} tokens, the reference {}",
                mine("tokens"),
                theirs("tokens")
            );
        }
        let one = ratio(mine("one_thread_mbps"), theirs("one_thread_mbps"), true);
        let two = ratio(mine("two_threads_mbps"), theirs("two_threads_mbps"), true);
        one_thread.push(format!("{family} {one:.1}×"));
        worst_one_thread = worst_one_thread.min(one);
        rows.push(vec![
            family.to_string(),
            reference_name(family).to_string(),
            format!(
                "{:.1} / {:.1} = {one:.1}×",
                mine("one_thread_mbps"),
                theirs("one_thread_mbps")
            ),
            format!(
                "{:.1} / {:.1} = {two:.1}×",
                mine("two_threads_mbps"),
                theirs("two_threads_mbps")
            ),
            format!(
                "{:.0} / {:.0}",
                mine("first_count_s") * 1e3,
                theirs("first_count_s") * 1e3
            ),
            format!(
                "{:.0} / {:.0}",
                mine("rss_kib") / 1024.0,
                theirs("rss_kib") / 1024.0
            ),
        ]);
    }
    bench.check(
        "non-OpenAI families: counting faster than the Python reference (one thread)",
        one_thread.join(", "),
        worst_one_thread >= 1.0,
    );
    Ok(format!(
        "## Tokenizer families vs their Python references (same text, same counts)\n\n\
         {:.2} MB of the English corpus; each side in a fresh process per family. MB/s are\n\
         medians after a warm-up; two threads = two halves counted at once (ours: two\n\
         callers; sentencepiece: `encode([..], num_threads=2)`; tokenizers: `encode_batch`).\n\
         First count = load of the vocabulary plus one short count (what the first caller\n\
         waits); memory = RSS growth from that load. Ours / reference in every cell.\n\n{}",
        cut as f64 / 1e6,
        table(
            &[
                "family",
                "reference",
                "1 thread MB/s",
                "2 threads MB/s",
                "first count ms",
                "memory MiB",
            ],
            &rows
        )
    ))
}

fn reference_name(family: &str) -> &'static str {
    if family == "gemma3" {
        "sentencepiece 0.2.1"
    } else {
        "tokenizers 0.23.1"
    }
}
