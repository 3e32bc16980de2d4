//! The MCP App (`io.modelcontextprotocol/ui`): a client that declares the extension
//! gets the page as a resource and the measuring tools linked to it, over stdio and
//! HTTP; every other client gets what it got before; what the model reads does not
//! change for anyone; the page is self-contained; and the CLI's `--html` report
//! embeds the same result, escaped.

use context_budget::Tokenizer;
use context_loader::app::{EXTENSION, MIME_TYPE, PAGE, URI, VIEWS};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ExtensionCapabilities, Implementation,
    ReadResourceRequestParams, ResourceContents, Tool,
};
use rmcp::service::ServiceError;
use serde_json::{Value, json};
use test_support::{Binary, TempTree, Transport, call};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// A host that renders MCP Apps, as the extension says it declares itself.
#[derive(Debug, Clone, Copy)]
pub struct AppsHost;

impl rmcp::ClientHandler for AppsHost {
    fn get_info(&self) -> ClientConfig {
        let mut extensions = ExtensionCapabilities::new();
        extensions.insert(
            EXTENSION.into(),
            json!({ "mimeTypes": [MIME_TYPE] })
                .as_object()
                .cloned()
                .expect("object"),
        );
        ClientConfig::new(
            ClientCapabilities::builder()
                .enable_extensions_with(extensions)
                .build(),
            Implementation::new("apps-host", "1.0.0"),
        )
    }
}

/// The transports whose sessions remember the client's `initialize`.
const SESSIONS: [Transport; 2] = [Transport::Stdio, Transport::Http];

pub fn linked(tools: &[Tool]) -> Vec<String> {
    let mut names: Vec<String> = tools
        .iter()
        .filter(|t| {
            t.meta
                .as_ref()
                .and_then(|m| m.0.get("ui"))
                .and_then(|ui| ui.get("resourceUri"))
                .and_then(Value::as_str)
                == Some(URI)
        })
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    names
}

fn views() -> Vec<String> {
    let mut names: Vec<String> = VIEWS.iter().map(|s| s.to_string()).collect();
    names.sort();
    names
}

#[tokio::test]
async fn an_apps_host_gets_the_page_and_exactly_the_five_links_over_stdio_and_http() {
    for transport in SESSIONS {
        let conn = BIN.connect_as(AppsHost, transport, &[], &[]).await;
        let info = conn.client.peer_info().expect("initialize result");
        assert!(info.capabilities.resources.is_some(), "{transport:?}");
        let extension = &info.capabilities.extensions.as_ref().expect("extensions")[EXTENSION];
        assert_eq!(extension["mimeTypes"], json!([MIME_TYPE]), "{transport:?}");

        let tools = conn.client.list_all_tools().await.expect("tools/list");
        assert_eq!(linked(&tools), views(), "{transport:?}");
        for tool in tools.iter().filter(|t| !VIEWS.contains(&t.name.as_ref())) {
            assert!(
                tool.meta.is_none(),
                "{transport:?}: {} is not drawn",
                tool.name
            );
        }

        let resources = conn
            .client
            .list_all_resources()
            .await
            .expect("resources/list");
        assert_eq!(resources.len(), 1, "{transport:?}: {resources:?}");
        assert_eq!(resources[0].uri, URI);
        assert_eq!(resources[0].mime_type.as_deref(), Some(MIME_TYPE));
        let meta = &resources[0].meta.as_ref().expect("_meta").0["ui"];
        assert_eq!(meta["csp"]["connectDomains"], json!([]), "{transport:?}");
        assert_eq!(meta["csp"]["resourceDomains"], json!([]), "{transport:?}");

        let read = conn
            .client
            .read_resource(ReadResourceRequestParams::new(URI))
            .await
            .expect("resources/read");
        assert_eq!(read.contents.len(), 1);
        let ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            meta,
        } = &read.contents[0]
        else {
            panic!("{transport:?}: the page as text: {:?}", read.contents[0]);
        };
        assert_eq!((uri.as_str(), mime_type.as_deref()), (URI, Some(MIME_TYPE)));
        assert_eq!(text, PAGE, "{transport:?}");
        assert_eq!(
            meta.as_ref().expect("_meta").0["ui"]["csp"]["connectDomains"],
            json!([])
        );
    }
}

