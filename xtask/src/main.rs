//! Development automation: `cargo xtask ci` (what CI runs), `bench`, `load` and the
//! interoperability suites; `cargo xtask --help` lists them. Plain Rust instead of
//! shell scripts, so it runs wherever cargo does.

mod actionlint;
mod app;
mod background;
mod bench;
mod bundle;
mod catalog;
mod claude_code;
mod clients;
mod codex;
mod conformance;
mod copilot;
mod disk;
mod fuzz;
mod gemini_cli;
mod image;
mod install;
mod kube;
mod load;
mod load_generator;
mod mcp_fleet;
mod nginx;
mod node;
mod peer;
mod prefetch;
mod probe;
mod python;
mod real_clients;
mod server;
mod spawned;
mod spec_corpus;
mod timing;
mod tokenizer_refs;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

/// Development automation for this workspace.
#[derive(Debug, Parser)]
#[command(
    name = "xtask",
    bin_name = "cargo xtask",
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// What CI runs: fmt --check, clippy -D warnings, every test (unit, differential,
    /// e2e, the docs' examples), nginx, conformance, clients, fuzz, packaging (install,
    /// actionlint, bundle, image, kube), mcp-tokens, and smoke runs of bench and load.
    Ci,
    /// Counting throughput vs tiktoken-rs, encoder load, stdio cold start; writes
    /// BENCHMARKS.md.
    Bench {
        /// Dev build and tiny corpora, no BENCHMARKS.md: only checks the harness works.
        #[arg(long)]
        quick: bool,
        /// Run only these sections (repeatable; report in target/bench/report.md, not
        /// BENCHMARKS.md): counting, encoder-load, cold-start, stdio, http, specs,
        /// fit-messages, tokenizer-families, files, tool-list.
        #[arg(long)]
        only: Vec<String>,
        /// Use the binaries already built in target/ (with --only, after building just
        /// the examples those sections run).
        #[arg(long)]
        no_build: bool,
    },
    /// Regenerate the shipped model catalog from LiteLLM's model list (`--from FILE`),
    /// or check (`--check`) that it is exactly what the pinned LiteLLM release gives.
    Catalog(catalog::CatalogArgs),
    /// Reference counts by Python sentencepiece and tokenizers for the differential
    /// tests of Gemini and open-weight tokenizers (target/xtask/tokenizer-refs).
    TokenizerRefs,
    /// Bounded load test: concurrent MCP clients against the stateless HTTP server on
    /// loopback; fails on any error or memory growth.
    Load(load::LoadArgs),
    /// Write the deterministic benchmark spec repository under DIR (replacing it).
    SpecCorpus {
        dir: PathBuf,
        /// How many specs to write.
        #[arg(long, default_value_t = 2000)]
        specs: usize,
    },
    /// The MCP conformance suite (npx, Node >= 22, fetched if older) against a fresh
    /// `context-loader http`; baseline in xtask/conformance-expected-failures.yml.
    Conformance,
    /// The MCP App in headless Chromium (Debian's, installed with apt-get when
    /// missing): each `--html` report loaded, and a host on the official AppBridge
    /// (npm, pinned; xtask/app/) calling each linked tool over streamable HTTP, the
    /// app's DOM checked against the result; a screenshot of each view in
    /// target/xtask/app/; the page's size and the tool list's growth per client.
    App {
        /// Also copy the README's three screenshots to docs/img/app-*.png.
        #[arg(long)]
        screenshots: bool,
    },
    /// The e2e client suite through nginx (deploy/nginx) over two stateless replicas;
    /// installs nginx with apt-get when missing.
    Proxy,
    /// The Python mcp SDK client and the MCP Inspector CLI over stdio and HTTP, then
    /// Claude Code, Codex CLI, Gemini CLI and GitHub Copilot CLI (pinned, from npm)
    /// against scripted stand-ins for their model APIs; results asserted.
    Clients {
        /// Run only these real clients (repeatable): claude-code, codex, gemini-cli,
        /// copilot-cli;
        /// the Python SDK and Inspector checks are then left out.
        #[arg(long)]
        only: Vec<String>,
    },
    /// mcp-fuzzer, tools and protocol modes over stdio and HTTP: 0 crashes, 0 hangs.
    Fuzz,
    /// `cargo install --locked --path servers/context-loader` into target/xtask/install
    /// (the release build the bundle and image reuse), then the installed binary's
    /// `--version` and a stdio initialize + tools/list.
    Install,
    /// actionlint (with shellcheck) on .github/workflows/ci.yml and release.yml.
    Actionlint,
    /// The Claude Desktop bundle (target/xtask/bundle/*.mcpb): mcpb validate and pack,
    /// then unpacked and started as Claude Desktop would start it, and checked.
    Bundle,
    /// The container image (podman): built, its config inspected, its entrypoint run
    /// from its own filesystem and checked (health, readiness, auth, SIGTERM).
    Image,
    /// deploy/kubernetes rendered and validated (Kubernetes 1.37); the Deployment's
    /// container run from the image with its args, env and user, probed, drained.
    Kube,
    /// mcp-tokens: our own tool list under its budget, and a loopback fleet of Python
    /// SDK servers in every client config format (issue 24). `--bench`: 20 servers
    /// against PyPI mcp-token-lint.
    McpTokens {
        #[arg(long)]
        bench: bool,
    },
    /// Install every pinned tool the ci steps use (Node, the real clients, npx
    /// packages, npm peers, mcpb, the Python venvs, LiteLLM's wheel) where the steps
    /// look for them; ci runs it in the background during clippy and the tests.
    Prefetch,
    /// Check the marked examples of README.md and docs/*.md against the built binary
    /// (ci runs the same test); `--bless` rewrites the ones that differ from a real run.
    Readme {
        #[arg(long)]
        bless: bool,
    },
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().task {
        Task::Ci => ci(),
        Task::Bench {
            quick,
            only,
            no_build,
        } => bench::run(quick, &only, no_build),
        Task::Catalog(args) => catalog::run(&args),
        Task::TokenizerRefs => tokenizer_refs::ensure(&workspace_root()).map(|dir| {
            eprintln!("reference counts in {}", dir.display());
        }),
        Task::Load(args) => load::run(&args),
        Task::SpecCorpus { dir, specs } => spec_corpus::run(&dir, specs),
        Task::Conformance => conformance::run(&workspace_root()),
        Task::App { screenshots } => app::run(screenshots),
        Task::Proxy => nginx::run(),
        Task::Clients { only } => clients::run(&workspace_root(), &only),
        Task::Fuzz => fuzz::run(),
        Task::McpTokens { bench } => mcp_fleet::run(&workspace_root(), bench),
        Task::Readme { bless } => readme(bless),
        Task::Prefetch => prefetch::run(),
        Task::Install => install::run(&workspace_root()),
        Task::Actionlint => actionlint::run(&workspace_root()),
        Task::Bundle => bundle::check(&workspace_root()),
        Task::Image => image::check(&workspace_root()),
        Task::Kube => kube::run(&workspace_root()),
    }
}

