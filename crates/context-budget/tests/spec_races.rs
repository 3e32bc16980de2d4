//! Spec files swapped while they are measured: a README replaced, again and again,
//! by a symlink to a file outside the root or by a FIFO. The outside file must never
//! be counted, and no scan may hang. Each test stops by itself after a fixed number
//! of scans.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use context_budget::Unobserved;
use context_budget::spec::{SpecQuery, SpecStore, SpecTokens};
use context_budget::{Catalog, Tokenizer};
use test_support::TempTree;

const SCANS: usize = 300;

/// Swap `readme` between the real file and `replace` (a link or FIFO maker) until
/// `stop`; returns the swapping thread.
fn keep_swapping(
    readme: PathBuf,
    inside: &'static str,
    replace: impl Fn(&Path) + Send + 'static,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let staging = readme.with_extension("staging");
        while !stop.load(Ordering::Relaxed) {
            let _ = std::fs::remove_file(&staging);
            replace(&staging);
            let _ = std::fs::rename(&staging, &readme);
            std::fs::write(&staging, inside).expect("write");
            let _ = std::fs::rename(&staging, &readme);
        }
    })
}

/// The README's token count each scan saw (`None`: the file was not measured).
fn scan_readme_counts(root: &Path) -> Vec<Option<u64>> {
    let store = SpecStore::new(root);
    let model = Catalog::builtin().resolve("gpt-4").expect("gpt-4");
    let query = SpecQuery {
        spec_path: Some("1".into()),
        ..SpecQuery::default()
    };
    (0..SCANS)
        .map(|_| match store.spec_tokens(&query, &model, &Unobserved) {
            Ok(SpecTokens::Spec(report)) => report
                .files
                .iter()
                .find(|f| f.path.ends_with("README.md"))
                .map(|f| f.tokens),
            _ => None,
        })
        .collect()
}

#[test]
fn a_readme_swapped_with_a_link_out_of_the_root_is_never_counted() {
    let dir = TempTree::new("cb-races-link");
    let root = dir.join("specs");
    let inside = "# Inside\n\nshort.\n";
    let outside = "secret outside words ".repeat(400);
    let outside_file = dir.write("outside.md", &outside);
    let readme = dir.write("specs/001-spec/README.md", inside);

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = keep_swapping(
        readme,
        inside,
        move |at| {
            let _ = std::os::unix::fs::symlink(&outside_file, at);
        },
        stop.clone(),
    );
    let counts = scan_readme_counts(&root);
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("swapper");

    let inside_tokens = Tokenizer::Cl100kBase.count(inside) as u64;
    let outside_tokens = Tokenizer::Cl100kBase.count(&outside) as u64;
    assert!(
        counts.iter().flatten().all(|&c| c == inside_tokens),
        "only the inside file may be counted ({inside_tokens}); outside is {outside_tokens}: {counts:?}"
    );
}

#[test]
fn a_readme_swapped_with_a_fifo_never_blocks_a_scan() {
    let dir = TempTree::new("cb-races-fifo");
    let root = dir.join("specs");
    let inside = "# Inside\n\nshort.\n";
    let readme = dir.write("specs/001-spec/README.md", inside);

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = keep_swapping(
        readme,
        inside,
        |at| {
            let name = std::ffi::CString::new(at.to_string_lossy().as_bytes()).expect("path");
            // SAFETY: mkfifo reads a NUL-terminated path and touches no Rust memory.
            unsafe { libc::mkfifo(name.as_ptr(), 0o600) };
        },
        stop.clone(),
    );
    // A scan that opened the FIFO for reading would wait for a writer forever (and
    // this test would never end); every scan returning is the assertion.
    let counts = scan_readme_counts(&root);
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("swapper");
    let inside_tokens = Tokenizer::Cl100kBase.count(inside) as u64;
    assert_eq!(counts.len(), SCANS);
    assert!(
        counts.iter().flatten().all(|&c| c == inside_tokens),
        "{counts:?}"
    );
}
