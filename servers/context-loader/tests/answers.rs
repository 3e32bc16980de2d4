//! End-to-end: the answer a model receives (issues 19 and 39). A client passes the
//! model either `JSON.stringify(structuredContent)` (Claude Code, Codex) or
//! `content[0].text` (Gemini CLI, most others); both are the same compact JSON
//! string, and that string is what load-files' budget bounds and what the answer
//! limit of the calling client (`context_budget::clients`) bounds for every tool.
//! Run over stdio, HTTP and stateless HTTP on a tree of 1,200 files and a folder of
//! 2,000 specs.

use context_budget::answer::{DEFAULT_MAX_ANSWER_TOKENS, js_length};
use context_budget::clients::{self, strictest};
use context_budget::{AnswerLimit, HIGHEST_ESTIMATE, Tokenizer};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use test_support::client::NamedClient;
use test_support::{ALL, Binary, TempTree, Transport, call, structured};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// A deterministic stream of small numbers (an LCG): the same tree on every run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

const WORDS: [&str; 16] = [
    "fn",
    "let",
    "mut",
    "self",
    "match",
    "return",
    "struct",
    "impl",
    "pub",
    "use",
    "mod",
    "where",
    "Some",
    "None",
    "Ok(value)",
    "Err(\"failed\")",
];

/// 1,200 source files of 5 to 60 lines in 40 folders: quotes, tabs and
/// indentation, which the answer's JSON escapes.
fn source_tree(test: &str) -> TempTree {
    let dir = TempTree::new(&format!("cl-answers-tree-{test}"));
    let mut random = Lcg(19);
    for i in 0..1200 {
        let mut text = String::new();
        for line in 0..5 + random.below(56) {
            text.push_str(&"    ".repeat(random.below(4) as usize));
            for _ in 0..2 + random.below(8) {
                text.push_str(WORDS[random.below(16) as usize]);
                text.push(' ');
            }
            text.push_str(&format!("// \"line\" {line}\t;\n"));
        }
        dir.write(format!("src/mod_{:02}/file_{i:04}.rs", i % 40), &text);
    }
    dir
}

/// 2,000 specs (`NNN-name/README.md`, every fifth with a DESIGN.md).
fn spec_folder(test: &str) -> TempTree {
    let dir = TempTree::new(&format!("cl-answers-specs-{test}"));
    let mut random = Lcg(2000);
    for i in 1..=2000 {
        let mut readme = format!(
            "---\nstatus: planned\ncreated: '2026-01-01'\n---\n\n# Spec {i}\n\n## Plan\n\n"
        );
        for _ in 0..3 + random.below(20) {
            readme.push_str("The loader measures every file before it packs them. ");
        }
        readme.push('\n');
        let folder = format!("{i:03}-spec-number-{i}");
        dir.write(format!("{folder}/README.md"), &readme);
        if i % 5 == 0 {
            dir.write(format!("{folder}/DESIGN.md"), "# Design\n\nTwo steps.\n");
        }
    }
    dir
}

/// What the model receives from `result`, checked to be one string whichever way
/// the client reads: the compact JSON of structuredContent, and the text content.
fn received(result: &CallToolResult) -> String {
    let compact = serde_json::to_string(structured(result)).expect("serialize");
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .expect("text content");
    assert_eq!(
        text, compact,
        "content[0].text is the same string as JSON.stringify(structuredContent)"
    );
    compact
}

/// The answer is within `limit`: in characters as JavaScript counts them, in UTF-8
/// bytes, and in tokens by the highest estimate.
fn assert_within(limit: AnswerLimit, what: &str, answer: &str) {
    let (chars, bytes) = (js_length(answer), answer.len());
    let tokens = HIGHEST_ESTIMATE.count(answer) as u64;
    assert!(
        chars <= limit.chars && bytes <= limit.bytes && tokens <= limit.tokens,
        "{what}: {chars} characters, {bytes} bytes, {tokens} tokens over {limit}"
    );
}

/// The row of the table for `id`.
fn client(id: &str) -> &'static clients::Client {
    clients::by_id(id).expect("a client of the table")
}

/// Text files in Cyrillic and Chinese (two and three UTF-8 bytes a character): what
/// a byte limit (Codex) and a character limit (Gemini CLI) measure differently.
fn add_foreign_text(tree: &TempTree) {
    for i in 0..60 {
        tree.write(
            format!("docs/ru/page_{i:02}.md"),
            "Сколько стоит этот файл в токенах, прежде чем его загрузить? ".repeat(30),
        );
        tree.write(
            format!("docs/zh/page_{i:02}.md"),
            "在加载之前，这个文件要花多少个词元？".repeat(60),
        );
    }
}

