//! Current models, end to end: the built binary over stdio, HTTP and stateless HTTP,
//! and the CLI. Claude by tokenizer generation, exact Gemini, the LiteLLM file and an
//! open-weight tokenizer.json as `--models-file`, and every tool taking every model.

use serde_json::{Value, json};
use test_support::fixtures::TINY_TOKENIZER;
use test_support::{ALL, Binary, call, structured};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// A folder with `models.json` naming `tokenizers/tiny.json` relatively, and a
/// LiteLLM-shaped file; removed when the test ends.
fn models_dir(name: &str) -> tempfile::TempDir {
    let scratch = tempfile::Builder::new()
        .prefix(&format!("context-loader-models-{name}-"))
        .tempdir()
        .expect("temp dir");
    let dir = scratch.path();
    std::fs::create_dir_all(dir.join("tokenizers")).expect("temp dir");
    std::fs::write(dir.join("tokenizers/tiny.json"), TINY_TOKENIZER).expect("write tokenizer");
    std::fs::write(
        dir.join("models.json"),
        r#"{"models": [
  {"name": "tiny-open-1b", "family": "tiny", "tokenizer": "huggingface",
   "tokenizer_file": "tokenizers/tiny.json", "context_window": 4096,
   "max_output_tokens": 512, "input_usd_per_mtok": 0.0, "output_usd_per_mtok": 0.0},
  {"name": "mystery-chat", "family": "mystery", "tokenizer": "estimate",
   "context_window": 8192}
]}"#,
    )
    .expect("write models file");
    std::fs::write(
        dir.join("litellm.json"),
        r#"{
  "sample_spec": {"max_input_tokens": "max input tokens, if the provider specifies it"},
  "claude-opus-9": {"litellm_provider": "anthropic", "mode": "chat", "max_input_tokens": 2000000,
    "max_output_tokens": 256000, "input_cost_per_token": 5e-06, "output_cost_per_token": 2.5e-05},
  "gemini/gemini-3.9-pro": {"litellm_provider": "gemini", "mode": "chat", "max_input_tokens": 2097152,
    "max_output_tokens": 65536, "input_cost_per_token": 2e-06, "output_cost_per_token": 1.2e-05},
  "bedrock/anthropic.claude-opus-9": {"litellm_provider": "bedrock", "mode": "chat", "max_input_tokens": 1}
}"#,
    )
    .expect("write litellm file");
    scratch
}

const PROSE: &str = "The library opened at nine every morning, and by a quarter past the \
    reading room was already full of students who had come early to claim the long tables.";

#[tokio::test]
async fn current_models_count_by_their_published_names() {
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let count = |model: &str| {
            let client = &conn.client;
            let model = model.to_string();
            async move {
                let result = call(
                    client,
                    "count-tokens",
                    json!({"text": PROSE, "model": model}),
                )
                .await;
                assert_ne!(result.is_error, Some(true), "{model}: {result:?}");
                structured(&result).clone()
            }
        };
        let gpt4o = count("gpt-4o").await;
        let old_claude = count("claude-sonnet-4-6").await;
        let new_claude = count("claude-opus-4-7").await;
        assert_eq!(old_claude["encoding"], "claude_estimate");
        assert_eq!(new_claude["encoding"], "claude_4_7_estimate");
        assert_eq!(new_claude["exact"], false);
        // The 4.7 tokenizer uses ~1.45x the tokens of 4.6 on English prose.
        let (old, new) = (
            old_claude["token_count"].as_u64().unwrap_or(0) as f64,
            new_claude["token_count"].as_u64().unwrap_or(0) as f64,
        );
        assert!(new >= old * 1.45, "{transport:?}: 4.7 {new} vs 4.6 {old}");
        for later in ["claude-opus-4-8", "claude-opus-5", "claude"] {
            assert_eq!(
                count(later).await["encoding"],
                "claude_4_7_estimate",
                "{later}"
            );
        }
        let gemini = count("gemini-2.5-pro").await;
        assert_eq!(gemini["encoding"], "gemma3");
        assert_eq!(gemini["exact"], true);
        assert!(
            gemini["method"]
                .as_str()
                .is_some_and(|m| m.contains("Gemma 3"))
        );
        assert_eq!(gemini["context_window"], 1048576);
        let gpt55 = count("gpt-5.5").await;
        assert_eq!(gpt55["encoding"], "o200k_base");
        assert_eq!(gpt55["token_count"], gpt4o["token_count"]);
        let grok = count("grok-4.3").await;
        assert_eq!(grok["encoding"], "estimate");
        assert_eq!(grok["exact"], false);
        assert!(
            grok["method"]
                .as_str()
                .is_some_and(|m| m.contains("not known"))
        );
        // The default model is still gpt-4.
        let default = call(&conn.client, "count-tokens", json!({"text": PROSE})).await;
        assert_eq!(structured(&default)["model"], "gpt-4");
    }
}

