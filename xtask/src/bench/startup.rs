//! Row 2: encoder load time and memory (ours vs tiktoken-rs, fresh processes), and
//! cold start over stdio (ours vs the TypeScript SDK peer): spawn → `initialize`
//! reply, and spawn → first `count-tokens` reply (which includes loading a vocabulary).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::{Bench, median, ratio, table};
use crate::load_generator::key_values;

pub fn encoder_load(bench: &mut Bench) -> anyhow::Result<String> {
    let launches = bench.size(8, 2);
    let (mut ours_ms, mut reference_ms, mut ours_rss, mut reference_rss) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for launch in 0..launches {
        // Alternate which library loads first, so neither always pays for cold pages.
        let mut command = bench.engine_bench("count_throughput");
        command.arg("load");
        if launch % 2 == 1 {
            command.arg("--reference-first");
        }
        let output = command
            .output()
            .context("cannot run count_throughput load")?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let Some(line) = stdout.lines().find(|l| l.starts_with("load ")) else {
            bail!(
                "count_throughput load printed nothing: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        };
        let values = key_values(line);
        let get = |key: &str| values.get(key).copied().unwrap_or(f64::NAN);
        ours_ms.push(get("ours_ms"));
        reference_ms.push(get("reference_ms"));
        ours_rss.push(get("ours_rss_kib") / 1024.0);
        reference_rss.push(get("reference_rss_kib") / 1024.0);
    }
    let row = |what: &str, ours: &[f64], reference: &[f64]| {
        let (o, r) = (median(ours), median(reference));
        vec![
            what.to_string(),
            format!("{o:.1}"),
            format!("{r:.1}"),
            format!("{:.1}×", ratio(o, r, false)),
        ]
    };
    Ok(format!(
        "## 2a. Encoder load: ours vs tiktoken-rs (cl100k_base + o200k_base, fresh process)\n\n\
         Median of {launches} launches, alternating which library loads first.\n\n{}",
        table(
            &["what", "ours", "tiktoken-rs", "ratio"],
            &[
                row("load both encodings (ms)", &ours_ms, &reference_ms),
                row(
                    "RSS growth with both loaded (MiB)",
                    &ours_rss,
                    &reference_rss
                ),
            ]
        )
    ))
}

pub fn cold_start(bench: &mut Bench) -> anyhow::Result<String> {
    let launches = bench.size(20, 2);
    let ours_binary = bench.artifact("context-loader");
    let peer = bench.peer()?;
    let (mut ours_init, mut ours_count, mut peer_init, mut peer_count) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // A warm-up launch of each (page cache), then alternating launches.
    for launch in 0..=launches {
        let mut ours = Command::new(&ours_binary);
        ours.arg("stdio");
        let (init, count) = spawn_to_replies(ours)?;
        let (peer_i, peer_c) = spawn_to_replies(peer.command(&["stdio"]))?;
        if launch > 0 {
            ours_init.push(init);
            ours_count.push(count);
            peer_init.push(peer_i);
            peer_count.push(peer_c);
        }
    }
    let ours_init_median = median(&ours_init);
    bench.check(
        "cold start to the first initialize reply over stdio ≤ 20 ms",
        format!("{ours_init_median:.1} ms (median of {launches})"),
        ours_init_median <= 20.0,
    );
    let row = |what: &str, ours: &[f64], peer: &[f64]| {
        let (o, p) = (median(ours), median(peer));
        vec![
            what.to_string(),
            format!("{o:.1}"),
            format!("{p:.1}"),
            format!("{:.1}×", ratio(o, p, false)),
        ]
    };
    Ok(format!(
        "## 2b. Cold start over stdio: ours vs the TypeScript SDK peer (ms)\n\n\
         Median of {launches} alternating launches after one warm-up launch of each.\n\n{}",
        table(
            &["what", "ours", "TS SDK peer", "ratio"],
            &[
                row("spawn → initialize reply", &ours_init, &peer_init),
                row(
                    "spawn → first count-tokens reply (gpt-4o, incl. vocabulary load)",
                    &ours_count,
                    &peer_count
                ),
            ]
        )
    ))
}

/// How long after `initialize` the first count is sent in [`first_count`]: an agent
/// calls a tool only after its model has read the tool list, which takes longer.
const FIRST_CALL_AFTER: Duration = Duration::from_millis(300);

/// Row 2c: the first count-tokens a client sends some time after start, with the
/// background warm-up (the default) and without it (`--no-warm-up`), same run.
pub fn first_count(bench: &mut Bench) -> anyhow::Result<String> {
    let launches = bench.size(10, 2);
    let binary = bench.artifact("context-loader");
    let (mut warm, mut cold) = (Vec::new(), Vec::new());
    // One warm-up launch (page cache), then alternating variants.
    for launch in 0..=launches {
        let mut warmed = Command::new(&binary);
        warmed.arg("stdio");
        let mut unwarmed = Command::new(&binary);
        unwarmed.args(["--no-warm-up", "stdio"]);
        let w = first_counts_after_start(warmed)?;
        let c = first_counts_after_start(unwarmed)?;
        if launch > 0 {
            warm.push(w);
            cold.push(c);
        }
    }
    let column = |runs: &[[f64; 2]], i: usize| runs.iter().map(|r| r[i]).collect::<Vec<_>>();
    let rows: Vec<Vec<String>> = ["gpt-4o (o200k_base)", "claude (4.7+ estimate)"]
        .iter()
        .enumerate()
        .map(|(i, what)| {
            let (w, c) = (median(&column(&warm, i)), median(&column(&cold, i)));
            vec![
                format!("first count-tokens, {what}"),
                format!("{w:.2}"),
                format!("{c:.2}"),
                format!("{:.0}×", ratio(w, c, false)),
            ]
        })
        .collect();
    Ok(format!(
        "## 2c. First count after start, warmed vs not (ms, request → reply)\n\n\
         A stdio server is started, initialized, and {} ms later sent its first \
         count-tokens (gpt-4o), then one for claude; warmed is the default (encoders \
         loaded on a background thread at start), not warmed is `--no-warm-up` (loaded \
         by the first count). Median of {launches} alternating launches after one \
         warm-up launch.\n\n{}",
        FIRST_CALL_AFTER.as_millis(),
        table(&["what", "warmed", "not warmed", "ratio"], &rows)
    ))
}

/// Start a stdio server, initialize it, wait [`FIRST_CALL_AFTER`], then time the
/// first gpt-4o count and the first claude count (ms each, request to reply).
fn first_counts_after_start(mut command: Command) -> anyhow::Result<[f64; 2]> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {:?}", command.get_program()))?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("no stdout")?);
    let mut exchange = |request: &str, expect: &str| -> anyhow::Result<f64> {
        let start = Instant::now();
        writeln!(stdin, "{request}")?;
        let mut line = String::new();
        stdout.read_line(&mut line)?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        if !line.contains(expect) {
            bail!("unexpected reply to {request}: {line}");
        }
        Ok(ms)
    };
    let measured = (|| {
        exchange(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"xtask-bench","version":"0"}}}"#,
            "\"serverInfo\"",
        )?;
        std::thread::sleep(FIRST_CALL_AFTER);
        let gpt = exchange(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count-tokens","arguments":{"text":"Cold start: how long until the first count?","model":"gpt-4o"}}}"#,
            "\"token_count\":10",
        )?;
        let claude = exchange(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count-tokens","arguments":{"text":"Cold start: how long until the first count?","model":"claude"}}}"#,
            "\"claude_4_7_estimate\"",
        )?;
        Ok([gpt, claude])
    })();
    let _ = child.kill();
    let _ = child.wait();
    measured
}

