//! `cargo xtask image`: the container image (packaging/container/Containerfile) of the
//! release binary, built with podman from Debian's packages.
//!
//! Containers cannot run on these machines (crun is refused setrlimit) and no registry
//! is reachable, so the image is FROM scratch: xtask lays out rootfs/ with the binary,
//! the libraries `ldd` says it links, CA certificates, passwd/group entries for the
//! non-root user and busybox's wget (the HEALTHCHECK). The ci check (`check`) inspects
//! the image's config, then copies the image's own filesystem out (`podman image
//! mount`), bind-mounts it read-only and starts its entrypoint there with `chroot`, as
//! the image's user, with
//! exactly the image's command and environment: /healthz, /readyz, the HEALTHCHECK
//! command, an authenticated tools/call, a 401 without the token, SIGTERM.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::probe;

/// The image's user (uid:gid); not root, and not an id a host account is likely to own.
const USER: &str = "65532:65532";
/// The whole image, 95.7 MiB when set: the binary (90.5 MiB; most of it the
/// vocabularies as lookup tables prepared at build time and read in place, so a first
/// answer takes milliseconds), glibc's libraries (~3 MiB), busybox (2 MiB), CA
/// certificates (0.2 MiB). Then the eight tree-sitter grammars of the outlines (issue
/// 41: their parse tables, with the MCP App page) took it from 96.2 to 105.6 MiB, and
/// 16 codegen units for three crates before the fat-LTO link (Cargo.toml, issue 38) from
/// 106.2 to 108.7 MiB. A larger image means something unplanned came in.
const SIZE_BUDGET_MIB: f64 = 110.0;
const BINARY_IN_IMAGE: &str = "/usr/local/bin/context-loader";