#[tokio::test]
async fn list_models_filters_current_families() {
    let conn = BIN.connect(test_support::Transport::Stdio, &[]).await;
    let listing = call(&conn.client, "list-models", json!({"filter": "gemini-2.5"})).await;
    let out = structured(&listing);
    let models = out["models"].as_array().expect("models");
    assert!(!models.is_empty());
    assert!(
        models
            .iter()
            .all(|m| m["encoding"] == "gemma3" && m["exact"] == true)
    );
    let claude = call(&conn.client, "list-models", json!({"filter": "claude-4.7"})).await;
    let names: Vec<&str> = structured(&claude)["models"]
        .as_array()
        .expect("models")
        .iter()
        .filter_map(|m| m["name"].as_str())
        .collect();
    assert_eq!(names, ["claude-opus-4-7"]);
    assert!(
        structured(&listing)["source"]
            .as_str()
            .is_some_and(|s| s.contains("LiteLLM"))
    );
}

#[tokio::test]
async fn a_models_file_with_a_tokenizer_json_counts_exactly_in_every_tool() {
    let scratch = models_dir("hf");
    let dir = scratch.path();
    let file = dir.join("models.json");
    let file = file.to_str().expect("utf-8 path");
    for transport in ALL {
        let conn = BIN.connect(transport, &["--models-file", file]).await;
        let count = call(
            &conn.client,
            "count-tokens",
            json!({"text": "a b <|eot|> a", "model": "tiny-open-1b"}),
        )
        .await;
        let out = structured(&count);
        assert_eq!(out["token_count"], 4, "{transport:?}: {out}");
        assert_eq!(out["exact"], true);
        assert_eq!(out["encoding"], "huggingface");
        assert!(
            out["method"]
                .as_str()
                .is_some_and(|m| m.contains("tiny.json"))
        );

        // `estimate` by name is the labelled estimate; without prices or an output
        // limit in the file, no cost is shown (never a made-up $0).
        let mystery = call(
            &conn.client,
            "count-tokens",
            json!({"text": "a b", "model": "mystery-chat"}),
        )
        .await;
        assert_ne!(mystery.is_error, Some(true));
        let out = structured(&mystery);
        assert_eq!(out["exact"], false);
        assert_eq!(out["encoding"], "estimate");
        assert_eq!(out["estimated_input_cost_usd"], Value::Null, "{out}");
        assert_eq!(out["max_output_tokens"], Value::Null, "{out}");
        for (tool, args) in [
            (
                "fit-messages",
                json!({"model": "mystery-chat", "messages": [{"role": "user", "content": "a"}]}),
            ),
            (
                "assemble-context",
                json!({"model": "mystery-chat", "sections": [{"name": "a", "content": "a"}]}),
            ),
        ] {
            let result = call(&conn.client, tool, args).await;
            let out = structured(&result);
            assert_ne!(result.is_error, Some(true), "{tool}: {out}");
            assert_eq!(out.get("estimated_input_cost_usd"), None, "{tool}: {out}");
        }
        let listed = call(&conn.client, "list-models", json!({"filter": "mystery"})).await;
        let row = &structured(&listed)["models"][0];
        assert_eq!(row["name"], "mystery-chat");
        assert_eq!(row.get("input_usd_per_mtok"), None, "{row}");

        let fit = call(
            &conn.client,
            "fit-messages",
            json!({"model": "tiny-open-1b", "messages": [
                {"role": "system", "content": "a b"},
                {"role": "user", "content": "a a a"}]}),
        )
        .await;
        let out = structured(&fit);
        assert_ne!(fit.is_error, Some(true), "{out}");
        assert_eq!(out["exact"], true);
        // 5 words + 5 per message x 2 + 5 for the reply.
        assert_eq!(out["total_tokens"], 20, "{out}");

        let assembled = call(
            &conn.client,
            "assemble-context",
            json!({"model": "tiny-open-1b", "budget": 6, "sections": [
                {"name": "task", "content": "a b a b a b a b a b"}]}),
        )
        .await;
        let out = structured(&assembled);
        assert_ne!(assembled.is_error, Some(true), "{out}");
        assert!(out["total_tokens"].as_u64() <= Some(6), "{out}");
    }
}

