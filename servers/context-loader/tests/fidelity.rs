//! What the source documents ask of the protocol side (issue 13): unknown argument
//! names refused by every tool, MCP logging, over stdio and streamable HTTP (stateful
//! and stateless), and the CLI where it applies.

use serde_json::json;
use test_support::{ALL, Binary, call, structured};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));
/// This repository's own specs.
const SPECS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs");

/// A misspelt argument must not silently fall back to its default
/// (`{"text":"hi","modle":"gpt-4o"}` used to count with gpt-4).
#[tokio::test]
async fn every_tool_refuses_unknown_argument_names_with_did_you_mean() {
    let cases = [
        (
            "count-tokens",
            json!({"text": "hi", "modle": "gpt-4o"}),
            "model",
        ),
        ("list-models", json!({"filtr": "gpt"}), "filter"),
        (
            "spec-tokens",
            json!({"includeSubspecs": true}),
            "includeSubSpecs",
        ),
        (
            "spec-budget",
            json!({"specs": ["1"], "budgte": 10}),
            "budget",
        ),
        (
            "fit-messages",
            json!({"messages": [], "reserve_output_token": 5}),
            "reserve_output_tokens",
        ),
        (
            "assemble-context",
            json!({"sections": [], "budget": 10, "modle": "gpt-4o"}),
            "model",
        ),
    ];
    for transport in ALL {
        let conn = BIN.connect(transport, &["--specs-dir", SPECS]).await;
        for (tool, args, meant) in &cases {
            let result = call(&conn.client, tool, args.clone()).await;
            assert_eq!(result.is_error, Some(true), "{transport:?} {tool}");
            let error = structured(&result);
            assert_eq!(error["error_code"], "INVALID_INPUT", "{transport:?} {tool}");
            assert_eq!(
                error["did_you_mean"], *meant,
                "{transport:?} {tool}: {error}"
            );
            assert!(
                error["suggestion"]
                    .as_str()
                    .is_some_and(|s| s.starts_with(&format!("Did you mean `{meant}`?"))),
                "{transport:?} {tool}: {error}"
            );
        }
        // Aliases the tools document stay accepted.
        let alias = call(&conn.client, "spec-tokens", json!({"spec": "1"})).await;
        assert_eq!(alias.is_error, Some(false), "{transport:?}");
        // A hostile name is cut, not echoed back whole.
        let long = "k".repeat(20_000);
        let result = call(&conn.client, "count-tokens", json!({"text": "hi", long: 1})).await;
        let error = structured(&result);
        assert_eq!(error["error_code"], "INVALID_INPUT");
        assert!(error["message"].as_str().is_some_and(|m| m.len() < 200));
    }
}

#[test]
fn cli_refuses_unknown_flags_with_the_close_one() {
    let (code, _, err) = BIN.run_cli(&["count", "--modle", "gpt-4o", "hi"], None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--model"), "{err}");
}