/// The docs test (`servers/context-loader/tests/readme.rs`: README.md and docs/*.md);
/// with `bless` it rewrites the examples that differ instead of failing.
fn readme(bless: bool) -> anyhow::Result<()> {
    let args = [
        "test",
        "-p",
        "context-loader",
        "--test",
        "tests",
        "--",
        "readme::",
    ];
    eprintln!(
        "$ cargo {}{}",
        args.join(" "),
        if bless { " (README_BLESS=1)" } else { "" }
    );
    let mut command = cargo_command();
    command.args(args).current_dir(workspace_root());
    if bless {
        command.env("README_BLESS", "1");
    }
    let status = command.status().context("cannot run cargo test")?;
    if !status.success() {
        bail!(
            "the docs' examples differ from the binary: `cargo xtask readme --bless` rewrites them"
        );
    }
    Ok(())
}

fn ci() -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let target = target_dir();
    disk::require_free(&target, disk::CI_NEEDS_BYTES)?;
    let result = ci_steps();
    if result.is_err() {
        install::stop_release_build();
        background::stop_all();
    }
    // Where the time went, whether or not every step passed.
    eprintln!("\n{}", timing::table());
    result?;
    let whole = timing::process_age()
        .map(|age| {
            format!(
                " ({age:.0} s with building xtask, of {} s)",
                timing::WHOLE_RUN_BUDGET
            )
        })
        .unwrap_or_default();
    eprintln!(
        "xtask ci: all green in {:.0?}{whole}; target/ holds {}: {}",
        started.elapsed(),
        disk::gb(disk::used_bytes(&target)),
        disk::breakdown(&target, 4)
    );
    Ok(())
}

