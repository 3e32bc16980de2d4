//! End-to-end: the built `context-loader` binary, spoken to by rmcp's own client over
//! stdio and over streamable HTTP (stateful and stateless), plus raw JSON-RPC probes
//! and the CLI. Nothing of ours is mocked.

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use test_support::client::initialize_request;
use test_support::{ALL, Binary, TempTree, Transport, call, http1, structured, text_json};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

#[tokio::test]
async fn initialize_reports_server_and_tool_capability() {
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let info = conn.client.peer_info().expect("initialize result");
        let server = info.server_info.as_ref().expect("serverInfo");
        assert_eq!(server.name, "context-loader", "{transport:?}");
        assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
        assert!(
            info.capabilities.tools.is_some(),
            "{transport:?} must advertise tools"
        );
        assert!(
            info.instructions
                .as_deref()
                .unwrap_or_default()
                .contains("count-tokens")
        );
    }
}

#[tokio::test]
async fn tools_list_has_valid_schemas_and_read_only_annotations() {
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let mut tools = conn.client.list_all_tools().await.expect("tools/list");
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
        // The registered tools, not a list kept by hand (issue 38).
        let mut registered: Vec<_> = context_loader::tools::commands()
            .into_iter()
            .map(|(name, _)| name.to_string())
            .collect();
        registered.sort();
        assert_eq!(names, registered, "{transport:?}");
        for tool in &tools {
            let input = Value::Object((*tool.input_schema).clone());
            assert_eq!(input["type"], "object", "{} input schema", tool.name);
            let output =
                Value::Object((**tool.output_schema.as_ref().expect("output schema")).clone());
            assert_eq!(output["type"], "object", "{} output schema", tool.name);
            assert!(
                tool.description.as_deref().unwrap_or_default().len() > 40,
                "{} needs a description",
                tool.name
            );
            let annotations = tool.annotations.as_ref().expect("annotations");
            assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
            assert_eq!(annotations.idempotent_hint, Some(true), "{}", tool.name);
            assert_eq!(annotations.destructive_hint, Some(false), "{}", tool.name);
        }
        let count = tools
            .iter()
            .find(|t| t.name == "count-tokens")
            .expect("count-tokens");
        let input = Value::Object((*count.input_schema).clone());
        assert_eq!(input["required"], json!(["text"]));
        assert!(input["properties"]["model"].is_object());
        let output = Value::Object((**count.output_schema.as_ref().expect("schema")).clone());
        for field in [
            "token_count",
            "model",
            "encoding",
            "exact",
            "context_window",
        ] {
            assert!(
                output["properties"][field].is_object(),
                "output schema lacks {field}"
            );
        }
    }
}

#[tokio::test]
async fn count_tokens_counts_exactly_for_openai_and_flags_claude_estimates() {
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let c = &conn.client;

        let default = call(c, "count-tokens", json!({"text": "hello world"})).await;
        assert_eq!(default.is_error, Some(false));
        let value = structured(&default);
        assert_eq!(value["token_count"], 2);
        assert_eq!(value["model"], "gpt-4");
        assert_eq!(value["encoding"], "cl100k_base");
        assert_eq!(value["exact"], true);
        assert_eq!(value["context_window"], 8192);
        assert_eq!(
            &text_json(&default),
            value,
            "text and structuredContent agree"
        );

        // A dated id reports the model actually used, and its encoding matters:
        // the same Korean text is 4 o200k tokens but 10 cl100k tokens.
        let dated = call(
            c,
            "count-tokens",
            json!({"text": "안녕하세요, 세계", "model": "gpt-4o-2024-08-06"}),
        )
        .await;
        assert_eq!(structured(&dated)["model"], "gpt-4o");
        assert_eq!(structured(&dated)["encoding"], "o200k_base");
        assert_eq!(structured(&dated)["token_count"], 4);

        let cl100k = call(
            c,
            "count-tokens",
            json!({"text": "안녕하세요, 세계", "model": "cl100k_base"}),
        )
        .await;
        assert_eq!(structured(&cl100k)["token_count"], 10);
        assert_eq!(structured(&cl100k)["context_window"], Value::Null);

        let claude = call(
            c,
            "count-tokens",
            json!({"text": "hello world", "model": "claude-sonnet-4-5-20250929"}),
        )
        .await;
        let value = structured(&claude);
        assert_eq!(value["model"], "claude-sonnet-4-5");
        assert_eq!(value["exact"], false);
        assert!(
            value["method"]
                .as_str()
                .unwrap_or_default()
                .starts_with("estimate")
        );
        // 2 o200k tokens x 1.10, rounded up: never fewer than the o200k count.
        assert_eq!(value["token_count"], 3);

        // Special-token text is ordinary text: counted, never an error.
        let special = call(c, "count-tokens", json!({"text": "<|endoftext|>"})).await;
        assert_eq!(special.is_error, Some(false));
        assert_eq!(structured(&special)["token_count"], 7);
    }
}

