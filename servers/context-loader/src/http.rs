//! `context-loader http`: streamable HTTP for shared endpoints. The flags and the
//! serving are `mcp_common::transport`'s; this file names the variables and says when
//! the server is ready.

use mcp_common::metrics;
use mcp_common::transport::{EnvPrefix, Readiness, serve_http};

use crate::config::ConfigError;
use crate::registry::ContextLoader;
use crate::service::Service;
use crate::toolset::Toolset;

/// `--bind` is also `CONTEXT_LOADER_BIND`, `--max-body-bytes` `CONTEXT_LOADER_MAX_BODY_BYTES`, ...
pub struct Env;

impl EnvPrefix for Env {
    const ENV_PREFIX: &'static str = "CONTEXT_LOADER_";
}

pub type HttpArgs = mcp_common::transport::HttpArgs<Env>;

pub async fn run(service: Service, tools: Toolset, args: HttpArgs) -> anyhow::Result<()> {
    // Ready once the encoders are warm (the same OnceLocks the start-up warm-up
    // fills, so this mostly waits for it).
    let readiness = Readiness::default();
    let options = args.into_options(readiness.clone()).map_err(ConfigError)?;
    let call_timeout = options.request_timeout;
    let warm = service.clone();
    tokio::task::spawn_blocking(move || {
        warm.warm_up();
        readiness.mark_ready();
    });
    // The registry's metered router counts into the process's metrics: wait for those.
    let in_flight = metrics::global().in_flight_calls();
    serve_http(
        {
            let handler = ContextLoader::new(service, &tools).with_call_timeout(call_timeout);
            move || handler.for_new_session()
        },
        options,
        in_flight,
    )
    .await
}
