//! Faults and refusals against the built binary: what an exposed HTTP endpoint and a
//! stdio server do with bad clients, bad input and shutdown. HTTP requests here are
//! written by hand on a TCP socket (loopback only) so headers, bodies and
//! disconnects are exactly what each test says.

use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use serde_json::{Value, json};
use test_support::client::{http_transport, http_transport_with_token, initialize_request};
use test_support::http1::{authority, head, parse_reply, post_mcp, request, request_with_host};
use test_support::{Binary, PATIENCE, TempTree, call, process, structured};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::Child;

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

fn count_call(id: u64, text: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "count-tokens", "arguments": {"text": text, "model": "gpt-4o"}}})
    .to_string()
    .into_bytes()
}

async fn metrics_text(addr: &str, token: Option<&str>) -> String {
    let auth = token.map(|t| format!("Bearer {t}"));
    let extra: Vec<(&str, &str)> = auth
        .as_deref()
        .map(|a| vec![("Authorization", a)])
        .unwrap_or_default();
    let reply = request(addr, "GET", "/metrics", &extra, b"").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.body
}

fn gauge(metrics: &str, name: &str) -> i64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} not in\n{metrics}"))
}

async fn wait_until_idle(addr: &str) {
    let started = Instant::now();
    while gauge(&metrics_text(addr, None).await, "mcp_tool_calls_in_flight") != 0 {
        assert!(started.elapsed() < PATIENCE, "tool calls never finished");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Varied text of about `bytes` bytes (mixed scripts, so BPE has real work to do).
fn big_text(bytes: usize) -> String {
    let words = [
        "budget",
        "컨텍스트",
        "token",
        "κείμενο",
        "📚",
        "fn",
        "{",
        "}",
        "윈도우",
    ];
    let mut text = String::with_capacity(bytes + 32);
    let mut i = 0usize;
    while text.len() < bytes {
        text.push_str(words[i % words.len()]);
        text.push_str(&(i % 997).to_string());
        text.push(' ');
        i += 1;
    }
    text
}

#[tokio::test]
async fn oversize_body_is_413_and_the_server_stays_up() {
    let (_server, url) = BIN
        .spawn_http(&[], &["--stateless", "--max-body-bytes", "4096"])
        .await;
    let addr = authority(&url);
    let oversize = count_call(1, &"a".repeat(20_000));
    let reply = post_mcp(&addr, &[], &oversize).await;
    assert_eq!(reply.status, 413, "{reply:?}");
    let fits = count_call(2, "hello world");
    assert_eq!(post_mcp(&addr, &[], &fits).await.token_count(), 2);
    let metrics = metrics_text(&addr, None).await;
    assert!(
        metrics.contains(r#"http_responses_total{status="413"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn wrong_host_is_403() {
    let (_server, url) = BIN.spawn_http(&[], &["--stateless"]).await;
    let addr = authority(&url);
    let body = count_call(1, "hi");
    let rebinding = request_with_host(&addr, "attacker.example", "POST", "/mcp", &[], &body).await;
    assert_eq!(rebinding.status, 403, "{rebinding:?}");
    assert_eq!(post_mcp(&addr, &[], &body).await.token_count(), 1);

    // A configured public name is accepted, loopback names then are not.
    let (_server, url) = BIN
        .spawn_http(&[], &["--stateless", "--allowed-host", "mcp.example.com"])
        .await;
    let addr = authority(&url);
    let public = request_with_host(&addr, "mcp.example.com", "POST", "/mcp", &[], &body).await;
    assert_eq!(public.token_count(), 1);
    assert_eq!(post_mcp(&addr, &[], &body).await.status, 403);
}

#[tokio::test]
async fn bad_origin_is_403_and_allowed_origins_pass() {
    let body = count_call(1, "hi");
    let (_server, url) = BIN.spawn_http(&[], &["--stateless"]).await;
    let addr = authority(&url);
    let evil = post_mcp(&addr, &[("Origin", "https://evil.example")], &body).await;
    assert_eq!(evil.status, 403, "{evil:?}");
    let local_page = post_mcp(&addr, &[("Origin", "http://localhost:6274")], &body).await;
    assert_eq!(
        local_page.token_count(),
        1,
        "loopback pages pass by default"
    );

    let (_server, url) = BIN
        .spawn_http(
            &[],
            &[
                "--stateless",
                "--allowed-origin",
                "https://app.example.com:443",
            ],
        )
        .await;
    let addr = authority(&url);
    let app = post_mcp(&addr, &[("Origin", "https://app.example.com")], &body).await;
    assert_eq!(app.token_count(), 1);
    let other = post_mcp(&addr, &[("Origin", "http://localhost:6274")], &body).await;
    assert_eq!(other.status, 403, "only the configured origins once set");
}

#[tokio::test]
async fn missing_or_wrong_token_is_401_and_probes_stay_open() {
    let dir = TempTree::new("cl-faults-auth");
    let token_file = dir.write(
        "tokens",
        "# tokens\nfirst-token-0123456789\nsecond-token-abcdef\n",
    );
    let token_file = token_file.to_string_lossy().into_owned();
    let (_server, url) = BIN
        .spawn_http(&[], &["--stateless", "--auth-token-file", &token_file])
        .await;
    let addr = authority(&url);
    let body = count_call(1, "hi there");

    let missing = post_mcp(&addr, &[], &body).await;
    assert_eq!(missing.status, 401, "{missing:?}");
    assert_eq!(missing.header("www-authenticate"), Some("Bearer"));
    let wrong = post_mcp(
        &addr,
        &[("Authorization", "Bearer first-token-0123456788")],
        &body,
    )
    .await;
    assert_eq!(wrong.status, 401);
    assert!(
        wrong
            .header("www-authenticate")
            .unwrap_or_default()
            .starts_with("Bearer")
    );
    let basic = post_mcp(&addr, &[("Authorization", "Basic Zmlyc3Q=")], &body).await;
    assert_eq!(basic.status, 401);
    let right = post_mcp(
        &addr,
        &[("Authorization", "Bearer second-token-abcdef")],
        &body,
    )
    .await;
    assert_eq!(right.token_count(), 2);

    // Orchestrator probes never need the token; metrics do.
    assert_eq!(
        request(&addr, "GET", "/healthz", &[], b"").await.status,
        200
    );
    let started = Instant::now();
    loop {
        let ready = request(&addr, "GET", "/readyz", &[], b"").await;
        if ready.status == 200 {
            break;
        }
        assert_eq!(ready.status, 503, "{ready:?}");
        assert!(started.elapsed() < PATIENCE, "never ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        request(&addr, "GET", "/metrics", &[], b"").await.status,
        401
    );
    let metrics = metrics_text(&addr, Some("first-token-0123456789")).await;
    assert!(
        metrics.contains(r#"mcp_tool_calls_total{tool="count-tokens",outcome="ok"} 1"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"http_responses_total{status="401"} 4"#),
        "{metrics}"
    );

    // A real MCP client with the token: initialize, list, call.
    let transport = http_transport_with_token(url.clone(), "first-token-0123456789");
    let client = tokio::time::timeout(PATIENCE, ().serve(transport))
        .await
        .expect("initialize timed out")
        .expect("initialize with a token");
    let result = call(
        &client,
        "count-tokens",
        json!({"text": "hi there", "model": "gpt-4o"}),
    )
    .await;
    assert_eq!(structured(&result)["token_count"], 2);
}

#[tokio::test]
async fn unknown_or_expired_session_id_is_404() {
    let (_server, url) = BIN.spawn_http(&[], &["--session-idle-timeout", "1"]).await;
    let addr = authority(&url);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let bogus = post_mcp(
        &addr,
        &[
            ("Mcp-Session-Id", "no-such-session"),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        list.as_bytes(),
    )
    .await;
    assert_eq!(
        bogus.status, 404,
        "spec: unknown session id → 404 Not Found; {bogus:?}"
    );

    // A real session works, then expires after the idle timeout and is 404 too.
    let initialize = initialize_request("faults").to_string();
    let init = post_mcp(&addr, &[], initialize.as_bytes()).await;
    assert_eq!(init.status, 200, "{init:?}");
    let session = init
        .header("mcp-session-id")
        .expect("session id")
        .to_string();
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let accepted = post_mcp(&addr, &headers, initialized.as_bytes()).await;
    assert_eq!(accepted.status, 202, "{accepted:?}");
    let listed = post_mcp(&addr, &headers, list.as_bytes()).await;
    assert_eq!(listed.status, 200, "{listed:?}");
    assert!(listed.body.contains("count-tokens"), "{listed:?}");
    // Idle (no requests: each one would renew the session) past the 1 s timeout.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let expired = post_mcp(&addr, &headers, list.as_bytes()).await;
    assert_eq!(expired.status, 404, "{expired:?}");
}

#[tokio::test]
async fn client_disconnects_mid_request_leave_the_server_healthy() {
    let (mut server, url) = BIN
        .spawn_http(
            &["--max-input-bytes", "20000000"],
            &["--stateless", "--max-body-bytes", "40000000"],
        )
        .await;
    let addr = authority(&url);
    let text = big_text(3_000_000);
    let body = count_call(1, &text);

    // 1. Gone while sending the body: headers promise more than ever arrives.
    let mut stream = TcpStream::connect(&addr).await.expect("connect");
    let partial = head("POST", "/mcp", &addr, &[], body.len());
    stream.write_all(partial.as_bytes()).await.expect("head");
    stream.write_all(b"\r\n").await.expect("head end");
    stream
        .write_all(&body[..body.len() / 3])
        .await
        .expect("part of the body");
    drop(stream);

    // 2. Gone while the server counts: the whole request, then close without reading.
    for _ in 0..3 {
        let mut stream = TcpStream::connect(&addr).await.expect("connect");
        let mut bytes = head("POST", "/mcp", &addr, &[], body.len()).into_bytes();
        bytes.extend_from_slice(b"\r\n");
        bytes.extend_from_slice(&body);
        stream.write_all(&bytes).await.expect("request");
        drop(stream);
    }

    // The abandoned calls are released, the process is alive, and counts are right.
    wait_until_idle(&addr).await;
    assert!(
        server.try_wait().expect("status").is_none(),
        "server exited"
    );
    let (code, stdout, _) = BIN.run_cli(
        &[
            "--max-input-bytes",
            "20000000",
            "count",
            "--json",
            "--model",
            "gpt-4o",
        ],
        Some(&text),
    );
    assert_eq!(code, 0);
    let expected: Value = serde_json::from_str(&stdout).expect("cli json");
    let reply = post_mcp(&addr, &[], &body).await;
    assert_eq!(Some(reply.token_count()), expected["token_count"].as_u64());
}

/// Start a server whose stderr we keep, to read its shutdown log.
async fn spawn_logged_http(args: &[&str]) -> (Child, String, tokio::task::JoinHandle<Vec<String>>) {
    let mut http = vec!["--max-body-bytes", "40000000"];
    http.extend_from_slice(args);
    BIN.spawn_http_logged(
        &["--max-input-bytes", "20000000", "--log-format", "json"],
        &http,
        &[],
    )
    .await
}

/// SIGTERM to a running server.
fn sigterm(server: &Child) {
    process::sigterm(server.id().expect("running server has a pid"));
}

/// Wait until `n` tool calls are running (they take ~seconds: megabytes of text).
async fn wait_for_in_flight(addr: &str, n: i64) {
    let started = Instant::now();
    while gauge(&metrics_text(addr, None).await, "mcp_tool_calls_in_flight") < n {
        assert!(started.elapsed() < PATIENCE, "calls never started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn assert_exits_zero_after_draining(
    mut server: Child,
    log: tokio::task::JoinHandle<Vec<String>>,
    calls: usize,
) {
    let status = tokio::time::timeout(PATIENCE, server.wait())
        .await
        .expect("server did not exit after SIGTERM")
        .expect("wait");
    assert_eq!(status.code(), Some(0), "graceful shutdown exits 0");
    let log = log.await.expect("log");
    let shutdown: Value = log
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| {
            l["fields"]["message"]
                .as_str()
                .unwrap_or_default()
                .starts_with("shutting down")
        })
        .unwrap_or_else(|| panic!("no shutdown line in {log:#?}"));
    assert_eq!(
        shutdown["fields"]["in_flight"].as_i64(),
        Some(calls as i64),
        "SIGTERM must have arrived while the calls ran"
    );
}

#[tokio::test]
async fn sigterm_lets_in_flight_stateless_calls_finish_then_exits_0() {
    const CALLS: usize = 3;
    let (server, url, log) = spawn_logged_http(&["--stateless"]).await;
    let addr = authority(&url);
    let text = big_text(6_000_000);
    let body = count_call(1, &text);
    let calls: Vec<_> = (0..CALLS)
        .map(|_| {
            let (addr, body) = (addr.clone(), body.clone());
            tokio::spawn(async move { post_mcp(&addr, &[], &body).await })
        })
        .collect();
    wait_for_in_flight(&addr, CALLS as i64).await;
    sigterm(&server);
    let mut counts = Vec::new();
    for call in calls {
        counts.push(call.await.expect("call task").token_count());
    }
    assert!(
        counts.iter().all(|&c| c == counts[0] && c > 1_000_000),
        "{counts:?}"
    );
    // Nothing new is accepted once shutdown began.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(TcpStream::connect(&addr).await.is_err() || server_gone(&addr).await);
    assert_exits_zero_after_draining(server, log, CALLS).await;
}

/// After shutdown begins a connection may still be accepted by the kernel backlog but
/// is never served.
async fn server_gone(addr: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect(addr).await else {
        return true;
    };
    let _ = stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await;
    let mut buf = [0u8; 64];
    !matches!(
        tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buf)).await,
        Ok(Ok(n)) if n > 0
    )
}

#[tokio::test]
async fn sigterm_lets_in_flight_session_calls_finish_then_exits_0() {
    const CALLS: usize = 2;
    let (server, url, log) = spawn_logged_http(&[]).await;
    let addr = authority(&url);
    let client = tokio::time::timeout(PATIENCE, ().serve(http_transport(url.clone())))
        .await
        .expect("initialize timed out")
        .expect("initialize");
    let text = big_text(6_000_000);
    let calls: Vec<_> = (0..CALLS)
        .map(|_| {
            let peer = client.peer().clone();
            let text = text.clone();
            tokio::spawn(async move {
                let args = json!({"text": text, "model": "gpt-4o"});
                let params = rmcp::model::CallToolRequestParams::new("count-tokens")
                    .with_arguments(args.as_object().cloned().expect("object"));
                tokio::time::timeout(PATIENCE, peer.call_tool(params)).await
            })
        })
        .collect();
    wait_for_in_flight(&addr, CALLS as i64).await;
    sigterm(&server);
    for call in calls {
        let result = call
            .await
            .expect("call task")
            .expect("call timed out")
            .expect("in-flight call completes during shutdown");
        assert_eq!(result.is_error, Some(false));
        assert!(structured(&result)["token_count"].as_u64().unwrap_or(0) > 1_000_000);
    }
    assert_exits_zero_after_draining(server, log, CALLS).await;
}

fn assert_error(reply: &Value, code: i64) {
    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
    assert_eq!(reply["error"]["code"], code, "{reply}");
    assert!(
        reply.get("id").is_some(),
        "JSON-RPC error replies carry an id (null if unknown): {reply}"
    );
}

#[tokio::test]
async fn bad_stdio_lines_get_json_rpc_errors_and_the_session_goes_on() {
    let mut raw = BIN.raw_stdio();
    raw.initialize("faults").await;

    raw.send(b"{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": ")
        .await;
    let malformed = raw.next().await;
    assert_error(&malformed, -32700);
    assert_eq!(malformed["id"], Value::Null);
    raw.assert_alive(10).await;

    let batch = json!([{"jsonrpc": "2.0", "id": 6, "method": "ping"},
                       {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}]);
    raw.send(batch.to_string().as_bytes()).await;
    assert_error(&raw.next().await, -32600);
    raw.assert_alive(11).await;

    // 20 MiB on one line (over the 16 MiB frame limit): refused without buffering it.
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}",
        "x".repeat(20 << 20)
    );
    raw.send(huge.as_bytes()).await;
    let refused = raw.next().await;
    assert_error(&refused, -32600);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("limit"),
        "{refused}"
    );
    raw.assert_alive(12).await;

    // And real work still happens afterwards.
    raw.send(&count_call(13, "hello world")).await;
    let counted = raw.next().await;
    assert_eq!(counted["id"], 13);
    assert_eq!(
        counted["result"]["structuredContent"]["token_count"], 2,
        "{counted}"
    );
    assert!(raw.child.try_wait().expect("status").is_none());
    drop(raw.stdin);
    let status = tokio::time::timeout(PATIENCE, raw.child.wait())
        .await
        .expect("exit on EOF")
        .expect("wait");
    assert_eq!(status.code(), Some(0), "stdin EOF ends the server cleanly");
}

#[tokio::test]
async fn stalled_request_times_out_with_408_and_holds_its_concurrency_slot_until_then() {
    let (_server, url) = BIN
        .spawn_http(
            &[],
            &[
                "--stateless",
                "--max-concurrent-requests",
                "1",
                "--request-timeout",
                "2",
            ],
        )
        .await;
    let addr = authority(&url);
    let body = count_call(1, "hello world");

    // A: promises a body it never finishes sending, holding the only slot.
    let started = Instant::now();
    let mut stalled = TcpStream::connect(&addr).await.expect("connect");
    let head_a = head("POST", "/mcp", &addr, &[], body.len());
    stalled
        .write_all(format!("{head_a}\r\n").as_bytes())
        .await
        .expect("head");
    stalled
        .write_all(&body[..10])
        .await
        .expect("part of the body");

    // B: a complete request that must wait for the slot.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let waiting = {
        let (addr, body) = (addr.clone(), body.clone());
        tokio::spawn(async move {
            let reply = post_mcp(&addr, &[], &body).await;
            (reply, started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(1200)).await;
    if started.elapsed() < Duration::from_millis(1900) {
        assert!(
            !waiting.is_finished(),
            "B was served while A held the only slot"
        );
    }

    // A is cut off at its deadline with 408 ...
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(PATIENCE, stalled.read_to_end(&mut raw)).await;
    let timed_out = parse_reply(&raw).expect("a reply");
    assert_eq!(timed_out.status, 408, "{timed_out:?}");
    // ... which frees the slot for B.
    let (served, at) = waiting.await.expect("B");
    assert!(
        at >= Duration::from_secs(2),
        "B finished at {at:?}, before A's deadline"
    );
    assert_eq!(served.token_count(), 2);
}
