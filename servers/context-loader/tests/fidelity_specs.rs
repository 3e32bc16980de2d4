//! What the source documents ask, end to end through the built binary over stdio,
//! HTTP and stateless HTTP (and the CLI where it applies): LeanSpec's
//! FILE_ACCESS_ERROR and folder-relative paths, "did you mean" by spelling, a cache
//! that sees an edit keeping size and mtime, the budgeting ADR's layered preset with
//! utilization figures and its exact re-cut, and assemble-context's defaults and
//! never-marker-only sections.

use serde_json::{Value, json};
use test_support::anthropic::{FakeAnthropic, Reply};
use test_support::{ALL, Binary, TempTree, Transport, call, structured};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// The layers of `adr-layered`, in priority order, with their budgets (the ADR's).
/// ADR-012's layers in its priority order ("1 system prompt, 2 working memory,
/// 3 stream buffer, then semantic search, graph traversal, session archive, meta
/// memory, tool definitions"; issue 23, seed 004), with its budgets.
const ADR_LAYERS: [(&str, u64); 8] = [
    ("system_prompt", 8_000),
    ("working_memory", 40_000),
    ("stream_buffer", 2_000),
    ("semantic_search", 12_000),
    ("graph_traversal", 4_000),
    ("session_archive", 4_000),
    ("meta_memory", 2_000),
    ("tool_definitions", 4_000),
];

/// Same byte length, different token counts: the cache test swaps one for the other.
const CACHED_BEFORE: &str = "# Cache\n\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n";
const CACHED_AFTER: &str = "# Cache\n\na b c d e f g h i j k l m n o p q r s t \n";

/// A specs root for one test, removed on drop.
fn spec_root(tag: &str) -> TempTree {
    let specs = TempTree::new(&format!("cl-fidelity-specs-{tag}"));
    specs.write(
        "059-programmatic-spec-management/README.md",
        b"---\nstatus: planned\n---\n# Programmatic\n\nManage specs from code.\n",
    );
    specs.write(
        "059-programmatic-spec-management/DESIGN.md",
        b"# Design\n\nThe design.\n",
    );
    specs.write("070-no-readme/DESIGN.md", b"# Only a design\n");
    specs.write(
        "071-binary-readme/README.md",
        b"\x89PNG\r\n\x1a\n\0\0\0IHDR",
    );
    specs.write("072-latin1/README.md", b"# Caf\xe9 au lait\n");
    specs.write("1593-other-thing/README.md", b"# Other\n");
    specs.write("080-cache/README.md", CACHED_BEFORE);
    specs
}

fn code(v: &Value) -> &str {
    v["error_code"].as_str().unwrap_or_default()
}

fn paths(files: &Value) -> Vec<&str> {
    files
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect()
}