#[tokio::test]
async fn litellm_s_own_file_is_a_models_file() {
    let scratch = models_dir("litellm");
    let dir = scratch.path();
    let file = dir.join("litellm.json");
    let file = file.to_str().expect("utf-8 path");
    let conn = BIN
        .connect(test_support::Transport::Stdio, &["--models-file", file])
        .await;
    for (model, encoding, window) in [
        ("claude-opus-9", "claude_4_7_estimate", 2000000),
        ("gemini-3.9-pro", "gemma3", 2097152),
    ] {
        let result = call(
            &conn.client,
            "count-tokens",
            json!({"text": PROSE, "model": model}),
        )
        .await;
        let out = structured(&result);
        assert_eq!(out["encoding"], encoding, "{model}: {out}");
        assert_eq!(out["context_window"], window, "{model}");
    }
}

#[test]
fn bad_models_files_stop_startup_with_the_file_and_the_reason() {
    let scratch = models_dir("bad");
    let dir = scratch.path();
    std::fs::write(
        dir.join("missing.json"),
        r#"{"models": [{"name": "x", "family": "x", "tokenizer": "huggingface",
            "tokenizer_file": "nowhere/tokenizer.json", "context_window": 10,
            "max_output_tokens": 5, "input_usd_per_mtok": 0, "output_usd_per_mtok": 0}]}"#,
    )
    .expect("write");
    let missing = dir.join("missing.json");
    let (code, _, stderr) = BIN.run_cli(
        &[
            "--models-file",
            missing.to_str().expect("utf-8"),
            "count",
            "--model",
            "x",
        ],
        Some("a"),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("nowhere/tokenizer.json"), "{stderr}");

    std::fs::write(
        dir.join("bad-litellm.json"),
        r#"{"m": {"litellm_provider": "openai", "mode": "chat", "max_input_tokens": "lots"}}"#,
    )
    .expect("write");
    let bad = dir.join("bad-litellm.json");
    let (code, _, stderr) = BIN.run_cli(
        &["--models-file", bad.to_str().expect("utf-8"), "models"],
        None,
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("line 1, column"), "{stderr}");
    assert!(stderr.contains("m.max_input_tokens"), "{stderr}");

    // Issue 23: a misspelt tokenizer was a silent ×1.5 estimate; now it stops
    // start-up with the closest known name.
    std::fs::write(
        dir.join("typo.json"),
        r#"{"models": [{"name": "acme", "family": "acme", "tokenizer": "cl100k-base",
            "context_window": 1000}]}"#,
    )
    .expect("write");
    let typo = dir.join("typo.json");
    let (code, _, stderr) = BIN.run_cli(
        &["--models-file", typo.to_str().expect("utf-8"), "models"],
        None,
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("tokenizer `cl100k-base` is not known (did you mean `cl100k_base`?)"),
        "{stderr}"
    );
}

