//! Process-wide metrics in Prometheus (OpenMetrics) text format: tool calls by outcome,
//! tool latency, HTTP responses by status, and calls in flight.
//!
//! Tool figures come from [`MeteredToolRouter`], a wrapper around rmcp's `ToolRouter`
//! that every server's registry uses, so the tool name is read from the dispatched call
//! rather than by parsing request bodies in middleware.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::CallToolResponse;

/// How a tool call ended.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, EncodeLabelValue)]
#[allow(non_camel_case_types)] // label values are snake_case on the wire
pub enum Outcome {
    /// A normal result.
    ok,
    /// An `isError` result: the tool refused the input (a structured ToolError).
    tool_error,
    /// A JSON-RPC error (unknown tool, or a failure outside the tool).
    protocol_error,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolCallLabels {
    tool: String,
    outcome: Outcome,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: u16,
}

/// Every metric this process exports.
pub struct Metrics {
    registry: Registry,
    tool_calls: Family<ToolCallLabels, Counter>,
    tool_duration: Family<ToolLabels, Histogram>,
    http_responses: Family<StatusLabels, Counter>,
    in_flight_gauge: Gauge,
    // The gauge is for scraping; this is what shutdown waits on.
    in_flight: InFlightCalls,
}

/// How many tool calls are running, shared by the router that counts them and
/// whoever waits for them to finish (HTTP shutdown), without either reading a global.
#[derive(Debug, Clone, Default)]
pub struct InFlightCalls(Arc<AtomicUsize>);

impl InFlightCalls {
    pub fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }

    /// Wait until no call runs or `grace` has passed; returns how many still run.
    pub async fn drained(&self, grace: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + grace;
        // Polling: calls end rarely during shutdown, and 20 ms is below notice.
        while self.count() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.count()
    }
}

/// The metrics of this process (created on first use).
pub fn global() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

impl Metrics {
    fn new() -> Self {
        let mut registry = Registry::default();
        let tool_calls = Family::<ToolCallLabels, Counter>::default();
        registry.register(
            "mcp_tool_calls",
            "Tool calls by tool and outcome (ok, tool_error, protocol_error)",
            tool_calls.clone(),
        );
        // 0.25 ms .. ~8 s: a short count is sub-millisecond, an 8 MiB one seconds.
        let tool_duration = Family::<ToolLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.000_25, 2.0, 16))
        });
        registry.register(
            "mcp_tool_call_duration_seconds",
            "Time from dispatch to result of a tool call",
            tool_duration.clone(),
        );
        let http_responses = Family::<StatusLabels, Counter>::default();
        registry.register(
            "http_responses",
            "HTTP responses by status code (401/403/413 are refusals before MCP)",
            http_responses.clone(),
        );
        let in_flight_gauge = Gauge::default();
        registry.register(
            "mcp_tool_calls_in_flight",
            "Tool calls currently running",
            in_flight_gauge.clone(),
        );
        Metrics {
            registry,
            tool_calls,
            tool_duration,
            http_responses,
            in_flight_gauge,
            in_flight: InFlightCalls::default(),
        }
    }

    /// The text exposition (OpenMetrics 1.0, which Prometheus scrapes natively).
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail; an Err would only mean a truncated page.
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            tracing::warn!("metrics encoding failed");
        }
        text
    }

    pub fn record_http_response(&self, status: u16) {
        self.http_responses
            .get_or_create(&StatusLabels { status })
            .inc();
    }

    /// The tool calls [`MeteredToolRouter`] is running now (HTTP shutdown waits for them).
    pub fn in_flight_calls(&self) -> InFlightCalls {
        self.in_flight.clone()
    }

    fn record_tool_call(&self, tool: &str, outcome: Outcome, seconds: f64) {
        let tool = tool.to_string();
        self.tool_calls
            .get_or_create(&ToolCallLabels {
                tool: tool.clone(),
                outcome,
            })
            .inc();
        self.tool_duration
            .get_or_create(&ToolLabels { tool })
            .observe(seconds);
    }
}

/// Counts a call as in flight for as long as it lives (also if the call is dropped
/// because the client went away).
struct InFlight<'m>(&'m Metrics);

impl<'m> InFlight<'m> {
    fn enter(metrics: &'m Metrics) -> Self {
        metrics.in_flight.0.fetch_add(1, Ordering::SeqCst);
        metrics.in_flight_gauge.inc();
        InFlight(metrics)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.0.fetch_sub(1, Ordering::SeqCst);
        self.0.in_flight_gauge.dec();
    }
}

