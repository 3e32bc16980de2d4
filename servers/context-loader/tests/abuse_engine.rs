//! Hostile requests against the built binary (loopback only) that target the work a
//! call causes inside the server: huge names, too many messages or sections, a
//! 1M-character spec path over 10,000 specs, pathological text. Each must get a fast,
//! clear, small answer, leave the server's memory bounded and its CPU idle, and
//! /healthz answering. Every test stops by itself.

use std::time::Duration;

use serde_json::{Value, json};
use test_support::http1::{authority, post_mcp, request};
use test_support::process::assert_cpu_settles_within;
use test_support::{ALL, Transport};
use test_support::{Binary, TempTree, call, structured};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// CPU seconds a refused call may still use once its answer is out: dropping what was
/// parsed, a fraction of a second. The unbounded work these tests guard against took
/// tens of seconds. CPU time, not a wall-clock window: a loaded machine stretches the
/// wind-down in wall time but not in CPU.
const CPU_AFTER_REFUSAL: f64 = 2.0;

fn tool_call(id: u64, tool: &str, arguments: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
    .to_string()
    .into_bytes()
}

/// The error object of a stateless tools/call reply that must be an isError result.
fn tool_error(reply: &test_support::http1::Reply) -> Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    let body = reply.json();
    assert_eq!(body["result"]["isError"], json!(true), "{body}");
    body["result"]["structuredContent"].clone()
}

async fn assert_healthy(addr: &str) {
    assert_eq!(request(addr, "GET", "/healthz", &[], b"").await.status, 200);
}

#[tokio::test]
async fn over_limit_names_messages_and_sections_get_input_too_large_naming_the_flag() {
    for transport in ALL {
        let connection = BIN
            .connect(transport, &["--max-messages", "5", "--max-sections", "5"])
            .await;
        let client = &connection.client;
        let long_model = "x".repeat(200_000);
        let result = call(
            client,
            "count-tokens",
            json!({"text": "hi", "model": long_model}),
        )
        .await;
        assert_eq!(result.is_error, Some(true), "{transport:?}");
        let error = structured(&result);
        assert_eq!(error["error_code"], "INPUT_TOO_LARGE", "{error}");
        assert_eq!(error["field"], "model");
        assert_eq!(error["flag"], "--max-name-bytes");
        assert_eq!(error["length_bytes"], 200_000);
        // The answer never echoes the name: a preview of it, and the numbers.
        assert!(error.to_string().len() < 2_000, "{transport:?}: {error}");

        let messages: Vec<Value> = (0..6)
            .map(|_| json!({"role": "user", "content": "hi"}))
            .collect();
        let result = call(
            client,
            "fit-messages",
            json!({"messages": messages, "model": "gpt-4o"}),
        )
        .await;
        let error = structured(&result);
        assert_eq!(
            (
                &error["error_code"],
                &error["field"],
                &error["count"],
                &error["limit"],
                &error["flag"]
            ),
            (
                &json!("INPUT_TOO_LARGE"),
                &json!("messages"),
                &json!(6),
                &json!(5),
                &json!("--max-messages")
            ),
            "{transport:?}: {error}"
        );
        let five = &messages[..5];
        let result = call(
            client,
            "fit-messages",
            json!({"messages": five, "model": "gpt-4o"}),
        )
        .await;
        assert_eq!(
            result.is_error,
            Some(false),
            "{transport:?}: the limit itself is accepted"
        );

        let sections: Vec<Value> = (0..6)
            .map(|i| json!({"name": format!("s{i}"), "content": "text"}))
            .collect();
        let result = call(
            client,
            "assemble-context",
            json!({"sections": sections, "budget": 100}),
        )
        .await;
        let error = structured(&result);
        assert_eq!(
            (&error["error_code"], &error["field"], &error["flag"]),
            (
                &json!("INPUT_TOO_LARGE"),
                &json!("sections"),
                &json!("--max-sections")
            ),
            "{transport:?}: {error}"
        );

        let result = call(
            client,
            "spec-tokens",
            json!({"specPath": "y".repeat(5_000)}),
        )
        .await;
        let error = structured(&result);
        assert_eq!(
            (&error["error_code"], &error["field"]),
            (&json!("INPUT_TOO_LARGE"), &json!("specPath")),
            "{transport:?}: {error}"
        );
    }
}

