//! file_tokens and load_files on real folders: ignore rules, hidden files, binary
//! and non-UTF-8 files, FIFOs, symlinks in and out of the root, `..` and absolute
//! paths, secret-looking files, globs, limits, the cache, and the budget promise.

use context_budget::Unobserved;
use context_budget::files::pack::{Detail, PackFormat, PackOrder};
use context_budget::files::roots::Roots;
use context_budget::files::{
    FileLimits, FileQuery, FileSort, FileStore, FileTokens, FilesError, LoadRequest, LoadedFiles,
};
use context_budget::{Catalog, ResolvedModel, Tokenizer};
use proptest::prelude::*;
use test_support::TempTree;

/// A scratch folder whose `root/` is the store's one root (`outside/`, beside it, is
/// not served).
fn tree(name: &str) -> TempTree {
    TempTree::new(&format!("cb-files-{name}"))
}

fn roots(tree: &TempTree) -> Roots {
    Roots::new(&[tree.join("root")]).expect("roots")
}

/// A project with everything the walk must handle.
fn project(name: &str) -> TempTree {
    let tree = tree(name);
    tree.write("root/.gitignore", "target/\n*.log\n");
    tree.write(
        "root/src/main.rs",
        "fn main() {\n    println!(\"hello\");\n}\n",
    );
    tree.write(
        "root/src/lib.rs",
        "pub fn add(a: u32, b: u32) -> u32 { a + b }\n".repeat(20),
    );
    tree.write("root/src/nested/deep.rs", "// deep\npub const X: u8 = 1;\n");
    tree.write("root/README.md", "# Project\n\nSome words about it.\n");
    tree.write("root/target/debug/out.rs", "generated");
    tree.write("root/build.log", "log line\n");
    tree.write("root/.hidden/notes.txt", "hidden notes\n");
    tree.write("root/.env", "API_KEY=sk-secret\n");
    tree.write("root/config/server.pem", "-----BEGIN PRIVATE KEY-----\n");
    tree.write("root/config/app.toml", "name = \"x\"\n");
    tree.write("root/image.png", b"\x89PNG\r\n\x1a\n\0\0\0IHDR");
    tree.write("root/latin1.txt", b"caf\xe9 au lait");
    let secret = tree.write("outside/secret.txt", "outside the root\n");
    tree.symlink(secret, "root/escape.txt");
    tree.symlink(tree.join("outside"), "root/escape_dir");
    tree.symlink(tree.join("root/README.md"), "root/readme_link.md");
    tree.fifo("root/pipe.fifo");
    tree
}

fn model(name: &str) -> ResolvedModel<'_> {
    Catalog::builtin().resolve(name).expect("model")
}

fn tokens(store: &FileStore, roots: &Roots, paths: &[&str]) -> Result<FileTokens, FilesError> {
    let query = FileQuery {
        paths: paths.iter().map(|p| p.to_string()).collect(),
        ..FileQuery::default()
    };
    store.file_tokens(
        roots,
        &query,
        &model("gpt-4o"),
        FileSort::Path,
        None,
        &Unobserved,
    )
}

fn paths(report: &FileTokens) -> Vec<&str> {
    report.files.iter().map(|f| f.path.as_str()).collect()
}

fn skipped(report: &FileTokens, reason: &str) -> Vec<String> {
    report
        .skipped
        .iter()
        .filter(|s| s.reason == reason)
        .map(|s| s.path.clone())
        .collect()
}

#[test]
fn a_folder_walk_honours_gitignore_hidden_and_skips_what_is_not_text() {
    let tree = project("walk");
    let store = FileStore::new(FileLimits::default());
    let report = tokens(&store, &roots(&tree), &["."]).expect("measured");
    assert_eq!(
        paths(&report),
        [
            "README.md",
            "config/app.toml",
            "src/lib.rs",
            "src/main.rs",
            "src/nested/deep.rs"
        ]
    );
    assert_eq!(skipped(&report, "binary"), ["image.png"]);
    assert_eq!(skipped(&report, "not_utf8"), ["latin1.txt"]);
    assert_eq!(skipped(&report, "secret"), ["config/server.pem"]);
    assert_eq!(skipped(&report, "not_regular"), ["pipe.fifo"]);
    assert_eq!(
        skipped(&report, "outside_root"),
        ["escape.txt", "escape_dir"]
    );
    // A link to a file inside the root is that file: counted once.
    assert_eq!(skipped(&report, "duplicate"), ["readme_link.md"]);
    // The folder symlink leaving the root is not followed.
    assert!(
        !report
            .files
            .iter()
            .any(|f| f.path.starts_with("escape_dir"))
    );
    // target/ and build.log by .gitignore; .env, .gitignore, .hidden/ as hidden.
    assert_eq!(report.excluded.ignored, 2, "{:?}", report.excluded);
    assert_eq!(report.excluded.ignored_examples, ["build.log", "target"]);
    assert_eq!(report.excluded.hidden, 3);
    // Counts equal tiktoken-rs's, file by file, and add up to the total.
    let bpe = tiktoken_rs::o200k_base().expect("o200k");
    for row in &report.files {
        let text = std::fs::read_to_string(tree.join("root").join(&row.path)).expect("read");
        assert_eq!(
            row.tokens,
            bpe.encode_ordinary(&text).len() as u64,
            "{}",
            row.path
        );
        assert_eq!(row.bytes, text.len() as u64);
    }
    assert_eq!(
        report.total,
        report.files.iter().map(|f| f.tokens).sum::<u64>()
    );
    let window = report.window.as_ref().expect("gpt-4o has a window");
    assert_eq!(window.context_window, 128_000);
    assert!(window.fits_window);
    // The rollup: one level below what every file shares (the root).
    let src = report
        .folders
        .iter()
        .find(|f| f.path == "src")
        .expect("src row");
    assert_eq!(src.files, 3);
}

