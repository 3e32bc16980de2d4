//! A server process as a test sees it from outside: its memory and CPU time (from
//! `/proc/<pid>`, Linux), a SIGTERM as an orchestrator sends it, and a command run
//! under a hang guard.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The process's peak resident memory so far (`VmHWM`), in bytes.
pub fn peak_rss_bytes(pid: u32) -> u64 {
    status_kib(pid, "VmHWM:") * 1024
}

/// The process's resident memory now (`VmRSS`), in bytes.
pub fn rss_bytes(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:") * 1024
}

fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("cannot read /proc/{pid}/status: {e}"));
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// The CPU time the process has used so far, user and system (`utime + stime` of
/// `/proc/<pid>/stat`), in clock ticks of 1/100 s (Linux's fixed `USER_HZ`).
pub fn cpu_ticks(pid: u32) -> u64 {
    let [utime, stime, _, _] = stat_times(&pid.to_string())
        .unwrap_or_else(|| panic!("cannot read the CPU times of /proc/{pid}/stat"));
    utime + stime
}

/// `utime`, `stime`, `cutime` and `cstime` (fields 14-17, ticks of 1/100 s) of
/// `/proc/<process>/stat`, `process` a pid or `self`; `None` where it cannot be read.
pub fn stat_times(process: &str) -> Option<[u64; 4]> {
    let stat = std::fs::read_to_string(format!("/proc/{process}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| fields.get(i)?.parse::<u64>().ok();
    // Fields 14-17 of the whole line are 11-14 after the name.
    Some([tick(11)?, tick(12)?, tick(13)?, tick(14)?])
}

/// [`cpu_ticks`] in seconds.
pub fn cpu_seconds(pid: u32) -> f64 {
    cpu_ticks(pid) as f64 / 100.0
}

/// From the moment a call was abandoned, waits until the process's CPU time stops
/// growing (a whole second with under a tenth of a second used), failing as soon as
/// it has used `bound` seconds or more: the call stopped, rather than ran to its end.
/// Settling, not a fixed window after a grace period: on a loaded machine the call's
/// unwinding (dropping what it parsed) can outlast any fixed grace in wall time.
pub async fn assert_cpu_settles_within(pid: u32, what: &str, bound: f64) {
    let started = Instant::now();
    let first = cpu_seconds(pid);
    let mut last = first;
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = cpu_seconds(pid);
        let used = now - first;
        assert!(
            used < bound,
            "{what}: the server kept working: {used:.1} s of CPU in {:?} after the call was \
             abandoned",
            started.elapsed()
        );
        if now - last < 0.1 {
            return;
        }
        last = now;
        assert!(
            started.elapsed() < 2 * crate::PATIENCE,
            "{what}: CPU never settled"
        );
    }
}

/// Send the process SIGTERM, as `kill` or an orchestrator does; it must still exist.
pub fn sigterm(pid: u32) {
    let pid = i32::try_from(pid).expect("a pid");
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    let sent = unsafe { libc::kill(pid, libc::SIGTERM) };
    assert_eq!(
        sent,
        0,
        "kill -TERM {pid}: {}",
        std::io::Error::last_os_error()
    );
}

/// Run `command` to its end with stdout and stderr captured (read as it runs, so a
/// full pipe never blocks it), or kill it once `limit` has passed: a hang guard, not
/// a timing claim. `None` when it had to be killed.
pub fn output_within(command: &mut Command, limit: Duration) -> Option<Output> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).ok();
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout is piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr is piped")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Some(Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    })
}
