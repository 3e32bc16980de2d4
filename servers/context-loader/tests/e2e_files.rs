//! End-to-end: file-tokens and load-files through the built binary over stdio, HTTP
//! and stateless HTTP (same answers on each) and the CLI: ignore rules, hidden,
//! binary, not UTF-8, FIFO, symlinks in and out of the root, `..` and absolute
//! paths, secret-looking files, globs, the budget promise, roots (stdio's working
//! directory, HTTP without --root refusing, CONTEXT_LOADER_ROOTS, MCP client roots).

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use context_budget::Tokenizer;
#[allow(deprecated)]
use rmcp::model::{ClientCapabilities, ClientInfo, ListRootsResult, Root};
use rmcp::service::RequestContext;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use test_support::{ALL, Binary, PATIENCE, TempTree, Transport, call, structured};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// A project folder (`root/`) and a file outside it, removed on drop.
struct Project(TempTree);

impl Project {
    fn new(tag: &str) -> Project {
        let dir = TempTree::new(&format!("cl-e2e-files-{tag}"));
        dir.write("root/.gitignore", b"target/\n*.log\n");
        dir.write(
            "root/src/main.rs",
            b"fn main() {\n    println!(\"hello\");\n}\n",
        );
        dir.write(
            "root/src/lib.rs",
            "pub fn add(a: u32, b: u32) -> u32 { a + b }\n"
                .repeat(30)
                .as_bytes(),
        );
        dir.write("root/README.md", b"# Project\n\nSome words about it.\n");
        dir.write("root/target/debug/out.rs", b"generated");
        dir.write("root/build.log", b"log line\n");
        dir.write("root/.hidden/notes.txt", b"hidden notes\n");
        dir.write("root/.env", b"API_KEY=sk-live-secret\n");
        dir.write("root/config/server.pem", b"-----BEGIN PRIVATE KEY-----\n");
        dir.write("root/image.png", b"\x89PNG\r\n\x1a\n\0\0\0IHDR");
        dir.write("root/latin1.txt", b"caf\xe9 au lait");
        let secret = dir.write("outside/secret.txt", b"outside the root\n");
        dir.symlink(secret, "root/escape.txt");
        dir.fifo("root/pipe.fifo");
        Project(dir)
    }

    fn root(&self) -> PathBuf {
        self.0.join("root")
    }

    fn root_arg(&self) -> String {
        self.root().display().to_string()
    }
}

fn paths(answer: &Value, key: &str) -> Vec<String> {
    answer[key]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|f| f["path"].as_str().map(str::to_string))
        .collect()
}

