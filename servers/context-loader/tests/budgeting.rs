//! fit-messages, assemble-context and exact Claude counts, end to end: the built
//! binary over stdio, HTTP and stateless HTTP, a fake Anthropic API on loopback, and
//! the CLI.

use std::time::Duration;

use serde_json::{Value, json};
use test_support::anthropic::{FakeAnthropic, Reply};
use test_support::{ALL, Binary, TempTree, Transport, call, structured};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// A history of `turns` user/assistant exchanges in English and Korean, every third
/// one with a tool call and its result, after a system message.
fn history(turns: usize) -> Vec<Value> {
    let mut messages = vec![json!({"role": "system", "content": "You are a careful assistant."})];
    for i in 0..turns {
        messages.push(json!({"role": "user", "content": format!("질문 {i}: what is the status of ticket {i}?")}));
        if i % 3 == 0 {
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": format!("call_{i}"), "type": "function",
                 "function": {"name": "ticket_status", "arguments": format!("{{\"id\":{i}}}")}}]}));
            messages.push(json!({"role": "tool", "tool_call_id": format!("call_{i}"),
                                 "content": format!("ticket {i}: open, 담당자 김민수")}));
        }
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Ticket {i} is open; 담당자는 김민수입니다.")}]}));
    }
    messages
}

/// The structural promises of fit-messages, checked on any result.
fn assert_well_formed(input: &[Value], out: &Value) {
    let kept: Vec<usize> = out["kept_indices"]
        .as_array()
        .expect("kept_indices")
        .iter()
        .map(|v| v.as_u64().expect("index") as usize)
        .collect();
    assert!(
        kept.windows(2).all(|w| w[0] < w[1]),
        "original order: {kept:?}"
    );
    let messages = out["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), kept.len());
    for (message, &i) in messages.iter().zip(&kept) {
        // Unchanged, except that `"content": null` comes back as an absent content.
        let mut expected = input[i].clone();
        if expected["content"].is_null() {
            expected.as_object_mut().map(|o| o.remove("content"));
        }
        assert_eq!(message, &expected, "kept message {i} is returned unchanged");
    }
    assert_eq!(out["dropped_count"], json!(input.len() - kept.len()));
    assert!(out["total_tokens"].as_u64() <= out["budget"].as_u64());
    // Never an orphan tool result first, and every kept result's call is kept.
    let first_non_system = messages.iter().find(|m| m["role"] != "system");
    assert_ne!(first_non_system.map(|m| &m["role"]), Some(&json!("tool")));
    for message in messages.iter().filter(|m| m["role"] == "tool") {
        let id = &message["tool_call_id"];
        assert!(
            messages.iter().any(|m| m["tool_calls"]
                .as_array()
                .is_some_and(|calls| calls.iter().any(|c| &c["id"] == id))),
            "tool result {id} kept without its call"
        );
    }
}

#[tokio::test]
async fn fit_messages_trims_whole_groups_over_every_transport() {
    let input = history(40);
    let mut results = Vec::new();
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        // gpt-4: floor(8192 * 0.9) = 7372 usable; reserving 7072 leaves a 300-token budget.
        let result = call(
            &conn.client,
            "fit-messages",
            json!({
                "messages": input, "model": "gpt-4-0613", "reserve_output_tokens": 7072
            }),
        )
        .await;
        assert_ne!(result.is_error, Some(true), "{transport:?}: {result:?}");
        let out = structured(&result).clone();
        assert_eq!(out["budget"], 300);
        assert_eq!(out["context_window"], 8192);
        assert_eq!(out["model"], "gpt-4");
        assert_eq!(out["exact"], true);
        assert_well_formed(&input, &out);
        let kept = out["kept_indices"].as_array().expect("kept");
        assert_eq!(kept.first(), Some(&json!(0)), "system message kept");
        assert_eq!(kept.last(), Some(&json!(input.len() - 1)), "newest kept");
        assert!(out["dropped_count"].as_u64() > Some(50), "{out}");
        let total = out["total_tokens"].as_f64().expect("total");
        assert!(total > 200.0, "a 300-token budget is mostly used: {total}");
        let cost = out["estimated_input_cost_usd"].as_f64().expect("cost");
        assert!(
            (cost - total * 30.0 / 1e6).abs() < 1e-9,
            "gpt-4 input is $30/1M"
        );
        results.push(out);
    }
    assert!(
        results.windows(2).all(|w| w[0] == w[1]),
        "same answer on every transport"
    );
}

