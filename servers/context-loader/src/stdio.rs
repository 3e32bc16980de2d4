//! `context-loader stdio`: one client over stdin/stdout (desktop and CLI agents).

use crate::registry::ContextLoader;
use crate::tools::AppState;

pub async fn run(state: AppState) -> anyhow::Result<()> {
    tracing::debug!("serving MCP over stdio");
    mcp_common::transport::serve_stdio(ContextLoader::new(state)).await
}
