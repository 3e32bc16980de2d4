//! End-to-end: spec-tokens and spec-budget through the built binary over stdio, HTTP
//! and stateless HTTP (same answers on each), progress notifications to a client that
//! asks for them, structured errors, and the CLI printing what the tool returns.

use std::path::PathBuf;

use serde_json::{Value, json};
use test_support::{ALL, Binary, TempTree, Transport, call, structured};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// A specs root for one test, removed on drop.
fn spec_root(tag: &str) -> TempTree {
    let specs = TempTree::new(&format!("cl-e2e-specs-{tag}"));
    specs.write(
        "059-token-engine/README.md",
        "---\nstatus: planned\n---\n# Token engine\n\nCount tokens.\n\n```rust\nfn main() {}\n```\n",
    );
    specs.write(
        "059-token-engine/DESIGN.md",
        "# Design\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    );
    specs.write(
        "1593-large/README.md",
        format!("# Large\n\n{}", "Prose words here. ".repeat(300)),
    );
    specs.write("070-shared/README.md", "# Shared A\n");
    specs.write(
        "archived/071-shared/README.md",
        "---\nstatus: [broken\n---\n# Shared B\n",
    );
    // Enough files that a listing takes several progress steps.
    for i in 100..140 {
        specs.write(
            format!("{i}-filler/README.md"),
            format!("# Filler {i}\n\nText.\n"),
        );
    }
    specs
}

#[tokio::test]
async fn one_spec_with_breakdown_over_every_transport() {
    let specs = spec_root("one");
    let dir = specs.arg();
    let mut answers = Vec::new();
    for transport in ALL {
        let conn = BIN.connect(transport, &["--specs-dir", dir]).await;
        let result = call(
            &conn.client,
            "spec-tokens",
            json!({"specPath": "59", "includeSubSpecs": true, "detailed": true, "budget": 20}),
        )
        .await;
        assert_eq!(result.is_error, Some(false), "{transport:?}: {result:?}");
        let r = structured(&result);
        assert_eq!(r["spec"], "059-token-engine");
        assert_eq!(r["status"], "planned");
        assert_eq!(r["scope"], "readme_and_sub_specs");
        let files: Vec<&str> = r["files"]
            .as_array()
            .expect("files")
            .iter()
            .filter_map(|f| f["path"].as_str())
            .collect();
        assert_eq!(
            files,
            ["README.md", "DESIGN.md"],
            "relative to the spec folder"
        );
        let b = &r["breakdown"];
        let parts: u64 = ["prose", "code", "tables", "frontmatter"]
            .iter()
            .map(|k| b[k].as_u64().expect("number"))
            .sum();
        assert_eq!(json!(parts), r["total"], "breakdown adds up to the total");
        assert!(b["code"].as_u64() > Some(0) && b["tables"].as_u64() > Some(0));
        assert_eq!(r["performance"]["level"], "excellent");
        assert!(r["performance"]["costMultiplier"].is_number());
        assert_eq!(r["budget"]["fits"], false);
        assert!(r["budget"]["over_by"].as_u64() > Some(0));
        answers.push(serde_json::to_value(&result).expect("serialize"));
    }
    assert_eq!(answers[0], answers[1], "stdio vs http");
    assert_eq!(answers[0], answers[2], "stdio vs stateless http");
}

#[tokio::test]
async fn listing_and_budget_plan() {
    let specs = spec_root("listing");
    let conn = BIN
        .connect(Transport::HttpStateless, &["--specs-dir", specs.arg()])
        .await;
    let listing = call(
        &conn.client,
        "spec-tokens",
        json!({"max_tokens": 1000, "limit": 0}),
    )
    .await;
    let l = structured(&listing);
    assert_eq!(l["scanned"], 44);
    let ids: Vec<&str> = l["specs"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["spec"].as_str())
        .collect();
    assert!(
        !ids.contains(&"1593-large"),
        "over max_tokens is filtered out"
    );
    let broken = l["specs"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["spec"] == "archived/071-shared")
        .expect("the broken spec is still a row");
    assert!(
        broken["error"]
            .as_str()
            .unwrap_or_default()
            .contains("YAML")
    );
    assert_eq!(l["summary"]["with_errors"], 1);

    let budget = call(
        &conn.client,
        "spec-budget",
        json!({"specs": ["59", "1593", "070-shared"], "budget": 400}),
    )
    .await;
    let b = structured(&budget);
    assert_eq!(b["all_fit"], false);
    assert!(b["plan"]["tokens"].as_u64() <= Some(400));
    let modes: Vec<&str> = b["plan"]["specs"]
        .as_array()
        .expect("plan")
        .iter()
        .filter_map(|s| s["load"].as_str())
        .collect();
    assert_eq!(modes, ["full", "none", "readme_only"]);
}

#[tokio::test]
async fn spec_errors_are_structured_and_the_server_stays_up() {
    let specs = spec_root("errors");
    for transport in ALL {
        let conn = BIN.connect(transport, &["--specs-dir", specs.arg()]).await;
        let c = &conn.client;
        let code = |v: &Value| v["error_code"].as_str().unwrap_or_default().to_string();

        let missing = call(c, "spec-tokens", json!({"specPath": "60"})).await;
        assert_eq!(missing.is_error, Some(true));
        assert_eq!(code(structured(&missing)), "SPEC_NOT_FOUND");
        assert_eq!(
            structured(&missing)["available_options"][0],
            "059-token-engine"
        );

        let ambiguous = call(c, "spec-tokens", json!({"specPath": "shared"})).await;
        assert_eq!(code(structured(&ambiguous)), "AMBIGUOUS_SPEC");
        assert_eq!(
            structured(&ambiguous)["available_options"],
            json!(["070-shared", "archived/071-shared"])
        );

        let outside = call(c, "spec-tokens", json!({"specPath": "../../etc/passwd"})).await;
        assert_eq!(code(structured(&outside)), "PATH_OUTSIDE_ROOT");
        let absolute = call(c, "spec-tokens", json!({"specPath": "/etc/passwd"})).await;
        assert_eq!(code(structured(&absolute)), "PATH_OUTSIDE_ROOT");

        let no_file = call(c, "spec-tokens", json!({"specPath": "59/TESTING.md"})).await;
        assert_eq!(code(structured(&no_file)), "SPEC_FILE_NOT_FOUND");

        let typo = call(c, "spec-tokens", json!({"includeSubspecs": true})).await;
        assert_eq!(code(structured(&typo)), "INVALID_INPUT");
        assert!(
            structured(&typo)["message"]
                .as_str()
                .unwrap_or_default()
                .contains("includeSubspecs")
        );

        let model = call(
            c,
            "spec-tokens",
            json!({"specPath": "59", "model": "gpt-9"}),
        )
        .await;
        assert_eq!(code(structured(&model)), "UNSUPPORTED_MODEL");

        let empty = call(c, "spec-budget", json!({"specs": [], "budget": 10})).await;
        assert_eq!(code(structured(&empty)), "INVALID_INPUT");

        let ok = call(c, "spec-tokens", json!({"specPath": "059/DESIGN.md"})).await;
        assert_eq!(ok.is_error, Some(false), "{transport:?} still serves");
        assert_eq!(structured(&ok)["scope"], "file");
    }
}

/// A server keeps its listing of spec folders between calls once the folders are at
/// rest; a folder added, renamed (in a group folder) or removed while it runs is
/// seen by the next call. Each change is made to a listing kept at rest.
#[tokio::test]
async fn spec_folders_changed_while_serving_are_seen_by_the_next_call() {
    let mut servers = Vec::new();
    for transport in ALL {
        let specs = spec_root(&format!("changes-{transport:?}"));
        let conn = BIN.connect(transport, &["--specs-dir", specs.arg()]).await;
        servers.push((transport, specs, conn));
    }
    let at_rest = || {
        tokio::time::sleep(
            context_budget::spec::discovery::SETTLED + std::time::Duration::from_millis(300),
        )
    };

    at_rest().await;
    for (transport, specs, conn) in &servers {
        // Read, then kept and reused.
        for _ in 0..2 {
            assert_eq!(ask(conn, "59").await, "059-token-engine", "{transport:?}");
        }
        std::fs::create_dir(specs.join("200-new")).expect("mkdir");
        std::fs::write(specs.join("200-new/README.md"), "# New\n").expect("write");
        assert_eq!(ask(conn, "200").await, "200-new", "{transport:?}");
    }

    at_rest().await;
    for (transport, specs, conn) in &servers {
        assert_eq!(
            ask(conn, "71").await,
            "archived/071-shared",
            "{transport:?}"
        );
        std::fs::rename(
            specs.join("archived/071-shared"),
            specs.join("archived/072-moved"),
        )
        .expect("rename");
        assert_eq!(ask(conn, "72").await, "archived/072-moved", "{transport:?}");
        assert_eq!(ask(conn, "71").await, "SPEC_NOT_FOUND", "{transport:?}");
    }

    at_rest().await;
    for (transport, specs, conn) in &servers {
        assert_eq!(ask(conn, "59").await, "059-token-engine", "{transport:?}");
        std::fs::remove_dir_all(specs.join("059-token-engine")).expect("rm");
        assert_eq!(ask(conn, "59").await, "SPEC_NOT_FOUND", "{transport:?}");
    }
}

/// What `specPath` names on this server: the spec's id, or the error code.
async fn ask(conn: &test_support::Connection, path: &str) -> String {
    let result = call(&conn.client, "spec-tokens", json!({ "specPath": path })).await;
    let r = structured(&result);
    (r["spec"].as_str().or(r["error_code"].as_str()))
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_missing_specs_dir_is_a_clear_error() {
    let conn = BIN
        .connect(Transport::Stdio, &["--specs-dir", "/nonexistent/specs"])
        .await;
    let result = call(&conn.client, "spec-tokens", json!({})).await;
    let error = structured(&result);
    assert_eq!(error["error_code"], "SPECS_DIR_NOT_FOUND");
    assert_eq!(error["specs_dir"], "/nonexistent/specs");
    assert!(
        error["suggestion"]
            .as_str()
            .unwrap_or_default()
            .contains("--specs-dir")
    );
}

#[tokio::test]
async fn progress_notifications_reach_a_client_that_asks() {
    let specs = spec_root("progress");
    for transport in ALL {
        let call = BIN
            .call_on_the_wire(
                transport,
                &["--specs-dir", specs.arg()],
                "spec-tokens",
                json!({"includeSubSpecs": true}),
                "scan-1",
            )
            .await;
        assert_eq!(
            call.response["result"]["isError"], false,
            "{transport:?}: {}",
            call.response
        );
        // What left the server, in its order (rmcp's client may reorder handlers).
        let seen = call.progress();
        assert!(!seen.is_empty(), "{transport:?}: no progress notifications");
        // The server echoes the token it received on every notification.
        assert!(
            seen.iter().all(|(_, _, token)| token == "scan-1"),
            "{transport:?}: {seen:?}"
        );
        assert!(
            seen.windows(2).all(|w| w[0].0 < w[1].0),
            "{transport:?}: progress must increase: {seen:?}"
        );
        let (last, total, _) = seen.last().expect("one");
        assert_eq!(
            Some(*last),
            *total,
            "{transport:?}: the final step is reported"
        );
        assert_eq!(*total, Some(45.0), "{transport:?}: 45 files in the fixture");
    }
}

#[test]
fn cli_spec_tokens_prints_the_tool_output() {
    let specs = spec_root("cli");
    let dir = specs.arg();
    // `context-loader --specs-dir <fixture> <args>`: (exit code, stdout).
    let cli = |args: &[&str]| {
        let mut all = vec!["--specs-dir", dir];
        all.extend_from_slice(args);
        let (code, out, _) = BIN.run_cli(&all, None);
        (code, out)
    };
    let (code, out) = cli(&[
        "spec-tokens",
        "59",
        "--include-sub-specs",
        "--detailed",
        "--json",
    ]);
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(json["spec"], "059-token-engine");
    assert_eq!(json["files"].as_array().map(Vec::len), Some(2));

    let (code, out) = cli(&["spec-tokens", "59", "--include-sub-specs"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("059-token-engine — Token engine [planned]"),
        "{out}"
    );
    assert!(out.contains("DESIGN.md"), "{out}");

    let (code, out) = cli(&["spec-tokens", "--sort", "name", "--limit", "3"]);
    assert_eq!(code, 0);
    assert!(out.contains("059-token-engine"), "{out}");
    assert!(out.contains("showing 3"), "{out}");

    let (code, out) = cli(&["spec-budget", "59", "1593", "--budget", "100", "--json"]);
    assert_eq!(code, 0);
    let plan: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(plan["all_fit"], false);

    let (code, out) = cli(&["spec-tokens", "4242", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(
        serde_json::from_str::<Value>(&out).expect("json")["error_code"],
        "SPEC_NOT_FOUND"
    );
}

#[test]
fn the_repository_ships_its_own_specs() {
    // The default `--specs-dir specs` works from the repository root out of the box.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = BIN
        .command()
        .current_dir(&root)
        .args(["spec-tokens", "--json", "--sort", "name"])
        .output()
        .expect("run");
    assert!(output.status.success());
    let listing: Value = serde_json::from_slice(&output.stdout).expect("json");
    assert!(listing["summary"]["specs"].as_u64() >= Some(5));
    assert_eq!(listing["summary"]["with_errors"], 0);
    assert_eq!(listing["specs"][0]["spec"], "001-token-engine");
}
