//! Exact Claude counts from Anthropic's token-counting endpoint.
//!
//! `POST {base}/v1/messages/count_tokens` with `x-api-key` and
//! `anthropic-version: 2023-06-01`, body `{model, system?, messages}`, answers
//! `{"input_tokens": N}`. It is free but rate limited, so answers are cached (LRU,
//! keyed by model + SHA-256 of the body) and every failure — timeout, 429, 5xx,
//! network — becomes a [`CountFailure`] that callers turn into the local estimate
//! plus a warning, never into a failed tool call.
//!
//! The engine asks for exact counts through its synchronous [`ExactCounter`]; this
//! client implements it by blocking the calling thread on the request, which the
//! service only ever does on tokio's blocking pool.

use std::num::NonZeroUsize;
use std::sync::Mutex;
use std::time::Duration;

use context_budget::{ExactCountFailure, ExactCounter, Message, ModelEntry, Role};
use lru::LruCache;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const API_VERSION: &str = "2023-06-01";
pub const CACHE_ENTRIES: usize = 1000;
/// Shown as `method` when a count came from the API.
pub const EXACT_METHOD: &str = "exact: Anthropic count_tokens API";
/// Shown as `encoding` when a count came from the API (no local tokenizer was used).
pub const EXACT_ENCODING: &str = "anthropic_count_tokens";
/// Largest response body read: an answer is `{"input_tokens": N}`, an error a few
/// hundred bytes. A bigger body is not the API's, and is not read on.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;
/// Most characters of an error body's message put into a warning: it is the
/// upstream's text, and every answer that fell back carries it.
const MAX_DETAIL_CHARS: usize = 200;
/// Tokens the API may count beyond one per request byte: its own framing (the
/// tool-use system prompt is 346). A larger `input_tokens` is not a count of what
/// was sent.
const MAX_TOKENS_OVER_BYTES: u64 = 16 * 1024;

/// Why an exact count was not obtained.
#[derive(Debug, Clone, PartialEq)]
pub enum CountFailure {
    Timeout(Duration),
    RateLimited,
    ServerError(u16),
    /// Any other non-success status (bad key, unknown model, invalid request).
    Rejected(u16, String),
    Network(String),
    BadResponse(String),
}

impl std::fmt::Display for CountFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CountFailure::Timeout(after) => write!(f, "no answer within {} ms", after.as_millis()),
            CountFailure::RateLimited => f.write_str("rate limited (HTTP 429)"),
            CountFailure::ServerError(status) => write!(f, "server error (HTTP {status})"),
            CountFailure::Rejected(status, body) => {
                write!(f, "request rejected (HTTP {status}): {body}")
            }
            CountFailure::Network(e) => write!(f, "network error: {e}"),
            CountFailure::BadResponse(e) => write!(f, "unexpected response: {e}"),
        }
    }
}

impl CountFailure {
    /// The `warning` a response carries when it fell back to the estimate.
    pub fn warning(&self) -> String {
        format!(
            "exact Claude count unavailable, Anthropic count_tokens API: {self}; using the local estimate"
        )
    }
}

#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    pub api_key: String,
    /// Without a trailing slash, e.g. `https://api.anthropic.com`.
    pub base_url: String,
    pub timeout: Duration,
}

#[derive(Hash, PartialEq, Eq)]
struct CacheKey {
    model: String,
    body_sha256: [u8; 32],
}

/// A client for the count_tokens endpoint with its answer cache.
pub struct AnthropicCounter {
    client: reqwest::Client,
    url: String,
    api_key: String,
    timeout: Duration,
    cache: Mutex<LruCache<CacheKey, u64>>,
}

impl std::fmt::Debug for AnthropicCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("AnthropicCounter")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl AnthropicCounter {
    pub fn new(config: AnthropicConfig) -> anyhow::Result<Self> {
        // reqwest is built with `rustls-no-provider`: pick ring (lighter to build than
        // aws-lc-rs). Err means a provider is already installed, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            // A redirect would resend x-api-key to wherever it points: the endpoint
            // is configured, so a 3xx is an error, never followed.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| anyhow::anyhow!("cannot build the HTTP client: {e}"))?;
        Ok(AnthropicCounter {
            client,
            url: format!(
                "{}/v1/messages/count_tokens",
                config.base_url.trim_end_matches('/')
            ),
            api_key: config.api_key,
            timeout: config.timeout,
            cache: Mutex::new(LruCache::new(
                NonZeroUsize::new(CACHE_ENTRIES).unwrap_or(NonZeroUsize::MIN),
            )),
        })
    }

