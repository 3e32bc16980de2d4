//! Rows 5 and 6: spec measurement on the generated 2,000-spec corpus (`engine_bench
//! spec_scan`, an example of context-budget), and fit-messages on a 10,000-message history
//! (`engine_bench fit_messages_bench`, which measures its baselines in the same process).

use anyhow::{Context, bail};

use super::Bench;
use crate::spec_corpus;

/// LeanSpec 0.2.28 on a corpus like ours, as measured on this kind of machine and
/// quoted in the issue. It is not on the npm registry this machine reaches, so it
/// cannot run here; the ratios against it are labelled as quoted.
const LEANSPEC_LISTING_MS: (f64, f64) = (6500.0, 7700.0);
const LEANSPEC_FIFTY_CALLS_MS: (f64, f64) = (4700.0, 5400.0);

pub fn listing(bench: &mut Bench) -> anyhow::Result<String> {
    let specs = bench.size(2000, 100);
    let dir = crate::target_dir().join("bench/spec-corpus");
    let (files, bytes) = spec_corpus::generate(&dir, specs)?;
    let output = bench
        .engine_bench("spec_scan")
        .arg(&dir)
        .args(["--rounds", &bench.size(5, 1).to_string()])
        .output()
        .context("cannot run spec_scan")?;
    if !output.status.success() {
        bail!(
            "spec_scan failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let table = String::from_utf8_lossy(&output.stdout).into_owned();
    let median_of = |row: &str| -> f64 {
        table
            .lines()
            .find(|l| l.starts_with(&format!("| {row}")))
            .and_then(|l| l.split('|').nth(2))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(f64::NAN)
    };
    let cold = median_of("all specs, sub-specs + detailed, cold");
    let warm = median_of("all specs, sub-specs + detailed, warm");
    let one = median_of("one spec, sub-specs + detailed, warm");
    let fifty = median_of("50 single-spec calls");
    if !bench.quick {
        let (low, high) = LEANSPEC_LISTING_MS;
        bench.check(
            "spec listing with sub-specs + detailed ≥ 20× faster than LeanSpec's README-only listing (6.5–7.7 s, quoted)",
            format!("{cold:.0} ms cold: {:.0}–{:.0}×", low / cold, high / cold),
            low / cold >= 20.0,
        );
        bench.check(
            "repeat (cached) listing well under 50 ms",
            format!("{warm:.1} ms"),
            warm < 50.0,
        );
        bench.check(
            "single-spec call under 2 ms",
            format!("{one:.2} ms"),
            one < 2.0,
        );
    }
    let (low, high) = LEANSPEC_FIFTY_CALLS_MS;
    Ok(format!(
        "## 5. Specs: the generated corpus ({specs} specs, {files} files, {:.1} MB)\n\n\
         `cargo xtask spec-corpus` writes it (deterministic). \"Cold\" is a new store (nothing \
         cached; the OS page cache is warm), \"warm\" the same store again with unchanged files; \
         the corpus is left unchanged for {settled} s first, as a repository at rest is (a store \
         reuses its listing of folders only once the directories have not changed for that \
         long). \
         LeanSpec 0.2.28 cannot be installed here (not on the reachable npm registry); its figures \
         are quoted from the issue: {:.1}–{:.1} s for the README-only listing, {:.1}–{:.1} s for \
         50 single-spec calls (ours: {fifty:.0} ms, {:.0}–{:.0}× faster).\n\n{table}",
        bytes as f64 / 1e6,
        LEANSPEC_LISTING_MS.0 / 1e3,
        LEANSPEC_LISTING_MS.1 / 1e3,
        low / 1e3,
        high / 1e3,
        low / fifty,
        high / fifty,
        settled = context_budget::spec::discovery::SETTLED.as_secs(),
    ))
}

pub fn fit_messages(bench: &mut Bench) -> anyhow::Result<String> {
    let mut command = bench.engine_bench("fit_messages_bench");
    if bench.quick {
        command.arg("--quick");
    }
    let output = command.output().context("cannot run fit_messages_bench")?;
    if !output.status.success() {
        bail!(
            "fit_messages_bench failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(format!(
        "## 6. fit-messages on a 10,000-message history\n\n\
         Against trimmers that re-count, with the same overhead rule, in the same process.\n\n{}",
        String::from_utf8_lossy(&output.stdout)
    ))
}
