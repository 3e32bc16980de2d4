//! `context-loader http`: streamable HTTP for shared endpoints. The flags are this
//! product's surface; the serving itself is `mcp_common::transport`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use context_budget::Tokenizer;
use mcp_common::transport::{BearerTokens, HttpOptions, Readiness, serve_http};

use crate::registry::ContextLoader;
use crate::service::Service;

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
    /// Browser Origin to accept, with scheme (repeatable), e.g. https://app.example.com:443
    /// or http://localhost:*. Default: loopback origins. Other Origins get 403.
    #[arg(
        long = "allowed-origin",
        env = "CONTEXT_LOADER_ALLOWED_ORIGINS",
        value_delimiter = ','
    )]
    pub allowed_origins: Vec<String>,
    /// File of bearer tokens, one per line (# comments allowed). With tokens set, the
    /// MCP endpoint and /metrics answer 401 without `Authorization: Bearer <token>`.
    #[arg(long, env = "CONTEXT_LOADER_AUTH_TOKEN_FILE")]
    pub auth_token_file: Option<PathBuf>,
    /// A bearer token given directly (prefer the file: env and argv are visible to
    /// other local users through /proc).
    #[arg(long, env = "CONTEXT_LOADER_AUTH_TOKEN", hide_env_values = true)]
    pub auth_token: Option<String>,
    /// Serve without sessions: every request stands alone, so replicas behind a load
    /// balancer need no session affinity.
    #[arg(long, env = "CONTEXT_LOADER_STATELESS")]
    pub stateless: bool,
    /// Stateful mode: close a session after this many seconds without requests.
    #[arg(
        long,
        env = "CONTEXT_LOADER_SESSION_IDLE_TIMEOUT",
        default_value_t = 300
    )]
    pub session_idle_timeout: u64,
    /// Largest request body in bytes; larger gets 413.
    #[arg(long, env = "CONTEXT_LOADER_MAX_BODY_BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_body_bytes: usize,
    /// MCP requests served at once; more wait for a slot.
    #[arg(
        long,
        env = "CONTEXT_LOADER_MAX_CONCURRENT_REQUESTS",
        default_value_t = 64
    )]
    pub max_concurrent_requests: usize,
    /// Seconds a request may take until its response starts (408 after).
    #[arg(long, env = "CONTEXT_LOADER_REQUEST_TIMEOUT", default_value_t = 60)]
    pub request_timeout: u64,
    /// On SIGTERM/SIGINT, seconds in-flight tool calls get to finish.
    #[arg(long, env = "CONTEXT_LOADER_SHUTDOWN_GRACE", default_value_t = 10)]
    pub shutdown_grace: u64,
}

impl HttpArgs {
    fn bearer_tokens(&self) -> anyhow::Result<BearerTokens> {
        let mut tokens: Vec<String> = self.auth_token.iter().cloned().collect();
        if let Some(file) = &self.auth_token_file {
            let contents = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read --auth-token-file {}", file.display()))?;
            let from_file = BearerTokens::parse_file(&contents);
            anyhow::ensure!(
                !from_file.is_empty(),
                "--auth-token-file {} has no token (one per line)",
                file.display()
            );
            tokens.extend(from_file);
        }
        Ok(BearerTokens::new(tokens))
    }
}

pub async fn run(service: Service, args: HttpArgs) -> anyhow::Result<()> {
    // Ready once both vocabularies are loaded (the same OnceLocks the start-up
    // preload fills, so this only waits for it).
    let readiness = Readiness::default();
    let ready = readiness.clone();
    tokio::task::spawn_blocking(move || {
        for tokenizer in [Tokenizer::O200kBase, Tokenizer::Cl100kBase] {
            tokenizer.preload();
        }
        ready.mark_ready();
    });
    let options = HttpOptions {
        bind: args.bind,
        path: args.path.clone(),
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
        auth: args.bearer_tokens()?,
        stateless: args.stateless,
        session_idle_timeout: Duration::from_secs(args.session_idle_timeout),
        max_body_bytes: args.max_body_bytes,
        max_concurrent_requests: args.max_concurrent_requests,
        request_timeout: Duration::from_secs(args.request_timeout),
        shutdown_grace: Duration::from_secs(args.shutdown_grace),
        readiness,
    };
    serve_http(move || ContextLoader::new(service.clone()), options).await
}
