//! The engine's benchmarks, one binary: `engine_bench MODE ARGS...`, where MODE is
//! one of the modules below (each documents its own arguments and output), run by
//! `cargo xtask bench`. They were five examples; each linked the embedded
//! vocabularies and models again (~115 MB per debug binary, ~0.5 GB and four more
//! links in every ci run for the same data).

mod count_throughput;
mod family_throughput;
mod files_bench;
mod fit_messages_bench;
mod spec_scan;

use std::ffi::OsString;

/// A mode's name and entry point; it parses the arguments after MODE.
type Mode = (&'static str, fn(Vec<OsString>));

const MODES: [Mode; 5] = [
    ("count_throughput", count_throughput::run),
    ("family_throughput", family_throughput::run),
    ("files_bench", files_bench::run),
    ("fit_messages_bench", fit_messages_bench::run),
    ("spec_scan", spec_scan::run),
];

/// The middle of `values` once sorted (the upper one of an even count); NaN for none.
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// This process's resident memory (VmRSS), in KiB; 0 where /proc says nothing.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    let mode = args.next().unwrap_or_default();
    let Some((name, run)) = MODES.iter().find(|(name, _)| mode == **name) else {
        let names: Vec<&str> = MODES.iter().map(|(name, _)| *name).collect();
        eprintln!(
            "usage: engine_bench MODE [ARGS...], MODE one of: {} (got {:?})",
            names.join(", "),
            mode
        );
        std::process::exit(2);
    };
    // The mode's parser names itself `engine_bench MODE` in its usage and errors.
    let program = OsString::from(format!("engine_bench {name}"));
    run(std::iter::once(program).chain(args).collect());
}