/// Each folder's ignore files apply below it with ripgrep's precedence, found from
/// the folder's listing: `.ignore` over `.gitignore`, a deeper file over a shallower
/// one, `.gitignore` files stop at a `.git` (a folder, or a submodule's file) while
/// `.ignore` does not, `.git/info/exclude` holds in its repository, and an ignore
/// file that is a link is not followed.
#[test]
fn ignore_files_apply_from_the_folder_that_lists_them() {
    let tree = tree("ignore-listed");
    tree.write("root/.gitignore", "*.log\n*.rs\n");
    tree.write("root/.ignore", "*.tmp\n");
    tree.write("root/a/.ignore", "!keep.log\n");
    for file in ["a/x.log", "a/keep.log", "a/b/y.log", "a/b/w.log"] {
        tree.write(format!("root/{file}"), "text\n");
    }
    tree.write("root/a/b/.gitignore", "!y.log\n");
    // A submodule: `.git` is a file there.
    tree.write("root/sub/.git", "gitdir: ../.git/modules/sub\n");
    tree.write("root/sub/z.log", "text\n");
    tree.write("root/sub/t.tmp", "text\n");
    tree.write("root/repo/.git/info/exclude", "*.out\n");
    tree.write("root/repo/o.out", "text\n");
    tree.write("root/repo/p.txt", "text\n");
    // `c/.gitignore` links to rules that would leave out `m.txt`: not followed.
    tree.write("root/rules.txt", "m.txt\n");
    tree.write("root/c/m.txt", "text\n");
    tree.symlink(tree.join("root/rules.txt"), "root/c/.gitignore");
    let store = FileStore::new(FileLimits::default());
    let report = tokens(&store, &roots(&tree), &["."]).expect("measured");
    assert_eq!(
        paths(&report),
        [
            "a/b/y.log",
            "a/keep.log",
            "c/m.txt",
            "repo/p.txt",
            "rules.txt",
            "sub/z.log"
        ]
    );
    let mut left_out = report.excluded.ignored_examples.clone();
    left_out.sort();
    assert_eq!(
        left_out,
        ["a/b/w.log", "a/x.log", "repo/o.out", "sub/t.tmp"]
    );
    // The same rules when the walk starts below the folders that hold them.
    let report = tokens(&store, &roots(&tree), &["a/b"]).expect("measured");
    assert_eq!(paths(&report), ["a/b/y.log"]);
}

/// A walk thread that panics (a bug; here the progress report) ends the call with
/// that panic: the walk's other threads stop rather than wait for the folders it
/// would have found, which hung the call.
#[test]
fn a_panic_in_the_walk_ends_the_call_instead_of_hanging_it() {
    struct PanicsOnProgress;
    impl context_budget::ScanControl for PanicsOnProgress {
        fn progress(&self, _done: usize, _total: usize) {
            // resume_unwind: no panic message in the test output.
            std::panic::resume_unwind(Box::new("expected"));
        }
    }
    let tree = tree("walk-panic");
    // Progress is reported every 1,024 entries.
    for folder in 0..8 {
        for file in 0..200 {
            tree.write(format!("root/d{folder}/f{file}.txt"), "x");
        }
    }
    let roots = roots(&tree);
    let (sender, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let store = FileStore::new(FileLimits::default());
        let call = std::panic::AssertUnwindSafe(|| {
            store.file_tokens(
                &roots,
                &FileQuery::default(),
                &model("gpt-4o"),
                FileSort::Path,
                None,
                &PanicsOnProgress,
            )
        });
        let _ = sender.send(std::panic::catch_unwind(call).is_err());
    });
    let panicked = ended
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the call ended");
    assert!(panicked, "the panic reached the caller");
}

