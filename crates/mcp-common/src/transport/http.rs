//! Serving streamable HTTP: the router (probes, auth, limits, rmcp) and the process
//! lifecycle around it (bind, log the URL, graceful shutdown).
//!
//! Request path, outermost first (see ARCHITECTURE.md):
//! observe (status metrics, debug log) → `/healthz`, `/readyz` (no auth) | bearer auth →
//! `/metrics` | request timeout → concurrency limit → rmcp (Host/Origin check, body
//! limit, sessions, JSON-RPC) → the server's tools.

use std::time::{Duration, Instant};

use anyhow::Context;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tower::limit::ConcurrencyLimitLayer;
use tower_http::timeout::TimeoutLayer;

use super::auth;
use super::options::HttpOptions;
use crate::metrics::{self, InFlightCalls};

/// Makes the handler for a new session (or, stateless, a request). Should be cheap:
/// clone shared state.
pub trait HandlerFactory<S>: Fn() -> S + Send + Sync + 'static {}
impl<S, F: Fn() -> S + Send + Sync + 'static> HandlerFactory<S> for F {}

/// The MCP service alone (rmcp's checks and sessions, no auth or limits) as an axum
/// router mounted at `options.path`.
pub fn mcp_router<S: ServerHandler + Send + 'static>(
    factory: impl HandlerFactory<S>,
    options: &HttpOptions,
    shutdown: CancellationToken,
) -> anyhow::Result<axum::Router> {
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
pub fn http_router<S: ServerHandler + Send + 'static>(
    factory: impl HandlerFactory<S>,
    options: &HttpOptions,
    shutdown: CancellationToken,
) -> anyhow::Result<axum::Router> {
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
/// accepting connections, waits up to `shutdown_grace` for the calls `in_flight`
/// counts (the server's metered router: `metrics::global().in_flight_calls()`),
/// then closes sessions and streams and returns `Ok` (exit 0).
pub async fn serve_http<S: ServerHandler + Send + 'static>(
    factory: impl HandlerFactory<S>,
    options: HttpOptions,
    in_flight: InFlightCalls,
) -> anyhow::Result<()> {
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
    tracing::info!(
        in_flight = in_flight.count(),
        grace_s = options.shutdown_grace.as_secs_f64(),
        "shutting down: no new connections, finishing in-flight tool calls"
    );
    stop_accepting.cancel();
    let unfinished = in_flight.drained(options.shutdown_grace).await;
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