#[tokio::test]
async fn empty_text_is_zero_tokens() {
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        for model in ["gpt-4", "gpt-4o", "claude"] {
            let result = call(
                &conn.client,
                "count-tokens",
                json!({"text": "", "model": model}),
            )
            .await;
            assert_eq!(result.is_error, Some(false), "{transport:?} {model}");
            assert_eq!(
                structured(&result)["token_count"],
                0,
                "{transport:?} {model}"
            );
        }
    }
}

#[tokio::test]
async fn unsupported_model_is_a_structured_tool_error() {
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let result = call(
            &conn.client,
            "count-tokens",
            json!({"text": "hi", "model": "gpt4o"}),
        )
        .await;
        assert_eq!(result.is_error, Some(true), "{transport:?}");
        let error = structured(&result);
        assert_eq!(error["error_code"], "UNSUPPORTED_MODEL");
        assert!(
            error["message"]
                .as_str()
                .unwrap_or_default()
                .contains("gpt4o")
        );
        assert!(
            error["suggestion"]
                .as_str()
                .unwrap_or_default()
                .contains("gpt-4"),
            "names the default"
        );
        assert_eq!(error["did_you_mean"][0], "gpt-4o");
        // Issue 39: the nearest names and a pointer to list-models, not the catalog
        // (5,672 characters, ~2,300 tokens for one typo).
        assert!(error.get("available_options").is_none(), "{error}");
        assert!(error["did_you_mean"].as_array().expect("names").len() <= 5);
        assert!(
            error["suggestion"]
                .as_str()
                .unwrap_or_default()
                .contains("list-models")
        );
        assert!(
            text_json(&result).to_string().chars().count() <= 1_000,
            "{error}"
        );
        assert_eq!(
            &text_json(&result),
            error,
            "text and structuredContent agree"
        );
    }
}

#[tokio::test]
async fn bad_arguments_are_invalid_input_results() {
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let missing = call(&conn.client, "count-tokens", json!({"model": "gpt-4"})).await;
        assert_eq!(missing.is_error, Some(true));
        assert_eq!(structured(&missing)["error_code"], "INVALID_INPUT");
        assert!(
            structured(&missing)["message"]
                .as_str()
                .unwrap_or_default()
                .contains("`text`")
        );
        let mistyped = call(
            &conn.client,
            "count-tokens",
            json!({"text": ["not", "a", "string"]}),
        )
        .await;
        assert_eq!(structured(&mistyped)["error_code"], "INVALID_INPUT");
        // The server is still serving after bad input.
        let ok = call(&conn.client, "count-tokens", json!({"text": "still up"})).await;
        assert_eq!(ok.is_error, Some(false));
    }
}

#[tokio::test]
async fn oversize_text_is_refused_with_input_too_large() {
    for transport in ALL {
        let conn = BIN.connect(transport, &["--max-input-bytes", "1000"]).await;
        let fits = call(
            &conn.client,
            "count-tokens",
            json!({"text": "a".repeat(1000)}),
        )
        .await;
        assert_eq!(fits.is_error, Some(false));
        let result = call(
            &conn.client,
            "count-tokens",
            json!({"text": "a".repeat(1001)}),
        )
        .await;
        assert_eq!(result.is_error, Some(true));
        let error = structured(&result);
        assert_eq!(error["error_code"], "INPUT_TOO_LARGE");
        assert_eq!(
            (error["input_bytes"].clone(), error["limit_bytes"].clone()),
            (json!(1001), json!(1000))
        );
    }
}

#[tokio::test]
async fn unknown_tool_is_a_json_rpc_error() {
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let outcome = conn
            .client
            .call_tool(CallToolRequestParams::new("no-such-tool"))
            .await;
        let error =
            outcome.expect_err("an unknown tool is a protocol error (-32602), per the MCP spec");
        assert!(error.to_string().contains("tool not found"), "{error}");
    }
}

#[tokio::test]
async fn list_models_filters_by_family() {
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let result = call(&conn.client, "list-models", json!({"filter": "claude-4.5"})).await;
        let listing = structured(&result);
        let names: Vec<&str> = listing["models"]
            .as_array()
            .expect("models")
            .iter()
            .filter_map(|m| m["name"].as_str())
            .collect();
        assert_eq!(
            names,
            ["claude-haiku-4-5", "claude-opus-4-5", "claude-sonnet-4-5"]
        );
        assert_eq!(listing["count"], 3);
        assert_eq!(listing["models"][0]["exact"], false);
        assert_eq!(listing["models"][0]["input_usd_per_mtok"], 1.0); // claude-haiku-4-5
        assert!(listing["as_of"].as_str().is_some_and(|d| d.len() == 10));
        let all = call(&conn.client, "list-models", json!({})).await;
        assert!(structured(&all)["count"].as_u64().unwrap_or_default() >= 30);
    }
}

