//! rmcp's MCP client as a test uses it: transports, tool calls with a deadline, and
//! the two views of a tool result (structuredContent and the JSON text).

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::PATIENCE;

/// A connected client without a handler of its own.
pub type Client = RunningService<RoleClient, ()>;

/// Call `tool` with `args` (a JSON object) and wait for its result.
pub async fn call<H: rmcp::ClientHandler>(
    client: &RunningService<RoleClient, H>,
    tool: &str,
    args: Value,
) -> CallToolResult {
    let args: JsonObject = args.as_object().cloned().expect("arguments are an object");
    tokio::time::timeout(
        PATIENCE,
        client.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args)),
    )
    .await
    .expect("tool call timed out")
    .expect("tool call returned a result")
}

pub fn structured(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .expect("structuredContent")
}

/// The text content parsed as JSON: clients that ignore structuredContent see this.
pub fn text_json(result: &CallToolResult) -> Value {
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .expect("text content");
    serde_json::from_str(&text.text).expect("text content is JSON")
}

/// rmcp's streamable-HTTP client for `url`. reqwest is built with
/// `rustls-no-provider` (the server's Anthropic client picks ring), so every HTTP
/// client in a test process must install a TLS provider first: this does, once.
pub fn http_transport(url: impl Into<String>) -> StreamableHttpClientTransport<reqwest::Client> {
    install_tls_provider();
    StreamableHttpClientTransport::from_uri(url.into())
}

/// [`http_transport`] sending `Authorization: Bearer <token>` on every request.
pub fn http_transport_with_token(
    url: impl Into<String>,
    token: &str,
) -> StreamableHttpClientTransport<reqwest::Client> {
    install_tls_provider();
    StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.into()).auth_header(token),
    )
}

/// Install ring as the process's TLS provider (idempotent); see [`http_transport`].
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A JSON-RPC `initialize` request (id 1), for tests that speak the protocol by hand.
pub fn initialize_request(client_name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": client_name, "version": "1"}}})
}

/// A client that names itself `name` at `initialize` (`clientInfo.name`), as a real
/// one does: the server picks the answer limit of that client
/// (`context_budget::clients`). Connect with [`crate::Binary::connect_as`].
#[derive(Debug, Clone, Copy)]
pub struct NamedClient(pub &'static str);

impl rmcp::ClientHandler for NamedClient {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new(self.0, "1.0.0"),
        )
    }
}
