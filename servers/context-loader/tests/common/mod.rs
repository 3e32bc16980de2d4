//! The e2e harness shared by every test file: start the built binary, connect rmcp's
//! client over stdio or streamable HTTP, call tools, run the CLI. Each test file uses
//! part of it, hence the dead-code allowance.
#![allow(dead_code)]

use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub const BIN: &str = env!("CARGO_BIN_EXE_context-loader");
/// A guard against hangs, not a performance claim.
pub const PATIENCE: Duration = Duration::from_secs(30);

pub type Client = RunningService<RoleClient, ()>;

/// A server process and a connected client; the process dies with it.
pub struct Connection {
    pub client: Client,
    _server: Option<Child>,
}

#[derive(Clone, Copy, Debug)]
pub enum Transport {
    Stdio,
    Http,
    HttpStateless,
}

pub const ALL: [Transport; 3] = [Transport::Stdio, Transport::Http, Transport::HttpStateless];

pub async fn connect(transport: Transport, extra_args: &[&str]) -> Connection {
    connect_with_env(transport, extra_args, &[]).await
}

/// [`connect`] with extra environment variables for the server process.
pub async fn connect_with_env(
    transport: Transport,
    extra_args: &[&str],
    env: &[(&str, &str)],
) -> Connection {
    match transport {
        Transport::Stdio => {
            let mut command = Command::new(BIN);
            command
                .args(extra_args)
                .envs(env.iter().copied())
                .arg("stdio")
                .stderr(Stdio::null());
            let child = TokioChildProcess::new(command).expect("spawn stdio server");
            let client = tokio::time::timeout(PATIENCE, ().serve(child))
                .await
                .expect("stdio initialize timed out")
                .expect("stdio initialize");
            Connection {
                client,
                _server: None,
            }
        }
        Transport::Http | Transport::HttpStateless => {
            let mut args = vec!["http", "--bind", "127.0.0.1:0"];
            if matches!(transport, Transport::HttpStateless) {
                args.push("--stateless");
            }
            let (server, url) = spawn_http_with_env(extra_args, &args, env).await;
            let client = tokio::time::timeout(PATIENCE, ().serve(http_transport(url)))
                .await
                .expect("http initialize timed out")
                .expect("http initialize");
            Connection {
                client,
                _server: Some(server),
            }
        }
    }
}

/// Start `context-loader http` on a free loopback port and read the URL it logs.
pub async fn spawn_http(global_args: &[&str], args: &[&str]) -> (Child, String) {
    spawn_http_with_env(global_args, args, &[]).await
}

/// [`spawn_http`] with extra environment variables for the server process.
pub async fn spawn_http_with_env(
    global_args: &[&str],
    args: &[&str],
    env: &[(&str, &str)],
) -> (Child, String) {
    // Dropping the handle detaches the task, which keeps draining stderr so the
    // server never blocks on a full pipe.
    let (server, url, _log) = spawn_http_logged(global_args, args, env).await;
    (server, url)
}

/// Start `context-loader http` and read the URL it logs (text or JSON log format);
/// the task collects every later stderr line, for tests that read the log.
pub async fn spawn_http_logged(
    global_args: &[&str],
    args: &[&str],
    env: &[(&str, &str)],
) -> (Child, String, tokio::task::JoinHandle<Vec<String>>) {
    let mut server = Command::new(BIN)
        .args(global_args)
        .args(args)
        .envs(env.iter().copied())
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn http server");
    let stderr = server.stderr.take().expect("stderr is piped");
    let mut lines = BufReader::new(stderr).lines();
    let url = tokio::time::timeout(PATIENCE, async {
        while let Some(line) = lines.next_line().await.expect("read server stderr") {
            if let Some(at) = line.find("listening on http://") {
                let rest = &line[at + "listening on ".len()..];
                // A JSON log line ends the message with a quote.
                return rest[..rest.find('"').unwrap_or(rest.len())]
                    .trim()
                    .to_string();
            }
        }
        panic!("server exited without listening");
    })
    .await
    .expect("server did not report its URL");
    let log = tokio::spawn(async move {
        let mut all = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            all.push(line);
        }
        all
    });
    (server, url, log)
}

pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let args: JsonObject = args.as_object().cloned().expect("arguments are an object");
    tokio::time::timeout(
        PATIENCE,
        client.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args)),
    )
    .await
    .expect("tool call timed out")
    .expect("tool call returned a result")
}

pub fn structured(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .expect("structuredContent")
}

/// The text content parsed as JSON: clients that ignore structuredContent see this.
pub fn text_json(result: &CallToolResult) -> Value {
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .expect("text content");
    serde_json::from_str(&text.text).expect("text content is JSON")
}

pub fn run_cli(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    run_cli_with_env(args, stdin, &[])
}

/// [`run_cli`] with extra environment variables.
pub fn run_cli_with_env(
    args: &[&str],
    stdin: Option<&str>,
    env: &[(&str, &str)],
) -> (i32, String, String) {
    use std::io::Write;
    let mut child = std::process::Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cli");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .expect("write stdin");
    drop(input);
    let out = child.wait_with_output().expect("cli output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// rmcp's streamable-HTTP client for `url`. reqwest is built with
/// `rustls-no-provider` (the server's Anthropic client picks ring), so every HTTP
/// client in a test process must install a TLS provider first: this does, once.
pub fn http_transport(url: impl Into<String>) -> StreamableHttpClientTransport<reqwest::Client> {
    install_tls_provider();
    StreamableHttpClientTransport::from_uri(url.into())
}

/// Install ring as the process's TLS provider (idempotent); see [`http_transport`].
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
