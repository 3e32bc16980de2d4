//! Issue 40 (hardening, round 3) rows that have no other home: what a client of the
//! file tools can never be handed, and what an `mcp-tokens` call costs the server
//! (its CPU once cut, its memory).

use std::time::Duration;

use serde_json::{Value, json};
use test_support::process::{assert_cpu_settles_within, cpu_seconds};
use test_support::{ALL, Binary, call, structured};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// M5: credentials the denylist missed, each with a marker that must never reach an
/// answer: walked (with `hidden`), named, or loaded on the CLI.
const CREDENTIALS: &[&str] = &[
    ".claude/.credentials.json",
    ".claude.json",
    ".config/containers/auth.json",
    ".config/gcloud/access_tokens.db",
    ".config/rclone/rclone.conf",
    ".m2/settings.xml",
    "gradle.properties",
    ".my.cnf",
    ".yarnrc.yml",
    "client_secret_1234.apps.googleusercontent.com.json",
    "token.json",
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    ".password-store/github.gpg",
];

#[tokio::test]
async fn the_credentials_round_2_missed_are_never_loaded_named_or_walked() {
    let tree = tempfile::tempdir().expect("temp dir");
    let root = tree.path();
    for (i, path) in CREDENTIALS.iter().enumerate() {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, format!("token = sk-leak-{i}\n")).expect("write");
    }
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").expect("write");
    let root_arg = root.display().to_string();
    let named: Vec<&str> = CREDENTIALS.to_vec();
    for transport in ALL {
        let conn = BIN.connect(transport, &["--root", &root_arg]).await;
        for arguments in [json!({"hidden": true}), json!({"paths": named})] {
            let loaded = call(&conn.client, "load-files", arguments.clone()).await;
            let answer: &Value = structured(&loaded);
            assert!(
                !answer.to_string().contains("sk-leak"),
                "{transport:?} {arguments}: {answer}"
            );
        }
        let measured = call(&conn.client, "file-tokens", json!({"hidden": true})).await;
        let files: Vec<&str> = structured(&measured)["files"]
            .as_array()
            .expect("files")
            .iter()
            .filter_map(|f| f["path"].as_str())
            .collect();
        assert_eq!(files, ["src/main.rs"], "{transport:?}");
    }
    let mut args = vec!["--root", root_arg.as_str(), "load", "--hidden", "."];
    args.extend(CREDENTIALS);
    let (code, stdout, stderr) = BIN.run_cli(&args, None);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !stdout.contains("sk-leak") && !stderr.contains("sk-leak"),
        "{stdout}"
    );
}

/// 2,000 tools (the `--max-tool-definitions` default) of 30 described parameters
/// each: ~5.9 MB as JSON, within every default limit.
fn many_tools() -> Vec<Value> {
    test_support::stand_in::described_tools(2_000, 30)
}

/// An `mcp-tokens` call of [`many_tools`] counted for Gemini (our SentencePiece BPE,
/// the slowest tokenizer): ~6.5 s of CPU in a debug build.
fn slow_mcp_tokens(id: u64) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "mcp-tokens", "arguments": {"tools": many_tools(), "model": "gemini-2.5-pro"}}})
    .to_string()
    .into_bytes()
}

/// CPU seconds a cut call may still use before the server settles: the part it was
/// counting and its unwinding (dropping its parsed list, giving the heap back), well
/// under a second unloaded. The whole count would use ~5 s more.
const CPU_AFTER_CUT: f64 = 2.0;

