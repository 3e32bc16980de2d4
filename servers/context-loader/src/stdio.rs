//! `context-loader stdio`: one client over stdin/stdout (desktop and CLI agents).

use clap::Args;
use mcp_common::transport::JsonLimits;

use crate::registry::ContextLoader;
use crate::service::Service;
use crate::toolset::Toolset;

/// The `stdio` command's flags.
#[derive(Debug, Clone, Args)]
pub struct StdioArgs {
    /// Most JSON values in one message line, checked before it is parsed; a line with
    /// more gets a JSON-RPC error (-32600) and the session goes on.
    #[arg(long, env = "CONTEXT_LOADER_MAX_JSON_VALUES", default_value_t = JsonLimits::DEFAULT_MAX_VALUES)]
    pub max_json_values: usize,
}

pub async fn run(service: Service, tools: Toolset, args: StdioArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.max_json_values > 0,
        "--max-json-values: must be at least 1"
    );
    tracing::debug!("serving MCP over stdio");
    let limits = JsonLimits {
        max_values: args.max_json_values,
    };
    mcp_common::transport::serve_stdio(ContextLoader::new(service, &tools), limits).await
}
