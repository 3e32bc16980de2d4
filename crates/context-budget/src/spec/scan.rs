//! Measuring many files: in parallel, from a cache when a file is unchanged, with
//! progress reports and prompt cancellation.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::layout::SpecFile;
use super::measure::{FileIssue, TextMeasure, measure_file};
use crate::Tokenizer;

/// A file's measurement, shared between the cache and the reports that use it.
pub type Measured = Arc<Result<TextMeasure, FileIssue>>;

/// What a long scan tells its caller, and how the caller stops it. Called from
/// worker threads.
pub trait ScanControl: Sync {
    /// `done` of `total` files measured so far.
    fn progress(&self, _done: usize, _total: usize) {}
    /// True once the caller no longer wants the result.
    fn is_cancelled(&self) -> bool {
        false
    }
}

/// For callers that need neither progress nor cancellation.
pub struct Unobserved;
impl ScanControl for Unobserved {}

/// Measurements keyed by file path and tokenizer, valid while the file's size,
/// modification time, inode and status-change time are unchanged. Holds numbers
/// only, never file contents.
#[derive(Debug, Default)]
pub struct MeasureCache {
    entries: Mutex<HashMap<(PathBuf, Tokenizer), CacheEntry>>,
}

#[derive(Debug)]
struct CacheEntry {
    size: u64,
    modified: SystemTime,
    inode: u64,
    changed: (i64, i64),
    measured: Measured,
}

/// More files than any real spec repository; past it the cache starts over rather
/// than grow without bound when roots keep changing.
const MAX_CACHE_ENTRIES: usize = 200_000;

impl MeasureCache {
    fn get(&self, file: &SpecFile, tokenizer: Tokenizer) -> Option<Measured> {
        let modified = file.modified?;
        let entries = self.entries.lock().ok()?;
        let entry = entries.get(&(file.path.clone(), tokenizer))?;
        let unchanged = entry.size == file.size
            && entry.modified == modified
            && entry.inode == file.inode
            && entry.changed == file.changed;
        unchanged.then(|| entry.measured.clone())
    }

    fn put(&self, file: &SpecFile, tokenizer: Tokenizer, measured: &Measured) {
        // Unreadable files may be readable next time; everything else is a pure
        // function of the (unchanged) bytes.
        let (Some(modified), false) = (
            file.modified,
            matches!(measured.as_ref(), Err(FileIssue::Unreadable(_))),
        ) else {
            return;
        };
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= MAX_CACHE_ENTRIES {
                entries.clear();
            }
            entries.insert(
                (file.path.clone(), tokenizer),
                CacheEntry {
                    size: file.size,
                    modified,
                    inode: file.inode,
                    changed: file.changed,
                    measured: measured.clone(),
                },
            );
        }
    }

    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Measure `files` with `tokenizer`, in order; `None` when cancelled.
///
/// Cached files are answered at once; the rest are measured on up to
/// `available_parallelism` threads, largest first so one big file does not finish
/// last on an otherwise idle machine.
pub fn measure_all(
    files: &[&SpecFile],
    tokenizer: Tokenizer,
    cache: &MeasureCache,
    control: &dyn ScanControl,
) -> Option<Vec<Measured>> {
    let mut results: Vec<Option<Measured>> =
        files.iter().map(|f| cache.get(f, tokenizer)).collect();
    let mut pending: Vec<usize> = (0..files.len()).filter(|&i| results[i].is_none()).collect();
    let total = files.len();
    let done = AtomicUsize::new(total - pending.len());
    control.progress(done.load(Ordering::Relaxed), total);
    if pending.is_empty() {
        return Some(results.into_iter().flatten().collect());
    }
    pending.sort_by_key(|&i| std::cmp::Reverse(files[i].size));
    tokenizer.preload();

    let next = AtomicUsize::new(0);
    let cancelled = AtomicBool::new(false);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(pending.len());
    let worker = || {
        let mut local = Vec::new();
        loop {
            if control.is_cancelled() {
                cancelled.store(true, Ordering::Relaxed);
                break;
            }
            let Some(&index) = pending.get(next.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            let measured: Measured = Arc::new(measure_file(&files[index].path, tokenizer));
            cache.put(files[index], tokenizer, &measured);
            local.push((index, measured));
            control.progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
        }
        local
    };
    let measured: Vec<(usize, Measured)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(worker)).collect();
        let mut all = worker();
        for handle in handles {
            // A panicking worker is a bug; its files are reported as unreadable below.
            all.extend(handle.join().unwrap_or_default());
        }
        all
    });
    if cancelled.load(Ordering::Relaxed) {
        return None;
    }
    for (index, m) in measured {
        results[index] = Some(m);
    }
    Some(
        results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Arc::new(Err(FileIssue::Unreadable("measurement failed".into())))
                })
            })
            .collect(),
    )
}