/// A file named twice, or reached by a folder and by name, is one file: measured
/// once, in its first place, and not reported as skipped (the walk compares paths by
/// their bytes, so every spelling must reach it as the same bytes).
#[test]
fn a_file_named_twice_is_measured_once_without_a_skip() {
    let tree = project("named-twice");
    let store = FileStore::new(FileLimits::default());
    let absolute = format!("{}//src//main.rs", tree.join("root").display());
    let report = tokens(
        &store,
        &roots(&tree),
        &[
            "src/lib.rs",
            ".",
            "./src/./lib.rs",
            "src",
            "src/*.rs",
            "src/nested/../main.rs",
            &absolute,
        ],
    )
    .expect("measured");
    assert_eq!(
        paths(&report),
        [
            "README.md",
            "config/app.toml",
            "src/lib.rs",
            "src/main.rs",
            "src/nested/deep.rs"
        ]
    );
    assert_eq!(report.files_measured, 5);
    // The link to README.md is still the one duplicate: another name, same file.
    assert_eq!(skipped(&report, "duplicate"), ["readme_link.md"]);
    assert_eq!(
        report.total,
        tokens(&store, &roots(&tree), &["."])
            .expect("measured")
            .total
    );
}

#[test]
fn hidden_files_are_walked_on_request_but_secrets_never_are() {
    let tree = project("hidden");
    let store = FileStore::new(FileLimits::default());
    let query = FileQuery {
        paths: vec![".".into()],
        hidden: true,
        ..FileQuery::default()
    };
    let report = store
        .file_tokens(
            &roots(&tree),
            &query,
            &model("gpt-4o"),
            FileSort::Path,
            None,
            &Unobserved,
        )
        .expect("measured");
    assert!(paths(&report).contains(&".hidden/notes.txt"));
    assert!(paths(&report).contains(&".gitignore"));
    assert_eq!(skipped(&report, "secret"), [".env", "config/server.pem"]);
    // Named explicitly, a secret-looking file is still refused.
    let named = tokens(&store, &roots(&tree), &[".env"]).expect("measured");
    assert!(paths(&named).is_empty());
    assert_eq!(skipped(&named, "secret"), [".env"]);
    // So is an ignored file.
    let ignored = tokens(&store, &roots(&tree), &["build.log"]).expect("measured");
    assert_eq!(paths(&ignored), ["build.log"]);
}

#[test]
fn paths_outside_the_root_are_refused() {
    let tree = project("outside");
    let store = FileStore::new(FileLimits::default());
    let roots = roots(&tree);
    let outside = tree.join("outside/secret.txt");
    for path in [
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        outside.to_str().expect("utf-8"),
        "/etc/passwd",
        "escape.txt",
        "escape_dir/secret.txt",
        "../*",
    ] {
        let error = tokens(&store, &roots, &[path]).expect_err(path);
        assert!(
            matches!(error, FilesError::OutsideRoot { .. }),
            "{path}: {error:?}"
        );
    }
    // An absolute path inside the root is fine, shown relative to it.
    let inside = tree.join("root/src/main.rs");
    let report = tokens(&store, &roots, &[inside.to_str().expect("utf-8")]).expect("inside");
    assert_eq!(paths(&report), ["src/main.rs"]);
    // A symlink inside the root to a file inside the root is followed.
    let link = tokens(&store, &roots, &["readme_link.md"]).expect("link");
    assert_eq!(
        link.total,
        tokens(&store, &roots, &["README.md"]).expect("x").total
    );
    let missing = tokens(&store, &roots, &["nope.rs"]).expect_err("missing");
    assert!(
        matches!(missing, FilesError::NotFound { .. }),
        "{missing:?}"
    );
}

#[test]
fn a_named_fifo_is_skipped_without_blocking() {
    let tree = project("fifo");
    let store = FileStore::new(FileLimits::default());
    // Opening a FIFO for reading blocks until a writer comes, unless O_NONBLOCK;
    // it is not even opened since it is not a regular file.
    let report = tokens(&store, &roots(&tree), &["pipe.fifo"]).expect("answer");
    assert!(report.files.is_empty());
    assert_eq!(skipped(&report, "not_regular"), ["pipe.fifo"]);
}

#[test]
fn globs_and_filters_select_files() {
    let tree = project("globs");
    let store = FileStore::new(FileLimits::default());
    let roots = roots(&tree);
    let rust = tokens(&store, &roots, &["src/**/*.rs"]).expect("glob");
    assert_eq!(
        paths(&rust),
        ["src/lib.rs", "src/main.rs", "src/nested/deep.rs"]
    );
    let shallow = tokens(&store, &roots, &["src/*.rs"]).expect("glob");
    assert_eq!(paths(&shallow), ["src/lib.rs", "src/main.rs"]);
    let by_name = tokens(&store, &roots, &["*.md"]).expect("glob");
    assert_eq!(paths(&by_name), ["README.md"]);
    let query = FileQuery {
        paths: vec![".".into()],
        include: vec!["*.rs".into()],
        exclude: vec!["src/nested/**".into()],
        hidden: false,
        outline: false,
    };
    let filtered = store
        .file_tokens(
            &roots,
            &query,
            &model("gpt-4o"),
            FileSort::Path,
            None,
            &Unobserved,
        )
        .expect("filtered");
    assert_eq!(paths(&filtered), ["src/lib.rs", "src/main.rs"]);
    let bad = tokens(&store, &roots, &["src/[.rs"]).expect_err("bad glob");
    assert!(matches!(bad, FilesError::InvalidPath { .. }), "{bad:?}");
}

