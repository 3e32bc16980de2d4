//! Hostile texts for the families whose count used to run whole: an open-weight
//! `tokenizer.json` (counted by `encode_fast` in one go: 300-400 bytes of memory per
//! byte of text, and no way to stop it) and Gemini on a run of letters with no
//! space or newline (one SentencePiece BPE run of seconds). Against the built binary
//! over loopback HTTP, a fresh server per test: peak memory from VmHWM, CPU from
//! /proc/PID/stat after the request is given up. Every test stops by itself.

use std::time::Duration;

use serde_json::{Value, json};
use test_support::fixtures::BYTE_LEVEL_TOKENIZER;
use test_support::http1::{authority, post_mcp, request};
use test_support::process::{assert_cpu_settles_within, peak_rss_bytes};
use test_support::{Binary, TempTree};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

fn count_call(text: &str, model: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "count-tokens", "arguments": {"text": text, "model": model}}})
    .to_string()
    .into_bytes()
}

/// A folder with a byte-level BPE tokenizer.json shaped like Qwen3's (NFC, its
/// regex split with single digits, byte-level alphabet, added tokens) and a models
/// file declaring it as `open-bpe-1b`.
fn models_dir(name: &str) -> TempTree {
    let dir = TempTree::new(&format!("cl-abuse-tok-{name}"));
    dir.write("tokenizer.json", BYTE_LEVEL_TOKENIZER);
    dir.write(
        "models.json",
        r#"{"models": [{"name": "open-bpe-1b", "family": "open-bpe",
            "tokenizer": "huggingface", "tokenizer_file": "tokenizer.json",
            "context_window": 131072, "max_output_tokens": 4096,
            "input_usd_per_mtok": 0.0, "output_usd_per_mtok": 0.0}]}"#,
    );
    dir
}

/// The issue's row: 8 MiB of digits with Qwen3's tokenizer.json took 3.1 GB (every
/// digit a piece, a string and a token object in `encode_fast`). Now counted piece
/// by piece: the count is the library's, and the peak is a small multiple of the
/// request over what the server held before it.
#[tokio::test]
async fn a_tokenizer_json_counts_megabytes_of_digits_exactly_in_bounded_memory() {
    let dir = models_dir("memory");
    let models = dir.join("models.json").to_string_lossy().into_owned();
    let (server, url) = BIN
        .spawn_http(
            &["--models-file", &models],
            &["--stateless", "--max-body-bytes", "40000000"],
        )
        .await;
    let pid = server.id().expect("pid");
    let addr = authority(&url);
    // Warm: the tokenizer.json loaded and one small count served.
    let warm = post_mcp(&addr, &[], &count_call("12 the", "open-bpe-1b")).await;
    assert_eq!(warm.status, 200, "{warm:?}");
    let baseline = peak_rss_bytes(pid);

    let text = "1234567890".repeat(400_000) + "<|im_start|> the end";
    let expected = context_budget::HuggingFaceTokenizer::from_file(&dir.join("tokenizer.json"))
        .expect("loads")
        .count_whole(&text);
    let reply = post_mcp(&addr, &[], &count_call(&text, "open-bpe-1b")).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let body: Value = reply.json();
    assert_eq!(
        body["result"]["structuredContent"]["token_count"], expected,
        "{body}"
    );
    // The request body, its parsed value and the typed copy are ~3x the text; the
    // count itself adds a few buffers. Before: ~350x (1.4 GB for these 4 MB).
    let grown = peak_rss_bytes(pid).saturating_sub(baseline);
    let bound = 20 * text.len() as u64 + 32 * 1024 * 1024;
    assert!(
        grown <= bound,
        "peak grew by {} MB for a {} MB text (bound {} MB)",
        grown >> 20,
        text.len() >> 20,
        bound >> 20
    );
    drop(server);
}

/// Give up the request at `--request-timeout`; from then the server's CPU must settle
/// within a second of CPU time (before: the count ran on to its end, seconds more).
/// CPU time, not a wall-clock window: a loaded machine stretches the stop in wall time.
async fn assert_cpu_stops_after_timeout(global: &[&str], text: &str, model: &str) {
    let (server, url) = BIN
        .spawn_http(
            global,
            &[
                "--stateless",
                "--max-body-bytes",
                "40000000",
                "--request-timeout",
                "1",
            ],
        )
        .await;
    let pid = server.id().expect("pid");
    let addr = authority(&url);
    // Warm: the vocabulary loaded (in a debug build that can outlast the timeout;
    // the load finishes regardless, so ask again).
    let mut warm = post_mcp(&addr, &[], &count_call("warm up", model)).await;
    for _ in 0..30 {
        if warm.status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        warm = post_mcp(&addr, &[], &count_call("warm up", model)).await;
    }
    assert_eq!(warm.status, 200, "{warm:?}");
    let reply = post_mcp(&addr, &[], &count_call(text, model)).await;
    assert_eq!(
        reply.status, 408,
        "the count must outlast the timeout: {reply:?}"
    );
    // The flag is seen within 64 KiB of text or 8k merges.
    let what = format!("{model} after its request timed out");
    assert_cpu_settles_within(pid, &what, 1.0).await;
    assert_eq!(
        request(&addr, "GET", "/healthz", &[], b"").await.status,
        200
    );
    drop(server);
}

/// The issue's row: a count with a tokenizer.json could not be stopped (7-14 s of
/// CPU for 8 MiB whatever the client did). Now it stops within 64 KiB of text.
#[tokio::test]
async fn a_timed_out_tokenizer_json_count_stops_its_cpu() {
    let dir = models_dir("cancel");
    let models = dir.join("models.json").to_string_lossy().into_owned();
    // Digits and code points from every plane: short pieces, megabytes of them.
    let mut seed = 5u64;
    let mixed: String = std::iter::from_fn(|| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        char::from_u32(((seed >> 33) % 0x11_0000) as u32)
    })
    .take(400_000)
    .collect();
    let text = "7".repeat(6 << 20) + &mixed;
    assert_cpu_stops_after_timeout(&["--models-file", &models], &text, "open-bpe-1b").await;
}

/// The issue's row: gemini-2.5-pro on random lowercase (no space, no newline: no
/// cut, one BPE run) kept 3-9.6 s of CPU after a cancel. Now the run looks at the
/// flag every 8k merges.
#[tokio::test]
async fn a_timed_out_gemini_count_of_one_long_run_stops_its_cpu() {
    let mut seed = 3u64;
    let text: String = (0..1_500_000)
        .map(|_| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            char::from(b'a' + ((seed >> 33) % 26) as u8)
        })
        .collect();
    assert_cpu_stops_after_timeout(&[], &text, "gemini-2.5-pro").await;
}
