//! HTTP shutdown as a client sees it, step by step: [`ShutdownTokens::finish`] run by
//! hand (as `serve_http` runs it after SIGTERM) while a call is between its handler
//! and its answer. The handler's time is not counted as in flight here, which is
//! exactly the moment a real call is in after its handler returned: left the count,
//! result not yet on the client's stream. The grace's error must not overtake it.

use crate::common;

use std::time::Duration;

use mcp_common::metrics::InFlightCalls;
use mcp_common::normalize_result;
use mcp_common::transport::ShutdownTokens;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::json;
use test_support::PATIENCE;
use test_support::client::Client;

#[derive(Clone)]
struct Slow {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Slow {
    fn new() -> Self {
        Slow {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "wait",
        description = "Answers \"done\" after `ms` milliseconds."
    )]
    async fn wait(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        let ms = args.get("ms").and_then(|v| v.as_u64()).unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        normalize_result(json!("done"))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Slow {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// Start `wait` for `ms` and return once the router counts it as unanswered.
async fn start_call(
    client: &Client,
    shutdown: &ShutdownTokens,
    ms: u64,
) -> tokio::task::JoinHandle<Result<CallToolResult, rmcp::ServiceError>> {
    let peer = client.peer().clone();
    let args = json!({ "ms": ms }).as_object().cloned().expect("object");
    let call = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("wait").with_arguments(args))
            .await
    });
    let started = tokio::time::Instant::now();
    while shutdown.unanswered.count() == 0 {
        assert!(
            started.elapsed() < PATIENCE,
            "the call never reached the router"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    call
}

#[tokio::test]
async fn a_result_on_its_way_when_shutdown_begins_is_delivered_not_replaced() {
    for stateless in [false, true] {
        let (client, shutdown) = common::over_http(Slow::new, stateless).await;
        let call = start_call(&client, &shutdown, 300).await;
        // No call counted as running: only the answer still owed holds shutdown back.
        let unanswered = shutdown
            .finish(&InFlightCalls::default(), Duration::from_secs(20))
            .await;
        assert_eq!(unanswered, 0, "stateless={stateless}");
        let result = tokio::time::timeout(PATIENCE, call)
            .await
            .expect("call timed out")
            .expect("call task")
            .unwrap_or_else(|e| panic!("stateless={stateless}: the result, not {e:?}"));
        let text = result.content[0].as_text().expect("text").text.clone();
        assert_eq!(text, "done", "stateless={stateless}");
        assert!(shutdown.grace_over.is_cancelled() && shutdown.close_sessions.is_cancelled());
    }
}

#[tokio::test]
async fn an_answer_still_owed_when_the_grace_ends_gets_the_shutdown_error() {
    for stateless in [false, true] {
        let (client, shutdown) = common::over_http(Slow::new, stateless).await;
        let call = start_call(&client, &shutdown, 60_000).await;
        let unanswered = shutdown
            .finish(&InFlightCalls::default(), Duration::from_millis(200))
            .await;
        assert_eq!(unanswered, 1, "stateless={stateless}");
        let error = tokio::time::timeout(PATIENCE, call)
            .await
            .expect("call timed out")
            .expect("call task")
            .expect_err("a call past the grace gets an error");
        let error = format!("{error:?}");
        assert!(
            error.contains("-32000") && error.contains("--shutdown-grace"),
            "stateless={stateless}: {error}"
        );
    }
}
