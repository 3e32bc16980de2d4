//! Hostile clients against the built binary on loopback: each test reproduces an attack
//! from issue 12 and asserts the answer (a fast, clear error naming the flag that sets
//! the limit), the server's peak memory (`VmHWM`), and that `/healthz` stays fast
//! meanwhile. Every test is bounded in time and stops by itself; the time bounds are
//! generous guards against hangs, not performance claims.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_support::anthropic::{FakeAnthropic, Reply as FakeReply};
use test_support::client::initialize_request;
use test_support::http1::{
    Reply, authority, head, parse_reply, post_mcp, request, request_with_host, wait_ready,
};
use test_support::process::{peak_rss_bytes, sigterm};
use test_support::{Binary, PATIENCE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::Child;

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

const MIB: u64 = 1024 * 1024;

/// A `tools/call` body whose arguments object is written as text, so a test can send
/// millions of values without building them itself.
fn tool_call(id: u64, tool: &str, arguments: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    )
    .into_bytes()
}

fn count_call(id: u64, text: &str) -> Vec<u8> {
    tool_call(
        id,
        "count-tokens",
        &json!({"text": text, "model": "gpt-4o"}).to_string(),
    )
}

/// A JSON-RPC error reply: HTTP `status`, JSON body with `code`, `id` and a message
/// containing every one of `needles`.
fn assert_json_rpc_error(reply: &Reply, status: u16, code: i64, id: Value, needles: &[&str]) {
    assert_eq!(reply.status, status, "{reply:?}");
    assert_eq!(
        reply.header("content-type"),
        Some("application/json"),
        "{reply:?}"
    );
    let body = reply.json();
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["id"], id, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    for needle in needles {
        assert!(message.contains(needle), "{needle:?} not in {message:?}");
    }
}

/// `/healthz` answers, and soon (a hang guard: the attacks made it take 30 s+).
async fn assert_healthz_fast(addr: &str) {
    let started = Instant::now();
    let reply = request(addr, "GET", "/healthz", &[], b"").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "/healthz took {took:?} under attack"
    );
}

fn pid(server: &Child) -> u32 {
    server.id().expect("running server has a pid")
}

#[tokio::test]
async fn requests_with_millions_of_json_values_are_refused_before_parsing() {
    let (server, url) = BIN.spawn_http(&[], &["--stateless"]).await;
    let addr = authority(&url);
    wait_ready(&addr).await;
    let baseline = peak_rss_bytes(pid(&server));

    // The issue's rows: each body under the 16 MiB limit, each millions of values.
    let attacks: Vec<(&str, Vec<u8>)> = vec![
        (
            "count-tokens with 8 M zeros",
            tool_call(
                1,
                "count-tokens",
                &format!(
                    r#"{{"text":"hi","model":"gpt-4o","extra":[{}0]}}"#,
                    "0,".repeat(7_999_999)
                ),
            ),
        ),
        (
            "list-models with 5 M {}",
            tool_call(
                2,
                "list-models",
                &format!(r#"{{"extra":[{}{{}}]}}"#, "{},".repeat(4_999_999)),
            ),
        ),
        (
            "fit-messages with 900 k messages",
            tool_call(
                3,
                "fit-messages",
                &format!(
                    r#"{{"model":"gpt-4o","messages":[{}{{"role":"user"}}]}}"#,
                    r#"{"role":"user"},"#.repeat(899_999)
                ),
            ),
        ),
        (
            "assemble-context with 400 k sections",
            tool_call(
                4,
                "assemble-context",
                &format!(
                    r#"{{"sections":[{}{{"name":"","content":""}}]}}"#,
                    r#"{"name":"","content":""},"#.repeat(399_999)
                ),
            ),
        ),
    ];
    let mut largest = 0u64;
    for (id, (what, body)) in (1u64..).zip(&attacks) {
        assert!(body.len() < 16 << 20, "{what}: under the body limit");
        largest = largest.max(body.len() as u64);
        let reply = post_mcp(&addr, &[], body).await;
        assert_json_rpc_error(
            &reply,
            413,
            -32600,
            json!(id),
            &["more than 500000 JSON values", "--max-json-values"],
        );
        assert_healthz_fast(&addr).await;
    }
    let one_at_a_time = peak_rss_bytes(pid(&server)) - baseline;
    eprintln!(
        "peak grew {} MiB for bodies up to {} MiB, one at a time",
        one_at_a_time / MIB,
        largest / MIB
    );
    assert!(
        one_at_a_time < 3 * largest,
        "peak grew {one_at_a_time} bytes for a {largest}-byte body (before: 1.8 GB)"
    );

    // Eight at once (before: 2.9 GB peak), with /healthz asked meanwhile.
    let body = attacks[2].1.clone();
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let (addr, body) = (addr.clone(), body.clone());
            tokio::spawn(async move { post_mcp(&addr, &[], &body).await })
        })
        .collect();
    assert_healthz_fast(&addr).await;
    for call in calls {
        assert_eq!(call.await.expect("call").status, 413);
    }
    let eight = peak_rss_bytes(pid(&server)) - baseline;
    eprintln!(
        "peak grew {} MiB for eight {} MiB bodies at once",
        eight / MIB,
        body.len() as u64 / MIB
    );
    assert!(
        eight < 8 * 3 * body.len() as u64,
        "peak grew {eight} bytes for eight bodies"
    );

    // Honest work is untouched: a large text is one value, however long.
    let text = "context budget ".repeat(200_000);
    assert_eq!(
        post_mcp(&addr, &[], &count_call(9, &text))
            .await
            .token_count(),
        400_001
    );
}