#[tokio::test]
async fn load_files_budget_bounds_the_answer_the_model_receives() {
    let tree = source_tree("budget");
    // The budget is what this test bounds: the operator's flags give every client
    // (stateless HTTP's, unnamed, too) the room of Claude Code's limit.
    let room = [
        "--max-answer-chars",
        "45000",
        "--max-answer-bytes",
        "100000000",
    ];
    for transport in ALL {
        let conn = BIN
            .connect(transport, &[&["--root", tree.arg()][..], &room].concat())
            .await;
        for (model, tokenizer) in [
            ("gpt-4o", Tokenizer::O200kBase),
            ("claude-opus-4-7", Tokenizer::Claude47Estimate),
        ] {
            for budget in [3_000u64, 10_000] {
                let result = call(
                    &conn.client,
                    "load-files",
                    json!({"paths": ["."], "model": model, "budget": budget}),
                )
                .await;
                assert_eq!(result.is_error, Some(false), "{result:?}");
                let answer = received(&result);
                let tokens = tokenizer.count(&answer) as u64;
                let what = format!("{transport:?} {model} budget {budget}");
                let a = structured(&result);
                assert_eq!(a["answer_tokens"], tokens, "{what}: the count it reports");
                assert!(tokens <= budget, "{what}: {tokens} tokens");
                assert!(
                    tokens * 100 >= budget * 85,
                    "{what}: {tokens} tokens, under 85 % of the budget"
                );
                // The text takes most of the answer; the lists are cut, counts cover all.
                let text = a["text"].as_str().expect("text");
                assert!(js_length(text) * 10 >= js_length(&answer) * 6, "{what}");
                assert_eq!(
                    a["included_files"].as_u64().unwrap_or(0)
                        + a["omitted_files"].as_u64().unwrap_or(0),
                    1200,
                    "{what}"
                );
                assert!(a["omitted"].as_array().expect("omitted").len() <= 10);
                assert_eq!(a["truncated"], true);
            }
        }
    }
}

#[tokio::test]
async fn default_answers_of_every_tool_stay_under_their_clients_limit() {
    let (tree, specs) = (source_tree("defaults"), spec_folder("defaults"));
    add_foreign_text(&tree);
    let spec_names: Vec<String> = (1..=200).map(|i| i.to_string()).collect();
    let long_text = "Every file is measured before it is packed. ".repeat(2_000);
    let calls = [
        ("count-tokens", json!({"text": long_text})),
        ("list-models", json!({})),
        ("list-models", json!({"limit": 0})),
        ("file-tokens", json!({})),
        ("file-tokens", json!({"limit": 0})),
        ("load-files", json!({})),
        ("load-files", json!({"model": "gpt-4o"})),
        ("load-files", json!({"model": "claude-opus-4-7"})),
        ("spec-tokens", json!({})),
        ("spec-tokens", json!({"limit": 0, "includeSubSpecs": true})),
        ("spec-tokens", json!({"specPath": "5", "detailed": true})),
        (
            "spec-budget",
            json!({"specs": spec_names, "budget": 100_000}),
        ),
        (
            "fit-messages",
            json!({"messages": [{"role": "user", "content": "Plan the load."}], "model": "gpt-4o"}),
        ),
        // fit-messages answers with the messages it keeps: kept messages over the
        // limit are refused by the registry's last-line check, never sent whole.
        (
            "fit-messages",
            json!({"messages": [{"role": "user", "content": long_text}], "model": "gpt-4o"}),
        ),
        (
            "assemble-context",
            json!({"sections": [{"name": "docs", "content": "Short."}]}),
        ),
        // An error answer stays small too.
        ("load-files", json!({"paths": ["missing"]})),
    ];
    // Each client of the table, one that is not, and stateless HTTP, where the
    // server never learns who calls (the `initialize`-era protocol names the client
    // only at `initialize`, which there is a request of its own).
    let runs = [
        (Transport::Stdio, "claude-code", client("claude-code").limit),
        (Transport::Http, "codex-mcp-client", client("codex").limit),
        (
            Transport::Stdio,
            "gemini-cli-mcp-client",
            client("gemini-cli").limit,
        ),
        (Transport::Stdio, "an-editor-not-in-the-table", strictest()),
        (Transport::HttpStateless, "claude-code", strictest()),
    ];
    for (transport, name, limit) in runs {
        let conn = BIN
            .connect_as(
                NamedClient(name),
                transport,
                &["--root", tree.arg(), "--specs-dir", specs.arg()],
                &[],
            )
            .await;
        for (tool, args) in &calls {
            let result = call(&conn.client, tool, args.clone()).await;
            let what = format!("{transport:?} {name} {tool} {}", preview(args));
            let expect_error = args.get("paths").is_some()
                || *tool == "fit-messages" && args.to_string().len() > 10_000
                // A plan of 200 specs lists each: over the strictest limit, the
                // answer is a refusal saying to ask for fewer.
                || *tool == "spec-budget" && limit.bytes < 20_000;
            assert_eq!(result.is_error, Some(expect_error), "{what}: {result:?}");
            let answer = received(&result);
            if *tool == "spec-budget" && expect_error {
                assert!(answer.contains("fewer `specs`"), "{answer}");
            }
            if *tool == "fit-messages" && expect_error {
                assert_eq!(structured(&result)["error_code"], "ANSWER_TOO_LARGE");
                assert!(answer.contains("smaller `budget`"), "{answer}");
            }
            assert_within(limit, &what, &answer);
        }
    }
}