fn ensure_tools() -> anyhow::Result<()> {
    let podman = || {
        Command::new("podman")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let mut missing = Vec::new();
    if !podman() {
        missing.push("podman");
    }
    if !Path::new("/bin/busybox").is_file() {
        missing.push("busybox-static");
    }
    if !Path::new("/etc/ssl/certs/ca-certificates.crt").is_file() {
        missing.push("ca-certificates");
    }
    if !missing.is_empty() {
        crate::nginx::apt_install(&missing, "the container image")?;
    }
    if !podman() {
        bail!("podman was installed but `podman --version` still fails");
    }
    Ok(())
}

fn podman(args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("podman")
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run podman")?;
    if !out.status.success() {
        bail!("`podman {}` failed ({})", args.join(" "), out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The image's name for this version.
pub fn tag() -> String {
    format!(
        "localhost/context-loader:{}",
        crate::install::server_version()
    )
}

/// The shared objects `binary` loads, as absolute paths (the dynamic loader too).
fn linked_libraries(binary: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let out = Command::new("ldd")
        .arg(binary)
        .output()
        .context("cannot run ldd")?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        // A static binary needs nothing: ldd says so and exits non-zero.
        if text.contains("not a dynamic executable") || text.contains("statically linked") {
            return Ok(Vec::new());
        }
        bail!("ldd {} failed: {text}", binary.display());
    }
    parse_ldd(&text)
}

/// The absolute paths in `ldd`'s output; a library ldd could not find is an error.
fn parse_ldd(text: &str) -> anyhow::Result<Vec<PathBuf>> {
    let mut libraries = Vec::new();
    for line in text.lines() {
        // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)`, or the loader as
        // `/lib64/ld-linux-x86-64.so.2 (0x...)`; the vDSO has no file.
        let path = match line.split_once("=>") {
            Some((_, right)) => right.split_whitespace().next(),
            None => line.split_whitespace().next(),
        };
        match path {
            Some(path) if path.starts_with('/') => libraries.push(PathBuf::from(path)),
            Some("not") => bail!("ldd: a library is missing: {line}"),
            _ => {}
        }
    }
    Ok(libraries)
}

/// Copy `from` (following symlinks) to `rootfs` + `at`, with its permissions.
fn install_file(rootfs: &Path, from: &Path, at: &str) -> anyhow::Result<()> {
    let to = rootfs.join(at.trim_start_matches('/'));
    std::fs::create_dir_all(to.parent().context("a parent")?)?;
    std::fs::copy(from, &to)
        .with_context(|| format!("copy {} to {}", from.display(), to.display()))?;
    Ok(())
}

/// Lay out the build context and run `podman build`; the image's tag.
pub fn build(root: &Path) -> anyhow::Result<String> {
    ensure_tools()?;
    let binary = crate::install::release_binary(root)?;
    let context = crate::target_dir().join("xtask/image/context");
    crate::disk::remove_dir_if_present(&context)?;
    let rootfs = context.join("rootfs");
    install_file(&rootfs, &binary, BINARY_IN_IMAGE)?;
    let libraries = linked_libraries(&binary)?;
    for library in &libraries {
        install_file(&rootfs, library, &library.to_string_lossy())?;
    }
    install_file(&rootfs, Path::new("/bin/busybox"), "/usr/local/bin/wget")?;
    install_file(
        &rootfs,
        Path::new("/etc/ssl/certs/ca-certificates.crt"),
        "/etc/ssl/certs/ca-certificates.crt",
    )?;
    let (uid, gid) = USER.split_once(':').context("uid:gid")?;
    std::fs::write(
        rootfs.join("etc/passwd"),
        format!("context-loader:x:{uid}:{gid}:context-loader:/nonexistent:/sbin/nologin\n"),
    )?;
    std::fs::write(
        rootfs.join("etc/group"),
        format!("context-loader:x:{gid}:\n"),
    )?;
    eprintln!(
        "image rootfs: {} and {} linked libraries: {}",
        BINARY_IN_IMAGE,
        libraries.len(),
        libraries
            .iter()
            .map(|l| l.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );

    let tag = tag();
    let source = Command::new("git")
        .args(["remote", "get-url", "origin"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| format!("file://{}", root.display()));
    let revision = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let containerfile = root.join("packaging/container/Containerfile");
    let started = Instant::now();
    podman(&[
        "build",
        "--format",
        "docker",
        "--file",
        &containerfile.to_string_lossy(),
        "--build-arg",
        &format!("VERSION={}", crate::install::server_version()),
        "--build-arg",
        &format!("SOURCE={source}"),
        "--build-arg",
        &format!("REVISION={revision}"),
        "--tag",
        &tag,
        &context.to_string_lossy(),
    ])?;
    eprintln!("built {tag} in {:.1} s", started.elapsed().as_secs_f64());
    Ok(tag)
}

/// Build the image, check its config, run its entrypoint from its own filesystem.
pub fn check(root: &Path) -> anyhow::Result<()> {
    require_root("cargo xtask image")?;
    let tag = build(root)?;
    let image = inspect(&tag)?;
    let config = config_of(&image);
    check_config(&config, image["Size"].as_u64().unwrap_or(u64::MAX))?;
    let rootfs = crate::target_dir().join("xtask/image/extracted");
    extract(&tag, &rootfs)?;
    run_from_rootfs(&rootfs, &config)?;
    crate::disk::remove_scratch(&["xtask/image/context", "xtask/image/extracted"])
}

/// The image's run config (user, env, entrypoint, ...) with its HEALTHCHECK, which
/// podman's inspect reports beside `Config` rather than in it.
pub fn config_of(image: &Value) -> Value {
    let mut config = image["Config"].clone();
    if config["Healthcheck"].is_null() {
        config["Healthcheck"] = image["Healthcheck"].clone();
    }
    config
}

/// `podman image inspect`: the image's record (`Config`, `Size`, ...).
pub fn inspect(tag: &str) -> anyhow::Result<Value> {
    let inspect: Value = serde_json::from_str(&podman(&["image", "inspect", tag])?)?;
    inspect
        .get(0)
        .cloned()
        .context("podman image inspect: no image")
}

/// Copy the image's filesystem to `rootfs` (the mount itself is read-only and shared).
pub fn extract(tag: &str, rootfs: &Path) -> anyhow::Result<()> {
    crate::disk::remove_dir_if_present(rootfs)?;
    std::fs::create_dir_all(rootfs)?;
    let mounted = podman(&["image", "mount", tag])?;
    let copied = Command::new("cp")
        .args(["-a", &format!("{mounted}/."), &rootfs.to_string_lossy()])
        .status();
    podman(&["image", "unmount", tag])?;
    if !copied.is_ok_and(|s| s.success()) {
        bail!("could not copy the image's filesystem from {mounted}");
    }
    Ok(())
}

fn check_config(config: &Value, size: u64) -> anyhow::Result<()> {
    let expect = |what: &str, got: &Value, wanted: Value| -> anyhow::Result<()> {
        if *got != wanted {
            bail!("image {what}: {got}, expected {wanted}");
        }
        Ok(())
    };
    expect("user", &config["User"], json!(USER))?;
    expect(
        "entrypoint",
        &config["Entrypoint"],
        json!([BINARY_IN_IMAGE]),
    )?;
    expect("command", &config["Cmd"], json!(["http"]))?;
    if config["ExposedPorts"].get("8787/tcp").is_none() {
        bail!(
            "image exposes {}, expected 8787/tcp",
            config["ExposedPorts"]
        );
    }
    let labels = &config["Labels"];
    expect(
        "version label",
        &labels["org.opencontainers.image.version"],
        json!(crate::install::server_version()),
    )?;
    expect(
        "licence label",
        &labels["org.opencontainers.image.licenses"],
        json!("MIT OR Apache-2.0"),
    )?;
    if labels["org.opencontainers.image.source"]
        .as_str()
        .is_none_or(str::is_empty)
    {
        bail!("image has no source label: {labels}");
    }
    let healthcheck = config["Healthcheck"]["Test"].to_string();
    if !healthcheck.contains("/healthz") {
        bail!("image HEALTHCHECK does not probe /healthz: {healthcheck}");
    }
    let mib = size as f64 / 1048576.0;
    if mib > SIZE_BUDGET_MIB {
        bail!("image is {mib:.1} MiB, over its {SIZE_BUDGET_MIB} MiB budget");
    }
    eprintln!(
        "image config: user {USER}, entrypoint {BINARY_IN_IMAGE} http, port 8787, labels, healthcheck; {mib:.1} MiB of {SIZE_BUDGET_MIB} MiB"
    );
    Ok(())
}

/// The image's `Env` as (name, value) pairs.
pub fn image_env(config: &Value) -> Vec<(String, String)> {
    config["Env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Running the image's entrypoint from its filesystem takes root (chroot, switching to
/// the image's user, files owned as a mount would own them): fail with that reason.
pub fn require_root(what: &str) -> anyhow::Result<()> {
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .context("cannot run id")?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        bail!(
            "{what} needs root (chroot into the image's filesystem as its user): run it as root, as ci does"
        );
    }
    Ok(())
}

/// `ARGV` run in `rootfs` as `user` with exactly `env`, the root filesystem read-only
/// (as `podman run --read-only` and the Deployment's readOnlyRootFilesystem make it):
/// a private mount namespace bind-mounts `rootfs` over itself read-only, then chroots.
/// unshare, sh and chroot each exec the next, so the server keeps the spawned pid.
pub fn in_image(rootfs: &Path, user: &str, env: &[(String, String)], argv: &[String]) -> Command {
    let mut command = Command::new("unshare");
    command
        .args(["--mount", "--propagation", "private", "--", "/bin/sh", "-c"])
        .arg(
            r#"r="$1"; u="$2"; shift 2
mount --bind "$r" "$r" && mount -o remount,bind,ro "$r" && exec chroot --userspec="$u" "$r" "$@""#,
        )
        .arg("sh")
        .arg(rootfs)
        .arg(user)
        .args(argv)
        .env_clear()
        // For sh to find mount and chroot; the image's PATH (in `env`) replaces it.
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .envs(env.iter().map(|(k, v)| (k, v)));
    command
}

fn run_from_rootfs(rootfs: &Path, config: &Value) -> anyhow::Result<()> {
    let env = image_env(config);
    let get = |name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .with_context(|| format!("the image sets no {name}"))
    };
    let bind = get("CONTEXT_LOADER_BIND")?;
    let host = get("CONTEXT_LOADER_ALLOWED_HOSTS")?;
    let host = host.split(',').next().unwrap_or_default().to_string();
    let token_file = get("CONTEXT_LOADER_AUTH_TOKEN_FILE")?;
    let user = config["User"].as_str().context("image user")?.to_string();
    let (uid, _) = user.split_once(':').context("uid:gid")?;

    // What a secret mount puts there: one token, readable by the image's user only.
    let token = format!("image-check-{}", std::process::id());
    let token_path = rootfs.join(token_file.trim_start_matches('/'));
    std::fs::create_dir_all(token_path.parent().context("parent")?)?;
    std::fs::write(&token_path, format!("{token}\n"))?;
    let status = Command::new("chown")
        .arg(uid)
        .arg(&token_path)
        .status()
        .context("chown")?;
    if !status.success() {
        bail!("cannot give the token file to uid {uid}");
    }

    let port = bind.rsplit(':').next().unwrap_or("8787");
    let authority = format!("127.0.0.1:{port}");
    if std::net::TcpStream::connect(&authority).is_ok() {
        bail!(
            "port {port} (the image's CONTEXT_LOADER_BIND) is already in use on this machine: stop what listens there"
        );
    }
    let mut argv: Vec<String> = config["Entrypoint"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    argv.extend(
        config["Cmd"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string)),
    );
    eprintln!(
        "$ chroot --userspec={user} {} {} (root read-only)",
        rootfs.display(),
        argv.join(" ")
    );
    let server = crate::spawned::HttpServer::start(in_image(rootfs, &user, &env, &argv))?;

    let healthz = probe::http(&authority, None, "GET", "/healthz", &[], "")?;
    if healthz.status != 200 {
        bail!("/healthz answered {}", healthz.status);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let readyz = probe::http(&authority, None, "GET", "/readyz", &[], "")?;
        if readyz.status == 200 {
            break;
        }
        if Instant::now() > deadline {
            bail!("/readyz still answered {} after 30 s", readyz.status);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // The image's own HEALTHCHECK command, run in the image as its user.
    let test: Vec<String> = config["Healthcheck"]["Test"]
        .as_array()
        .into_iter()
        .flatten()
        .skip(1) // "CMD"
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let healthy = in_image(rootfs, &user, &env, &test)
        .status()
        .context("run the HEALTHCHECK command")?;
    if !healthy.success() {
        bail!("the image's HEALTHCHECK failed ({healthy})");
    }

    let call = probe::call_request(
        7,
        "count-tokens",
        json!({"text": "hello from the image check"}),
    );
    let refused = probe::mcp_post(&authority, Some(&host), None, &call);
    match refused {
        Err(e) if e.to_string().contains("401") => {}
        other => bail!("tools/call without the token was not refused with 401: {other:?}"),
    }
    let result = probe::mcp_post(&authority, Some(&host), Some(&token), &call)?;
    let answer = probe::structured(&result)?;
    if answer["token_count"].as_u64().is_none_or(|t| t == 0) {
        bail!("count-tokens in the image: unexpected answer {answer}");
    }
    let status = server.stop()?;
    if !status.success() {
        bail!("the server in the image exited with {status} on SIGTERM");
    }
    eprintln!(
        "image filesystem (read-only): entrypoint started as {user}; /healthz, /readyz, HEALTHCHECK, 401 without token, authenticated tools/call, clean SIGTERM"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_output_gives_every_file_and_the_loader_but_not_the_vdso() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\
            \tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007f68)\n\
            \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f68)\n\
            \t/lib64/ld-linux-x86-64.so.2 (0x00007f68)\n";
        let paths = parse_ldd(text).expect("parsed");
        assert_eq!(
            paths,
            [
                "/lib/x86_64-linux-gnu/libgcc_s.so.1",
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/lib64/ld-linux-x86-64.so.2"
            ]
            .map(PathBuf::from)
        );
        let missing = parse_ldd("\tlibfoo.so.1 => not found\n").expect_err("missing");
        assert!(missing.to_string().contains("libfoo"), "{missing}");
    }
}
