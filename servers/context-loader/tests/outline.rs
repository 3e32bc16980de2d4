//! End-to-end: outlines through the built binary. `file-tokens` with `outline`
//! over stdio, HTTP and stateless HTTP (same answers on each) and the CLI's
//! `files --outline`: each file's outline tokens beside its full tokens, files
//! without an outline said per reason, secret-looking files never read for one, and
//! a mistyped `outline` refused with a structured error. `load-files` at each
//! detail, `auto` included (every file at the detail the budget allows, by rank or
//! the `order` asked), over the same transports and the CLI's `load --detail`.

use context_budget::outline::{Bounds, outline};
use context_budget::{Tokenizer, Unobserved};
use serde_json::{Value, json};
use test_support::{ALL, Binary, TempTree, call, structured};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

const LIB_RS: &str = "//! A library.\n\n/// Adds.\npub fn add(a: u32, b: u32) -> u32 {\n    let sum = a + b;\n    // BODY_ONLY\n    sum\n}\n\npub struct Point {\n    pub x: i32,\n    pub y: i32,\n}\n\nimpl Point {\n    pub fn norm(&self) -> i32 {\n        let (x, y) = (self.x, self.y);\n        x * x + y * y\n    }\n}\n";

const README: &str = "# Project\n\nSome words about it, and more words about it, and more.\nAnd a second line of words.\n\n## Use\n\nCall `add`, then more words about how to call it well.\n";

fn project(tag: &str) -> TempTree {
    let dir = TempTree::new(&format!("cl-ol-{tag}"));
    dir.write("root/src/lib.rs", LIB_RS);
    dir.write("root/README.md", README);
    dir.write("root/notes.txt", "plain notes\n");
    // A secret under an outlined name: never read, for an outline or anything.
    let key = dir.write(
        "root/config/server.pem",
        "fn leaked() {\n    secret();\n}\n",
    );
    dir.symlink(key, "root/src/leak.rs");
    dir
}

fn root_arg(dir: &TempTree) -> String {
    dir.join("root").display().to_string()
}

fn outline_tokens(path: &str, text: &str) -> u64 {
    let o = outline(path, text, &Bounds::default(), &Unobserved).expect("an outline");
    Tokenizer::O200kBase.count(&o.text) as u64
}

fn row<'a>(answer: &'a Value, path: &str) -> &'a Value {
    answer["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|r| r["path"] == path)
        .unwrap_or_else(|| panic!("no row {path}: {answer}"))
}

#[tokio::test]
async fn file_tokens_counts_outlines_over_every_transport() {
    let dir = project("all");
    let root = root_arg(&dir);
    let lib = outline_tokens("src/lib.rs", LIB_RS);
    let readme = outline_tokens("README.md", README);
    assert!(lib < Tokenizer::O200kBase.count(LIB_RS) as u64);
    let mut answers = Vec::new();
    for transport in ALL {
        let conn = BIN.connect(transport, &["--root", &root]).await;
        let result = call(
            &conn.client,
            "file-tokens",
            json!({"model": "gpt-4o", "sort": "path", "outline": true}),
        )
        .await;
        assert_eq!(result.is_error, Some(false), "{transport:?}: {result:?}");
        let r = structured(&result);
        assert_eq!(row(r, "src/lib.rs")["outline_tokens"], lib, "{transport:?}");
        assert_eq!(row(r, "README.md")["outline_tokens"], readme);
        assert!(row(r, "notes.txt").get("outline_tokens").is_none());
        let notes = row(r, "notes.txt")["tokens"].as_u64().expect("tokens");
        assert_eq!(r["outline_total"], lib + readme + notes);
        assert_eq!(r["outline_missing"], json!({"no_grammar": 1}));
        let skipped: Vec<&Value> = r["skipped"].as_array().expect("skipped").iter().collect();
        assert!(
            skipped
                .iter()
                .any(|s| s["path"] == "src/leak.rs" && s["reason"] == "secret"),
            "{skipped:?}"
        );
        // Not asked: no outline in the answer.
        let plain = call(&conn.client, "file-tokens", json!({"sort": "path"})).await;
        let p = structured(&plain);
        assert!(p.get("outline_total").is_none() && p.get("outline_missing").is_none());
        assert!(row(p, "src/lib.rs").get("outline_tokens").is_none());
        // Mistyped: a structured error, and the server goes on.
        let wrong = call(&conn.client, "file-tokens", json!({"outline": "yes"})).await;
        assert_eq!(wrong.is_error, Some(true), "{wrong:?}");
        assert_eq!(structured(&wrong)["error_code"], "INVALID_INPUT");
        let after = call(&conn.client, "file-tokens", json!({"outline": true})).await;
        assert_eq!(after.is_error, Some(false));
        answers.push(serde_json::to_value(&result).expect("serialize"));
    }
    assert_eq!(answers[0], answers[1], "stdio vs http");
    assert_eq!(answers[0], answers[2], "stdio vs stateless http");
}

