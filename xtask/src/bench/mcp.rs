//! Rows 3 and 4: MCP round trips, ours vs the TypeScript SDK peer, measured by the
//! same load generator (example `mcp_load`) with the same ~1 KB English texts.
//!
//! 3. stdio: rmcp's client, sequential `count-tokens` calls (10,000 per round).
//! 4. streamable HTTP, stateless: concurrent clients for a fixed time per round.

use std::process::Command;

use super::{Bench, median, ratio, table};
use crate::load_generator::{self, LoadFigures};
use crate::spawned::HttpServer;

pub fn stdio_round_trips(bench: &mut Bench) -> anyhow::Result<String> {
    let calls = bench.size(10_000, 200);
    let warmup = bench.size(500, 20);
    let rounds = bench.size(3, 1);
    let ours_command = vec![
        bench.artifact("context-loader").display().to_string(),
        "stdio".to_string(),
    ];
    let peer_command = bench.peer()?.command_line(&["stdio"]);
    let args = |command: &[String]| {
        let mut args: Vec<String> = [
            "stdio",
            "--calls",
            &calls.to_string(),
            "--warmup-calls",
            &warmup.to_string(),
            "--corpus",
            &bench.corpora.english.display().to_string(),
            "--",
        ]
        .map(str::to_string)
        .to_vec();
        args.extend_from_slice(command);
        args
    };
    let (mut ours, mut peer) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        ours.push(checked(bench, "ours", &args(&ours_command))?);
        peer.push(checked(bench, "TS SDK peer", &args(&peer_command))?);
    }
    Ok(format!(
        "## 3. MCP round trip over stdio: ours vs the TypeScript SDK peer\n\n\
         rmcp's client, {calls} sequential `count-tokens` calls on ~1 KB of English (gpt-4o)\n\
         per round after {warmup} warm-up calls; median of {rounds} alternating rounds.\n\n{}",
        comparison(&ours, &peer)
    ))
}

pub fn http_stateless(bench: &mut Bench) -> anyhow::Result<String> {
    let clients = 16;
    let (warmup, seconds, rounds) = bench.size((2.0, 8.0, 3), (0.5, 1.0, 1));
    let mut ours_command = Command::new(bench.artifact("context-loader"));
    ours_command.args(["http", "--stateless", "--bind", "127.0.0.1:0"]);
    let ours_server = HttpServer::start(ours_command)?;
    let peer_server = HttpServer::start(bench.peer()?.command(&["http", "--port", "0"]))?;
    let args = |url: &str| {
        [
            "http",
            "--url",
            url,
            "--clients",
            &clients.to_string(),
            "--warmup",
            &warmup.to_string(),
            "--seconds",
            &seconds.to_string(),
            "--corpus",
            &bench.corpora.english.display().to_string(),
        ]
        .map(str::to_string)
    };
    // Prime both (the peer builds its encoder on first use, which takes seconds), so no
    // round's warm-up is cut short by a one-off stall.
    for server in [&ours_server, &peer_server] {
        let prime = [
            "http",
            "--url",
            &server.url,
            "--clients",
            "1",
            "--warmup",
            "0",
        ]
        .into_iter()
        .chain(["--seconds", "60", "--calls", "20"])
        .map(str::to_string)
        .collect::<Vec<_>>();
        checked(bench, "priming", &prime)?;
    }
    let (mut ours, mut peer) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        ours.push(checked(bench, "ours", &args(&ours_server.url))?);
        peer.push(checked(bench, "TS SDK peer", &args(&peer_server.url))?);
    }
    let rss = |server: &HttpServer| server.rss_kib().map(|kib| kib as f64 / 1024.0);
    let (ours_rss, peer_rss) = (rss(&ours_server)?, rss(&peer_server)?);
    ours_server.stop()?;
    peer_server.stop()?;

    let ours_rate = median(&ours.iter().map(|f| f.calls_per_s).collect::<Vec<_>>());
    let peer_rate = median(&peer.iter().map(|f| f.calls_per_s).collect::<Vec<_>>());
    let x = ratio(ours_rate, peer_rate, true);
    bench.check(
        "streamable HTTP (stateless) throughput ≥ 5× the TypeScript SDK peer",
        format!("{x:.1}× ({ours_rate:.0} vs {peer_rate:.0} calls/s)"),
        x >= 5.0,
    );
    let mut markdown = comparison(&ours, &peer);
    markdown.push_str(&format!(
        "| server RSS after the runs (MiB) | {ours_rss:.1} | {peer_rss:.1} | {:.1}× |\n",
        ratio(ours_rss, peer_rss, false)
    ));
    Ok(format!(
        "## 4. MCP over streamable HTTP, stateless: ours vs the TypeScript SDK peer\n\n\
         {clients} concurrent clients (each its own keep-alive connection: initialize, then\n\
         `count-tokens` calls back to back on ~1 KB of English, gpt-4o), {warmup} s warm-up\n\
         then {seconds} s measured per round; median of {rounds} alternating rounds. Both\n\
         servers run at once on loopback; only one is loaded at a time.\n\n{markdown}"
    ))
}

/// Run the load generator; any failed or wrong reply fails the benchmark.
fn checked(bench: &Bench, who: &str, args: &[String]) -> anyhow::Result<LoadFigures> {
    load_generator::run(&bench.artifact("examples/mcp_load"), who, args)
}

/// calls/s, p50 and p99: medians over rounds, ours vs peer.
fn comparison(ours: &[LoadFigures], peer: &[LoadFigures]) -> String {
    let pick = |figures: &[LoadFigures], f: fn(&LoadFigures) -> f64| {
        median(&figures.iter().map(f).collect::<Vec<_>>())
    };
    let row = |what: &str, f: fn(&LoadFigures) -> f64, higher_is_better: bool, digits: usize| {
        let (o, p) = (pick(ours, f), pick(peer, f));
        vec![
            what.to_string(),
            format!("{o:.digits$}"),
            format!("{p:.digits$}"),
            format!("{:.1}×", ratio(o, p, higher_is_better)),
        ]
    };
    table(
        &["what", "ours", "TS SDK peer", "ratio"],
        &[
            row("calls/s", |f| f.calls_per_s, true, 0),
            row("latency p50 (ms)", |f| f.p50_ms, false, 3),
            row("latency p99 (ms)", |f| f.p99_ms, false, 3),
        ],
    )
}
