//! Minimal MCP clients for the packaging checks (install, bundle, image, kube): they
//! talk to a binary started exactly as a package starts it, so they use nothing of
//! ours but the wire protocol. Stdio is newline-delimited JSON-RPC; HTTP is one
//! HTTP/1.1 request per connection on loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};

/// How long any one answer may take before the check fails (bounded, never hangs).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

pub fn initialize_request(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "xtask-packaging", "version": "1"}}})
}

/// A `tools/call` request.
pub fn call_request(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
}

/// A server process spoken to over its stdin/stdout; killed on drop.
pub struct StdioSession {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next_id: u64,
}

impl StdioSession {
    /// Spawn `command` (stdin/stdout piped, stderr inherited) and run `initialize`.
    pub fn start(mut command: Command) -> anyhow::Result<(StdioSession, Value)> {
        let program = format!("{:?}", command.get_program());
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {program}"))?;
        let stdin = child.stdin.take().context("stdin is piped")?;
        let stdout: ChildStdout = child.stdout.take().context("stdout is piped")?;
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut session = StdioSession {
            child,
            stdin: Some(stdin),
            lines,
            next_id: 1,
        };
        let init = session.request_value(initialize_request(0))?;
        session.notify("notifications/initialized")?;
        Ok((session, init))
    }

    fn write(&mut self, message: &Value) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().context("stdin is closed")?;
        writeln!(stdin, "{message}").context("write to the server's stdin")?;
        stdin.flush().context("write to the server's stdin")
    }

    fn notify(&mut self, method: &str) -> anyhow::Result<()> {
        self.write(&json!({"jsonrpc": "2.0", "method": method}))
    }

    fn request_value(&mut self, request: Value) -> anyhow::Result<Value> {
        let id = request["id"].clone();
        self.write(&request)?;
        loop {
            let line = self.lines.recv_timeout(ANSWER_TIMEOUT).map_err(|_| {
                anyhow::anyhow!(
                    "no answer to {} within {ANSWER_TIMEOUT:?}",
                    request["method"]
                )
            })?;
            let message: Value = serde_json::from_str(&line)
                .with_context(|| format!("the server wrote a line that is not JSON: {line}"))?;
            // Skip notifications (logging, progress) until our answer arrives.
            if message["id"] == id {
                return result_of(message);
            }
        }
    }

    /// Send `method` with `params`; the `result`, or an error for a JSON-RPC error.
    pub fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let request =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        self.request_value(request)
    }

    /// Close stdin (how a client ends a stdio session) and wait, bounded, for a clean
    /// exit.
    pub fn close(mut self) -> anyhow::Result<()> {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                if !status.success() {
                    bail!("the server exited with {status} when its stdin closed");
                }
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        bail!("the server did not exit within 10 s of its stdin closing")
    }
}

impl Drop for StdioSession {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The `result` of a JSON-RPC answer, or its `error` as a failure.
fn result_of(message: Value) -> anyhow::Result<Value> {
    if let Some(error) = message.get("error") {
        bail!("JSON-RPC error: {error}");
    }
    message
        .get("result")
        .cloned()
        .with_context(|| format!("an answer without result: {message}"))
}

/// A tool call's structured result, failing on `isError`.
pub fn structured(result: &Value) -> anyhow::Result<&Value> {
    if result["isError"] == json!(true) {
        bail!("the tool answered an error: {result}");
    }
    result
        .get("structuredContent")
        .with_context(|| format!("no structuredContent in {result}"))
}

/// The names `tools/list` returned.
pub fn tool_names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// An HTTP/1.1 answer: status code and body.
pub struct Reply {
    pub status: u16,
    pub body: String,
}

/// One HTTP/1.1 request to `authority` (host:port on loopback), `Connection: close`,
/// with `Host: host` (default: the authority).
pub fn http(
    authority: &str,
    host: Option<&str>,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> anyhow::Result<Reply> {
    let mut stream =
        TcpStream::connect(authority).with_context(|| format!("cannot connect to {authority}"))?;
    stream.set_read_timeout(Some(ANSWER_TIMEOUT))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
        host.unwrap_or(authority),
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    let mut raw = Vec::new();
    stream
        .take(16 << 20)
        .read_to_end(&mut raw)
        .with_context(|| format!("reading the answer to {method} {path}"))?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .with_context(|| format!("a malformed HTTP answer: {text}"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .with_context(|| format!("no status in {head}"))?;
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Ok(Reply { status, body })
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// POST a JSON-RPC request to `/mcp` (stateless: no session) and return its
/// `result`, reading a JSON body or the first SSE `data:` line that answers it.
pub fn mcp_post(
    authority: &str,
    host: Option<&str>,
    token: Option<&str>,
    request: &Value,
) -> anyhow::Result<Value> {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    let reply = http(
        authority,
        host,
        "POST",
        "/mcp",
        &headers,
        &request.to_string(),
    )?;
    if reply.status != 200 {
        bail!("POST /mcp answered {}: {}", reply.status, reply.body);
    }
    let answer = reply
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .chain(std::iter::once(reply.body.trim()))
        .filter_map(|text| serde_json::from_str::<Value>(text).ok())
        .find(|message| message["id"] == request["id"])
        .with_context(|| format!("no answer to id {} in: {}", request["id"], reply.body))?;
    result_of(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_are_joined_and_end_at_the_zero_chunk() {
        assert_eq!(
            dechunk("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
            "hello world"
        );
        assert_eq!(dechunk("0\r\n\r\n"), "");
    }
}