#[tokio::test]
async fn a_spec_that_cannot_be_measured_is_a_file_access_error_never_free() {
    let specs = spec_root("access");
    for transport in ALL {
        let conn = BIN.connect(transport, &["--specs-dir", specs.arg()]).await;
        let c = &conn.client;
        for (query, path, why) in [
            ("70", "070-no-readme/README.md", "missing"),
            ("71", "071-binary-readme/README.md", "binary"),
            ("072-latin1", "072-latin1/README.md", "UTF-8"),
            ("071/README.md", "071-binary-readme/README.md", "binary"),
        ] {
            let result = call(c, "spec-tokens", json!({"specPath": query})).await;
            assert_eq!(
                result.is_error,
                Some(true),
                "{transport:?} {query}: {result:?}"
            );
            let e = structured(&result);
            assert_eq!(code(e), "FILE_ACCESS_ERROR", "{e}");
            assert_eq!(e["path"], path);
            assert!(
                e["reason"].as_str().unwrap_or_default().contains(why),
                "{e}"
            );
            assert!(
                e["message"].as_str().unwrap_or_default().contains(path),
                "{e}"
            );
        }
        // A sub-spec of the README-less spec can still be measured by name.
        let design = call(c, "spec-tokens", json!({"specPath": "070/DESIGN.md"})).await;
        assert_eq!(design.is_error, Some(false));
        assert!(structured(&design)["total"].as_u64() > Some(0));

        // In a listing: a row with `error`, no grade, counted in the summary.
        let listing = call(c, "spec-tokens", json!({"sort": "name"})).await;
        let l = structured(&listing);
        let rows = l["specs"].as_array().expect("rows");
        for broken in ["070-no-readme", "071-binary-readme", "072-latin1"] {
            let row = rows.iter().find(|r| r["spec"] == broken).expect(broken);
            assert!(row["error"].is_string(), "{row}");
            assert!(
                row.get("level").is_none(),
                "an unmeasured spec has no grade: {row}"
            );
        }
        let good = rows
            .iter()
            .find(|r| r["spec"] == "1593-other-thing")
            .expect("row");
        assert_eq!(good["level"], "excellent");
        assert_eq!(l["summary"]["with_errors"], 3);
        let levels = &l["summary"]["levels"];
        let graded: u64 = ["excellent", "good", "warning", "problem"]
            .iter()
            .map(|k| levels[k].as_u64().expect("count"))
            .sum();
        assert_eq!(
            graded, 3,
            "only the three measurable specs are graded: {levels}"
        );
    }
    // The CLI exits non-zero with the same error.
    let dir = specs.arg();
    let (status, out, _) = BIN.run_cli(&["--specs-dir", dir, "spec-tokens", "71", "--json"], None);
    assert_eq!(status, 1);
    let e: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(code(&e), "FILE_ACCESS_ERROR");
    assert_eq!(e["path"], "071-binary-readme/README.md");
    let (status, _, err) = BIN.run_cli(&["--specs-dir", dir, "spec-tokens", "70"], None);
    assert_eq!(status, 1);
    assert!(err.contains("070-no-readme/README.md"), "{err}");
    let (status, out, _) =
        BIN.run_cli(&["--specs-dir", dir, "spec-tokens", "--sort", "name"], None);
    assert_eq!(status, 0);
    let row = out
        .lines()
        .find(|l| l.contains("071-binary-readme"))
        .expect("row");
    assert!(row.contains(" - ") && row.contains("[error:"), "{row}");
}

