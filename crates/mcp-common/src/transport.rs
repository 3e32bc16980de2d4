//! Serving a handler: stdio for desktop and CLI agents, streamable HTTP for shared
//! endpoints. Every server in `servers/` starts through here, so transport behaviour
//! (logging, host/origin checks, auth, limits, probes, metrics, shutdown) is the same
//! everywhere.
//!
//! HTTP request path, outermost first (see ARCHITECTURE.md):
//! observe (status metrics, debug log) → `/healthz`, `/readyz` (no auth) | bearer auth →
//! `/metrics` | request timeout → concurrency limit → rmcp (Host/Origin check, body
//! limit, sessions, JSON-RPC) → the server's tools.

pub mod auth;
pub mod stdio_framing;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::ServerHandler;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tower::limit::ConcurrencyLimitLayer;
use tower_http::timeout::TimeoutLayer;

pub use auth::BearerTokens;

use crate::metrics;

/// How log lines look on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, for log shippers.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("unknown log format `{other}` (use text or json)")),
        }
    }
}

/// Log to stderr: stdout belongs to the stdio transport. `RUST_LOG` overrides `default`.
pub fn init_logging(default: &str) {
    init_logging_as(default, LogFormat::Text);
}

/// [`init_logging`] in the given format.
pub fn init_logging_as(default: &str, format: LogFormat) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder.json().with_current_span(false).try_init(),
    };
}

/// Serve one client over stdin/stdout until it disconnects. Bad lines (not JSON, a
/// batch, over 16 MiB) are answered with JSON-RPC errors and the session goes on.
pub async fn serve_stdio<S: ServerHandler>(handler: S) -> anyhow::Result<()> {
    let (reader, writer) = rmcp::transport::stdio_pipes();
    let (transport, writer_task) =
        stdio_framing::FramedStdio::new(reader, writer, stdio_framing::MAX_LINE_BYTES);
    let running = handler
        .serve(transport)
        .await
        .context("MCP session over stdio failed to start")?;
    let ended = running
        .waiting()
        .await
        .context("MCP session over stdio ended with an error");
    // Flush what the session wrote before exiting.
    let _ = writer_task.await;
    ended?;
    Ok(())
}

/// Whether the server can do its work yet (e.g. vocabularies loaded); `/readyz`
/// answers 503 until [`Readiness::mark_ready`].
#[derive(Debug, Clone, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    pub fn ready() -> Self {
        let readiness = Readiness::default();
        readiness.mark_ready();
        readiness
    }
    pub fn mark_ready(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Where and how to serve streamable HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub bind: SocketAddr,
    /// The MCP endpoint path, e.g. `/mcp`.
    pub path: String,
    /// `Host` header values accepted (DNS-rebinding protection). Empty means the
    /// loopback names, which is only allowed for a loopback bind.
    pub allowed_hosts: Vec<String>,
    /// Browser `Origin`s accepted (`https://app.example.com:443`, `http://localhost:*`).
    /// Empty means loopback origins only. Requests without `Origin` (non-browser
    /// clients) always pass this check.
    pub allowed_origins: Vec<String>,
    /// Bearer tokens for the MCP endpoint and `/metrics`; none means no auth.
    pub auth: BearerTokens,
    /// No sessions: every request is self-contained, so replicas need no affinity.
    pub stateless: bool,
    /// Stateful mode: a session unused this long is closed (its id then gets 404).
    pub session_idle_timeout: Duration,
    /// Larger POST bodies get 413 before any parsing.
    pub max_body_bytes: usize,
    /// MCP requests handled at once; more wait in line (bounded by `request_timeout`).
    pub max_concurrent_requests: usize,
    /// Time until response headers (a stateless call's whole result); 408 after it.
    pub request_timeout: Duration,
    /// On SIGTERM/SIGINT, how long in-flight tool calls may take to finish.
    pub shutdown_grace: Duration,
    pub readiness: Readiness,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 8787)),
            path: "/mcp".into(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            auth: BearerTokens::default(),
            stateless: false,
            session_idle_timeout: Duration::from_secs(300),
            max_body_bytes: 16 * 1024 * 1024,
            max_concurrent_requests: 64,
            request_timeout: Duration::from_secs(60),
            shutdown_grace: Duration::from_secs(10),
            readiness: Readiness::ready(),
        }
    }
}

impl HttpOptions {
    /// The Host names to accept, or why the configuration is unsafe.
    pub fn effective_allowed_hosts(&self) -> anyhow::Result<Vec<String>> {
        if !self.allowed_hosts.is_empty() {
            return Ok(self.allowed_hosts.clone());
        }
        if !self.bind.ip().is_loopback() {
            bail!(
                "binding {} (not loopback) needs --allowed-host with the public host name \
                 clients use; without it every request would be refused with 403",
                self.bind
            );
        }
        Ok(vec![
            "localhost".into(),
            "127.0.0.1".into(),
            "::1".into(),
            "[::1]".into(),
        ])
    }

