//! Serving a handler: stdio for desktop and CLI agents, streamable HTTP for shared
//! endpoints. Every server in `servers/` starts through here, so transport behaviour
//! (logging, host/origin checks, auth, limits, probes, metrics, shutdown) is the same
//! everywhere.
//!
//! What a server supplies: a handler factory, [`HttpOptions`] (usually from flattening
//! [`HttpArgs`] with its own [`EnvPrefix`]), and the [`InFlightCalls`] shutdown waits
//! for. The modules: [`options`] (values, defaults, checks), [`flags`] (the same as
//! clap flags), [`http`] (router and lifecycle), [`auth`], [`stdio_framing`].
//!
//! [`InFlightCalls`]: crate::metrics::InFlightCalls

pub mod auth;
pub mod cancel_on_close;
pub mod flags;
pub mod guard;
pub mod http;
pub mod json_scan;
pub mod options;
pub mod stdio_framing;

use anyhow::Context;
use rmcp::{ServerHandler, ServiceExt};

pub use auth::BearerTokens;
pub use flags::{EnvPrefix, HttpArgs, HttpFlags};
pub use http::{HandlerFactory, ShutdownTokens, http_router, mcp_router, serve_http};
pub use json_scan::JsonLimits;
pub use options::{HttpOptions, HttpSetting, InvalidHttpOptions, Readiness};

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

/// A multi-threaded runtime (`workers` async threads, default one per core) for a
/// server or a one-shot command; on failure the error is printed and `None` returned
/// (the process should exit with failure).
pub fn runtime(workers: Option<usize>) -> Option<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(workers) = workers {
        builder.worker_threads(workers);
    }
    builder
        .enable_all()
        .build()
        .inspect_err(|e| eprintln!("error: cannot start the async runtime: {e}"))
        .ok()
}

/// Log to stderr in `format`: stdout belongs to the stdio transport. `RUST_LOG`
/// overrides the `default` filter.
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
/// batch, over 16 MiB, more JSON values than `limits`) are answered with JSON-RPC
/// errors and the session goes on; end of input is a clean exit, even before
/// `initialize`.
pub async fn serve_stdio<S: ServerHandler>(
    handler: S,
    limits: JsonLimits,
    shutdown_grace: std::time::Duration,
) -> anyhow::Result<()> {
    let (reader, writer) = rmcp::transport::stdio_pipes();
    let (transport, writer_task) =
        stdio_framing::FramedStdio::new(reader, writer, stdio_framing::MAX_LINE_BYTES, limits);
    let transport = transport.with_shutdown_grace(shutdown_grace);
    let initialize_seen = transport.initialize_seen();
    let running = match handler.serve(transport).await {
        Ok(running) => running,
        Err(e) if !initialize_seen.load(std::sync::atomic::Ordering::SeqCst) => {
            // The client left (or stdin closed) before initializing: nothing failed.
            tracing::debug!("stdio client left before initialize: {e}");
            let _ = writer_task.await;
            return Ok(());
        }
        Err(e) => return Err(e).context("MCP session over stdio failed to start"),
    };
    let ended = running
        .waiting()
        .await
        .context("MCP session over stdio ended with an error");
    // Flush what the session wrote before exiting.
    let _ = writer_task.await;
    ended?;
    Ok(())
}