#[tokio::test]
async fn paths_are_relative_to_the_spec_folder_and_names_suggest_by_spelling() {
    let specs = spec_root("paths");
    let mut answers = Vec::new();
    for transport in ALL {
        let conn = BIN.connect(transport, &["--specs-dir", specs.arg()]).await;
        let c = &conn.client;
        let result = call(
            c,
            "spec-tokens",
            json!({"specPath": "59", "includeSubSpecs": true, "budget": 1000}),
        )
        .await;
        let r = structured(&result);
        assert_eq!(r["spec"], "059-programmatic-spec-management");
        assert_eq!(paths(&r["files"]), ["README.md", "DESIGN.md"]);
        assert_eq!(
            r["budget"]["fitting_files"],
            json!(["README.md", "DESIGN.md"])
        );
        let readme_only = call(c, "spec-tokens", json!({"specPath": "59"})).await;
        assert_eq!(
            paths(&structured(&readme_only)["excluded_sub_specs"]),
            ["DESIGN.md"]
        );
        let plan = call(c, "spec-budget", json!({"specs": ["59"], "budget": 1000})).await;
        assert_eq!(
            structured(&plan)["plan"]["specs"][0]["files"],
            json!(["README.md", "DESIGN.md"])
        );

        let typo = call(c, "spec-tokens", json!({"specPath": "programatic"})).await;
        let e = structured(&typo);
        assert_eq!(code(e), "SPEC_NOT_FOUND");
        assert_eq!(
            e["available_options"],
            json!(["059-programmatic-spec-management"])
        );
        assert_eq!(
            e["suggestion"],
            "Did you mean `059-programmatic-spec-management`?"
        );
        let nothing = call(c, "spec-tokens", json!({"specPath": "zzqqxxww"})).await;
        let e = structured(&nothing);
        assert_eq!(e["available_options"], json!([]));
        assert!(
            e["suggestion"]
                .as_str()
                .unwrap_or_default()
                .contains("`zzqqxxww`"),
            "{e}"
        );
        let number = call(c, "spec-tokens", json!({"specPath": "1590"})).await;
        let e = structured(&number);
        assert_eq!(e["available_options"][0], "1593-other-thing");
        assert!(
            e["suggestion"].as_str().unwrap_or_default().starts_with(
                "No spec is numbered 1590; the nearest numbers are `1593-other-thing`"
            ),
            "{e}"
        );
        answers.push(serde_json::to_value(&result).expect("json"));
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(answers[0], answers[2]);
    let (status, out, _) = BIN.run_cli(
        &[
            "--specs-dir",
            specs.arg(),
            "spec-tokens",
            "59",
            "--include-sub-specs",
            "--json",
        ],
        None,
    );
    assert_eq!(status, 0);
    let r: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(paths(&r["files"]), ["README.md", "DESIGN.md"]);
}

#[tokio::test]
async fn an_edit_that_keeps_size_and_mtime_is_measured_again() {
    let specs = spec_root("cache");
    let path = specs.join("080-cache/README.md");
    assert_eq!(CACHED_BEFORE.len(), CACHED_AFTER.len());
    for transport in ALL {
        specs.write("080-cache/README.md", CACHED_BEFORE);
        let conn = BIN.connect(transport, &["--specs-dir", specs.arg()]).await;
        let c = &conn.client;
        let count = |text: &str| {
            let text = text.to_string();
            async move {
                let r = call(c, "count-tokens", json!({"text": text})).await;
                structured(&r)["token_count"].as_u64().expect("count")
            }
        };
        let total = || async {
            let r = call(c, "spec-tokens", json!({"specPath": "80"})).await;
            structured(&r)["total"].as_u64().expect("total")
        };
        let (before, after) = (count(CACHED_BEFORE).await, count(CACHED_AFTER).await);
        assert_ne!(before, after, "the fixture must change the count");
        assert_eq!(total().await, before);
        assert_eq!(total().await, before, "{transport:?}: from the cache");

        // rsync -t / utime: same size, the old modification time put back.
        let modified = std::fs::metadata(&path)
            .expect("meta")
            .modified()
            .expect("mtime");
        std::fs::write(&path, CACHED_AFTER).expect("edit");
        let file = std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("open");
        file.set_modified(modified).expect("utime");
        drop(file);
        let metadata = std::fs::metadata(&path).expect("meta");
        assert_eq!(metadata.modified().expect("mtime"), modified);
        assert_eq!(metadata.len() as usize, CACHED_BEFORE.len());
        assert_eq!(
            total().await,
            after,
            "{transport:?}: the edit is seen (ctime moved)"
        );
    }
}

/// A section per ADR layer, given in reverse order; `working_memory` is far over
/// its 40,000 tokens.
fn adr_sections() -> Vec<Value> {
    ADR_LAYERS
        .iter()
        .rev()
        .map(|(name, _)| {
            let content = if *name == "working_memory" {
                "memory entry ".repeat(40_000)
            } else {
                format!("The {name} layer.")
            };
            json!({"name": name, "content": content})
        })
        .collect()
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[tokio::test]
async fn the_adr_preset_places_eight_layers_in_order_with_their_budgets() {
    let args =
        json!({"preset": "adr-layered", "model": "claude-sonnet-4-5", "sections": adr_sections()});
    let mut answers = Vec::new();
    for transport in ALL {
        // A 76,000-token prompt is over the default answer limit (it would be
        // ANSWER_TOO_LARGE): this server's operator raised it.
        let limit: [&str; 6] = [
            "--max-answer-tokens",
            "200000",
            "--max-answer-chars",
            "1000000",
            "--max-answer-bytes",
            "10000000",
        ];
        let conn = BIN.connect(transport, &limit).await;
        let result = call(&conn.client, "assemble-context", args.clone()).await;
        assert_eq!(result.is_error, Some(false), "{transport:?}: {result:?}");
        let out = structured(&result);
        assert_eq!(out["preset"], "adr-layered");
        assert_eq!(out["budget"], 76_000, "the ADR's total");
        let sections = out["sections"].as_array().expect("sections");
        let placed: Vec<(&str, u64)> = sections
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().expect("name"),
                    s["budget"].as_u64().expect("budget"),
                )
            })
            .collect();
        assert_eq!(placed, ADR_LAYERS, "the ADR's order and budgets");
        for (i, s) in sections.iter().enumerate() {
            assert_eq!(s["priority"], i);
            let (tokens, budget) = (
                s["tokens"].as_f64().expect("t"),
                s["budget"].as_f64().expect("b"),
            );
            assert_eq!(
                s["budget_utilization"].as_f64(),
                Some(round4(tokens / budget)),
                "{s}"
            );
        }
        let memory = &sections[1];
        assert_eq!(memory["truncated"], true);
        assert!(
            memory["tokens"].as_u64() <= Some(40_000) && memory["tokens"].as_u64() > Some(39_000)
        );
        let total = out["total_tokens"].as_f64().expect("total");
        assert!(total <= 76_000.0);
        assert_eq!(
            out["budget_utilization"].as_f64(),
            Some(round4(total / 76_000.0))
        );
        let text = out["text"].as_str().expect("text");
        assert!(text.starts_with("The system_prompt layer.\n\nmemory entry"));
        assert!(text.ends_with("The tool_definitions layer."));
        answers.push(serde_json::to_value(&result).expect("json"));

        // Under a budget tighter than the layers, working memory (2nd) is served before
        // the stream buffer (3rd): it was cut to 596 tokens while the buffer kept all.
        let tight = call(
            &conn.client,
            "assemble-context",
            json!({"preset": "adr-layered", "model": "claude-sonnet-4-5", "budget": 3000,
                   "sections": adr_sections()}),
        )
        .await;
        let tight = structured(&tight);
        let names: Vec<&str> = tight["sections"]
            .as_array()
            .expect("sections")
            .iter()
            .map(|s| s["name"].as_str().expect("name"))
            .collect();
        assert_eq!(
            &names[..3],
            ["system_prompt", "working_memory", "stream_buffer"]
        );
        let memory = &tight["sections"][1];
        assert!(memory["tokens"].as_u64() > Some(2_900), "{memory}");
        assert_eq!(tight["sections"][2]["tokens"], 0, "{tight}");

        // A section's budget adjusts its layer (the ADR: budgets are configurable).
        let adjusted = call(
            &conn.client,
            "assemble-context",
            json!({"preset": "adr-layered", "model": "claude-sonnet-4-5", "sections": [
                {"name": "working_memory", "content": "memory entry ".repeat(1_000), "budget": 500}
            ]}),
        )
        .await;
        assert_eq!(
            adjusted.is_error,
            Some(false),
            "{transport:?}: {adjusted:?}"
        );
        let adjusted = structured(&adjusted);
        assert_eq!(adjusted["sections"][0]["budget"], 500);
        assert_eq!(adjusted["sections"][0]["truncated"], true);

        // A name outside the preset, or a priority the preset fixes, is refused.
        let wrong = call(
            &conn.client,
            "assemble-context",
            json!({"preset": "adr-layered", "sections": [{"name": "system", "content": "x"}]}),
        )
        .await;
        let e = structured(&wrong);
        assert_eq!(code(e), "INVALID_INPUT");
        assert_eq!(e["available_options"][0], "system_prompt");
        let fixed = call(
            &conn.client,
            "assemble-context",
            json!({"preset": "adr-layered", "sections": [{"name": "meta_memory", "content": "x", "priority": 9}]}),
        )
        .await;
        assert_eq!(code(structured(&fixed)), "INVALID_INPUT");
        let unknown = call(
            &conn.client,
            "assemble-context",
            json!({"preset": "adr", "sections": []}),
        )
        .await;
        assert_eq!(
            structured(&unknown)["available_options"],
            json!(["adr-layered"])
        );
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(answers[0], answers[2]);

    // The CLI picks it the same way.
    let scratch = TempTree::new("cl-fidelity-adr");
    let file = scratch.write(
        "sections.json",
        serde_json::to_string(&adr_sections()).expect("json"),
    );
    let (status, out, _) = BIN.run_cli(
        &[
            "assemble",
            "--preset",
            "adr-layered",
            "--model",
            "claude-sonnet-4-5",
            "--json",
            file.to_str().expect("path"),
        ],
        None,
    );
    assert_eq!(status, 0, "{out}");
    let cli: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(&cli, structured_of(&answers[0]));
}

