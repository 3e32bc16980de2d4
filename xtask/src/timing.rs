//! Named, timed steps for `cargo xtask ci`, each with a time budget, and the table of
//! them printed at the end (also when a step fails), so the next slowdown has a name.
//! A budget is not a test: a step over it is marked `OVER` in the table, never failed
//! (a timed assertion on a shared 2-core machine would be noise). A clean-clone CI
//! should take 15 minutes on 2 cores, and that is the whole run: cargo building xtask
//! itself ([`XTASK_BUILD_BUDGET`]) and then the steps, whose budgets take the rest
//! ([`WHOLE_RUN_BUDGET`]); the table's last line is that whole run, timed from the
//! process's own start (`cargo run` execs xtask, so that is when cargo started). The
//! first measured run (issue 38) took 1,353 s of steps, over by the release build
//! with LTO (416 s), the Python SDK fleet (190 s), the fuzzer (92 s) and the
//! conformance suite.
//!
//! Each step's CPU seconds are shown beside its time: on 2 cores a run is mostly
//! bound by CPU, and CPU time moves far less than wall time when the machine is shared,
//! so it names a step that got heavier even in a noisy run. It is this process's own
//! plus that of every child it waited for during the step (with their children:
//! cargo's rustc, a client's node), from /proc/self/stat.

use std::sync::Mutex;
use std::time::Instant;

struct Done {
    name: &'static str,
    seconds: f64,
    cpu: f64,
    budget: u64,
    ok: bool,
}

/// CPU seconds used so far by this process and by the children it has waited for
/// (utime, stime, cutime, cstime of /proc/self/stat, in Linux's fixed 1/100 s ticks).
/// Zero where /proc is not there: the column then says nothing, and nothing fails.
pub fn cpu_seconds() -> f64 {
    test_support::process::stat_times("self").map_or(0.0, |t| t.iter().sum::<u64>() as f64 / 100.0)
}

/// Seconds a clean-clone `cargo xtask ci` may take as a whole, on 2 cores.
pub const WHOLE_RUN_BUDGET: u64 = 900;
/// Of which cargo building xtask in an empty target/ (118 s of wall, 225 s of CPU,
/// measured alone with `cargo build -p xtask --timings`): the steps get the rest.
pub const XTASK_BUILD_BUDGET: u64 = 120;

/// Seconds since this process started. `cargo run` (what `cargo xtask` is) replaces
/// itself with xtask, so that is when cargo started, building xtask included; and
/// `.ci/run` execs cargo, so on CI it is the whole run. From /proc (field 22 of
/// /proc/self/stat, in Linux's fixed 1/100 s ticks, against /proc/uptime); `None`
/// where /proc is not there.
pub fn process_age() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let started: f64 = stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()?;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(uptime - started / 100.0)
}

/// The table's line for the part of the whole run outside the steps.
const BUILDING_XTASK: &str = "cargo building xtask (the rest of the whole run)";

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
    let (started, cpu_before) = (Instant::now(), cpu_seconds());
    let result = run();
    let seconds = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_before;
    eprintln!(
        "<== {name}: {} in {seconds:.1} s, {cpu:.0} s of CPU (budget {budget} s)",
        if result.is_ok() { "ok" } else { "FAILED" },
    );
    DONE.lock().unwrap_or_else(|e| e.into_inner()).push(Done {
        name,
        seconds,
        cpu,
        budget,
        ok: result.is_ok(),
    });
    result
}

/// The steps run so far: time, budget, and which went over or failed.
pub fn table() -> String {
    let done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    let width = done
        .iter()
        .map(|d| d.name.len())
        .chain([BUILDING_XTASK.len()])
        .max()
        .unwrap_or(4);
    let mut out = format!(
        "{:<width$}  {:>7}  {:>6}  {:>6}  state\n",
        "step", "seconds", "cpu", "budget"
    );
    let (mut total, mut cpu, mut budget) = (0.0, 0.0, 0);
    for d in done.iter() {
        let state = match (d.ok, d.seconds > d.budget as f64) {
            (false, _) => "FAILED",
            (true, true) => "OVER",
            (true, false) => "ok",
        };
        out.push_str(&format!(
            "{:<width$}  {:>7.0}  {:>6.0}  {:>6}  {state}\n",
            d.name, d.seconds, d.cpu, d.budget
        ));
        total += d.seconds;
        cpu += d.cpu;
        budget += d.budget;
    }
    out.push_str(&format!(
        "{:<width$}  {total:>7.0}  {cpu:>6.0}  {budget:>6}\n",
        "total"
    ));
    // The whole run, from cargo's start: the steps plus building xtask (and anything
    // between them), against the 15 minutes.
    if let Some(age) = process_age() {
        let state = |seconds: f64, budget: u64| {
            if seconds > budget as f64 {
                "OVER"
            } else {
                "ok"
            }
        };
        let before = (age - total).max(0.0);
        out.push_str(&format!(
            "{:<width$}  {before:>7.0}  {:>6}  {XTASK_BUILD_BUDGET:>6}  {}\n",
            BUILDING_XTASK,
            "",
            state(before, XTASK_BUILD_BUDGET)
        ));
        out.push_str(&format!(
            "{:<width$}  {age:>7.0}  {:>6}  {WHOLE_RUN_BUDGET:>6}  {}\n",
            "whole run (from cargo's start)",
            "",
            state(age, WHOLE_RUN_BUDGET)
        ));
    }
    for (name, seconds) in BESIDE.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        out.push_str(&format!(
            "{:<width$}  {seconds:>7.0}                  in the background (its CPU is in the \
             step that joined it)\n",
            name
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    /// A child's CPU counts once it has been waited for, as a step's commands are.
    #[test]
    fn cpu_seconds_take_in_the_children_waited_for() {
        let before = super::cpu_seconds();
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
            .status()
            .expect("sh");
        assert!(status.success());
        let used = super::cpu_seconds() - before;
        assert!(used >= 0.05, "a busy child's CPU was not counted: {used} s");
    }

    /// The whole run is timed from this process's start: never negative, and it grows
    /// with the wall clock.
    #[test]
    fn the_process_age_follows_the_wall_clock() {
        let first = super::process_age().expect("/proc/self/stat and /proc/uptime");
        assert!(first >= 0.0, "{first}");
        std::thread::sleep(std::time::Duration::from_millis(300));
        let later = super::process_age().expect("/proc");
        assert!(later - first >= 0.2, "{first} -> {later}");
    }
}