#[tokio::test]
async fn a_client_without_the_extension_sees_no_page_no_links_and_no_new_capability() {
    for transport in test_support::ALL {
        let conn = BIN.connect(transport, &[]).await;
        let info = conn.client.peer_info().expect("initialize result");
        assert!(info.capabilities.resources.is_none(), "{transport:?}");
        assert!(info.capabilities.extensions.is_none(), "{transport:?}");
        let tools = conn.client.list_all_tools().await.expect("tools/list");
        assert!(
            tools.iter().all(|t| t.meta.is_none()),
            "{transport:?}: no _meta on any tool"
        );
        // Asked anyway, the list is empty, as it was.
        let resources = conn
            .client
            .list_all_resources()
            .await
            .expect("resources/list");
        assert!(resources.is_empty(), "{transport:?}: {resources:?}");
    }
}

#[tokio::test]
async fn stateless_http_serves_the_page_but_cannot_link_without_the_clients_capabilities() {
    // Each stateless request is a session of its own: under the older protocol a
    // tools/list carries no capabilities, so no link; the page itself is served.
    let conn = BIN
        .connect_as(AppsHost, Transport::HttpStateless, &[], &[])
        .await;
    let info = conn.client.peer_info().expect("initialize result");
    assert!(
        info.capabilities.resources.is_some(),
        "initialize itself carries the capabilities"
    );
    let tools = conn.client.list_all_tools().await.expect("tools/list");
    let links = linked(&tools);
    assert!(
        links.is_empty(),
        "a stateless tools/list under the older protocol knows no client: {links:?}"
    );
    let read = conn
        .client
        .read_resource(ReadResourceRequestParams::new(URI))
        .await
        .expect("resources/read");
    assert!(matches!(
        &read.contents[0],
        ResourceContents::TextResourceContents { text, mime_type, .. }
            if text == PAGE && mime_type.as_deref() == Some(MIME_TYPE)
    ));
}

#[tokio::test]
async fn an_unknown_resource_is_a_not_found_error_naming_the_page() {
    for transport in test_support::ALL {
        let conn = BIN.connect_as(AppsHost, transport, &[], &[]).await;
        let error = conn
            .client
            .read_resource(ReadResourceRequestParams::new(
                "ui://context-loader/nope.html",
            ))
            .await
            .expect_err("not found");
        let ServiceError::McpError(error) = error else {
            panic!("{transport:?}: a JSON-RPC error: {error:?}");
        };
        // -32002, or -32602 under 2026-07-28 (SEP-2164).
        assert!(
            [-32002, -32602].contains(&error.code.0),
            "{transport:?}: {error:?}"
        );
        let data = error.data.expect("data");
        assert_eq!(data["resources"], json!([URI]), "{transport:?}");
        assert!(
            data["suggestion"]
                .as_str()
                .expect("suggestion")
                .contains(URI),
            "{transport:?}: {data}"
        );
    }
}

/// One call of each drawn tool, with arguments that work under [`small_tree`].
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("file-tokens", json!({"model": "gpt-4o"})),
        (
            "load-files",
            json!({"paths": ["a.md", "b/c.md"], "model": "gpt-4o", "budget": 2000}),
        ),
        (
            "mcp-tokens",
            json!({"tools": [{"name": "t", "description": "A tool.", "inputSchema": {"type": "object"}}], "client": "claude-code"}),
        ),
        (
            "assemble-context",
            json!({"budget": 30, "model": "gpt-4o", "sections": [
                {"name": "system", "content": "Answer briefly."},
                {"name": "notes", "content": "word ".repeat(200)}
            ]}),
        ),
        (
            "fit-messages",
            json!({"model": "gpt-4o", "reserve_output_tokens": 115100, "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "word ".repeat(120)},
                {"role": "user", "content": "hi"}
            ]}),
        ),
    ]
}

fn small_tree() -> TempTree {
    let tree = TempTree::new("app");
    tree.write("a.md", "# A\n\nSome text about tokens.\n");
    tree.write("b/c.md", "More text, in a folder.\n");
    tree
}