fn skipped_as(answer: &Value, reason: &str) -> Vec<String> {
    answer["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .filter(|s| s["reason"] == reason)
        .filter_map(|s| s["path"].as_str().map(str::to_string))
        .collect()
}

fn error_code(result: &rmcp::model::CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    structured(result)["error_code"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn file_tokens_and_load_files_over_every_transport() {
    let project = Project::new("all");
    let root = project.root_arg();
    let mut answers = Vec::new();
    for transport in ALL {
        let conn = BIN.connect(transport, &["--root", &root]).await;
        let result = call(
            &conn.client,
            "file-tokens",
            json!({"model": "gpt-4o", "sort": "path"}),
        )
        .await;
        assert_eq!(result.is_error, Some(false), "{transport:?}: {result:?}");
        let r = structured(&result);
        assert_eq!(
            paths(r, "files"),
            ["README.md", "src/lib.rs", "src/main.rs"],
            "{transport:?}"
        );
        assert_eq!(skipped_as(r, "binary"), ["image.png"]);
        assert_eq!(skipped_as(r, "not_utf8"), ["latin1.txt"]);
        assert_eq!(skipped_as(r, "secret"), ["config/server.pem"]);
        assert_eq!(skipped_as(r, "not_regular"), ["pipe.fifo"]);
        assert_eq!(skipped_as(r, "outside_root"), ["escape.txt"]);
        assert_eq!(r["excluded"]["ignored"], 2, "target/ and build.log");
        assert_eq!(r["excluded"]["hidden"], 3, ".env, .gitignore, .hidden/");
        let main = std::fs::read_to_string(project.root().join("src/main.rs")).expect("read");
        let row = &r["files"][2];
        assert_eq!(row["tokens"], Tokenizer::O200kBase.count(&main));
        assert_eq!(r["window"]["context_window"], 128_000);

        // Outside the root: `..`, absolute elsewhere, a symlink leading out.
        let outside = project.0.join("outside/secret.txt").display().to_string();
        for path in ["../outside/secret.txt", outside.as_str(), "escape.txt"] {
            let refused = call(&conn.client, "file-tokens", json!({"paths": [path]})).await;
            assert_eq!(error_code(&refused), "PATH_OUTSIDE_ROOT", "{path}");
            let refused = call(
                &conn.client,
                "load-files",
                json!({"paths": [path], "budget": 400}),
            )
            .await;
            assert_eq!(error_code(&refused), "PATH_OUTSIDE_ROOT", "{path}");
        }

        // A glob; a secret-looking file named explicitly is still refused.
        let glob = call(
            &conn.client,
            "file-tokens",
            json!({"paths": ["src/*.rs"], "sort": "path"}),
        )
        .await;
        assert_eq!(
            paths(structured(&glob), "files"),
            ["src/lib.rs", "src/main.rs"]
        );
        let named = call(
            &conn.client,
            "load-files",
            json!({"paths": [".env"], "budget": 400}),
        )
        .await;
        assert!(
            !structured(&named)["text"]
                .as_str()
                .expect("text")
                .contains("sk-live-secret")
        );
        assert_eq!(skipped_as(structured(&named), "secret"), [".env"]);

        // A budget: never exceeded by the answer, `answer_tokens` is the count of the
        // answer as the model receives it, and `tokens` the count of `text` itself.
        let loaded = call(
            &conn.client,
            "load-files",
            json!({"paths": ["src", "README.md"], "model": "gpt-4o", "budget": 400, "format": "markdown"}),
        )
        .await;
        assert_eq!(loaded.is_error, Some(false), "{loaded:?}");
        let l = structured(&loaded);
        let text = l["text"].as_str().expect("text");
        assert_eq!(l["tokens"], Tokenizer::O200kBase.count(text));
        let answer = serde_json::to_string(l).expect("serialize");
        assert_eq!(l["answer_tokens"], Tokenizer::O200kBase.count(&answer));
        assert!(l["answer_tokens"].as_u64() <= Some(400));
        assert_eq!(paths(l, "included"), ["src/main.rs", "README.md"]);
        assert_eq!(paths(l, "omitted"), ["src/lib.rs"]);
        assert!(text.starts_with("## src/main.rs\n\n```rust\n"), "{text}");
        answers.push(serde_json::to_value(&result).expect("serialize"));
    }
    assert_eq!(answers[0], answers[1], "stdio vs http");
    assert_eq!(answers[0], answers[2], "stdio vs stateless http");
}

#[tokio::test]
async fn http_without_a_root_refuses_file_tools() {
    let conn = BIN.connect(Transport::HttpStateless, &[]).await;
    for tool in ["file-tokens", "load-files"] {
        let result = call(&conn.client, tool, json!({"paths": ["."]})).await;
        assert_eq!(error_code(&result), "ROOTS_NOT_CONFIGURED", "{tool}");
        let suggestion = structured(&result)["suggestion"]
            .as_str()
            .unwrap_or_default();
        assert!(suggestion.contains("--root"), "{suggestion}");
    }
    // The other tools still work.
    let count = call(&conn.client, "count-tokens", json!({"text": "hello world"})).await;
    assert_eq!(count.is_error, Some(false));
}

#[tokio::test]
async fn stdio_serves_its_working_directory_by_default() {
    let project = Project::new("cwd");
    let mut command = tokio::process::Command::new(BIN.path());
    command
        .arg("stdio")
        .current_dir(project.root())
        .stderr(Stdio::null());
    let child = TokioChildProcess::new(command).expect("spawn");
    let client = tokio::time::timeout(PATIENCE, ().serve(child))
        .await
        .expect("initialize timed out")
        .expect("initialize");
    let result = call(
        &client,
        "file-tokens",
        json!({"paths": ["src"], "sort": "path"}),
    )
    .await;
    assert_eq!(
        paths(structured(&result), "files"),
        ["src/lib.rs", "src/main.rs"]
    );
    let refused = call(&client, "file-tokens", json!({"paths": ["../outside"]})).await;
    assert_eq!(error_code(&refused), "PATH_OUTSIDE_ROOT");
}

#[tokio::test]
async fn several_roots_from_the_environment() {
    let project = Project::new("env");
    let roots = format!(
        "{}:{}",
        project.root().join("src").display(),
        project.0.join("outside").display()
    );
    let conn = BIN
        .connect_with_env(Transport::Stdio, &[], &[("CONTEXT_LOADER_ROOTS", &roots)])
        .await;
    let result = call(&conn.client, "file-tokens", json!({"sort": "path"})).await;
    let r = structured(&result);
    // By root, then path; with two roots every row says which one it was found under.
    assert_eq!(paths(r, "files"), ["secret.txt", "lib.rs", "main.rs"]);
    let root_of = |i: usize| {
        r["files"][i]["root"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(root_of(0).ends_with("outside"), "{}", root_of(0));
    assert!(root_of(1).ends_with("src"), "{}", root_of(1));
}

/// A client that offers MCP roots (deprecated by a future protocol revision, SEP-2577,
/// but what today's clients send).
#[derive(Clone)]
struct RootsClient(Vec<PathBuf>);

#[allow(deprecated)]
impl ClientHandler for RootsClient {
    fn get_info(&self) -> ClientInfo {
        let mut info = ClientInfo::default();
        info.capabilities = ClientCapabilities::builder().enable_roots().build();
        info
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(
            self.0
                .iter()
                .map(|p| Root::new(format!("file://{}", p.display())))
                .collect(),
        ))
    }
}

/// A client that offers roots but leaves `roots/list` unanswered until `answers` is
/// set; `asked` counts the questions.
#[derive(Clone, Default)]
struct SlowRootsClient {
    dirs: Vec<PathBuf>,
    answers: Arc<AtomicBool>,
    asked: Arc<AtomicUsize>,
}

#[allow(deprecated)]
impl ClientHandler for SlowRootsClient {
    fn get_info(&self) -> ClientInfo {
        let mut info = ClientInfo::default();
        info.capabilities = ClientCapabilities::builder()
            .enable_roots()
            .enable_roots_list_changed()
            .build();
        info
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        if !self.answers.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
        RootsClient(self.dirs.clone()).list_roots(context).await
    }
}

/// A session whose client left `roots/list` unanswered is not asked again (each file
/// call waited the whole timeout before), until the client says its roots changed.
#[tokio::test]
async fn a_client_that_leaves_roots_unanswered_is_not_asked_again_until_they_change() {
    let project = Project::new("slow-roots");
    let src = project.root().join("src");
    let session = |transport| {
        let (project, src) = (&project, src.clone());
        async move {
            let client = SlowRootsClient {
                dirs: vec![src],
                ..SlowRootsClient::default()
            };
            let conn = BIN
                .connect_as(
                    client.clone(),
                    transport,
                    &["--root", &project.root_arg()],
                    &[],
                )
                .await;
            let files = |result: &rmcp::model::CallToolResult| {
                assert_eq!(result.is_error, Some(false), "{transport:?}: {result:?}");
                paths(structured(result), "files")
            };
            let all = ["README.md", "src/lib.rs", "src/main.rs"];
            // Unanswered: the server's roots, after the timeout; then not asked again.
            for _ in 0..2 {
                let result = call(&conn.client, "file-tokens", json!({"sort": "path"})).await;
                assert_eq!(files(&result), all, "{transport:?}");
            }
            assert_eq!(client.asked.load(Ordering::SeqCst), 1, "{transport:?}");
            // Roots changed: asked again, and now narrowed to them.
            client.answers.store(true, Ordering::SeqCst);
            conn.client
                .notify_roots_list_changed()
                .await
                .expect("notify");
            let mut asked = 1;
            for _ in 0..50 {
                let result = call(&conn.client, "file-tokens", json!({"sort": "path"})).await;
                asked = client.asked.load(Ordering::SeqCst);
                // The notification and the call race on HTTP (two requests).
                if asked > 1 {
                    assert_eq!(files(&result), ["lib.rs", "main.rs"], "{transport:?}");
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            assert_eq!(asked, 2, "{transport:?}: asked again after list_changed");
        }
    };
    tokio::join!(session(Transport::Stdio), session(Transport::Http));
}

#[tokio::test]
async fn client_roots_narrow_the_server_roots() {
    let project = Project::new("client-roots");
    let src = project.root().join("src");
    for transport in [Transport::Stdio, Transport::Http] {
        let conn = BIN
            .connect_as(
                RootsClient(vec![src.clone()]),
                transport,
                &["--root", &project.root_arg()],
                &[],
            )
            .await;
        let result = call(&conn.client, "file-tokens", json!({"sort": "path"})).await;
        assert_eq!(result.is_error, Some(false), "{transport:?}: {result:?}");
        assert_eq!(
            paths(structured(&result), "files"),
            ["lib.rs", "main.rs"],
            "{transport:?}"
        );
        let refused = call(
            &conn.client,
            "file-tokens",
            json!({"paths": ["../README.md"]}),
        )
        .await;
        assert_eq!(error_code(&refused), "PATH_OUTSIDE_ROOT", "{transport:?}");
    }
    // Stateless HTTP cannot ask the client anything: the server's roots apply, at once.
    let conn = BIN
        .connect_as(
            RootsClient(vec![src.clone()]),
            Transport::HttpStateless,
            &["--root", &project.root_arg()],
            &[],
        )
        .await;
    let result = call(
        &conn.client,
        "file-tokens",
        json!({"paths": ["src"], "sort": "path"}),
    )
    .await;
    assert_eq!(
        paths(structured(&result), "files"),
        ["src/lib.rs", "src/main.rs"]
    );
    // A client root outside every server root leaves nothing to read.
    let conn = BIN
        .connect_as(
            RootsClient(vec![project.0.join("outside")]),
            Transport::Stdio,
            &["--root", &project.root_arg()],
            &[],
        )
        .await;
    let result = call(&conn.client, "file-tokens", json!({})).await;
    assert_eq!(error_code(&result), "ROOTS_NOT_CONFIGURED");
    // Issue 39: Gemini CLI offers the folder it runs in. The answer names both lists
    // and the configuration that fixes it.
    let error = structured(&result);
    let outside = project.0.join("outside").display().to_string();
    assert_eq!(error["client_roots"], json!([outside]));
    let server_roots = error["server_roots"].as_array().expect("server_roots");
    assert_eq!(server_roots.len(), 1);
    let suggestion = error["suggestion"].as_str().expect("suggestion");
    assert!(
        suggestion.contains("`--root`") && suggestion.contains("settings.json"),
        "{suggestion}"
    );
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains(&outside)
    );
}

#[test]
fn the_cli_measures_and_loads() {
    let project = Project::new("cli");
    let run = |args: &[&str]| {
        BIN.command()
            .args(["--root", &project.root_arg()])
            .args(args)
            .output()
            .expect("run the CLI")
    };
    let files = run(&["files", "--json", "--sort", "path"]);
    assert!(files.status.success(), "{files:?}");
    let json: Value = serde_json::from_slice(&files.stdout).expect("JSON");
    assert_eq!(
        paths(&json, "files"),
        ["README.md", "src/lib.rs", "src/main.rs"]
    );
    let table = run(&["files", "src"]);
    let shown = String::from_utf8_lossy(&table.stdout);
    assert!(shown.contains("src/lib.rs"), "{shown}");
    // What was not read (binary, not UTF-8, secrets) is said on stderr after the
    // table, as an MCP client's log gets it; `--json` holds it in the answer instead.
    let whole = run(&["files"]);
    let said = String::from_utf8_lossy(&whole.stderr);
    assert!(
        said.contains("warning: ") && said.contains("not read:") && said.contains("binary"),
        "{said}"
    );
    assert!(!String::from_utf8_lossy(&files.stderr).contains("warning:"));

    // `load`: the packed text on stdout, the report on stderr.
    let load = run(&["load", "src/main.rs", "README.md", "--budget", "400"]);
    assert!(load.status.success(), "{load:?}");
    let text = String::from_utf8(load.stdout).expect("UTF-8");
    assert!(text.starts_with("<file path=\"src/main.rs\">\n"), "{text}");
    assert!(String::from_utf8_lossy(&load.stderr).contains("tokens"));
    let json = run(&["load", "src", "--budget", "400", "--json"]);
    let report: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let text = report["text"].as_str().expect("text");
    assert_eq!(
        report["tokens"],
        Tokenizer::Cl100kBase.count(text),
        "gpt-4 by default"
    );
    assert!(report["answer_tokens"].as_u64() <= Some(400));
    // Outside the root: a clear error and a non-zero exit.
    let refused = run(&["files", "../outside", "--json"]);
    assert!(!refused.status.success());
    let error: Value = serde_json::from_slice(&refused.stdout).expect("JSON");
    assert_eq!(error["error_code"], "PATH_OUTSIDE_ROOT");
    let refused = run(&["files", "../outside"]);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("outside every root"));
}

/// `files` and `load` keep their measures between command-line runs: a second run
/// over unchanged files reads and counts none of them, a changed file is counted
/// again, a damaged cache is ignored (said on stderr) and replaced, and `--no-cache`
/// reads and writes nothing. The default place is the user's cache folder.
#[test]
fn the_cli_keeps_file_measures_between_runs() {
    let project = Project::new("cache");
    let cache = project.0.join("cache");
    let file = cache.join("file-measures.bin");
    let run = |extra: &[&str], envs: &[(&str, &std::path::Path)]| {
        let out = BIN
            .command()
            .env_remove("CONTEXT_LOADER_CACHE_DIR")
            .env_remove("CONTEXT_LOADER_NO_CACHE")
            .env_remove("XDG_CACHE_HOME")
            .envs(envs.iter().copied())
            .args(["--root", &project.root_arg()])
            .args(extra)
            .args(["files", "--json", "--sort", "path"])
            .output()
            .expect("run the CLI");
        assert!(out.status.success(), "{out:?}");
        let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        (json, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let dir = ["--cache-dir", cache.to_str().expect("UTF-8")];
    let (first, _) = run(&dir, &[]);
    assert_eq!(first["cached"], 0);
    assert!(file.is_file(), "the cache is written");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).expect("meta").permissions().mode();
        assert_eq!(mode(&file) & 0o777, 0o600);
        assert_eq!(mode(&cache) & 0o777, 0o700);
    }
    let (second, stderr) = run(&dir, &[]);
    assert_eq!(second["cached"], 3, "{stderr}");
    assert_eq!(second["files"], first["files"]);
    assert_eq!(second["total"], first["total"]);

    // A changed file is counted again; the others still come from the cache.
    let readme = "# Project\n\nMore words about it, and then some more.\n";
    std::fs::write(project.root().join("README.md"), readme).expect("write");
    let (third, _) = run(&dir, &[]);
    assert_eq!(third["cached"], 2);
    assert_eq!(third["files"][0]["path"], "README.md");
    assert_eq!(
        third["files"][0]["tokens"],
        Tokenizer::Cl100kBase.count(readme)
    );

    // A damaged cache: said, ignored, replaced.
    std::fs::write(&file, b"not a cache file").expect("write");
    let (fourth, stderr) = run(&dir, &[]);
    assert_eq!(fourth["cached"], 0);
    assert_eq!(fourth["total"], third["total"]);
    assert!(stderr.contains("ignoring the file cache"), "{stderr}");
    assert_eq!(run(&dir, &[]).0["cached"], 3, "replaced by a good one");

    // --no-cache (or its variable): nothing read, nothing written.
    std::fs::remove_file(&file).expect("rm");
    assert_eq!(run(&[dir[0], dir[1], "--no-cache"], &[]).0["cached"], 0);
    assert!(!file.exists());
    let yes = std::path::Path::new("true");
    assert_eq!(
        run(&dir, &[("CONTEXT_LOADER_NO_CACHE", yes)]).0["cached"],
        0
    );
    assert!(!file.exists());

    // The default: $XDG_CACHE_HOME/context-loader, else ~/.cache/context-loader.
    let home = project.0.join("home");
    let xdg = project.0.join("xdg");
    run(&[], &[("HOME", &home)]);
    assert!(
        home.join(".cache/context-loader/file-measures.bin")
            .is_file()
    );
    run(&[], &[("HOME", &home), ("XDG_CACHE_HOME", &xdg)]);
    assert!(xdg.join("context-loader/file-measures.bin").is_file());
    let (again, _) = run(&[], &[("HOME", &home), ("XDG_CACHE_HOME", &xdg)]);
    assert_eq!(again["cached"], 3);

    // `load` reads and writes the same cache.
    let fresh = project.0.join("fresh");
    let load = |envs: &[(&str, &std::path::Path)]| {
        BIN.command()
            .env_remove("CONTEXT_LOADER_CACHE_DIR")
            .env_remove("CONTEXT_LOADER_NO_CACHE")
            .envs(envs.iter().copied())
            .args([
                "--root",
                &project.root_arg(),
                "load",
                "src",
                "--budget",
                "400",
            ])
            .output()
            .expect("load")
    };
    assert!(
        load(&[("CONTEXT_LOADER_CACHE_DIR", &fresh)])
            .status
            .success()
    );
    assert!(fresh.join("file-measures.bin").is_file());
}

#[tokio::test]
async fn a_walk_reports_progress_to_a_client_that_asks() {
    let project = Project::new("progress");
    for i in 0..60 {
        project.0.write(
            format!("root/many/file{i:02}.txt"),
            format!("file number {i}\n"),
        );
    }
    for transport in ALL {
        let call = BIN
            .call_on_the_wire(
                transport,
                &["--root", &project.root_arg()],
                "file-tokens",
                json!({"paths": ["many"]}),
                "walk-1",
            )
            .await;
        assert_eq!(
            call.response["result"]["structuredContent"]["files_measured"], 60,
            "{transport:?}: {}",
            call.response
        );
        // What left the server, in its order (rmcp's client may reorder handlers).
        let seen = call.progress();
        assert!(!seen.is_empty(), "{transport:?}: no progress notifications");
        assert!(
            seen.iter().all(|(_, _, token)| token == "walk-1"),
            "{transport:?}: the request's token on each: {seen:?}"
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
    }
}

/// Run the binary in `cwd` with `HOME=home`, feeding `stdin`; (exit code, stdout, stderr).
fn run_in(
    cwd: &std::path::Path,
    home: &std::path::Path,
    args: &[&str],
    stdin: &str,
) -> (i32, String, String) {
    use std::io::Write;
    let mut child = BIN
        .command()
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("CONTEXT_LOADER_ROOTS")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Clients start servers in `/` (Claude Desktop, Cline) or in the home folder (the
/// Claude Code desktop app). Without `--root`, neither becomes the file tools' root:
/// they answer ROOTS_NOT_CONFIGURED saying how to set one, over stdio and on the CLI.
/// A project folder inside the home folder is still the default root, and a root
/// named with `--root` is always served.
#[test]
fn the_disk_and_the_home_folder_are_never_implicit_roots() {
    let scratch = TempTree::new("cl-e2e-home");
    scratch.write("diary.txt", "private\n");
    scratch.write("project/notes.md", "Plans change.\n");
    let home = scratch.path();
    let root = std::path::Path::new("/");

    // The CLI in `/` and in the home folder.
    for (cwd, path) in [(root, "etc/hostname"), (home, "diary.txt")] {
        let (code, stdout, stderr) = run_in(cwd, home, &["files", path], "");
        assert_eq!(code, 1, "{}: {stdout}{stderr}", cwd.display());
        assert!(stderr.contains("ROOTS_NOT_CONFIGURED"), "{stderr}");
        assert!(stderr.contains("--root"), "{stderr}");
        assert!(!stdout.contains(path), "{stdout}");
    }

    // stdio started in `/`, as Claude Desktop does: a piped session.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "load-files", "arguments": {"paths": ["etc/passwd"]}}});
    let input = [
        test_support::client::initialize_request("desktop").to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        call.to_string(),
    ]
    .join("\n")
        + "\n";
    let (code, stdout, stderr) = run_in(root, home, &["stdio"], &input);
    assert_eq!(code, 0, "{stderr}");
    let reply: Value = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["id"] == 2)
        .unwrap_or_else(|| panic!("no reply: {stdout}\n{stderr}"));
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let error = &reply["result"]["structuredContent"];
    assert_eq!(error["error_code"], "ROOTS_NOT_CONFIGURED", "{error}");
    assert!(
        error["message"].as_str().is_some_and(|m| m.contains("`/`")),
        "{error}"
    );
    assert!(!stdout.contains("root:x:0"), "/etc/passwd must not be read");
    assert!(stderr.contains("file tools have no root"), "{stderr}");

    // A project inside the home folder is an ordinary default root; a root named
    // explicitly is served even when it is the home folder.
    let (code, stdout, stderr) = run_in(&home.join("project"), home, &["files", "--json"], "");
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("notes.md"), "{stdout}");
    let (code, stdout, stderr) = run_in(
        root,
        home,
        &["--root", scratch.arg(), "files", "diary.txt"],
        "",
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("diary.txt"), "{stdout}");
}
