//! A scripted stand-in for Anthropic's Messages API on a free loopback port, for
//! driving a real agent (Claude Code) against our server without a model: the first
//! conversation request that offers the scripted tool is answered with a `tool_use`
//! of it; the request that carries its `tool_result` is recorded (it holds the result
//! exactly as the model would read it) and answered with `end_turn` text. Everything
//! else a client sends (a title request, `count_tokens`, probes) gets a harmless
//! answer, and every request is logged.
//!
//! It runs on its own thread and runtime, so synchronous callers (xtask) and async
//! tests use it alike; it stops when dropped.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The id of the scripted `tool_use` block.
pub const TOOL_USE_ID: &str = "toolu_scripted_01";

/// One request the stand-in received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    /// Path and query (`/v1/messages?beta=true`).
    pub path: String,
    /// The JSON body (`Value::Null` when there was none, a string when not JSON).
    pub body: Value,
    /// What the stand-in made of it.
    pub kind: RequestKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// The conversation offering the scripted tool: answered with its `tool_use`.
    ToolUse,
    /// The conversation carrying the scripted tool's result: answered `end_turn`.
    ToolResult,
    /// Another Messages request (a title, a side question): answered `end_turn`.
    OtherMessage,
    /// `count_tokens`: answered with an estimate.
    CountTokens,
    /// Anything else: 404 with an API-style error.
    Unknown,
}

#[derive(Clone)]
struct Script {
    tool: String,
    input: Value,
    seen: Arc<Mutex<Vec<Recorded>>>,
}

/// A running stand-in; it serves until dropped.
pub struct FakeMessagesApi {
    url: String,
    seen: Arc<Mutex<Vec<Recorded>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeMessagesApi {
    /// Serve on `127.0.0.1:<free port>`, answering the first request that offers
    /// `tool` (the name the client sends, e.g. `mcp__context-loader__count-tokens`)
    /// with a `tool_use` of it taking `input`.
    pub fn start(tool: &str, input: Value) -> std::io::Result<FakeMessagesApi> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let url = format!("http://{}", listener.local_addr()?);
        let script = Script {
            tool: tool.to_string(),
            input,
            seen: Arc::default(),
        };
        let seen = script.seen.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("fake-messages-api".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    let app = axum::Router::new().fallback(answer).with_state(script);
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(async {
                            let _ = stopped.await;
                        })
                        .await;
                });
            })?;
        Ok(FakeMessagesApi {
            url,
            seen,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The base URL (`http://127.0.0.1:port`), as `ANTHROPIC_BASE_URL` takes it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<Recorded> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The `tools` of the request answered with the scripted `tool_use`: the tool
    /// definitions exactly as the client sends them to the model.
    pub fn tool_definitions(&self) -> Option<Vec<Value>> {
        self.requests()
            .into_iter()
            .find(|r| r.kind == RequestKind::ToolUse)
            .and_then(|r| r.body.get("tools").and_then(Value::as_array).cloned())
    }

    /// The scripted tool's `tool_result` block as the client sent it back.
    pub fn tool_result(&self) -> Option<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r.kind == RequestKind::ToolResult)
            .find_map(|r| find_tool_result(&r.body).cloned())
    }
}

impl Drop for FakeMessagesApi {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The `tool_result` block answering the scripted `tool_use`, in any message.
fn find_tool_result(body: &Value) -> Option<&Value> {
    body.get("messages")?
        .as_array()?
        .iter()
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten()
        .find(|block| {
            block.get("type").and_then(Value::as_str) == Some("tool_result")
                && block.get("tool_use_id").and_then(Value::as_str) == Some(TOOL_USE_ID)
        })
}

async fn answer(State(script): State<Script>, method: Method, uri: Uri, body: Bytes) -> Response {
    let path = uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()))
    };
    let kind = classify(&script, &method, uri.path(), &body);
    if let Ok(mut seen) = script.seen.lock() {
        seen.push(Recorded {
            method: method.to_string(),
            path,
            body: body.clone(),
            kind,
        });
    }
    let stream = body.get("stream").and_then(Value::as_bool) == Some(true);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("claude-sonnet-4-5")
        .to_string();
    match kind {
        RequestKind::ToolUse => {
            let block = json!({
                "type": "tool_use",
                "id": TOOL_USE_ID,
                "name": script.tool,
                "input": script.input,
            });
            message(&model, block, "tool_use", stream)
        }
        RequestKind::ToolResult | RequestKind::OtherMessage => {
            message(&model, json!({"type": "text", "text": "Done."}), "end_turn", stream)
        }
        RequestKind::CountTokens => {
            let bytes = serde_json::to_string(&body).map(|s| s.len()).unwrap_or(0);
            Json(json!({"input_tokens": bytes / 4 + 1})).into_response()
        }
        RequestKind::Unknown => (
            StatusCode::NOT_FOUND,
            Json(json!({
                "type": "error",
                "error": {"type": "not_found_error", "message": format!("the stand-in does not serve {method} {}", uri.path())}
            })),
        )
            .into_response(),
    }
}

