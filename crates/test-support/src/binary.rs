//! The built server as a test starts it: over stdio or HTTP with an rmcp client, as
//! an HTTP server whose URL (and log) is read from its stderr, as raw stdio, or as a
//! one-shot CLI. Every process is killed when its handle drops.

use std::process::Stdio;

use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use crate::PATIENCE;
use crate::client::{http_transport, initialize_request};
use crate::http1::{authority, post_mcp};

#[derive(Clone, Copy, Debug)]
pub enum Transport {
    Stdio,
    Http,
    HttpStateless,
}

pub const ALL: [Transport; 3] = [Transport::Stdio, Transport::Http, Transport::HttpStateless];

/// One `tools/call` as it crossed the wire: the messages the server sent before the
/// response, in the order it sent them, and the response.
pub struct WireCall {
    pub before: Vec<Value>,
    pub response: Value,
}

impl WireCall {
    /// `(progress, total, progressToken)` of each `notifications/progress`, in order.
    pub fn progress(&self) -> Vec<(f64, Option<f64>, Value)> {
        self.before
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .map(|m| {
                let p = &m["params"];
                (
                    p["progress"].as_f64().expect("progress is a number"),
                    p["total"].as_f64(),
                    p["progressToken"].clone(),
                )
            })
            .collect()
    }
}

/// A server process and a connected client; the process dies with it.
pub struct Connection<H: ClientHandler = ()> {
    pub client: RunningService<RoleClient, H>,
    _server: Option<Child>,
}