/// The CLI over `dir` as its only root, with no file-measure cache.
fn run_cli(dir: &TempTree, args: &[&str]) -> std::process::Output {
    BIN.command()
        .args(["--root", &root_arg(dir), "--no-cache"])
        .args(args)
        .output()
        .expect("run the CLI")
}

#[test]
fn the_cli_counts_outlines() {
    let dir = project("cli");
    let run = |args: &[&str]| run_cli(&dir, args);
    let json = run(&["files", "--outline", "--json", "--model", "gpt-4o"]);
    assert!(json.status.success(), "{json:?}");
    let answer: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(
        row(&answer, "src/lib.rs")["outline_tokens"],
        outline_tokens("src/lib.rs", LIB_RS)
    );
    let table = run(&["files", "--outline", "--model", "gpt-4o"]);
    let shown = String::from_utf8_lossy(&table.stdout);
    assert!(
        shown.contains("outline") && shown.contains("as outlines "),
        "{shown}"
    );
    assert!(
        shown.contains("without an outline: 1 no_grammar"),
        "{shown}"
    );
    let plain = run(&["files"]);
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("outline"));
}

#[tokio::test]
async fn load_files_packs_each_detail_over_every_transport() {
    let dir = project("load");
    let root = root_arg(&dir);
    let lib = outline("src/lib.rs", LIB_RS, &Bounds::default(), &Unobserved)
        .expect("an outline")
        .text;
    let count = |t: &str| Tokenizer::O200kBase.count(t);
    let mut answers = Vec::new();
    for transport in ALL {
        let conn = BIN.connect(transport, &["--root", &root]).await;
        let load = |detail: Option<&str>| {
            let mut args =
                json!({"paths": ["src/lib.rs", "notes.txt"], "budget": 2000, "model": "gpt-4o"});
            if let Some(detail) = detail {
                args["detail"] = json!(detail);
            }
            call(&conn.client, "load-files", args)
        };
        let result = load(Some("outline")).await;
        assert_eq!(result.is_error, Some(false), "{transport:?}: {result:?}");
        let r = structured(&result);
        let text = r["text"].as_str().expect("text");
        assert!(
            text.starts_with(&format!("<file path=\"src/lib.rs\">\n{lib}")),
            "{text}"
        );
        assert!(!text.contains("BODY_ONLY") && text.contains("plain notes"));
        assert_eq!(r["detail"], "outline");
        assert_eq!(r["included"][0]["detail"], "outline");
        assert_eq!(r["included"][1]["detail"], "full");
        assert_eq!(r["included"][1]["no_outline"], "no_grammar");
        let answer = serde_json::to_string(r).expect("serialize");
        assert_eq!(r["answer_tokens"], count(&answer));

        let paths = load(Some("path")).await;
        let p = structured(&paths);
        assert_eq!(
            p["text"],
            format!(
                "src/lib.rs ({} tokens)\nnotes.txt ({} tokens)\n",
                count(LIB_RS),
                count("plain notes\n")
            )
        );
        // The default is the text, and its answer says nothing of detail.
        let full = load(None).await;
        let f = structured(&full);
        assert!(f["text"].as_str().expect("text").contains("BODY_ONLY"));
        assert!(f.get("detail").is_none() && f["included"][0].get("detail").is_none());
        // A secret behind an outlined name is never read for an outline either.
        let folder = call(
            &conn.client,
            "load-files",
            json!({"paths": ["src"], "budget": 2000, "detail": "outline"}),
        )
        .await;
        let s = structured(&folder);
        assert!(!s["text"].as_str().expect("text").contains("leaked"), "{s}");
        assert!(
            s["skipped"]
                .as_array()
                .expect("skipped")
                .iter()
                .any(|k| k["path"] == "src/leak.rs" && k["reason"] == "secret"),
            "{s}"
        );
        let wrong = load(Some("summary")).await;
        assert_eq!(
            structured(&wrong)["error_code"],
            "INVALID_INPUT",
            "{wrong:?}"
        );
        answers.push(serde_json::to_value(&result).expect("serialize"));
    }
    assert_eq!(answers[0], answers[1], "stdio vs http");
    assert_eq!(answers[0], answers[2], "stdio vs stateless http");
}