#[tokio::test]
async fn the_cli_refuses_an_over_long_model_name_the_same_way() {
    let model = "m".repeat(5_000);
    let (code, _, stderr) = BIN.run_cli(&["count", "--model", &model, "hi"], None);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("INPUT_TOO_LARGE") && stderr.contains("--max-name-bytes"),
        "{stderr}"
    );
    assert!(
        stderr.len() < 2_000,
        "the name is not echoed: {} bytes",
        stderr.len()
    );
}

/// The row: `model` = "x" x 16.7M burned ~15 s of CPU and echoed 67 MB.
#[tokio::test]
async fn a_16_mb_model_name_is_refused_with_a_small_answer_and_bounded_memory() {
    let (server, url) = BIN
        .spawn_http(&[], &["--stateless", "--max-body-bytes", "40000000"])
        .await;
    let pid = server.id().expect("pid");
    let addr = authority(&url);
    let name = "x".repeat(16_700_000);
    let body = tool_call(1, "count-tokens", json!({"text": "hi", "model": name}));
    drop(name);
    let (reply, health) = tokio::join!(post_mcp(&addr, &[], &body), async {
        request(&addr, "GET", "/healthz", &[], b"").await.status
    });
    assert_eq!(health, 200);
    assert!(
        reply.body.len() < 4_000,
        "answer is {} bytes",
        reply.body.len()
    );
    let error = tool_error(&reply);
    assert_eq!(error["error_code"], "INPUT_TOO_LARGE", "{error}");
    assert_eq!(error["length_bytes"], 16_700_000);
    // Peak memory: a small multiple of the 16.7 MB body (the JSON text, its parsed
    // value and the typed copy), not the hundreds of MB of unbounded work.
    let peak_mb = test_support::process::peak_rss_bytes(pid) / (1024 * 1024);
    assert!(peak_mb < 16 * 10, "peak RSS {peak_mb} MB");
    assert_cpu_settles_within(pid, "a 16.7 MB model name", CPU_AFTER_REFUSAL).await;
    assert_healthy(&addr).await;
}

/// The row: a 1M-character specPath over 10,000 specs ran edit distances
/// for over 60 s and kept a core busy after its 408.
#[tokio::test]
async fn a_huge_spec_path_over_10000_specs_is_refused_and_leaves_no_cpu_behind() {
    let root = TempTree::new("cl-abuse-specs");
    for i in 0..10_000 {
        root.write(
            format!("{i:04}-spec-about-topic-{i}/README.md"),
            format!("# Spec {i}\n"),
        );
    }
    let (server, url) = BIN
        .spawn_http(
            &["--specs-dir", root.arg()],
            &["--stateless", "--max-body-bytes", "40000000"],
        )
        .await;
    let pid = server.id().expect("pid");
    let addr = authority(&url);

    let huge = "z".repeat(1_000_000);
    let reply = post_mcp(
        &addr,
        &[],
        &tool_call(1, "spec-tokens", json!({"specPath": huge})),
    )
    .await;
    let error = tool_error(&reply);
    assert_eq!(
        (&error["error_code"], &error["field"]),
        (&json!("INPUT_TOO_LARGE"), &json!("specPath"))
    );
    assert!(reply.body.len() < 4_000);

    // Just under the limit: a real lookup with a bounded suggestion search.
    let long = "q".repeat(1_000);
    let reply = post_mcp(
        &addr,
        &[],
        &tool_call(2, "spec-tokens", json!({"specPath": long})),
    )
    .await;
    let error = tool_error(&reply);
    assert_eq!(error["error_code"], "SPEC_NOT_FOUND", "{error}");
    // A typo still gets its suggestion.
    let reply = post_mcp(
        &addr,
        &[],
        &tool_call(3, "spec-tokens", json!({"specPath": "spec-about-topc-42"})),
    )
    .await;
    let error = tool_error(&reply);
    assert_eq!(
        error["available_options"][0], "0042-spec-about-topic-42",
        "{error}"
    );

    assert_cpu_settles_within(pid, "huge and long spec paths", CPU_AFTER_REFUSAL).await;
    assert_healthy(&addr).await;
    drop(server);
}

