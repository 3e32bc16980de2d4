//! The measurement cache shared by spec scans and file measurements: numbers per
//! (file, tokenizer), valid while the file is provably unchanged.
//!
//! "Unchanged" is a [`FileStamp`]: size, modification time, status-change time,
//! inode and device, as `fstat` reports them for the opened file. Size and mtime
//! alone miss a file replaced by another of the same size within the mtime
//! granularity, or a `touch -d` back in time; a replaced file has a new inode, and
//! any write or rename moves ctime, which no user call can set back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use crate::Tokenizer;

/// What identifies one version of a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub size: u64,
    pub modified: Option<SystemTime>,
    /// Status-change time (seconds, nanoseconds); zero where the platform has none.
    pub changed: (i64, i64),
    pub inode: u64,
    pub device: u64,
}

impl FileStamp {
    /// The stamp of a file's metadata (preferably from the opened handle).
    pub fn of(metadata: &std::fs::Metadata) -> FileStamp {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            FileStamp {
                size: metadata.len(),
                modified: metadata.modified().ok(),
                changed: (metadata.ctime(), metadata.ctime_nsec()),
                inode: metadata.ino(),
                device: metadata.dev(),
            }
        }
        #[cfg(not(unix))]
        {
            FileStamp {
                size: metadata.len(),
                modified: metadata.modified().ok(),
                changed: (0, 0),
                inode: 0,
                device: 0,
            }
        }
    }
}

/// More files than any real repository a call covers; past it the cache starts
/// over rather than grow without bound when roots keep changing.
pub const MAX_CACHE_ENTRIES: usize = 200_000;

/// Measurements of type `V` keyed by file path and tokenizer. Holds numbers only,
/// never file contents.
#[derive(Debug)]
pub struct MeasureCache<V> {
    entries: Mutex<HashMap<(PathBuf, Tokenizer), (FileStamp, V)>>,
    /// Measurements added since the cache was made (a persisted cache is written
    /// again only when this moved).
    added: AtomicU64,
}

impl<V> Default for MeasureCache<V> {
    fn default() -> Self {
        MeasureCache {
            entries: Mutex::new(HashMap::new()),
            added: AtomicU64::new(0),
        }
    }
}

impl<V: Clone> MeasureCache<V> {
    /// The measurement of `path` if it was made on a file with this very stamp.
    /// A file without a modification time is never answered from the cache.
    pub fn get(&self, path: &Path, tokenizer: Tokenizer, stamp: &FileStamp) -> Option<V> {
        stamp.modified?;
        let entries = self.entries.lock().ok()?;
        let (cached, value) = entries.get(&(path.to_path_buf(), tokenizer))?;
        (cached == stamp).then(|| value.clone())
    }

    pub fn put(&self, path: &Path, tokenizer: Tokenizer, stamp: FileStamp, value: V) {
        if stamp.modified.is_none() {
            return;
        }
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= MAX_CACHE_ENTRIES {
                entries.clear();
            }
            entries.insert((path.to_path_buf(), tokenizer), (stamp, value));
            self.added.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Measurements [`Self::put`] added so far.
    pub fn added(&self) -> u64 {
        self.added.load(Ordering::Relaxed)
    }

    /// Every entry, for writing the cache out.
    pub fn entries(&self) -> Vec<(PathBuf, Tokenizer, FileStamp, V)> {
        self.entries
            .lock()
            .map(|entries| {
                entries
                    .iter()
                    .map(|((path, tokenizer), (stamp, value))| {
                        (path.clone(), *tokenizer, *stamp, value.clone())
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Add entries read back (they do not count as [`Self::added`]).
    pub fn restore(&self, restored: Vec<(PathBuf, Tokenizer, FileStamp, V)>) {
        if let Ok(mut entries) = self.entries.lock() {
            for (path, tokenizer, stamp, value) in restored {
                if entries.len() >= MAX_CACHE_ENTRIES {
                    break;
                }
                entries.entry((path, tokenizer)).or_insert((stamp, value));
            }
        }
    }

    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_stamp_misses() {
        let dir = std::env::temp_dir().join(format!("cb-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("a.txt");
        std::fs::write(&path, "one").expect("write");
        let stamp = FileStamp::of(&std::fs::metadata(&path).expect("meta"));
        let cache = MeasureCache::<u64>::default();
        cache.put(&path, Tokenizer::O200kBase, stamp, 7);
        assert_eq!(cache.get(&path, Tokenizer::O200kBase, &stamp), Some(7));
        assert_eq!(cache.get(&path, Tokenizer::Cl100kBase, &stamp), None);
        // Same size, replaced by another file: new inode (and ctime), so a miss.
        let other = dir.join("b.txt");
        std::fs::write(&other, "two").expect("write");
        std::fs::rename(&other, &path).expect("rename");
        let replaced = FileStamp::of(&std::fs::metadata(&path).expect("meta"));
        assert_eq!(replaced.size, stamp.size);
        assert_eq!(cache.get(&path, Tokenizer::O200kBase, &replaced), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