#[test]
fn limits_stop_calls_with_errors_naming_them() {
    let tree = project("limits");
    let roots = roots(&tree);
    let few_files = FileStore::new(FileLimits {
        max_files: 2,
        ..FileLimits::default()
    });
    assert!(matches!(
        tokens(&few_files, &roots, &["."]),
        Err(FilesError::TooManyFiles { limit: 2, .. })
    ));
    let few_bytes = FileStore::new(FileLimits {
        max_total_bytes: 100,
        ..FileLimits::default()
    });
    let error = tokens(&few_bytes, &roots, &["."]).expect_err("bytes");
    assert!(error.to_string().contains("--max-total-bytes"), "{error}");
    let small_files = FileStore::new(FileLimits {
        max_file_bytes: 100,
        ..FileLimits::default()
    });
    let report = tokens(&small_files, &roots, &["src"]).expect("answer");
    assert_eq!(skipped(&report, "too_large"), ["src/lib.rs"]);
    let few_entries = FileStore::new(FileLimits {
        max_walk_entries: 3,
        ..FileLimits::default()
    });
    let error = tokens(&few_entries, &roots, &["."]).expect_err("entries");
    assert!(error.to_string().contains("--max-walk-entries"), "{error}");
    // The call's own paths and globs are bounded before anything is compiled.
    let few_patterns = FileStore::new(FileLimits {
        max_patterns: 2,
        max_pattern_bytes: 8,
        ..FileLimits::default()
    });
    assert!(matches!(
        tokens(&few_patterns, &roots, &["src", "README.md", "docs"]),
        Err(FilesError::TooManyPatterns { count: 3, limit: 2 })
    ));
    assert!(matches!(
        tokens(&few_patterns, &roots, &["src/lib.rs/x"]),
        Err(FilesError::PatternTooLong {
            field: "paths",
            bytes: 12,
            limit: 8
        })
    ));
}

#[test]
fn repeat_calls_are_answered_from_the_cache_until_a_file_changes() {
    let tree = project("cache");
    let store = FileStore::new(FileLimits::default());
    let roots = roots(&tree);
    let first = tokens(&store, &roots, &["src"]).expect("first");
    assert_eq!(first.cached, 0);
    let second = tokens(&store, &roots, &["src"]).expect("second");
    assert_eq!(second.cached, 3);
    assert_eq!(second.files, first.files);
    tree.write("root/src/main.rs", "fn main() {}\n");
    let third = tokens(&store, &roots, &["src"]).expect("third");
    assert_eq!(third.cached, 2);
    let main = third
        .files
        .iter()
        .find(|f| f.path == "src/main.rs")
        .expect("main");
    assert_eq!(
        main.tokens,
        Tokenizer::O200kBase.count("fn main() {}\n") as u64
    );
}

#[test]
fn client_roots_narrow_the_server_roots() {
    let tree = project("narrow");
    let roots = roots(&tree);
    let narrowed = roots.narrow(&[tree.join("root/src")]).expect("inside");
    let store = FileStore::new(FileLimits::default());
    let report = tokens(&store, &narrowed, &["."]).expect("measured");
    assert_eq!(paths(&report), ["lib.rs", "main.rs", "nested/deep.rs"]);
    assert!(tokens(&store, &narrowed, &["../README.md"]).is_err());
    let elsewhere = roots.narrow(&[tree.join("outside")]);
    assert!(matches!(elsewhere, Err(FilesError::NoSharedRoot { .. })));
    // A client root above ours keeps ours.
    let above = roots.narrow(&[tree.path().to_path_buf()]).expect("above");
    assert_eq!(above, roots);
}

fn load(
    store: &FileStore,
    roots: &Roots,
    paths: &[&str],
    request: &LoadRequest,
    model_name: &str,
) -> LoadedFiles {
    let query = FileQuery {
        paths: paths.iter().map(|p| p.to_string()).collect(),
        ..FileQuery::default()
    };
    store
        .load_files(roots, &query, request, &model(model_name), &Unobserved)
        .expect("loaded")
}