/// A stateful session over raw HTTP: its headers, initialized.
async fn open_session(addr: &str) -> Vec<(String, String)> {
    use test_support::http1::post_mcp;
    let init = test_support::client::initialize_request("m2");
    let reply = post_mcp(addr, &[], init.to_string().as_bytes()).await;
    let session = reply.header("mcp-session-id").expect("a session");
    let headers = vec![
        ("Mcp-Session-Id".to_string(), session.to_string()),
        ("MCP-Protocol-Version".to_string(), "2025-06-18".to_string()),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post_mcp(
        addr,
        &as_pairs(&headers),
        initialized.to_string().as_bytes(),
    )
    .await;
    headers
}

fn as_pairs(headers: &[(String, String)]) -> Vec<(&str, &str)> {
    headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// M2 over streamable HTTP: an `mcp-tokens` call cut by `--request-timeout`
/// (stateless: a 408; stateful: a JSON-RPC error naming the flag on its stream) or
/// cancelled (`notifications/cancelled`) stops its counting. Measured as the server
/// process's CPU time from the cut until it settles, not wall time: the whole count
/// would use ~5 s more of it.
#[tokio::test]
async fn a_cut_mcp_tokens_call_over_http_stops_its_work() {
    use test_support::http1::{authority, post_mcp, wait_ready};
    let body = slow_mcp_tokens(7);
    for (flags, cut) in [
        (
            &["--stateless", "--request-timeout", "1"][..],
            "stateless, 408",
        ),
        (&["--request-timeout", "1"][..], "stateful, timed out"),
        (&[][..], "stateful, cancelled"),
    ] {
        let (server, url) = BIN.spawn_http(&[], flags).await;
        let addr = authority(&url);
        wait_ready(&addr).await;
        let pid = server.id().expect("pid");
        let headers = match flags.contains(&"--stateless") {
            true => Vec::new(),
            false => open_session(&addr).await,
        };
        let pairs = as_pairs(&headers);
        let started = std::time::Instant::now();
        if cut == "stateful, cancelled" {
            let (addr2, pairs2, body2) = (addr.clone(), headers.clone(), body.clone());
            let call = tokio::spawn(async move {
                let pairs: Vec<(&str, &str)> = pairs2
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                post_mcp(&addr2, &pairs, &body2).await
            });
            // Working: its CPU time grows.
            let before = cpu_seconds(pid);
            while cpu_seconds(pid) - before < 1.0 {
                assert!(started.elapsed() < test_support::PATIENCE, "never started");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 7, "reason": "test"}});
            post_mcp(&addr, &pairs, cancel.to_string().as_bytes()).await;
            call.abort();
        } else {
            let reply = post_mcp(&addr, &pairs, &body).await;
            assert!(
                reply.status == 408 || reply.body.contains("--request-timeout"),
                "{cut}: {} {}",
                reply.status,
                &reply.body[..reply.body.len().min(500)]
            );
        }
        assert_cpu_settles_within(pid, cut, CPU_AFTER_CUT).await;
        eprintln!(
            "{cut}: settled {:?} after the call started",
            started.elapsed()
        );
        drop(server);
    }
}

/// Answer limits that let a row per tool of a large list through (~160,000
/// characters for 2,000 tools): the whole call runs.
const LARGE_ANSWERS: [&str; 6] = [
    "--max-answer-chars",
    "1000000",
    "--max-answer-tokens",
    "1000000",
    "--max-answer-bytes",
    "1000000",
];

/// M1: the MCP tool's memory is a small multiple of its input and is given back.
/// A fresh stateless HTTP server (warmed by a small call, so the tokenizers' tables
/// are not the list's) gets two `mcp-tokens` calls of 2,000 tools (~5.9 MB, within
/// `--max-tool-definitions`) one after the other: its peak (VmHWM) may grow by at
/// most [`PEAK_PER_INPUT_BYTE`] times the input; what it holds after the first
/// (VmRSS) is within [`HELD_AFTER`] of before (without the heap given back: 171 MB
/// more), and the second call adds nothing lasting (within 12 MB).
#[tokio::test]
async fn an_mcp_tokens_calls_memory_is_a_small_multiple_of_its_input_and_given_back() {
    use rmcp::ServiceExt;
    use test_support::process::{peak_rss_bytes, rss_bytes};
    let (server, url) = BIN.spawn_http(&LARGE_ANSWERS, &["--stateless"]).await;
    let pid = server.id().expect("pid");
    let client = ().serve(test_support::client::http_transport(url)).await.expect("client");
    let small =
        json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "model": "gpt-4o"});
    call(&client, "mcp-tokens", small).await;
    let tools = json!({"tools": many_tools(), "model": "gpt-4o"});
    let input = serde_json::to_vec(&tools["tools"]).expect("JSON").len() as u64;
    let (peak_before, held_before) = (peak_rss_bytes(pid), rss_bytes(pid));
    let mut held = Vec::new();
    for _ in 0..2 {
        let answer = call(&client, "mcp-tokens", tools.clone()).await;
        assert_eq!(answer.is_error, Some(false), "{answer:?}");
        held.push(rss_bytes(pid));
    }
    let peak = peak_rss_bytes(pid);
    let mb = |bytes: u64| bytes as f64 / 1e6;
    eprintln!(
        "input {:.1} MB: peak {:.1} -> {:.1} MB (+{:.1}, {:.1}x the input), held {:.1} -> \
         {:.1} -> {:.1} MB",
        mb(input),
        mb(peak_before),
        mb(peak),
        mb(peak - peak_before),
        (peak - peak_before) as f64 / input as f64,
        mb(held_before),
        mb(held[0]),
        mb(held[1]),
    );
    assert!(
        peak - peak_before < PEAK_PER_INPUT_BYTE * input,
        "peak grew {:.1} MB for {:.1} MB of input",
        mb(peak - peak_before),
        mb(input)
    );
    assert!(
        held[0] < held_before + HELD_AFTER,
        "held {:.1} MB after, {:.1} MB before",
        mb(held[0]),
        mb(held_before)
    );
    assert!(
        held[1] < held[0] + 12_000_000,
        "held {:.1} MB after the second call, {:.1} MB after the first",
        mb(held[1]),
        mb(held[0])
    );
    drop(client);
    drop(server);
}

