//! Serving streamable HTTP: the router (probes, auth, limits, rmcp) and the process
//! lifecycle around it (bind, accept, per-connection timeouts, graceful shutdown).
//!
//! Request path, outermost first (see ARCHITECTURE.md):
//! observe (status metrics, debug log) → `/healthz`, `/readyz` (no auth) | Host
//! allow-list → bearer auth → `/metrics` | request timeout → concurrency limit →
//! body guard (read deadline, JSON scan, session cap) → rmcp (Host/Origin check,
//! sessions, JSON-RPC) → the server's tools.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::limit::ConcurrencyLimitLayer;
use tower_http::timeout::TimeoutLayer;

use super::auth;
use super::cancel_on_close::CancelOnClose;
use super::guard::{self, AllowedHosts, BodyGuard, Unanswered};
use super::options::HttpOptions;
use crate::metrics::{self, InFlightCalls};

/// Makes the handler for a new session (or, stateless, a request). Should be cheap:
/// clone shared state.
pub trait HandlerFactory<S>: Fn() -> S + Send + Sync + 'static {}
impl<S, F: Fn() -> S + Send + Sync + 'static> HandlerFactory<S> for F {}

/// The two moments of shutdown the router reacts to, and the requests it still owes
/// an answer.
#[derive(Debug, Clone, Default)]
pub struct ShutdownTokens {
    /// The grace period is over: calls still running get a JSON-RPC error.
    pub grace_over: CancellationToken,
    /// Close rmcp's sessions and their streams.
    pub close_sessions: CancellationToken,
    /// Requests (with an id) the router let through and has not answered yet.
    pub unanswered: Unanswered,
}

impl ShutdownTokens {
    /// Once no new connections are accepted: wait up to `grace` for the calls
    /// `in_flight` counts and for the answers of every request, answer what is left
    /// with a JSON-RPC error, then close sessions. Returns how many requests were
    /// still unanswered when the grace ended.
    pub async fn finish(&self, in_flight: &InFlightCalls, grace: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + grace;
        let unfinished = in_flight.drained(grace).await;
        if unfinished > 0 {
            tracing::warn!(
                unfinished,
                "tool calls still running after the grace period; answering them with an error"
            );
        }
        // A finished call's result reaches its stream a moment after the call left
        // `in_flight`: cancelling now would send the grace's error ahead of it.
        let unanswered = self.unanswered.answered_by(deadline).await;
        self.grace_over.cancel();
        // Give just-answered requests a moment to be written, then end sessions.
        tokio::time::sleep(Duration::from_millis(100)).await;
        self.close_sessions.cancel();
        unanswered
    }
}

/// The MCP service alone (rmcp's checks and sessions, no auth or limits) as an axum
/// router mounted at `options.path`, and its sessions (stateful mode).
pub fn mcp_router<S: ServerHandler + Send + 'static>(
    factory: impl HandlerFactory<S>,
    options: &HttpOptions,
    close_sessions: CancellationToken,
) -> anyhow::Result<(axum::Router, Option<Arc<LocalSessionManager>>)> {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.effective_allowed_hosts()?)
        .with_allowed_origins(options.effective_allowed_origins())
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_legacy_session_mode(!options.stateless)
        .with_json_response(options.stateless)
        .with_cancellation_token(close_sessions);
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(options.session_idle_timeout);
    let sessions = Arc::new(sessions);
    // A call whose response stream is dropped (the client hung up) and not resumed
    // is cancelled.
    let cancelling = CancelOnClose::new(sessions.clone());
    let service = StreamableHttpService::new(move || Ok(factory()), Arc::new(cancelling), config);
    let router = axum::Router::new().nest_service(&options.normalized_path()?, service);
    Ok((router, (!options.stateless).then_some(sessions)))
}

