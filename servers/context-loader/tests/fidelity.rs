//! What the source documents ask of the protocol side (issue 13): unknown argument
//! names refused by every tool, MCP logging, over stdio and streamable HTTP (stateful
//! and stateless), and the CLI where it applies.

#![allow(deprecated)] // rmcp marks MCP logging deprecated (SEP-2577); the protocol we serve has it.

use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::{NotificationContext, RoleClient};
use serde_json::json;
use test_support::anthropic::{FakeAnthropic, Reply};
use test_support::{ALL, Binary, TempTree, Transport, call, structured};

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
        // spec-tokens' schema (`additionalProperties: false`) lists no aliases, so the
        // tool takes none: an alias is an unknown argument pointing at the real name.
        for (alias, meant) in [
            ("spec_path", "specPath"),
            ("include_sub_specs", "includeSubSpecs"),
            ("maxTokens", "max_tokens"),
            ("minTokens", "min_tokens"),
        ] {
            let result = call(&conn.client, "spec-tokens", json!({ alias: 1 })).await;
            assert_eq!(result.is_error, Some(true), "{transport:?} {alias}");
            let error = structured(&result);
            assert_eq!(
                error["error_code"], "INVALID_INPUT",
                "{transport:?} {alias}"
            );
            assert_eq!(
                error["did_you_mean"], meant,
                "{transport:?} {alias}: {error}"
            );
        }
        let spec = call(&conn.client, "spec-tokens", json!({"spec": "1"})).await;
        assert_eq!(
            spec.is_error,
            Some(true),
            "{transport:?}: `spec` is not an argument"
        );
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

/// A client that keeps every `notifications/message` it is sent.
#[derive(Clone, Default)]
struct LogRecorder(Arc<Mutex<Vec<LoggingMessageNotificationParam>>>);

impl ClientHandler for LogRecorder {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().expect("lock").push(params);
    }
}

impl LogRecorder {
    fn take(&self) -> Vec<LoggingMessageNotificationParam> {
        std::mem::take(&mut *self.0.lock().expect("lock"))
    }
}

/// A server on `transport` with exact Claude counting against `fake`, and a client
/// that records its log messages.
async fn logged(
    transport: Transport,
    args: &[&str],
    fake: &FakeAnthropic,
) -> (LogRecorder, test_support::Connection<LogRecorder>) {
    let recorder = LogRecorder::default();
    let conn = BIN
        .connect_as(recorder.clone(), transport, args, &fake.server_env())
        .await;
    (recorder, conn)
}

/// A specs root with one good spec and one without a README, removed on drop.
fn broken_specs(tag: &str) -> TempTree {
    let specs = TempTree::new(&format!("cl-fidelity-{tag}"));
    specs.write("001-fine/README.md", "---\nstatus: planned\n---\n# Fine\n");
    specs.write("002-broken/DESIGN.md", "# Only a design\n");
    specs
}

/// `logging` is declared; `logging/setLevel` is honoured; warnings in a result (a
/// broken spec in a listing, an exact-count fallback) reach the client as
/// `notifications/message` before the result, on every transport. Stateless HTTP
/// has no session, so a level set there lasts for that one request only.
#[tokio::test]
async fn warnings_reach_the_client_as_log_messages_at_the_level_it_set() {
    let specs = broken_specs("log");
    let fake = FakeAnthropic::start(Reply::Status(503)).await;
    for transport in ALL {
        let (recorder, conn) = logged(transport, &["--specs-dir", specs.arg()], &fake).await;
        let client = &conn.client;
        let info = client.peer_info().expect("initialize result");
        assert!(info.capabilities.logging.is_some(), "{transport:?}");
        // Stateless HTTP has no session: a level set by one request is gone by the next.
        let remembers_level = !matches!(transport, Transport::HttpStateless);

        client
            .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
            .await
            .expect("logging/setLevel is answered");
        let listing = call(client, "spec-tokens", json!({})).await;
        let row = &structured(&listing)["specs"];
        assert!(row.to_string().contains("002-broken"), "{row}");
        let count = call(
            client,
            "count-tokens",
            json!({"text": "hi", "model": "claude"}),
        )
        .await;
        assert_eq!(structured(&count)["exact"], false, "the API answered 503");
        // Notifications are sent before the result they belong to.
        let messages = recorder.take();
        {
            let broken = messages
                .iter()
                .find(|m| m.logger.as_deref() == Some("spec-tokens"))
                .unwrap_or_else(|| panic!("{transport:?}: {messages:?}"));
            assert_eq!(broken.level, LoggingLevel::Warning);
            assert!(
                broken
                    .data
                    .as_str()
                    .is_some_and(|d| d.starts_with("002-broken: ")),
                "{broken:?}"
            );
            let fallback = messages
                .iter()
                .find(|m| m.logger.as_deref() == Some("count-tokens"))
                .unwrap_or_else(|| panic!("{transport:?}: {messages:?}"));
            assert!(
                fallback.data.as_str().is_some_and(|d| d.contains("503")),
                "{fallback:?}"
            );
        }

        // Above warning: the same calls send nothing.
        client
            .set_level(SetLevelRequestParams::new(LoggingLevel::Error))
            .await
            .expect("setLevel");
        call(client, "spec-tokens", json!({})).await;
        call(
            client,
            "count-tokens",
            json!({"text": "hi", "model": "claude"}),
        )
        .await;
        // A notification sent anyway would arrive before the result; give a stray
        // one on its way a moment to land before asserting there is none.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let after = recorder.take();
        assert_eq!(
            after.is_empty(),
            remembers_level,
            "{transport:?}: {after:?}"
        );
    }
}