#[test]
fn load_files_packs_in_each_format_and_reports_what_it_left_out() {
    let tree = project("load");
    let store = FileStore::new(FileLimits::default());
    let roots = roots(&tree);
    let xml = load(
        &store,
        &roots,
        &["src/main.rs", "README.md"],
        &LoadRequest::default(),
        "gpt-4o",
    );
    assert_eq!(
        xml.text,
        "<file path=\"src/main.rs\">\nfn main() {\n    println!(\"hello\");\n}\n</file>\n\
         <file path=\"README.md\">\n# Project\n\nSome words about it.\n</file>\n"
    );
    assert_eq!(xml.tokens, Tokenizer::O200kBase.count(&xml.text) as u64);
    // The whole answer, as a client passes it on, is what the budget bounds.
    let answer = context_budget::answer::answer_text(&xml);
    assert_eq!(
        xml.answer_tokens,
        Tokenizer::O200kBase.count(&answer) as u64
    );
    // 90 % of 128,000 minus min(16,384 output, 16,000) is over the answer limit,
    // which caps it.
    assert_eq!(xml.budget_source, "answer_limit");
    assert_eq!(
        xml.budget,
        context_budget::answer::DEFAULT_MAX_ANSWER_TOKENS
    );
    let small = LoadRequest {
        answer_limit: context_budget::AnswerLimit {
            tokens: 1_000_000,
            chars: 10_000_000,
            bytes: usize::MAX,
            source: context_budget::LimitSource::CommandLine,
        },
        ..LoadRequest::default()
    };
    let uncapped = load(&store, &roots, &["src/main.rs"], &small, "gpt-4o");
    assert_eq!(uncapped.budget_source, "default");
    assert_eq!(uncapped.budget, 115_200 - 16_000);
    let over = store.load_files(
        &roots,
        &FileQuery::default(),
        &LoadRequest {
            budget: Some(20_001),
            ..LoadRequest::default()
        },
        &model("gpt-4o"),
        &Unobserved,
    );
    assert!(matches!(
        over,
        Err(FilesError::BudgetOverAnswerLimit {
            budget: 20_001,
            limit: 20_000
        })
    ));
    let md = load(
        &store,
        &roots,
        &["src/main.rs"],
        &LoadRequest {
            format: PackFormat::Markdown,
            ..LoadRequest::default()
        },
        "gpt-4o",
    );
    assert!(
        md.text.starts_with("## src/main.rs\n\n```rust\nfn main()"),
        "{}",
        md.text
    );
    // A small budget: smallest first fits more files than the given order.
    let budget = 400;
    let given = load(
        &store,
        &roots,
        &["src"],
        &LoadRequest {
            budget: Some(budget),
            ..LoadRequest::default()
        },
        "gpt-4o",
    );
    assert!(given.answer_tokens <= budget);
    assert_eq!(
        given
            .omitted
            .iter()
            .map(|o| o.path.as_str())
            .collect::<Vec<_>>(),
        ["src/lib.rs"]
    );
    assert_eq!(given.omitted[0].reason, "over_budget");
    let truncated = load(
        &store,
        &roots,
        &["src/lib.rs"],
        &LoadRequest {
            budget: Some(budget),
            max_file_tokens: Some(40),
            ..LoadRequest::default()
        },
        "gpt-4o",
    );
    assert_eq!(truncated.included.len(), 1);
    assert!(truncated.included[0].truncated);
    assert!(truncated.text.contains("truncated by load-files"));
    assert!(
        truncated
            .text
            .starts_with("<file path=\"src/lib.rs\">\npub fn add")
    );
    assert!(truncated.answer_tokens <= budget);
    // Skipped files are reported by load-files too.
    let all = load(
        &store,
        &roots,
        &["."],
        &LoadRequest {
            order: Some(PackOrder::Path),
            ..LoadRequest::default()
        },
        "gpt-4o",
    );
    assert_eq!(all.skipped_counts.get("binary"), Some(&1));
    assert!(!all.text.contains("sk-secret"));
}

#[test]
fn a_bare_encoding_needs_a_budget() {
    let tree = project("encoding");
    let store = FileStore::new(FileLimits::default());
    let query = FileQuery {
        paths: vec!["src".into()],
        ..FileQuery::default()
    };
    let error = store
        .load_files(
            &roots(&tree),
            &query,
            &LoadRequest::default(),
            &model("cl100k_base"),
            &Unobserved,
        )
        .expect_err("no window");
    assert!(matches!(error, FilesError::NoDefaultBudget { .. }));
}

/// Contents that stress token boundaries between pieces: text that ends without a
/// newline, runs of spaces, punctuation, non-ASCII, backticks.
fn content() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("fn main() {}".to_string()),
            Just("   ".to_string()),
            Just("\n".to_string()),
            Just("```".to_string()),
            Just("한국어 ".to_string()),
            Just("🦊".to_string()),
            Just("</file>".to_string()),
            "[a-z]{1,8}",
            "[ -~]{1,12}",
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn load_files_never_exceeds_its_budget_and_reports_the_exact_count(
        contents in prop::collection::vec(content(), 1..6),
        budget in 0u64..1500,
        max_file_tokens in prop::option::of(0u64..80),
        format in prop_oneof![Just(PackFormat::Xml), Just(PackFormat::Markdown), Just(PackFormat::Plain)],
        order in prop_oneof![Just(PackOrder::Given), Just(PackOrder::Smallest), Just(PackOrder::Path)],
        model_name in prop_oneof![Just("gpt-4o"), Just("gpt-4"), Just("claude-sonnet-4-5")],
        // `auto` chooses each file's level by its own estimate of the report: the
        // same proof holds whatever it chose, outlines (`.rs`, `.md`) included.
        detail in prop_oneof![Just(Detail::Full), Just(Detail::Auto)],
        extension in prop_oneof![Just("txt"), Just("rs"), Just("md")],
    ) {
        let tree = tree("prop");
        for (i, text) in contents.iter().enumerate() {
            tree.write(format!("root/f{i}.{extension}"), text);
        }
        let store = FileStore::new(FileLimits::default());
        let query = FileQuery { paths: vec![".".into()], ..FileQuery::default() };
        let request = LoadRequest { budget: Some(budget), order: Some(order), format, detail, max_file_tokens, ..LoadRequest::default() };
        let tokenizer = model(model_name).tokenizer();
        match store.load_files(&roots(&tree), &query, &request, &model(model_name), &Unobserved) {
            Ok(loaded) => {
                prop_assert_eq!(loaded.tokens, tokenizer.count(&loaded.text) as u64);
                // The answer as the model receives it: counted exactly, within the budget.
                let answer = context_budget::answer::answer_text(&loaded);
                prop_assert_eq!(loaded.answer_tokens, tokenizer.count(&answer) as u64);
                prop_assert!(loaded.answer_tokens <= budget);
                prop_assert_eq!(loaded.included_files + loaded.omitted_files, contents.len());
                if let Some(levels) = loaded.levels {
                    prop_assert_eq!(levels.full + levels.outline + levels.path, loaded.included_files);
                }
            }
            // Too small a budget for the report itself is refused, never exceeded.
            Err(FilesError::BudgetBelowReport { envelope, .. }) => prop_assert!(envelope + 4 > budget / 2),
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
    }
}

