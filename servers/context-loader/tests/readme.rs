//! Every request, response and command output the README shows comes from a real run
//! and stays true: the marked blocks (see `test_support::readme`) are run against the
//! built binary (tools over stdio, from the repository root so `specs/` is this
//! repository's own) and compared. `cargo xtask readme --bless` (this test with
//! `README_BLESS=1`) rewrites the blocks that differ from what the binary now says.

use std::path::{Path, PathBuf};

use serde_json::Value;
use test_support::readme::{self, Block, Shows};
use test_support::{Binary, Transport, call};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[tokio::test]
async fn readme_examples_are_what_the_binary_answers() {
    let bless = std::env::var_os("README_BLESS").is_some();
    let path = root().join("README.md");
    let text = std::fs::read_to_string(&path).expect("README.md");
    let blocks = readme::blocks(&text).unwrap_or_else(|e| panic!("README.md:\n{e}"));
    let specs = root().join("specs").display().to_string();
    let conn = BIN
        .connect(Transport::Stdio, &["--specs-dir", &specs, "--root", &specs])
        .await;

    let mut last: Option<(Value, rmcp::model::CallToolResult)> = None;
    let mut problems = Vec::new();
    let mut rewrites = Vec::new();
    for block in &blocks {
        let at = block.lines.start + 1;
        match &block.shows {
            Shows::Skip => {}
            Shows::Request => {
                let request = readme::shown_json(block).unwrap_or_else(|e| panic!("{e}"));
                last = Some((request.clone(), run(&conn.client, &request).await));
            }
            Shows::Response { request, .. } => {
                if let Some(request) = request {
                    last = Some((request.clone(), run(&conn.client, request).await));
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
            Shows::Cli => check_cli(block, &mut problems, &mut rewrites),
        }
    }
    if bless && !rewrites.is_empty() {
        std::fs::write(&path, readme::replace_bodies(&text, &rewrites)).expect("write README.md");
        eprintln!("README.md: rewrote {} blocks", rewrites.len());
        return;
    }
    assert!(
        problems.is_empty(),
        "README.md examples differ from the binary (run `cargo xtask readme --bless` to \
         rewrite them from a real run, then read the diff):\n{}",
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
                "line {at}: `{}` printed\n{stdout}\nbut the README shows\n{shown}",
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