#[tokio::test]
async fn fit_messages_counts_the_cookbook_example_like_the_api() {
    let named = |name: &str, text: &str| json!({"role": "system", "name": name, "content": text});
    let messages = json!([
        {"role": "system", "content": "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
        named("example_user", "New synergies will help drive top-line growth."),
        named("example_assistant", "Things working well together will increase revenue."),
        named("example_user", "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."),
        named("example_assistant", "Let's talk later when we're less busy about how to do better."),
        {"role": "user", "content": "This late pivot means we don't have time to boil the ocean for the client deliverable."}
    ]);
    let conn = BIN.connect(Transport::Stdio, &[]).await;
    for (model, tokens) in [("gpt-4-0613", 129), ("gpt-4o", 124)] {
        let result = call(
            &conn.client,
            "fit-messages",
            json!({"messages": messages, "model": model}),
        )
        .await;
        let out = structured(&result);
        assert_eq!(out["total_tokens"], tokens, "{model}");
        assert_eq!(out["dropped_count"], 0);
    }
}

#[tokio::test]
async fn fit_messages_errors_are_structured() {
    let conn = BIN.connect(Transport::HttpStateless, &[]).await;
    let huge_system = "budget ".repeat(9000);
    for (args, code, detail) in [
        (
            json!({"messages": [{"role": "system", "content": huge_system}, {"role": "user", "content": "hi"}],
                "model": "gpt-4"}),
            "CONTEXT_OVERFLOW",
            "system_tokens",
        ),
        (
            json!({"messages": [], "model": "gpt-4", "margin": 1.5}),
            "INVALID_INPUT",
            "margin",
        ),
        (
            json!({"messages": [], "model": "gpt-4", "reserve_output_tokens": 9000}),
            "INVALID_INPUT",
            "usable_tokens",
        ),
        (
            json!({"messages": [{"role": "robot", "content": "x"}]}),
            "INVALID_INPUT",
            "message",
        ),
        (
            json!({"messages": [], "model": "cl100k_base"}),
            "INVALID_INPUT",
            "suggestion",
        ),
        (
            json!({"messages": [], "model": "gpt-4.5"}),
            "UNSUPPORTED_MODEL",
            "did_you_mean",
        ),
    ] {
        let result = call(&conn.client, "fit-messages", args.clone()).await;
        assert_eq!(result.is_error, Some(true), "{args}");
        let out = structured(&result);
        assert_eq!(out["error_code"], code, "{out}");
        assert!(!out[detail].is_null(), "{detail} missing in {out}");
    }
    let overflow = call(
        &conn.client,
        "fit-messages",
        json!({
        "messages": [{"role": "system", "content": huge_system}], "model": "gpt-4"}),
    )
    .await;
    let out = structured(&overflow);
    assert!(out["system_tokens"].as_u64() > out["budget"].as_u64());
    assert_eq!(out["budget"], 7372);
    // The server is still up and answering.
    let ok = call(
        &conn.client,
        "fit-messages",
        json!({"messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_ne!(ok.is_error, Some(true));
}

#[tokio::test]
async fn assemble_context_truncates_at_budgets_over_every_transport() {
    let search =
        "검색 결과: 토큰 예산은 모델마다 다릅니다. Search result text follows. ".repeat(200);
    let args = json!({
        "budget": 400,
        "model": "gpt-4o",
        "sections": [
            {"name": "semantic_search", "content": search},
            {"name": "system", "content": "You answer from the sources only."},
            {"name": "notes", "content": "Keep it short.", "priority": 1, "budget": 20}
        ]
    });
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let result = call(&conn.client, "assemble-context", args.clone()).await;
        assert_ne!(result.is_error, Some(true), "{transport:?}: {result:?}");
        let out = structured(&result);
        let text = out["text"].as_str().expect("text");
        assert!(
            text.starts_with("You answer from the sources only.\n\nKeep it short.\n\n검색 결과"),
            "{text:.80}"
        );
        assert!(text.ends_with("[…truncated]"));
        assert!(
            search.starts_with(
                text.split("\n\n")
                    .nth(2)
                    .expect("search part")
                    .trim_end_matches("\n[…truncated]")
            )
        );
        let sections = out["sections"].as_array().expect("sections");
        let names: Vec<&str> = sections
            .iter()
            .map(|s| s["name"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(names, ["system", "notes", "semantic_search"]);
        let search_report = &sections[2];
        assert_eq!(search_report["truncated"], true);
        assert_eq!(search_report["budget"], 160, "40 % of 400");
        assert!(search_report["tokens"].as_u64() <= Some(160));
        assert!(
            search_report["tokens"].as_u64() >= Some(150),
            "{search_report}"
        );
        assert!(out["total_tokens"].as_u64() <= Some(400));
        assert_eq!(out["truncated_sections"], 1);
        assert_eq!(out["exact"], true);
        assert!(out["estimated_input_cost_usd"].as_f64() > Some(0.0));
    }
}

// ---- exact Claude counts against a fake Anthropic API on loopback ----

/// input_tokens = 1000 per turn of the request (to force re-selection), or the text
/// length for a one-message count.
fn fake_tokens(body: &Value) -> u64 {
    let turns = body["messages"].as_array().map_or(0, Vec::len) as u64;
    if turns == 1 && body["system"].is_null() {
        body["messages"][0]["content"]
            .as_str()
            .map_or(0, |t| t.chars().count() as u64)
    } else {
        turns * 1000
    }
}

#[tokio::test]
async fn claude_counts_come_from_the_api_when_enabled_over_every_transport() {
    for transport in ALL {
        let fake = FakeAnthropic::start(Reply::Count(fake_tokens)).await;
        let conn = BIN
            .connect_with_env(transport, &[], &fake.server_env())
            .await;

        let text = "안녕하세요, Claude";
        let count = call(
            &conn.client,
            "count-tokens",
            json!({"text": text, "model": "claude-sonnet-4-5-20250929"}),
        )
        .await;
        let out = structured(&count);
        assert_eq!(
            out["token_count"],
            text.chars().count(),
            "{transport:?}: {out}"
        );
        assert_eq!(out["exact"], true);
        assert_eq!(out["method"], "exact: Anthropic count_tokens API");
        assert_eq!(out["encoding"], "anthropic_count_tokens");
        assert!(out.get("warning").is_none());
        let cost = out["estimated_input_cost_usd"].as_f64().expect("cost");
        assert!(
            (cost - text.chars().count() as f64 * 3.0 / 1e6).abs() < 1e-9,
            "sonnet 4.5 input is $3/1M"
        );
        // Asked twice: the second answer comes from the cache.
        call(
            &conn.client,
            "count-tokens",
            json!({"text": text, "model": "claude-sonnet-4-5-20250929"}),
        )
        .await;

        // fit-messages: 200000 * 0.9 - 176000 = 4000-token budget; the fake charges
        // 1000 per turn, so the locally chosen set is over and must shrink.
        let input = history(6);
        let fit = call(
            &conn.client,
            "fit-messages",
            json!({
                "messages": input, "model": "claude-sonnet-4-5", "reserve_output_tokens": 176000
            }),
        )
        .await;
        let out = structured(&fit).clone();
        assert_eq!(out["exact"], true, "{out}");
        assert_eq!(out["encoding"], "anthropic_count_tokens");
        assert_eq!(out["budget"], 4000);
        assert_well_formed(&input, &out);

        let seen = fake.requests();
        assert!(
            seen.len() >= 3,
            "one count-tokens request, then at least two fit rounds (the first set was over): {}",
            seen.len()
        );
        assert_eq!(
            seen.iter()
                .filter(|(_, b)| b["messages"][0]["content"] == json!(text))
                .count(),
            1,
            "the repeated count-tokens call was served from the cache"
        );
        for (headers, _) in &seen {
            assert_eq!(headers["x-api-key"], "sk-test");
            assert_eq!(headers["anthropic-version"], "2023-06-01");
        }
        let (_, last) = seen.last().expect("fit requests");
        assert_eq!(last["model"], "claude-sonnet-4-5");
        assert_eq!(last["system"], "You are a careful assistant.");
        assert_eq!(
            out["total_tokens"].as_u64(),
            Some(fake_tokens(last)),
            "total is the API's answer"
        );
        assert!(out["total_tokens"].as_u64() <= Some(4000));
        // Chronological, tool_use before its tool_result.
        let blocks: Vec<&str> = last["messages"]
            .as_array()
            .expect("turns")
            .iter()
            .flat_map(|turn| turn["content"].as_array().cloned().unwrap_or_default())
            .map(|b| match b["type"].as_str() {
                Some("tool_use") => "use",
                Some("tool_result") => "result",
                _ => "text",
            })
            .collect();
        if let Some(result_at) = blocks.iter().position(|b| *b == "result") {
            assert!(blocks[..result_at].contains(&"use"), "{blocks:?}");
        }
    }
}

#[tokio::test]
async fn api_failures_fall_back_to_the_estimate_with_a_warning() {
    for (reply, expected) in [
        (Reply::Status(429), "429"),
        (Reply::Status(503), "HTTP 503"),
        (
            Reply::Slow(Duration::from_secs(20)),
            "no answer within 300 ms",
        ),
    ] {
        let fake = FakeAnthropic::start(reply).await;
        let conn = BIN
            .connect_with_env(
                Transport::Stdio,
                &["--anthropic-timeout-ms", "300"],
                &fake.server_env(),
            )
            .await;
        let count = call(
            &conn.client,
            "count-tokens",
            json!({"text": "hello there", "model": "claude"}),
        )
        .await;
        let out = structured(&count);
        assert_ne!(count.is_error, Some(true));
        assert_eq!(out["exact"], false);
        assert!(
            out["method"]
                .as_str()
                .is_some_and(|m| m.starts_with("estimate"))
        );
        assert!(
            out["warning"]
                .as_str()
                .is_some_and(|w| w.contains(expected)),
            "{out}"
        );
        assert!(out["token_count"].as_u64() > Some(0));

        let fit = call(
            &conn.client,
            "fit-messages",
            json!({"messages": history(2), "model": "claude"}),
        )
        .await;
        let out = structured(&fit);
        assert_eq!(out["exact"], false);
        assert_eq!(out["encoding"], "claude_4_7_estimate");
        assert!(
            out["warning"]
                .as_str()
                .is_some_and(|w| w.contains(expected)),
            "{out}"
        );
        assert_eq!(out["dropped_count"], 0);
        assert_eq!(fake.request_count(), 2, "one attempt per call");
    }
}

#[tokio::test]
async fn openai_counts_never_call_the_api() {
    let fake = FakeAnthropic::start(Reply::Count(fake_tokens)).await;
    let conn = BIN
        .connect_with_env(Transport::Stdio, &[], &fake.server_env())
        .await;
    let out = call(
        &conn.client,
        "fit-messages",
        json!({"messages": history(3), "model": "gpt-4o"}),
    )
    .await;
    assert_eq!(structured(&out)["exact"], true);
    call(
        &conn.client,
        "count-tokens",
        json!({"text": "x", "model": "gpt-4o"}),
    )
    .await;
    assert_eq!(fake.request_count(), 0);
}

// ---- CLI ----

#[tokio::test]
async fn cli_fit_messages_and_assemble_match_the_tools() {
    let input = Value::Array(history(40)).to_string();
    let (code, stdout, _) = BIN.run_cli(
        &[
            "fit-messages",
            "--model",
            "gpt-4",
            "--reserve-output-tokens",
            "7072",
            "--json",
        ],
        Some(&input),
    );
    assert_eq!(code, 0);
    let cli: Value = serde_json::from_str(&stdout).expect("json");
    let conn = BIN.connect(Transport::Stdio, &[]).await;
    let tool = call(
        &conn.client,
        "fit-messages",
        json!({"messages": history(40), "model": "gpt-4", "reserve_output_tokens": 7072}),
    )
    .await;
    assert_eq!(&cli, structured(&tool));

    let (code, stdout, _) = BIN.run_cli(
        &[
            "fit-messages",
            "--model",
            "gpt-4",
            "--reserve-output-tokens",
            "7072",
        ],
        Some(&format!("{{\"messages\": {input}}}")),
    );
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with(&format!(
            "kept {} of {} messages [0, ",
            cli["kept_indices"].as_array().map_or(0, Vec::len),
            history(40).len()
        )),
        "{stdout}"
    );

    let sections = json!([{"name": "system", "content": "Be brief."}, {"name": "working_memory", "content": "word ".repeat(500)}]).to_string();
    let (code, stdout, stderr) = BIN.run_cli(&["assemble", "--budget", "200"], Some(&sections));
    assert_eq!(code, 0);
    assert!(stdout.starts_with("Be brief.\n\nword word"));
    assert!(stdout.trim_end().ends_with("[…truncated]"));
    assert!(
        stderr.contains("working_memory") && stderr.contains("yes"),
        "{stderr}"
    );
    let (code, stdout, _) = BIN.run_cli(
        &["assemble", "--budget", "200", "--json", "-"],
        Some(&sections),
    );
    assert_eq!(code, 0);
    let out: Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(
        out["sections"][1]["budget"], 50,
        "working_memory: 25 % of 200"
    );
}

#[test]
fn cli_errors_and_models_file() {
    let (code, stdout, _) = BIN.run_cli(
        &["fit-messages", "--json"],
        Some("[{\"role\": \"user\"}, oops]"),
    );
    assert_eq!(code, 1);
    let error: Value = serde_json::from_str(&stdout).expect("json error");
    assert_eq!(error["error_code"], "INVALID_INPUT");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("line 1")),
        "{error}"
    );

    // Neither budget nor model: the schema's defaults (gpt-4, 90 % of its window).
    let (code, _, stderr) = BIN.run_cli(&["assemble"], Some("[]"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("of 7372 tokens"), "{stderr}");

    let dir = TempTree::new("cl-budgeting-models");
    let good = dir.write(
        "models.json",
        r#"{"as_of": "2026-02-01", "models": [
        {"name": "acme-chat", "family": "acme", "tokenizer": "o200k_base", "context_window": 1000,
         "max_output_tokens": 100, "input_usd_per_mtok": 1000.0, "output_usd_per_mtok": 1.0}]}"#,
    );
    let good_arg = good.display().to_string();
    let (code, stdout, _) = BIN.run_cli(
        &[
            "--models-file",
            &good_arg,
            "count",
            "--model",
            "acme-chat",
            "--json",
            "hello world",
        ],
        None,
    );
    assert_eq!(code, 0, "{stdout}");
    let count: Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(count["model"], "acme-chat");
    assert_eq!(
        count["estimated_input_cost_usd"], 0.002,
        "2 tokens at $1000/1M"
    );
    let (code, stdout, _) = BIN.run_cli(
        &["--models-file", &good_arg, "models", "acme", "--json"],
        None,
    );
    assert_eq!(code, 0);
    assert!(stdout.contains("2026-02-01"));

    let bad = dir.write("bad.json", "{\"models\": [\n  {\"name\": \"x\", \"family\": \"f\", \"tokenizer\": \"cl100k_base\",\n   \"context_window\": -5}]}");
    let (code, _, stderr) = BIN.run_cli_with_env(
        &["models"],
        None,
        &[("CONTEXT_LOADER_MODELS_FILE", &bad.display().to_string())],
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("line 3") && stderr.contains("models[0].context_window"),
        "{stderr}"
    );

    let (code, _, stderr) = BIN.run_cli_with_env(
        &["--exact-claude", "count", "x"],
        None,
        &[("ANTHROPIC_API_KEY", "")],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("ANTHROPIC_API_KEY"));
}

/// Issue 23: the answer uses what it knows about the model. A budget over the
/// model's window is refused (gpt-4's 8,192 tokens: `budget: 20000` used to return a
/// 15,001-token text, no warning); a budget of 0 places nothing, as load-files
/// answers one with no files, instead of being an error.
#[tokio::test]
async fn assemble_budgets_are_checked_against_the_window_and_zero_is_nothing() {
    let long = "Retrieved passage about token budgets. ".repeat(3_000);
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let over = call(
            &conn.client,
            "assemble-context",
            json!({"model": "gpt-4", "budget": 20000, "sections": [{"name": "notes", "content": long}]}),
        )
        .await;
        assert_eq!(over.is_error, Some(true), "{transport:?}");
        let error = structured(&over);
        assert_eq!(error["error_code"], "INVALID_INPUT");
        assert_eq!(error["field"], "budget");
        assert_eq!(error["context_window"], 8192, "{error}");
        assert_eq!(
            error["message"],
            "budget 20000 is over gpt-4's context window of 8192 tokens"
        );

        let zero = call(
            &conn.client,
            "assemble-context",
            json!({"budget": 0, "sections": [{"name": "system", "content": "Be brief."}]}),
        )
        .await;
        assert_eq!(zero.is_error, Some(false), "{transport:?}: {zero:?}");
        let out = structured(&zero);
        assert_eq!(
            (out["text"].clone(), out["total_tokens"].clone()),
            (json!(""), json!(0))
        );
        assert_eq!(out["dropped_sections"], 1, "{out}");
    }
    let (code, _, stderr) = BIN.run_cli(
        &["assemble", "--model", "gpt-4", "--budget", "20000"],
        Some("[{\"name\": \"notes\", \"content\": \"hi\"}]"),
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("over gpt-4's context window"), "{stderr}");
    let (code, stdout, stderr) = BIN.run_cli(
        &["assemble", "--budget", "0"],
        Some("[{\"name\": \"notes\", \"content\": \"hi\"}]"),
    );
    assert_eq!((code, stdout.trim()), (0, ""), "{stderr}");
    assert!(
        stderr.contains("dropped notes: the overall budget is 0 tokens"),
        "{stderr}"
    );
}