/// The rows: 8 MiB of one letter took 5.1 s and 4 MiB of spaces 2.6 s.
/// Exactness is the differential test's; here: the answer, and the server idle after.
#[tokio::test]
async fn pathological_text_is_counted_and_exactly() {
    let connection = BIN.connect(Transport::HttpStateless, &[]).await;
    for (text, model) in [
        ("a".repeat(8 * 1024 * 1024 - 64), "gpt-4o"),
        (" ".repeat(4 * 1024 * 1024), "gpt-4"),
    ] {
        let expected = context_budget::Tokenizer::OPENAI
            .into_iter()
            .find(|t| {
                t.name()
                    == if model == "gpt-4o" {
                        "o200k_base"
                    } else {
                        "cl100k_base"
                    }
            })
            .expect("tokenizer")
            .count(&text);
        let result = call(
            &connection.client,
            "count-tokens",
            json!({"text": text, "model": model}),
        )
        .await;
        assert_eq!(result.is_error, Some(false));
        assert_eq!(structured(&result)["token_count"], expected, "{model}");
    }
}

/// 100,000 `exclude` globs (a request of a few MB) used to take 8.9 s and 1.4 GB to
/// compile. The call's own paths and globs are now bounded (`--max-patterns`,
/// `--max-pattern-bytes`) before anything is compiled: INPUT_TOO_LARGE naming the
/// flag, over every transport and on the CLI, and the server stays up.
#[tokio::test]
async fn too_many_or_too_long_globs_get_input_too_large_before_any_is_compiled() {
    let root = TempTree::new("cl-abuse-globs");
    root.write("notes.md", "Plans change.\n");
    let root_arg = root.arg();
    let many: Vec<String> = (0..100_000)
        .map(|i| format!("**/never-{i}/*.tmp"))
        .collect();
    let long = format!("{}/*.rs", "a".repeat(5_000));
    for transport in ALL {
        let conn = BIN.connect(transport, &["--root", root_arg]).await;
        for (tool, arguments, flag) in [
            ("file-tokens", json!({"exclude": many}), "--max-patterns"),
            ("load-files", json!({"include": many}), "--max-patterns"),
            (
                "file-tokens",
                json!({"paths": [long]}),
                "--max-pattern-bytes",
            ),
        ] {
            let result = call(&conn.client, tool, arguments).await;
            assert_eq!(result.is_error, Some(true), "{transport:?} {tool}");
            let error = structured(&result);
            assert_eq!(error["error_code"], "INPUT_TOO_LARGE", "{error}");
            assert_eq!(error["flag"], flag, "{error}");
        }
        // Within the bounds, the same server answers.
        let fine = call(&conn.client, "file-tokens", json!({"exclude": ["*.tmp"]})).await;
        assert_eq!(structured(&fine)["files_measured"], 1, "{transport:?}");
    }
    let (code, _, stderr) = BIN.run_cli(
        &[
            "--root",
            root_arg,
            "--max-patterns",
            "2",
            "files",
            "a",
            "b",
            "c",
        ],
        None,
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("INPUT_TOO_LARGE") && stderr.contains("--max-patterns"),
        "{stderr}"
    );
}

