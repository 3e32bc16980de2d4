//! A fake Anthropic count_tokens API on a free loopback port: it records every
//! request (headers and JSON body) and answers as the test chose. The one fake for
//! both the client's unit tests and the server's end-to-end tests.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// The API key [`FakeAnthropic::server_env`] gives the server.
pub const API_KEY: &str = "sk-test";

/// How the fake answers every request.
#[derive(Clone, Copy)]
pub enum Reply {
    /// 200 with `input_tokens` from this rule applied to the request body, so a
    /// test can predict (or steer) the count.
    Count(fn(&Value) -> u64),
    /// This status with an Anthropic-style error body (message `nope`).
    Status(u16),
    /// 200 with `input_tokens: 1`, after this delay (longer than a client waits).
    Slow(Duration),
    /// 307 to this URL (another fake, which counts what reaches it).
    Redirect(&'static str),
    /// 200 with a body of this many bytes (spaces, then `{"input_tokens": 1}`).
    Huge(usize),
    /// 200 with `input_tokens` exactly this.
    Tokens(u64),
}

type Seen = Arc<Mutex<Vec<(HeaderMap, Value)>>>;

#[derive(Clone)]
struct Fake {
    reply: Reply,
    seen: Seen,
}

/// A running fake; it serves until the test's runtime ends.
pub struct FakeAnthropic {
    url: String,
    seen: Seen,
}

impl FakeAnthropic {
    /// Serve `POST /v1/messages/count_tokens` on `127.0.0.1:<free port>`.
    pub async fn start(reply: Reply) -> FakeAnthropic {
        let fake = Fake {
            reply,
            seen: Arc::default(),
        };
        let app = axum::Router::new()
            .route("/v1/messages/count_tokens", post(answer))
            .with_state(fake.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        FakeAnthropic {
            url,
            seen: fake.seen,
        }
    }

    /// The base URL (`http://127.0.0.1:port`), as `ANTHROPIC_BASE_URL` takes it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<(HeaderMap, Value)> {
        self.seen.lock().expect("lock").clone()
    }

    pub fn request_count(&self) -> usize {
        self.seen.lock().expect("lock").len()
    }

    /// The environment that points a server's exact Claude counts at this fake.
    pub fn server_env(&self) -> [(&'static str, &str); 3] {
        [
            ("ANTHROPIC_API_KEY", API_KEY),
            ("ANTHROPIC_BASE_URL", &self.url),
            ("CONTEXT_LOADER_EXACT_CLAUDE", "true"),
        ]
    }
}

async fn answer(State(fake): State<Fake>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    fake.seen
        .lock()
        .expect("lock")
        .push((headers, body.clone()));
    match fake.reply {
        Reply::Count(tokens) => {
            (StatusCode::OK, Json(json!({"input_tokens": tokens(&body)}))).into_response()
        }
        Reply::Slow(delay) => {
            tokio::time::sleep(delay).await;
            (StatusCode::OK, Json(json!({"input_tokens": 1}))).into_response()
        }
        Reply::Status(code) => (
            StatusCode::from_u16(code).expect("status"),
            Json(json!({"type": "error", "error": {"type": "fake_error", "message": "nope"}})),
        )
            .into_response(),
        Reply::Redirect(to) => (
            StatusCode::TEMPORARY_REDIRECT,
            [(header::LOCATION, format!("{to}/v1/messages/count_tokens"))],
        )
            .into_response(),
        Reply::Huge(bytes) => {
            let mut text = vec![b' '; bytes.saturating_sub(20)];
            text.extend_from_slice(br#"{"input_tokens": 1}"#);
            (StatusCode::OK, text).into_response()
        }
        Reply::Tokens(tokens) => {
            (StatusCode::OK, Json(json!({"input_tokens": tokens}))).into_response()
        }
    }
}
