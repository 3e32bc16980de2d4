//! Row 2d and 2e: the first answer, whole process. A hook or a script runs
//! `context-loader count` once per text, so what it waits for is the process: start,
//! the vocabulary, one short count, exit. The baseline is the smallest program that
//! answers the same with tiktoken-rs (`tiktoken_rs_count`, an example of
//! context-budget), for o200k_base, timed the same way in the same run.
//!
//! 2d: `count --model M "hello world"` per built-in family. 2e: a stdio server's
//! first count after start (spawn → initialize → count-tokens reply, sent at once).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};

use super::{Bench, median, table};

/// The text every first answer counts.
const TEXT: &str = "hello world";

/// The goals (issue 21): ≥ 5× the minimal tiktoken-rs program, ≤ 15 ms.
const MIN_RATIO: f64 = 5.0;
const MAX_MS: f64 = 15.0;

/// (what, model, expected count of [`TEXT`]) per built-in family.
const FAMILIES: [(&str, &str, &str); 5] = [
    ("cl100k_base (gpt-4)", "gpt-4", "2"),
    ("o200k_base (gpt-4o)", "gpt-4o", "2"),
    (
        "Claude ≤4.6 estimate (claude-sonnet-4-5)",
        "claude-sonnet-4-5",
        "3",
    ),
    (
        "Claude 4.7+ estimate (claude-opus-4-7)",
        "claude-opus-4-7",
        "4",
    ),
    ("gemma3 (gemini-2.5-pro)", "gemini-2.5-pro", "2"),
];

