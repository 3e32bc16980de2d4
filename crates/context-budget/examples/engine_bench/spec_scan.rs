//! Spec measurement speed on a generated corpus (`cargo xtask spec-corpus DIR`):
//! the full listing with sub-specs and breakdowns, cold (new store) and warm (same
//! store, unchanged files), one spec, and 50 single-spec calls in one session.
//! Prints a Markdown table of medians; `cargo xtask bench` runs it.
//!
//! Usage: engine_bench spec_scan DIR [--rounds N]

use std::time::Instant;

use clap::Parser;
use context_budget::Unobserved;
use context_budget::spec::{SpecQuery, SpecStore, SpecTokens};
use context_budget::{Catalog, Tokenizer};

/// Spec measurement speed on a generated corpus.
#[derive(Parser)]
struct Cli {
    /// The spec repository (`cargo xtask spec-corpus DIR` writes one).
    dir: String,
    /// Timed rounds per row (the median is printed).
    #[arg(long, default_value_t = 5, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    rounds: usize,
}

pub fn run(args: Vec<std::ffi::OsString>) {
    let Cli { dir, rounds } = Cli::parse_from(args);
    let model = Catalog::builtin()
        .resolve("gpt-4")
        .expect("gpt-4 is in the catalog");
    // Encoders load once per process in a server; do not charge that to any row.
    Tokenizer::Cl100kBase.preload();
    let everything = SpecQuery {
        include_sub_specs: true,
        detailed: true,
        ..SpecQuery::default()
    };
    let run = |store: &SpecStore, query: &SpecQuery| match store.spec_tokens(
        query,
        &model,
        &Unobserved,
    ) {
        Ok(SpecTokens::Listing(l)) => l.summary.total_tokens,
        Ok(SpecTokens::Spec(s)) => s.total,
        Err(e) => panic!("spec_tokens failed: {e}"),
    };

    // Warm the page cache and check the corpus once.
    let probe = SpecStore::new(&dir);
    let total_tokens = run(&probe, &everything);
    let listing = match probe.spec_tokens(&everything, &model, &Unobserved) {
        Ok(SpecTokens::Listing(l)) => *l,
        _ => panic!("listing expected"),
    };
    let ids: Vec<String> = listing.specs.iter().map(|r| r.spec.clone()).collect();
    // A store keeps the folder listing between calls only once the directories have
    // been unchanged for `SETTLED`; a corpus written just now is not there yet, a
    // repository at rest is. Time the repository at rest.
    std::thread::sleep(context_budget::spec::discovery::SETTLED);

    let (mut cold, mut warm, mut one_cold, mut one_warm, mut fifty) =
        (vec![], vec![], vec![], vec![], vec![]);
    for round in 0..rounds {
        let store = SpecStore::new(&dir);
        cold.push(ms(|| assert_eq!(run(&store, &everything), total_tokens)));
        warm.push(ms(|| assert_eq!(run(&store, &everything), total_tokens)));

        let single = SpecQuery {
            spec_path: Some(ids[(round * 37) % ids.len()].clone()),
            include_sub_specs: true,
            detailed: true,
            ..SpecQuery::default()
        };
        let fresh = SpecStore::new(&dir);
        one_cold.push(ms(|| {
            run(&fresh, &single);
        }));
        one_warm.push(ms(|| {
            run(&fresh, &single);
        }));
        assert_eq!(fresh.folder_reads(), 1, "the warm call reuses the listing");

        let session = SpecStore::new(&dir);
        fifty.push(ms(|| {
            for i in 0..50 {
                let q = SpecQuery {
                    spec_path: Some(ids[(round * 50 + i * 41) % ids.len()].clone()),
                    ..SpecQuery::default()
                };
                run(&session, &q);
            }
        }));
    }
    let files: usize = listing.specs.iter().map(|r| r.files).sum();
    println!(
        "Corpus: {} specs, {files} files, {total_tokens} cl100k tokens; {} threads; median of {rounds} rounds.\n",
        listing.scanned,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| spec-tokens call | median ms | max ms |");
    println!("|---|---:|---:|");
    for (name, values) in [
        ("all specs, sub-specs + detailed, cold (new store)", &cold),
        ("all specs, sub-specs + detailed, warm (repeat)", &warm),
        ("one spec, sub-specs + detailed, cold", &one_cold),
        ("one spec, sub-specs + detailed, warm", &one_warm),
        ("50 single-spec calls in one session", &fifty),
    ] {
        println!(
            "| {name} | {:.2} | {:.2} |",
            crate::median(values),
            max(values)
        );
    }
    stages(&dir);
}

/// Where a cold scan's time goes, one thread: MB/s of each stage over every file.
fn stages(dir: &str) {
    use context_budget::spec::markdown::classify;
    let mut texts = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(path) = stack.pop() {
        if let Ok(entries) = std::fs::read_dir(&path) {
            stack.extend(entries.flatten().map(|e| e.path()));
        } else if path.extension().is_some_and(|e| e == "md") {
            texts.extend(std::fs::read_to_string(&path).ok());
        }
    }
    let bytes: usize = texts.iter().map(String::len).sum();
    let mb_s = |ms: f64| bytes as f64 / 1e6 / (ms / 1e3);
    let classify_ms = ms(|| {
        texts.iter().for_each(|t| {
            std::hint::black_box(classify(t));
        })
    });
    let count_ms = ms(|| {
        texts.iter().for_each(|t| {
            std::hint::black_box(Tokenizer::Cl100kBase.count(t));
        })
    });
    let attribute_ms = ms(|| {
        texts
            .iter()
            .for_each(|t| Tokenizer::Cl100kBase.for_each_token(t, |_, _| {}))
    });
    println!("\n| stage, 1 thread, {:.1} MB | MB/s |", bytes as f64 / 1e6);
    println!("|---|---:|");
    println!("| classify (pulldown-cmark) | {:.0} |", mb_s(classify_ms));
    println!("| count only (cl100k) | {:.0} |", mb_s(count_ms));
    println!(
        "| tokenize with offsets (cl100k) | {:.0} |",
        mb_s(attribute_ms)
    );
}

fn ms(work: impl FnOnce()) -> f64 {
    let start = Instant::now();
    work();
    start.elapsed().as_secs_f64() * 1e3
}

fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}
