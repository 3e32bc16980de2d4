//! What an HTTP request must pass before rmcp sees it, so a hostile request costs
//! no more than an honest one:
//!
//! - [`check_host`]: the `Host` allow-list (DNS-rebinding protection) on `/mcp` and
//!   `/metrics` alike (rmcp checks it only on its own endpoint, and only after this).
//! - [`guard_body`]: a POST body is read within a deadline that grows with what
//!   arrived (`--body-read-timeout` + bytes / `--min-body-rate`), scanned
//!   ([`json_scan`]) so malformed JSON, batches and bodies with more values than
//!   `--max-json-values` get a JSON-RPC error instead of a parse tree; a new session
//!   over `--max-sessions` gets 503; and when the shutdown grace ends, a call still
//!   running gets a JSON-RPC error instead of a dropped connection.
//!
//! Every refusal is a JSON-RPC error object (with the request's id when known) whose
//! message names the flag that sets the limit.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::flags::flag;
use super::json_scan::{self, INVALID_REQUEST, JsonLimits, Refusal};
use super::options::{HttpOptions, HttpSetting, InvalidHttpOptions};

/// JSON-RPC's range for implementation-defined server errors starts here.
const SERVER_ERROR: i64 = -32000;

/// A JSON-RPC error as an HTTP response.
pub fn json_rpc_error(status: StatusCode, id: Value, code: i64, message: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The `Host` values a request may carry: host names, each with an optional port.
#[derive(Debug, Clone)]
pub struct AllowedHosts(Vec<(String, Option<u16>)>);

impl AllowedHosts {
    pub fn new(options: &HttpOptions) -> Result<Self, InvalidHttpOptions> {
        let hosts = options.effective_allowed_hosts()?;
        Ok(AllowedHosts(
            hosts.iter().filter_map(|h| authority(h.trim())).collect(),
        ))
    }

    fn allows(&self, host: &str, port: Option<u16>) -> bool {
        self.0
            .iter()
            .any(|(name, p)| name == host && (p.is_none() || *p == port))
    }
}

/// Host and port of `host[:port]` (also `[::1]:80`), lower-cased without brackets.
fn authority(value: &str) -> Option<(String, Option<u16>)> {
    let parsed = axum::http::uri::Authority::try_from(value).ok()?;
    let host = parsed.host().trim_matches(['[', ']']).to_ascii_lowercase();
    Some((host, parsed.port_u16()))
}

/// 403 unless the request's `Host` (or, without one, its URI authority) is allowed.
pub async fn check_host(
    State(allowed): State<Arc<AllowedHosts>>,
    request: Request,
    next: Next,
) -> Response {
    let given = match request.headers().get(header::HOST) {
        Some(value) => value.to_str().ok().map(str::to_owned),
        None => request.uri().authority().map(|a| a.to_string()),
    };
    match given.as_deref().and_then(authority) {
        Some((host, port)) if allowed.allows(&host, port) => next.run(request).await,
        Some((host, _)) => {
            tracing::warn!(%host, "refused a request with a Host header not allowed (possible DNS rebinding)");
            (
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not allowed (see --allowed-host)\n",
            )
                .into_response()
        }
        None => (
            StatusCode::BAD_REQUEST,
            "Bad Request: missing or invalid Host header\n",
        )
            .into_response(),
    }
}

/// The limits [`guard_body`] applies, and what it needs to apply them.
pub struct BodyGuard {
    pub max_body_bytes: usize,
    pub json_limits: JsonLimits,
    pub body_read_timeout: Duration,
    pub min_body_rate: u64,
    /// Stateful mode: the live sessions and how many may exist.
    pub sessions: Option<(Arc<LocalSessionManager>, usize)>,
    /// Cancelled when the shutdown grace is over.
    pub grace_over: CancellationToken,
    /// Requests this guard let through whose answer has not come back yet.
    pub unanswered: Unanswered,
}

impl BodyGuard {
    pub fn new(
        options: &HttpOptions,
        sessions: Option<Arc<LocalSessionManager>>,
        grace_over: CancellationToken,
        unanswered: Unanswered,
    ) -> Self {
        BodyGuard {
            max_body_bytes: options.max_body_bytes,
            json_limits: options.json_limits,
            body_read_timeout: options.body_read_timeout,
            min_body_rate: options.min_body_rate,
            sessions: sessions.map(|s| (s, options.max_sessions)),
            grace_over,
            unanswered,
        }
    }

    /// How long a body that has delivered `received` bytes may have taken so far.
    fn allowed(&self, received: usize) -> Duration {
        self.body_read_timeout
            + Duration::from_secs_f64(received as f64 / self.min_body_rate as f64)
    }
}

/// Why a body could not be read.
enum BodyError {
    TooLarge,
    TooSlow { received: usize },
    Broken(String),
}

async fn read_body(guard: &BodyGuard, headers: &HeaderMap, body: Body) -> Result<Bytes, BodyError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > guard.max_body_bytes) {
        return Err(BodyError::TooLarge);
    }
    let started = Instant::now();
    let mut body = std::pin::pin!(body);
    let mut collected = Vec::with_capacity(declared.unwrap_or(0));
    loop {
        let deadline = started + guard.allowed(collected.len());
        let frame = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx));
        let frame = match tokio::time::timeout_at(deadline.into(), frame).await {
            Err(_) => {
                return Err(BodyError::TooSlow {
                    received: collected.len(),
                });
            }
            Ok(None) => return Ok(collected.into()),
            Ok(Some(Err(e))) => return Err(BodyError::Broken(e.to_string())),
            Ok(Some(Ok(frame))) => frame,
        };
        if let Ok(data) = frame.into_data() {
            if collected.len() + data.len() > guard.max_body_bytes {
                return Err(BodyError::TooLarge);
            }
            collected.extend_from_slice(&data);
        }
    }
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
}