#[tokio::test]
async fn malformed_bodies_get_400_with_a_json_rpc_error() {
    for mode in [&["--stateless"][..], &[][..]] {
        let (_server, url) = BIN.spawn_http(&[], mode).await;
        let addr = authority(&url);
        let not_json = post_mcp(&addr, &[], br#"{"jsonrpc": "2.0", "id": 5, "method": "#).await;
        assert_json_rpc_error(&not_json, 400, -32700, Value::Null, &["Parse error"]);
        let bad_utf8 = post_mcp(
            &addr,
            &[],
            b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}",
        )
        .await;
        assert_json_rpc_error(&bad_utf8, 400, -32700, Value::Null, &["UTF-8"]);
        let batch = json!([{"jsonrpc": "2.0", "id": 7, "method": "ping"}]).to_string();
        let batch = post_mcp(&addr, &[], batch.as_bytes()).await;
        assert_json_rpc_error(&batch, 400, -32600, Value::Null, &["batch"]);
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":8,"method":"ping","params":{{"x":{}1{}}}}}"#,
            "[".repeat(300),
            "]".repeat(300)
        );
        let deep = post_mcp(&addr, &[], deep.as_bytes()).await;
        assert_json_rpc_error(&deep, 400, -32600, json!(8), &["deeper than 128"]);
        let not_rpc = post_mcp(&addr, &[], br#"{"id": 9, "hello": "world"}"#).await;
        assert_json_rpc_error(&not_rpc, 400, -32600, json!(9), &["Invalid Request"]);
        let oversize = post_mcp(&addr, &[], &count_call(10, &"a".repeat(17 << 20))).await;
        assert_json_rpc_error(&oversize, 413, -32600, Value::Null, &["--max-body-bytes"]);
        assert_healthz_fast(&addr).await;
    }
}

#[tokio::test]
async fn metrics_applies_the_host_allow_list() {
    let (_server, url) = BIN.spawn_http(&[], &["--stateless"]).await;
    let addr = authority(&url);
    let evil = request_with_host(&addr, "evil.com", "GET", "/metrics", &[], b"").await;
    assert_eq!(evil.status, 403, "{evil:?}");
    assert!(!evil.body.contains("mcp_tool_calls"), "{evil:?}");
    let local = request(&addr, "GET", "/metrics", &[], b"").await;
    assert_eq!(local.status, 200, "{local:?}");
    // Probes stay reachable by any name (orchestrators probe by address).
    let probe = request_with_host(&addr, "10.1.2.3:8080", "GET", "/healthz", &[], b"").await;
    assert_eq!(probe.status, 200, "{probe:?}");
}

/// `initialize` over raw HTTP: the reply and its session id, if any.
async fn initialize(addr: &str, id: u64) -> (Reply, Option<String>) {
    let mut message = initialize_request("abuse");
    message["id"] = json!(id);
    let reply = post_mcp(addr, &[], message.to_string().as_bytes()).await;
    let session = reply.header("mcp-session-id").map(str::to_owned);
    (reply, session)
}

