//! A scripted stand-in for OpenAI's Responses API (`POST …/responses`, answered as
//! server-sent events) on a free loopback port, for driving Codex CLI and GitHub
//! Copilot CLI against our server without a model. The script is one turn: the model
//! calls every scripted function at once (namespaced, as Codex names MCP tools, or
//! top-level functions, as Copilot CLI offers them), then answers "Done.".
//! When the tools are not offered yet but Codex's `tool_search` is (its default
//! models defer MCP tools), the model searches first, and calls once the search's
//! `tool_search_output` is in the conversation.
//!
//! Every request is recorded; the request that carries the calls' outputs holds each
//! result exactly as the model would read it. It stops when dropped.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::model_api::{Serving, body_json};

pub use crate::model_api::Recorded;

/// The `call_id` of the scripted search.
pub const SEARCH_CALL_ID: &str = "search_scripted_1";

/// The `call_id` of scripted call `i`.
pub fn call_id(i: usize) -> String {
    format!("call_scripted_{i}")
}

/// One function call the model makes: `namespace` (`mcp__context_loader`), `name`
/// (`count_tokens`) and its arguments. An empty `namespace` is a top-level function
/// in `tools` (Copilot CLI's `context-loader-count-tokens`), called without one.
#[derive(Clone, Debug)]
pub struct ScriptedCall {
    pub namespace: String,
    pub name: String,
    pub arguments: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// The tools are deferred behind `tool_search`: answered with a search.
    Search,
    /// The tools are offered: answered with every scripted call.
    Calls,
    /// The conversation carries the calls' outputs: answered with text.
    Results,
    /// Another Responses request: answered with text.
    Other,
    /// Anything else: 404.
    Unknown,
}

#[derive(Clone)]
struct Script {
    calls: Vec<ScriptedCall>,
    query: String,
    seen: Arc<Mutex<Vec<Recorded<RequestKind>>>>,
}

/// A running stand-in; it serves until dropped.
pub struct FakeResponsesApi {
    serving: Serving,
    seen: Arc<Mutex<Vec<Recorded<RequestKind>>>>,
}

impl FakeResponsesApi {
    /// Serve on `127.0.0.1:<free port>`: the model calls `calls` at once when they
    /// are offered, searching with `query` first when they are deferred.
    pub fn start(calls: Vec<ScriptedCall>, query: &str) -> std::io::Result<FakeResponsesApi> {
        let script = Script {
            calls,
            query: query.to_string(),
            seen: Arc::default(),
        };
        let seen = script.seen.clone();
        let app = axum::Router::new().fallback(answer).with_state(script);
        Ok(FakeResponsesApi {
            serving: Serving::start("fake-responses-api", app)?,
            seen,
        })
    }

    /// The base URL a provider's `base_url` takes: `http://127.0.0.1:port/v1`.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.serving.url)
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<Recorded<RequestKind>> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The first Responses request (what every turn starts with).
    pub fn first(&self) -> Option<Recorded<RequestKind>> {
        self.requests()
            .into_iter()
            .find(|r| r.kind != RequestKind::Unknown)
    }

    /// The request answered with the calls: the tools as offered when the model called.
    pub fn calls_request(&self) -> Option<Recorded<RequestKind>> {
        self.requests()
            .into_iter()
            .find(|r| r.kind == RequestKind::Calls)
    }

    /// The `function_call_output` item answering scripted call `i`, as the client sent
    /// it back (the last request that carries it).
    pub fn output(&self, i: usize) -> Option<Value> {
        let id = call_id(i);
        self.requests()
            .into_iter()
            .rev()
            .filter(|r| r.kind == RequestKind::Results)
            .find_map(|r| {
                input_items(&r.body)
                    .find(|item| {
                        item.get("type").and_then(Value::as_str) == Some("function_call_output")
                            && item.get("call_id").and_then(Value::as_str) == Some(&id)
                    })
                    .cloned()
            })
    }
}

/// The `input` items of a Responses request.
pub fn input_items(body: &Value) -> impl Iterator<Item = &Value> {
    body.get("input")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The text of a `function_call_output`: its string, or its text items joined.
pub fn output_text(item: &Value) -> String {
    match item.get("output") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// Whether `namespace` is offered with function `name`: in `tools`, or in a
/// `tool_search_output` of the conversation.
fn offers(body: &Value, namespace: &str, name: &str) -> bool {
    let named = |t: &Value| t.get("name").and_then(Value::as_str) == Some(name);
    if namespace.is_empty() {
        return body
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|tools| tools.iter().any(named));
    }
    let in_list = |tools: &Value| {
        tools.as_array().into_iter().flatten().any(|t| {
            t.get("name").and_then(Value::as_str) == Some(namespace)
                && t.get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .any(named)
        })
    };
    body.get("tools").is_some_and(in_list)
        || input_items(body).any(|item| {
            item.get("type").and_then(Value::as_str) == Some("tool_search_output")
                && item.get("tools").is_some_and(in_list)
        })
}

fn offers_search(body: &Value) -> bool {
    body.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|t| t.get("type").and_then(Value::as_str) == Some("tool_search"))
}