    /// The browser Origins to accept: loopback pages unless configured.
    pub fn effective_allowed_origins(&self) -> Vec<String> {
        if !self.allowed_origins.is_empty() {
            return self.allowed_origins.clone();
        }
        ["http", "https"]
            .iter()
            .flat_map(|scheme| {
                ["localhost", "127.0.0.1", "[::1]"].map(|host| format!("{scheme}://{host}:*"))
            })
            .collect()
    }

    fn validate(&self) -> anyhow::Result<()> {
        if self.max_concurrent_requests == 0 {
            bail!("--max-concurrent-requests must be at least 1");
        }
        if self.max_body_bytes == 0 {
            bail!("--max-body-bytes must be at least 1");
        }
        if self.request_timeout.is_zero() {
            bail!("--request-timeout must be above 0");
        }
        self.normalized_path().map(drop)
    }

    fn normalized_path(&self) -> anyhow::Result<String> {
        let path = self.path.trim_end_matches('/');
        if !path.starts_with('/') || path.len() < 2 {
            bail!(
                "--path must start with '/' and name a path, e.g. /mcp (got {:?})",
                self.path
            );
        }
        if matches!(path, "/healthz" | "/readyz" | "/metrics") {
            bail!("--path {path} is taken by the built-in probe of that name");
        }
        Ok(path.to_string())
    }
}

/// The MCP service alone (rmcp's checks and sessions, no auth or limits) as an axum
/// router mounted at `options.path`. A new handler is made per session (or per request
/// when stateless) by `factory`, which should be cheap: clone shared state.
pub fn mcp_router<S, F>(
    factory: F,
    options: &HttpOptions,
    shutdown: CancellationToken,
) -> anyhow::Result<axum::Router>
where
    S: ServerHandler + Send + 'static,
    F: Fn() -> S + Send + Sync + 'static,
{
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.effective_allowed_hosts()?)
        .with_allowed_origins(options.effective_allowed_origins())
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_legacy_session_mode(!options.stateless)
        .with_json_response(options.stateless)
        .with_cancellation_token(shutdown);
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(options.session_idle_timeout);
    let service = StreamableHttpService::new(move || Ok(factory()), sessions.into(), config);
    Ok(axum::Router::new().nest_service(&options.normalized_path()?, service))
}

/// Everything served over HTTP: the MCP endpoint behind auth, a timeout and a
/// concurrency limit; `/healthz` and `/readyz` for orchestrators (never behind auth);
/// `/metrics` (behind auth when auth is on).
pub fn http_router<S, F>(
    factory: F,
    options: &HttpOptions,
    shutdown: CancellationToken,
) -> anyhow::Result<axum::Router>
where
    S: ServerHandler + Send + 'static,
    F: Fn() -> S + Send + Sync + 'static,
{
    options.validate()?;
    // Timeout outside the limit: a request waiting for a slot is bounded too.
    let mcp = mcp_router(factory, options, shutdown)?.layer(
        tower::ServiceBuilder::new()
            .layer(TimeoutLayer::with_status_code(
                StatusCode::REQUEST_TIMEOUT,
                options.request_timeout,
            ))
            .layer(ConcurrencyLimitLayer::new(options.max_concurrent_requests)),
    );
    let authenticated = axum::Router::new()
        .route("/metrics", get(metrics_page))
        .merge(mcp)
        .layer(middleware::from_fn_with_state(
            options.auth.clone(),
            auth::require_bearer,
        ));
    let readiness = options.readiness.clone();
    Ok(axum::Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/readyz",
            get(move || {
                let ready = readiness.is_ready();
                async move {
                    if ready {
                        (StatusCode::OK, "ready\n")
                    } else {
                        (StatusCode::SERVICE_UNAVAILABLE, "starting\n")
                    }
                }
            }),
        )
        .merge(authenticated)
        .layer(middleware::from_fn(observe)))
}

async fn metrics_page() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        metrics::global().encode(),
    )
        .into_response()
}

/// Count every response by status and log it at debug level.
async fn observe(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let status = response.status().as_u16();
    metrics::global().record_http_response(status);
    tracing::debug!(%method, %path, status, elapsed_ms = started.elapsed().as_secs_f64() * 1e3, "http request");
    response
}

