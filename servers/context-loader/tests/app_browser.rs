//! The page in a real browser. Headless Chromium loads each command's `--html`
//! report from disk and its DOM is read back (`--dump-dom`): the page drew one file
//! rectangle per file of the result, the totals it shows are the result's, and a
//! hostile path is text, not an element. And a real host: xtask/app/host.js, the
//! official `AppBridge` of npm `@modelcontextprotocol/ext-apps` (bundled by `cargo
//! xtask app`), connected to `context-loader http` over streamable HTTP, calls each
//! linked tool and hands the result to the app in a sandboxed frame on a second
//! origin; xtask/app/drive.mjs reads the DOM inside that frame over the DevTools
//! protocol, and the same calls' `--html` reports show the same numbers. A
//! screenshot of each view is saved in target/xtask/app/, and what the links add to
//! the tool list each client sends in target/xtask/app/summary.txt.
//!
//! Needs `chromium`, Node 22 and the bundled host, so it is `#[ignore]`d in a plain
//! `cargo test`; `cargo xtask app` installs them and runs it with `--ignored`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use test_support::{Binary, TempTree};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// Where the screenshots go (beside the other steps' output, under target/).
fn shots() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/xtask/app");
    std::fs::create_dir_all(&dir).expect("target/xtask/app");
    dir
}

