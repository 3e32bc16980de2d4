//! The spec folders under a root, remembered between calls while every directory
//! that was read to find them provably still holds the same entries: a server's
//! single-spec call then resolves a name without listing thousands of folders again
//! (the listing was most of such a call).
//!
//! "Provably": each directory read has the same [`FileStamp`] (an entry added,
//! removed or renamed moves its mtime and ctime), no symlink was involved (its
//! target can change while every directory stays the same), every entry could be
//! read (a listing cut short by an I/O error is used once), and the directories
//! had not changed for [`SETTLED`] before they were read. A directory changed within
//! the clock tick it was read in may change again within that tick and keep its
//! stamp (git's "racy" entries), so such a listing is used once and not kept.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::layout::{Discovered, discover};
use crate::cache::FileStamp;

/// How long a directory must have been unchanged before its listing is kept: far
/// above any file system's timestamp granularity (ext4 and tmpfs: a clock tick;
/// FAT: 2 s).
pub const SETTLED: Duration = Duration::from_secs(3);

/// The last listing of a root, while it may be reused.
#[derive(Debug, Default)]
pub struct DiscoveryCache {
    last: Mutex<Option<Arc<Discovered>>>,
    /// Listings read from disk (not answered from memory), for tests and tuning.
    reads: AtomicU64,
}

impl DiscoveryCache {
    /// The spec folders under `root` (canonical): the kept listing when every
    /// directory it read is unchanged, else a new one (kept when it may be).
    pub fn discover(&self, root: &Path) -> std::io::Result<Arc<Discovered>> {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(last) = last
            && last.read.first().is_some_and(|(dir, _)| dir == root)
            && unchanged(&last)
        {
            return Ok(last);
        }
        let started = SystemTime::now();
        let found = Arc::new(discover(root)?);
        self.reads.fetch_add(1, Ordering::Relaxed);
        let keep = keepable(&found, started).then(|| Arc::clone(&found));
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = keep;
        Ok(found)
    }

    /// How many listings were read from disk.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }
}

fn unchanged(found: &Discovered) -> bool {
    found
        .read
        .iter()
        .all(|(dir, stamp)| std::fs::metadata(dir).is_ok_and(|now| FileStamp::of(&now) == *stamp))
}

/// Whether a later change to what `found` read is sure to show in the stamps.
fn keepable(found: &Discovered, started: SystemTime) -> bool {
    !found.saw_links
        && !found.incomplete
        && found.notes.is_empty()
        && !found.read.is_empty()
        && found.read.iter().all(|(_, stamp)| settled(stamp, started))
}

/// Both times of `stamp` at least [`SETTLED`] before `started`.
fn settled(stamp: &FileStamp, started: SystemTime) -> bool {
    let Some(modified) = stamp.modified else {
        return false;
    };
    let (secs, nanos) = stamp.changed;
    let (Ok(secs), Ok(nanos)) = (u64::try_from(secs), u32::try_from(nanos)) else {
        return false;
    };
    let changed = UNIX_EPOCH + Duration::new(secs, nanos);
    let Some(horizon) = started.checked_sub(SETTLED) else {
        return false;
    };
    modified <= horizon && changed <= horizon
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh, canonical directory for one test (removed by the test).
    fn fresh(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("cb-discovery-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }

    fn spec(root: &Path, id: &str) {
        std::fs::create_dir_all(root.join(id)).unwrap();
        std::fs::write(root.join(id).join("README.md"), "# x\n").unwrap();
    }

    #[test]
    fn a_settled_listing_is_reused_until_a_directory_it_read_changes() {
        let root = fresh("reuse");
        spec(&root, "001-a");
        spec(&root, "archived/002-b");
        let cache = DiscoveryCache::default();

        // Just written: read every time, never kept.
        let ids = |d: &Discovered| d.specs.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
        assert_eq!(
            ids(&cache.discover(&root).unwrap()),
            ["001-a", "archived/002-b"]
        );
        cache.discover(&root).unwrap();
        assert_eq!(cache.reads(), 2);

        std::thread::sleep(SETTLED + Duration::from_millis(200));
        let first = cache.discover(&root).unwrap();
        let again = cache.discover(&root).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "the settled listing is reused");
        assert_eq!(cache.reads(), 3);

        // A folder added to the root, then one to a group folder: each is seen at once.
        spec(&root, "003-c");
        assert_eq!(
            ids(&cache.discover(&root).unwrap()),
            ["001-a", "003-c", "archived/002-b"]
        );
        spec(&root, "archived/004-d");
        assert_eq!(
            ids(&cache.discover(&root).unwrap()),
            ["001-a", "003-c", "archived/002-b", "archived/004-d"]
        );
        // Renamed within the same tick as the read before: still seen, the listing
        // just read having changed too recently to be kept.
        std::fs::rename(root.join("003-c"), root.join("005-c")).unwrap();
        assert_eq!(
            ids(&cache.discover(&root).unwrap()),
            ["001-a", "005-c", "archived/002-b", "archived/004-d"]
        );
        assert_eq!(cache.reads(), 6);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_listing_that_followed_a_symlink_or_missed_an_entry_is_not_kept() {
        let root = fresh("links");
        spec(&root, "001-a");
        std::os::unix::fs::symlink(root.join("001-a"), root.join("002-link")).unwrap();
        let found = discover(&root).unwrap();
        assert!(found.saw_links);
        assert!(!keepable(&found, SystemTime::now() + 2 * SETTLED));
        // The same tree without the link, seen from far enough ahead, may be kept.
        std::fs::remove_file(root.join("002-link")).unwrap();
        let mut found = discover(&root).unwrap();
        assert!(keepable(&found, SystemTime::now() + 2 * SETTLED));
        assert!(!keepable(&found, SystemTime::now()));
        // Nor is one that an I/O error cut short.
        found.incomplete = true;
        assert!(!keepable(&found, SystemTime::now() + 2 * SETTLED));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