#[tokio::test]
async fn what_the_model_reads_is_byte_identical_with_and_without_the_extension() {
    let tree = small_tree();
    let args = ["--root", tree.arg()];
    for transport in SESSIONS {
        let plain = BIN.connect(transport, &args).await;
        let host = BIN.connect_as(AppsHost, transport, &args, &[]).await;
        for (tool, arguments) in calls() {
            let before = call(&plain.client, tool, arguments.clone()).await;
            let after = call(&host.client, tool, arguments).await;
            assert_eq!(before.is_error, Some(false), "{tool}: {before:?}");
            let text = |r: &rmcp::model::CallToolResult| {
                serde_json::to_string(&r.content).expect("content")
            };
            assert_eq!(text(&before), text(&after), "{transport:?} {tool}: content");
            assert_eq!(
                before.structured_content, after.structured_content,
                "{transport:?} {tool}"
            );
            assert!(after.meta.is_none(), "{transport:?} {tool}: no _meta added");
        }
    }
}

/// The list as Claude Code sends it to the model (see `tool_list.rs`).
pub fn claude_code_tokens(tools: &[Tool]) -> usize {
    tools
        .iter()
        .map(|tool| {
            let mut schema = (*tool.input_schema).clone();
            schema.remove("$schema");
            let sent = json!({
                "name": format!("mcp__context-loader__{}", tool.name),
                "description": tool.description.as_deref().unwrap_or_default(),
                "input_schema": schema,
            });
            Tokenizer::O200kBase.count(&serde_json::to_string(&sent).expect("JSON"))
        })
        .sum()
}

