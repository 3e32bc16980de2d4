//! `cargo xtask bench [--quick]`: every figure next to a baseline measured in the same
//! run on the same machine (tiktoken-rs for counting, the TypeScript SDK peer under
//! bench/peers/ for the MCP rows), medians after a warm-up, and the ratio.
//!
//! The report is a list of sections ([`SECTIONS`]); each is one function that
//! measures, records the targets it checks, and returns its Markdown. A full run
//! writes BENCHMARKS.md; `--quick` (inside `cargo xtask ci`, dev build, tiny sizes)
//! only keeps the harness working and asserts nothing: a timed check on a shared
//! 2-core machine is noise.

mod corpora;
mod counting;
mod family_goals;
mod files;
mod first_answer;
mod languages;
mod mcp;
mod specs;
mod startup;
mod tokenizer_families;
mod tool_list;

use std::path::PathBuf;
use std::process::Command;

use anyhow::Context;

use crate::peer::Peer;
use crate::{cargo, workspace_root};

/// One section of the report. To add a benchmark, write a function and append it.
type Section = fn(&mut Bench) -> anyhow::Result<String>;

const SECTIONS: &[(&str, Section)] = &[
    ("counting", counting::throughput),
    ("pathological", counting::pathological),
    ("encoder-load", startup::encoder_load),
    ("cold-start", startup::cold_start),
    ("first-count", startup::first_count),
    ("first-answer", first_answer::whole_process),
    ("server-first-count", first_answer::server_first_count),
    ("stdio", mcp::stdio_round_trips),
    ("http", mcp::http_stateless),
    ("specs", specs::listing),
    ("fit-messages", specs::fit_messages),
    ("tokenizer-families", tokenizer_families::families),
    ("tokenizer-families", family_goals::goals),
    ("files", files::against_repomix),
    ("files-auto", files::auto_against_repomix_compress),
    ("languages", languages::auto_by_language),
    ("tool-list", tool_list::definitions),
];

/// The names `--only` accepts.
pub fn section_names() -> Vec<&'static str> {
    SECTIONS.iter().map(|(name, _)| *name).collect()
}

/// What every section gets: the mode, built artifacts, corpora, the peer.
pub struct Bench {
    pub quick: bool,
    /// `release`, or `debug` for --quick.
    pub profile: &'static str,
    pub corpora: corpora::Corpora,
    /// Targets from the issue, with what this run measured.
    pub targets: Vec<TargetCheck>,
    peer: Option<Peer>,
}

pub struct TargetCheck {
    pub target: String,
    pub measured: String,
    pub met: bool,
}

impl Bench {
    pub fn artifact(&self, relative: &str) -> PathBuf {
        crate::target_dir().join(self.profile).join(relative)
    }

    /// `engine_bench MODE` (the engine's benchmark example, one binary for its modes).
    pub fn engine_bench(&self, mode: &str) -> Command {
        let mut command = Command::new(self.artifact("examples/engine_bench"));
        command.arg(mode);
        command
    }

    /// The TypeScript SDK peer, installed on first use.
    pub fn peer(&mut self) -> anyhow::Result<&Peer> {
        if self.peer.is_none() {
            self.peer = Some(Peer::install()?);
        }
        self.peer
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("peer not installed"))
    }

    /// Pick full or quick sizes.
    pub fn size<T>(&self, full: T, quick: T) -> T {
        if self.quick { quick } else { full }
    }

    pub fn check(&mut self, target: &str, measured: String, met: bool) {
        self.targets.push(TargetCheck {
            target: target.into(),
            measured,
            met,
        });
    }
}

/// repomix, the files sections' peer, installed from its lockfile (for `prefetch`).
pub fn install_repomix() -> anyhow::Result<()> {
    files::Repomix::install().map(drop)
}

/// Run every section (or those named in `only`); a full run of every section writes
/// BENCHMARKS.md, a run of some sections only target/bench/report.md.
///
/// `no_build` uses the artifacts already in target/ (for `--only` after building just
/// what those sections run).
/// Start `cargo xtask bench --quick` (this same binary) in the background, for ci:
/// [`join_quick`] waits for it.
pub fn start_quick() -> anyhow::Result<()> {
    let log = crate::background::start("bench-quick", 0, &["bench", "--quick"])?;
    eprintln!(
        "bench harness (--quick): in the background (log: {})",
        log.display()
    );
    Ok(())
}

/// Wait for [`start_quick`]'s bench and show what it printed; its failure is ci's.
pub fn join_quick() -> anyhow::Result<()> {
    let joined = crate::background::join("bench-quick")
        .context("the quick bench was not started (bench::start_quick)")?;
    crate::timing::beside(
        "bench harness (--quick, dev build)",
        joined.own_seconds("bench"),
    );
    match &joined.status {
        Ok(status) if status.success() => {
            eprint!("{}", joined.text);
            Ok(())
        }
        other => anyhow::bail!(
            "`cargo xtask bench --quick` failed ({other:?}); its log ({}) ends:\n{}",
            joined.log.display(),
            joined.tail(60)
        ),
    }
}