/// The same calls over every transport give byte-identical results.
#[tokio::test]
async fn transports_return_identical_results() {
    let calls = [
        (
            "count-tokens",
            json!({"text": "The quick brown fox 🦊 — 빠른 갈색 여우", "model": "gpt-4o"}),
        ),
        (
            "count-tokens",
            json!({"text": "fn main() {}\n", "model": "claude-haiku-4-5"}),
        ),
        ("count-tokens", json!({"text": "x", "model": "nope"})),
        ("count-tokens", json!({})),
        ("list-models", json!({"filter": "gpt-5"})),
    ];
    let mut outputs: Vec<Vec<Value>> = Vec::new();
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let mut results = Vec::new();
        for (tool, args) in &calls {
            let result = call(&conn.client, tool, args.clone()).await;
            results.push(serde_json::to_value(&result).expect("serialize result"));
        }
        outputs.push(results);
    }
    assert_eq!(outputs[0], outputs[1], "stdio vs http");
    assert_eq!(outputs[0], outputs[2], "stdio vs stateless http");
}

/// A client probing before `initialize` (e.g. `server/discover` from a 2026-07-28
/// client, or any unknown method) gets a JSON-RPC error at once, and the session can
/// still initialize afterwards.
#[tokio::test]
async fn stdio_answers_probes_before_initialize() {
    let mut server = BIN.raw_stdio();
    let discover = server
        .exchange(&json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}))
        .await;
    assert_eq!(discover["id"], 1);
    assert!(discover["error"]["code"].is_i64(), "{discover}");
    let unknown = server
        .exchange(&json!({"jsonrpc": "2.0", "id": 2, "method": "made/up", "params": {}}))
        .await;
    assert_eq!(unknown["id"], 2);
    assert!(unknown["error"]["code"].is_i64(), "{unknown}");
    let init = server.exchange(&json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}}))
    .await;
    assert_eq!(
        init["result"]["serverInfo"]["name"], "context-loader",
        "{init}"
    );
}

/// `context-loader count --json` prints exactly the structuredContent of the tool.
#[tokio::test]
async fn cli_count_matches_the_tool() {
    let conn = BIN.connect(Transport::Stdio, &[]).await;
    let text = "Counting the same text three ways.\n";
    let tool = call(
        &conn.client,
        "count-tokens",
        json!({"text": text, "model": "o3"}),
    )
    .await;

    let (code, out, _) = BIN.run_cli(&["count", "--model", "o3", "--json", text], None);
    assert_eq!(code, 0);
    assert_eq!(
        &serde_json::from_str::<Value>(&out).expect("json"),
        structured(&tool)
    );

    let (code, out, _) = BIN.run_cli(&["count", "--model", "o3", "--json"], Some(text));
    assert_eq!(code, 0);
    assert_eq!(
        &serde_json::from_str::<Value>(&out).expect("json"),
        structured(&tool),
        "stdin"
    );

    let scratch = TempTree::new("cl-e2e-count");
    let file = scratch.write("text.txt", text);
    let (code, out, _) = BIN.run_cli(
        &[
            "count",
            "-m",
            "o3",
            "--json",
            "--file",
            file.to_str().expect("path"),
        ],
        None,
    );
    assert_eq!(code, 0);
    assert_eq!(
        &serde_json::from_str::<Value>(&out).expect("json"),
        structured(&tool),
        "file"
    );

    let (code, out, _) = BIN.run_cli(&["count", "hello world"], None);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("2 tokens (gpt-4, cl100k_base, exact)"),
        "{out}"
    );
}

#[test]
fn cli_errors_exit_non_zero_with_the_structured_error() {
    let (code, out, _) = BIN.run_cli(&["count", "--model", "nope", "--json", "hi"], None);
    assert_eq!(code, 1);
    let error: Value = serde_json::from_str(&out).expect("error json");
    assert_eq!(error["error_code"], "UNSUPPORTED_MODEL");

    let (code, _, err) = BIN.run_cli(&["count", "--model", "nope", "hi"], None);
    assert_eq!(code, 1);
    assert!(
        err.contains("UNSUPPORTED_MODEL") && err.contains("suggestion:"),
        "{err}"
    );

    let (code, out, _) = BIN.run_cli(
        &["--max-input-bytes", "4", "count", "--json"],
        Some("hello"),
    );
    assert_eq!(code, 1);
    assert_eq!(
        serde_json::from_str::<Value>(&out).expect("json")["error_code"],
        "INPUT_TOO_LARGE"
    );

    let (code, out, _) = BIN.run_cli(
        &["count", "--json", "--file", "/nonexistent/file.txt"],
        None,
    );
    assert_eq!(code, 1);
    assert_eq!(
        serde_json::from_str::<Value>(&out).expect("json")["error_code"],
        "INVALID_INPUT"
    );

    let (code, out, _) = BIN.run_cli(&["models", "gpt-4.1", "--json"], None);
    assert_eq!(code, 0);
    assert_eq!(
        serde_json::from_str::<Value>(&out).expect("json")["count"],
        3
    );
}

