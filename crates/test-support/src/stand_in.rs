//! A stand-in MCP server on loopback whose `tools/list` answer is whatever bytes a
//! test gives: a good list (as large as it likes), or an answer no MCP client can
//! read ([`Unreadable`]). It answers `initialize` (echoing the client's protocol
//! version), refuses every other request with -32601, and ignores notifications.
//! Served over streamable HTTP (the answer as a JSON body or as one SSE event), and
//! over TCP for a stdio command to bridge to (bash's `/dev/tcp`, as
//! [`crate::discover_only`] does).

use std::sync::Arc;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The bytes of the `tools/list` answer to the request `id`, without a newline.
pub type Answer = Arc<dyn Fn(u64) -> Vec<u8> + Send + Sync>;

/// `count` tools as tools/list lists them, each with `parameters` described string
/// parameters: slow to count when many (2,000 of 30: ~5.9 MB as JSON, ~6.5 s of
/// CPU for Gemini in a debug build).
pub fn described_tools(count: usize, parameters: usize) -> Vec<Value> {
    (0..count)
        .map(|i| {
            let properties: serde_json::Map<String, Value> = (0..parameters)
                .map(|k| {
                    let about = format!(
                        "parameter {k} of tool {i}: words that cost tokens {}",
                        k * i
                    );
                    (
                        format!("p{k}"),
                        json!({"type": "string", "description": about}),
                    )
                })
                .collect();
            json!({"name": format!("tool_{i}"),
                "description": format!("Tool {i} does a thing with its inputs."),
                "inputSchema": {"type": "object", "properties": properties}})
        })
        .collect()
}

/// A good answer listing `tools`.
pub fn tools(tools: Value) -> Answer {
    Arc::new(move |id| {
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools}}))
            .expect("JSON")
    })
}

/// Answers an MCP client cannot read, each of one `tools/list` result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    /// One line of 17 MiB: over the 16 MiB a client reads of one message.
    LongLine,
    /// A schema nested 200 arrays deep: over the 128 levels serde_json reads.
    DeepNesting,
    /// A description holding bytes that are not UTF-8.
    InvalidUtf8,
}

impl Unreadable {
    pub const ALL: [Unreadable; 3] = [
        Unreadable::LongLine,
        Unreadable::DeepNesting,
        Unreadable::InvalidUtf8,
    ];

    /// What the error should name (lowercase).
    pub fn named(self) -> &'static str {
        match self {
            Unreadable::LongLine => "16 mib",
            Unreadable::DeepNesting => "nested",
            Unreadable::InvalidUtf8 => "utf-8",
        }
    }

    pub fn answer(self) -> Answer {
        Arc::new(move |id| {
            let head = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"t","inputSchema":{{"type":"object"}},"description":""#
            );
            let mut line = head.into_bytes();
            match self {
                Unreadable::LongLine => line.extend(std::iter::repeat_n(b'x', 17 << 20)),
                Unreadable::InvalidUtf8 => line.extend_from_slice(b"bad \xff\xfe bytes"),
                Unreadable::DeepNesting => {
                    // In the schema, which is read as a JSON value (a tree).
                    let mut line = format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"t","inputSchema":{{"type":"object","default":"#
                    )
                    .into_bytes();
                    line.extend(std::iter::repeat_n(b'[', 200));
                    line.extend(std::iter::repeat_n(b']', 200));
                    line.extend_from_slice(b"}}]}}");
                    return line;
                }
            }
            line.extend_from_slice(br#""}]}}"#);
            line
        })
    }
}

/// The answer to one JSON-RPC message: `None` for a notification.
fn respond(message: &Value, answer: &Answer) -> Option<Vec<u8>> {
    let id = message.get("id")?.as_u64()?;
    let method = message.get("method").and_then(Value::as_str);
    let json = match method {
        Some("tools/list") => return Some(answer(id)),
        Some("initialize") => {
            let version = message["params"]["protocolVersion"].clone();
            json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": version,
                "capabilities": {"tools": {}}, "serverInfo": {"name": "stand-in", "version": "1"}}})
        }
        _ => json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "Method not found"}}),
    };
    Some(serde_json::to_vec(&json).expect("JSON"))
}

/// How the HTTP stand-in sends its answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `application/json`, the answer as the body.
    Json,
    /// `text/event-stream`, the answer as one event's data.
    Sse,
}

/// Serve `answer` over streamable HTTP on `127.0.0.1:<free port>`; returns the URL
/// (`http://127.0.0.1:port/mcp`). It serves until the test's runtime ends.
pub async fn serve_http(answer: Answer, framing: Framing) -> String {
    let post = move |body: axum::body::Bytes| {
        let answer = answer.clone();
        async move {
            let Ok(message) = serde_json::from_slice::<Value>(&body) else {
                return StatusCode::BAD_REQUEST.into_response();
            };
            let Some(bytes) = respond(&message, &answer) else {
                return StatusCode::ACCEPTED.into_response();
            };
            let (content_type, body) = match framing {
                Framing::Json => ("application/json", bytes),
                Framing::Sse => {
                    let mut event = b"event: message\ndata: ".to_vec();
                    event.extend(bytes);
                    event.extend_from_slice(b"\n\n");
                    ("text/event-stream", event)
                }
            };
            Response::builder()
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::from(body))
                .expect("a response")
        }
    };
    let router = axum::Router::new().route(
        "/mcp",
        axum::routing::post(post)
            .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
            .delete(|| async { StatusCode::METHOD_NOT_ALLOWED }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{address}/mcp")
}

/// Serve `answer` over plain TCP on `127.0.0.1:<free port>`, newline-delimited as over
/// stdio, one session a connection; returns a stdio command (`bash` and its
/// arguments) that bridges its stdin and stdout to it. It serves until the test's
/// runtime ends.
pub async fn serve_stdio_bridge(answer: Answer) -> (String, Vec<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut lines = BufReader::new(read).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let Ok(message) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    if let Some(mut bytes) = respond(&message, &answer) {
                        bytes.push(b'\n');
                        if write.write_all(&bytes).await.is_err() {
                            break;
                        }
                    }
                }
            });
        }
    });
    (
        "bash".into(),
        vec![
            "-c".into(),
            format!("exec 3<>/dev/tcp/127.0.0.1/{port}; cat <&3 & exec cat >&3"),
        ],
    )
}
