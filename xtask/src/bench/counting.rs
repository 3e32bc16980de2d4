//! Row 1: counting throughput, ours vs tiktoken-rs, same texts, same process
//! (`engine_bench count_throughput`, an example of context-budget).

use anyhow::{Context, bail};

use super::{Bench, ratio, table};
use crate::load_generator::key_values;

pub fn throughput(bench: &mut Bench) -> anyhow::Result<String> {
    let rounds = bench.size("7", "1");
    let output = bench
        .engine_bench("count_throughput")
        .arg("throughput")
        .args(bench.corpora.specs())
        .args(["--rounds", rounds, "--threads", "1,2"])
        .output()
        .context("cannot run count_throughput")?;
    if !output.status.success() {
        bail!(
            "count_throughput failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut rows = Vec::new();
    let mut prose_ratios = Vec::new();
    // One-thread MB/s per corpus and encoding, for issue 43's goals.
    let mut one_thread: Vec<(String, String, f64)> = Vec::new();
    for line in stdout.lines().filter(|l| l.starts_with("row ")) {
        let text = |key: &str| {
            line.split_whitespace()
                .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))
                .unwrap_or("?")
                .to_string()
        };
        let values = key_values(line);
        let number = |key: &str| values.get(key).copied().unwrap_or(f64::NAN);
        let (ours, reference) = (number("ours_mbps"), number("reference_mbps"));
        let x = ratio(ours, reference, true);
        let corpus = text("corpus");
        if corpus == "english" {
            prose_ratios.push((text("encoding"), text("threads"), x));
        }
        if text("threads") == "1" {
            one_thread.push((corpus.clone(), text("encoding"), ours));
        }
        rows.push(vec![
            format!(
                "{corpus} ({:.2} MB{})",
                number("bytes") / 1e6,
                match number("pieces") {
                    n if n > 1.0 => format!(", {n:.0} messages"),
                    _ => String::new(),
                }
            ),
            text("encoding"),
            text("threads"),
            format!("{ours:.1}"),
            format!("{reference:.1}"),
            format!("{x:.1}×"),
            format!("{:.0} %", number("ours_spread") * 100.0),
        ]);
    }
    if rows.is_empty() {
        bail!("count_throughput printed no rows:\n{stdout}");
    }
    // The target is the hot path: one count call on English prose (the issue's own
    // figures are single-thread rates). Rows with two concurrent callers are shown
    // beside it, not hidden.
    let describe = |threads: &str| -> (f64, String) {
        let picked: Vec<String> = prose_ratios
            .iter()
            .filter(|(_, t, _)| t == threads)
            .map(|(encoding, _, x)| format!("{encoding} {x:.1}×"))
            .collect();
        let worst = prose_ratios
            .iter()
            .filter(|(_, t, _)| t == threads)
            .map(|(_, _, x)| *x)
            .fold(f64::INFINITY, f64::min);
        (worst, picked.join(", "))
    };
    let (one_caller, one_text) = describe("1");
    let (_, two_text) = describe("2");
    bench.check(
        "counting English prose ≥ 5× tiktoken-rs (one count call)",
        format!("one caller: {one_text}; two concurrent callers: {two_text}"),
        one_caller >= 5.0,
    );
    // Issue 43's goals: one count call on one thread, MB/s, both encodings. Absolute
    // rates, so a loaded machine misses them where the ratios above still hold.
    for (corpus, goal) in [
        ("english", 400.0),
        ("rust-code", 500.0),
        ("korean", 200.0),
        ("chat-256B", 250.0),
        ("base64", 80.0),
    ] {
        let rates: Vec<&(String, String, f64)> =
            one_thread.iter().filter(|(c, _, _)| c == corpus).collect();
        if rates.is_empty() {
            continue;
        }
        let measured = rates
            .iter()
            .map(|(_, encoding, mbps)| format!("{encoding} {mbps:.0} MB/s"))
            .collect::<Vec<_>>()
            .join(", ");
        bench.check(
            &format!("counting {corpus} ≥ {goal:.0} MB/s on one thread, both encodings (issue 43)"),
            measured,
            rates.iter().all(|(_, _, mbps)| *mbps >= goal),
        );
    }
    Ok(format!(
        "## 1. Counting throughput: ours vs tiktoken-rs (MB/s, same text, same process)\n\n\
         Median of {rounds} alternating rounds after a warm-up pass in which both libraries must\n\
         agree on every count. `threads` is the number of callers. One caller: one warm thread,\n\
         steady state (a server's reused blocking thread), CPU time of that thread, each round\n\
         repeating its count for at least 50 ms; a text of 256 KiB or more is counted in parts\n\
         below that size cut where counts add up, as `count` counts every text under it on the\n\
         calling thread alone (a larger one goes in two halves to two cores; the goals are per\n\
         thread). `spread` is (highest − lowest) / median of ours over the rounds. Two callers:\n\
         each thread counts the whole corpus at once, MB/s is the total over the wall time, and\n\
         ours may use its helper thread; both libraries use the whole machine.\n\n{}",
        table(
            &[
                "corpus",
                "encoding",
                "threads",
                "ours",
                "tiktoken-rs",
                "ratio",
                "spread"
            ],
            &rows
        )
    ))
}