/// Issue 23: the ADR makes layer budgets configurable: per section in the request
/// (tested with the preset) and as server defaults, by flag or JSON file.
#[tokio::test]
async fn adr_layer_budgets_are_configurable_by_flag_or_file() {
    let sections = json!([
        {"name": "working_memory", "content": "memory entry ".repeat(2_000)},
        {"name": "system_prompt", "content": "Be brief."}
    ]);
    let args = json!({"preset": "adr-layered", "model": "gpt-4o", "sections": sections});
    for transport in ALL {
        let conn = BIN
            .connect(
                transport,
                &[
                    "--adr-layer-budgets",
                    "working_memory=1000,system_prompt=100",
                ],
            )
            .await;
        let result = call(&conn.client, "assemble-context", args.clone()).await;
        let out = structured(&result);
        assert_eq!(result.is_error, Some(false), "{transport:?}: {out}");
        assert_eq!(
            out["budget"],
            76_000 - 39_000 - 7_900,
            "the configured total"
        );
        assert_eq!(out["sections"][0]["name"], "system_prompt");
        assert_eq!(out["sections"][0]["budget"], 100);
        assert_eq!(out["sections"][1]["budget"], 1000);
        assert_eq!(out["sections"][1]["truncated"], true);
    }
    let scratch = TempTree::new("cl-layers");
    let file = scratch.write(
        "layers.json",
        r#"{"working_memory": 1000, "system_prompt": 100}"#,
    );
    let input = serde_json::to_string(&sections).expect("json");
    let (code, stdout, stderr) = BIN.run_cli(
        &[
            "--adr-layer-budgets-file",
            file.to_str().expect("path"),
            "assemble",
            "--preset",
            "adr-layered",
            "--model",
            "gpt-4o",
            "--json",
        ],
        Some(&input),
    );
    assert_eq!(code, 0, "{stderr}");
    let out: Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(out["sections"][1]["budget"], 1000, "{out}");
    // A misspelt layer stops start-up with the closest name.
    let (code, _, stderr) = BIN.run_cli(
        &["--adr-layer-budgets", "working_memroy=1000", "models"],
        None,
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("did you mean `working_memory`?"),
        "{stderr}"
    );
}