#[test]
fn the_cli_loads_outlines_and_paths() {
    let dir = project("cli-load");
    let run = |args: &[&str]| run_cli(&dir, args);
    let lib = outline("src/lib.rs", LIB_RS, &Bounds::default(), &Unobserved)
        .expect("an outline")
        .text;
    let loaded = run(&[
        "load",
        "src/lib.rs",
        "--detail",
        "outline",
        "--budget",
        "2000",
    ]);
    assert!(loaded.status.success(), "{loaded:?}");
    let stdout = String::from_utf8_lossy(&loaded.stdout);
    assert!(
        stdout.starts_with(&format!("<file path=\"src/lib.rs\">\n{lib}</file>")),
        "{stdout}"
    );
    let paths = run(&[
        "load",
        "src/lib.rs",
        "--detail",
        "path",
        "--model",
        "gpt-4o",
        "--budget",
        "2000",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&paths.stdout).trim_end(),
        format!("src/lib.rs ({} tokens)", Tokenizer::O200kBase.count(LIB_RS))
    );
    let wrong = run(&["load", "src/lib.rs", "--detail", "summary"]);
    assert!(!wrong.status.success());
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("outline"),
        "{wrong:?}"
    );
}

/// A tree for `detail: "auto"`: `src/deep/core.rs`, which every other source file
/// uses; 12 users; `a.rs`, used by none, first by path, depth and size alike; and
/// notes without an outline. 15 files.
fn auto_project(tag: &str) -> TempTree {
    let dir = TempTree::new(&format!("cl-auto-{tag}"));
    let functions = |names: &[&str], tail: &str| -> String {
        names
            .iter()
            .map(|name| {
                let body: String = (0..8)
                    .map(|i| format!("    let step_{i} = size * {i} + {i};\n"))
                    .collect();
                format!(
                    "/// {name}, documented.\npub fn {name}(size: usize) -> usize {{\n{body}    {tail}\n}}\n\n"
                )
            })
            .collect()
    };
    dir.write(
        "root/src/deep/core.rs",
        format!(
            "//! The core.\n\npub struct EngineCore {{\n    pub size: usize,\n}}\n\n{}",
            functions(&["start_engine_core", "stop_engine_core"], "size")
        ),
    );
    for i in 0..12 {
        let (one, two) = (format!("user_number_{i}"), format!("user_other_{i}"));
        dir.write(
            format!("root/src/user{i:02}.rs"),
            format!(
                "use crate::deep::core::{{EngineCore, start_engine_core}};\n\n{}",
                functions(&[&one, &two], "start_engine_core(size).size")
            ),
        );
    }
    dir.write("root/a.rs", "pub fn lonely_helper() -> u32 {\n    1\n}\n");
    dir.write("root/notes.txt", "Plain notes about the engine.\n");
    dir
}

const AUTO_PROJECT_FILES: u64 = 15;