/// Row 1b: texts that are one huge pre-token piece (the hardening issue's 8 MiB of
/// one letter took 5.1 s): ours vs tiktoken-rs at a size tiktoken-rs's quadratic
/// merge still finishes, and ours alone at 8 MiB.
pub fn pathological(bench: &mut Bench) -> anyhow::Result<String> {
    let (bytes, rounds) = (bench.size("65536", "8192"), bench.size("3", "1"));
    let output = bench
        .engine_bench("count_throughput")
        .args(["pathological", "--bytes", bytes, "--rounds", rounds])
        .output()
        .context("cannot run count_throughput pathological")?;
    if !output.status.success() {
        bail!(
            "count_throughput pathological failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut large = std::collections::HashMap::new();
    for line in stdout
        .lines()
        .filter(|l| l.starts_with("pathological_large "))
    {
        let values = key_values(line);
        let input = line
            .split_whitespace()
            .find_map(|p| p.strip_prefix("input="));
        if let (Some(input), Some(mbps)) = (input, values.get("ours_mbps")) {
            large.insert(input.to_string(), *mbps);
        }
    }
    let mut rows = Vec::new();
    let mut slowest_large = f64::INFINITY;
    for line in stdout.lines().filter(|l| l.starts_with("pathological ")) {
        let values = key_values(line);
        let number = |key: &str| values.get(key).copied().unwrap_or(f64::NAN);
        let input = line
            .split_whitespace()
            .find_map(|p| p.strip_prefix("input="))
            .unwrap_or("?");
        let (ours, reference) = (number("ours_mbps"), number("reference_mbps"));
        let at_8mib = large.get(input).copied().unwrap_or(f64::NAN);
        slowest_large = slowest_large.min(at_8mib);
        rows.push(vec![
            input.to_string(),
            format!("{:.0} KiB", number("bytes") / 1024.0),
            format!("{ours:.1}"),
            format!("{reference:.2}"),
            format!("{:.0}×", ratio(ours, reference, true)),
            format!("{at_8mib:.1} ({:.2} s)", 8.388608 / at_8mib),
        ]);
    }
    if rows.is_empty() {
        bail!("count_throughput pathological printed no rows:\n{stdout}");
    }
    bench.check(
        "8 MiB of one character counts in linear time (was 5.1 s): ≥ 10 MB/s",
        format!("slowest input at 8 MiB: {slowest_large:.1} MB/s"),
        slowest_large >= 10.0,
    );
    Ok(format!(
        "## 1b. Pathological text: one huge pre-token piece (cl100k_base, MB/s)\n\n\
         A run of one letter, of spaces or of punctuation is one pre-token piece; tiktoken-rs\n\
         merges it in quadratic time, so it is compared at a size it still finishes. Ours\n\
         counts such texts with bpe-openai's linear-time BPE (same counts: the warm-up asserts\n\
         it, and the differential test). Digits come three at a time: the fast control.\n\n{}",
        table(
            &[
                "input",
                "size",
                "ours",
                "tiktoken-rs",
                "ratio",
                "ours at 8 MiB"
            ],
            &rows
        )
    ))
}