/// Issue 20, rows 7 and 10, as a client sees them. A repository can plant links with
/// innocent names to credentials (`config.txt -> .env`, `notes.md -> id_rsa`) and
/// carry `.git/config` with a token, `.docker/config.json`, `.kube/config`: none is
/// loaded, walked (with `hidden`) or named. Two files whose names are not UTF-8
/// (`n\xff.txt`, `n\xfe.txt`) both appear, each under its own name.
#[tokio::test]
async fn credentials_behind_links_and_raw_names_over_every_transport_and_the_cli() {
    use std::os::unix::ffi::OsStrExt;
    let tree = TempTree::new("cl-abuse-secrets");
    for (path, text) in [
        (".env", "API_KEY=ghp_leak1\n"),
        ("id_rsa", "-----BEGIN OPENSSH PRIVATE KEY----- ghp_leak2\n"),
        (
            ".git/config",
            "[remote]\n url = https://x:ghp_leak3@example.com/r\n",
        ),
        (
            ".docker/config.json",
            "{\"auths\":{\"r\":{\"auth\":\"ghp_leak4\"}}}\n",
        ),
        (".kube/config", "token: ghp_leak5\n"),
        (
            "application_default_credentials.json",
            "{\"k\":\"ghp_leak6\"}\n",
        ),
        ("src/main.rs", "fn main() {}\n"),
    ] {
        tree.write(path, text);
    }
    tree.symlink(tree.join(".env"), "config.txt");
    tree.symlink(tree.join("id_rsa"), "notes.md");
    for raw in [&b"src/n\xff.txt"[..], b"src/n\xfe.txt"] {
        tree.write(std::ffi::OsStr::from_bytes(raw), "raw\n");
    }
    let root_arg = tree.arg();
    let shown = |answer: &Value, list: &str| -> Vec<String> {
        let mut paths: Vec<String> = answer[list]
            .as_array()
            .expect("list")
            .iter()
            .filter_map(|f| f["path"].as_str().map(str::to_string))
            .collect();
        paths.sort();
        paths
    };
    for transport in ALL {
        let conn = BIN.connect(transport, &["--root", root_arg]).await;
        for arguments in [
            json!({"rows": 0}),
            json!({"rows": 0, "hidden": true}),
            json!({"rows": 0, "paths": ["config.txt", "notes.md", ".git/config", ".env"]}),
        ] {
            let loaded = call(&conn.client, "load-files", arguments.clone()).await;
            let loaded = structured(&loaded);
            let text = loaded["text"].as_str().expect("text");
            assert!(
                !text.contains("ghp_leak"),
                "{transport:?} {arguments}: {text}"
            );
            let mut arguments = arguments;
            arguments.as_object_mut().expect("object").remove("rows");
            let measured = call(&conn.client, "file-tokens", arguments).await;
            let measured = structured(&measured);
            for file in measured["files"].as_array().expect("files") {
                let path = file["path"].as_str().expect("path");
                assert!(path.starts_with("src/"), "{transport:?}: {path} measured");
            }
        }
        let measured = call(&conn.client, "file-tokens", json!({})).await;
        let measured = structured(&measured);
        assert_eq!(
            shown(measured, "files"),
            ["src/main.rs", "src/n\\xfe.txt", "src/n\\xff.txt"],
            "{transport:?}"
        );
        let secrets: Vec<String> = shown(measured, "skipped");
        for link in [
            "config.txt",
            "notes.md",
            "application_default_credentials.json",
        ] {
            assert!(
                secrets.contains(&link.to_string()),
                "{transport:?}: {secrets:?}"
            );
        }
    }
    let (code, stdout, stderr) = BIN.run_cli(
        &[
            "--root",
            root_arg,
            "load",
            "config.txt",
            "notes.md",
            ".",
            "--hidden",
        ],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("ghp_leak"), "{stdout}");
    assert!(stdout.contains("src/n\\xff.txt") && stdout.contains("src/n\\xfe.txt"));
}

/// Issue 20, row 3, as a client sees it: a repository whose `.gitignore` has 100,000
/// lines (2.5 MB) cost 13 s and 1.7 GB per call. Now an ignore file over
/// `--max-ignore-bytes`, or ignore files holding more than
/// `--max-ignore-patterns` patterns, or one over `--max-pattern-bytes`, stop the call at once with FILE_LIMIT_EXCEEDED
/// naming the file and the flag, over every transport and on the CLI; the server
/// stays up and answers for a folder without them.
#[tokio::test]
async fn a_huge_gitignore_gets_a_fast_clear_error_naming_the_flag() {
    let base = TempTree::new("cl-abuse-ignore");
    for dir in ["huge", "many", "plain", "long"] {
        base.write(format!("{dir}/src/main.rs"), "fn main() {}\n");
    }
    let lines = |n: usize| -> String { (0..n).map(|i| format!("build-{i}/**/*.tmp\n")).collect() };
    base.write("huge/.gitignore", lines(100_000));
    // Small enough in bytes, too many patterns (for the 1,000 the servers allow here).
    base.write("many/src/.gitignore", lines(1_500));
    base.write("plain/.gitignore", "target/\n");
    // One pattern of 5,000 bytes.
    base.write("long/.gitignore", format!("**/{}\n", "a*".repeat(2_500)));
    let (huge, many) = (base.join("huge"), base.join("many"));
    for transport in ALL {
        let conn = BIN
            .connect(
                transport,
                &["--root", base.arg(), "--max-ignore-patterns", "1000"],
            )
            .await;
        for (path, flag) in [
            ("huge", "--max-ignore-bytes"),
            ("many", "--max-ignore-patterns"),
            ("long", "--max-pattern-bytes"),
        ] {
            for tool in ["file-tokens", "load-files"] {
                let result = call(&conn.client, tool, json!({"paths": [path]})).await;
                assert_eq!(result.is_error, Some(true), "{transport:?} {tool} {path}");
                let error = structured(&result);
                assert_eq!(error["error_code"], "FILE_LIMIT_EXCEEDED", "{error}");
                assert_eq!(error["flag"], flag, "{error}");
                assert!(
                    error["ignore_file"]
                        .as_str()
                        .is_some_and(|f| f.ends_with(".gitignore")),
                    "{error}"
                );
            }
        }
        let fine = call(&conn.client, "file-tokens", json!({"paths": ["plain"]})).await;
        assert_eq!(structured(&fine)["files_measured"], 1, "{transport:?}");
    }
    let huge_arg = huge.display().to_string();
    let (code, _, stderr) = BIN.run_cli(&["--root", &huge_arg, "files"], None);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("FILE_LIMIT_EXCEEDED") && stderr.contains("--max-ignore-bytes"),
        "{stderr}"
    );
    // Raised by the operator, a folder is walked with its rules.
    let many_arg = many.display().to_string();
    let (code, stdout, stderr) = BIN.run_cli(
        &[
            "--root",
            &many_arg,
            "--max-ignore-patterns",
            "2000",
            "files",
        ],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("src/main.rs"), "{stdout}");
}

