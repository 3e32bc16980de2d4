//! `context-loader stdio`: one client over stdin/stdout (desktop and CLI agents).

use crate::registry::ContextLoader;
use crate::service::Service;

pub async fn run(service: Service) -> anyhow::Result<()> {
    tracing::debug!("serving MCP over stdio");
    mcp_common::transport::serve_stdio(ContextLoader::new(service)).await
}