fn structured_of(result: &Value) -> &Value {
    &result["structuredContent"]
}

#[tokio::test]
async fn assemble_defaults_follow_the_schema_and_no_section_is_marker_only() {
    let long = "Retrieved passage about token budgets. ".repeat(100);
    for transport in ALL {
        let conn = BIN.connect(transport, &[]).await;
        let result = call(
            &conn.client,
            "assemble-context",
            json!({"sections": [
                {"name": "system", "content": "Be brief."},
                {"name": "tiny", "content": long, "budget": 3, "priority": 1},
                {"name": "small", "content": long, "budget": 8, "priority": 2}
            ]}),
        )
        .await;
        assert_eq!(result.is_error, Some(false), "{transport:?}: {result:?}");
        let out = structured(&result);
        assert_eq!(out["model"], "gpt-4", "the schema's default model");
        assert_eq!(out["budget"], 7372, "90 % of gpt-4's 8192-token window");
        let sections = out["sections"].as_array().expect("sections");
        let tiny = &sections[1];
        assert_eq!(tiny["name"], "tiny");
        assert_eq!(tiny["tokens"], 0);
        assert_eq!(tiny["truncated"], false, "nothing kept is not `truncated`");
        assert!(
            tiny["dropped"]
                .as_str()
                .unwrap_or_default()
                .contains("truncation mark"),
            "{tiny}"
        );
        let small = &sections[2];
        assert_eq!(small["truncated"], true);
        assert!(small.get("dropped").is_none());
        assert_eq!(out["dropped_sections"], 1);
        assert_eq!(out["truncated_sections"], 1);
        let text = out["text"].as_str().expect("text");
        assert!(text.starts_with("Be brief.\n\nRetrieved"), "{text}");
        assert_eq!(text.matches("[…truncated]").count(), 1, "{text}");
    }
}