/// A call large enough to have its arguments parked past rmcp's parse
/// (`mcp_common::parked`, from 256 KiB) answers over every transport exactly as a
/// small one does: the same rows and tokens as the same tools sent in two halves,
/// the wrong type of `tools` refused naming the field, and a made-up ticket refused
/// as the unknown argument it is.
#[tokio::test]
async fn a_large_call_parked_past_rmcp_answers_as_any_call_over_every_transport() {
    let tools = test_support::stand_in::described_tools(200, 30);
    let size = serde_json::to_vec(&tools).expect("JSON").len();
    assert!(size > 256 * 1024, "{size} bytes: over the parking size");
    // The command line reads the same list from a file: no JSON-RPC, nothing parked.
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), serde_json::to_vec(&tools).expect("JSON")).expect("write");
    let path = file.path().display().to_string();
    let args = ["mcp-tokens", "--file", &path, "--model", "gpt-4o", "--json"];
    let (code, stdout, stderr) = BIN.run_cli(&args, None);
    assert_eq!(code, 0, "{stderr}");
    let cli: Value = serde_json::from_str(&stdout).expect("JSON");
    for transport in ALL {
        let conn = BIN.connect(transport, &LARGE_ANSWERS).await;
        let whole = call(
            &conn.client,
            "mcp-tokens",
            json!({"tools": tools, "model": "gpt-4o"}),
        )
        .await;
        assert_eq!(whole.is_error, Some(false), "{transport:?}: {whole:?}");
        let whole = structured(&whole);
        assert_eq!(
            whole["total_tokens"], cli["total_tokens"],
            "{transport:?}: {whole}"
        );
        assert_eq!(whole["savings"], cli["savings"], "{transport:?}");

        let not_a_list = json!({"tools": {"pad": "x".repeat(300 * 1024)}});
        let refused = call(&conn.client, "mcp-tokens", not_a_list).await;
        let refused = structured(&refused);
        assert_eq!(
            refused["error_code"], "INVALID_INPUT",
            "{transport:?}: {refused}"
        );
        assert_eq!(refused["field"], "tools", "{transport:?}: {refused}");

        let made_up = json!({"\u{0}parked": "0".repeat(32)});
        let refused = call(&conn.client, "mcp-tokens", made_up).await;
        let refused = structured(&refused);
        assert_eq!(
            refused["error_code"], "INVALID_INPUT",
            "{transport:?}: {refused}"
        );
        assert!(
            refused["message"]
                .as_str()
                .is_some_and(|m| m.contains("parked")),
            "{transport:?}: {refused}"
        );
    }
}

/// Most the server's peak memory may grow per byte of an `mcp-tokens` call's input.
/// Measured (debug build): 9.9x for one call, 13.3x over four (the heap's arenas
/// fragment). It was 20.5x before large arguments were parked past rmcp's parse
/// (`mcp_common::parked`), which buffered the message in a tree and cloned it.
const PEAK_PER_INPUT_BYTE: u64 = 16;

/// Most the server may hold after a large call, over what it held before: 17 MB
/// measured, the same after every further call (the allocator's arenas, grown once).
const HELD_AFTER: u64 = 24_000_000;
