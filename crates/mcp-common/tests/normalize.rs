//! airmcp's normalizeResult rules as a client sees them: a handler whose tool returns
//! its `value` argument through `normalize_result`, served by this crate's stdio
//! framing (over an in-memory pipe) and its HTTP router (on loopback, stateful and
//! stateless), and rmcp's client reading the content blocks that arrive.

use crate::common;

use mcp_common::normalize_result;
use mcp_common::transport::JsonLimits;
use mcp_common::transport::stdio_framing::{FramedStdio, MAX_LINE_BYTES};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::{Value, json};
use test_support::call;

#[derive(Clone)]
struct Echo {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Echo {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "echo",
        description = "Returns `value` through normalize_result."
    )]
    async fn echo(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        normalize_result(args.get("value").cloned().unwrap_or(Value::Null))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

type Client = RunningService<RoleClient, ()>;

/// One content block as (kind, text or base64 data, image mime type).
type Block<'a> = (&'a str, &'a str, Option<&'a str>);

/// The handler behind the stdio framing, its other end of the pipe as the client's.
async fn over_stdio() -> Client {
    let (client_side, server_side) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_side);
    let (transport, _writer) = FramedStdio::new(
        server_read,
        server_write,
        MAX_LINE_BYTES,
        JsonLimits::default(),
    );
    tokio::spawn(async move {
        if let Ok(running) = Echo::new().serve(transport).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(tokio::io::split(client_side))
        .await
        .expect("client over the stdio framing")
}

fn kinds(result: &CallToolResult) -> Vec<(&'static str, String, Option<String>)> {
    result
        .content
        .iter()
        .map(|block| match (block.as_text(), block.as_image()) {
            (Some(text), _) => ("text", text.text.clone(), None),
            (_, Some(image)) => ("image", image.data.clone(), Some(image.mime_type.clone())),
            _ => ("other", String::new(), None),
        })
        .collect()
}

#[tokio::test]
async fn plain_returns_arrive_as_the_content_kinds_the_rules_name() {
    let png = "iVBORw0KGgo=";
    let cases: Vec<(Value, Vec<Block>)> = vec![
        (json!("plain"), vec![("text", "plain", None)]),
        (json!({"text": "bare"}), vec![("text", "bare", None)]),
        (
            json!({"type": "text", "text": "typed"}),
            vec![("text", "typed", None)],
        ),
        (
            json!({"image": png}),
            vec![("image", png, Some("image/png"))],
        ),
        (
            json!({"image": "/9j/4AAQ", "mimeType": "image/jpeg"}),
            vec![("image", "/9j/4AAQ", Some("image/jpeg"))],
        ),
        (
            json!({"type": "image", "data": png, "mimeType": "image/png"}),
            vec![("image", png, Some("image/png"))],
        ),
        (json!(42), vec![("text", "42", None)]),
        (
            json!({"text": "t", "n": 1}),
            vec![("text", "{\n  \"text\": \"t\",\n  \"n\": 1\n}", None)],
        ),
    ];
    for (name, client) in [
        ("stdio", over_stdio().await),
        ("http", common::over_http(Echo::new, false).await.0),
        ("http stateless", common::over_http(Echo::new, true).await.0),
    ] {
        for (value, expected) in &cases {
            let result = call(&client, "echo", json!({ "value": value })).await;
            assert_eq!(result.is_error, Some(false), "{name} {value}");
            let got = kinds(&result);
            let got: Vec<Block> = got
                .iter()
                .map(|(k, d, m)| (*k, d.as_str(), m.as_deref()))
                .collect();
            assert_eq!(&got, expected, "{name} {value}");
        }
        let broken = call(&client, "echo", json!({"value": {"image": "not base64!"}})).await;
        assert_eq!(broken.is_error, Some(true), "{name}");
        let error = broken.structured_content.expect("structured error");
        assert_eq!(error["error_code"], "INTERNAL_ERROR", "{name}");
    }
}
