//! `cargo xtask bench [--quick]`: measured figures, always as ratios against a
//! baseline run in the same process or the same run, medians of alternating rounds.
//!
//! 1. Counting throughput and encoder load: ours vs tiktoken-rs (example
//!    `count_throughput` of context-budget), English and Korean, both encodings.
//! 2. Cold start of the release binary over stdio: time to the `initialize` reply,
//!    and to the first `count-tokens` reply (which includes the lazy encoder load).
//!
//! Corpora are real text already on the machine: English from the Markdown
//! documentation of the crates in cargo's registry (this build downloaded them), and
//! Korean from the gettext catalogs under /usr/share/locale/ko (translations shipped
//! by Debian packages). Their sizes are printed with the results.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};

use crate::{cargo, workspace_root};

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let quick = args.iter().any(|a| a == "--quick");
    let (corpus_bytes, rounds, starts) = if quick {
        (1 << 20, "1", 5)
    } else {
        (6 << 20, "7", 30)
    };
    let out_dir = workspace_root().join("target/bench");
    std::fs::create_dir_all(&out_dir)?;

    let mut corpora = Vec::new();
    let english = english_corpus(corpus_bytes)?;
    let path = out_dir.join("english.txt");
    std::fs::write(&path, &english)?;
    corpora.push(format!("english={}", path.display()));
    match korean_corpus(corpus_bytes)? {
        Some(korean) => {
            let path = out_dir.join("korean.txt");
            std::fs::write(&path, &korean)?;
            corpora.push(format!("korean={}", path.display()));
        }
        None => {
            eprintln!("no Korean gettext catalogs under /usr/share/locale/ko: Korean rows skipped")
        }
    }

    // Two builds: building examples pulls in dev-dependencies, which must not change
    // the features of the server binary we time. `--quick` (CI: keeps the harness
    // working, asserts nothing) uses the dev profile the tests already built.
    let (profile_args, profile_dir): (&[&str], _) = if quick {
        (&[], "debug")
    } else {
        (&["--release"], "release")
    };
    let build = |extra: &[&str]| {
        let mut args = vec!["build", "--locked"];
        args.extend_from_slice(profile_args);
        args.extend_from_slice(extra);
        cargo(&args)
    };
    build(&["-p", "context-loader", "--bin", "context-loader"])?;
    build(&["-p", "context-budget", "--example", "count_throughput"])?;
    let target = workspace_root().join("target").join(profile_dir);
    let mut report =
        String::from("## Counting (same text, same process, median of alternating rounds)\n\n");
    if quick {
        report.insert_str(0, "> --quick: dev build and small corpora; these figures only show the harness works.\n\n");
    }
    let throughput = Command::new(target.join("examples/count_throughput"))
        .args(&corpora)
        .args(["--rounds", rounds])
        .output()
        .context("cannot run count_throughput")?;
    if !throughput.status.success() {
        bail!(
            "count_throughput failed: {}",
            String::from_utf8_lossy(&throughput.stderr)
        );
    }
    report.push_str(&String::from_utf8_lossy(&throughput.stdout));

    let binary = target.join("context-loader");
    let (init, first_count) = cold_starts(&binary, starts)?;
    report.push_str(&format!(
        "\n## Cold start over stdio ({starts} launches of the {profile_dir} binary)\n\n\
         | what | median | max |\n|---|---:|---:|\n\
         | spawn -> initialize reply (ms) | {:.1} | {:.1} |\n\
         | spawn -> first count-tokens reply, gpt-4o, incl. encoder load (ms) | {:.1} | {:.1} |\n",
        median(&init),
        max(&init),
        median(&first_count),
        max(&first_count)
    ));
    println!("{report}");
    std::fs::write(out_dir.join("report.md"), &report)?;
    eprintln!("written to {}", out_dir.join("report.md").display());
    if !quick {
        let page = format!("# Benchmarks\n\n{}\n{report}", provenance(&corpora));
        std::fs::write(workspace_root().join("BENCHMARKS.md"), page)?;
        eprintln!("written to BENCHMARKS.md");
    }
    Ok(())
}

