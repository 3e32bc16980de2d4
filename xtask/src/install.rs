//! `cargo xtask install-check` and the release binary every packaging check shares.
//!
//! The README's install line is `cargo install --locked --path servers/context-loader`.
//! ci runs exactly that into a temporary root, with the workspace's target/ as
//! CARGO_TARGET_DIR so the release build (LTO, minutes) happens once per run and the
//! bundle, image and Kubernetes checks reuse the installed binary.
//!
//! In ci the build starts in the background right after `cargo fmt --check`
//! ([`start_release_build`]), at the lowest CPU priority (nice 19): it is the longest
//! thing ci does (~430 CPU-s; alone on 2 cores 315 s, the last 157 of them its
//! fat-LTO link on one core), and the run's critical path. Started first at the normal
//! priority it slowed clippy 52 -> 138 s; but kept at nice 19 through the tests (their
//! links and waits on servers were all it got) it ended 140-160 s after every other step.
//! So it takes only idle CPU during clippy and during the fleet, which times servers
//! under a deadline, and the normal priority otherwise ([`set_release_build_nice`]).
//! Cargo locks each profile's folder on its own, so the debug steps are not blocked.
//! Its output goes to a log, shown when it fails.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use anyhow::{Context, bail};
use serde_json::json;

use crate::probe::{self, StdioSession};

/// The installed binary, once built in this xtask process.
static INSTALLED: OnceLock<PathBuf> = OnceLock::new();

/// The background build started by [`start_release_build`], until joined.
static BACKGROUND: Mutex<Option<Background>> = Mutex::new(None);

struct Background {
    child: Child,
    started: Instant,
    log: PathBuf,
}

/// Start `cargo install` in the background at nice 19; [`set_release_build_nice`] gives
/// it the normal priority, [`release_binary`] waits for it, and
/// [`stop_release_build`] ends it when ci stops early.
pub fn start_release_build(root: &Path) -> anyhow::Result<()> {
    let log = crate::target_dir().join("xtask/release-build.log");
    std::fs::create_dir_all(log.parent().context("log folder")?)?;
    let file =
        std::fs::File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
    let mut command = install_command(root);
    // `nice` runs cargo at the lowest priority, and every rustc it starts inherits it.
    let mut niced = Command::new("nice");
    niced
        .args(["-n", "19"])
        .arg(command.get_program())
        .args(command.get_args())
        .current_dir(root);
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => niced.env(name, value),
            None => niced.env_remove(name),
        };
    }
    command = niced;
    let child = command
        .stdout(Stdio::from(file.try_clone()?))
        .stderr(Stdio::from(file))
        .spawn()
        .context("cannot run nice cargo install")?;
    eprintln!(
        "release build: started in the background at nice 19 (log: {})",
        log.display()
    );
    *BACKGROUND.lock().unwrap_or_else(|e| e.into_inner()) = Some(Background {
        child,
        started: Instant::now(),
        log,
    });
    Ok(())
}

/// Set the background build's priority to `nice` (0: the normal one, 19: only idle
/// CPU): cargo first, so what it starts from then on inherits it, then every process
/// it had already started. Lowering a nice value needs root (or CAP_SYS_NICE); without
/// it the build goes on at 19, which is said, and only makes the install step wait
/// longer.
pub fn set_release_build_nice(nice: u8) {
    let mut guard = BACKGROUND.lock().unwrap_or_else(|e| e.into_inner());
    let Some(background) = guard.as_mut() else {
        return;
    };
    if background.child.try_wait().is_ok_and(|done| done.is_some()) {
        eprintln!("release build: already done");
        return;
    }
    let root = background.child.id();
    let mut pids = vec![root];
    pids.extend(descendants(root));
    let mut reniced = 0;
    for pid in &pids {
        let ok = Command::new("renice")
            .args(["-n", &nice.to_string(), "-p", &pid.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        reniced += usize::from(ok);
        if !ok && *pid == root {
            eprintln!(
                "release build: stays at its nice value (renice -n {nice} needs root or \
                 CAP_SYS_NICE); the install step will wait longer for it"
            );
            return;
        }
    }
    eprintln!("release build: now at nice {nice} ({reniced} processes)");
}

/// ci stopped before it needed the release build: end it and the compilers it started,
/// rather than leave them running for minutes.
pub fn stop_release_build() {
    if let Some(mut background) = BACKGROUND.lock().unwrap_or_else(|e| e.into_inner()).take() {
        kill_tree(background.child.id());
        let _ = background.child.kill();
        let _ = background.child.wait();
        eprintln!("release build: stopped");
    }
}

/// SIGKILL `pid`'s descendants (cargo's rustc processes), children first.
pub(crate) fn kill_tree(pid: u32) {
    for child in descendants(pid).into_iter().rev() {
        let _ = Command::new("kill")
            .args(["-KILL", &child.to_string()])
            .stderr(Stdio::null())
            .status();
    }
}

/// `pid`'s descendants as /proc shows them now, parents before their children.
fn descendants(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        // The parent is the second field after the command's closing parenthesis.
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        if let Some(parent) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse().ok())
        {
            parents.push((child, parent));
        }
    }
    let mut found = Vec::new();
    let mut next = 0;
    let mut frontier = vec![pid];
    while next < frontier.len() {
        let parent = frontier[next];
        next += 1;
        for &(child, _) in parents.iter().filter(|(_, p)| *p == parent) {
            found.push(child);
            frontier.push(child);
        }
    }
    found
}