/// The body checks of the module docs, for POSTs of JSON (anything else goes on to
/// rmcp, which refuses it before reading a body).
pub async fn guard_body(
    State(guard): State<Arc<BodyGuard>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != axum::http::Method::POST || !is_json(request.headers()) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match read_body(&guard, &parts.headers, body).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => {
            return json_rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                Value::Null,
                INVALID_REQUEST,
                format!(
                    "Invalid Request: the body exceeds {} bytes (limit set by {})",
                    guard.max_body_bytes,
                    flag(HttpSetting::MaxBodyBytes)
                ),
            );
        }
        Err(BodyError::TooSlow { received }) => {
            tracing::warn!(received, "cut off a request body arriving too slowly");
            let mut response = json_rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                Value::Null,
                INVALID_REQUEST,
                format!(
                    "Invalid Request: the body arrived too slowly ({received} bytes in {:.0} s; \
                     a body gets {} plus 1 s per {} bytes)",
                    guard.allowed(received).as_secs_f64(),
                    flag(HttpSetting::BodyReadTimeout),
                    flag(HttpSetting::MinBodyRate)
                ),
            );
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
        Err(BodyError::Broken(e)) => {
            tracing::debug!("request body failed: {e}");
            return (
                StatusCode::BAD_REQUEST,
                "Bad Request: the body could not be read\n",
            )
                .into_response();
        }
    };
    let scanned = match json_scan::scan(&bytes, guard.json_limits) {
        Ok(scanned) => scanned,
        Err(refusal) => {
            let status = match refusal {
                Refusal::TooManyValues { .. } => StatusCode::PAYLOAD_TOO_LARGE,
                _ => StatusCode::BAD_REQUEST,
            };
            return json_rpc_error(
                status,
                refusal.reply_id(&bytes),
                refusal.json_rpc_code(),
                refusal.message(flag(HttpSetting::MaxJsonValues)),
            );
        }
    };
    let id = scanned.id(&bytes);
    if let Some((sessions, max)) = &guard.sessions
        && !parts.headers.contains_key("mcp-session-id")
        && scanned.method(&bytes) == Some("initialize")
    {
        let live = sessions.sessions.read().await.len();
        if live >= *max {
            tracing::warn!(live, "refused a new session: at the session limit");
            let mut response = json_rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                id,
                SERVER_ERROR,
                format!(
                    "the server holds {live} sessions, its limit (set by {}); close one \
                     (DELETE with its Mcp-Session-Id) or retry after idle sessions expire",
                    flag(HttpSetting::MaxSessions)
                ),
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
            return response;
        }
    }
    let (bytes, parked) = match scanned.method(&bytes) == Some("tools/call")
        && bytes.len() >= crate::parked::MIN_PARKED_BYTES
    {
        true => park_arguments(bytes).await,
        false => (bytes, None),
    };
    let request = Request::from_parts(parts, Body::from(bytes));
    // Notifications (no id) get no answer to wait for.
    let owed = (!id.is_null()).then(|| guard.unanswered.owe());
    let response = tokio::select! {
        response = next.run(request) => {
            let response = parse_failure_as_json_rpc(response, id.clone()).await;
            answer_stream_at_shutdown(response, id, guard.grace_over.clone(), owed)
        }
        () = guard.grace_over.cancelled() => shutting_down(id),
    };
    match parked {
        None => response,
        // Parked arguments no call took are given back when the response ends.
        Some(parked) => {
            let (parts, body) = response.into_parts();
            let stream = Holding {
                stream: body.into_data_stream(),
                _parked: parked,
            };
            Response::from_parts(parts, Body::from_stream(stream))
        }
    }
}