pub fn run(quick: bool, only: &[String], no_build: bool) -> anyhow::Result<()> {
    let whole = std::time::Instant::now();
    if let Some(unknown) = only.iter().find(|n| !section_names().contains(&n.as_str())) {
        anyhow::bail!(
            "no bench section `{unknown}` (sections: {})",
            section_names().join(", ")
        );
    }
    let profile = match (no_build, quick) {
        (false, _) => build(!quick)?,
        (true, true) => "debug",
        (true, false) => "release",
    };
    let out_dir = crate::target_dir().join("bench");
    std::fs::create_dir_all(&out_dir)?;
    let mut bench = Bench {
        quick,
        profile,
        corpora: corpora::build(&out_dir, quick)?,
        targets: Vec::new(),
        peer: None,
    };

    // Hand-written notes under a section (what changed, and why, with figures a run
    // cannot make) come back after the section's new figures.
    let page_before =
        std::fs::read_to_string(workspace_root().join("BENCHMARKS.md")).unwrap_or_default();
    let notes = kept_notes(&page_before);
    let mut report = String::new();
    if quick {
        report.push_str(
            "> --quick: dev build and tiny sizes; these figures only show the harness works.\n\n",
        );
    }
    for (name, section) in SECTIONS {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let started = std::time::Instant::now();
        let markdown = section(&mut bench)?;
        eprintln!("bench: section done in {:.0?}", started.elapsed());
        println!("{markdown}");
        report.push_str(&markdown);
        report.push('\n');
        if let Some((_, note)) = notes.iter().find(|(section, _)| section == name) {
            report.push_str(note);
            report.push('\n');
        }
    }
    let targets = targets_table(&bench.targets);
    println!("{targets}");
    report.push_str(&targets);
    std::fs::write(out_dir.join("report.md"), &report)?;
    eprintln!("written to {}", out_dir.join("report.md").display());
    if !quick && only.is_empty() {
        let path = workspace_root().join("BENCHMARKS.md");
        let kept = kept_sections(&page_before);
        let page = format!("# Benchmarks\n\n{}\n{report}{kept}", provenance(&bench));
        std::fs::write(path, page)?;
        eprintln!("written to BENCHMARKS.md");
    }
    // Last: `cargo xtask ci` reads its own time from this line (`Joined::own_seconds`).
    eprintln!("bench: done in {:.1} s", whole.elapsed().as_secs_f64());
    Ok(())
}

/// Build the server binary and the two measuring examples; returns the profile dir.
///
/// Release: the server binary is built on its own, because building the examples
/// pulls in dev-dependencies whose features must not end up in the binary we time.
/// Dev (--quick, --smoke): one build of everything, as `cargo test` just did, so CI
/// compiles nothing twice.
pub fn build(release: bool) -> anyhow::Result<&'static str> {
    if !release {
        // What the harness runs: the server and the examples. `--all-targets` also
        // built every test binary again under the dev profile (the tests step builds
        // them under test): four copies of 180-220 MB, and 10 s in ci.
        cargo(&["build", "--workspace", "--bins", "--examples", "--locked"])?;
        return Ok("debug");
    }
    for target in [
        &["-p", "context-loader", "--bin", "context-loader"][..],
        &["-p", "context-loader", "--example", "mcp_load"][..],
        &["-p", "context-budget", "--example", "engine_bench"][..],
        &["-p", "context-budget", "--example", "tiktoken_rs_count"][..],
    ] {
        let mut build = vec!["build", "--locked", "--release"];
        build.extend_from_slice(target);
        cargo(&build)?;
    }
    Ok("release")
}

/// The sections of `page` (a BENCHMARKS.md) that another command measures (their
/// heading says "not `cargo xtask bench`", as `cargo xtask mcp-tokens --bench`'s),
/// kept as they are when a full run rewrites the page.
fn kept_sections(page: &str) -> String {
    let mut kept = String::new();
    let mut keeping = false;
    for line in page.split_inclusive('\n') {
        if line.starts_with("## ") {
            keeping = line.contains("not `cargo xtask bench`");
        }
        if keeping {
            kept.push_str(line);
        }
    }
    match kept.is_empty() {
        true => kept,
        false => format!("\n{}", kept.trim_end()) + "\n",
    }
}

/// The hand-written notes of `page` (a BENCHMARKS.md): each a block from a line
/// `<!-- notes: SECTION -->` to a line `<!-- /notes -->`, markers included, for the
/// bench section named SECTION (`counting`, `files`, ...). A run puts each back
/// after its section's figures: the history of an issue's work (before and after,
/// what was tried) is written by hand once and no longer lost to the next run.
fn kept_notes(page: &str) -> Vec<(String, String)> {
    let mut notes = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in page.split_inclusive('\n') {
        let marker = line.trim();
        if let Some(section) = marker
            .strip_prefix("<!-- notes: ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        {
            open = Some((section.trim().to_string(), String::new()));
        }
        if let Some((_, text)) = open.as_mut() {
            text.push_str(line);
        }
        if marker == "<!-- /notes -->"
            && let Some(done) = open.take()
        {
            notes.push(done);
        }
    }
    notes
}

