//! Serving a handler: stdio for desktop and CLI agents, streamable HTTP for shared
//! endpoints. Every server in `servers/` starts through here, so transport behaviour
//! (logging, host checks, shutdown) is the same everywhere.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, bail};
use rmcp::ServerHandler;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

/// Log to stderr: stdout belongs to the stdio transport. `RUST_LOG` overrides `default`.
pub fn init_logging(default: &str) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Serve one client over stdin/stdout until it disconnects.
pub async fn serve_stdio<S: ServerHandler>(handler: S) -> anyhow::Result<()> {
    let running = handler
        .serve(rmcp::transport::stdio_pipes())
        .await
        .context("MCP session over stdio failed to start")?;
    running
        .waiting()
        .await
        .context("MCP session over stdio ended with an error")?;
    Ok(())
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
    /// No sessions: every request is self-contained, so replicas need no affinity.
    pub stateless: bool,
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

    fn normalized_path(&self) -> anyhow::Result<String> {
        let path = self.path.trim_end_matches('/');
        if !path.starts_with('/') || path.len() < 2 {
            bail!(
                "--path must start with '/' and name a path, e.g. /mcp (got {:?})",
                self.path
            );
        }
        Ok(path.to_string())
    }
}

/// The MCP service as an axum router mounted at `options.path`; callers can layer
/// more routes or middleware on it. A new handler is made per session (or per request
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
        .with_legacy_session_mode(!options.stateless)
        .with_json_response(options.stateless)
        .with_cancellation_token(shutdown);
    let service = StreamableHttpService::new(
        move || Ok(factory()),
        LocalSessionManager::default().into(),
        config,
    );
    Ok(axum::Router::new().nest_service(&options.normalized_path()?, service))
}

/// Bind, log the URL to stderr, and serve until SIGINT/SIGTERM; in-flight requests
/// get up to 10 s to finish.
pub async fn serve_http<S, F>(factory: F, options: HttpOptions) -> anyhow::Result<()>
where
    S: ServerHandler + Send + 'static,
    F: Fn() -> S + Send + Sync + 'static,
{
    let shutdown = CancellationToken::new();
    let router = mcp_router(factory, &options, shutdown.clone())?;
    let listener = tokio::net::TcpListener::bind(options.bind)
        .await
        .with_context(|| format!("cannot bind {}", options.bind))?;
    let local = listener
        .local_addr()
        .context("bound socket has no address")?;
    // Tests and scripts read this line to learn the port when binding port 0.
    tracing::info!("listening on http://{local}{}", options.normalized_path()?);

    let signal = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down: finishing in-flight requests");
        signal.cancel();
    });
    let graceful = shutdown.clone();
    let server = axum::serve(listener, router).with_graceful_shutdown(async move {
        graceful.cancelled().await;
    });
    let server = tokio::spawn(async move { server.await });
    shutdown.cancelled().await;
    match tokio::time::timeout(Duration::from_secs(10), server).await {
        Ok(joined) => joined
            .context("HTTP server task failed")?
            .context("HTTP server failed")?,
        Err(_) => tracing::warn!("in-flight requests did not finish within 10 s; exiting"),
    }
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
            path: "/mcp".into(),
            allowed_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            stateless: false,
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
    }
}
