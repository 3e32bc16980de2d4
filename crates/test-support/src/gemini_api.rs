//! A scripted stand-in for Google's Gemini API (`…:streamGenerateContent?alt=sse`,
//! `…:generateContent`, `…:countTokens`) on a free loopback port, for driving Gemini
//! CLI against our server without a model. The script is one turn: the first request
//! that declares every scripted function is answered with all of the calls at once;
//! the request that carries their `functionResponse`s is recorded (it holds each
//! result exactly as the model would read it) and answered with text. Everything
//! else gets a harmless answer, and every request is recorded. It stops when dropped.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::model_api::{Serving, body_json};

pub use crate::model_api::Recorded;

/// One function call the model makes: its declared name
/// (`mcp_context-loader_count-tokens`) and its arguments.
#[derive(Clone, Debug)]
pub struct ScriptedCall {
    pub name: String,
    pub args: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// Every scripted function is declared: answered with all the calls.
    Calls,
    /// The conversation carries their responses: answered with text.
    Results,
    /// Another generate request (a side question): answered with text.
    Other,
    /// `countTokens`: answered with an estimate.
    CountTokens,
    /// Anything else: 404.
    Unknown,
}

#[derive(Clone)]
struct Script {
    calls: Vec<ScriptedCall>,
    seen: Arc<Mutex<Vec<Recorded<RequestKind>>>>,
}

/// A running stand-in; it serves until dropped.
pub struct FakeGeminiApi {
    serving: Serving,
    /// The scripted functions' names.
    names: Vec<String>,
    seen: Arc<Mutex<Vec<Recorded<RequestKind>>>>,
}

impl FakeGeminiApi {
    /// Serve on `127.0.0.1:<free port>`: the model calls `calls` at once when they are
    /// declared.
    pub fn start(calls: Vec<ScriptedCall>) -> std::io::Result<FakeGeminiApi> {
        let names = calls.iter().map(|c| c.name.clone()).collect();
        let script = Script {
            calls,
            seen: Arc::default(),
        };
        let seen = script.seen.clone();
        let app = axum::Router::new().fallback(answer).with_state(script);
        Ok(FakeGeminiApi {
            serving: Serving::start("fake-gemini-api", app)?,
            names,
            seen,
        })
    }

