//! `cargo xtask ci` step: the e2e client suite through nginx (the shipped reference
//! config in deploy/nginx/) in front of two stateless replicas. The test itself
//! (servers/context-loader/tests/behind_nginx.rs, a module of the `tests` binary) starts the replicas and nginx on
//! free loopback ports; this step makes sure nginx is installed and runs it.

use std::process::Command;

use anyhow::{Context, bail};

pub fn run() -> anyhow::Result<()> {
    ensure_nginx()?;
    crate::ignored_tests("behind_nginx::", &[])
}

fn nginx_installed() -> bool {
    Command::new("nginx")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `apt-get`, through `sudo -n` when not root (e.g. GitHub's runners).
pub fn apt_get() -> Command {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if root {
        Command::new("apt-get")
    } else {
        let mut sudo = Command::new("sudo");
        sudo.args(["-n", "apt-get"]);
        sudo
    }
}

/// Install nginx from Debian's packages when it is missing (CI machines are fresh).
fn ensure_nginx() -> anyhow::Result<()> {
    if nginx_installed() {
        return Ok(());
    }
    apt_install(&["nginx"], "the proxy test")?;
    if !nginx_installed() {
        bail!("nginx was installed but `nginx -v` still fails");
    }
    Ok(())
}

/// `apt-get install -y PACKAGES` (after `apt-get update` if the first try fails: a
/// fresh machine may have no package lists); `why` names what needs them.
pub fn apt_install(packages: &[&str], why: &str) -> anyhow::Result<()> {
    eprintln!("apt-get install -y {}", packages.join(" "));
    let install = || {
        apt_get()
            .args(["install", "-y", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .context("cannot run apt-get")
    };
    if !install()?.success() {
        // A fresh machine may have no package lists yet.
        let updated = apt_get()
            .arg("update")
            .status()
            .context("cannot run apt-get update")?;
        if !updated.success() || !install()?.success() {
            bail!(
                "could not install {} with apt-get (needed for {why})",
                packages.join(" ")
            );
        }
    }
    Ok(())
}
