//! The measurement cache shared by spec scans and file measurements: numbers per
//! (file, tokenizer), valid while the file is provably unchanged.
//!
//! "Unchanged" is a [`FileStamp`]: size, modification time, status-change time,
//! inode and device, as `fstat` reports them for the opened file. Size and mtime
//! alone miss a file replaced by another of the same size within the mtime
//! granularity, or a `touch -d` back in time; a replaced file has a new inode, and
//! any write or rename moves ctime, which no user call can set back.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::OsString;
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
    /// `false` for [`MeasureCache::off`]: nothing is kept, nothing answered.
    on: bool,
    entries: Mutex<Entries<V>>,
    /// Measurements added since the cache was made (a persisted cache is written
    /// again only when this moved).
    added: AtomicU64,
}

/// The entries, by the path's bytes, then by tokenizer (one, mostly). Keyed by
/// the bytes rather than a `PathBuf`: `Path`'s hash walks its components, one
/// hasher write each, and a lookup by `(PathBuf, Tokenizer)` had to copy the path;
/// both showed in `files`' profile (~2 % of its CPU). The paths are the canonical
/// ones the tools open, so two spellings of one file do not arise (and would only
/// be two entries, each checked against the file's stamp).
#[derive(Debug)]
struct Entries<V> {
    by_path: HashMap<OsString, Vec<(Tokenizer, FileStamp, V)>>,
    len: usize,
}

impl<V> Entries<V> {
    /// Add or replace; past [`MAX_CACHE_ENTRIES`] start over (`replace`) or refuse.
    /// A borrowed path is copied only when it is added; a restored one is moved in.
    fn insert(
        &mut self,
        path: Cow<'_, Path>,
        tokenizer: Tokenizer,
        stamp: FileStamp,
        value: V,
        replace: bool,
    ) {
        if let Some(held) = self.by_path.get_mut(path.as_os_str())
            && let Some(entry) = held.iter_mut().find(|(t, _, _)| *t == tokenizer)
        {
            if replace {
                *entry = (tokenizer, stamp, value);
            }
            return;
        }
        if self.len >= MAX_CACHE_ENTRIES {
            if !replace {
                return;
            }
            self.by_path.clear();
            self.len = 0;
        }
        self.by_path
            .entry(path.into_owned().into_os_string())
            .or_default()
            .push((tokenizer, stamp, value));
        self.len += 1;
    }
}

impl<V> Default for MeasureCache<V> {
    fn default() -> Self {
        MeasureCache {
            on: true,
            entries: Mutex::new(Entries {
                by_path: HashMap::new(),
                len: 0,
            }),
            added: AtomicU64::new(0),
        }
    }
}

impl<V: Clone> MeasureCache<V> {
    /// A cache that keeps nothing, for a process that measures once and keeps no
    /// cache file: a command-line run with `--no-cache`. Keeping 16k measures it
    /// would never read again cost a path copy, a hash and a shared lock per file
    /// (~1.5 % of `files`' CPU over a 16k-file tree, perf).
    pub fn off() -> Self {
        MeasureCache {
            on: false,
            ..MeasureCache::default()
        }
    }

    /// The measurement of `path` if it was made on a file with this very stamp.
    /// A file without a modification time is never answered from the cache.
    pub fn get(&self, path: &Path, tokenizer: Tokenizer, stamp: &FileStamp) -> Option<V> {
        if !self.on {
            return None;
        }
        stamp.modified?;
        let entries = self.entries.lock().ok()?;
        let held = entries.by_path.get(path.as_os_str())?;
        let (_, cached, value) = held.iter().find(|(t, _, _)| *t == tokenizer)?;
        (cached == stamp).then(|| value.clone())
    }