fn targets_table(targets: &[TargetCheck]) -> String {
    let rows: Vec<Vec<String>> = targets
        .iter()
        .map(|t| {
            vec![
                t.target.clone(),
                t.measured.clone(),
                if t.met { "met" } else { "not met" }.to_string(),
            ]
        })
        .collect();
    format!(
        "## Targets\n\n{}",
        table(&["target", "measured", "result"], &rows)
    )
}

/// A Markdown table; the first column is left-aligned, the rest right-aligned.
pub fn table(columns: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!("| {} |\n|", columns.join(" | "));
    for i in 0..columns.len() {
        out.push_str(if i == 0 { "---|" } else { "---:|" });
    }
    out.push('\n');
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// How many times better ours is: a rate (higher is better) or a time/size (lower is).
pub fn ratio(ours: f64, baseline: f64, higher_is_better: bool) -> f64 {
    if higher_is_better {
        ours / baseline
    } else {
        baseline / ours
    }
}

pub fn median(values: &[f64]) -> f64 {
    // Even counts average the middle two, so two rounds give their mean.
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// When, where and on what the figures were measured.
fn provenance(bench: &Bench) -> String {
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
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map(|kib| format!("{:.0} GiB RAM", kib / 1024.0 / 1024.0))
        .unwrap_or_default();
    let dirty = if capture("git", &["status", "--porcelain"]).is_empty() {
        ""
    } else {
        " (with uncommitted changes)"
    };
    // Other work on a shared machine skews figures; say how busy it was.
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into());
    format!(
        "Generated by `cargo xtask bench` on {} (UTC) at commit `{}`{dirty}.\n\n\
         **Machine:** {cpu}, {cores} cores available, {memory}; {}; Linux {};\n\
         1-minute load average {load} when the run ended (a shared machine: other jobs\n\
         ran beside this one, so read the ratios, not the absolute figures).\n\n\
         **Method.** Release build (`lto`, one codegen unit). Every figure has its baseline\n\
         measured in the same run on the same machine: tiktoken-rs in the same process for\n\
         counting; for the MCP rows, a peer server on {} (bench/peers/ts-sdk, pinned\n\
         package-lock.json), served the way the SDK's stateless example serves it, loaded\n\
         by the same clients (`mcp_load`, an example of servers/context-loader) with the same\n\
         texts: ~1 KB windows of the English corpus, every reply checked against the engine's\n\
         own count (a wrong or failed reply fails the run). Warm-up first, then medians of\n\
         alternating rounds; ratios say how many times better ours is (higher rate, or lower\n\
         time/size). Clients and servers share the machine's cores, as they would on one host.\n\n\
         **Corpora.**\n{}\n",
        capture("date", &["-u", "+%Y-%m-%d %H:%M"]),
        capture("git", &["rev-parse", "--short", "HEAD"]),
        capture("rustc", &["--version"]),
        capture("uname", &["-r"]),
        Peer::describe(),
        bench.corpora.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_run_keeps_the_sections_other_commands_measure() {
        let page = "# Benchmarks\n\n## 1. Counting\nold figures\n\n\
                    ## 9. mcp-tokens (`cargo xtask mcp-tokens --bench`, not `cargo xtask bench`)\n\
                    kept figures\n\n## Targets\nold targets\n";
        let kept = kept_sections(page);
        assert!(kept.contains("## 9. mcp-tokens") && kept.contains("kept figures"));
        assert!(!kept.contains("old figures") && !kept.contains("old targets"));
        assert_eq!(kept_sections("# Benchmarks\n## 1. x\n"), "");
    }

    #[test]
    fn a_full_run_keeps_the_notes_written_under_a_section() {
        let page = "# Benchmarks\n\n## 1. Counting\nold figures\n\n\
                    <!-- notes: counting -->\n**Before and after.** by hand\n\nmore\n\
                    <!-- /notes -->\n\n## 7. Files\nold\n<!-- notes: files -->\nfiles' history\n\
                    <!-- /notes -->\n<!-- notes: unclosed -->\nlost\n";
        let notes = kept_notes(page);
        assert_eq!(
            notes,
            [
                (
                    "counting".to_string(),
                    "<!-- notes: counting -->\n**Before and after.** by hand\n\nmore\n\
                     <!-- /notes -->\n"
                        .to_string()
                ),
                (
                    "files".to_string(),
                    "<!-- notes: files -->\nfiles' history\n<!-- /notes -->\n".to_string()
                ),
            ]
        );
        assert!(kept_notes("# Benchmarks\n## 1. x\n").is_empty());
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn ratio_says_how_many_times_better_ours_is() {
        assert_eq!(ratio(500.0, 100.0, true), 5.0);
        assert_eq!(ratio(2.0, 10.0, false), 5.0);
    }

    #[test]
    fn table_aligns_figures_right() {
        let rows = [vec!["a".to_string(), "1".to_string()]];
        assert_eq!(
            table(&["what", "ours"], &rows),
            "| what | ours |\n|---|---:|\n| a | 1 |\n"
        );
    }
}