/// Every ci step with its budget in seconds (2 cores, clean clone; see timing.rs). The
/// budgets add up to 782 s: about the 900 s of the whole run less building xtask itself
/// (`timing::XTASK_BUILD_BUDGET`). Each is the step's time in the clean-clone runs of
/// issue 38's last stop plus a few seconds, so a step that grows is named. The quick
/// bench runs in the background, and only its join is a step; the tests share the
/// cores with the release build, and so take ~350 s where they took 220 alone.
fn ci_steps() -> anyhow::Result<()> {
    use timing::step;
    step("fmt", 2, || cargo(&["fmt", "--all", "--", "--check"]))?;
    // The release build (~430 CPU-s, its last ~160 s a fat-LTO link on one core) is
    // the longest thing ci does: it starts now at nice 19, taking only what clippy
    // leaves idle, and gets the normal priority from the tests on (see install.rs).
    install::start_release_build(&workspace_root())?;
    // Downloads and unpacking (clients, venvs, npm peers), while the compiler holds
    // the CPU: they wait on the network, not on the cores.
    prefetch::start()?;
    step("clippy (workspace, all targets)", 70, || {
        cargo(&[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ])
    })?;
    // From here the release build shares the cores at the normal priority: it is the
    // run's critical path (its end came 140-160 s after the other steps' when it took
    // only idle CPU until the fleet), and the tests' checks are on CPU time and
    // answers, not on wall time.
    install::set_release_build_nice(0);
    // One test run covers unit tests, the tiktoken differential test and the e2e
    // suite (which starts the built binary over stdio and HTTP).
    // Without backtraces: a failing test's message names its file and line, and a
    // backtrace after it pushed that message out of the tail a CI log keeps.
    // Not `--all-targets`: the examples hold no tests, and as test harnesses they were
    // seven more binaries of 140-170 MB each (the vocabularies are embedded) that ran
    // nothing; clippy compiles them, and the bench step builds and runs them.
    // `--tests` takes every target with tests on (xtask's main.rs among them), and
    // leaves the context-loader binary's empty harness out (`test = false`), which
    // `--bins` would build anyway.
    step("tests (workspace: libs, tests, xtask)", 365, || {
        cargo_with_env(
            &["test", "--workspace", "--lib", "--tests", "--locked"],
            &[("RUST_BACKTRACE", std::ffi::OsStr::new("0"))],
        )
    })?;
    // Whatever of the installs is still running is waited for here, before the first
    // step that uses one (the fleet's venv): the table shows that wait.
    step("prefetch (joined)", 15, || {
        prefetch::join();
        Ok(())
    })?;
    // The fleet times servers under a deadline (its Python servers start in ~4 s
    // against a 10 s limit): the release build takes only idle CPU meanwhile.
    install::set_release_build_nice(19);
    step(
        "mcp-tokens: own tool list budget, Python SDK fleet",
        55,
        || mcp_fleet::run(&workspace_root(), false),
    )?;
    install::set_release_build_nice(0);
    step("doc tests", 3, || {
        cargo(&["test", "--workspace", "--doc", "--locked"])
    })?;
    // vendor/tiktoken is outside the workspace: the unit tests of what we patched
    // (the memo, merges, vocabulary tables, the scanners' 8-byte run ends). Its
    // other tests need the vocabularies we dropped (vendor/tiktoken/PATCH.md), and
    // the pre-tokenizer's are covered against tiktoken-rs by tests/differential.rs.
    // 43 s: section 24's test of the windows at every start of 2,000 texts takes
    // ~6 s of one core (opt-level 3), where the step took 32-33 s before it; section
    // 27's three tests ~1 s.
    step("vendored tiktoken: patched modules' unit tests", 43, || {
        vendored_tiktoken_tests(
            &[
                "count_memo::",
                "merge::",
                "vocab::",
                "vocab_layout::",
                "piece_cache::",
                "run_end_matches_the_byte_loop",
                // The Hangul fast path against the class table, every scalar.
                "hangul_syllable_at",
                // PATCH.md 12-15: the memo's one-load lookup, and the tables and
                // lowercase-word path against the class tests, every ASCII byte.
                "the_punctuation_table_is_the_class_test",
                "the_word_lead_table_is_the_class_test",
                "every_ascii_character_before_a_word",
                "lowercase_words_cut_as_the_regex_cuts_them",
                // PATCH.md 17: uppercase-led words from one load, every class
                // sequence of 9 bytes.
                "short_cased_words_end_where_the_byte_scan_ends_them",
                // PATCH.md 19: pieces of one and two bytes, every ASCII pair.
                "pieces_of_one_and_two_bytes_count_as_they_encode",
                // PATCH.md 24: the windows' classes (every byte in every lane), their
                // starts at every start of 2,000 texts, and their count loops.
                "starts::tests::the_simd_classes",
                "starts::tests::every_start_a_window_decides",
                "starts::tests::windows_stop_where",
                "the_windows_count_what_encode_makes",
                // PATCH.md 29: AVX-512's compressed starts against the set bits.
                "starts::tests::compressed_starts",
                // PATCH.md 30: the pieces sorted by length, every batch size.
                "starts::tests::sorted_pieces",
                // PATCH.md 27: the BMP table against the regex crate's classes (every
                // code point), and `'ſ` as every pattern's contraction.
                "cjk_class_matches_regex_tables",
                "long_s_completes_a_contraction_as_the_regex_says",
            ],
            &[],
        )?;
        // The fast paths of PATCH.md 9, 11, 13, 14, 17 and 27 (Hangul, lowercase
        // words, punctuation runs, uppercase-led words, the BMP's other scripts)
        // against the regex, piece by piece, for several patterns, and section 24's
        // windows against the scanners:
        // 32 cases each here, 512 in the full suite, like the rest of pretokenize's
        // proptests.
        vendored_tiktoken_tests(
            &[
                "prop_fast_matches_regex_hangul",
                "prop_fast_matches_regex_lowercase_words",
                "prop_fast_matches_regex_punctuation_runs",
                "prop_fast_matches_regex_cased_words",
                "prop_windows_cut_as_the_scanner",
                "prop_fast_matches_regex_bmp_scripts",
            ],
            &[("PROPTEST_CASES", std::ffi::OsStr::new("32"))],
        )
    })?;
    // The shipped catalog is exactly what its rules make of the pinned LiteLLM file.
    step("catalog = LiteLLM release + overrides", 2, || {
        catalog::check(&workspace_root())
    })?;
    // Gemini and open-weight counts against Python sentencepiece / tokenizers.
    step(
        "tokenizer differential tests (Python references)",
        18,
        || {
            let refs = tokenizer_refs::ensure(&workspace_root())?;
            ignored_tests(
                "tokenizer_references::",
                &[(tokenizer_refs::ENV, refs.as_os_str())],
            )
        },
    )?;
    // Deployment and interoperability: real nginx, the official conformance suite.
    step(
        "e2e suite through nginx (two stateless replicas)",
        3,
        nginx::run,
    )?;
    step("MCP conformance suite", 8, || {
        conformance::run(&workspace_root())
    })?;
    step(
        "Python SDK, MCP Inspector, Claude Code, Codex, Gemini CLI and Copilot CLI clients",
        85,
        || clients::run(&workspace_root(), &[]),
    )?;
    // Keep the benchmark harness working (figures are printed, never asserted: a timed
    // check on a shared 2-core machine is noise). It starts here, in the background,
    // ~70 s of one core beside the steps that mostly wait on processes (the fuzzer,
    // the browser) and the install step's wait for the release build's link, itself on
    // one core; a step after the Kubernetes check joins it. It builds the debug
    // examples itself: no step until its join builds in debug.
    bench::start_quick()?;
    step("mcp-fuzzer (tools + protocol, stdio + HTTP)", 40, fuzz::run)?;
    step("MCP App in a real browser", 20, || app::run(false))?;
    step("workflows (actionlint)", 3, || {
        actionlint::run(&workspace_root())
    })?;
    // Packaging: one release build (cargo install, the README's install line) serves
    // the install check, the bundle and the image; the Kubernetes check runs the image.
    // From here the background build is joined: the steps after it need it.
    // 4 s: the release build was done before this step in the five clean-clone
    // runs before issue 43's last stop (0 s in each), so the join is not a wait.
    step(
        "install (joins the release build; --version, stdio)",
        4,
        || install::run(&workspace_root()),
    )?;
    step("Claude Desktop bundle (mcpb)", 23, || {
        bundle::check(&workspace_root())
    })?;
    step(
        "container image (podman, run from its filesystem)",
        5,
        || image::check(&workspace_root()),
    )?;
    step("Kubernetes manifests (kustomize, validate, run)", 5, || {
        kube::run(&workspace_root())
    })?;
    step("bench harness (--quick; joined)", 5, bench::join_quick)?;
    // On the examples the bench harness built (debug).
    step("load harness (smoke)", 8, || {
        load::run(&load::LoadArgs::smoke())
    })?;
    Ok(())
}

