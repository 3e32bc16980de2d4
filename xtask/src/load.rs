//! `cargo xtask load [--seconds N] [--clients N] [--smoke]`: a bounded load test of the
//! stateless HTTP server on loopback. Concurrent MCP clients (example `mcp_load`) call
//! `count-tokens` on ~1 KB texts for N seconds (default 60), every reply checked.
//! Fails on any error, on memory growth beyond noise, or if the server does not shut
//! down cleanly on SIGTERM afterwards. `--smoke` (in `cargo xtask ci`): dev build, a
//! few seconds, same checks except memory (a few seconds of a debug build says nothing
//! about leaks).

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::bail;

use crate::load_generator::{self, LoadFigures};
use crate::spawned::HttpServer;

/// Allowed RSS growth from the end of warm-up to the end of the run.
///
/// Why this much: after warm-up the server's working set is in place (vocabularies,
/// runtime, one buffer set per connection, glibc's per-thread arenas), so what remains
/// is allocator noise — arenas trimming and refilling — not a trend; measured here:
/// +0.5 to +0.7 MiB over 60 s runs of 475k–630k calls. A real leak scales with calls:
/// at those volumes 16 MiB is 25–35 bytes per call, less than one request's JSON, so
/// any per-request leak fails the run, while a machine with noisier arenas does not.
const RSS_GROWTH_LIMIT_KIB: u64 = 16 * 1024;

/// `cargo xtask load` flags.
#[derive(Debug, clap::Args)]
pub struct LoadArgs {
    /// Seconds of measured traffic [default: 60, or 3 with --smoke].
    #[arg(long)]
    seconds: Option<f64>,
    /// Concurrent MCP clients [default: 16, or 8 with --smoke].
    #[arg(long)]
    clients: Option<usize>,
    /// Dev build, a few seconds, no memory check (what `cargo xtask ci` runs).
    #[arg(long)]
    smoke: bool,
}

impl LoadArgs {
    pub fn smoke() -> Self {
        LoadArgs {
            seconds: None,
            clients: None,
            smoke: true,
        }
    }
}

pub fn run(args: &LoadArgs) -> anyhow::Result<()> {
    let smoke = args.smoke;
    let seconds = args.seconds.unwrap_or(if smoke { 3.0 } else { 60.0 });
    let clients = args.clients.unwrap_or(if smoke { 8 } else { 16 });
    let warmup = if smoke { 1.0 } else { 5.0 };

    let profile_dir = crate::bench::build(!smoke)?;
    let target = crate::target_dir().join(profile_dir);
    let generator = target.join("examples/mcp_load");

    let mut command = Command::new(target.join("context-loader"));
    command.args(["http", "--stateless", "--bind", "127.0.0.1:0"]);
    let server = HttpServer::start(command)?;
    eprintln!(
        "load: {} server at {} (pid {}), {clients} clients, {warmup} s warm-up + {seconds} s",
        profile_dir,
        server.url,
        server.pid()
    );
    // The vocabularies load on a background thread at start-up; let that finish.
    std::thread::sleep(Duration::from_secs(1));
    let rss_idle = server.rss_kib()?;

    let traffic = |seconds: f64| -> anyhow::Result<LoadFigures> {
        let args = [
            "http",
            "--url",
            &server.url,
            "--clients",
            &clients.to_string(),
            "--warmup",
            "0",
            "--seconds",
            &seconds.to_string(),
        ]
        .map(str::to_string);
        load_generator::run(&generator, "load", &args)
    };
    let warm = traffic(warmup)?;
    let rss_before = server.rss_kib()?;

    // Sample RSS while the main run goes, for the peak.
    let peak = Arc::new(AtomicU64::new(rss_before));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done, pid) = (peak.clone(), done.clone(), server.pid());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if let Ok(rss) = crate::spawned::rss_kib(pid) {
                    peak.fetch_max(rss, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(250));
            }
        })
    };
    let run = traffic(seconds);
    done.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let run = run?;
    let rss_after = server.rss_kib()?;
    let exit = server.stop()?;

    let mib = |kib: u64| kib as f64 / 1024.0;
    let growth = rss_after.saturating_sub(rss_before);
    println!(
        "\n## Load test ({profile_dir} build, stateless HTTP on loopback)\n\n\
         | what | value |\n|---|---:|\n\
         | clients | {clients} |\n\
         | warm-up | {warmup} s, {:.0} calls, 0 errors |\n\
         | measured | {:.1} s, {:.0} calls, {:.0} errors |\n\
         | requests/s | {:.0} |\n\
         | latency p50 / p99 (ms) | {:.2} / {:.2} |\n\
         | RSS idle / after warm-up / peak / after (MiB) | {:.1} / {:.1} / {:.1} / {:.1} |\n\
         | RSS growth during the measured run (MiB) | {:.1} (limit {:.0}{}) |\n\
         | exit after SIGTERM | {exit} |\n",
        warm.calls,
        run.seconds,
        run.calls,
        run.errors,
        run.calls_per_s,
        run.p50_ms,
        run.p99_ms,
        mib(rss_idle),
        mib(rss_before),
        mib(peak.load(Ordering::Relaxed)),
        mib(rss_after),
        mib(growth),
        mib(RSS_GROWTH_LIMIT_KIB),
        if smoke {
            ", not checked in --smoke"
        } else {
            ""
        },
    );
    if !exit.success() {
        bail!("load: the server exited with {exit} after SIGTERM");
    }
    if !smoke && growth > RSS_GROWTH_LIMIT_KIB {
        bail!(
            "load: RSS grew {:.1} MiB during the run (limit {:.0} MiB): a leak?",
            mib(growth),
            mib(RSS_GROWTH_LIMIT_KIB)
        );
    }
    eprintln!("load: passed");
    Ok(())
}
