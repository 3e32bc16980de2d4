//! Counting speed, first-count latency and memory of one non-OpenAI tokenizer family,
//! in a fresh process (so memory is that vocabulary's alone). Run by `cargo xtask
//! bench`, which runs the Python reference on the same text and prints the ratios.
//!
//! ```text
//! engine_bench family_throughput FAMILY TEXT [--refs DIR] [--seconds S]
//!   FAMILY: gemma3 | llama-3.1 | qwen3 | deepseek-v3 (tokenizer.json from DIR)
//!   prints: row tokenizer=… first_count_s=… rss_kib=… one_thread_mbps=… two_threads_mbps=… tokens=…
//! ```
//!
//! `first_count_s` is the first count of a short text, vocabulary load included (the
//! lazy load a first caller pays). Two threads: two long-lived callers each count one
//! half of the text at the same time; MB/s is the total over the wall time.

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use context_budget::{HuggingFaceTokenizer, Tokenizer};

/// Counting speed, first-count latency and memory of one tokenizer family.
#[derive(Parser)]
struct Cli {
    /// gemma3 (embedded), or a name whose NAME.tokenizer.json is in --refs (llama-3.1,
    /// qwen3, deepseek-v3).
    family: String,
    /// The text to count.
    text: PathBuf,
    /// Where `cargo xtask tokenizer-refs` put the tokenizer.json files.
    #[arg(long, default_value = "target/xtask/tokenizer-refs")]
    refs: PathBuf,
    /// About how long each rate is measured (at least 3 runs).
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
}

pub fn run(args: Vec<std::ffi::OsString>) {
    let Cli {
        family,
        text: text_path,
        refs,
        seconds,
    } = Cli::parse_from(args);
    let text = std::fs::read_to_string(&text_path).unwrap_or_else(|e| {
        eprintln!("{}: {e}", text_path.display());
        std::process::exit(2);
    });

    let rss_before = crate::rss_kib();
    let started = Instant::now();
    let count: Box<dyn Fn(&str) -> usize + Sync> = match family.as_str() {
        "gemma3" => Box::new(|t: &str| Tokenizer::Gemma3.count(t)),
        name => {
            let path = refs.join(format!("{name}.tokenizer.json"));
            let tokenizer = HuggingFaceTokenizer::from_file(&path).unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(2);
            });
            Box::new(move |t: &str| tokenizer.count(t))
        }
    };
    count("hello world");
    let first_count = started.elapsed().as_secs_f64();
    let rss = crate::rss_kib().saturating_sub(rss_before);

    let tokens = count(&text);
    let text: &'static str = Box::leak(text.into_boxed_str());
    let count: &'static (dyn Fn(&str) -> usize + Sync) = Box::leak(count);
    let cut = text[..text.len() / 2].rfind('\n').map_or(0, |i| i + 1);
    let (left, right) = text.split_at(cut);
    let one = median_rate(text.len(), seconds, || {
        std::hint::black_box(count(text));
    });
    // A second long-lived caller, as a server's worker threads are (per-thread caches
    // stay warm between calls).
    let (work, jobs) = std::sync::mpsc::channel::<&'static str>();
    let (done, results) = std::sync::mpsc::channel::<usize>();
    std::thread::spawn(move || {
        for job in jobs {
            let _ = done.send(count(job));
        }
    });
    let two = median_rate(text.len(), seconds, || {
        let _ = work.send(left);
        let b = count(right);
        std::hint::black_box(results.recv().unwrap_or(0) + b);
    });
    println!(
        "row tokenizer={family} first_count_s={first_count:.4} rss_kib={rss} \
         one_thread_mbps={one:.2} two_threads_mbps={two:.2} tokens={tokens}"
    );
}

/// Median MB/s of repeated runs for about `seconds` (at least 3), after a warm-up.
fn median_rate(bytes: usize, seconds: f64, mut run: impl FnMut()) -> f64 {
    run();
    let deadline = Instant::now();
    let mut rates = Vec::new();
    while deadline.elapsed().as_secs_f64() < seconds || rates.len() < 3 {
        let started = Instant::now();
        run();
        rates.push(bytes as f64 / started.elapsed().as_secs_f64() / 1e6);
    }
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}