/// `detail: "auto"` over stdio, HTTP and stateless HTTP (the same answer on each):
/// proven within the budget and using 90 % of it while more detail remains, every
/// file a path line at least (or counted as left out), the referenced core module
/// first and the unreferenced `a.rs` after it, named files before the rest, the
/// levels counted, the list bounded; over `--max-files`, a clear error.
#[tokio::test]
async fn load_files_auto_fits_every_file_by_rank_over_every_transport() {
    let dir = auto_project("all");
    let root = root_arg(&dir);
    let count = |t: &str| Tokenizer::O200kBase.count(t) as u64;
    let mut answers = Vec::new();
    for transport in ALL {
        let conn = BIN.connect(transport, &["--root", &root]).await;
        let mut outlines = 0;
        let mut omitted_seen = 0;
        // 300 with one row per list: not every path line fits.
        for (budget, rows) in [(300u64, 1u64), (650, 10), (1500, 10), (3000, 10)] {
            let result = call(
                &conn.client,
                "load-files",
                json!({"budget": budget, "model": "gpt-4o", "detail": "auto", "rows": rows}),
            )
            .await;
            assert_eq!(result.is_error, Some(false), "{transport:?}: {result:?}");
            let r = structured(&result);
            let what = format!("{transport:?} at {budget}: {}", r["levels"]);
            let answer_tokens = r["answer_tokens"].as_u64().expect("answer_tokens");
            assert_eq!(
                answer_tokens,
                count(&serde_json::to_string(r).unwrap()),
                "{what}"
            );
            assert!(answer_tokens <= budget, "{what}");
            let text = r["text"].as_str().expect("text");
            assert_eq!(r["tokens"], count(text), "{what}");
            let levels = &r["levels"];
            let level = |name: &str| levels[name].as_u64().expect("a level count");
            let (included, omitted) = (r["included_files"].as_u64(), r["omitted_files"].as_u64());
            let (included, omitted) = (included.unwrap(), omitted.unwrap());
            assert_eq!(level("full") + level("outline") + level("path"), included);
            assert_eq!(included + omitted, AUTO_PROJECT_FILES, "{what}");
            omitted_seen = omitted_seen.max(omitted);
            // Unless the answer limit for this client, not the budget, held detail back.
            if level("full") < AUTO_PROJECT_FILES && r.get("answer_limit").is_none() {
                assert!(
                    answer_tokens * 100 >= budget * 90,
                    "{what}: {answer_tokens}"
                );
            }
            if omitted == 0 {
                for i in 0..12 {
                    assert!(text.contains(&format!("src/user{i:02}.rs")), "{what}");
                }
            }
            let first = r["included"][0]["path"].as_str().unwrap_or_default();
            assert_eq!(first, "src/deep/core.rs", "{what}");
            let lonely = text.find("a.rs (").or_else(|| text.find("\"a.rs\""));
            if let Some(lonely) = lonely {
                assert!(lonely > 0, "{what}");
            }
            assert!(r["included"].as_array().expect("rows").len() as u64 <= rows);
            outlines = outlines.max(level("outline"));
            if budget == 1500 {
                answers.push(r.clone());
            }
        }
        assert!(outlines > 0, "{transport:?}: some budget shows outlines");
        assert!(
            omitted_seen > 0,
            "{transport:?}: some budget leaves path lines out"
        );
        // Named files first, whole, before the ranked rest.
        let named = call(
            &conn.client,
            "load-files",
            json!({"paths": ["notes.txt", "src"], "budget": 1500, "model": "gpt-4o", "detail": "auto"}),
        )
        .await;
        let n = structured(&named);
        assert!(
            n["text"]
                .as_str()
                .expect("text")
                .starts_with("<file path=\"notes.txt\">\nPlain notes about the engine.\n</file>\n"),
            "{n}"
        );
        assert_eq!(n["included"][1]["path"], "src/deep/core.rs", "{n}");
    }
    assert_eq!(answers[0], answers[1], "stdio vs http");
    assert_eq!(answers[0], answers[2], "stdio vs stateless http");

    let conn = BIN
        .connect(
            test_support::Transport::Stdio,
            &["--root", &root, "--max-files", "5"],
        )
        .await;
    let over = call(
        &conn.client,
        "load-files",
        json!({"budget": 1500, "detail": "auto"}),
    )
    .await;
    assert_eq!(over.is_error, Some(true), "{over:?}");
    let o = structured(&over);
    assert_eq!(o["error_code"], "FILE_LIMIT_EXCEEDED", "{o}");
    assert!(
        o["suggestion"]
            .as_str()
            .unwrap_or_default()
            .contains("--max-files"),
        "{o}"
    );
}

