//! Counting throughput of our tokenizer against tiktoken-rs (the reference), same
//! texts, same process, alternating runs; reports medians and ratios.
//!
//! Usage: count_throughput NAME=FILE [NAME=FILE ...] [--rounds N]
//! Run through `cargo xtask bench`, which builds the corpora.

use std::time::Instant;

use context_budget::Tokenizer;

fn main() {
    let mut rounds = 5usize;
    let mut corpora = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--rounds" {
            rounds = args.next().and_then(|n| n.parse().ok()).unwrap_or(rounds);
        } else if let Some((name, path)) = arg.split_once('=') {
            match std::fs::read_to_string(path) {
                Ok(text) => corpora.push((name.to_string(), text)),
                Err(e) => eprintln!("skipping {name}: cannot read {path}: {e}"),
            }
        }
    }

    // Cold load first, before anything else touched the vocabularies.
    let rss_start = rss_kib();
    let ours_load = time(|| Tokenizer::EXACT.iter().for_each(|t| t.preload()));
    let rss_ours = rss_kib();
    let reference_load = time(|| {
        let _ = tiktoken_rs::cl100k_base_singleton();
        let _ = tiktoken_rs::o200k_base_singleton();
    });
    let rss_reference = rss_kib();
    println!("| what | ours | tiktoken-rs | ratio |");
    println!("|---|---:|---:|---:|");
    println!(
        "| load cl100k+o200k (ms) | {:.1} | {:.1} | {:.1}x faster |",
        ours_load * 1e3,
        reference_load * 1e3,
        reference_load / ours_load
    );
    println!(
        "| RSS growth for cl100k+o200k (MiB) | {:.1} | {:.1} | |",
        rss_ours.saturating_sub(rss_start) as f64 / 1024.0,
        rss_reference.saturating_sub(rss_ours) as f64 / 1024.0
    );

    for (name, text) in &corpora {
        for tokenizer in Tokenizer::EXACT {
            let reference = match tokenizer {
                Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
                _ => tiktoken_rs::o200k_base_singleton(),
            };
            let expected = reference.encode_ordinary(text).len();
            assert_eq!(tokenizer.count(text), expected, "counts differ on {name}");
            let mb = text.len() as f64 / 1e6;
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                ours.push(mb / time(|| assert_eq!(tokenizer.count(text), expected)));
                theirs.push(
                    mb / time(|| assert_eq!(reference.encode_ordinary(text).len(), expected)),
                );
            }
            let (ours, theirs) = (median(&mut ours), median(&mut theirs));
            println!(
                "| {name} {:.1} MB, {} (MB/s) | {ours:.1} | {theirs:.1} | {:.1}x |",
                mb,
                tokenizer.name(),
                ours / theirs
            );
        }
    }
}

fn time(work: impl FnOnce()) -> f64 {
    let start = Instant::now();
    work();
    start.elapsed().as_secs_f64()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}