/// Issue 39: the same `load-files` over Cyrillic and Chinese text is held to each
/// client's own unit, and uses most of it; an answer over it says whose limit.
#[tokio::test]
async fn each_client_gets_answers_sized_in_its_own_unit() {
    let tree = TempTree::new("cl-answers-units");
    add_foreign_text(&tree);
    for (name, limit) in [
        ("codex-mcp-client", client("codex").limit),
        ("gemini-cli-mcp-client", client("gemini-cli").limit),
        ("claude-code", client("claude-code").limit),
    ] {
        let conn = BIN
            .connect_as(
                NamedClient(name),
                Transport::Stdio,
                &["--root", tree.arg()],
                &[],
            )
            .await;
        let result = call(&conn.client, "load-files", json!({"model": "gpt-4o"})).await;
        let answer = received(&result);
        assert_within(limit, name, &answer);
        // The unit that binds is used to at least 85 %.
        let used = match name {
            "codex-mcp-client" => answer.len() as f64 / limit.bytes as f64,
            _ => js_length(&answer) as f64 / limit.chars as f64,
        };
        assert!(used >= 0.85, "{name}: {:.0} % of its limit", used * 100.0);
        // It says which limit held it.
        assert_eq!(
            structured(&result)["answer_limit"],
            limit.to_string(),
            "{name}"
        );
        // An answer no call can shrink: ANSWER_TOO_LARGE, naming whose limit.
        let content = "Раздел длиннее, чем ответ может быть. ".repeat(1_500);
        let refused = call(
            &conn.client,
            "assemble-context",
            json!({"sections": [{"name": "docs", "content": content}], "model": "gpt-4o"}),
        )
        .await;
        let error = structured(&refused);
        assert_eq!(error["error_code"], "ANSWER_TOO_LARGE", "{name}");
        assert_eq!(error["answer_limit"], limit.to_string(), "{name}");
    }
    // The operator's flag holds for every client, in its unit.
    let conn = BIN
        .connect_as(
            NamedClient("gemini-cli-mcp-client"),
            Transport::Stdio,
            &["--root", tree.arg(), "--max-answer-bytes", "20000"],
            &[],
        )
        .await;
    let answer = received(&call(&conn.client, "load-files", json!({"model": "gpt-4o"})).await);
    assert!(
        answer.len() <= 20_000 && answer.len() >= 17_000,
        "{}",
        answer.len()
    );
}

fn preview(args: &Value) -> String {
    args.to_string().chars().take(80).collect()
}

/// Follows `next` from `offset` 0 and returns every row's `key`.
async fn every_page(
    conn: &test_support::Connection<NamedClient>,
    tool: &str,
    args: Value,
    rows: &str,
    key: &str,
) -> Vec<String> {
    let mut seen = Vec::new();
    let mut offset = 0u64;
    for _ in 0..100 {
        let mut args = args.clone();
        args["offset"] = json!(offset);
        let result = call(&conn.client, tool, args).await;
        assert_eq!(result.is_error, Some(false), "{result:?}");
        assert_within(client("claude-code").limit, tool, &received(&result));
        let page = structured(&result);
        assert_eq!(page["offset"], offset);
        for row in page[rows].as_array().expect("rows") {
            seen.push(row[key].as_str().expect("key").to_string());
        }
        match page["next"].as_u64() {
            Some(next) => {
                assert!(next > offset && page["truncated"] == true, "{page:?}");
                offset = next;
            }
            None => {
                assert_eq!(page["truncated"], false);
                return seen;
            }
        }
    }
    panic!("{tool}: more than 100 pages");
}