/// Spawn a stdio server; milliseconds to the initialize reply and to the first count.
fn spawn_to_replies(mut command: Command) -> anyhow::Result<(f64, f64)> {
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"xtask-bench","version":"0"}}}"#;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let count = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count-tokens","arguments":{"text":"Cold start: how long until the first count?","model":"gpt-4o"}}}"#;
    let start = Instant::now();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {:?}", command.get_program()))?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("no stdout")?);
    let mut line = String::new();
    writeln!(stdin, "{initialize}")?;
    stdout.read_line(&mut line)?;
    let init_ms = start.elapsed().as_secs_f64() * 1e3;
    if !line.contains("\"serverInfo\"") {
        let _ = child.kill();
        bail!("unexpected initialize reply: {line}");
    }
    writeln!(stdin, "{initialized}\n{count}")?;
    line.clear();
    stdout.read_line(&mut line)?;
    let count_ms = start.elapsed().as_secs_f64() * 1e3;
    // o200k_base: 10 tokens, in structuredContent.
    if !line.contains("\"token_count\":10") {
        let _ = child.kill();
        bail!("unexpected count-tokens reply: {line}");
    }
    // Closing stdin ends a stdio server; kill it if it lingers.
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.try_wait()?.is_none() {
        if Instant::now() > deadline {
            child.kill()?;
            child.wait()?;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok((init_ms, count_ms))
}