/// Issue 20, row 7: the secret rules looked at the link's own name only, so
/// `config.txt -> .env` and `notes.md -> id_rsa` were loaded; with `hidden`,
/// `.git/config` (a token in a remote URL), `.docker/config.json` and `.kube/config`
/// were too; gcloud's `application_default_credentials.json` even without it; and a
/// secret named explicitly was read. Now none of them is, whichever way reached.
#[test]
fn credentials_are_refused_through_links_by_their_path_and_when_named() {
    let tree = tree("credentials");
    let credentials = [
        ".env",
        "id_rsa",
        ".git/config",
        ".docker/config.json",
        ".kube/config",
        "gcloud/application_default_credentials.json",
        ".aws/credentials",
        ".netrc",
        ".npmrc",
        ".pypirc",
        "tls/server.key",
        ".ssh/deploy_github",
    ];
    for (i, path) in credentials.iter().enumerate() {
        tree.write(format!("root/{path}"), format!("TOKEN-{i}-ghp_leak\n"));
    }
    tree.write("root/src/main.rs", "fn main() {}\n");
    let root = tree.join("root");
    tree.symlink(root.join(".env"), "root/config.txt");
    tree.symlink(root.join("id_rsa"), "root/notes.md");
    tree.symlink(root.join(".git/config"), "root/src/remote.txt");
    let store = FileStore::new(FileLimits::default());
    let roots = roots(&tree);
    for hidden in [false, true] {
        let query = FileQuery {
            paths: vec![".".into()],
            hidden,
            ..FileQuery::default()
        };
        let report = store
            .file_tokens(
                &roots,
                &query,
                &model("gpt-4o"),
                FileSort::Path,
                None,
                &Unobserved,
            )
            .expect("measured");
        assert_eq!(paths(&report), ["src/main.rs"], "hidden: {hidden}");
        let refused = skipped(&report, "secret");
        for link in ["config.txt", "notes.md", "src/remote.txt"] {
            assert!(refused.contains(&link.to_string()), "{link}: {refused:?}");
        }
        let loaded = store
            .load_files(
                &roots,
                &query,
                &LoadRequest::default(),
                &model("gpt-4o"),
                &Unobserved,
            )
            .expect("loaded");
        assert!(!loaded.text.contains("ghp_leak"), "{}", loaded.text);
    }
    // Named one by one (the links too), each is refused as a secret.
    let named: Vec<&str> = credentials
        .iter()
        .copied()
        .chain(["config.txt", "notes.md", "src/remote.txt"])
        .collect();
    let report = tokens(&store, &roots, &named).expect("measured");
    assert!(paths(&report).is_empty(), "{:?}", paths(&report));
    assert_eq!(skipped(&report, "secret").len(), named.len());
    let loaded = store
        .load_files(
            &roots,
            &FileQuery {
                paths: named.iter().map(|p| p.to_string()).collect(),
                ..FileQuery::default()
            },
            &LoadRequest::default(),
            &model("gpt-4o"),
            &Unobserved,
        )
        .expect("loaded");
    assert!(!loaded.text.contains("ghp_leak"));
}

/// Issue 20, row 10: names that are not UTF-8 were shown lossily, so `n\xff.txt`
/// and `n\xfe.txt` both became `n\u{fffd}.txt` and one vanished as a duplicate.
/// Each now shows its own bytes (`n\\xff.txt`); a name that still shows the same as
/// another (a literal backslash) is reported under `skipped`, never dropped unseen.
#[test]
fn names_that_are_not_utf8_stay_apart_and_a_clash_is_reported() {
    use std::os::unix::ffi::OsStrExt;
    let tree = tree("raw-names");
    tree.write("root/a.txt", "plain\n");
    let root = tree.join("root");
    for raw in [&b"n\xff.txt"[..], b"n\xfe.txt"] {
        std::fs::write(root.join(std::ffi::OsStr::from_bytes(raw)), "raw bytes\n")
            .expect("raw name");
    }
    let store = FileStore::new(FileLimits::default());
    let report = tokens(&store, &roots(&tree), &["."]).expect("measured");
    assert_eq!(paths(&report), ["a.txt", "n\\xfe.txt", "n\\xff.txt"]);
    assert_eq!(report.files_measured, 3);
    // A literal backslash name shows as one of them: both files are accounted for.
    tree.write("root/n\\xff.txt", "literal backslash\n");
    let report = tokens(&store, &roots(&tree), &["."]).expect("measured");
    assert_eq!(report.files_measured, 3, "{:?}", paths(&report));
    assert_eq!(skipped(&report, "duplicate"), ["n\\xff.txt"]);
    let loaded = load(
        &store,
        &roots(&tree),
        &["."],
        &LoadRequest::default(),
        "gpt-4o",
    );
    assert_eq!(loaded.included_files, 3);
    assert_eq!(loaded.skipped_counts.get("duplicate"), Some(&1));
}