/// 3 tokens per word of a one-message count: about 2.7 times the local estimate, so
/// the first assembly is over and must be cut again.
fn three_per_word(body: &Value) -> u64 {
    body["messages"][0]["content"]
        .as_str()
        .map_or(0, |t| 3 * t.split_whitespace().count() as u64)
}

#[tokio::test]
async fn with_exact_claude_the_final_assembly_is_counted_by_the_api_and_recut() {
    let sections = json!([
        {"name": "system_prompt", "content": "Answer from the sources."},
        {"name": "semantic_search", "content": "source text ".repeat(2_000)}
    ]);
    for transport in [Transport::Stdio, Transport::Http] {
        let fake = FakeAnthropic::start(Reply::Count(three_per_word)).await;
        let conn = BIN
            .connect_with_env(transport, &[], &fake.server_env())
            .await;
        let result = call(
            &conn.client,
            "assemble-context",
            json!({"preset": "adr-layered", "model": "claude-sonnet-4-5", "budget": 600,
                   "sections": sections}),
        )
        .await;
        let out = structured(&result);
        assert_eq!(out["exact"], true, "{transport:?}: {out}");
        assert_eq!(out["encoding"], "anthropic_count_tokens");
        assert_eq!(out["method"], "exact: Anthropic count_tokens API");
        let seen = fake.requests();
        assert!(
            seen.len() >= 2,
            "the first assembly was over and re-cut: {}",
            seen.len()
        );
        let (_, last) = seen.last().expect("requests");
        assert_eq!(last["model"], "claude-sonnet-4-5");
        assert_eq!(
            last["messages"][0]["content"], out["text"],
            "the final text was counted"
        );
        let total = out["total_tokens"].as_u64().expect("total");
        assert_eq!(total, three_per_word(last), "total is the API's answer");
        assert!(total <= 600, "{total}");
        assert_eq!(
            out["budget_utilization"].as_f64(),
            Some(round4(total as f64 / 600.0))
        );
        // The first request counted more than the budget.
        assert!(three_per_word(&seen[0].1) > 600);
    }
    // The API failing: the local assembly, with a warning.
    let fake = FakeAnthropic::start(Reply::Status(503)).await;
    let conn = BIN
        .connect_with_env(Transport::Stdio, &[], &fake.server_env())
        .await;
    let result = call(
        &conn.client,
        "assemble-context",
        json!({"model": "claude", "budget": 600, "sections": sections}),
    )
    .await;
    let out = structured(&result);
    assert_eq!(out["exact"], false);
    // The local estimate (its name depends on the Claude generation `claude` means).
    assert!(
        out["encoding"]
            .as_str()
            .is_some_and(|e| e.ends_with("estimate")),
        "{out}"
    );
    assert!(
        out["warning"].as_str().unwrap_or_default().contains("503"),
        "{out}"
    );
}
