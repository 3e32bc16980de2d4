//! The goals of issue 21 for the non-OpenAI families, each printed with its ratio and
//! met / not met (same run, same machine, same texts, same counts):
//!
//! - open-weight (Llama 3.1, Qwen3, DeepSeek V3): one thread at least 3x the Python
//!   `tokenizers` reference, on English and on Rust code;
//! - Gemini on code: within 1.5x of its own English throughput, and at least 50x the
//!   Python `sentencepiece` reference on the same code;
//! - Gemini's first answer, whole process (`count --model gemini-2.5-pro "hello
//!   world"`): at most 15 ms (the ratio against a minimal tiktoken-rs program is the
//!   first-answer section's).
//!
//! Each side counts in a fresh process per family and text (`engine_bench`
//! `family_throughput`; `tokenizer_refs.py bench`), as in the tokenizer-families
//! section.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

use super::{Bench, median, ratio, table};
use crate::load_generator::key_values;
use crate::tokenizer_refs;
use crate::workspace_root;

const OPEN_WEIGHT: [&str; 3] = ["llama-3.1", "qwen3", "deepseek-v3"];

/// One-thread MB/s of ours and of the reference on one text.
struct Rates {
    ours: f64,
    reference: f64,
}

pub fn goals(bench: &mut Bench) -> anyhow::Result<String> {
    let root = workspace_root();
    let refs = tokenizer_refs::ensure(&root)?;
    let python = tokenizer_refs::venv(&crate::target_dir())?;
    let size = bench.size(1 << 20, 64 << 10);
    let seconds = bench.size("3", "0.2");
    let mut texts = Vec::new();
    for name in ["english", "rust-code"] {
        let corpus = bench
            .corpora
            .list
            .iter()
            .find(|c| c.name == name)
            .with_context(|| format!("no {name} corpus"))?;
        let text = std::fs::read_to_string(&corpus.path)?;
        let mut cut = size.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let path = root.join(format!("target/bench/family-goal-{name}.txt"));
        std::fs::write(&path, &text[..cut])?;
        texts.push((name, path));
    }

    let mut rates: HashMap<(&str, &str), Rates> = HashMap::new();
    for family in ["gemma3"].into_iter().chain(OPEN_WEIGHT) {
        for (name, path) in &texts {
            let measured = one_thread(bench, &python, &refs, family, path, seconds)?;
            rates.insert((family, name), measured);
        }
    }

    let mut rows = Vec::new();
    let mut goal = |bench: &mut Bench, what: String, measured: String, met: bool| {
        rows.push(vec![
            what.clone(),
            measured.clone(),
            if met { "met" } else { "not met" }.to_string(),
        ]);
        bench.check(&what, measured, met);
    };
    for family in OPEN_WEIGHT {
        for (name, _) in &texts {
            let r = &rates[&(family, *name)];
            let times = ratio(r.ours, r.reference, true);
            goal(
                bench,
                format!("{family} on {name}, one thread ≥ 3× Python tokenizers"),
                format!("{:.1} / {:.1} MB/s = {times:.1}×", r.ours, r.reference),
                times >= 3.0,
            );
        }
    }
    let (english, code) = (
        &rates[&("gemma3", "english")],
        &rates[&("gemma3", "rust-code")],
    );
    let slower = ratio(code.ours, english.ours, false);
    goal(
        bench,
        "gemma3: code within 1.5× of its English throughput".into(),
        format!(
            "English {:.1} MB/s, code {:.1} MB/s: English / code = {slower:.2}",
            english.ours, code.ours
        ),
        slower <= 1.5,
    );
    let times = ratio(code.ours, code.reference, true);
    goal(
        bench,
        "gemma3 on code ≥ 50× Python sentencepiece".into(),
        format!(
            "{:.1} / {:.2} MB/s = {times:.0}×",
            code.ours, code.reference
        ),
        times >= 50.0,
    );
    let (first, runs) = gemini_first_answer(bench)?;
    goal(
        bench,
        "gemma3 first answer, whole process, ≤ 15 ms".into(),
        format!(
            "{:.1} ms (median of {runs} runs of `count --model gemini-2.5-pro`)",
            first
        ),
        first <= 15.0,
    );

    Ok(format!(
        "## Tokenizer families: issue 21's goals\n\n\
         {:.2} MB of each of the English and Rust corpora; one thread, medians after a\n\
         warm-up, each side in a fresh process per family and text; counts equal on both\n\
         sides (the run fails otherwise). First answer: the release binary, launched\n\
         whole, counting \"hello world\" for gemini-2.5-pro.\n\n{}",
        size as f64 / 1e6,
        table(&["goal", "measured", "result"], &rows)
    ))
}

/// Ours (`engine_bench family_throughput`) and the reference on one text, one thread.
fn one_thread(
    bench: &Bench,
    python: &Path,
    refs: &Path,
    family: &str,
    text: &PathBuf,
    seconds: &str,
) -> anyhow::Result<Rates> {
    let output = bench
        .engine_bench("family_throughput")
        .arg(family)
        .arg(text)
        .arg("--refs")
        .arg(refs)
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
    let output = Command::new(python)
        .arg(refs.join("tokenizer_refs.py"))
        .arg("bench")
        .arg(refs)
        .arg(text)
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
    let mine = |key: &str| ours.get(key).copied().unwrap_or(f64::NAN);
    let theirs = |key: &str| reference[key].as_f64().unwrap_or(f64::NAN);
    if mine("tokens") != theirs("tokens") {
        bail!(
            "{family} on {}: ours counted {} tokens, the reference {}",
            text.display(),
            mine("tokens"),
            theirs("tokens")
        );
    }
    Ok(Rates {
        ours: mine("one_thread_mbps"),
        reference: theirs("one_thread_mbps"),
    })
}

/// Median wall time in ms of the whole binary counting a short text for Gemini.
fn gemini_first_answer(bench: &Bench) -> anyhow::Result<(f64, usize)> {
    let runs = bench.size(20, 2);
    let binary = bench.artifact("context-loader");
    let mut times = Vec::new();
    // One warm-up launch (page cache), then the measured ones.
    for run in 0..=runs {
        let started = Instant::now();
        let output = Command::new(&binary)
            .args(["count", "--model", "gemini-2.5-pro", "hello world"])
            .output()
            .context("cannot run context-loader count")?;
        let elapsed = started.elapsed().as_secs_f64() * 1e3;
        if !output.status.success() {
            bail!(
                "context-loader count failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        if run > 0 {
            times.push(elapsed);
        }
    }
    Ok((median(&times), runs))
}
