//! Every request, response and command output the docs show comes from a real run
//! and stays true: the marked blocks (see `test_support::readme`) of README.md and of
//! every `docs/*.md` are run against the built binary (tools over stdio, from the
//! repository root so `specs/` is this repository's own) and compared.
//! `cargo xtask readme --bless` (this test with `README_BLESS=1`) rewrites the blocks
//! that differ from what the binary now says. The docs' relative links and anchors
//! (those files, ARCHITECTURE.md and BENCHMARKS.md) must lead somewhere.

use std::path::{Path, PathBuf};

use serde_json::Value;
use test_support::readme::{self, Block, Shows};
use test_support::{Binary, Transport, call};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The documents whose examples are run: README.md, then `docs/*.md` by name.
fn documents() -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("docs/ entry").file_name())
        .filter_map(|name| name.to_str().map(str::to_string))
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    docs.insert(0, "README.md".to_string());
    docs
}

#[tokio::test]
async fn doc_examples_are_what_the_binary_answers() {
    let bless = std::env::var_os("README_BLESS").is_some();
    let specs = root().join("specs").display().to_string();
    let conn = BIN
        .connect(Transport::Stdio, &["--specs-dir", &specs, "--root", &specs])
        .await;
    let mut problems = Vec::new();
    let mut checked = Vec::new();
    for doc in documents() {
        let path = root().join(&doc);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{doc}: {e}"));
        let blocks = readme::blocks(&text).unwrap_or_else(|e| panic!("{doc}:\n{e}"));
        let mut found = Vec::new();
        let rewrites = check_document(&conn.client, &blocks, &mut found).await;
        let run = blocks.iter().filter(|b| b.shows != Shows::Skip).count();
        checked.push(format!("{doc}: {run} run, {} skipped", blocks.len() - run));
        if bless && !rewrites.is_empty() {
            std::fs::write(&path, readme::replace_bodies(&text, &rewrites))
                .unwrap_or_else(|e| panic!("write {doc}: {e}"));
            eprintln!("{doc}: rewrote {} blocks", rewrites.len());
            continue;
        }
        problems.extend(found.into_iter().map(|p| format!("{doc} {p}")));
    }
    eprintln!("checked blocks: {}", checked.join("; "));
    assert!(
        problems.is_empty(),
        "the docs' examples differ from the binary (run `cargo xtask readme --bless` to \
         rewrite them from a real run, then read the diff):\n{}",
        problems.join("\n")
    );
}

/// Run one document's blocks in order; returns the rewrites `--bless` would make.
async fn check_document(
    client: &test_support::Client,
    blocks: &[Block],
    problems: &mut Vec<String>,
) -> Vec<(std::ops::Range<usize>, String)> {
    let mut last: Option<(Value, rmcp::model::CallToolResult)> = None;
    let mut rewrites = Vec::new();
    for block in blocks {
        let at = block.lines.start + 1;
        match &block.shows {
            Shows::Skip => {}
            Shows::Request => {
                let request = readme::shown_json(block).unwrap_or_else(|e| panic!("{e}"));
                last = Some((request.clone(), run(client, &request).await));
            }
            Shows::Response { request, .. } => {
                if let Some(request) = request {
                    last = Some((request.clone(), run(client, request).await));
                }
                let Some((request, result)) = &last else {
                    problems.push(format!("line {at}: a response before any request"));
                    continue;
                };
                let shown = readme::shown_json(block).unwrap_or_else(|e| panic!("{e}"));
                let mut actual = result.structured_content.clone().unwrap_or(Value::Null);
                let fields = matches!(block.shows, Shows::Response { fields: true, .. });
                if fields {
                    actual = readme::same_fields(&shown, &actual);
                }
                let is_error = shown.get("error_code").is_some();
                if result.is_error != Some(is_error) {
                    problems.push(format!(
                        "line {at}: {request} answered isError {:?}",
                        result.is_error
                    ));
                }
                if let Some(difference) = readme::mismatch(&shown, &actual) {
                    problems.push(format!("line {at}: {difference}"));
                    let blessed = readme::bless(&shown, &actual);
                    let body = if fields {
                        readme::format_fields(&blessed)
                    } else {
                        readme::format(&blessed)
                    };
                    rewrites.push((block.lines.clone(), body));
                }
            }
            Shows::Cli => check_cli(block, problems, &mut rewrites),
        }
    }
    rewrites
}

/// Every relative link of the docs names a file or folder that exists, and every
/// `#anchor` a heading (or `<a id>`) of the document it points into.
#[test]
fn doc_links_lead_somewhere() {
    let mut docs = documents();
    docs.extend(["ARCHITECTURE.md".to_string(), "BENCHMARKS.md".to_string()]);
    let mut problems = Vec::new();
    let mut links = 0;
    for doc in &docs {
        let path = root().join(doc);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{doc}: {e}"));
        for (line, target) in readme::links(&text) {
            links += 1;
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if file.is_empty() {
                path.clone()
            } else {
                path.parent().expect("a folder").join(file)
            };
            if !linked.exists() {
                problems.push(format!("{doc}:{}: `{target}`: no such file", line + 1));
                continue;
            }
            if anchor.is_empty() {
                continue;
            }
            let linked_text = std::fs::read_to_string(&linked).unwrap_or_default();
            if !readme::anchors(&linked_text).contains(anchor) {
                problems.push(format!(
                    "{doc}:{}: `{target}`: no heading or <a id> makes #{anchor}",
                    line + 1
                ));
            }
        }
    }
    assert!(links > 0, "no links found: is the link reader broken?");
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

async fn run(client: &test_support::Client, request: &Value) -> rmcp::model::CallToolResult {
    let name = request["name"].as_str().expect("a request names its tool");
    call(client, name, request["arguments"].clone()).await
}

/// Run each `$ context-loader …` of the block from the repository root; its stdout
/// must be the lines shown under it.
fn check_cli(
    block: &Block,
    problems: &mut Vec<String>,
    rewrites: &mut Vec<(std::ops::Range<usize>, String)>,
) {
    let at = block.lines.start + 1;
    let commands = readme::cli_commands(&block.body).unwrap_or_else(|e| panic!("line {at}: {e}"));
    let mut body = Vec::new();
    let mut differs = false;
    for (args, shown) in commands {
        let output = BIN
            .command()
            .args(&args)
            .current_dir(root())
            .output()
            .expect("run the CLI");
        let stdout = String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_string();
        if !output.status.success() {
            problems.push(format!(
                "line {at}: `{}` exited {}: {}",
                args.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        if stdout != shown {
            differs = true;
            problems.push(format!(
                "line {at}: `{}` printed\n{stdout}\nbut the doc shows\n{shown}",
                args.join(" ")
            ));
        }
        let line = block
            .body
            .lines()
            .find(|l| {
                l.starts_with("$ ") && readme::cli_commands(l).ok().is_some_and(|c| c[0].0 == args)
            })
            .unwrap_or_default()
            .to_string();
        body.push(line);
        body.push(stdout);
    }
    if differs {
        rewrites.push((block.lines.clone(), body.join("\n")));
    }
}