/// Calls `grow` once, when `load-files` starts packing: its progress total then
/// jumps from walked + measured to walked + twice the measured files.
struct GrowWhenPacking<F: Fn() + Sync> {
    grow: F,
    measuring_total: std::sync::Mutex<Option<usize>>,
    grown: std::sync::atomic::AtomicBool,
}

impl<F: Fn() + Sync> context_budget::ScanControl for GrowWhenPacking<F> {
    fn progress(&self, done: usize, total: usize) {
        if done >= total {
            return; // the walk's own progress
        }
        let mut first = self.measuring_total.lock().expect("lock");
        match *first {
            None => *first = Some(total),
            Some(measuring) if total > measuring => {
                if !self.grown.swap(true, std::sync::atomic::Ordering::SeqCst) {
                    (self.grow)();
                }
            }
            Some(_) => {}
        }
    }
}

/// Issue 20, row 8: files that grew between measuring and packing were packed
/// whole: 300 MB of text came back with --max-total-bytes 1,000,000. The second read
/// is held to the same limit.
#[test]
fn files_that_grow_before_packing_stay_within_the_byte_limit() {
    let tree = tree("grow");
    for i in 0..8 {
        tree.write(format!("root/f{i}.txt"), "small\n");
    }
    let root = tree.join("root");
    let store = FileStore::new(FileLimits {
        max_total_bytes: 10_000,
        ..FileLimits::default()
    });
    let control = GrowWhenPacking {
        grow: || {
            for i in 0..8 {
                std::fs::write(root.join(format!("f{i}.txt")), "grown words\n".repeat(300))
                    .expect("grow");
            }
        },
        measuring_total: std::sync::Mutex::new(None),
        grown: std::sync::atomic::AtomicBool::new(false),
    };
    let request = LoadRequest {
        answer_limit: context_budget::AnswerLimit {
            tokens: 1_000_000,
            chars: 10_000_000,
            bytes: usize::MAX,
            source: context_budget::LimitSource::CommandLine,
        },
        ..LoadRequest::default()
    };
    let result = store.load_files(
        &roots(&tree),
        &FileQuery::default(),
        &request,
        &model("gpt-4o"),
        &control,
    );
    assert!(control.grown.load(std::sync::atomic::Ordering::SeqCst));
    match result {
        Err(FilesError::TooManyBytes { limit: 10_000 }) => {}
        Err(other) => panic!("{other}"),
        Ok(loaded) => panic!("{} bytes of text loaded", loaded.text.len()),
    }
}

/// Cancels at the `at`-th progress report (counting from 1); counts them.
struct CancelAt {
    at: usize,
    calls: std::sync::atomic::AtomicUsize,
}

