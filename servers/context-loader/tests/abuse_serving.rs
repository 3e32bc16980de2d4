//! Issue 20's serving rows against the built binary on loopback: a hostile
//! `--models-file` (row 6), abandoned calls that must stop their work (row 1's
//! server side), and `/healthz` while every worker is busy (row 9). Each test is
//! bounded and stops by itself; its time bounds are generous guards against hangs,
//! never speed claims. A call "stops" when the server's CPU time (`/proc/PID/stat`)
//! stops growing, with a wide margin.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use test_support::{Binary, PATIENCE};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cl-serving-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Run the CLI with `args` under a 4 GB address-space limit (so a read without end
/// fails instead of taking the machine's memory), killed after `PATIENCE`: (exit
/// code, stderr). `None` when it had to be killed: it hung.
fn run_bounded(args: &[&str]) -> Option<(i32, String)> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000; exec \"$0\" \"$@\"")
        .arg(BIN.path())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cli");
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut stderr = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .expect("stderr")
                .read_to_string(&mut stderr)
                .expect("read stderr");
            return Some((status.code().unwrap_or(-1), stderr));
        }
        if started.elapsed() > PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A start-up refusal: exit code 2 (as every configuration error) and a message
/// holding each of `needles`, within the hang guard.
fn assert_refused(args: &[&str], needles: &[&str]) {
    let Some((code, stderr)) = run_bounded(args) else {
        panic!("{args:?} hung (killed after {PATIENCE:?})");
    };
    assert_eq!(code, 2, "{args:?}: {stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in {stderr:?}");
    }
}

/// Row 6: a FIFO as the models file hung start-up forever, `/dev/zero` was read until
/// memory ran out (2.1 GB under a 3 GB limit); a FIFO as a model's `tokenizer_file`
/// hung too. Each is now a start-up error naming the file and what to pass instead.
#[test]
fn a_models_file_that_is_not_a_regular_file_stops_start_up_at_once() {
    let dir = temp_dir("models-kinds");
    let fifo = dir.join("models.json");
    mkfifo(&fifo);
    for path in [fifo.to_str().expect("utf-8"), "/dev/zero"] {
        assert_refused(
            &["--models-file", path, "count", "hi"],
            &[
                path,
                "not a regular file",
                "pass --models-file a readable regular JSON file",
            ],
        );
    }
    let tokenizer = dir.join("tokenizer.json");
    mkfifo(&tokenizer);
    let models = dir.join("hf.json");
    std::fs::write(
        &models,
        r#"{"models": [{"name": "acme-open", "family": "acme", "tokenizer": "huggingface",
            "tokenizer_file": "tokenizer.json", "context_window": 32000}]}"#,
    )
    .expect("write");
    assert_refused(
        &[
            "--models-file",
            models.to_str().expect("utf-8"),
            "count",
            "hi",
        ],
        &[
            "acme-open",
            "tokenizer.json",
            "not a regular file",
            "tokenizer_file",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn models_file(dir: &Path, count: usize) -> PathBuf {
    let models: Vec<String> = (0..count)
        .map(|i| {
            format!(
                r#"{{"name":"acme-{i}","family":"acme","tokenizer":"cl100k_base","context_window":32000}}"#
            )
        })
        .collect();
    let path = dir.join(format!("models-{count}.json"));
    std::fs::write(&path, format!(r#"{{"models":[{}]}}"#, models.join(","))).expect("write");
    path
}

/// Row 6: the file's size and model count are bounded by their own flags, each
/// refused with the flag that raises it.
#[test]
fn a_models_file_over_its_byte_or_model_limit_is_refused_naming_the_flag() {
    let dir = temp_dir("models-limits");
    let path = models_file(&dir, 11);
    let path = path.to_str().expect("utf-8");
    assert_refused(
        &[
            "--models-file",
            path,
            "--max-models-file-bytes",
            "100",
            "count",
            "hi",
        ],
        &[
            "more than the limit of 100",
            "raise --max-models-file-bytes",
        ],
    );
    assert_refused(
        &[
            "--models-file",
            path,
            "--max-models-file-entries",
            "10",
            "count",
            "hi",
        ],
        &[
            "11 models, more than the limit of 10",
            "raise --max-models-file-entries",
        ],
    );
    // At the limits, the file loads and its models count.
    let (code, stdout, stderr) = BIN.run_cli(
        &[
            "--models-file",
            path,
            "--max-models-file-entries",
            "11",
            "count",
            "--model",
            "acme-10",
            "hi",
        ],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("acme-10"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Row 6: the merge was quadratic (100k models: 18 s in a release build, minutes in a
/// debug one; 1M never started). Linear now: 100k models load well within the hang
/// guard, and the last one resolves.
#[test]
fn a_models_file_of_100k_models_loads() {
    let dir = temp_dir("models-100k");
    let path = models_file(&dir, 100_000);
    let Some((code, stderr)) = run_bounded(&[
        "--models-file",
        path.to_str().expect("utf-8"),
        "--max-models-file-entries",
        "100000",
        "--max-models-file-bytes",
        "67108864",
        "count",
        "--model",
        "acme-99999",
        "hi",
    ]) else {
        panic!("loading 100k models did not finish within {PATIENCE:?}");
    };
    assert_eq!(code, 0, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