#[tokio::test]
async fn sessions_beyond_the_cap_are_refused_and_memory_stays_bounded() {
    const CAP: usize = 50;
    let (server, url) = BIN
        .spawn_http(&[], &["--max-sessions", &CAP.to_string()])
        .await;
    let addr = authority(&url);
    wait_ready(&addr).await;
    let baseline = peak_rss_bytes(pid(&server));
    let mut sessions = Vec::new();
    for id in 0..CAP as u64 {
        let (reply, session) = initialize(&addr, id).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        sessions.push(session.expect("a session id"));
    }
    let at_cap = peak_rss_bytes(pid(&server)) - baseline;
    // Ten times the cap: every one beyond it is refused, and memory stops growing.
    let mut refused = 0;
    for id in 0..(10 * CAP) as u64 {
        let (reply, session) = initialize(&addr, 1000 + id).await;
        assert!(session.is_none(), "no session beyond the cap");
        if refused == 0 {
            assert_json_rpc_error(
                &reply,
                503,
                -32000,
                json!(1000 + id),
                &[&format!("{CAP} sessions"), "--max-sessions"],
            );
            assert!(reply.header("retry-after").is_some(), "{reply:?}");
        }
        assert_eq!(reply.status, 503);
        refused += 1;
    }
    assert_eq!(refused, 10 * CAP);
    assert_healthz_fast(&addr).await;
    let after = peak_rss_bytes(pid(&server)) - baseline;
    eprintln!(
        "{CAP} sessions: +{} KiB; after {} refused: +{} KiB",
        at_cap / 1024,
        10 * CAP,
        after / 1024
    );
    assert!(
        after < at_cap + 16 * MIB,
        "refused initializes still cost memory: {at_cap} then {after}"
    );

    // Closing one makes room for one.
    let closed = request(
        &addr,
        "DELETE",
        "/mcp",
        &[
            ("Mcp-Session-Id", sessions[0].as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        b"",
    )
    .await;
    assert!(closed.status < 300, "{closed:?}");
    let started = Instant::now();
    loop {
        let (reply, session) = initialize(&addr, 5000).await;
        if reply.status == 200 {
            assert!(session.is_some());
            break;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "the closed session never freed its place"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Wait until the server closes `stream`; how long that took.
async fn closed_after(mut stream: TcpStream) -> Duration {
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(PATIENCE, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return started.elapsed(),
            Ok(Ok(_)) => {}
            Err(_) => panic!("connection still open after {PATIENCE:?}"),
        }
    }
}

#[tokio::test]
async fn idle_and_dribbling_connections_are_closed() {
    let (_server, url) = BIN
        .spawn_http(&[], &["--stateless", "--header-read-timeout", "2"])
        .await;
    let addr = authority(&url);

    // Many sockets that never send a byte.
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(TcpStream::connect(&addr).await.expect("connect"));
    }
    // A head dribbled a byte every 300 ms.
    let mut dribbler = TcpStream::connect(&addr).await.expect("connect");
    let dribbling = tokio::spawn(async move {
        let head = format!(
            "GET /healthz HTTP/1.1\r\nHost: {}\r\nX-Pad: {}",
            "x",
            "y".repeat(100)
        );
        for byte in head.bytes() {
            if dribbler.write_all(&[byte]).await.is_err() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        false
    });
    // A keep-alive connection left idle after its response.
    let mut kept = TcpStream::connect(&addr).await.expect("connect");
    kept.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .expect("request");
    let mut buf = [0u8; 1024];
    let n = kept.read(&mut buf).await.expect("response");
    assert!(
        String::from_utf8_lossy(&buf[..n]).contains("ok"),
        "keep-alive answered"
    );

    assert_healthz_fast(&addr).await;
    for stream in idle {
        let took = closed_after(stream).await;
        assert!(took < Duration::from_secs(10), "idle socket open {took:?}");
    }
    let took = closed_after(kept).await;
    assert!(
        took < Duration::from_secs(10),
        "keep-alive socket open {took:?}"
    );
    assert!(
        tokio::time::timeout(PATIENCE, dribbling)
            .await
            .expect("the dribbled head was cut off")
            .expect("task"),
        "the server waited for a whole dribbled head"
    );
    assert_healthz_fast(&addr).await;
}

#[tokio::test]
async fn dribbled_bodies_lose_their_slot_and_honest_calls_get_through() {
    const SLOTS: usize = 4;
    let (_server, url) = BIN
        .spawn_http(
            &[],
            &[
                "--stateless",
                "--max-concurrent-requests",
                &SLOTS.to_string(),
                "--body-read-timeout",
                "2",
            ],
        )
        .await;
    let addr = authority(&url);
    let body = count_call(1, "hello world");

    // Twice as many clients as slots, each promising a body and sending a byte of it
    // every 500 ms (before: every slot held until --request-timeout).
    let dribblers: Vec<_> = (0..2 * SLOTS)
        .map(|_| {
            let (addr, body) = (addr.clone(), body.clone());
            tokio::spawn(async move {
                let stream = TcpStream::connect(&addr).await.expect("connect");
                let (mut reader, mut writer) = stream.into_split();
                let head = head("POST", "/mcp", &addr, &[], body.len());
                let dribble = tokio::spawn(async move {
                    writer
                        .write_all(format!("{head}\r\n").as_bytes())
                        .await
                        .expect("head");
                    for byte in &body {
                        if writer.write_all(&[*byte]).await.is_err() {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(500)).await;
                    }
                });
                let mut raw = Vec::new();
                let _ = tokio::time::timeout(PATIENCE, reader.read_to_end(&mut raw)).await;
                dribble.abort();
                parse_reply(&raw).expect("a reply")
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let honest = post_mcp(&addr, &[], &body).await;
    let waited = started.elapsed();
    assert_eq!(honest.token_count(), 2);
    eprintln!(
        "an honest call behind {} dribblers took {waited:?}",
        2 * SLOTS
    );
    assert!(
        waited < Duration::from_secs(20),
        "an honest call waited {waited:?} behind dribbled bodies"
    );
    assert_healthz_fast(&addr).await;
    for dribbler in dribblers {
        let reply = dribbler.await.expect("dribbler");
        assert_json_rpc_error(
            &reply,
            408,
            -32600,
            Value::Null,
            &["too slowly", "--body-read-timeout", "--min-body-rate"],
        );
    }
}

#[tokio::test]
async fn sigterm_answers_calls_still_running_after_the_grace_and_exits() {
    // An exact Claude count against an API that answers after a minute: the call is
    // still running when the one-second grace ends.
    let fake = FakeAnthropic::start(FakeReply::Slow(Duration::from_secs(60))).await;
    let (mut server, url, _log) = BIN
        .spawn_http_logged(
            &["--anthropic-timeout-ms", "60000"],
            &["--stateless", "--shutdown-grace", "1"],
            &fake.server_env(),
        )
        .await;
    let addr = authority(&url);
    let body = tool_call(
        42,
        "count-tokens",
        &json!({"text": "hello", "model": "claude-sonnet-4-5"}).to_string(),
    );
    let call = {
        let (addr, body) = (addr.clone(), body.clone());
        tokio::spawn(async move { post_mcp(&addr, &[], &body).await })
    };
    let started = Instant::now();
    while fake.request_count() == 0 {
        assert!(
            started.elapsed() < PATIENCE,
            "the call never reached the API"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sigterm(pid(&server));
    let signalled = Instant::now();
    let reply = call.await.expect("call");
    assert_json_rpc_error(
        &reply,
        503,
        -32000,
        json!(42),
        &["shutting down", "--shutdown-grace"],
    );
    let status = tokio::time::timeout(PATIENCE, server.wait())
        .await
        .expect("the server did not exit")
        .expect("wait");
    assert_eq!(status.code(), Some(0));
    let took = signalled.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "exit took {took:?} with a 1 s grace"
    );
}

#[tokio::test]
async fn stdio_survives_early_messages_and_duplicate_ids_and_exits_0_on_eof() {
    // Before initialize: a notification and a stray response are ignored, not fatal.
    let mut raw = BIN.raw_stdio();
    raw.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    raw.send_json(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}))
        .await;
    raw.initialize("abuse").await;
    raw.assert_alive(2).await;

    // A request reusing the id of one still running is refused; the first is answered.
    let text = "context budget ".repeat(400_000);
    raw.send(&count_call(7, &text)).await;
    raw.send_json(&json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
        .await;
    let mut replies = vec![raw.next().await, raw.next().await];
    replies.sort_by_key(|r| r.get("error").is_none());
    assert_eq!(replies[0]["id"], 7, "{replies:?}");
    assert_eq!(replies[0]["error"]["code"], -32600, "{replies:?}");
    assert_eq!(replies[1]["id"], 7, "{replies:?}");
    assert_eq!(
        replies[1]["result"]["structuredContent"]["token_count"], 800_001,
        "{replies:?}"
    );
    // Its id is free again once answered.
    raw.assert_alive(7).await;

    // Too many values on one line: refused before parsing, the session goes on.
    let line = tool_call(
        8,
        "count-tokens",
        &format!(r#"{{"text":"hi","extra":[{}0]}}"#, "0,".repeat(600_000)),
    );
    raw.send(&line).await;
    let refused = raw.next().await;
    assert_eq!(refused["id"], 8, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("--max-json-values"),
        "{refused}"
    );
    raw.assert_alive(9).await;
    drop(raw.stdin);
    let status = tokio::time::timeout(PATIENCE, raw.child.wait())
        .await
        .expect("exit on EOF")
        .expect("wait");
    assert_eq!(status.code(), Some(0));

    // End of input before initialize is a clean exit too.
    let mut raw = BIN.raw_stdio();
    raw.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    drop(raw.stdin);
    let status = tokio::time::timeout(PATIENCE, raw.child.wait())
        .await
        .expect("exit on EOF")
        .expect("wait");
    assert_eq!(status.code(), Some(0), "EOF before initialize exits 0");
}