/// A large call's body with its arguments parked ([`crate::parked`]): parsed once
/// here, on the blocking pool, and written again without them for rmcp. The body as
/// it came when nothing was parked.
async fn park_arguments(bytes: Bytes) -> (Bytes, Option<crate::parked::Parked>) {
    let parking = tokio::task::spawn_blocking(move || {
        let Ok(mut message) = serde_json::from_slice::<Value>(&bytes) else {
            return (bytes, None);
        };
        match crate::parked::park(&mut message, bytes.len()) {
            Some(parked) => match serde_json::to_vec(&message) {
                Ok(rest) => (Bytes::from(rest), Some(parked)),
                Err(_) => (bytes, None),
            },
            None => (bytes, None),
        }
    });
    // The blocking pool only fails to run it at shutdown.
    match parking.await {
        Ok(parked) => parked,
        Err(_) => (Bytes::new(), None),
    }
}

/// A response body's stream holding its call's parked arguments until it ends.
struct Holding<S> {
    stream: S,
    _parked: crate::parked::Parked,
}

impl<S: futures_core::Stream + Unpin> futures_core::Stream for Holding<S> {
    type Item = S::Item;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        std::pin::Pin::new(&mut self.stream).poll_next(cx)
    }
}

/// The error a call still running when the shutdown grace ends gets.
fn shutting_down(id: Value) -> Response {
    json_rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        SERVER_ERROR,
        shutting_down_message(),
    )
}

fn shutting_down_message() -> String {
    "the server is shutting down and this call did not finish within its grace \
     period (--shutdown-grace); retry it"
        .into()
}

/// A call answered on an SSE stream (stateful mode, or a call that streams progress)
/// has its response headers sent long before its result. Without this, the stream
/// just ended at shutdown and the client saw no answer to its request: now, unless
/// the result went out first, the stream's last event is the same JSON-RPC error a
/// JSON reply gets. A client that goes away still drops the call's stream. `owed`
/// is released once the answer passed (or the stream ended).
fn answer_stream_at_shutdown(
    response: Response,
    id: Value,
    grace_over: CancellationToken,
    owed: Option<Owed>,
) -> Response {
    let is_sse = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_sse || id.is_null() {
        return response;
    }
    let (parts, body) = response.into_parts();
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, axum::Error>>(4);
    tokio::spawn(async move {
        let mut owed = owed;
        let mut body = std::pin::pin!(body);
        let mut answered = false;
        loop {
            tokio::select! {
                frame = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)) => match frame {
                    None => return,
                    Some(Err(e)) => {
                        let _ = tx.send(Err(e)).await;
                        return;
                    }
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            answered = answered || answers(&data, &id);
                            if answered {
                                drop(owed.take());
                            }
                            if tx.send(Ok(data)).await.is_err() {
                                return;
                            }
                        }
                    }
                },
                () = grace_over.cancelled(), if !answered => {
                    let error = json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": SERVER_ERROR, "message": shutting_down_message()}});
                    let _ = tx.send(Ok(Bytes::from(format!("data: {error}\n\n")))).await;
                    return;
                }
                () = tx.closed() => return,
            }
        }
    });
    Response::from_parts(parts, Body::from_stream(Frames(rx)))
}

