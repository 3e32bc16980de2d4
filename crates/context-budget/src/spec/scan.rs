//! Measuring many files: in parallel, from a cache when a file is unchanged, with
//! progress reports and prompt cancellation.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::layout::SpecFile;
use super::measure::{TextMeasure, measure_file_until};
use crate::Tokenizer;
use crate::read::SkipReason;
use crate::scan_control::ScanControl;

/// A file's measurement, shared between the cache and the reports that use it.
pub type Measured = Arc<Result<TextMeasure, SkipReason>>;

/// The spec measurements: the workspace's one cache type ([`crate::cache`]), keyed by
/// path and tokenizer and valid while the file's stamp (size, mtime, ctime, inode,
/// device) is unchanged. Holds numbers only, never file contents.
pub type MeasureCache = crate::cache::MeasureCache<Measured>;

fn cached(cache: &MeasureCache, file: &SpecFile, tokenizer: Tokenizer) -> Option<Measured> {
    cache.get(&file.path, tokenizer, file.stamp.as_ref()?)
}

fn remember(cache: &MeasureCache, file: &SpecFile, tokenizer: Tokenizer, measured: &Measured) {
    // Unreadable files may be readable next time; everything else is a pure
    // function of the (unchanged) bytes.
    if let (Some(stamp), false) = (
        file.stamp,
        matches!(measured.as_ref(), Err(SkipReason::Unreadable(_))),
    ) {
        cache.put(&file.path, tokenizer, stamp, measured.clone());
    }
}

/// Measure `files` with `tokenizer`, in order; `None` when cancelled.
///
/// Cached files are answered at once; the rest are measured on all cores
/// (`crate::fan_out`), largest first so one big file does not finish
/// last on an otherwise idle machine.
pub fn measure_all(
    files: &[&SpecFile],
    tokenizer: Tokenizer,
    cache: &MeasureCache,
    control: &dyn ScanControl,
) -> Option<Vec<Measured>> {
    let mut results: Vec<Option<Measured>> =
        files.iter().map(|f| cached(cache, f, tokenizer)).collect();
    let mut pending: Vec<usize> = (0..files.len()).filter(|&i| results[i].is_none()).collect();
    let total = files.len();
    let done = AtomicUsize::new(total - pending.len());
    control.progress(done.load(Ordering::Relaxed), total);
    if pending.is_empty() {
        return Some(results.into_iter().flatten().collect());
    }
    pending.sort_by_key(|&i| std::cmp::Reverse(files[i].size));
    tokenizer.preload();

    let cancelled = AtomicBool::new(false);
    let measured = crate::fan_out::map(&pending, crate::fan_out::cores(), |&index| {
        if control.is_cancelled() {
            cancelled.store(true, Ordering::Relaxed);
            return None;
        }
        // Checked inside the file too: one 60 MB file must not hold a cancelled
        // scan (or a shutdown) for seconds.
        let Some(measured) =
            measure_file_until(&files[index].path, tokenizer, &|| control.is_cancelled())
        else {
            cancelled.store(true, Ordering::Relaxed);
            return None;
        };
        let measured: Measured = Arc::new(measured);
        remember(cache, files[index], tokenizer, &measured);
        control.progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
        Some(measured)
    });
    if cancelled.load(Ordering::Relaxed) {
        return None;
    }
    // A file a panicking worker (a bug) left unmeasured is reported as unreadable.
    for (&index, m) in pending.iter().zip(measured) {
        results[index] = m;
    }
    Some(
        results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Arc::new(Err(SkipReason::Unreadable("measurement failed".into())))
                })
            })
            .collect(),
    )
}