/// `cargo install` the server once per xtask process (or wait for the background
/// build); the installed binary's path.
pub fn release_binary(root: &Path) -> anyhow::Result<PathBuf> {
    if let Some(binary) = INSTALLED.get() {
        return Ok(binary.clone());
    }
    let background = BACKGROUND.lock().unwrap_or_else(|e| e.into_inner()).take();
    let status = match background {
        Some(mut background) => {
            let waited = Instant::now();
            let status = background
                .child
                .wait()
                .context("waiting for cargo install")?;
            eprintln!(
                "release build: {} after {:.0} s in the background, {:.0} s of them waited for here",
                if status.success() { "done" } else { "FAILED" },
                background.started.elapsed().as_secs_f64(),
                waited.elapsed().as_secs_f64()
            );
            crate::timing::beside(
                "release build (cargo install, fat LTO)",
                background.started.elapsed().as_secs_f64(),
            );
            if !status.success() {
                let text = std::fs::read_to_string(&background.log).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                eprintln!(
                    "the end of {}:\n{}",
                    background.log.display(),
                    lines[lines.len().saturating_sub(60)..].join("\n")
                );
            }
            status
        }
        None => install_command(root)
            .status()
            .context("cannot run cargo install")?,
    };
    if !status.success() {
        bail!("`cargo install --locked --path servers/context-loader` failed ({status})");
    }
    let binary = crate::target_dir()
        .join("xtask/install/bin")
        .join(format!("context-loader{}", std::env::consts::EXE_SUFFIX));
    if !binary.is_file() {
        bail!(
            "cargo install succeeded but {} is missing",
            binary.display()
        );
    }
    Ok(INSTALLED.get_or_init(|| binary).clone())
}

/// The README's install line, into target/xtask/install.
fn install_command(root: &Path) -> Command {
    let target = crate::target_dir();
    let prefix = target.join("xtask/install");
    let args = [
        "install",
        "--locked",
        "--force",
        "--path",
        "servers/context-loader",
        "--root",
    ];
    eprintln!(
        "$ CARGO_TARGET_DIR={} cargo {} {}",
        target.display(),
        args.join(" "),
        prefix.display()
    );
    let mut command = crate::cargo_command();
    command
        .args(args)
        .arg(&prefix)
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(root);
    command
}

/// The install check: the installed binary's `--version`, then a stdio session.
pub fn run(root: &Path) -> anyhow::Result<()> {
    let binary = release_binary(root)?;
    check_version(&binary)?;
    let folder = root.join("servers/context-loader");
    let mut command = Command::new(&binary);
    command.args(["--root"]).arg(&folder).arg("stdio");
    let (mut session, init) = StdioSession::start(command)?;
    check_initialize(&init)?;
    let names = probe::tool_names(&session.request("tools/list", json!({}))?);
    if !names.iter().any(|n| n == "file-tokens") || names.len() < 5 {
        bail!("the installed binary lists too few tools: {names:?}");
    }
    session.close()?;
    eprintln!(
        "installed {} answers --version, initialize and tools/list ({} tools)",
        binary.display(),
        names.len()
    );
    Ok(())
}

/// `--version` prints `context-loader X.Y.Z (model catalog as of YYYY-MM-DD)` with
/// this crate's version and the shipped catalog's date.
pub fn check_version(binary: &Path) -> anyhow::Result<()> {
    let out = Command::new(binary)
        .arg("--version")
        .output()
        .with_context(|| format!("cannot run {} --version", binary.display()))?;
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let as_of = &context_budget::Catalog::builtin().as_of;
    let expected = format!(
        "context-loader {} (model catalog as of {as_of})",
        server_version()
    );
    if !out.status.success() || printed != expected {
        bail!("--version printed {printed:?}, expected {expected:?}");
    }
    Ok(())
}

/// The server crate's version, from its Cargo.toml (xtask's own is another crate's).
pub fn server_version() -> String {
    let manifest = include_str!("../../servers/context-loader/Cargo.toml");
    manifest
        .lines()
        .find_map(|line| line.strip_prefix("version = "))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_default()
}

/// `initialize` named our server and offered tools.
pub fn check_initialize(init: &serde_json::Value) -> anyhow::Result<()> {
    if init["serverInfo"]["name"].as_str().is_none() || init["capabilities"]["tools"].is_null() {
        bail!("initialize did not name the server or offer tools: {init}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent_of(pid: u32) -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    }

    /// What `set_release_build_nice` renices and `stop_release_build` kills: a process's
    /// children and theirs (cargo's rustc and the linker it starts), parents first.
    #[test]
    fn descendants_reach_grandchildren_parents_first() {
        let mut child = Command::new("sh")
            .args(["-c", "sh -c 'sleep 5' & wait"])
            .spawn()
            .expect("sh");
        let deadline = Instant::now() + std::time::Duration::from_secs(5);
        let mut found = descendants(child.id());
        while found.len() < 2 && Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
            found = descendants(child.id());
        }
        let parents: Vec<Option<u32>> = found.iter().map(|&pid| parent_of(pid)).collect();
        kill_tree(child.id());
        let _ = child.kill();
        let _ = child.wait();
        assert!(found.len() >= 2, "child and grandchild, got {found:?}");
        assert_eq!(parents[0], Some(child.id()));
        assert_eq!(parents[1], Some(found[0]), "{found:?}");
        // The grandchild (reparented once its parent died) is gone or a zombie. A
        // SIGKILL is delivered asynchronously: the process may still show `R` for a
        // moment after `kill`, so the state is polled (up to 2 s) before asserting.
        let state_of = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .map(|(_, rest)| rest.trim_start().to_owned())
                })
        };
        let deadline = Instant::now() + std::time::Duration::from_secs(2);
        let mut state = state_of(found[1]);
        while state.as_deref().is_some_and(|s| !s.starts_with('Z')) && Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
            state = state_of(found[1]);
        }
        assert!(
            state.as_deref().is_none_or(|s| s.starts_with('Z')),
            "kill_tree left {state:?}"
        );
    }
}