/// Everything served over HTTP: the MCP endpoint behind the Host check, auth, a
/// timeout, a concurrency limit and the body guard; `/healthz` and `/readyz` for
/// orchestrators (never behind auth or the Host check: probes use any address);
/// `/metrics` (behind the Host check, and auth when auth is on).
pub fn http_router<S: ServerHandler + Send + 'static>(
    factory: impl HandlerFactory<S>,
    options: &HttpOptions,
    shutdown: &ShutdownTokens,
) -> anyhow::Result<axum::Router> {
    options.validate()?;
    let (mcp, sessions) = mcp_router(factory, options, shutdown.close_sessions.clone())?;
    let body_guard = Arc::new(BodyGuard::new(
        options,
        sessions,
        shutdown.grace_over.clone(),
        shutdown.unanswered.clone(),
    ));
    // Timeout outside the limit: a request waiting for a slot is bounded too. The body
    // guard inside it: bodies are buffered only by requests holding a slot, so memory
    // is bounded by slots × body size.
    let mcp = mcp.layer(
        tower::ServiceBuilder::new()
            .layer(TimeoutLayer::with_status_code(
                StatusCode::REQUEST_TIMEOUT,
                options.request_timeout,
            ))
            .layer(ConcurrencyLimitLayer::new(options.max_concurrent_requests))
            .layer(middleware::from_fn_with_state(
                body_guard,
                guard::guard_body,
            )),
    );
    let allowed_hosts = Arc::new(AllowedHosts::new(options)?);
    let protected = axum::Router::new()
        .route("/metrics", get(metrics_page))
        .merge(mcp)
        .layer(middleware::from_fn_with_state(
            options.auth.clone(),
            auth::require_bearer,
        ))
        .layer(middleware::from_fn_with_state(
            allowed_hosts,
            guard::check_host,
        ));
    Ok(probe_routes(options)
        .merge(protected)
        .layer(middleware::from_fn(observe)))
}

/// `/healthz` (200 while serving) and `/readyz` (200 once ready, else 503).
fn probe_routes(options: &HttpOptions) -> axum::Router {
    let readiness = options.readiness.clone();
    axum::Router::new()
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
}

/// The probes alone, as served on the accept thread (see [`serve_http`]).
fn probe_router(options: &HttpOptions) -> axum::Router {
    probe_routes(options).layer(middleware::from_fn(observe))
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
/// counts (the server's metered router: `metrics::global().in_flight_calls()`) and
/// for their answers to go out, answers calls still running with a JSON-RPC error,
/// closes sessions and streams, and returns `Ok` (exit 0): [`ShutdownTokens::finish`].
pub async fn serve_http<S: ServerHandler + Send + 'static>(
    factory: impl HandlerFactory<S>,
    options: HttpOptions,
    in_flight: InFlightCalls,
) -> anyhow::Result<()> {
    let shutdown = ShutdownTokens::default();
    let router = http_router(factory, &options, &shutdown)?;
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

    // Two stages: stop accepting first (and let idle connections go), close sessions
    // (and their SSE streams, which would otherwise hold connections open) only after
    // calls finished.
    let stop_accepting = CancellationToken::new();
    let connections = TaskTracker::new();
    // Connections are accepted, and probes answered, on a thread of their own: a
    // `/healthz` must not wait behind MCP work queued on the workers (50 busy clients
    // made it take 3-5 s). MCP connections are handed to the workers.
    let accepting = Accepting {
        probes: probe_router(&options),
        router,
        header_read_timeout: options.header_read_timeout,
        connections: connections.clone(),
        stop: stop_accepting.clone(),
        workers: tokio::runtime::Handle::current(),
    };
    let listener = listener
        .into_std()
        .context("cannot hand the listener to the accept thread")?;
    let accept_runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the accept thread's runtime")?;
    let (accept_ended, accept_done) = tokio::sync::oneshot::channel::<()>();
    std::thread::Builder::new()
        .name("http-accept".into())
        .spawn(move || {
            accept_runtime.block_on(async move {
                match tokio::net::TcpListener::from_std(listener) {
                    Ok(listener) => accepting.run(listener).await,
                    Err(e) => tracing::error!("cannot listen on the accept thread: {e}"),
                }
            });
            let _ = accept_ended.send(());
        })
        .context("cannot start the accept thread")?;
    tokio::select! {
        _ = accept_done => {}
        () = wait_for_signal() => {}
    }
    stop_accepting.cancel();
    connections.close();
    tracing::info!(
        in_flight = in_flight.count(),
        grace_s = options.shutdown_grace.as_secs_f64(),
        "shutting down: no new connections, finishing in-flight tool calls"
    );
    shutdown.finish(&in_flight, options.shutdown_grace).await;
    if tokio::time::timeout(Duration::from_secs(5), connections.wait())
        .await
        .is_err()
    {
        tracing::warn!("connections still open 5 s after sessions closed; exiting");
    }
    tracing::info!("stopped");
    Ok(())
}