/// Issue 20, row 1, as a client sees it: `notifications/cancelled` used to be ignored
/// once `load-files` had packed its text (60 s more CPU at 5,000 files): the final
/// count of the whole answer ran to its end. The server reports the packing done
/// (progress = total), the test cancels right then, and the server's CPU must settle
/// having used a small fraction of the uncancelled count's (which stops within about
/// a megabyte).
#[tokio::test]
async fn a_load_cancelled_during_its_final_count_stops_the_cpu() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let root = TempTree::new("cl-abuse-final");
    // 400 files, 40 MB of code-like lines: seconds of counting on a dev build.
    let files = 400;
    let body = "let value = compute(alpha, beta) + other;\n".repeat(2_400);
    for i in 0..files {
        root.write(format!("f{i:03}.rs"), &body);
    }
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_context-loader"))
        .args(["--root", root.arg()])
        .args(["--max-answer-tokens", "100000000"])
        .args(["--max-answer-chars", "1000000000"])
        .args(["--max-answer-bytes", "1000000000", "stdio"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let pid = child.id().expect("pid");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut send = async |message: Value| {
        let line = format!("{message}\n");
        stdin.write_all(line.as_bytes()).await.expect("write");
        stdin.flush().await.expect("flush");
    };
    send(test_support::client::initialize_request("cancel-final")).await;
    let _ = lines.next_line().await.expect("init");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    send(
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "load-files", "_meta": {"progressToken": "p"},
        "arguments": {"model": "gpt-4o", "budget": 50_000_000, "rows": 1}}}),
    )
    .await;
    // Packed: progress reaches its total, which counts every file twice (measured,
    // then packed), unlike the walk's and the measuring's own totals.
    loop {
        let line = tokio::time::timeout(Duration::from_secs(120), lines.next_line())
            .await
            .expect("progress in time")
            .expect("read")
            .expect("server closed stdout");
        let message: Value = serde_json::from_str(&line).expect("json");
        assert_ne!(
            message["id"], 7,
            "answered before reporting the packing done"
        );
        let params = &message["params"];
        if message["method"] == "notifications/progress"
            && params["progress"] == params["total"]
            && params["total"]
                .as_f64()
                .is_some_and(|t| t >= 3.0 * files as f64)
        {
            break;
        }
    }
    send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 7, "reason": "test"}}),
    )
    .await;
    // Measured on a dev build: uncancelled, the final count of 40 MB took 9.7 CPU
    // seconds; cancelled, 0.03. CPU time, not a wall-clock window after a sleep: a
    // compiler beside the test stretched the cancel's wind-down into such a window.
    assert_cpu_settles_within(pid, "load-files cancelled in its final count", 1.5).await;
    drop(child);
}