/// Run `cargo <args>` at the workspace root, failing on a non-zero exit.
fn cargo(args: &[&str]) -> anyhow::Result<()> {
    cargo_with_env(args, &[])
}

/// The `#[ignore]`d tests of the workspace's `tests` binaries whose names hold
/// `filter` (the steps that need a tool installed first: nginx, Chromium, Python
/// references), with extra environment variables. `--workspace`, not `-p`: with
/// `-p` cargo resolves fewer features and builds rmcp, reqwest, test-support and
/// the engine again instead of reusing the tests step's binaries.
fn ignored_tests(filter: &str, env: &[(&str, &std::ffi::OsStr)]) -> anyhow::Result<()> {
    let args = [
        "test",
        "--workspace",
        "--test",
        "tests",
        "--locked",
        "--",
        "--ignored",
        filter,
    ];
    cargo_with_env(&args, env)
}

/// The vendored tiktoken's library tests whose names hold one of `filters`, with the
/// two vocabularies the workspace keeps (vendor/tiktoken/PATCH.md), one build for
/// every call. It is its own workspace, built in ours' target/ ([`cargo_command`]):
/// with ours' dev profiles ([`dev_profiles`]) it reuses 23 of its 35 crates from the
/// tests step, where its own (full debug info, no opt-level overrides) built all 35
/// again, into 0.5 GB.
fn vendored_tiktoken_tests(
    filters: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> anyhow::Result<()> {
    let profiles = target_dir().join("xtask/workspace-dev-profiles.toml");
    std::fs::create_dir_all(profiles.parent().context("xtask folder")?)?;
    let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml"))?;
    let from_env = |key: &str| std::env::var_os(profile_env_var(key)).is_some();
    std::fs::write(&profiles, dev_profiles(&manifest, from_env))?;
    let mut args = vec![
        "test",
        "--manifest-path",
        "vendor/tiktoken/Cargo.toml",
        "--config",
        profiles.to_str().context("target path is not UTF-8")?,
        "--no-default-features",
        "--features",
        "vocab-cl100k_base,vocab-o200k_base",
        "--locked",
        "--lib",
        "--",
    ];
    args.extend_from_slice(filters);
    cargo_with_env(&args, env)
}

/// The `[profile.dev]` and `[profile.dev.package.*]` tables of the workspace's
/// Cargo.toml, as they are: cargo's config files take the same tables. A key of
/// `[profile.dev]` the environment sets (`from_env`: .ci/run sets
/// `CARGO_PROFILE_DEV_DEBUG`) is left to it: it already wins over the manifest in
/// the workspace, and a `--config` file would win over it here, so the vendored
/// crate would be built under another profile than the tests step's.
fn dev_profiles(manifest: &str, from_env: impl Fn(&str) -> bool) -> String {
    let mut out = String::new();
    let mut table = "";
    for line in manifest.lines() {
        if line.starts_with('[') {
            table = line;
        }
        let keep = table == "[profile.dev]" || table.starts_with("[profile.dev.package.");
        let key = line.split('=').next().unwrap_or("").trim();
        let set_by_env = table == "[profile.dev]" && !line.starts_with('[') && from_env(key);
        if keep && !set_by_env && !line.trim_start().starts_with('#') {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The environment variable cargo reads for `key` of `[profile.dev]`.
fn profile_env_var(key: &str) -> String {
    format!("CARGO_PROFILE_DEV_{}", key.to_uppercase().replace('-', "_"))
}

/// Build the server as the tests step built it (target/debug/context-loader): with
/// the workspace's features. `cargo build -p context-loader` resolves fewer and
/// rebuilt 18 crates (94 s of a clean CI) before the conformance step, and the
/// binary the later steps ran was that other build.
fn build_server() -> anyhow::Result<()> {
    cargo(&["build", "--workspace", "--bins", "--locked"])
}

/// [`cargo`] with extra environment variables.
fn cargo_with_env(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> anyhow::Result<()> {
    eprintln!("$ cargo {}", args.join(" "));
    let status = cargo_command()
        .args(args)
        .envs(env.iter().copied())
        .current_dir(workspace_root())
        .status()
        .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
    if !status.success() {
        bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

fn cargo_bin() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// A cargo command, building in [`target_dir`], without the variables `cargo run`
/// set for xtask itself (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`, ...). Build scripts
/// that read one of them (ring's reads seven, with `rerun-if-env-changed`) saw
/// xtask's values here and a shell cargo's elsewhere, so every switch between the
/// two rebuilt ring and all above it: rustls, reqwest, rmcp and the workspace.
fn cargo_command() -> Command {
    let mut command = Command::new(cargo_bin());
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let run_sets = name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_MANIFEST_")
            || matches!(
                &*name,
                "CARGO_CRATE_NAME" | "CARGO_BIN_NAME" | "CARGO_PRIMARY_PACKAGE"
            );
        if run_sets {
            command.env_remove(&*name);
        }
    }
    command.env("CARGO_TARGET_DIR", target_dir());
    command
}

/// Where every step builds, and finds its builds, tools and scratch files: the
/// workspace's target/. Each cargo that xtask runs is told so, so a CARGO_TARGET_DIR
/// set elsewhere cannot send a build where the steps after it do not look.
fn target_dir() -> PathBuf {
    workspace_root().join("target")
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    /// `cargo test` runs this with the variables `cargo run` gives xtask (the
    /// package's manifest folder and name): the cargo xtask starts goes without them.
    #[test]
    fn the_cargo_xtask_runs_has_none_of_xtasks_own_package_variables() {
        assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
        assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
        let command = super::cargo_command();
        let removed: Vec<String> = command
            .get_envs()
            .filter(|(_, value)| value.is_none())
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect();
        for name in [
            "CARGO_MANIFEST_DIR",
            "CARGO_PKG_NAME",
            "CARGO_PKG_VERSION_MAJOR",
        ] {
            assert!(removed.iter().any(|r| r == name), "{name}: {removed:?}");
        }
        let target = command
            .get_envs()
            .find(|(name, _)| *name == "CARGO_TARGET_DIR")
            .and_then(|(_, value)| value);
        assert_eq!(target, Some(super::target_dir().as_os_str()));
    }

    /// The vendored tiktoken's tests get exactly the workspace's dev profiles.
    #[test]
    fn dev_profiles_are_the_workspace_dev_tables_only() {
        let manifest = "[workspace]\nmembers = []\n\n[profile.release]\nlto = true\n\n\
            # why\n[profile.dev]\ndebug = \"line-tables-only\"\n\n\
            [profile.dev.package.\"*\"]\ndebug = false\n[profile.dev.package.bpe]\n\
            opt-level = 3\n\n[patch.crates-io]\ntiktoken = { path = \"vendor/tiktoken\" }\n";
        assert_eq!(
            super::dev_profiles(manifest, |_| false),
            "[profile.dev]\ndebug = \"line-tables-only\"\n\n\
             [profile.dev.package.\"*\"]\ndebug = false\n[profile.dev.package.bpe]\n\
             opt-level = 3\n\n"
        );
        // CARGO_PROFILE_DEV_DEBUG set: the profile's own `debug` is left to it, the
        // packages' are kept.
        assert_eq!(
            super::dev_profiles(manifest, |key| super::profile_env_var(key)
                == "CARGO_PROFILE_DEV_DEBUG"),
            "[profile.dev]\n\n\
             [profile.dev.package.\"*\"]\ndebug = false\n[profile.dev.package.bpe]\n\
             opt-level = 3\n\n"
        );
        let real = std::fs::read_to_string(super::workspace_root().join("Cargo.toml")).unwrap();
        let profiles = super::dev_profiles(&real, |_| false);
        assert!(
            profiles.contains("[profile.dev.package.tiktoken]\nopt-level = 3"),
            "{profiles}"
        );
    }
}
