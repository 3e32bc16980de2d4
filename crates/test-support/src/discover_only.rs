//! An MCP server that speaks only the newer handshake: rmcp's server with protocol
//! 2026-07-28 alone, so it refuses `initialize` with a JSON-RPC error and answers
//! `server/discover` (then `tools/list` with per-request metadata). Served on
//! loopback over streamable HTTP, and over TCP for a stdio command to bridge to
//! (bash's `/dev/tcp`: no other program needed).

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// The instructions it sends.
pub const INSTRUCTIONS: &str = "Only the 2026-07-28 handshake.";

#[derive(Clone, Default)]
pub struct DiscoverOnly;

/// Its two tools, as tools/list lists them (name, description, inputSchema).
pub fn tools() -> Vec<Value> {
    vec![
        json!({"name": "lookup", "description": "Look a word up.", "inputSchema":
            {"type": "object", "properties": {"word": {"type": "string", "description": "The word"}}}}),
        json!({"name": "define", "description": "Define a term.", "inputSchema":
            {"type": "object", "properties": {"term": {"type": "string"}}, "required": ["term"]}}),
    ]
}

impl ServerHandler for DiscoverOnly {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("discover-only", "1.0.0"))
            .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&[ProtocolVersion::V_2026_07_28])
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = tools()
            .into_iter()
            .map(|t| {
                let schema = t["inputSchema"].as_object().cloned().unwrap_or_default();
                Tool::new(
                    t["name"].as_str().unwrap_or_default().to_string(),
                    t["description"].as_str().unwrap_or_default().to_string(),
                    Arc::new(schema),
                )
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }
}

/// Serve it over streamable HTTP on `127.0.0.1:<free port>`; returns the URL
/// (`http://127.0.0.1:port/mcp`). It serves until the test's runtime ends.
pub async fn serve_http() -> String {
    let config = StreamableHttpServerConfig::default().with_sse_keep_alive(None);
    let service: StreamableHttpService<DiscoverOnly, LocalSessionManager> =
        StreamableHttpService::new(|| Ok(DiscoverOnly), Default::default(), config);
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{address}/mcp")
}

/// Serve it over plain TCP on `127.0.0.1:<free port>`, one session a connection;
/// returns a stdio command (`bash` and its arguments) that bridges its stdin and
/// stdout to it. It serves until the test's runtime ends.
pub async fn serve_stdio_bridge() -> (String, Vec<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                if let Ok(running) = DiscoverOnly.serve(stream).await {
                    let _ = running.waiting().await;
                }
            });
        }
    });
    (
        "bash".into(),
        vec![
            "-c".into(),
            format!("exec 3<>/dev/tcp/127.0.0.1/{port}; cat <&3 & exec cat >&3"),
        ],
    )
}