/// Issue 20, row 11. Globs within the byte caps can still nest alternates: 2,000
/// nested `{` overflowed globset's recursive parser and aborted the whole server, and
/// 1,000 nested `{a,` made its regex compilation panic. Such a glob is refused with a
/// short preview of it, and a `.gitignore` line like it (repository content) is
/// skipped, so the same server goes on answering. A 5 MB path gets a small error.
#[tokio::test]
async fn deeply_nested_globs_are_refused_with_a_preview_and_the_server_stays_up() {
    let root = TempTree::new("cl-abuse-nested");
    root.write("src/main.rs", "fn main() {}\n");
    let deep = format!("{}x{}", "{".repeat(2_000), "}".repeat(2_000));
    root.write(".gitignore", format!("{deep}\n*.tmp\n"));
    root.write("src/skip.tmp", "ignored\n");
    let root_arg = root.arg();
    let alternates = format!("{}{}", "{a,".repeat(1_000), "}".repeat(1_000));
    let nested_ok = format!("src/{}.rs", "{main,".repeat(8) + &"}".repeat(8));
    let huge_path = "p/".repeat(2_500_000);
    for transport in ALL {
        let conn = BIN.connect(transport, &["--root", root_arg]).await;
        for (tool, arguments) in [
            ("file-tokens", json!({"include": [deep]})),
            ("load-files", json!({"exclude": [alternates]})),
            ("file-tokens", json!({"paths": [deep]})),
        ] {
            let result = call(&conn.client, tool, arguments).await;
            assert_eq!(result.is_error, Some(true), "{transport:?} {tool}");
            let error = structured(&result);
            assert_eq!(error["error_code"], "INVALID_INPUT", "{error}");
            let text = error.to_string();
            assert!(text.contains("at most 8"), "{text}");
            assert!(text.len() < 1_000, "the error echoes the glob: {text}");
        }
        let result = call(&conn.client, "file-tokens", json!({"paths": [huge_path]})).await;
        assert_eq!(result.is_error, Some(true), "{transport:?}");
        assert!(structured(&result).to_string().len() < 1_000);
        // Eight levels are allowed, and the hostile .gitignore line is skipped while
        // its ordinary line still applies.
        let fine = call(&conn.client, "file-tokens", json!({"paths": [nested_ok]})).await;
        assert_eq!(structured(&fine)["files_measured"], 1, "{transport:?}");
        let all = call(&conn.client, "file-tokens", json!({})).await;
        let all = structured(&all);
        assert_eq!(all["files_measured"], 1, "{transport:?} {all}");
    }
    let (code, _, stderr) = BIN.run_cli(&["--root", root_arg, "files", &deep], None);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("INVALID_INPUT") && stderr.contains("at most 8") && stderr.len() < 1_000,
        "{stderr}"
    );
}

/// Issue 20, row 13. Entries the walk leaves out still cost it a visit: 200k files
/// excluded by a `.gitignore`, or hidden, were walked in full whatever
/// `--max-walk-entries` said. Both now count against it, over every transport and
/// the CLI; with the limit raised, the same folders are measured and the left-out
/// entries reported.
#[tokio::test]
async fn ignored_and_hidden_entries_count_against_the_walk_limit() {
    let base = TempTree::new("cl-abuse-walk");
    for dir in ["ignored", "hidden"] {
        base.write(format!("{dir}/kept.md"), "Kept.\n");
    }
    base.write("ignored/.gitignore", "*.log\n");
    for i in 0..3_000 {
        base.write(format!("ignored/run-{i}.log"), "");
        base.write(format!("hidden/.cache-{i}"), "");
    }
    let base_arg = base.arg();
    for transport in ALL {
        let conn = BIN
            .connect(
                transport,
                &["--root", base_arg, "--max-walk-entries", "1000"],
            )
            .await;
        for path in ["ignored", "hidden"] {
            let result = call(&conn.client, "file-tokens", json!({"paths": [path]})).await;
            assert_eq!(result.is_error, Some(true), "{transport:?} {path}");
            let error = structured(&result);
            assert_eq!(error["error_code"], "FILE_LIMIT_EXCEEDED", "{error}");
            assert!(
                error["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("--max-walk-entries")),
                "{error}"
            );
        }
    }
    for path in ["ignored", "hidden"] {
        let dir = base.join(path).display().to_string();
        let (code, _, stderr) = BIN.run_cli(
            &["--root", &dir, "--max-walk-entries", "1000", "files"],
            None,
        );
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.contains("--max-walk-entries"), "{stderr}");
        let (code, stdout, stderr) = BIN.run_cli(&["--root", &dir, "files", "--json"], None);
        assert_eq!(code, 0, "{stderr}");
        let answer: Value = serde_json::from_str(&stdout).expect("json");
        assert_eq!(answer["excluded"][path], 3000, "{path}: {answer}");
        assert_eq!(answer["files_measured"], 1, "{path}: {answer}");
    }
}