/// How many requests with an id still wait for their answer. HTTP shutdown waits for
/// them besides the tool calls: a call leaves the in-flight count when its handler
/// returns, a moment before rmcp writes its result to the client's stream, and the
/// grace's error must not overtake a result that is on its way.
#[derive(Debug, Clone, Default)]
pub struct Unanswered(Arc<UnansweredState>);

#[derive(Debug, Default)]
struct UnansweredState {
    count: AtomicUsize,
    none_left: Notify,
}

impl Unanswered {
    pub fn count(&self) -> usize {
        self.0.count.load(Ordering::SeqCst)
    }

    /// Count a request until the returned token is dropped.
    fn owe(&self) -> Owed {
        self.0.count.fetch_add(1, Ordering::SeqCst);
        Owed(self.clone())
    }

    /// Wait until every request is answered or `deadline` passed; returns how many
    /// are not.
    pub async fn answered_by(&self, deadline: tokio::time::Instant) -> usize {
        loop {
            // Registered before the check, so a last answer between the two still wakes us.
            let none_left = self.0.none_left.notified();
            let mut none_left = std::pin::pin!(none_left);
            none_left.as_mut().enable();
            if self.count() == 0 {
                return 0;
            }
            if tokio::time::timeout_at(deadline, none_left).await.is_err() {
                return self.count();
            }
        }
    }
}

/// One request's place in [`Unanswered`].
struct Owed(Unanswered);

impl Drop for Owed {
    fn drop(&mut self) {
        if self.0.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.0.none_left.notify_waiters();
        }
    }
}

/// Whether an SSE chunk carries the result or error of request `id`.
fn answers(chunk: &[u8], id: &Value) -> bool {
    String::from_utf8_lossy(chunk)
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .any(|message| {
            message.get("id") == Some(id)
                && (message.get("result").is_some() || message.get("error").is_some())
        })
}

/// The receiving end of [`answer_stream_at_shutdown`]'s pump, as a body stream.
struct Frames(tokio::sync::mpsc::Receiver<Result<Bytes, axum::Error>>);

impl futures_core::Stream for Frames {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

/// rmcp answers valid JSON that is not a JSON-RPC message with 415 and text; a JSON
/// client expects 400 and a JSON-RPC error (-32600) it can match by id.
async fn parse_failure_as_json_rpc(response: Response, id: Value) -> Response {
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    let text = axum::body::to_bytes(response.into_body(), 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    json_rpc_error(
        StatusCode::BAD_REQUEST,
        id,
        INVALID_REQUEST,
        format!("Invalid Request: not a JSON-RPC message ({})", text.trim()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_allow_list_matches_names_and_optional_ports() {
        let allowed = AllowedHosts(
            ["localhost", "mcp.example.com:443", "[::1]"]
                .iter()
                .filter_map(|h| authority(h))
                .collect(),
        );
        let check = |value: &str| authority(value).is_some_and(|(h, p)| allowed.allows(&h, p));
        assert!(check("localhost:8787"));
        assert!(check("LOCALHOST"));
        assert!(check("[::1]:9000"));
        assert!(check("mcp.example.com:443"));
        assert!(!check("mcp.example.com:8443"));
        assert!(!check("mcp.example.com"));
        assert!(!check("evil.com"));
        assert!(!check("localhost.evil.com"));
    }

    #[test]
    fn body_allowance_grows_with_what_arrived() {
        let guard = BodyGuard::new(
            &HttpOptions::default(),
            None,
            CancellationToken::new(),
            Unanswered::default(),
        );
        assert_eq!(guard.allowed(0), HttpOptions::DEFAULT_BODY_READ_TIMEOUT);
        assert_eq!(
            guard.allowed(HttpOptions::DEFAULT_MIN_BODY_RATE as usize * 3),
            HttpOptions::DEFAULT_BODY_READ_TIMEOUT + Duration::from_secs(3)
        );
    }
}