fn classify(script: &Script, method: &Method, path: &str, body: &Value) -> RequestKind {
    if method != Method::POST || !path.ends_with("/responses") {
        return RequestKind::Unknown;
    }
    let carries_output = input_items(body).any(|item| {
        item.get("type").and_then(Value::as_str) == Some("function_call_output")
            && item
                .get("call_id")
                .and_then(Value::as_str)
                .is_some_and(|id| id.starts_with("call_scripted_"))
    });
    let answered = |kind| {
        script
            .seen
            .lock()
            .map(|seen| seen.iter().any(|r| r.kind == kind))
            .unwrap_or(false)
    };
    let offered = script
        .calls
        .iter()
        .all(|c| offers(body, &c.namespace, &c.name));
    let searched = input_items(body)
        .any(|item| item.get("type").and_then(Value::as_str) == Some("tool_search_output"));
    if carries_output {
        RequestKind::Results
    } else if answered(RequestKind::Calls) {
        RequestKind::Other
    } else if offered || searched {
        // After a search the calls are made even if it found too little: the outputs
        // then say what Codex made of it.
        RequestKind::Calls
    } else if offers_search(body) && !answered(RequestKind::Search) {
        RequestKind::Search
    } else {
        RequestKind::Other
    }
}

async fn answer(State(script): State<Script>, method: Method, uri: Uri, body: Bytes) -> Response {
    let path = uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    let body = body_json(&body);
    let kind = classify(&script, &method, uri.path(), &body);
    if let Ok(mut seen) = script.seen.lock() {
        seen.push(Recorded {
            method: method.to_string(),
            path,
            body,
            kind,
        });
    }
    let items: Vec<Value> = match kind {
        RequestKind::Search => vec![json!({
            "type": "tool_search_call",
            "call_id": SEARCH_CALL_ID,
            "execution": "client",
            "arguments": {"query": script.query, "limit": 50},
        })],
        RequestKind::Calls => script
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut call = json!({
                    "type": "function_call",
                    "id": format!("fc_scripted_{i}"),
                    "call_id": call_id(i),
                    "name": c.name,
                    "arguments": c.arguments.to_string(),
                });
                if !c.namespace.is_empty() {
                    call["namespace"] = json!(c.namespace);
                }
                call
            })
            .collect(),
        RequestKind::Results | RequestKind::Other => vec![json!({
            "type": "message",
            "role": "assistant",
            "id": "msg_scripted",
            "content": [{"type": "output_text", "text": "Done."}],
        })],
        RequestKind::Unknown => {
            return (
                StatusCode::NOT_FOUND,
                Json(json!({"error": {
                    "message": format!("the stand-in does not serve {method} {}", uri.path()),
                    "type": "invalid_request_error",
                }})),
            )
                .into_response();
        }
    };
    ([(header::CONTENT_TYPE, "text/event-stream")], sse(&items)).into_response()
}

