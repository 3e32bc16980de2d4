//! file-tokens and load-files speed on a folder, against a one-file-at-a-time loop
//! over count-tokens (read a file, count it, next: what an agent does without
//! file-tokens), in the same process; and every file's count against tiktoken-rs.
//! Prints a Markdown table of medians and `key=value` lines for `cargo xtask bench`.
//!
//! Usage: engine_bench files_bench DIR [--rounds N] [--model NAME]

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use context_budget::Unobserved;
use context_budget::files::pack::{PackFormat, PackOrder};
use context_budget::files::roots::Roots;
use context_budget::files::{FileLimits, FileQuery, FileSort, FileStore, LoadRequest};
use context_budget::{Catalog, TokenCounter};

/// file-tokens and load-files speed on a folder, against a count-tokens loop.
#[derive(Parser)]
struct Cli {
    /// The folder to measure (every file under it, as file-tokens walks it).
    dir: String,
    /// Timed rounds per row (the median is printed).
    #[arg(long, default_value_t = 3, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    rounds: usize,
    /// A model of the built-in catalog: its tokenizer counts, its window is the budget.
    #[arg(long = "model", value_name = "NAME", default_value = "gpt-4o")]
    model_name: String,
}

pub fn run(args: Vec<std::ffi::OsString>) {
    let Cli {
        dir,
        rounds,
        model_name,
    } = Cli::parse_from(args);
    let model = Catalog::builtin()
        .resolve(&model_name)
        .expect("model is in the catalog");
    let tokenizer = model.tokenizer();
    // Encoders load once per process in a server; do not charge that to any row.
    tokenizer.preload();
    let roots = Roots::new(&[PathBuf::from(&dir)]).expect("root");
    let limits = FileLimits {
        max_files: 100_000,
        max_total_bytes: 1 << 30,
        ..FileLimits::default()
    };
    let everything = FileQuery::default();
    let measure = |store: &FileStore| {
        store
            .file_tokens(
                &roots,
                &everything,
                &model,
                FileSort::Tokens,
                Some(0),
                &Unobserved,
            )
            .expect("file_tokens")
    };
    // A budget that holds the whole tree: load-files packs everything, as repomix does.
    let pack_all = LoadRequest {
        budget: Some(u64::MAX / 4),
        order: Some(PackOrder::Given),
        format: PackFormat::Xml,
        detail: Default::default(),
        max_file_tokens: None,
        rows: None,
        // No answer limit: this measures packing, not what one MCP answer may hold.
        answer_limit: context_budget::AnswerLimit {
            tokens: u64::MAX / 4,
            chars: usize::MAX / 8,
            bytes: usize::MAX,
            source: context_budget::LimitSource::CommandLine,
        },
    };
    let load = |store: &FileStore, request: &LoadRequest| {
        store
            .load_files(&roots, &everything, request, &model, &Unobserved)
            .expect("load_files")
    };

    // Warm the page cache; list the files once.
    let probe = FileStore::new(limits.clone());
    let listing = store_listing(&probe, &roots, &model);
    let total_tokens = measure(&probe).total;

    let (mut cold, mut warm, mut packed, mut packed_budget, mut looped) =
        (vec![], vec![], vec![], vec![], vec![]);
    let mut packed_tokens = 0;
    let mut budget_tokens = 0;
    let counter = TokenCounter::new(std::sync::Arc::new(Catalog::builtin().clone()), usize::MAX);
    for _ in 0..rounds {
        let store = FileStore::new(limits.clone());
        cold.push(ms(|| assert_eq!(measure(&store).total, total_tokens)));
        warm.push(ms(|| assert_eq!(measure(&store).total, total_tokens)));
        let fresh = FileStore::new(limits.clone());
        packed.push(ms(|| packed_tokens = load(&fresh, &pack_all).tokens));
        let default_budget = LoadRequest {
            order: Some(PackOrder::Smallest),
            ..LoadRequest::default()
        };
        packed_budget.push(ms(|| budget_tokens = load(&fresh, &default_budget).tokens));
        looped.push(ms(|| {
            let mut sum = 0u64;
            for (path, _) in &listing {
                let text = std::fs::read_to_string(PathBuf::from(&dir).join(path))
                    .expect("listed files are text");
                sum += counter
                    .count(&text, Some(&model_name))
                    .expect("counts")
                    .token_count as u64;
            }
            assert_eq!(sum, total_tokens);
        }));
    }

    // Every file's count against tiktoken-rs (the reference implementation).
    let reference = match tokenizer.name() {
        "cl100k_base" => tiktoken_rs::cl100k_base(),
        _ => tiktoken_rs::o200k_base(),
    }
    .expect("tiktoken-rs vocabulary");
    let identical = listing
        .iter()
        .filter(|(path, tokens)| {
            let text = std::fs::read_to_string(PathBuf::from(&dir).join(path)).unwrap_or_default();
            reference.encode_ordinary(&text).len() as u64 == *tokens
        })
        .count();

    let (cold, warm, packed, packed_budget, looped) = (
        crate::median(&cold),
        crate::median(&warm),
        crate::median(&packed),
        crate::median(&packed_budget),
        crate::median(&looped),
    );
    println!("| operation | median ms | vs the loop |");
    println!("|---|---:|---:|");
    println!("| count-tokens loop, one file at a time (read, count, next) | {looped:.0} | 1.0× |");
    println!(
        "| file-tokens, cold (new cache) | {cold:.0} | {:.1}× |",
        looped / cold
    );
    println!(
        "| file-tokens, warm (unchanged files) | {warm:.0} | {:.1}× |",
        looped / warm
    );
    println!(
        "| load-files, everything ({packed_tokens} tokens, xml) | {packed:.0} | {:.1}× |",
        looped / packed
    );
    println!(
        "| load-files, default {model_name} budget, smallest first ({budget_tokens} tokens) | {packed_budget:.0} | {:.1}× |",
        looped / packed_budget
    );
    println!();
    println!("files={}", listing.len());
    println!("tokens={total_tokens}");
    println!("identical={identical}");
    println!("loop_ms={looped:.1}");
    println!("cold_ms={cold:.1}");
    println!("warm_ms={warm:.1}");
    println!("pack_ms={packed:.1}");
    println!("pack_budget_ms={packed_budget:.1}");
}

/// Every measured file with its tokens.
fn store_listing(
    store: &FileStore,
    roots: &Roots,
    model: &context_budget::ResolvedModel<'_>,
) -> Vec<(String, u64)> {
    store
        .file_tokens(
            roots,
            &FileQuery::default(),
            model,
            FileSort::Path,
            None,
            &Unobserved,
        )
        .expect("file_tokens")
        .files
        .into_iter()
        .map(|f| (f.path, f.tokens))
        .collect()
}

fn ms(f: impl FnOnce()) -> f64 {
    let (started, cpu) = (Instant::now(), cpu_ms());
    f();
    let wall = started.elapsed().as_secs_f64() * 1e3;
    if std::env::var_os("FILES_BENCH_CPU").is_some() {
        eprintln!("wall {wall:.0} ms, cpu {:.0} ms", cpu_ms() - cpu);
    }
    wall
}

/// User + system CPU time of the process so far.
fn cpu_ms() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}
