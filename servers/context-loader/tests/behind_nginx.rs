//! The e2e client suite through a real nginx using the shipped reference config
//! (deploy/nginx/context-loader.conf) in front of two stateless replicas.
//!
//! Needs the `nginx` binary, so it is `#[ignore]`d in a plain `cargo test`;
//! `cargo xtask ci` installs nginx when missing and runs it with `--ignored`.
//! Everything listens on loopback ports picked at run time; nginx runs in the
//! foreground with its prefix, pid file and logs under target/.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use test_support::client::http_transport;
use test_support::{Binary, PATIENCE, call, http1, structured};
use tokio::process::{Child, Command};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

const REFERENCE_CONFIG: &str = include_str!("../../../deploy/nginx/context-loader.conf");

/// nginx in the foreground; stopped when dropped.
struct Nginx {
    child: Child,
    prefix: PathBuf,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM: the master stops its workers and then exits. Killing the master
        // outright would orphan the workers (still holding the port).
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if !matches!(self.child.try_wait(), Ok(None)) {
                    // Keep the logs of a failed run for reading; drop a passing one's.
                    if !std::thread::panicking() {
                        let _ = std::fs::remove_dir_all(&self.prefix);
                    }
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = self.child.start_kill();
    }
}

fn free_loopback_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// The reference config with its upstreams and listen port pointed at this run.
fn site_config(replicas: &[String], port: u16) -> String {
    let mut config = REFERENCE_CONFIG.to_string();
    for (placeholder, replica) in ["127.0.0.1:8787", "127.0.0.1:8788"].iter().zip(replicas) {
        let line = format!("server {placeholder} ");
        assert!(config.contains(&line), "reference config lost `{line}`");
        config = config.replace(&line, &format!("server {replica} "));
    }
    assert!(
        config.contains("listen 80;"),
        "reference config lost `listen 80;`"
    );
    config.replace("listen 80;", &format!("listen 127.0.0.1:{port};"))
}

fn main_config(prefix: &Path) -> String {
    let p = prefix.display();
    format!(
        "worker_processes 1;\npid {p}/nginx.pid;\nerror_log {p}/error.log info;\n\
         events {{ worker_connections 256; }}\n\
         http {{\n  access_log {p}/access.log;\n  client_body_temp_path {p}/body;\n  \
         proxy_temp_path {p}/proxy;\n  fastcgi_temp_path {p}/fastcgi;\n  \
         uwsgi_temp_path {p}/uwsgi;\n  scgi_temp_path {p}/scgi;\n  \
         include {p}/context-loader.conf;\n}}\n"
    )
}

async fn start_nginx(replicas: &[String]) -> (Nginx, u16) {
    let prefix =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nginx-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&prefix);
    std::fs::create_dir_all(prefix.join("logs")).expect("nginx prefix");
    let port = free_loopback_port();
    std::fs::write(
        prefix.join("context-loader.conf"),
        site_config(replicas, port),
    )
    .expect("site");
    let conf = prefix.join("nginx.conf");
    std::fs::write(&conf, main_config(&prefix)).expect("nginx.conf");
    let child = Command::new("nginx")
        .arg("-p")
        .arg(&prefix)
        .arg("-c")
        .arg(&conf)
        .args(["-g", "daemon off;"])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start nginx (cargo xtask ci installs it: apt-get install -y nginx)");
    let nginx = Nginx { child, prefix };
    // Ready when it answers the health probe through to a replica.
    let started = Instant::now();
    loop {
        let addr = format!("127.0.0.1:{port}");
        let probe = http1::try_request(&addr, &addr, "GET", "/healthz", &[], b"").await;
        if probe.is_ok_and(|reply| reply.status == 200) {
            break;
        }
        let log = std::fs::read_to_string(nginx.prefix.join("error.log")).unwrap_or_default();
        assert!(started.elapsed() < PATIENCE, "nginx never came up:\n{log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (nginx, port)
}

/// Tool calls a replica has served, from its own /metrics.
async fn calls_served(replica: &str) -> u64 {
    let reply = http1::request(replica, "GET", "/metrics", &[], b"").await;
    assert_eq!(reply.status, 200);
    reply
        .body
        .lines()
        .filter(|l| l.starts_with("mcp_tool_calls_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[tokio::test]
#[ignore = "needs nginx; run by `cargo xtask ci` (installs it)"]
async fn client_suite_through_nginx_across_two_stateless_replicas() {
    let (_a, url_a) = BIN.spawn_http(&[], &["--stateless"]).await;
    let (_b, url_b) = BIN.spawn_http(&[], &["--stateless"]).await;
    let replicas: Vec<String> = [&url_a, &url_b]
        .iter()
        .map(|u| {
            u.trim_start_matches("http://")
                .trim_end_matches("/mcp")
                .to_string()
        })
        .collect();
    let (_nginx, port) = start_nginx(&replicas).await;
    let url = format!("http://127.0.0.1:{port}/mcp");

    let client = tokio::time::timeout(PATIENCE, ().serve(http_transport(url)))
        .await
        .expect("initialize through nginx timed out")
        .expect("initialize through nginx");
    let info = client.peer_info().expect("initialize result");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("context-loader")
    );
    assert!(info.capabilities.tools.is_some());

    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert!(names.contains(&"count-tokens".to_string()), "{names:?}");
    assert!(names.contains(&"list-models".to_string()), "{names:?}");

    // Enough calls that both replicas serve some (stateless: any replica will do).
    for _ in 0..6 {
        let ok = call(
            &client,
            "count-tokens",
            json!({"text": "hello world", "model": "gpt-4o"}),
        )
        .await;
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(structured(&ok)["token_count"], 2);
        assert_eq!(structured(&ok)["exact"], true);
        let refused = call(
            &client,
            "count-tokens",
            json!({"text": "hi", "model": "gpt-4.5"}),
        )
        .await;
        assert_eq!(refused.is_error, Some(true));
        assert_eq!(structured(&refused)["error_code"], "UNSUPPORTED_MODEL");
    }
    let unknown = client
        .call_tool(CallToolRequestParams::new("no-such-tool"))
        .await
        .expect_err("unknown tool is a JSON-RPC error");
    assert!(
        unknown.to_string().contains("-32602") || unknown.to_string().contains("not found"),
        "{unknown}"
    );

    let served = [
        calls_served(&replicas[0]).await,
        calls_served(&replicas[1]).await,
    ];
    assert_eq!(
        served.iter().sum::<u64>(),
        13,
        "every call reached a replica: {served:?}"
    );
    assert!(
        served.iter().all(|&n| n > 0),
        "nginx balanced across both replicas: {served:?}"
    );

    // One address flooding the endpoint meets the reference config's per-client
    // limits (50 r/s, bursts of 200) as 429s from nginx, and the replicas stay up.
    let addr = format!("127.0.0.1:{port}");
    let body = test_support::client::initialize_request("flood").to_string();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for _ in 0..600 {
        let reply = http1::try_request(&addr, &addr, "POST", "/mcp", &[], body.as_bytes())
            .await
            .expect("nginx answers");
        *statuses.entry(reply.status).or_default() += 1;
    }
    assert!(
        statuses.get(&429).is_some_and(|n| *n > 0) && statuses.get(&200).is_some_and(|n| *n >= 200),
        "the burst passes, the flood beyond it is limited: {statuses:?}"
    );
    let healthy = http1::request(&replicas[0], "GET", "/healthz", &[], b"").await;
    assert_eq!(healthy.status, 200);
}