/// What the accept thread needs: the routers, the connection settings, and where MCP
/// connections go.
struct Accepting {
    /// `/healthz` and `/readyz`, answered on the accept thread itself.
    probes: axum::Router,
    /// Everything (probes too), served on the workers.
    router: axum::Router,
    header_read_timeout: Duration,
    connections: TaskTracker,
    stop: CancellationToken,
    /// The server's multi-threaded runtime.
    workers: tokio::runtime::Handle,
}

impl Accepting {
    /// Accept connections until `stop`. A new connection whose first bytes ask for a
    /// probe is answered here (then closed); any other is served on the workers,
    /// HTTP/1.1 with hyper's header-read timer (which also ends idle keep-alive
    /// connections).
    async fn run(self, listener: tokio::net::TcpListener) {
        let this = Arc::new(self);
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of descriptors (EMFILE) or a connection reset before accept:
                        // back off briefly rather than spin, and keep serving.
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = this.stop.cancelled() => return,
            };
            tokio::spawn(Arc::clone(&this).dispatch(stream));
        }
    }

    /// Serve `stream` here if it asks for a probe, else hand it to the workers.
    async fn dispatch(self: Arc<Self>, stream: tokio::net::TcpStream) {
        match first_request(&stream, self.header_read_timeout).await {
            // Nothing arrived in time, or the peer left: close, as the header timer would.
            FirstRequest::None => {}
            FirstRequest::Probe => {
                let mut builder = self.builder();
                // One probe per connection: a later request on it is not a probe.
                builder.keep_alive(false);
                serve_connection(stream, self.probes.clone(), builder, self.stop.clone()).await;
            }
            FirstRequest::Other => {
                // Re-registered with the workers' reactor, so the connection's I/O and
                // its requests run there.
                let stream = match stream.into_std() {
                    Ok(stream) => stream,
                    Err(e) => {
                        tracing::debug!("cannot hand a connection to the workers: {e}");
                        return;
                    }
                };
                let (router, builder, stop) =
                    (self.router.clone(), self.builder(), self.stop.clone());
                self.connections.spawn_on(
                    async move {
                        match tokio::net::TcpStream::from_std(stream) {
                            Ok(stream) => serve_connection(stream, router, builder, stop).await,
                            Err(e) => tracing::debug!("connection lost in hand-over: {e}"),
                        }
                    },
                    &self.workers,
                );
            }
        }
    }

    fn builder(&self) -> hyper::server::conn::http1::Builder {
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.header_read_timeout)
            .keep_alive(true);
        builder
    }
}

/// What a new connection's first bytes ask for.
enum FirstRequest {
    /// `GET /healthz` or `GET /readyz`.
    Probe,
    /// Anything else, or too little to tell yet (served on the workers, as always).
    Other,
    /// Nothing within the header-read timeout, or the connection closed.
    None,
}

/// Peek (without consuming) at a connection's first bytes. Probes send their request
/// line in one piece, so one look decides; a head dribbled in pieces is not a probe
/// and goes to the workers, whose header timer deals with it.
async fn first_request(stream: &tokio::net::TcpStream, wait: Duration) -> FirstRequest {
    const PROBES: [&[u8]; 2] = [b"GET /healthz", b"GET /readyz"];
    let mut buf = [0u8; 16];
    let seen = match tokio::time::timeout(wait, stream.peek(&mut buf)).await {
        Ok(Ok(n)) if n > 0 => &buf[..n],
        _ => return FirstRequest::None,
    };
    let is_probe = PROBES.iter().any(|probe| {
        seen.len() > probe.len()
            && seen.starts_with(probe)
            && matches!(seen[probe.len()], b' ' | b'?')
    });
    match is_probe {
        true => FirstRequest::Probe,
        false => FirstRequest::Other,
    }
}

/// Serve one connection with `router` until it ends; on `stop`, finish the request in
/// progress (an idle connection closes at once).
async fn serve_connection(
    stream: tokio::net::TcpStream,
    router: axum::Router,
    builder: hyper::server::conn::http1::Builder,
    stop: CancellationToken,
) {
    let service = TowerToHyperService::new(router);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(e) = result {
                tracing::debug!("connection ended: {e}");
            }
            return;
        }
        () = stop.cancelled() => connection.as_mut().graceful_shutdown(),
    }
    let _ = connection.await;
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