fn classify(script: &Script, method: &Method, path: &str, body: &Value) -> RequestKind {
    if method != Method::POST {
        return RequestKind::Unknown;
    }
    match path {
        "/v1/messages/count_tokens" => RequestKind::CountTokens,
        "/v1/messages" => {
            let offers_tool = body
                .get("tools")
                .and_then(Value::as_array)
                .is_some_and(|tools| {
                    tools
                        .iter()
                        .any(|t| t.get("name").and_then(Value::as_str) == Some(&script.tool))
                });
            if find_tool_result(body).is_some() {
                RequestKind::ToolResult
            } else if offers_tool && !already_used(script) {
                RequestKind::ToolUse
            } else {
                RequestKind::OtherMessage
            }
        }
        _ => RequestKind::Unknown,
    }
}

/// Whether the scripted `tool_use` was already sent (it is sent once).
fn already_used(script: &Script) -> bool {
    script
        .seen
        .lock()
        .map(|seen| seen.iter().any(|r| r.kind == RequestKind::ToolUse))
        .unwrap_or(false)
}

/// A complete assistant message with one content block: JSON, or the Messages API's
/// server-sent events when the request streams.
fn message(model: &str, block: Value, stop_reason: &str, stream: bool) -> Response {
    let usage = json!({"input_tokens": 1, "output_tokens": 1});
    if !stream {
        return Json(json!({
            "id": "msg_stand_in",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": stop_reason,
            "stop_sequence": null,
            "usage": usage,
        }))
        .into_response();
    }
    // A block starts empty and arrives as one delta, as the API streams it.
    let (start, delta) = match block.get("type").and_then(Value::as_str) {
        Some("tool_use") => (
            json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
            json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
        ),
        _ => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": block["text"]}),
        ),
    };
    let events = [
        json!({"type": "message_start", "message": {
            "id": "msg_stand_in", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage,
        }}),
        json!({"type": "content_block_start", "index": 0, "content_block": start}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 1}}),
        json!({"type": "message_stop"}),
    ];
    let mut sse = String::new();
    for event in events {
        let name = event["type"].as_str().unwrap_or("message").to_string();
        sse.push_str(&format!("event: {name}\ndata: {event}\n\n"));
    }
    ([(header::CONTENT_TYPE, "text/event-stream")], sse).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(url: &str, path: &str, body: &Value) -> (u16, String) {
        let authority = url.trim_start_matches("http://");
        let body = body.to_string();
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(authority).expect("connect");
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .expect("timeout");
        stream.write_all(request.as_bytes()).expect("write");
        let mut reply = String::new();
        stream.read_to_string(&mut reply).expect("read");
        let status = reply[9..12].parse().expect("status");
        (status, reply)
    }

    #[test]
    fn a_tool_use_then_end_turn_with_the_result_recorded_and_anything_else_harmless() {
        let fake = FakeMessagesApi::start("mcp__s__count", json!({"text": "hi"})).expect("start");
        let offer = json!({"model": "m", "stream": true, "tools": [{"name": "mcp__s__count"}],
            "messages": [{"role": "user", "content": "count hi"}]});
        let (status, reply) = post(fake.url(), "/v1/messages?beta=true", &offer);
        assert_eq!(status, 200);
        assert!(reply.contains("text/event-stream") && reply.contains("event: message_stop"));
        assert!(
            reply.contains(r#""partial_json":"{\"text\":\"hi\"}""#),
            "{reply}"
        );
        assert!(reply.contains(r#""stop_reason":"tool_use""#));

        let title = json!({"model": "haiku", "messages": [{"role": "user", "content": "title?"}]});
        let (status, reply) = post(fake.url(), "/v1/messages", &title);
        assert_eq!(status, 200);
        assert!(reply.contains(r#""stop_reason":"end_turn""#), "{reply}");
        let (status, reply) = post(fake.url(), "/v1/messages/count_tokens", &title);
        assert_eq!(status, 200);
        assert!(reply.contains("input_tokens"));
        let (status, _) = post(fake.url(), "/v1/other", &title);
        assert_eq!(status, 404);

        let result =
            json!({"tool_use_id": TOOL_USE_ID, "type": "tool_result", "content": "{\"n\":1}"});
        let back = json!({"model": "m", "stream": true, "tools": [{"name": "mcp__s__count"}],
            "messages": [{"role": "user", "content": [result.clone()]}]});
        let (status, reply) = post(fake.url(), "/v1/messages", &back);
        assert_eq!(status, 200);
        assert!(reply.contains(r#""stop_reason":"end_turn""#), "{reply}");

        assert_eq!(fake.tool_result(), Some(result));
        assert_eq!(
            fake.tool_definitions(),
            Some(vec![json!({"name": "mcp__s__count"})])
        );
        let kinds: Vec<RequestKind> = fake.requests().iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                RequestKind::ToolUse,
                RequestKind::OtherMessage,
                RequestKind::CountTokens,
                RequestKind::Unknown,
                RequestKind::ToolResult
            ]
        );
    }
}