#[test]
fn the_cli_loads_auto() {
    let dir = auto_project("cli");
    let loaded = run_cli(
        &dir,
        &[
            "load", "--detail", "auto", "--budget", "1500", "--model", "gpt-4o",
        ],
    );
    assert!(loaded.status.success(), "{loaded:?}");
    let stdout = String::from_utf8_lossy(&loaded.stdout);
    assert!(
        stdout.starts_with("<file path=\"src/deep/core.rs\">\n"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&loaded.stderr);
    assert!(
        stderr.contains(" as outlines, ") && stderr.contains("as paths (ranked)"),
        "{stderr}"
    );
    // Too small a budget for every path line: the report says how many are left out.
    let tight = run_cli(
        &dir,
        &[
            "load", "--detail", "auto", "--budget", "300", "--rows", "1", "--model", "gpt-4o",
        ],
    );
    let stderr = String::from_utf8_lossy(&tight.stderr);
    assert!(
        stderr.contains("not even their path lines fit the budget of 300"),
        "{stderr}"
    );
}

/// [`auto_project`] with its files' times set: every file an hour old but for
/// `src/user07.rs` (the newest) and `a.rs` (the next); `src/deep/core.rs`, the one
/// the others mention, stays an hour old. `notes.txt` is the smallest.
fn dated_project(tag: &str) -> TempTree {
    use std::time::{Duration, SystemTime};
    let dir = auto_project(tag);
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    let mut files = vec![
        "src/deep/core.rs".to_string(),
        "a.rs".into(),
        "notes.txt".into(),
    ];
    files.extend((0..12).map(|i| format!("src/user{i:02}.rs")));
    for path in &files {
        let at = match path.as_str() {
            "src/user07.rs" => hour_ago + Duration::from_secs(600),
            "a.rs" => hour_ago + Duration::from_secs(300),
            _ => hour_ago,
        };
        let file = std::fs::File::options()
            .write(true)
            .open(dir.join("root").join(path))
            .expect("open to date");
        file.set_modified(at).expect("set the time");
    }
    dir
}

/// The first file of an answer, and the detail it is at.
fn first_file(answer: &Value) -> (&str, &str) {
    let first = &answer["included"][0];
    (
        first["path"].as_str().unwrap_or_default(),
        first["detail"].as_str().unwrap_or("full"),
    )
}

/// The detail `path` is at in an answer listing every row.
fn detail_of<'a>(answer: &'a Value, path: &str) -> &'a str {
    let rows = answer["included"].as_array().expect("rows");
    let row = rows.iter().find(|r| r["path"] == path).expect("listed");
    row["detail"].as_str().unwrap_or("full")
}

