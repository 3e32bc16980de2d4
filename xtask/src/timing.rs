//! Named, timed steps for `cargo xtask ci`, each with a time budget, and the table of
//! them printed at the end (also when a step fails), so the next slowdown has a name.
//! A budget is not a test: a step over it is marked `OVER` in the table, never failed
//! (a timed assertion on a shared 2-core machine would be noise). The budgets add up
//! to 900 s, the 15 minutes a clean-clone CI should take on 2 cores; the first
//! measured run (issue 38) took 1,353 s of steps, over by the release build with LTO
//! (416 s), the Python SDK fleet (190 s), the fuzzer (92 s) and the conformance suite.

use std::sync::Mutex;
use std::time::Instant;

struct Done {
    name: &'static str,
    seconds: f64,
    budget: u64,
    ok: bool,
}

static DONE: Mutex<Vec<Done>> = Mutex::new(Vec::new());

/// Work that ran beside the steps (name, seconds): shown under the table, outside its
/// total, since the steps' own times already hold what it made them wait.
static BESIDE: Mutex<Vec<(&'static str, f64)>> = Mutex::new(Vec::new());

/// Record work that ran in the background beside the steps.
pub fn beside(name: &'static str, seconds: f64) {
    BESIDE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((name, seconds));
}

/// Run one step within its `budget` (seconds), recording its time.
pub fn step(
    name: &'static str,
    budget: u64,
    run: impl FnOnce() -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    eprintln!("==> {name}");
    let started = Instant::now();
    let result = run();
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "<== {name}: {} in {seconds:.1} s (budget {budget} s)",
        if result.is_ok() { "ok" } else { "FAILED" },
    );
    DONE.lock().unwrap_or_else(|e| e.into_inner()).push(Done {
        name,
        seconds,
        budget,
        ok: result.is_ok(),
    });
    result
}

/// The steps run so far: time, budget, and which went over or failed.
pub fn table() -> String {
    let done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    let width = done.iter().map(|d| d.name.len()).max().unwrap_or(4).max(4);
    let mut out = format!(
        "{:<width$}  {:>7}  {:>6}  state\n",
        "step", "seconds", "budget"
    );
    let (mut total, mut budget) = (0.0, 0);
    for d in done.iter() {
        let state = match (d.ok, d.seconds > d.budget as f64) {
            (false, _) => "FAILED",
            (true, true) => "OVER",
            (true, false) => "ok",
        };
        out.push_str(&format!(
            "{:<width$}  {:>7.0}  {:>6}  {state}\n",
            d.name, d.seconds, d.budget
        ));
        total += d.seconds;
        budget += d.budget;
    }
    out.push_str(&format!("{:<width$}  {total:>7.0}  {budget:>6}\n", "total"));
    for (name, seconds) in BESIDE.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        out.push_str(&format!(
            "{:<width$}  {seconds:>7.0}          in the background\n",
            name
        ));
    }
    out
}