    /// The base URL, as `GOOGLE_GEMINI_BASE_URL` takes it: `http://127.0.0.1:port`.
    pub fn url(&self) -> &str {
        &self.serving.url
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<Recorded<RequestKind>> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The request answered with the calls: the declarations and the conversation as
    /// the client sent them when the model called.
    pub fn calls_request(&self) -> Option<Recorded<RequestKind>> {
        self.requests()
            .into_iter()
            .find(|r| r.kind == RequestKind::Calls)
    }

    /// The `functionResponse` parts answering the scripted calls, in the order the
    /// client sent them (the last request that carries them).
    pub fn responses(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .rev()
            .find(|r| r.kind == RequestKind::Results)
            .map(|r| {
                function_responses(&r.body)
                    .filter(|part| {
                        part["functionResponse"]["name"]
                            .as_str()
                            .is_some_and(|name| self.names.iter().any(|n| n == name))
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Every part of a request's `contents` that is a `functionResponse`.
pub fn function_responses(body: &Value) -> impl Iterator<Item = &Value> {
    body.get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("parts").and_then(Value::as_array))
        .flatten()
        .filter(|part| part.get("functionResponse").is_some())
}

/// Every function declaration of a request's `tools`.
pub fn declarations(body: &Value) -> impl Iterator<Item = &Value> {
    body.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("functionDeclarations").and_then(Value::as_array))
        .flatten()
}

fn classify(script: &Script, method: &Method, path: &str, body: &Value) -> RequestKind {
    if method != Method::POST {
        return RequestKind::Unknown;
    }
    if path.ends_with(":countTokens") {
        return RequestKind::CountTokens;
    }
    if !(path.ends_with(":streamGenerateContent") || path.ends_with(":generateContent")) {
        return RequestKind::Unknown;
    }
    let ours = |name: &str| script.calls.iter().any(|c| c.name == name);
    let carries_results = function_responses(body)
        .any(|part| part["functionResponse"]["name"].as_str().is_some_and(ours));
    let declared = script.calls.iter().all(|c| {
        declarations(body).any(|d| d.get("name").and_then(Value::as_str) == Some(&c.name))
    });
    let called = script
        .seen
        .lock()
        .map(|seen| seen.iter().any(|r| r.kind == RequestKind::Calls))
        .unwrap_or(false);
    if carries_results {
        RequestKind::Results
    } else if declared && !called {
        RequestKind::Calls
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
    let wants_json = body["generationConfig"]["responseMimeType"] == "application/json";
    if let Ok(mut seen) = script.seen.lock() {
        seen.push(Recorded {
            method: method.to_string(),
            path,
            body,
            kind,
        });
    }
    let parts: Vec<Value> = match kind {
        RequestKind::Calls => script
            .calls
            .iter()
            .map(|c| json!({"functionCall": {"name": c.name, "args": c.args}}))
            .collect(),
        RequestKind::Results | RequestKind::Other => {
            // A side question that wants JSON (a router, a check) gets an empty object.
            let text = if wants_json { "{}" } else { "Done." };
            vec![json!({"text": text})]
        }
        RequestKind::CountTokens => {
            return Json(json!({"totalTokens": 1})).into_response();
        }
        RequestKind::Unknown => {
            return (
                StatusCode::NOT_FOUND,
                Json(json!({"error": {
                    "code": 404,
                    "message": format!("the stand-in does not serve {method} {}", uri.path()),
                    "status": "NOT_FOUND",
                }})),
            )
                .into_response();
        }
    };
    let response = json!({
        "candidates": [{
            "content": {"role": "model", "parts": parts},
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": "stand-in",
    });
    if uri.path().ends_with(":streamGenerateContent") {
        (
            [(header::CONTENT_TYPE, "text/event-stream")],
            format!("data: {response}\r\n\r\n"),
        )
            .into_response()
    } else {
        Json(response).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_api::post;

    #[test]
    fn the_calls_then_text_with_the_responses_recorded_and_anything_else_harmless() {
        let fake = FakeGeminiApi::start(vec![ScriptedCall {
            name: "mcp_s_count".into(),
            args: json!({"text": "hi"}),
        }])
        .expect("start");
        let stream = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
        let offer = json!({"contents": [{"role": "user", "parts": [{"text": "count hi"}]}],
            "tools": [{"functionDeclarations": [{"name": "mcp_s_count"}]}]});
        let (status, reply) = post(fake.url(), stream, &offer);
        assert_eq!(status, 200);
        assert!(reply.contains("text/event-stream"), "{reply}");
        assert!(
            reply.contains(r#""functionCall":{"args":{"text":"hi"},"name":"mcp_s_count"}"#)
                || reply.contains(r#""functionCall":{"name":"mcp_s_count","args":{"text":"hi"}}"#),
            "{reply}"
        );
        let side =
            json!({"contents": [], "generationConfig": {"responseMimeType": "application/json"}});
        let (status, reply) = post(fake.url(), "/v1beta/models/flash:generateContent", &side);
        assert_eq!(status, 200);
        assert!(reply.contains(r#""text":"{}""#), "{reply}");
        let (_, reply) = post(fake.url(), "/v1beta/models/m:countTokens", &side);
        assert!(reply.contains("totalTokens"));
        let (status, _) = post(fake.url(), "/v1beta/other", &side);
        assert_eq!(status, 404);

        let response = json!({"functionResponse": {"name": "mcp_s_count",
            "response": {"output": "<untrusted_context>\n{\"n\":1}\n</untrusted_context>"}}});
        let back = json!({"contents": [{"role": "user", "parts": [response.clone()]}],
            "tools": [{"functionDeclarations": [{"name": "mcp_s_count"}]}]});
        let (_, reply) = post(fake.url(), stream, &back);
        assert!(reply.contains("Done."), "{reply}");
        assert_eq!(fake.responses(), vec![response]);
        let kinds: Vec<RequestKind> = fake.requests().iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                RequestKind::Calls,
                RequestKind::Other,
                RequestKind::CountTokens,
                RequestKind::Unknown,
                RequestKind::Results
            ]
        );
    }
}