/// Bind, log the URL to stderr, and serve until SIGINT/SIGTERM. Shutdown stops
/// accepting connections, waits up to `shutdown_grace` for in-flight tool calls,
/// then closes sessions and streams and returns `Ok` (exit 0).
pub async fn serve_http<S, F>(factory: F, options: HttpOptions) -> anyhow::Result<()>
where
    S: ServerHandler + Send + 'static,
    F: Fn() -> S + Send + Sync + 'static,
{
    // Two stages: stop accepting first, close sessions (and their SSE streams,
    // which would otherwise hold connections open) only after calls finished.
    let stop_accepting = CancellationToken::new();
    let close_sessions = CancellationToken::new();
    let router = http_router(factory, &options, close_sessions.clone())?;
    let listener = tokio::net::TcpListener::bind(options.bind)
        .await
        .with_context(|| format!("cannot bind {}", options.bind))?;
    let local = listener
        .local_addr()
        .context("bound socket has no address")?;
    // Tests and scripts read this line to learn the port when binding port 0.
    // (The URL ends the line: no structured fields after it.)
    tracing::info!(
        stateless = options.stateless,
        auth = options.auth.is_enabled(),
        "serving MCP"
    );
    tracing::info!("listening on http://{local}{}", options.normalized_path()?);

    let server = axum::serve(listener, router)
        .with_graceful_shutdown(stop_accepting.clone().cancelled_owned())
        .into_future();
    let mut server = tokio::spawn(server);
    tokio::select! {
        joined = &mut server => {
            // The server only ends by itself on an accept/IO failure.
            joined.context("HTTP server task failed")?.context("HTTP server failed")?;
            return Ok(());
        }
        () = wait_for_signal() => {}
    }
    let metrics = metrics::global();
    tracing::info!(
        in_flight = metrics.tool_calls_in_flight(),
        grace_s = options.shutdown_grace.as_secs_f64(),
        "shutting down: no new connections, finishing in-flight tool calls"
    );
    stop_accepting.cancel();
    let deadline = Instant::now() + options.shutdown_grace;
    while metrics.tool_calls_in_flight() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let unfinished = metrics.tool_calls_in_flight();
    if unfinished > 0 {
        tracing::warn!(
            unfinished,
            "tool calls still running after the grace period; closing"
        );
    }
    // Give just-finished calls a moment to write their responses, then end sessions.
    tokio::time::sleep(Duration::from_millis(100)).await;
    close_sessions.cancel();
    match tokio::time::timeout(Duration::from_secs(5), server).await {
        Ok(joined) => joined
            .context("HTTP server task failed")?
            .context("HTTP server failed")?,
        Err(_) => tracing::warn!("connections still open 5 s after sessions closed; exiting"),
    }
    tracing::info!("stopped");
    Ok(())
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(bind: &str, hosts: &[&str]) -> HttpOptions {
        HttpOptions {
            bind: bind.parse().expect("socket address"),
            allowed_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            ..HttpOptions::default()
        }
    }

    #[test]
    fn loopback_bind_defaults_to_loopback_hosts() {
        let hosts = options("127.0.0.1:8787", &[])
            .effective_allowed_hosts()
            .expect("allowed");
        assert!(hosts.contains(&"localhost".to_string()));
        assert!(hosts.contains(&"127.0.0.1".to_string()));
    }

    #[test]
    fn public_bind_without_allowed_host_is_refused() {
        let error = options("0.0.0.0:8787", &[])
            .effective_allowed_hosts()
            .expect_err("unsafe");
        assert!(error.to_string().contains("--allowed-host"), "{error}");
        let hosts = options("0.0.0.0:8787", &["mcp.example.com"]).effective_allowed_hosts();
        assert_eq!(hosts.ok(), Some(vec!["mcp.example.com".to_string()]));
    }

    #[test]
    fn path_must_be_absolute() {
        let mut o = options("127.0.0.1:0", &[]);
        o.path = "mcp".into();
        assert!(o.normalized_path().is_err());
        o.path = "/mcp/".into();
        assert_eq!(o.normalized_path().ok().as_deref(), Some("/mcp"));
        o.path = "/".into();
        assert!(o.normalized_path().is_err());
        o.path = "/metrics".into();
        assert!(o.normalized_path().is_err(), "probe paths are reserved");
    }

    #[test]
    fn origins_default_to_loopback_pages() {
        let origins = options("127.0.0.1:0", &[]).effective_allowed_origins();
        assert!(origins.contains(&"http://localhost:*".to_string()));
        assert!(origins.iter().all(|o| !o.contains("example")));
        let mut o = options("127.0.0.1:0", &[]);
        o.allowed_origins = vec!["https://app.example.com:443".into()];
        assert_eq!(
            o.effective_allowed_origins(),
            ["https://app.example.com:443"]
        );
    }

    #[test]
    fn zero_limits_are_refused() {
        let mut o = options("127.0.0.1:0", &[]);
        o.max_concurrent_requests = 0;
        assert!(o.validate().is_err());
        let mut o = options("127.0.0.1:0", &[]);
        o.request_timeout = Duration::ZERO;
        assert!(o.validate().is_err());
        assert!(options("127.0.0.1:0", &[]).validate().is_ok());
    }
}