    pub fn put(&self, path: &Path, tokenizer: Tokenizer, stamp: FileStamp, value: V) {
        if !self.on || stamp.modified.is_none() {
            return;
        }
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(Cow::Borrowed(path), tokenizer, stamp, value, true);
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
                    .by_path
                    .iter()
                    .flat_map(|(path, held)| {
                        held.iter().map(move |(tokenizer, stamp, value)| {
                            (PathBuf::from(path), *tokenizer, *stamp, value.clone())
                        })
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Add entries read back (they do not count as [`Self::added`], and do not
    /// replace what this process measured).
    pub fn restore(&self, restored: Vec<(PathBuf, Tokenizer, FileStamp, V)>) {
        if !self.on {
            return;
        }
        if let Ok(mut entries) = self.entries.lock() {
            for (path, tokenizer, stamp, value) in restored {
                if entries.len >= MAX_CACHE_ENTRIES {
                    break;
                }
                entries.insert(Cow::Owned(path), tokenizer, stamp, value, false);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stamp of a file of `size` bytes that never changes.
    fn stamp(size: u64) -> FileStamp {
        FileStamp {
            size,
            modified: Some(SystemTime::UNIX_EPOCH),
            changed: (1, 2),
            inode: 3,
            device: 4,
        }
    }

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

    #[test]
    fn a_cache_that_is_off_keeps_and_answers_nothing() {
        let stamp = stamp(3);
        let path = Path::new("/r/src/a.rs");
        let cache = MeasureCache::<u64>::off();
        cache.put(path, Tokenizer::O200kBase, stamp, 7);
        cache.restore(vec![(path.to_path_buf(), Tokenizer::Cl100kBase, stamp, 8)]);
        assert_eq!(cache.get(path, Tokenizer::O200kBase, &stamp), None);
        assert_eq!(cache.get(path, Tokenizer::Cl100kBase, &stamp), None);
        assert_eq!((cache.len(), cache.added()), (0, 0));
    }

    #[test]
    fn each_tokenizer_has_its_entry_and_restored_entries_never_replace_new_ones() {
        let path = Path::new("/r/src/a.rs");
        let cache = MeasureCache::<u64>::default();
        cache.put(path, Tokenizer::O200kBase, stamp(10), 1);
        cache.put(path, Tokenizer::Cl100kBase, stamp(10), 2);
        // Measured again: replaced, not added.
        cache.put(path, Tokenizer::O200kBase, stamp(11), 3);
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.added(), 3);
        assert_eq!(cache.get(path, Tokenizer::O200kBase, &stamp(10)), None);
        assert_eq!(cache.get(path, Tokenizer::O200kBase, &stamp(11)), Some(3));
        assert_eq!(cache.get(path, Tokenizer::Cl100kBase, &stamp(10)), Some(2));
        // What a persisted cache gives back fills gaps only.
        let other = Path::new("/r/src/b.rs");
        cache.restore(vec![
            (path.to_path_buf(), Tokenizer::O200kBase, stamp(10), 9),
            (other.to_path_buf(), Tokenizer::O200kBase, stamp(5), 7),
        ]);
        assert_eq!(cache.get(path, Tokenizer::O200kBase, &stamp(11)), Some(3));
        assert_eq!(cache.get(other, Tokenizer::O200kBase, &stamp(5)), Some(7));
        assert_eq!(
            cache.added(),
            3,
            "restored entries are not new measurements"
        );
        let mut all = cache.entries();
        all.sort_by_key(|(_, _, _, v)| *v);
        let values: Vec<u64> = all.iter().map(|(_, _, _, v)| *v).collect();
        assert_eq!(values, [2, 3, 7]);
        assert_eq!(all[2].0, other);
    }

    #[test]
    fn a_full_cache_starts_over_rather_than_grow() {
        let stamp = FileStamp {
            size: 1,
            modified: Some(SystemTime::UNIX_EPOCH),
            changed: (0, 0),
            inode: 0,
            device: 0,
        };
        let cache = MeasureCache::<u64>::default();
        let path = |i: usize| PathBuf::from(format!("/r/{i}"));
        for i in 0..MAX_CACHE_ENTRIES {
            cache.put(&path(i), Tokenizer::O200kBase, stamp, 0);
        }
        assert_eq!(cache.len(), MAX_CACHE_ENTRIES);
        // Measuring a file again replaces its entry without starting over...
        cache.put(&path(0), Tokenizer::O200kBase, stamp, 1);
        assert_eq!(cache.len(), MAX_CACHE_ENTRIES);
        // ...a new one starts over, and restoring never goes past the bound.
        cache.put(&path(MAX_CACHE_ENTRIES), Tokenizer::O200kBase, stamp, 2);
        assert_eq!(cache.len(), 1);
        cache.restore(
            (0..MAX_CACHE_ENTRIES + 5)
                .map(|i| (path(i), Tokenizer::Cl100kBase, stamp, 3))
                .collect(),
        );
        assert_eq!(cache.len(), MAX_CACHE_ENTRIES);
    }
}
