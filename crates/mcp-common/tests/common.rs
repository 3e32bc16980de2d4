//! What this crate's integration tests share: a handler behind the HTTP router on a
//! loopback port, and a client of it.

use mcp_common::transport::{HttpOptions, ShutdownTokens, http_router};
use rmcp::ServerHandler;
use rmcp::ServiceExt;
use test_support::PATIENCE;
use test_support::client::{Client, http_transport};

/// `factory`'s handlers behind the HTTP router (stateful or stateless) on a free
/// loopback port, a connected client, and the router's shutdown tokens.
pub async fn over_http<S: ServerHandler + Send + 'static>(
    factory: impl Fn() -> S + Send + Sync + 'static,
    stateless: bool,
) -> (Client, ShutdownTokens) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let address = listener.local_addr().expect("address");
    let options = HttpOptions {
        stateless,
        ..HttpOptions::default()
    };
    let shutdown = ShutdownTokens::default();
    let router = http_router(factory, &options, &shutdown).expect("valid options");
    tokio::spawn(async move { axum::serve(listener, router).await });
    let client = tokio::time::timeout(
        PATIENCE,
        ().serve(http_transport(format!("http://{address}/mcp"))),
    )
    .await
    .expect("initialize timed out")
    .expect("client over HTTP");
    (client, shutdown)
}
