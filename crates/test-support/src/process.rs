//! What a test can see of a server process from outside: its memory, from
//! `/proc/<pid>/status` (Linux).

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