    /// `input_tokens` for a count_tokens request body (see [`messages_request`]).
    pub async fn count(&self, body: &Value) -> Result<u64, CountFailure> {
        let bytes =
            serde_json::to_vec(body).map_err(|e| CountFailure::BadResponse(e.to_string()))?;
        let key = CacheKey {
            model: body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            body_sha256: Sha256::digest(&bytes).into(),
        };
        if let Some(&tokens) = self.lock_cache().get(&key) {
            return Ok(tokens);
        }
        let request_bytes = bytes.len() as u64;
        let mut response = self
            .client
            .post(&self.url)
            .header("x-api-key", &self.api_key)
            .header("anthropic-version", API_VERSION)
            .header("content-type", "application/json")
            .body(bytes)
            .send()
            .await
            .map_err(|e| self.transport_failure(e))?;
        let status = response.status().as_u16();
        if status == 429 {
            return Err(CountFailure::RateLimited);
        }
        if (500..600).contains(&status) {
            return Err(CountFailure::ServerError(status));
        }
        if (300..400).contains(&status) {
            return Err(CountFailure::Rejected(
                status,
                "a redirect, not followed (the key is sent only to the configured URL)".into(),
            ));
        }
        // At most MAX_RESPONSE_BYTES are read, whatever the body's length.
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_failure(e))?
        {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(CountFailure::BadResponse(format!(
                    "a body over {MAX_RESPONSE_BYTES} bytes (HTTP {status}), not read further"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        let text = String::from_utf8_lossy(&body);
        if !(200..300).contains(&status) {
            return Err(CountFailure::Rejected(status, error_detail(&text)));
        }
        let tokens = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("input_tokens").and_then(Value::as_u64))
            .ok_or_else(|| CountFailure::BadResponse("no input_tokens in the answer".into()))?;
        if tokens > request_bytes.saturating_add(MAX_TOKENS_OVER_BYTES) {
            return Err(CountFailure::BadResponse(format!(
                "input_tokens {tokens} for a {request_bytes}-byte request cannot be a count of it"
            )));
        }
        self.lock_cache().put(key, tokens);
        Ok(tokens)
    }

    fn transport_failure(&self, error: reqwest::Error) -> CountFailure {
        if error.is_timeout() {
            CountFailure::Timeout(self.timeout)
        } else {
            CountFailure::Network(error.to_string())
        }
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, LruCache<CacheKey, u64>> {
        // A panic while holding the lock cannot leave the cache inconsistent.
        self.cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What a warning says of an error body: the Anthropic error's `message` (or the
/// body's start), one line, capped; the upstream's text is data.
fn error_detail(body: &str) -> String {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/message")?.as_str().map(str::to_string))
        .unwrap_or_else(|| body.to_string());
    let line: String = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_DETAIL_CHARS + 1)
        .collect();
    match line.chars().count() > MAX_DETAIL_CHARS {
        true => format!(
            "{}…",
            line.chars().take(MAX_DETAIL_CHARS).collect::<String>()
        ),
        false => line,
    }
}

impl From<CountFailure> for ExactCountFailure {
    fn from(failure: CountFailure) -> Self {
        match failure {
            // The API read the request and refused what it says (an input schema it
            // does not accept): other requests may still be counted.
            CountFailure::Rejected(400, _) => ExactCountFailure::refused(failure.warning()),
            _ => ExactCountFailure::new(failure.warning()),
        }
    }
}

/// Claude models, counted by the API. Each call blocks its thread until the answer
/// (bounded by the client's timeout): call it on the blocking pool of the runtime
/// the client runs on, never on an async worker (`Handle::block_on` panics there).
impl ExactCounter for AnthropicCounter {
    fn provider_model(&self, requested: &str, entry: &ModelEntry) -> Option<String> {
        entry
            .tokenizer
            .is_claude()
            .then(|| api_model_id(requested, &entry.name))
    }

    fn count_messages(&self, model: &str, messages: &[Message]) -> Result<u64, ExactCountFailure> {
        self.count_blocking(&messages_request(model, messages))
    }

    fn count_text(&self, model: &str, text: &str) -> Result<u64, ExactCountFailure> {
        self.count_blocking(&text_request(model, text))
    }

    fn count_request(
        &self,
        model: &str,
        system: Option<&str>,
        tools: &[Value],
    ) -> Result<u64, ExactCountFailure> {
        self.count_blocking(&tools_request(model, system, tools))
    }

    fn encoding(&self) -> &'static str {
        EXACT_ENCODING
    }

    fn method(&self) -> &'static str {
        EXACT_METHOD
    }
}

impl AnthropicCounter {
    /// [`AnthropicCounter::count`] from a thread that may block.
    fn count_blocking(&self, body: &Value) -> Result<u64, ExactCountFailure> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|e| {
            ExactCountFailure::new(format!(
                "exact Claude count unavailable: no async runtime to send the request on ({e}); \
                 using the local estimate"
            ))
        })?;
        runtime
            .block_on(self.count(body))
            .map_err(ExactCountFailure::from)
    }
}