impl context_budget::ScanControl for CancelAt {
    fn progress(&self, _done: usize, _total: usize) {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    fn is_cancelled(&self) -> bool {
        self.calls.load(std::sync::atomic::Ordering::SeqCst) >= self.at
    }
}

/// Issue 20, row 1: the final check of `load-files` (count the whole answer, drop
/// pieces while over) ignored cancellation. A call cancelled at its last progress
/// report (the last batch being packed) now stops there.
#[test]
fn a_load_cancelled_while_packing_stops_before_the_final_count() {
    let tree = tree("cancel-pack");
    for i in 0..40 {
        tree.write(format!("root/f{i:02}.txt"), format!("file {i}\n"));
    }
    let store = FileStore::new(FileLimits::default());
    let query = FileQuery::default();
    let request = LoadRequest::default();
    let count = CancelAt {
        at: usize::MAX,
        calls: Default::default(),
    };
    store
        .load_files(&roots(&tree), &query, &request, &model("gpt-4o"), &count)
        .expect("loaded");
    let reports = count.calls.load(std::sync::atomic::Ordering::SeqCst);
    let cancel = CancelAt {
        at: reports,
        calls: Default::default(),
    };
    let result = store.load_files(&roots(&tree), &query, &request, &model("gpt-4o"), &cancel);
    assert!(matches!(result, Err(FilesError::Cancelled)), "{result:?}");
}

/// Issue 20, row 3: a `.gitignore` is repository content. One of 100,000 lines took
/// 13 s and 1.7 GB per call, was compiled again for every `paths` entry, and neither
/// the walk's clock nor cancellation applied. Ignore files are now bounded in size
/// and in patterns per call, read once per call, and compiled only within the walk's
/// clock and while the call is wanted.
#[test]
fn ignore_files_are_bounded_read_once_per_call_and_within_the_walk_clock() {
    let tree = tree("ignore-bounds");
    let patterns: String = (0..100).map(|i| format!("build-{i}/\n")).collect();
    tree.write("root/.gitignore", format!("{patterns}*.log\n"));
    for d in ["d0", "d1", "d2"] {
        tree.write(format!("root/{d}/a.txt"), "kept\n");
        tree.write(format!("root/{d}/b.log"), "ignored\n");
    }
    let roots = roots(&tree);
    let query = |paths: &[&str]| FileQuery {
        paths: paths.iter().map(|p| p.to_string()).collect(),
        ..FileQuery::default()
    };
    let run = |limits: FileLimits, paths: &[&str], control: &dyn context_budget::ScanControl| {
        FileStore::new(limits).file_tokens(
            &roots,
            &query(paths),
            &model("gpt-4o"),
            FileSort::Path,
            None,
            control,
        )
    };
    // Within the bounds the rules apply as before.
    let report = run(FileLimits::default(), &["d0", "d1", "d2"], &Unobserved).expect("measured");
    assert_eq!(paths(&report), ["d0/a.txt", "d1/a.txt", "d2/a.txt"]);
    assert_eq!(report.excluded.ignored, 3);
    // 101 patterns, read once for three walks: within 150, not 303 over it.
    let few_patterns = FileLimits {
        max_ignore_patterns: 150,
        ..FileLimits::default()
    };
    let report = run(few_patterns, &["d0", "d1", "d2"], &Unobserved).expect("read once");
    assert_eq!(report.files_measured, 3);
    let fewer = FileLimits {
        max_ignore_patterns: 100,
        ..FileLimits::default()
    };
    assert!(matches!(
        run(fewer, &["d0"], &Unobserved),
        Err(FilesError::TooManyIgnorePatterns { limit: 100, .. })
    ));
    let small = FileLimits {
        max_ignore_bytes: 100,
        ..FileLimits::default()
    };
    match run(small, &["."], &Unobserved) {
        Err(FilesError::IgnoreFilesTooLarge { path, limit, .. }) => {
            assert!(path.ends_with(".gitignore"), "{path}");
            assert_eq!(limit, 100);
        }
        other => panic!("{other:?}"),
    }
    tree.write("root/d2/.gitignore", format!("{}\n", "a*".repeat(100)));
    let short = FileLimits {
        max_pattern_bytes: 100,
        ..FileLimits::default()
    };
    assert!(matches!(
        run(short, &["d2"], &Unobserved),
        Err(FilesError::IgnorePatternTooLong {
            bytes: 200,
            limit: 100,
            ..
        })
    ));
    // The clock and cancellation hold while ignore files are compiled, even in a
    // walk too small to reach the walker's own checks.
    let no_time = FileLimits {
        walk_timeout: std::time::Duration::ZERO,
        ..FileLimits::default()
    };
    assert!(matches!(
        run(no_time, &["."], &Unobserved),
        Err(FilesError::WalkTooSlow { .. })
    ));
    let cancelled = CancelAt {
        at: 0,
        calls: Default::default(),
    };
    assert!(matches!(
        run(FileLimits::default(), &["."], &cancelled),
        Err(FilesError::Cancelled)
    ));
}

/// Issue 39: Codex cuts an answer by its UTF-8 bytes. A tree of Cyrillic and Chinese
/// text (two and three bytes a character) loaded under a byte limit stays within it,
/// and uses most of it: the limit is a bound, not a reason to load little.
#[test]
fn a_load_under_a_byte_limit_stays_within_its_bytes() {
    let tree = tree("bytes");
    for i in 0..40 {
        tree.write(
            format!("root/ru{i:02}.txt"),
            "Сколько стоит этот файл в токенах? ".repeat(40),
        );
        tree.write(
            format!("root/zh{i:02}.txt"),
            "这个文件要多少个词元？".repeat(60),
        );
    }
    let store = FileStore::new(FileLimits::default());
    let limit = context_budget::clients::by_id("codex")
        .expect("codex row")
        .limit;
    let request = LoadRequest {
        answer_limit: limit,
        ..LoadRequest::default()
    };
    let loaded = store
        .load_files(
            &roots(&tree),
            &FileQuery::default(),
            &request,
            &model("gpt-4o"),
            &Unobserved,
        )
        .expect("loaded");
    let answer = context_budget::answer::answer_text(&loaded);
    assert!(loaded.omitted_files > 0, "the tree is over the limit");
    assert_eq!(loaded.answer_limit, Some(limit.to_string()));
    assert!(
        answer.len() <= limit.bytes,
        "{} bytes against {}",
        answer.len(),
        limit.bytes
    );
    assert!(
        answer.len() >= limit.bytes * 85 / 100,
        "only {} bytes of {}",
        answer.len(),
        limit.bytes
    );
}