/// Milliseconds from spawn to exit of `command`, which must succeed and print
/// `expect` as the first whitespace-separated word of its output.
fn whole_process_ms(command: &mut Command, expect: &str) -> anyhow::Result<f64> {
    let start = Instant::now();
    let output = command
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {:?}", command.get_program()))?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() || stdout.split_whitespace().next() != Some(expect) {
        bail!(
            "{:?} {:?}: expected {expect}, got {stdout:?} {}",
            command.get_program(),
            command.get_args().collect::<Vec<_>>(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(ms)
}

fn reference(bench: &Bench) -> Command {
    let mut command = Command::new(bench.artifact("examples/tiktoken_rs_count"));
    command.args(["o200k_base", TEXT]);
    command
}

/// Where a first answer's time went before and after issue 21, from `perf record`
/// of the release binary on this machine (a profile, so it is stated, not re-run).
const WHERE_THE_TIME_WENT: &str = "\
**Where the time went.** `perf record` of `count --model gpt-4o \"hello world\"` \
(release, commit 6324fb9, before): 89 ms of CPU, 66 % of it in malloc, free, memmove and \
hash-map inserts (tiktoken decompressed o200k_base, put its 200k tokens in a hash map of \
owned keys, then copied them into its lookup tables), 22 % in page faults on those fresh \
allocations, 8 % in zstd, 2 % compiling the pre-tokenizer's regex; gpt-4 (cl100k_base) the \
same at half the size (43 ms). claude-opus-4-7 took 160 ms: its weight table loaded both \
vocabularies and decoded all 300k tokens into vectors, for two tokens. After: the \
vocabularies' tables are built by vendor/tiktoken/build.rs and read in place from the \
binary (a count touches a few pages of them), the regexes compile when a piece first \
needs them (an intermediate build still compiled o200k's Unicode regex, 40 % of a 10 ms \
profile, because the pre-tokenizer asked the regex for a piece at the end of the text), \
and a short text weighs its tokens directly. A whole `count` is now ~3.5 ms of CPU: half \
kernel (exec, mapping an 80 MB binary, page faults), 15 % the dynamic loader's \
relocations, 15 % libc, 20 % our code (argument parsing, catalog, the count).";

/// 2d: `count` of a short text per family, a fresh process each time.
pub fn whole_process(bench: &mut Bench) -> anyhow::Result<String> {
    let launches = bench.size(31, 2);
    let binary = bench.artifact("context-loader");
    let mut reference_ms = Vec::new();
    let mut ours_ms = vec![Vec::new(); FAMILIES.len()];
    // One untimed launch of each (page cache), then alternating launches.
    for launch in 0..=launches {
        let r = whole_process_ms(&mut reference(bench), "2")?;
        let mut ours = Vec::new();
        for (_, model, expect) in FAMILIES {
            let mut command = Command::new(&binary);
            command.args(["count", "--model", model, TEXT]);
            ours.push(whole_process_ms(&mut command, expect)?);
        }
        if launch > 0 {
            reference_ms.push(r);
            for (times, ms) in ours_ms.iter_mut().zip(ours) {
                times.push(ms);
            }
        }
    }
    let reference = median(&reference_ms);
    let fastest = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let mut rows = vec![vec![
        "tiktoken-rs, minimal program (o200k_base)".to_string(),
        format!("{reference:.1}"),
        format!("{:.1}", fastest(&reference_ms)),
        "1.0×".to_string(),
    ]];
    for ((what, model, _), times) in FAMILIES.iter().zip(&ours_ms) {
        let ms = median(times);
        let ratio = reference / ms;
        rows.push(vec![
            format!("context-loader count, {what}"),
            format!("{ms:.1}"),
            format!("{:.1}", fastest(times)),
            format!("{ratio:.1}×"),
        ]);
        if !bench.quick {
            bench.check(
                &format!(
                    "first answer, whole process, {model}: ≥ {MIN_RATIO:.0}× the minimal \
                     tiktoken-rs program, ≤ {MAX_MS:.0} ms"
                ),
                format!("{ms:.1} ms vs {reference:.1} ms: {ratio:.1}×"),
                ratio >= MIN_RATIO && ms <= MAX_MS,
            );
        }
    }
    Ok(format!(
        "## 2d. First answer, whole process: `count` of a short text (ms)\n\n\
         `context-loader count --model M \"{TEXT}\"` against the smallest tiktoken-rs \
         program that prints the same count (`tiktoken_rs_count o200k_base`, load the \
         encoding, count, print): spawn to exit, each a fresh process, stdout checked. \
         Median and fastest of {launches} alternating launches after one untimed launch \
         of each; the ratio is tiktoken-rs's median over ours.\n\n{}\n{WHERE_THE_TIME_WENT}\n",
        table(&["process", "median", "fastest", "× faster"], &rows)
    ))
}

/// 2e: a stdio server's first count after start, everything sent at once.
pub fn server_first_count(bench: &mut Bench) -> anyhow::Result<String> {
    let launches = bench.size(21, 2);
    let binary = bench.artifact("context-loader");
    let models = [
        ("gpt-4o", "\"token_count\":2"),
        ("claude", "\"token_count\":4"),
    ];
    let mut reference_ms = Vec::new();
    let mut ours_ms = vec![Vec::new(); models.len()];
    for launch in 0..=launches {
        let r = whole_process_ms(&mut reference(bench), "2")?;
        let mut ours = Vec::new();
        for (model, expect) in models {
            ours.push(spawn_to_first_count(&binary, model, expect)?);
        }
        if launch > 0 {
            reference_ms.push(r);
            for (times, ms) in ours_ms.iter_mut().zip(ours) {
                times.push(ms);
            }
        }
    }
    let reference = median(&reference_ms);
    let mut rows = vec![vec![
        "tiktoken-rs, minimal program (o200k_base), whole process".to_string(),
        format!("{reference:.1}"),
        "1.0×".to_string(),
    ]];
    for ((model, _), times) in models.iter().zip(&ours_ms) {
        let ms = median(times);
        let ratio = reference / ms;
        rows.push(vec![
            format!("context-loader stdio, spawn → first count-tokens reply, {model}"),
            format!("{ms:.1}"),
            format!("{ratio:.1}×"),
        ]);
        if !bench.quick {
            bench.check(
                &format!(
                    "server's first count after start, {model}: ≥ {MIN_RATIO:.0}× the \
                     minimal tiktoken-rs program, ≤ {MAX_MS:.0} ms"
                ),
                format!("{ms:.1} ms vs {reference:.1} ms: {ratio:.1}×"),
                ratio >= MIN_RATIO && ms <= MAX_MS,
            );
        }
    }
    Ok(format!(
        "## 2e. The server's first count after start (ms)\n\n\
         A stdio server is spawned and sent `initialize`, `initialized` and a \
         count-tokens of \"{TEXT}\" at once (default flags, so its background warm-up \
         runs too); the time is spawn to the count's reply. Baseline: the minimal \
         tiktoken-rs program of 2d, spawn to exit. Medians of {launches} alternating \
         launches after one untimed launch.\n\n{}",
        table(&["what", "median ms", "× faster"], &rows)
    ))
}

/// Spawn `binary stdio`, send initialize + initialized + one count at once;
/// milliseconds from spawn to the count's reply.
fn spawn_to_first_count(
    binary: &std::path::Path,
    model: &str,
    expect: &str,
) -> anyhow::Result<f64> {
    let start = Instant::now();
    let mut child = Command::new(binary)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("no stdout")?);
    let measured = (|| {
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"xtask-bench","version":"0"}}}}}}
{{"jsonrpc":"2.0","method":"notifications/initialized"}}
{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"count-tokens","arguments":{{"text":"{TEXT}","model":"{model}"}}}}}}"#
        )?;
        let mut line = String::new();
        loop {
            line.clear();
            if stdout.read_line(&mut line)? == 0 {
                bail!("the server closed stdout before answering the count");
            }
            if line.contains("\"id\":2") {
                break;
            }
        }
        let ms = start.elapsed().as_secs_f64() * 1e3;
        if !line.contains(expect) {
            bail!("unexpected count-tokens reply for {model}: {line}");
        }
        Ok(ms)
    })();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    measured
}