/// spec-tokens and spec-budget on this repository's own specs, for a model of each new
/// family: the breakdown still adds up exactly, and the response says which tokenizer.
#[tokio::test]
async fn spec_tools_take_every_family() {
    let scratch = models_dir("specs");
    let dir = scratch.path();
    let file = dir.join("models.json");
    let specs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs");
    let conn = BIN
        .connect(
            test_support::Transport::Stdio,
            &[
                "--specs-dir",
                specs,
                "--models-file",
                file.to_str().expect("utf-8"),
            ],
        )
        .await;
    let mut totals = Vec::new();
    for (model, encoding, exact) in [
        ("gpt-4o", "o200k_base", true),
        ("gemini-2.5-pro", "gemma3", true),
        ("claude-sonnet-4-6", "claude_estimate", false),
        ("claude-opus-4-7", "claude_4_7_estimate", false),
        ("tiny-open-1b", "huggingface", true),
        ("mistral-large-3", "estimate", false),
    ] {
        let result = call(
            &conn.client,
            "spec-tokens",
            json!({"specPath": "1", "detailed": true, "model": model}),
        )
        .await;
        assert_eq!(result.is_error, Some(false), "{model}: {result:?}");
        let r = structured(&result);
        assert_eq!(
            (&r["encoding"], &r["exact"]),
            (&json!(encoding), &json!(exact)),
            "{model}"
        );
        let b = &r["breakdown"];
        let parts: u64 = ["prose", "code", "tables", "frontmatter"]
            .iter()
            .map(|k| b[k].as_u64().expect("number"))
            .sum();
        assert_eq!(
            json!(parts),
            r["total"],
            "{model}: breakdown adds up to the total"
        );
        totals.push(r["total"].as_u64().unwrap_or(0));

        let budget = call(
            &conn.client,
            "spec-budget",
            json!({"specs": ["1", "2"], "budget": 100000, "model": model}),
        )
        .await;
        assert_eq!(budget.is_error, Some(false), "{model}: {budget:?}");
        assert_eq!(structured(&budget)["encoding"], encoding, "{model}");
    }
    // Claude 4.7+ counts the same English spec well above Claude 4.6.
    assert!(totals[3] as f64 >= totals[2] as f64 * 1.4, "{totals:?}");
}

#[test]
fn the_cli_counts_gemini_exactly() {
    let (code, stdout, stderr) = BIN.run_cli(
        &["count", "--model", "gemini-2.5-pro", "--json"],
        Some("hello world"),
    );
    assert_eq!(code, 0, "{stderr}");
    let out: Value = serde_json::from_str(&stdout).expect("json");
    // sentencepiece: "hello", "▁world".
    assert_eq!(out["token_count"], 2);
    assert_eq!(out["exact"], true);
}

/// Issue 39: a name the catalog resolves to another (a dated snapshot) is never a
/// silent swap: every tool that takes a model shows both names.
#[tokio::test]
async fn every_tool_shows_the_name_asked_for_beside_the_model_used() {
    let tree = test_support::TempTree::new("cl-models-requested");
    tree.write("root/a.md", "Measure before loading.\n");
    tree.write("specs/001-plan/README.md", "# Plan\n\nMeasure first.\n");
    let dated = "claude-sonnet-4-5-20250929";
    let root = tree.path().join("root").display().to_string();
    let specs = tree.path().join("specs").display().to_string();
    let calls = [
        ("count-tokens", json!({"text": "hi", "model": dated})),
        ("file-tokens", json!({"model": dated})),
        ("load-files", json!({"model": dated})),
        ("spec-tokens", json!({"model": dated})),
        (
            "spec-budget",
            json!({"specs": ["1"], "budget": 1000, "model": dated}),
        ),
        (
            "fit-messages",
            json!({"messages": [{"role": "user", "content": "hi"}], "model": dated}),
        ),
        (
            "assemble-context",
            json!({"sections": [{"name": "a", "content": "hi"}], "model": dated}),
        ),
    ];
    for transport in ALL {
        let conn = BIN
            .connect(transport, &["--root", &root, "--specs-dir", &specs])
            .await;
        for (tool, args) in &calls {
            let result = call(&conn.client, tool, args.clone()).await;
            let answer = structured(&result);
            assert_eq!(answer["model"], "claude-sonnet-4-5", "{tool}: {answer}");
            assert_eq!(answer["requested_model"], dated, "{tool}: {answer}");
        }
        // Asked by its own name, the answer holds one name.
        let plain = call(
            &conn.client,
            "load-files",
            json!({"model": "claude-sonnet-4-5"}),
        )
        .await;
        assert!(structured(&plain).get("requested_model").is_none());
    }
}