/// rmcp's `ToolRouter` plus metrics: use it as the registry's router field and
/// `#[tool_handler(router = self.tool_router)]` dispatches through [`Self::call`].
/// Listing and lookup are the inner router's (through `Deref`).
pub struct MeteredToolRouter<S> {
    inner: ToolRouter<S>,
}

impl<S> MeteredToolRouter<S> {
    pub fn new(inner: ToolRouter<S>) -> Self {
        MeteredToolRouter { inner }
    }
}

impl<S> Clone for MeteredToolRouter<S> {
    fn clone(&self) -> Self {
        MeteredToolRouter {
            inner: self.inner.clone(),
        }
    }
}

impl<S> std::ops::Deref for MeteredToolRouter<S> {
    type Target = ToolRouter<S>;
    fn deref(&self) -> &ToolRouter<S> {
        &self.inner
    }
}

impl<S: Send + Sync + 'static> MeteredToolRouter<S> {
    pub async fn call(
        &self,
        context: ToolCallContext<'_, S>,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        let metrics = global();
        // Label only names the router knows: a client must not be able to mint
        // unbounded label values by calling made-up tools.
        let tool: Cow<'static, str> = if self.inner.get(&context.name).is_some() {
            context.name.clone()
        } else {
            Cow::Borrowed("unknown")
        };
        let _in_flight = InFlight::enter(metrics);
        let started = Instant::now();
        let result = if self.inner.get(&context.name).is_some() {
            self.inner.call(context).await
        } else {
            // Its arguments, if parked by the transport, are given back now.
            drop(crate::parked::unpark(context.arguments));
            Err(unknown_tool(&context.name))
        };
        let outcome = match &result {
            Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => Outcome::tool_error,
            Ok(_) => Outcome::ok,
            Err(_) => Outcome::protocol_error,
        };
        metrics.record_tool_call(&tool, outcome, started.elapsed().as_secs_f64());
        result
    }
}

/// rmcp's answer to a tool it does not route (`-32602 tool not found`), naming the
/// tool (a server may hide some of its tools): at most 64 characters of the name, which
/// comes from the client.
fn unknown_tool(name: &str) -> rmcp::ErrorData {
    const SHOWN: usize = 64;
    let shown: String = name.chars().take(SHOWN).collect();
    let more = if name.chars().count() > SHOWN {
        "…"
    } else {
        ""
    };
    rmcp::ErrorData::invalid_params(
        format!("tool not found: `{shown}{more}` is not a tool of this server (see tools/list)"),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_has_tool_counts_and_latency_histogram() {
        let metrics = Metrics::new();
        metrics.record_tool_call("count-tokens", Outcome::ok, 0.002);
        metrics.record_tool_call("count-tokens", Outcome::tool_error, 0.001);
        metrics.record_http_response(413);
        let text = metrics.encode();
        assert!(
            text.contains(r#"mcp_tool_calls_total{tool="count-tokens",outcome="ok"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"mcp_tool_calls_total{tool="count-tokens",outcome="tool_error"} 1"#)
        );
        assert!(text.contains(r#"mcp_tool_call_duration_seconds_count{tool="count-tokens"} 2"#));
        assert!(
            text.contains(
                r#"mcp_tool_call_duration_seconds_bucket{le="0.002",tool="count-tokens"} 2"#
            ) || text.contains(
                r#"mcp_tool_call_duration_seconds_bucket{tool="count-tokens",le="0.002"} 2"#
            ),
            "{text}"
        );
        assert!(text.contains(r#"http_responses_total{status="413"} 1"#));
        assert!(text.trim_end().ends_with("# EOF"));
    }

    #[test]
    fn in_flight_is_released_when_the_call_is_dropped() {
        let metrics = Metrics::new();
        {
            let _a = InFlight::enter(&metrics);
            let _b = InFlight::enter(&metrics);
            assert_eq!(metrics.in_flight_calls().count(), 2);
        }
        assert_eq!(metrics.in_flight_calls().count(), 0);
        assert!(metrics.encode().contains("mcp_tool_calls_in_flight 0"));
    }

    #[tokio::test]
    async fn drained_waits_for_calls_up_to_the_grace_period() {
        let metrics = Metrics::new();
        let calls = metrics.in_flight_calls();
        assert_eq!(calls.drained(Duration::from_secs(5)).await, 0, "idle");
        let call = InFlight::enter(&metrics);
        let short = Duration::from_millis(50);
        assert_eq!(
            calls.drained(short).await,
            1,
            "grace over, call still running"
        );
        let waiting = tokio::spawn(async move { calls.drained(Duration::from_secs(60)).await });
        tokio::time::sleep(short).await;
        drop(call);
        assert_eq!(waiting.await.expect("joined"), 0, "the call finished");
    }
}