fn chromium(args: &[&str], page: &Path) -> String {
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1000,900",
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium (cargo xtask app installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Run a command with `--json --html`, load the report in Chromium, and return the
/// printed result and the DOM the page built.
fn rendered(name: &str, args: &[&str], out: &TempTree) -> (Value, String) {
    let report = out.join(format!("{name}.html"));
    let mut args = args.to_vec();
    args.extend(["--json", "--html", report.to_str().expect("utf-8")]);
    let (code, stdout, stderr) = BIN.run_cli(&args, None);
    assert_eq!(code, 0, "{name}: {stderr}");
    let result: Value = serde_json::from_str(&stdout).expect("--json");
    let dom = chromium(&["--dump-dom"], &report);
    let shot = shots().join(format!("{name}.png"));
    chromium(&[&format!("--screenshot={}", shot.display())], &report);
    assert!(shot.exists(), "{name}: screenshot");
    (result, dom)
}

/// Elements of the DOM whose class attribute is `tile … file` (the file tiles).
fn file_tiles(dom: &str) -> usize {
    let open = r#"class="tile "#;
    dom.match_indices(open)
        .filter(|(at, _)| {
            let value = &dom[at + open.len()..];
            value[..value.find('"').unwrap_or(0)].ends_with(" file")
        })
        .count()
}

/// A count as the page prints it (`51,088`).
fn shown(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
#[ignore = "needs chromium; run by `cargo xtask app` (installs it)"]
fn the_reports_render_every_file_and_the_results_numbers_in_chromium() {
    let tree = TempTree::new("app-browser");
    tree.write("x</script><img src=x onerror=alert(1)>/n.md", "hostile\n");
    tree.write("a.md", "# A\n\nSome text about tokens.\n");
    tree.write("src/lib.rs", "pub fn f() -> u32 { 1 }\n".repeat(40));
    tree.write("src/deep/mod.rs", "// a comment line\n".repeat(25));
    let out = TempTree::new("app-browser-out");
    let root = tree.arg();

    let (files, dom) = rendered(
        "file-tokens",
        &["--root", root, "files", "--model", "gpt-4o"],
        &out,
    );
    let listed = files["files"].as_array().expect("files").len();
    assert_eq!(listed, 4);
    assert_eq!(file_tiles(&dom), listed, "one rectangle per file");
    assert!(dom.contains(&shown(files["total"].as_u64().expect("total"))));
    // The hostile folder is drawn as text (escaped in the serialized DOM), and no
    // element was made of it (an <img> would serialize with quoted attributes).
    assert!(dom.contains("x&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
    assert!(!dom.contains(r#"<img src="x""#));

    let (load, dom) = rendered(
        "load-files",
        &[
            "--root", root, "load", "--budget", "400", "--model", "gpt-4o",
        ],
        &out,
    );
    let rows = load["included"].as_array().expect("included").len()
        + load["omitted"].as_array().expect("omitted").len();
    assert_eq!(file_tiles(&dom), rows);
    assert!(dom.contains(&format!("budget {}", shown(400))));
    assert!(dom.contains(&shown(load["answer_tokens"].as_u64().expect("answer"))));

    // Levels of detail: each listed file drawn in its level's colour.
    let (auto, dom) = rendered(
        "load-files",
        &[
            "--root", root, "load", "--budget", "700", "--model", "gpt-4o", "--detail", "auto",
        ],
        &out,
    );
    let included = auto["included"].as_array().expect("included");
    for level in ["outline", "path"] {
        let listed = included.iter().filter(|f| f["detail"] == level).count();
        let drawn = dom
            .matches(&format!(r#"class="tile st-{level} file""#))
            .count();
        assert_eq!(drawn, listed, "{level}: {auto}");
    }
    assert!(
        included
            .iter()
            .any(|f| f["detail"] == "outline" || f["detail"] == "path"),
        "the budget leaves some file at a lower level: {auto}"
    );
    assert!(
        dom.contains("full · outline · path"),
        "the levels' counts are shown"
    );

    let tools = out.write(
        "tools.json",
        r#"{"tools":[{"name":"t</script>","description":"<b>bold</b>","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}},{"name":"u","description":"Another.","inputSchema":{"type":"object"}}]}"#,
    );
    let (mcp, dom) = rendered(
        "mcp-tokens",
        &[
            "mcp-tokens",
            "--file",
            tools.to_str().expect("utf-8"),
            "--client",
            "claude-code",
        ],
        &out,
    );
    assert_eq!(dom.matches(r#"class="row tool""#).count(), 2);
    assert!(dom.contains(&shown(mcp["total_tokens"].as_u64().expect("total"))));
    assert!(dom.contains("t&lt;/script&gt;") && !dom.contains("<b>bold"));

    let sections = out.write(
        "sections.json",
        r#"{"sections":[{"name":"system","content":"Be brief."},{"name":"notes","content":"word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word"}]}"#,
    );
    let (assembled, dom) = rendered(
        "assemble-context",
        &[
            "assemble",
            sections.to_str().expect("utf-8"),
            "--budget",
            "20",
            "--model",
            "gpt-4o",
        ],
        &out,
    );
    assert_eq!(dom.matches(r#"class="row layer""#).count(), 2);
    let total = assembled["total_tokens"].as_u64().expect("total");
    assert!(dom.contains(&format!("{} of 20", shown(total))), "{dom}");

    let messages = out.write(
        "messages.json",
        r#"[{"role":"system","content":"Be brief."},{"role":"user","content":"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"},{"role":"user","content":"hi"}]"#,
    );
    let (fitted, dom) = rendered(
        "fit-messages",
        &[
            "fit-messages",
            messages.to_str().expect("utf-8"),
            "--model",
            "gpt-4o",
            "--reserve-output-tokens",
            "115180",
        ],
        &out,
    );
    let kept = fitted["kept_indices"].as_array().expect("kept").len();
    let dropped = fitted["dropped_count"].as_u64().expect("dropped") as usize;
    assert!(dropped > 0, "the example drops a message: {fitted}");
    assert_eq!(dom.matches("msg st-loaded kept").count(), kept);
    assert_eq!(dom.matches("msg st-cut dropped").count(), dropped);
}

/// The folder of the built host (`cargo xtask app` sets it) and the PATH whose
/// `node` runs its driver.
const HOST_DIR_ENV: &str = "CONTEXT_LOADER_APP_HOST";
const NODE_PATH_ENV: &str = "CONTEXT_LOADER_APP_NODE_PATH";

/// Headless Chromium with the DevTools protocol on a free loopback port, in a
/// profile of its own; killed when dropped (also when an assertion fails).
struct Chromium {
    child: std::process::Child,
    devtools: String,
    _profile: TempTree,
}

impl Chromium {
    fn start() -> Chromium {
        use std::io::{BufRead, BufReader};
        let profile = TempTree::new("app-chromium");
        let mut child = Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--font-render-hinting=none",
            ])
            .arg(format!(
                "--user-data-dir={}",
                profile.join("profile").display()
            ))
            .arg("about:blank")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("chromium (cargo xtask app installs it)");
        let stderr = child.stderr.take().expect("piped");
        let (found, url) = std::sync::mpsc::channel();
        // Report the DevTools URL, then keep draining stderr so Chromium never blocks.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("ws://") {
                    let _ = found.send(line[at..].trim().to_string());
                }
            }
        });
        let mut chromium = Chromium {
            child,
            devtools: String::new(),
            _profile: profile,
        };
        chromium.devtools = url
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("chromium did not report its DevTools URL within 30 s");
        chromium
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One linked tool's call: its MCP arguments, the same call as a command (for the
/// `--html` report), and the element the drawn view has.
struct Case {
    tool: &'static str,
    arguments: Value,
    command: Vec<String>,
    ready: &'static str,
}

fn cases(root: &str, files: &TempTree) -> Vec<Case> {
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let tools = json!([
        {"name": "t</script>", "description": "<b>bold</b>", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
        {"name": "search", "description": "Search the docs for a phrase and return the best passages.", "inputSchema": {"type": "object", "properties": {"query": {"type": "string", "description": "What to look for."}, "limit": {"type": "integer"}}, "required": ["query"]}},
        {"name": "u", "description": "Another.", "inputSchema": {"type": "object"}}
    ]);
    let sections = json!([
        {"name": "system", "content": "You are a careful assistant. Answer briefly and cite the files you used."},
        {"name": "tool_definitions", "content": "search(query, limit): find passages. ".repeat(6)},
        {"name": "working_memory", "content": "The user is reviewing the budget of a prompt. ".repeat(8)},
        {"name": "archives", "content": "Old notes that matter less. ".repeat(40)}
    ]);
    let messages = json!([
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "hi"}
    ]);
    let tools_file = files.write("tools.json", json!({"tools": tools}).to_string());
    let sections_file = files.write("sections.json", json!({"sections": sections}).to_string());
    let messages_file = files.write("messages.json", messages.to_string());
    let path = |p: &std::path::Path| p.to_str().expect("utf-8").to_string();
    vec![
        Case {
            tool: "file-tokens",
            arguments: json!({"model": "gpt-4o"}),
            command: s(&["--root", root, "files", "--model", "gpt-4o"]),
            ready: ".tile.file",
        },
        Case {
            tool: "load-files",
            arguments: json!({"paths": ["."], "model": "gpt-4o", "budget": 700}),
            command: s(&[
                "--root", root, "load", ".", "--budget", "700", "--model", "gpt-4o",
            ]),
            ready: ".tile.file",
        },
        Case {
            tool: "mcp-tokens",
            arguments: json!({"tools": tools, "client": "claude-code"}),
            command: [
                s(&["mcp-tokens", "--file"]),
                vec![path(&tools_file)],
                s(&["--client", "claude-code"]),
            ]
            .concat(),
            ready: ".row.tool",
        },
        Case {
            tool: "assemble-context",
            arguments: json!({"sections": sections, "budget": 150, "model": "gpt-4o"}),
            command: [
                s(&["assemble"]),
                vec![path(&sections_file)],
                s(&["--budget", "150", "--model", "gpt-4o"]),
            ]
            .concat(),
            ready: ".row.layer",
        },
        Case {
            tool: "fit-messages",
            arguments: json!({"messages": messages, "model": "gpt-4o", "reserve_output_tokens": 115180}),
            command: [
                s(&["fit-messages"]),
                vec![path(&messages_file)],
                s(&["--model", "gpt-4o", "--reserve-output-tokens", "115180"]),
            ]
            .concat(),
            ready: ".msg",
        },
    ]
}

/// The numbers a view must show for `result`, as the page prints them, and the
/// count of its items (file rectangles, tool rows, layers, kept messages).
fn expected(tool: &str, result: &Value) -> (Vec<String>, &'static str, usize) {
    let n = |key: &str| {
        result[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{tool}: {key} in {result}"))
    };
    let len = |key: &str| result[key].as_array().map_or(0, Vec::len);
    match tool {
        "file-tokens" => (vec![shown(n("total"))], "files", len("files")),
        "load-files" => (
            vec![
                format!("budget {}", shown(n("budget"))),
                shown(n("answer_tokens")),
            ],
            "files",
            len("included") + len("omitted"),
        ),
        "mcp-tokens" => (
            vec![shown(n("total_tokens"))],
            "tools",
            result["servers"][0]["tools"].as_array().map_or(0, Vec::len),
        ),
        "assemble-context" => (
            vec![format!(
                "{} of {}",
                shown(n("total_tokens")),
                shown(n("budget"))
            )],
            "layers",
            len("sections"),
        ),
        "fit-messages" => (
            vec![format!(
                "{} of {}",
                shown(n("total_tokens")),
                shown(n("budget"))
            )],
            "kept",
            len("kept_indices"),
        ),
        other => panic!("no view {other}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs chromium, Node 22 and the bundled host; run by `cargo xtask app`"]
async fn the_official_app_bridge_draws_each_linked_tools_result_in_a_cross_origin_frame() {
    let host_dir = std::env::var(HOST_DIR_ENV).unwrap_or_else(|_| {
        panic!("{HOST_DIR_ENV} is not set: `cargo xtask app` builds the host and sets it")
    });
    let node_path = std::env::var(NODE_PATH_ENV)
        .unwrap_or_else(|_| panic!("{NODE_PATH_ENV} is not set: `cargo xtask app` sets it"));

    let tree = TempTree::new("app-bridge");
    tree.write("x</script><img src=x onerror=alert(1)>/n.md", "hostile\n");
    tree.write(
        "README.md",
        "# Project\n\nWhat it does, and how to run it.\n".repeat(6),
    );
    tree.write("src/lib.rs", "pub fn f() -> u32 { 1 }\n".repeat(40));
    tree.write("src/deep/mod.rs", "// a comment line\n".repeat(25));
    tree.write(
        "docs/guide.md",
        "Some guidance about tokens and budgets.\n".repeat(12),
    );
    let out = TempTree::new("app-bridge-out");
    let cases = cases(tree.arg(), &out);

    let (server, url) = BIN.spawn_http(&["--root", tree.arg()], &[]).await;
    let chromium = Chromium::start();
    let config = out.write(
        "drive.json",
        json!({
            "mcp": url,
            "devtools": chromium.devtools,
            "dir": host_dir,
            "shots": shots(),
            "timeout_ms": 90_000,
            "cases": cases.iter().map(|c| json!({
                "name": format!("host-{}", c.tool),
                "tool": c.tool,
                "arguments": c.arguments,
                "ready": c.ready,
            })).collect::<Vec<_>>(),
        })
        .to_string(),
    );
    let drive = Path::new(&host_dir).join("drive.mjs");
    let output = tokio::task::spawn_blocking(move || {
        let mut node = Command::new("node");
        node.arg(drive).arg(config).env("PATH", node_path);
        test_support::process::output_within(&mut node, std::time::Duration::from_secs(120))
    })
    .await
    .expect("the driver's thread")
    .expect("drive.mjs hung past 120 s (killed)");
    assert!(
        output.status.success(),
        "drive.mjs failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("the driver's JSON");
    assert_eq!(
        report["exceptions"],
        json!([]),
        "no script threw: {}",
        report["exceptions"]
    );
    assert_eq!(
        report["console_errors"],
        json!([]),
        "{}",
        report["console_errors"]
    );
    assert_ne!(report["host_origin"], report["sandbox_origin"]);

    for (case, seen) in cases.iter().zip(report["cases"].as_array().expect("cases")) {
        let tool = case.tool;
        let host = &seen["host"];
        assert_eq!(host["resourceUri"], context_loader::app::URI, "{tool}");
        assert_eq!(
            host["serverExtension"]["mimeTypes"],
            json!([context_loader::app::MIME_TYPE]),
            "{tool}: the server declared the extension to the host"
        );
        assert_eq!(
            host["appVersion"]["name"], "context-loader report",
            "{tool}"
        );
        let result = &host["result"]["structuredContent"];
        assert_eq!(
            host["result"]["isError"],
            json!(false),
            "{tool}: {}",
            host["result"]
        );
        let dom = &seen["dom"];
        assert_eq!(
            seen["host_can_read_app"],
            json!(false),
            "{tool}: the app is cross-origin to the host"
        );
        assert_eq!(
            dom["origin"], report["sandbox_origin"],
            "{tool}: the app runs on the sandbox's origin"
        );
        let csp = seen["sandbox_csp"].as_str().expect("the sandbox's CSP");
        assert!(
            csp.starts_with("default-src 'none'") && csp.contains("connect-src 'none'"),
            "{tool}: the resource's empty lists give the strictest policy: {csp}"
        );
        assert_eq!(dom["images"], 0, "{tool}: no markup from the data");
        assert_eq!(dom["scripts"], 2, "{tool}: only the page's own scripts");
        assert_eq!(
            dom["theme"], "light",
            "{tool}: the host's context reached the app"
        );

        let text = dom["text"].as_str().expect("text");
        let (numbers, items, count) = expected(tool, result);
        assert_eq!(
            dom[items], count,
            "{tool}: one {items} element per item: {dom}"
        );
        for number in &numbers {
            assert!(
                text.contains(number.as_str()),
                "{tool}: {number:?} shown in {text}"
            );
        }
        match tool {
            "file-tokens" | "load-files" => assert!(
                text.contains("x</script><img src=x onerror=alert(1)>"),
                "{tool}: the hostile folder shown as text"
            ),
            "mcp-tokens" => assert!(text.contains("t</script>"), "the hostile tool name as text"),
            "fit-messages" => {
                let dropped = result["dropped_count"].as_u64().expect("dropped") as usize;
                assert!(dropped > 0, "the example drops a message: {result}");
                assert_eq!(dom["dropped"], dropped);
            }
            _ => {}
        }
        assert!(
            Path::new(seen["screenshot"].as_str().expect("path")).exists(),
            "{tool}: screenshot"
        );

        // The `--html` report of the same call: the same numbers, drawn the same.
        let report_file = out.join(format!("{tool}.html"));
        let mut args: Vec<&str> = case.command.iter().map(String::as_str).collect();
        args.extend(["--json", "--html", report_file.to_str().expect("utf-8")]);
        let (code, stdout, stderr) = BIN.run_cli(&args, None);
        assert_eq!(code, 0, "{tool}: {stderr}");
        let printed: Value = serde_json::from_str(&stdout).expect("--json");
        let (cli_numbers, _, cli_count) = expected(tool, &printed);
        assert_eq!(
            (&cli_numbers, cli_count),
            (&numbers, count),
            "{tool}: the command's numbers are the call's"
        );
        let page = chromium_dom(&report_file);
        for number in &numbers {
            let escaped = number.replace('<', "&lt;").replace('>', "&gt;");
            assert!(
                page.contains(&escaped),
                "{tool}: the report shows {number:?}"
            );
        }
    }
    drop(chromium);

    // What the links cost: the list this host received against a plain client's.
    let linked_list: Vec<rmcp::model::Tool> =
        serde_json::from_value(report["cases"][0]["host"]["tools"].clone()).expect("tools");
    assert_eq!(
        super::app::linked(&linked_list).len(),
        context_loader::app::VIEWS.len()
    );
    let plain = BIN
        .connect(test_support::Transport::Http, &["--root", tree.arg()])
        .await;
    let plain_list = plain.client.list_all_tools().await.expect("tools/list");
    drop(server);
    let mut summary = format!(
        "MCP App page: {} bytes ({:.1} KB; limit 150 KB)\n\
         tool-list growth from the `_meta.ui` links (o200k tokens, as each client sends the list):\n",
        context_loader::app::PAGE.len(),
        context_loader::app::PAGE.len() as f64 / 1024.0
    );
    let (before, after) = (json!({"tools": plain_list}), json!({"tools": linked_list}));
    for client in context_budget::clients::IDS {
        let (b, a) = (
            super::app::client_cost(&before, client),
            super::app::client_cost(&after, client),
        );
        let growth = 100.0 * (a as f64 - b as f64) / b as f64;
        summary.push_str(&format!(
            "  {client:<12} {b:>6} -> {a:>6}  (+{:.2} %)\n",
            growth
        ));
        assert!(a * 100 <= b * 102, "{client}: {b} -> {a}, over 2 %");
    }
    let raw = |tools: &Value| context_budget::Tokenizer::O200kBase.count(&tools.to_string());
    summary.push_str(&format!(
        "  tools/list JSON itself (what the host receives, not the model): {} -> {}\n",
        raw(&before),
        raw(&after)
    ));
    let timings: Vec<String> = report["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| format!("{} {} ms", c["tool"].as_str().unwrap_or("?"), c["ms"]))
        .collect();
    summary.push_str(&format!(
        "host views drawn (AppBridge, protocol {}): {}\n",
        report["cases"][0]["host"]["protocolVersion"]
            .as_str()
            .unwrap_or("?"),
        timings.join(", ")
    ));
    std::fs::write(shots().join("summary.txt"), summary).expect("summary.txt");
}

/// A `--html` report's DOM after its script ran (`--dump-dom`).
fn chromium_dom(page: &Path) -> String {
    chromium(&["--dump-dom"], page)
}