/// When, where and on what the figures were measured.
fn provenance(corpora: &[String]) -> String {
    let capture = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .current_dir(workspace_root())
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let sizes: Vec<String> = corpora
        .iter()
        .filter_map(|c| c.split_once('='))
        .map(|(name, path)| {
            format!(
                "{name} {} bytes",
                std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
            )
        })
        .collect();
    format!(
        "Generated by `cargo xtask bench` on {} (UTC) at commit `{}`.\n\
         Machine: {cpu}, {cores} cores available; {}.\n\
         Method: release build; ratios come from the same process (counting) or the same run;\n\
         each counting figure is the median of 7 alternating rounds after a warm-up count that\n\
         also checks both libraries agree. Corpora ({}): English = the Markdown docs of the crates\n\
         in cargo's registry, Korean = the Korean translations in Debian's gettext catalogs.\n",
        capture("date", &["-u", "+%Y-%m-%d %H:%M"]),
        capture("git", &["rev-parse", "--short", "HEAD"]),
        capture("rustc", &["--version"]),
        sizes.join(", ")
    )
}

/// Spawn `context-loader stdio`, time the initialize reply and a first tool call.
fn cold_starts(binary: &Path, launches: usize) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"xtask-bench","version":"0"}}}"#;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let count = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count-tokens","arguments":{"text":"Cold start: how long until the first count?","model":"gpt-4o"}}}"#;
    let (mut init_ms, mut count_ms) = (Vec::new(), Vec::new());
    for _ in 0..launches {
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
        let mut line = String::new();
        writeln!(stdin, "{initialize}")?;
        stdout.read_line(&mut line)?;
        init_ms.push(start.elapsed().as_secs_f64() * 1e3);
        if !line.contains("\"serverInfo\"") {
            bail!("unexpected initialize reply: {line}");
        }
        writeln!(stdin, "{initialized}\n{count}")?;
        line.clear();
        stdout.read_line(&mut line)?;
        count_ms.push(start.elapsed().as_secs_f64() * 1e3);
        if !line.contains("token_count") {
            bail!("unexpected count-tokens reply: {line}");
        }
        drop(stdin);
        child.wait()?;
    }
    Ok((init_ms, count_ms))
}

/// Markdown documentation of every crate in cargo's registry, in path order.
fn english_corpus(limit: usize) -> anyhow::Result<String> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .context("neither CARGO_HOME nor HOME is set")?;
    let mut files = Vec::new();
    collect_files(
        &home.join("registry/src"),
        &mut |p| p.extension().is_some_and(|e| e == "md"),
        &mut files,
    );
    files.sort();
    let mut text = String::new();
    for file in files {
        if text.len() >= limit {
            break;
        }
        if let Ok(content) = std::fs::read_to_string(&file) {
            text.push_str(&content);
            text.push('\n');
        }
    }
    if text.len() < 100_000 {
        bail!(
            "found only {} bytes of Markdown under {}; build the workspace first",
            text.len(),
            home.display()
        );
    }
    Ok(text)
}

/// The Korean translations (msgstr) of Debian's gettext catalogs.
fn korean_corpus(limit: usize) -> anyhow::Result<Option<String>> {
    let mut files = Vec::new();
    collect_files(
        Path::new("/usr/share/locale/ko/LC_MESSAGES"),
        &mut |p| p.extension().is_some_and(|e| e == "mo"),
        &mut files,
    );
    files.sort();
    let mut text = String::new();
    for file in files {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        for message in mo_translations(&bytes) {
            if message.chars().any(|c| ('가'..='힣').contains(&c)) {
                text.push_str(message);
                text.push('\n');
            }
        }
    }
    if text.len() < 100_000 {
        return Ok(None);
    }
    // Unique text only (repeating it would flatter a tokenizer with a piece cache);
    // cut at a line boundary.
    if text.len() > limit {
        let cut = text.as_bytes()[..limit]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap_or(0);
        text.truncate(cut + 1);
    }
    Ok(Some(text))
}

/// The translated strings of a GNU .mo catalog (little-endian), skipping bad entries.
fn mo_translations(bytes: &[u8]) -> Vec<&str> {
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    if word(0) != Some(0x9504_12de) {
        return Vec::new();
    }
    let (Some(count), Some(table)) = (word(8), word(16)) else {
        return Vec::new();
    };
    (0..count)
        .filter_map(|i| {
            let (len, offset) = (word(table + 8 * i)?, word(table + 8 * i + 4)?);
            std::str::from_utf8(bytes.get(offset..offset + len)?).ok()
        })
        .flat_map(|s| s.split('\0'))
        .collect()
}

fn collect_files(dir: &Path, wanted: &mut dyn FnMut(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, wanted, out);
        } else if wanted(&path) {
            out.push(path);
        }
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::NAN, f64::max)
}