#[tokio::test]
async fn http_refuses_foreign_host_headers() {
    let (_server, url) = BIN.spawn_http(&[], &[]).await;
    let addr = http1::authority(&url);
    let body = serde_json::to_vec(&initialize_request("x")).expect("json");
    let reply = http1::request_with_host(&addr, "evil.example", "POST", "/mcp", &[], &body).await;
    assert_eq!(reply.status, 403, "DNS-rebinding protection: {reply:?}");
}

/// Issue 23: model names mean what they say, over every transport.
#[tokio::test]
async fn model_names_that_cross_into_another_model_or_are_empty_are_refused() {
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        // `gpt-4-o` was counted as gpt-4 (cl100k, 8K window) through the prefix rule.
        let crossed = call(
            &conn.client,
            "count-tokens",
            json!({"text": "hi", "model": "gpt-4-o"}),
        )
        .await;
        let error = structured(&crossed);
        assert_eq!(error["error_code"], "UNSUPPORTED_MODEL", "{transport:?}");
        assert_eq!(error["did_you_mean"][0], "gpt-4o", "{error}");
        // A dated id still resolves to its model.
        let dated = call(
            &conn.client,
            "count-tokens",
            json!({"text": "hi", "model": "gpt-4o-2024-08-06"}),
        )
        .await;
        assert_eq!(structured(&dated)["model"], "gpt-4o");
        for (typo, meant) in [
            ("claude-sonet-4-5", "claude-sonnet-4-5"),
            ("claude-3.5-sonnet", "claude-3-5-sonnet"),
            ("claude-sonnet-4.5", "claude-sonnet-4-5"),
        ] {
            let result = call(
                &conn.client,
                "count-tokens",
                json!({"text": "hi", "model": typo}),
            )
            .await;
            assert_eq!(
                structured(&result)["did_you_mean"][0],
                meant,
                "{transport:?} {typo}"
            );
        }
        // An empty name is said to be empty, not answered with "did you mean o1".
        let empty = call(
            &conn.client,
            "count-tokens",
            json!({"text": "hi", "model": ""}),
        )
        .await;
        let error = structured(&empty);
        assert_eq!(error["error_code"], "INVALID_INPUT", "{error}");
        assert_eq!(error["message"], "`model` is empty");
        assert_eq!(error.get("did_you_mean"), None);
    }
    let (code, _, err) = BIN.run_cli(&["count", "--model", "", "hi"], None);
    assert_eq!(code, 1);
    assert!(err.contains("`model` is empty"), "{err}");
}

/// Issue 23: a value of the wrong type names its field (docs/tools.md promises it).
#[tokio::test]
async fn a_mistyped_argument_names_its_field() {
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let result = call(
            &conn.client,
            "assemble-context",
            json!({"budget": -5, "sections": []}),
        )
        .await;
        let error = structured(&result);
        assert_eq!(error["error_code"], "INVALID_INPUT");
        assert_eq!(error["field"], "budget", "{transport:?}: {error}");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("`budget`: invalid value: integer `-5`")),
            "{error}"
        );
    }
}

/// Issue 23: a 9.6 MB file was reported as "8388609 bytes" (what the reader took).
#[test]
fn an_oversize_input_is_reported_as_measured_or_as_over_the_limit() {
    let scratch = TempTree::new("cl-oversize");
    let size = 9_600_000;
    let path = scratch.write("big.txt", "a".repeat(size));
    let (code, out, _) = BIN.run_cli(
        &["count", "--json", "--file", path.to_str().expect("path")],
        None,
    );
    assert_eq!(code, 1);
    let error: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(error["error_code"], "INPUT_TOO_LARGE");
    assert_eq!(error["input_bytes"], size, "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.starts_with(&format!("text is {size} bytes"))),
        "{error}"
    );
    // Stdin's size is not measured: "over" the limit, never the limit + 1.
    let (code, out, _) = BIN.run_cli(
        &["--max-input-bytes", "4", "count", "--json"],
        Some("hello"),
    );
    assert_eq!(code, 1);
    let error: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(error["error_code"], "INPUT_TOO_LARGE");
    assert_eq!(error.get("input_bytes"), None, "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("text is over 4 bytes")),
        "{error}"
    );
}
