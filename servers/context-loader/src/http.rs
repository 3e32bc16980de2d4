//! `context-loader http`: streamable HTTP for shared endpoints.

use std::net::SocketAddr;

use clap::Args;
use mcp_common::transport::{HttpOptions, serve_http};

use crate::registry::ContextLoader;
use crate::tools::AppState;

#[derive(Debug, Args)]
pub struct HttpArgs {
    /// Address to listen on. Port 0 picks a free port (the URL is logged to stderr).
    #[arg(long, env = "CONTEXT_LOADER_BIND", default_value = "127.0.0.1:8787")]
    pub bind: SocketAddr,
    /// Path of the MCP endpoint.
    #[arg(long, env = "CONTEXT_LOADER_PATH", default_value = "/mcp")]
    pub path: String,
    /// Host header value to accept (repeatable). Default: loopback names only; a
    /// non-loopback --bind requires at least one.
    #[arg(
        long = "allowed-host",
        env = "CONTEXT_LOADER_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,
    /// Serve without sessions: every request stands alone, so replicas behind a load
    /// balancer need no session affinity.
    #[arg(long, env = "CONTEXT_LOADER_STATELESS")]
    pub stateless: bool,
}

pub async fn run(state: AppState, args: HttpArgs) -> anyhow::Result<()> {
    let options = HttpOptions {
        bind: args.bind,
        path: args.path,
        allowed_hosts: args.allowed_hosts,
        stateless: args.stateless,
    };
    serve_http(move || ContextLoader::new(state.clone()), options).await
}