/// One response as the Responses API streams it: created, each output item done,
/// completed (with every output item again, and usage: Copilot CLI reads the items
/// from `response.completed` only).
fn sse(items: &[Value]) -> String {
    let id = "resp_scripted";
    let mut events = vec![json!({"type": "response.created", "response": {"id": id}})];
    for (i, item) in items.iter().enumerate() {
        events.push(json!({"type": "response.output_item.added", "output_index": i, "item": item}));
        events.push(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
    }
    events.push(json!({"type": "response.completed", "response": {
        "id": id,
        "status": "completed",
        "output": items,
        "usage": {"input_tokens": 1, "input_tokens_details": null, "output_tokens": 1,
                  "output_tokens_details": null, "total_tokens": 2},
    }}));
    let mut out = String::new();
    for event in events {
        let name = event["type"].as_str().unwrap_or("message").to_string();
        out.push_str(&format!("event: {name}\ndata: {event}\n\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_api::post;

    fn scripted() -> Vec<ScriptedCall> {
        vec![ScriptedCall {
            namespace: "mcp__s".into(),
            name: "count".into(),
            arguments: json!({"text": "hi"}),
        }]
    }

    #[test]
    fn a_search_then_the_calls_then_text_with_the_outputs_recorded() {
        let fake = FakeResponsesApi::start(scripted(), "count").expect("start");
        let url = fake.base_url().trim_end_matches("/v1").to_string();
        let first = json!({"model": "m", "stream": true, "tools": [{"type": "tool_search"}],
            "input": [{"type": "message", "role": "user", "content": []}]});
        let (status, reply) = post(&url, "/v1/responses", &first);
        assert_eq!(status, 200);
        assert!(reply.contains("text/event-stream") && reply.contains("response.completed"));
        assert!(reply.contains(r#""type":"tool_search_call""#), "{reply}");

        let found = json!({"type": "tool_search_output", "call_id": SEARCH_CALL_ID,
            "tools": [{"type": "namespace", "name": "mcp__s", "tools": [{"name": "count"}]}]});
        let second = json!({"model": "m", "tools": [{"type": "tool_search"}],
            "input": [found]});
        let (_, reply) = post(&url, "/v1/responses", &second);
        assert!(reply.contains(r#""namespace":"mcp__s""#), "{reply}");
        assert!(
            reply.contains(r#""arguments":"{\"text\":\"hi\"}""#),
            "{reply}"
        );

        let output = json!({"type": "function_call_output", "call_id": call_id(0),
            "output": "Wall time: 0.1 seconds\nOutput:\n{\"n\":1}"});
        let third = json!({"model": "m", "input": [output.clone()]});
        let (_, reply) = post(&url, "/v1/responses", &third);
        assert!(reply.contains("Done."), "{reply}");
        let (status, _) = post(&url, "/v1/other", &third);
        assert_eq!(status, 404);

        assert_eq!(fake.output(0), Some(output.clone()));
        assert_eq!(
            output_text(&output),
            "Wall time: 0.1 seconds\nOutput:\n{\"n\":1}"
        );
        let kinds: Vec<RequestKind> = fake.requests().iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                RequestKind::Search,
                RequestKind::Calls,
                RequestKind::Results,
                RequestKind::Unknown
            ]
        );
    }

    #[test]
    fn tools_offered_directly_are_called_at_once() {
        let fake = FakeResponsesApi::start(scripted(), "count").expect("start");
        let url = fake.base_url().trim_end_matches("/v1").to_string();
        let first = json!({"model": "m", "tools": [
            {"type": "namespace", "name": "mcp__s", "tools": [{"name": "count"}]}],
            "input": []});
        let (_, reply) = post(&url, "/v1/responses", &first);
        assert!(reply.contains(r#""type":"function_call""#), "{reply}");
        // Asked again without outputs (a retry), the model only talks.
        let (_, reply) = post(&url, "/v1/responses", &first);
        assert!(reply.contains("Done."), "{reply}");
        assert_eq!(
            fake.calls_request().map(|r| r.kind),
            Some(RequestKind::Calls)
        );
    }

    #[test]
    fn top_level_functions_are_called_without_a_namespace() {
        let calls = vec![ScriptedCall {
            namespace: String::new(),
            name: "s-count".into(),
            arguments: json!({"text": "hi"}),
        }];
        let fake = FakeResponsesApi::start(calls, "").expect("start");
        let url = fake.base_url().trim_end_matches("/v1").to_string();
        // Not offered (another function only): the model talks.
        let other = json!({"model": "m", "input": [],
            "tools": [{"type": "function", "name": "bash", "parameters": {}}]});
        let (_, reply) = post(&url, "/v1/responses", &other);
        assert!(
            reply.contains("Done.") && !reply.contains("function_call"),
            "{reply}"
        );
        let offered = json!({"model": "m", "input": [], "tools": [
            {"type": "function", "name": "bash", "parameters": {}},
            {"type": "function", "name": "s-count", "parameters": {}}]});
        let (_, reply) = post(&url, "/v1/responses", &offered);
        assert!(reply.contains(r#""name":"s-count""#), "{reply}");
        assert!(!reply.contains("namespace"), "{reply}");
        let output = json!({"type": "function_call_output", "call_id": call_id(0),
            "output": "{\"n\":1}"});
        let (_, reply) = post(
            &url,
            "/v1/responses",
            &json!({"model": "m", "input": [output]}),
        );
        assert!(reply.contains("Done."), "{reply}");
        assert_eq!(
            fake.output(0).map(|o| output_text(&o)).as_deref(),
            Some("{\"n\":1}")
        );
    }
}
