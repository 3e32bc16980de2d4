//! Named, timed steps for `cargo xtask ci`, so slow steps are visible in the log.

use std::time::Instant;

pub fn step(name: &str, run: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<()> {
    eprintln!("==> {name}");
    let started = Instant::now();
    let result = run();
    eprintln!(
        "<== {name}: {} in {:.1} s",
        if result.is_ok() { "ok" } else { "FAILED" },
        started.elapsed().as_secs_f64()
    );
    result
}