#[tokio::test]
async fn listings_page_under_the_limit_and_next_returns_the_rest() {
    let (tree, specs) = (source_tree("pages"), spec_folder("pages"));
    let conn = BIN
        .connect_as(
            NamedClient("claude-code"),
            Transport::Stdio,
            &["--root", tree.arg(), "--specs-dir", specs.arg()],
            &[],
        )
        .await;
    let first = call(&conn.client, "list-models", json!({})).await;
    let count = structured(&first)["count"].as_u64().expect("count") as usize;
    for args in [json!({}), json!({"limit": 0}), json!({"limit": 7})] {
        let models = every_page(&conn, "list-models", args, "models", "name").await;
        assert_eq!(models.len(), count);
        let unique: std::collections::BTreeSet<&String> = models.iter().collect();
        assert_eq!(unique.len(), count, "no row twice");
    }
    // limit 0 asks for every row: the answer limit cuts it into pages instead.
    let files = every_page(
        &conn,
        "file-tokens",
        json!({"limit": 0, "sort": "path"}),
        "files",
        "path",
    )
    .await;
    assert_eq!(files.len(), 1200);
    // A page the answer limit ended says which limit; one `limit` ended does not.
    let cut = call(&conn.client, "file-tokens", json!({"limit": 0})).await;
    assert_eq!(
        structured(&cut)["answer_limit"],
        client("claude-code").limit.to_string()
    );
    let asked = call(&conn.client, "file-tokens", json!({"limit": 7})).await;
    assert_eq!(structured(&asked)["truncated"], true);
    assert!(structured(&asked).get("answer_limit").is_none());
    assert!(
        files.windows(2).all(|w| w[0] < w[1]),
        "in order, no repeats"
    );
    let listed = every_page(
        &conn,
        "spec-tokens",
        json!({"limit": 0, "sort": "name"}),
        "specs",
        "spec",
    )
    .await;
    assert_eq!(listed.len(), 2000);
    let names: Vec<String> = (1..=200).map(|i| i.to_string()).collect();
    let costs = every_page(
        &conn,
        "spec-budget",
        json!({"specs": names, "budget": 1000}),
        "specs",
        "spec",
    )
    .await;
    assert_eq!(costs.len(), 200);
}

#[tokio::test]
async fn budgets_and_answers_over_the_limit_get_clear_errors() {
    let tree = source_tree("errors");
    let conn = BIN
        .connect(
            test_support::Transport::Stdio,
            &["--root", tree.arg(), "--max-answer-chars", "6000"],
        )
        .await;
    let error = |result: &CallToolResult| {
        assert_eq!(result.is_error, Some(true), "{result:?}");
        let answer = received(result);
        assert!(js_length(&answer) < 2_000, "an error answer stays small");
        structured(result).clone()
    };
    // An explicit budget over the limit: refused, naming the limit.
    let over = error(&call(&conn.client, "load-files", json!({"budget": 20_001})).await);
    assert_eq!(over["error_code"], "ANSWER_TOO_LARGE");
    assert_eq!(over["max_answer_tokens"], DEFAULT_MAX_ANSWER_TOKENS);
    assert!(over["suggestion"].as_str().unwrap_or("").contains("budget"));
    // A budget the report alone does not fit.
    let small = error(&call(&conn.client, "load-files", json!({"budget": 50})).await);
    assert_eq!(small["error_code"], "CONTEXT_OVERFLOW");
    // The default budget is packed within the character limit.
    let packed = call(&conn.client, "load-files", json!({"model": "gpt-4o"})).await;
    assert!(js_length(&received(&packed)) <= 6000);
    assert_eq!(structured(&packed)["budget_source"], "answer_limit");
    // Listings page within it.
    let models = call(&conn.client, "list-models", json!({"limit": 0})).await;
    assert!(js_length(&received(&models)) <= 6000);
    assert_eq!(structured(&models)["truncated"], true);
    // Any other answer over the limit: the last-line check in the registry.
    let content = "A section longer than the answer limit. ".repeat(400);
    let assembled = error(
        &call(
            &conn.client,
            "assemble-context",
            json!({"sections": [{"name": "docs", "content": content}]}),
        )
        .await,
    );
    assert_eq!(assembled["error_code"], "ANSWER_TOO_LARGE");
    assert_eq!(assembled["max_answer_chars"], 6000);
}

#[test]
fn the_answer_limit_flags_refuse_values_too_small_for_an_error() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_context-loader"))
        .args(["--max-answer-tokens", "10", "count", "hi"])
        .output()
        .expect("run");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--max-answer-tokens"));
}

/// The README's client table is the engine's: each row's client, the name it sends
/// and the limit its answers are held to, and the strictest for any other client.
#[test]
fn the_readme_shows_the_client_table_the_server_applies() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let bounds = |limit: AnswerLimit| {
        let shown = limit.to_string();
        shown[..shown.rfind(" (").expect("a source")].to_string()
    };
    for client in clients::CLIENTS {
        let start = format!(
            "| {} {} | `{}` |",
            client.product, client.version, client.info_name
        );
        let row = readme
            .lines()
            .find(|line| line.starts_with(&start))
            .unwrap_or_else(|| panic!("no README row starts with {start}"));
        assert!(
            row.ends_with(&format!("| {} |", bounds(client.limit))),
            "{row}"
        );
    }
    let other = readme
        .lines()
        .find(|line| line.starts_with("| any other client"))
        .expect("a row for any other client");
    assert!(other.contains(&bounds(strictest())), "{other}");
}
