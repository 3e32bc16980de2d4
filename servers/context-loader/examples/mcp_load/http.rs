//! N concurrent MCP clients over streamable HTTP, each on its own keep-alive
//! connection, sending `tools/call count-tokens` back to back.
//!
//! Deliberately thin (plain JSON-RPC over reqwest, not a full SDK client) so that the
//! clients, which share the machine with the server, spend as little CPU as possible
//! and the figure is the server's. It still speaks the protocol properly: `initialize`,
//! `notifications/initialized`, then calls carrying `MCP-Protocol-Version` (and the
//! session id if a stateful server hands one out); replies may be JSON or SSE.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::stats::Run;
use crate::texts::Sample;

/// The protocol revision the clients ask for; the server's answer is what they use.
const REQUESTED_PROTOCOL: &str = "2025-06-18";

pub struct HttpLoad {
    pub url: String,
    pub clients: usize,
    pub warmup: Duration,
    pub duration: Duration,
    /// Stop the measured window after this many calls in total (if sooner).
    pub max_calls: Option<usize>,
    pub model: String,
    pub samples: Arc<Vec<Sample>>,
}

/// A connected client: its connection pool and what the handshake negotiated.
struct Session {
    http: reqwest::Client,
    protocol: String,
    session_id: Option<String>,
}

pub async fn run(load: HttpLoad) -> Run {
    let load = Arc::new(load);
    let mut total = Run::default();

    // Handshakes first, all at once, so the clock starts with every client ready.
    let handshakes: Vec<_> = (0..load.clients)
        .map(|_| {
            let url = load.url.clone();
            tokio::spawn(async move { handshake(&url).await })
        })
        .collect();
    let mut sessions = Vec::new();
    for handshake in handshakes {
        match handshake.await {
            Ok(Ok(session)) => sessions.push(session),
            Ok(Err(e)) => total.error(format!("handshake: {e}")),
            Err(e) => total.error(format!("handshake task: {e}")),
        }
    }
    if sessions.is_empty() {
        return total;
    }

    let started = Instant::now();
    let measure_from = started + load.warmup;
    let deadline = measure_from + load.duration;
    let issued = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = sessions
        .into_iter()
        .enumerate()
        .map(|(client, session)| {
            let load = load.clone();
            let issued = issued.clone();
            tokio::spawn(async move {
                client_loop(&load, client, session, measure_from, deadline, &issued).await
            })
        })
        .collect();
    let mut last_end = measure_from;
    for worker in workers {
        match worker.await {
            Ok((run, end)) => {
                total.merge(run);
                last_end = last_end.max(end);
            }
            Err(e) => total.error(format!("client task: {e}")),
        }
    }
    total.elapsed = last_end.saturating_duration_since(measure_from);
    total
}

/// One client's calls until the deadline; returns its run and when its last call ended.
async fn client_loop(
    load: &HttpLoad,
    client: usize,
    session: Session,
    measure_from: Instant,
    deadline: Instant,
    issued: &AtomicUsize,
) -> (Run, Instant) {
    let mut run = Run::default();
    let mut last_end = Instant::now();
    // Clients start at different texts so concurrent calls carry different text.
    let mut next = client * 7;
    let mut id: u64 = 1;
    loop {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let measured = now >= measure_from;
        if measured
            && let Some(max) = load.max_calls
            && issued.fetch_add(1, Ordering::Relaxed) >= max
        {
            break;
        }
        let sample = &load.samples[next % load.samples.len()];
        next += 1;
        id += 1;
        let started = Instant::now();
        let outcome = call(&session, &load.url, id, &load.model, sample).await;
        last_end = Instant::now();
        match outcome {
            Ok(()) if measured => {
                run.calls += 1;
                run.latencies_us
                    .push(last_end.duration_since(started).as_micros() as u64);
            }
            Ok(()) => {}
            Err(e) => run.error(e),
        }
    }
    (run, last_end)
}

async fn handshake(url: &str) -> Result<Session, String> {
    let http = reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": REQUESTED_PROTOCOL,
            "capabilities": {},
            "clientInfo": { "name": "mcp_load", "version": "0" }
        }
    });
    let mut session = Session {
        http,
        protocol: REQUESTED_PROTOCOL.to_string(),
        session_id: None,
    };
    let response = post(&session, url, &initialize).await?;
    session.session_id = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let reply = reply_for(response, 1).await?;
    session.protocol = reply
        .pointer("/result/protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("initialize reply without protocolVersion: {reply}"))?
        .to_string();
    if reply.pointer("/result/capabilities/tools").is_none() {
        return Err(format!("server offers no tools: {reply}"));
    }
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let response = post(&session, url, &initialized).await?;
    if response.status() != reqwest::StatusCode::ACCEPTED {
        return Err(format!(
            "notifications/initialized: HTTP {} (want 202)",
            response.status()
        ));
    }
    Ok(session)
}

/// One `tools/call count-tokens`, checked: the reply must be a successful result
/// whose `structuredContent.token_count` is the count the engine gives this text.
async fn call(
    session: &Session,
    url: &str,
    id: u64,
    model: &str,
    sample: &Sample,
) -> Result<(), String> {
    let request = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "count-tokens", "arguments": { "text": sample.text, "model": model } }
    });
    let response = post(session, url, &request).await?;
    let reply = reply_for(response, id).await?;
    let result = reply
        .get("result")
        .ok_or_else(|| format!("JSON-RPC error: {reply}"))?;
    if result.get("isError") == Some(&Value::Bool(true)) {
        return Err(format!("tool error: {result}"));
    }
    let counted = result
        .pointer("/structuredContent/token_count")
        .and_then(Value::as_u64);
    if counted != Some(sample.expected_tokens) {
        return Err(format!(
            "wrong count: got {counted:?}, want {}",
            sample.expected_tokens
        ));
    }
    Ok(())
}

async fn post(session: &Session, url: &str, body: &Value) -> Result<reqwest::Response, String> {
    let mut request = session
        .http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", &session.protocol)
        .body(body.to_string());
    if let Some(id) = &session.session_id {
        request = request.header("mcp-session-id", id);
    }
    request.send().await.map_err(|e| format!("transport: {e}"))
}

/// The JSON-RPC response with this id, from a JSON body or an SSE stream.
async fn reply_for(response: reqwest::Response, id: u64) -> Result<Value, String> {
    let status = response.status();
    let is_sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let body = response
        .bytes()
        .await
        .map_err(|e| format!("reading body: {e}"))?;
    if status != reqwest::StatusCode::OK {
        return Err(format!(
            "HTTP {status}: {}",
            String::from_utf8_lossy(&body[..body.len().min(300)])
        ));
    }
    let matches_id = |message: &Value| message.get("id").and_then(Value::as_u64) == Some(id);
    if is_sse {
        let text = std::str::from_utf8(&body).map_err(|e| format!("SSE body: {e}"))?;
        return text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(matches_id)
            .ok_or_else(|| format!("no reply with id {id} in the SSE stream"));
    }
    let message: Value =
        serde_json::from_slice(&body).map_err(|e| format!("reply is not JSON: {e}"))?;
    if matches_id(&message) {
        Ok(message)
    } else {
        Err(format!("reply for another id: {message}"))
    }
}
