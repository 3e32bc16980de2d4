//! The page in a real browser. Headless Chromium loads each command's `--html`
//! report from disk and its DOM is read back (`--dump-dom`): the page drew one file
//! rectangle per file of the result, the totals it shows are the result's, and a
//! hostile path is text, not an element; a screenshot of each view is saved in
//! target/xtask/app/. And a host page written here loads the page read from the
//! server (`resources/read`) into a frame and speaks the extension's handshake with
//! it, sending a real `tools/call` result: the page draws it.
//!
//! Needs `chromium`, so it is `#[ignore]`d in a plain `cargo test`; `cargo xtask app`
//! installs it (Debian's package) when missing and runs it with `--ignored`. The
//! official host side (the SDK's `AppBridge`, over streamable HTTP) is not driven
//! here yet.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
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

/// JSON text safe inside a `<script type="application/json">` block.
fn script_json(value: &Value) -> String {
    serde_json::to_string(value)
        .expect("JSON")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// A host page written by hand (not yet the SDK's `AppBridge`): it loads the page
/// read from the server into a frame, answers `ui/initialize`, sends the tool's
/// arguments and the real `tools/call` result, and once the page reports its new
/// size writes what the frame drew into its own DOM, which `--dump-dom` prints.
const HOST: &str = r#"<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
<pre id="out">waiting</pre>
<iframe id="view" sandbox="allow-scripts allow-same-origin" style="width:960px;height:700px"></iframe>
<script type="application/json" id="page">PAGE</script>
<script type="application/json" id="result">RESULT</script>
<script>
const view = document.getElementById("view");
const page = JSON.parse(document.getElementById("page").textContent);
const result = JSON.parse(document.getElementById("result").textContent);
const seen = [];
let sent = false;
function send(message) { view.contentWindow.postMessage(message, "*"); }
window.addEventListener("message", (event) => {
  if (event.source !== view.contentWindow) return;
  const m = event.data;
  seen.push(m.method);
  if (m.method === "ui/initialize") {
    send({ jsonrpc: "2.0", id: m.id, result: {
      protocolVersion: "2026-01-26", hostInfo: { name: "test-host", version: "1" },
      hostCapabilities: {}, hostContext: { theme: "dark", toolInfo: { tool: { name: "file-tokens" } } } } });
  } else if (m.method === "ui/notifications/initialized") {
    send({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: {} } });
    send({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result });
    sent = true;
  } else if (m.method === "ui/notifications/size-changed" && sent) {
    const d = view.contentDocument;
    document.getElementById("out").textContent = JSON.stringify({
      seen, height: m.params.height,
      files: d.querySelectorAll(".tile.file").length,
      images: d.images.length,
      title: d.querySelector("h1") ? d.querySelector("h1").textContent : null,
      theme: d.documentElement.dataset.theme,
      text: d.body.textContent,
    });
  }
});
view.srcdoc = page;
</script></body></html>
"#;

#[tokio::test]
#[ignore = "needs chromium; run by `cargo xtask app` (installs it)"]
async fn the_page_draws_a_tool_result_a_host_sends_it_over_post_message() {
    use rmcp::model::{ReadResourceRequestParams, ResourceContents};

    let tree = TempTree::new("app-host");
    tree.write("x</script><img src=x onerror=alert(1)>/n.md", "hostile\n");
    tree.write("src/lib.rs", "pub fn f() -> u32 { 1 }\n".repeat(40));
    tree.write("a.md", "# A\n");
    let conn = BIN
        .connect_as(
            super::app::AppsHost,
            test_support::Transport::Stdio,
            &["--root", tree.arg()],
            &[],
        )
        .await;
    let read = conn
        .client
        .read_resource(ReadResourceRequestParams::new(context_loader::app::URI))
        .await
        .expect("resources/read");
    let ResourceContents::TextResourceContents { text: page, .. } = &read.contents[0] else {
        panic!("the page as text");
    };
    let result = test_support::call(
        &conn.client,
        "file-tokens",
        serde_json::json!({"model": "gpt-4o"}),
    )
    .await;
    let result = serde_json::to_value(&result).expect("JSON");
    let files = result["structuredContent"]["files"]
        .as_array()
        .expect("files")
        .len();

    let out = TempTree::new("app-host-out");
    let host = out.write(
        "host.html",
        HOST.replace("PAGE", &script_json(&Value::String(page.clone())))
            .replace("RESULT", &script_json(&result)),
    );
    let dom = chromium(&["--virtual-time-budget=10000", "--dump-dom"], &host);
    let start = dom.find(r#"<pre id="out">"#).expect("out") + r#"<pre id="out">"#.len();
    let end = start + dom[start..].find("</pre>").expect("end");
    let shown = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let report: Value =
        serde_json::from_str(&shown).unwrap_or_else(|e| panic!("the host's report ({e}): {shown}"));
    assert_eq!(
        report["seen"][0], "ui/initialize",
        "the page opens the handshake: {report}"
    );
    assert!(
        report["seen"]
            .as_array()
            .expect("seen")
            .contains(&Value::from("ui/notifications/initialized")),
        "{report}"
    );
    assert_eq!(report["files"], files, "one rectangle per file: {report}");
    assert_eq!(report["images"], 0, "the hostile name made no image");
    assert_eq!(report["title"], "Tokens by folder and file");
    assert_eq!(report["theme"], "dark", "the host's theme applied");
    assert!(
        report["text"]
            .as_str()
            .expect("text")
            .contains("x</script><img src=x onerror=alert(1)>"),
        "the hostile folder shown as text"
    );
    assert!(report["height"].as_f64().expect("height") > 100.0);
}
