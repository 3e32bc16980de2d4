//! `context-loader stdio`: one client over stdin/stdout (desktop and CLI agents).

use clap::Args;
use mcp_common::transport::JsonLimits;
use mcp_common::transport::stdio_framing::DEFAULT_SHUTDOWN_GRACE;

use crate::config::ConfigError;
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
    /// When stdin closes, seconds the requests already read get to be answered (their
    /// notifications first) before the process exits.
    #[arg(long, env = "CONTEXT_LOADER_SHUTDOWN_GRACE", default_value_t = DEFAULT_SHUTDOWN_GRACE.as_secs())]
    pub shutdown_grace: u64,
}

pub async fn run(service: Service, tools: Toolset, args: StdioArgs) -> anyhow::Result<()> {
    if args.max_json_values == 0 {
        let error = anyhow::anyhow!("--max-json-values: must be at least 1");
        return Err(ConfigError(error).into());
    }
    tracing::debug!("serving MCP over stdio");
    let limits = JsonLimits {
        max_values: args.max_json_values,
    };
    let grace = std::time::Duration::from_secs(args.shutdown_grace);
    mcp_common::transport::serve_stdio(ContextLoader::new(service, &tools), limits, grace).await
}