/// Every tool forwards its warnings the same way (one path in the registry): the file
/// tools say how many files they did not read and why (one message, not one per
/// file) and what the budget left out; assemble-context says when the exact count
/// fell back to the estimate. On every transport.
#[tokio::test]
async fn file_and_assembly_warnings_reach_the_client_like_every_other_tool() {
    let root = TempTree::new("cl-fidelity-files");
    root.write("notes.md", "Plans change. So do budgets.\n".repeat(40));
    root.write("logo.png", [0x89, b'P', b'N', b'G', 0, 0, 0, 13]);
    let fake = FakeAnthropic::start(Reply::Status(503)).await;
    for transport in ALL {
        let (recorder, conn) = logged(transport, &["--root", root.arg()], &fake).await;
        let client = &conn.client;
        let measured = call(client, "file-tokens", json!({})).await;
        assert_eq!(structured(&measured)["skipped_counts"]["binary"], 1);
        let loaded = call(client, "load-files", json!({"budget": 400})).await;
        assert_eq!(structured(&loaded)["omitted"][0]["path"], "notes.md");
        let assembled = call(
            client,
            "assemble-context",
            json!({"sections": [{"name": "system", "content": "Be brief."}], "model": "claude"}),
        )
        .await;
        assert_eq!(
            structured(&assembled)["exact"],
            false,
            "the API answered 503"
        );

        let messages = recorder.take();
        let from = |tool: &str| -> Vec<String> {
            messages
                .iter()
                .filter(|m| m.logger.as_deref() == Some(tool))
                .filter_map(|m| m.data.as_str().map(str::to_string))
                .collect()
        };
        assert_eq!(
            from("file-tokens"),
            ["1 file not read: 1 binary (see `skipped`)"],
            "{transport:?}: {messages:?}"
        );
        let load = from("load-files");
        assert!(
            load.iter()
                .any(|m| m.starts_with("1 file left out: over the budget of 400 tokens")),
            "{transport:?}: {load:?}"
        );
        assert!(
            load.iter().any(|m| m.contains("1 binary")),
            "{transport:?}: {load:?}"
        );
        let assemble = from("assemble-context");
        assert!(
            assemble.len() == 1 && assemble[0].contains("503"),
            "{transport:?}: {messages:?}"
        );
    }
}

/// A script that writes its requests and closes stdin (`printf … | context-loader
/// stdio`) gets every reply, each call's log messages before its reply, and then the
/// process exits. Every tool, some of them with warnings.
#[test]
fn piped_stdio_answers_every_request_read_before_stdin_closed() {
    let specs = broken_specs("pipe-specs");
    let root = TempTree::new("cl-fidelity-pipe");
    root.write("notes.md", "Plans change.\n");
    root.write("logo.png", [0x89, b'P', b'N', b'G', 0, 0]);
    let calls = [
        ("count-tokens", json!({"text": "hi"})),
        ("list-models", json!({"filter": "gpt-4o"})),
        ("file-tokens", json!({})),
        ("load-files", json!({})),
        ("spec-tokens", json!({})),
        ("spec-budget", json!({"specs": ["1"], "budget": 100})),
        (
            "fit-messages",
            json!({"messages": [{"role": "user", "content": "hi"}]}),
        ),
        (
            "assemble-context",
            json!({"sections": [{"name": "system", "content": "Be brief."}]}),
        ),
    ];
    let mut input = vec![
        test_support::client::initialize_request("pipe").to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    ];
    for (i, (tool, arguments)) in calls.iter().enumerate() {
        let request = json!({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        input.push(request.to_string());
    }
    let (code, stdout, stderr) = BIN.run_cli(
        &["--root", root.arg(), "--specs-dir", specs.arg(), "stdio"],
        Some(&(input.join("\n") + "\n")),
    );
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect();
    let position = |id: usize| {
        lines
            .iter()
            .position(|line| line["id"] == id && line.get("result").is_some())
            .unwrap_or_else(|| panic!("no reply to {id} ({}): {stdout}\n{stderr}", calls[id - 2].0))
    };
    for (i, (tool, _)) in calls.iter().enumerate() {
        let reply = &lines[position(i + 2)];
        assert_eq!(reply["result"]["isError"], false, "{tool}: {reply}");
    }
    // The warnings of a call come before its reply.
    for (tool, id) in [("file-tokens", 4), ("spec-tokens", 6)] {
        let logged = lines
            .iter()
            .position(|line| {
                line["method"] == "notifications/message" && line["params"]["logger"] == tool
            })
            .unwrap_or_else(|| panic!("no log message from {tool}: {stdout}"));
        assert!(logged < position(id), "{tool}: {stdout}");
    }
    assert!(!stderr.contains("timed out draining"), "{stderr}");
}