/// `mcp-tokens --file` over a saved tools/list, for one client: what it sends.
pub fn client_cost(list: &Value, client: &str) -> u64 {
    let tree = TempTree::new("app-list");
    let file = tree.write("tools.json", serde_json::to_string(list).expect("JSON"));
    let (code, stdout, stderr) = BIN.run_cli(
        &[
            "mcp-tokens",
            "--file",
            file.to_str().expect("utf-8"),
            "--client",
            client,
            "--json",
        ],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
    let answer: Value = serde_json::from_str(&stdout).expect("JSON");
    answer["client"]["eager_tokens"]
        .as_u64()
        .expect("eager_tokens")
}

#[tokio::test]
async fn the_tool_list_each_client_sends_grows_by_at_most_two_percent() {
    let plain = BIN.connect(Transport::Stdio, &[]).await;
    let host = BIN.connect_as(AppsHost, Transport::Stdio, &[], &[]).await;
    let mut before = plain.client.list_all_tools().await.expect("tools/list");
    let mut after = host.client.list_all_tools().await.expect("tools/list");
    before.sort_by(|a, b| a.name.cmp(&b.name));
    after.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(linked(&after), views());

    let (b, a) = (claude_code_tokens(&before), claude_code_tokens(&after));
    println!("as Claude Code sends it: {b} -> {a} o200k tokens");
    assert!(a * 100 <= b * 102, "{b} -> {a}");
    assert!(a <= 2_000, "the whole list's budget (tool_list.rs): {a}");

    let raw =
        |tools: &[Tool]| Tokenizer::O200kBase.count(&serde_json::to_string(tools).expect("JSON"));
    println!(
        "tools/list JSON itself (what the host receives, not the model): {} -> {} o200k tokens",
        raw(&before),
        raw(&after)
    );

    let before = json!({ "tools": before });
    let after = json!({ "tools": after });
    for client in context_budget::clients::IDS {
        let (b, a) = (client_cost(&before, client), client_cost(&after, client));
        println!("mcp-tokens --client {client}: {b} -> {a} tokens");
        assert!(a * 100 <= b * 102, "{client}: {b} -> {a}");
    }
}

#[test]
fn the_page_is_one_small_self_contained_document_that_writes_no_markup() {
    assert!(PAGE.len() <= 150 * 1024, "{} bytes", PAGE.len());
    assert!(PAGE.starts_with("<!DOCTYPE html>"));
    let lower = PAGE.to_lowercase();
    for banned in [
        "http:",
        "https:",
        "//",
        "eval(",
        "new function",
        "innerhtml",
        "outerhtml",
        "insertadjacenthtml",
        "document.write",
        "srcdoc",
        "<link",
        "<img",
        "<iframe",
        "@import",
        "url(",
        "fetch(",
        "xmlhttprequest",
        "websocket",
        "import(",
    ] {
        assert!(!lower.contains(banned), "the page contains {banned:?}");
    }
    // No inline event handler attributes (`onclick=`), and no `src=` at all.
    let bytes = lower.as_bytes();
    for (at, _) in lower.match_indices(" on") {
        let name: String = lower[at + 3..]
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        let rest = &bytes[at + 3 + name.len()..];
        assert!(
            name.is_empty() || rest.first() != Some(&b'='),
            "an inline handler: on{name}="
        );
    }
    assert!(!lower.contains("src="), "nothing is loaded");
    // Its own policy forbids any connection and any other origin.
    assert!(PAGE.contains("default-src 'none'") && PAGE.contains("connect-src 'none'"));
}

/// The `--html` report's embedded data block, parsed.
fn embedded(html: &str) -> Value {
    let open = r#"<script type="application/json" id="report-data">"#;
    let start = html.find(open).expect("the data block") + open.len();
    let end = start + html[start..].find("</script>").expect("its end");
    serde_json::from_str(&html[start..end]).expect("JSON")
}

#[test]
fn html_reports_embed_the_json_result_escaped_for_every_command_that_takes_html() {
    let tree = TempTree::new("app-html");
    // A path holding `</script>` and markup: a folder `x<` with a folder `script>`.
    tree.write("x</script><img src=x onerror=alert(1)>/n.md", "hostile\n");
    tree.write("a.md", "# A\n\nSome text about tokens.\n");
    let out = TempTree::new("app-html-out");
    let sections = out.write(
        "sections.json",
        r#"{"sections":[{"name":"system","content":"Be brief."},{"name":"notes","content":"</script> & more"}]}"#,
    );
    let messages = out.write(
        "messages.json",
        r#"[{"role":"system","content":"Be brief."},{"role":"user","content":"</script>"}]"#,
    );
    let tools = out.write(
        "tools.json",
        r#"{"tools":[{"name":"t</script>","description":"<b>","inputSchema":{"type":"object"}}]}"#,
    );
    let root = tree.arg();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "file-tokens",
            vec!["--root", root, "files", "--model", "gpt-4o"],
        ),
        (
            "load-files",
            vec![
                "--root", root, "load", "--budget", "3000", "--model", "gpt-4o",
            ],
        ),
        (
            "mcp-tokens",
            vec!["mcp-tokens", "--file", tools.to_str().expect("utf-8")],
        ),
        (
            "assemble-context",
            vec![
                "assemble",
                sections.to_str().expect("utf-8"),
                "--budget",
                "50",
                "--model",
                "gpt-4o",
            ],
        ),
        (
            "fit-messages",
            vec![
                "fit-messages",
                messages.to_str().expect("utf-8"),
                "--model",
                "gpt-4o",
            ],
        ),
    ];
    for (tool, args) in cases {
        let report = out.join(format!("{tool}.html"));
        let mut args = args.clone();
        args.extend(["--json", "--html", report.to_str().expect("utf-8")]);
        let (code, stdout, stderr) = BIN.run_cli(&args, None);
        assert_eq!(code, 0, "{tool}: {stderr}");
        assert!(
            stderr.contains("wrote the HTML report to"),
            "{tool}: {stderr}"
        );
        let html = std::fs::read_to_string(&report).expect("the report");
        assert_eq!(
            html.matches("</script>").count(),
            PAGE.matches("</script>").count(),
            "{tool}: no `</script>` of the data is raw"
        );
        assert!(!html.contains("<img") && !html.contains("<b>"), "{tool}");
        let data = embedded(&html);
        assert_eq!(data["tool"], tool);
        let printed: Value = serde_json::from_str(&stdout).expect("--json");
        assert_eq!(
            data["result"], printed,
            "{tool}: the same numbers as --json"
        );
    }
}

#[test]
fn html_refuses_a_folder_and_takes_no_other_command() {
    let out = TempTree::new("app-html-refuse");
    let (code, stdout, stderr) =
        BIN.run_cli(&["fit-messages", "-", "--html", out.arg()], Some("[]"));
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("not a regular file"), "{stderr}");
    let (code, _, stderr) = BIN.run_cli(&["count", "hello", "--html", "x.html"], None);
    assert_eq!(code, 2, "count has no view: {stderr}");
    assert!(!out.join("x.html").exists());
}