/// The model id to send: the caller's own id when it is a dated or suffixed form of
/// the catalog name (`claude-sonnet-4-5-20250929`), else the catalog name (for
/// aliases such as `claude` that the API does not know).
pub fn api_model_id(requested: &str, canonical: &str) -> String {
    let requested = requested.trim();
    if requested
        .to_ascii_lowercase()
        .starts_with(&canonical.to_ascii_lowercase())
    {
        requested.to_string()
    } else {
        canonical.to_string()
    }
}

/// The one short user message of a [`tools_request`]: the same in the request with
/// tools and in its baseline without, so the difference is theirs.
pub const TOOLS_REQUEST_MESSAGE: &str = ".";

/// A request with `tools` (Anthropic entries; left out when empty), `system` when
/// given, and one short user message: what a client's first request carries
/// before the conversation.
pub fn tools_request(model: &str, system: Option<&str>, tools: &[Value]) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    if let Some(system) = system {
        body.insert("system".into(), json!(system));
    }
    body.insert(
        "messages".into(),
        json!([{ "role": "user", "content": TOOLS_REQUEST_MESSAGE }]),
    );
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools.to_vec()));
    }
    Value::Object(body)
}

/// A request counting `text` as one user message.
pub fn text_request(model: &str, text: &str) -> Value {
    json!({ "model": model, "messages": [{ "role": "user", "content": text }] })
}

/// A request for chat `messages` in Anthropic's shape, in their original order:
/// system messages go to `system`; an assistant's `tool_calls` become `tool_use`
/// blocks after its text; `tool` messages become `tool_result` blocks of a user
/// turn, so every tool_use precedes its tool_result. Consecutive turns of one role
/// are merged (the API expects alternating roles); empty texts are left out (the
/// API rejects empty text blocks).
pub fn messages_request(model: &str, messages: &[Message]) -> Value {
    let mut system: Vec<String> = Vec::new();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let texts = message
            .texts()
            .filter(|t| !t.is_empty())
            .map(|t| json!({ "type": "text", "text": t }));
        let (role, blocks): (&'static str, Vec<Value>) = match message.role {
            Role::System => {
                system.extend(
                    message
                        .texts()
                        .filter(|t| !t.is_empty())
                        .map(str::to_string),
                );
                continue;
            }
            Role::User => ("user", texts.collect()),
            Role::Assistant => {
                let mut blocks: Vec<Value> = texts.collect();
                blocks.extend(message.tool_calls.iter().map(|call| {
                    json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.function.name,
                        "input": tool_input(&call.function.arguments),
                    })
                }));
                ("assistant", blocks)
            }
            Role::Tool => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id.clone().unwrap_or_default(),
                    "content": message.text(),
                })],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    body.insert(
        "messages".into(),
        Value::Array(
            turns
                .into_iter()
                .map(|(role, content)| json!({ "role": role, "content": content }))
                .collect(),
        ),
    );
    Value::Object(body)
}

/// A tool call's arguments as the JSON object `tool_use.input` must be.
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(object)) => Value::Object(object),
        Ok(Value::Null) | Err(_) if arguments.trim().is_empty() => json!({}),
        _ => json!({ "arguments": arguments }),
    }
}