/// The server binary under test (its path from `env!("CARGO_BIN_EXE_<name>")`).
/// `global_args` go before the subcommand (`--specs-dir`, `--max-input-bytes`, ...).
#[derive(Clone, Copy, Debug)]
pub struct Binary(&'static str);

impl Binary {
    pub const fn new(path: &'static str) -> Binary {
        Binary(path)
    }

    pub fn path(self) -> &'static str {
        self.0
    }

    /// A new command for the binary (for tests that need their own settings).
    pub fn command(self) -> std::process::Command {
        std::process::Command::new(self.0)
    }

    pub async fn connect(self, transport: Transport, global_args: &[&str]) -> Connection {
        self.connect_as((), transport, global_args, &[]).await
    }

    /// [`Binary::connect`] with extra environment variables for the server process.
    pub async fn connect_with_env(
        self,
        transport: Transport,
        global_args: &[&str],
        env: &[(&str, &str)],
    ) -> Connection {
        self.connect_as((), transport, global_args, env).await
    }

    /// Start the server and connect a client whose `handler` sees what the server
    /// sends unasked (progress, logging).
    pub async fn connect_as<H: ClientHandler>(
        self,
        handler: H,
        transport: Transport,
        global_args: &[&str],
        env: &[(&str, &str)],
    ) -> Connection<H> {
        match transport {
            Transport::Stdio => {
                let mut command = Command::new(self.0);
                command
                    .args(global_args)
                    .envs(env.iter().copied())
                    .arg("stdio")
                    .stderr(Stdio::null());
                let child = TokioChildProcess::new(command).expect("spawn stdio server");
                let client = tokio::time::timeout(PATIENCE, handler.serve(child))
                    .await
                    .expect("stdio initialize timed out")
                    .expect("stdio initialize");
                Connection {
                    client,
                    _server: None,
                }
            }
            Transport::Http | Transport::HttpStateless => {
                let flags: &[&str] = match transport {
                    Transport::HttpStateless => &["--stateless"],
                    _ => &[],
                };
                let (server, url, _log) = self.spawn_http_logged(global_args, flags, env).await;
                let client = tokio::time::timeout(PATIENCE, handler.serve(http_transport(url)))
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

    /// Start `<global_args> http --bind 127.0.0.1:0 <http_flags>` (a free loopback
    /// port: tests never listen elsewhere) and read the URL it logs.
    pub async fn spawn_http(self, global_args: &[&str], http_flags: &[&str]) -> (Child, String) {
        // Dropping the log handle detaches the task, which keeps draining stderr so
        // the server never blocks on a full pipe.
        let (server, url, _log) = self.spawn_http_logged(global_args, http_flags, &[]).await;
        (server, url)
    }

    /// [`Binary::spawn_http`] with environment variables, whose task collects every
    /// stderr line after the URL (text or JSON log format), for tests that read the log.
    pub async fn spawn_http_logged(
        self,
        global_args: &[&str],
        http_flags: &[&str],
        env: &[(&str, &str)],
    ) -> (Child, String, JoinHandle<Vec<String>>) {
        let mut server = Command::new(self.0)
            .args(global_args)
            .args(["http", "--bind", "127.0.0.1:0"])
            .args(http_flags)
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

    /// Run the CLI with `stdin` (empty if `None`): (exit code, stdout, stderr).
    pub fn run_cli(self, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
        self.run_cli_with_env(args, stdin, &[])
    }

    /// [`Binary::run_cli`] with extra environment variables.
    pub fn run_cli_with_env(
        self,
        args: &[&str],
        stdin: Option<&str>,
        env: &[(&str, &str)],
    ) -> (i32, String, String) {
        use std::io::Write;
        let mut child = self
            .command()
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

    /// Call `tool` with `arguments` and a `progressToken`, reading the raw stdio lines
    /// or the HTTP response's SSE events. For tests of notification order: rmcp's
    /// client runs each notification's handler in a task of its own, so a handler can
    /// see them in another order than the server sent them.
    pub async fn call_on_the_wire(
        self,
        transport: Transport,
        global_args: &[&str],
        tool: &str,
        arguments: Value,
        progress_token: &str,
    ) -> WireCall {
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments, "_meta": {"progressToken": progress_token}}});
        let mut messages = match transport {
            Transport::Stdio => {
                let mut stdio = self.raw_stdio_with(global_args);
                stdio.initialize("wire-test").await;
                stdio.send_json(&call).await;
                let mut messages = vec![stdio.next().await];
                while messages.last().is_some_and(|m| m["id"] != 2) {
                    messages.push(stdio.next().await);
                }
                messages
            }
            Transport::Http | Transport::HttpStateless => {
                let flags: &[&str] = match transport {
                    Transport::HttpStateless => &["--stateless"],
                    _ => &[],
                };
                let (_server, url) = self.spawn_http(global_args, flags).await;
                let addr = authority(&url);
                let init = post_mcp(
                    &addr,
                    &[],
                    initialize_request("wire-test").to_string().as_bytes(),
                )
                .await;
                assert_eq!(init.status, 200, "{init:?}");
                let session = init.header("mcp-session-id").map(str::to_owned);
                let mut headers = vec![("MCP-Protocol-Version", "2025-06-18")];
                if let Some(id) = session.as_deref() {
                    headers.push(("Mcp-Session-Id", id));
                }
                let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
                post_mcp(&addr, &headers, initialized.to_string().as_bytes()).await;
                let reply = post_mcp(&addr, &headers, call.to_string().as_bytes()).await;
                assert_eq!(reply.status, 200, "{reply:?}");
                reply.messages()
            }
        };
        let response = messages.pop().expect("a response");
        assert_eq!(response["id"], 2, "{response}");
        WireCall {
            before: messages,
            response,
        }
    }

    /// `stdio` with no client: the test writes JSON-RPC lines and reads the replies.
    pub fn raw_stdio(self) -> RawStdio {
        self.raw_stdio_with(&[])
    }

    /// [`Binary::raw_stdio`] with global flags before `stdio`.
    pub fn raw_stdio_with(self, global_args: &[&str]) -> RawStdio {
        let mut child = Command::new(self.0)
            .args(global_args)
            .arg("stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn stdio");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        RawStdio {
            child,
            stdin,
            stdout,
        }
    }
}

/// A stdio server spoken to line by line.
pub struct RawStdio {
    pub child: Child,
    pub stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl RawStdio {
    /// Initialize (as `client_name`) and send `notifications/initialized`.
    pub async fn initialize(&mut self, client_name: &str) {
        self.send_json(&initialize_request(client_name)).await;
        let init = self.next().await;
        assert_eq!(init["id"], 1, "{init}");
        self.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// Write `line` and a newline.
    pub async fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).await.expect("write");
        self.stdin.write_all(b"\n").await.expect("newline");
        self.stdin.flush().await.expect("flush");
    }

    pub async fn send_json(&mut self, message: &Value) {
        self.send(message.to_string().as_bytes()).await;
    }

    /// The next reply line, as JSON.
    pub async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(PATIENCE, self.stdout.next_line())
            .await
            .expect("no reply in time")
            .expect("read")
            .expect("server closed stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("reply is not JSON ({e}): {line}"))
    }

    /// Send `message` and read the reply.
    pub async fn exchange(&mut self, message: &Value) -> Value {
        self.send_json(message).await;
        self.next().await
    }

    /// The server is alive and in order: a ping is answered.
    pub async fn assert_alive(&mut self, id: u64) {
        let pong = self
            .exchange(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        assert_eq!(pong["id"], id, "{pong}");
        assert!(pong.get("result").is_some(), "{pong}");
    }
}