/// `order` under `detail: "auto"` over stdio, HTTP and stateless HTTP: at a budget
/// that shows three files whole, `recent` shows the newest file first and whole
/// (the file the others mention an outline), `smallest` the smallest, while the
/// default (`mentioned`, the same answer byte for byte) shows the file the others
/// mention first and whole (the newest an outline); named files stay first whatever
/// the order. `recent` and `mentioned` order the other details too.
#[tokio::test]
async fn load_files_auto_takes_the_order_asked_over_every_transport() {
    let dir = dated_project("order");
    let root = root_arg(&dir);
    let mut answers = Vec::new();
    for transport in ALL {
        let conn = BIN.connect(transport, &["--root", &root]).await;
        let load = |args: Value| {
            let client = &conn.client;
            async move {
                let result = call(client, "load-files", args).await;
                assert_eq!(result.is_error, Some(false), "{transport:?}: {result:?}");
                structured(&result).clone()
            }
        };
        let auto = |order: Option<&str>| {
            let mut args = json!({"budget": 2200, "model": "gpt-4o", "detail": "auto", "rows": 0});
            if let Some(order) = order {
                args["order"] = order.into();
            }
            load(args)
        };
        let default = auto(None).await;
        assert_eq!(
            first_file(&default),
            ("src/deep/core.rs", "full"),
            "{default}"
        );
        assert_eq!(detail_of(&default, "src/user07.rs"), "outline", "{default}");
        assert_eq!(default["order"], "mentioned", "{default}");
        let mentioned = auto(Some("mentioned")).await;
        assert_eq!(
            serde_json::to_string(&mentioned).unwrap(),
            serde_json::to_string(&default).unwrap(),
            "{transport:?}: `mentioned` is the default"
        );
        let recent = auto(Some("recent")).await;
        assert_eq!(first_file(&recent), ("src/user07.rs", "full"), "{recent}");
        assert_eq!(recent["included"][1]["path"], "a.rs", "{recent}");
        assert_eq!(
            detail_of(&recent, "src/deep/core.rs"),
            "outline",
            "{recent}"
        );
        let levels = &recent["levels"];
        assert!(
            levels["full"].as_u64() < Some(AUTO_PROJECT_FILES),
            "a budget that shows only some files whole: {levels}"
        );
        let smallest = auto(Some("smallest")).await;
        assert_eq!(first_file(&smallest), ("notes.txt", "full"), "{smallest}");
        assert_eq!(
            detail_of(&smallest, "src/user07.rs"),
            "outline",
            "{smallest}"
        );
        // Named files first, whatever the order.
        let named = load(json!({"paths": ["src/user03.rs", "src"], "budget": 2200,
            "model": "gpt-4o", "detail": "auto", "order": "recent"}))
        .await;
        assert_eq!(first_file(&named).0, "src/user03.rs", "{named}");
        assert_eq!(named["included"][1]["path"], "src/user07.rs", "{named}");
        // The other details: `recent` by time, `mentioned` by rank.
        for (detail, order, first) in [
            ("full", "recent", "src/user07.rs"),
            ("path", "recent", "src/user07.rs"),
            ("outline", "mentioned", "src/deep/core.rs"),
            ("full", "mentioned", "src/deep/core.rs"),
        ] {
            let r = load(json!({"budget": 1500, "model": "gpt-4o", "detail": detail,
                "order": order}))
            .await;
            assert_eq!(first_file(&r).0, first, "{detail} by {order}: {r}");
            assert_eq!(r["order"], order, "{r}");
        }
        answers.push(recent);
    }
    assert_eq!(answers[0], answers[1], "stdio vs http");
    assert_eq!(answers[0], answers[2], "stdio vs stateless http");
}

#[test]
fn the_cli_loads_auto_in_the_order_asked() {
    let dir = dated_project("order-cli");
    let load = |args: &[&str]| {
        let mut all = vec!["load", "--budget", "2000", "--model", "gpt-4o"];
        all.extend_from_slice(args);
        let out = run_cli(&dir, &all);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let default = load(&["--detail", "auto"]);
    assert!(
        default.starts_with("<file path=\"src/deep/core.rs\">\n"),
        "{default}"
    );
    assert_eq!(load(&["--detail", "auto", "--order", "mentioned"]), default);
    let recent = load(&["--detail", "auto", "--order", "recent"]);
    assert!(
        recent.starts_with("<file path=\"src/user07.rs\">\n"),
        "{recent}"
    );
    let smallest = load(&["--detail", "auto", "--order", "smallest"]);
    assert!(
        smallest.starts_with("<file path=\"notes.txt\">\nPlain notes"),
        "{smallest}"
    );
    let full = load(&["--order", "mentioned"]);
    assert!(
        full.starts_with("<file path=\"src/deep/core.rs\">\n"),
        "{full}"
    );
    let help = run_cli(&dir, &["load", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("default mentioned with --detail auto, given otherwise"),
        "{help}"
    );
}
