//! xtask commands that `cargo xtask ci` runs as child processes (this same binary)
//! beside its steps, each with its output in a log under target/xtask/, joined by a
//! later step and ended with the run when a step fails.
//!
//! The prefetch is one: downloads, while the compiler holds the cores. The quick bench
//! is another: one core of CPU for ~70 s, beside the fuzzer and the browser (which
//! mostly wait on processes) and the install step, which waited as long for the
//! release build's fat-LTO link, itself on one core, with the other idle.

use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Context;

/// A started job. Its child is reaped only by [`join`], so its CPU time counts in the
/// step that joins it (the table's CPU column reads this process's children's times).
struct Job {
    name: &'static str,
    child: Child,
    started: Instant,
    log: PathBuf,
}

/// What [`join`] found: how the command ended, its log and its text.
pub struct Joined {
    pub status: std::io::Result<ExitStatus>,
    /// Seconds from [`start`] to the join: an upper bound of the command's own time,
    /// which a command prints in its log if the table is to show it.
    pub seconds: f64,
    pub log: PathBuf,
    pub text: String,
}

impl Joined {
    /// The command's own seconds, from the line `<prefix>: done in <seconds> s` it
    /// prints last; else the time until the join.
    pub fn own_seconds(&self, prefix: &str) -> f64 {
        let done = format!("{prefix}: done in ");
        self.text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(&done)?.strip_suffix(" s")?.parse().ok())
            .unwrap_or(self.seconds)
    }

    /// The log's last `lines` lines.
    pub fn tail(&self, lines: usize) -> String {
        let all: Vec<&str> = self.text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

static JOBS: Mutex<Vec<Job>> = Mutex::new(Vec::new());

/// Start `xtask <args>` at `nice` (0: as this process) in the background, its output
/// in target/xtask/<name>.log.
pub fn start(name: &'static str, nice: u8, args: &[&str]) -> anyhow::Result<PathBuf> {
    let log = crate::target_dir().join(format!("xtask/{name}.log"));
    std::fs::create_dir_all(log.parent().context("log folder")?)?;
    let file =
        std::fs::File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
    let exe = std::env::current_exe().context("cannot find xtask's own binary")?;
    let mut command = Command::new("nice");
    command.arg("-n").arg(nice.to_string()).arg(exe).args(args);
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::from(file.try_clone()?))
        .stderr(Stdio::from(file))
        .spawn()
        .with_context(|| format!("cannot run xtask {}", args.join(" ")))?;
    JOBS.lock().unwrap_or_else(|e| e.into_inner()).push(Job {
        name,
        child,
        started: Instant::now(),
        log: log.clone(),
    });
    Ok(log)
}

/// Wait for the job `name` started by [`start`]; `None` if there is none.
pub fn join(name: &str) -> Option<Joined> {
    let mut job = {
        let mut jobs = JOBS.lock().unwrap_or_else(|e| e.into_inner());
        let at = jobs.iter().position(|j| j.name == name)?;
        jobs.remove(at)
    };
    let status = job.child.wait();
    Some(Joined {
        status,
        seconds: job.started.elapsed().as_secs_f64(),
        text: std::fs::read_to_string(&job.log).unwrap_or_default(),
        log: job.log,
    })
}

/// ci failed before the joins: end every job and what it started (npm, pip, cargo).
pub fn stop_all() {
    let jobs = std::mem::take(&mut *JOBS.lock().unwrap_or_else(|e| e.into_inner()));
    for mut job in jobs {
        crate::install::kill_tree(job.child.id());
        let _ = job.child.kill();
        let _ = job.child.wait();
        eprintln!("{}: stopped", job.name);
    }
}

#[cfg(test)]
mod tests {
    use super::Joined;

    fn joined(text: &str) -> Joined {
        Joined {
            status: Err(std::io::Error::other("not run")),
            seconds: 99.0,
            log: "x.log".into(),
            text: text.into(),
        }
    }

    #[test]
    fn own_seconds_are_the_last_done_line_else_the_time_to_the_join() {
        let log = "bench: section done in 2s\nbench: done in 3.0 s\nbench: done in 67.5 s\n";
        assert_eq!(joined(log).own_seconds("bench"), 67.5);
        assert_eq!(joined(log).own_seconds("prefetch"), 99.0);
        assert_eq!(joined("bench: done in soon s").own_seconds("bench"), 99.0);
        assert_eq!(joined("a\nb\nc").tail(2), "b\nc");
        assert_eq!(joined("a").tail(5), "a");
    }
}