#[cfg(test)]
mod tests {
    use test_support::anthropic::{FakeAnthropic, Reply};

    use super::*;

    /// `input_tokens` = bytes of the body's `messages` JSON: deterministic and
    /// different for every request body.
    const MESSAGES_BYTES: Reply = Reply::Count(|body| body["messages"].to_string().len() as u64);

    fn counter(base_url: String, timeout: Duration) -> AnthropicCounter {
        AnthropicCounter::new(AnthropicConfig {
            api_key: "test-key".into(),
            base_url,
            timeout,
        })
        .expect("client")
    }

    fn conversation() -> Vec<Message> {
        serde_json::from_value(json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Seoul?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "weather", "arguments": "{\"city\":\"Seoul\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "22C, clear"},
            {"role": "assistant", "content": "22C and clear."}
        ]))
        .expect("messages")
    }

    #[test]
    fn openai_messages_map_to_anthropic_blocks_in_order() {
        let body = messages_request("claude-sonnet-4-5", &conversation());
        assert_eq!(
            body,
            json!({
                "model": "claude-sonnet-4-5",
                "system": "Be brief.",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Weather in Seoul?"}]},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1",
                        "name": "weather", "input": {"city": "Seoul"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1",
                        "content": "22C, clear"}]},
                    {"role": "assistant", "content": [{"type": "text", "text": "22C and clear."}]}
                ]
            })
        );
        let keys: Vec<&String> = body
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["model", "system", "messages"]);
        assert_eq!(tool_input("not json"), json!({"arguments": "not json"}));
        assert_eq!(tool_input(""), json!({}));
    }

    #[test]
    fn a_tools_request_carries_the_tools_and_its_baseline_does_not() {
        let tool = json!({"name": "t", "description": "d", "input_schema": {"type": "object"}});
        let with = tools_request(
            "claude-opus-4-7",
            Some("Be brief."),
            std::slice::from_ref(&tool),
        );
        assert_eq!(
            with,
            json!({"model": "claude-opus-4-7", "system": "Be brief.",
                "messages": [{"role": "user", "content": "."}], "tools": [tool]})
        );
        let baseline = tools_request("claude-opus-4-7", None, &[]);
        assert_eq!(
            baseline,
            json!({"model": "claude-opus-4-7", "messages": [{"role": "user", "content": "."}]})
        );
        // Only a refused request's content lets the next request go.
        let refused = ExactCountFailure::from(CountFailure::Rejected(400, "bad schema".into()));
        assert!(refused.request_refused && refused.warning.contains("400"));
        assert!(
            !ExactCountFailure::from(CountFailure::Rejected(401, String::new())).request_refused
        );
        assert!(!ExactCountFailure::from(CountFailure::RateLimited).request_refused);
    }

    #[test]
    fn dated_ids_are_sent_as_given_and_aliases_as_the_catalog_name() {
        assert_eq!(
            api_model_id("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
            "claude-sonnet-4-5-20250929"
        );
        assert_eq!(
            api_model_id("claude", "claude-sonnet-4-5"),
            "claude-sonnet-4-5"
        );
    }

    #[tokio::test]
    async fn success_sends_the_documented_request_and_reads_input_tokens() {
        let fake = FakeAnthropic::start(MESSAGES_BYTES).await;
        let body = messages_request("claude-sonnet-4-5", &conversation());
        let tokens = counter(fake.url().into(), Duration::from_secs(10))
            .count(&body)
            .await;
        assert_eq!(tokens, Ok(body["messages"].to_string().len() as u64));
        let seen = fake.requests();
        let (headers, received) = &seen[0];
        assert_eq!(headers["x-api-key"], "test-key");
        assert_eq!(headers["anthropic-version"], "2023-06-01");
        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(received, &body);
    }

    #[tokio::test]
    async fn identical_requests_are_answered_from_the_cache() {
        let fake = FakeAnthropic::start(MESSAGES_BYTES).await;
        let counter = counter(fake.url().into(), Duration::from_secs(10));
        let first = text_request("claude-haiku-4-5", "hello there");
        let a = counter.count(&first).await;
        let b = counter.count(&first).await;
        assert_eq!(a, b);
        assert_eq!(fake.request_count(), 1, "second answer came from the cache");
        // Same text for another model is another entry.
        let other = text_request("claude-opus-4-5", "hello there");
        assert!(counter.count(&other).await.is_ok());
        assert_eq!(fake.request_count(), 2);
    }

    #[tokio::test]
    async fn rate_limits_and_server_errors_are_failures_not_cached() {
        for (status, expected) in [
            (429, CountFailure::RateLimited),
            (500, CountFailure::ServerError(500)),
            (529, CountFailure::ServerError(529)),
        ] {
            let fake = FakeAnthropic::start(Reply::Status(status)).await;
            let counter = counter(fake.url().into(), Duration::from_secs(10));
            let body = text_request("claude-sonnet-4-5", "x");
            assert_eq!(counter.count(&body).await, Err(expected.clone()));
            assert_eq!(counter.count(&body).await, Err(expected));
            assert_eq!(fake.request_count(), 2, "failures are retried, not cached");
        }
        let fake = FakeAnthropic::start(Reply::Status(401)).await;
        let rejected = counter(fake.url().into(), Duration::from_secs(10))
            .count(&text_request("claude", "x"))
            .await;
        assert!(
            matches!(rejected, Err(CountFailure::Rejected(401, ref body)) if body.contains("nope"))
        );
        assert!(CountFailure::RateLimited.warning().contains("429"));
    }

    /// L5: the upstream is not trusted to behave. A redirect is not followed (the key
    /// would go to another origin), a body is read to 64 KiB at most, an impossible
    /// count is refused, and an error body's text reaches a warning short and flat.
    #[tokio::test]
    async fn an_upstream_cannot_take_the_key_flood_memory_or_wrap_a_total() {
        let elsewhere = FakeAnthropic::start(Reply::Count(|_| 1)).await;
        let to: &'static str = Box::leak(elsewhere.url().to_string().into_boxed_str());
        let fake = FakeAnthropic::start(Reply::Redirect(to)).await;
        let body = text_request("claude", "x");
        let result = counter(fake.url().into(), Duration::from_secs(10))
            .count(&body)
            .await;
        assert!(
            matches!(result, Err(CountFailure::Rejected(307, ref why)) if why.contains("not followed")),
            "{result:?}"
        );
        assert_eq!(elsewhere.request_count(), 0, "the key stayed home");

        let fake = FakeAnthropic::start(Reply::Huge(64 * 1024 * 1024)).await;
        let result = counter(fake.url().into(), Duration::from_secs(30))
            .count(&body)
            .await;
        assert!(
            matches!(result, Err(CountFailure::BadResponse(ref why)) if why.contains("65536 bytes")),
            "{result:?}"
        );

        let fake = FakeAnthropic::start(Reply::Tokens(u64::MAX)).await;
        let result = counter(fake.url().into(), Duration::from_secs(10))
            .count(&body)
            .await;
        assert!(
            matches!(result, Err(CountFailure::BadResponse(ref why)) if why.contains("cannot be a count")),
            "{result:?}"
        );

        let long = format!(
            r#"{{"type": "error", "error": {{"message": "\u001b[2Jbad {}"}}}}"#,
            "x".repeat(5000)
        );
        let detail = error_detail(&long);
        assert!(detail.chars().count() <= MAX_DETAIL_CHARS + 1, "{detail}");
        assert!(detail.starts_with(" [2Jbad x") && !detail.contains('\u{1b}'));
    }

    #[tokio::test]
    async fn a_slow_reply_times_out() {
        let fake = FakeAnthropic::start(Reply::Slow(Duration::from_secs(5))).await;
        let timeout = Duration::from_millis(200);
        let result = counter(fake.url().into(), timeout)
            .count(&text_request("claude", "x"))
            .await;
        assert_eq!(result, Err(CountFailure::Timeout(timeout)));
    }

    #[tokio::test]
    async fn a_closed_port_is_a_network_failure() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        drop(listener);
        let result = counter(url, Duration::from_secs(5))
            .count(&text_request("claude", "x"))
            .await;
        assert!(
            matches!(result, Err(CountFailure::Network(_))),
            "{result:?}"
        );
    }
}
