//! Opening one file so that what is read is provably a regular file inside a root.
//!
//! Resolve, check, open, then verify the handle: the path is canonicalized and
//! checked against the root, then opened by [`crate::safe_open::open_regular`] (the
//! one race-free open: no final symlink, no blocking on a FIFO, `fstat` and
//! `/proc/self/fd` on the handle), and the handle must be the file that was looked at
//! (device and inode). A path swapped for a symlink or a FIFO between the check and
//! the open is caught by the verification. A file the walk saw as regular is opened
//! as spelled first, and kept only when the kernel names the handle at that path,
//! inside the root: what canonicalizing would have shown, without its system calls.

use std::fs::{File, Metadata};
use std::path::{Path, PathBuf};

use crate::cache::FileStamp;
use crate::read::{SkipReason, read_text, read_text_into, read_text_measured_into};
use crate::safe_open::OpenError;

/// A verified open file.
pub struct OpenFile {
    pub file: File,
    pub canonical: PathBuf,
    pub stamp: FileStamp,
}

impl OpenFile {
    /// Its text, read by the shared core (`crate::read`): at most `max_bytes`
    /// (also if it grows while read), not binary, UTF-8.
    pub fn read_text(self, max_bytes: u64) -> Result<String, SkipReason> {
        read_text(self.file, self.stamp.size, max_bytes)
    }

    /// [`OpenFile::read_text`] into a buffer the caller reuses from file to file.
    pub fn read_text_into(self, max_bytes: u64, bytes: &mut Vec<u8>) -> Result<&str, SkipReason> {
        read_text_into(self.file, self.stamp.size, max_bytes, bytes)
    }

    /// [`OpenFile::read_text_into`] with the text's lines and JSON-escaped length
    /// ([`read_text_measured_into`]).
    pub fn read_text_measured_into(
        self,
        max_bytes: u64,
        bytes: &mut Vec<u8>,
    ) -> Result<(&str, (u64, u64)), SkipReason> {
        read_text_measured_into(self.file, self.stamp.size, max_bytes, bytes)
    }
}

/// Open `path` (any spelling, possibly a symlink) if it is a regular file inside
/// `root` (canonical) and at most `max_bytes` long. `seen_regular`: the walk saw a
/// regular file (not a link) at `path`; it is then opened as spelled first, and kept
/// when the kernel names the handle at `path`, inside the root (four system calls
/// where canonicalizing first takes about eleven).
pub fn open_in_root(
    root: &Path,
    path: &Path,
    max_bytes: u64,
    seen_regular: bool,
) -> Result<OpenFile, SkipReason> {
    if seen_regular
        && path.starts_with(root)
        && let Ok(Some((file, metadata))) = crate::safe_open::open_regular_if_canonical(path)
    {
        within(&metadata, max_bytes)?;
        return Ok(OpenFile {
            file,
            canonical: path.to_path_buf(),
            stamp: FileStamp::of(&metadata),
        });
    }
    let canonical = std::fs::canonicalize(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => SkipReason::BrokenSymlink,
        _ => SkipReason::Unreadable(e.to_string()),
    })?;
    if !canonical.starts_with(root) {
        return Err(SkipReason::OutsideRoot);
    }
    // Look before opening: opening a device can have effects of its own.
    let looked =
        std::fs::symlink_metadata(&canonical).map_err(|e| SkipReason::Unreadable(e.to_string()))?;
    if !looked.file_type().is_file() {
        return Err(SkipReason::NotRegular);
    }
    // The one race-free open (no final symlink, no blocking, the handle checked to be
    // a regular file still at `canonical`, which is inside the root).
    let (file, metadata) = open_verified(&canonical, max_bytes)?;
    if !same_file(&metadata, &looked) {
        return Err(SkipReason::OutsideRoot);
    }
    Ok(OpenFile {
        file,
        canonical,
        stamp: FileStamp::of(&metadata),
    })
}

/// Open again, for its text, a file [`open_in_root`] opened before: `canonical` is
/// the path it resolved to then, inside `root`. The same race-free open verifies the
/// handle is a regular file still at that path (no symlink followed, none swapped in
/// along the path); whether its content changed since is the caller's to tell from
/// the stamp (an editor's atomic save gives a new inode at the same path).
pub fn reopen(root: &Path, canonical: &Path, max_bytes: u64) -> Result<OpenFile, SkipReason> {
    if !canonical.starts_with(root) {
        return Err(SkipReason::OutsideRoot);
    }
    let (file, metadata) = open_verified(canonical, max_bytes)?;
    Ok(OpenFile {
        file,
        canonical: canonical.to_path_buf(),
        stamp: FileStamp::of(&metadata),
    })
}

/// [`crate::safe_open::open_regular`] with its failures as skip reasons, and the
/// per-file size limit checked on the handle.
fn open_verified(canonical: &Path, max_bytes: u64) -> Result<(File, Metadata), SkipReason> {
    let (file, metadata) = crate::safe_open::open_regular(canonical).map_err(|e| match e {
        OpenError::NotRegular => SkipReason::NotRegular,
        OpenError::Moved { .. } => SkipReason::OutsideRoot,
        OpenError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
            SkipReason::Unreadable("deleted while being read".to_string())
        }
        OpenError::Io(e) => SkipReason::Unreadable(e.to_string()),
    })?;
    within(&metadata, max_bytes)?;
    Ok((file, metadata))
}

/// The per-file size limit, checked on the handle's metadata.
fn within(metadata: &Metadata, max_bytes: u64) -> Result<(), SkipReason> {
    if metadata.len() > max_bytes {
        return Err(SkipReason::TooLarge {
            bytes: metadata.len(),
            limit: max_bytes,
        });
    }
    Ok(())
}

/// Whether the opened handle is the file that was looked at (where `/proc` cannot
/// say where the handle is, the device and inode still must match).
fn same_file(opened: &std::fs::Metadata, looked: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        opened.dev() == looked.dev() && opened.ino() == looked.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (opened, looked);
        true
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_file_read_again_is_the_one_at_its_path_never_a_symlink_swapped_in() {
        let base = std::env::temp_dir().join(format!("cb-reopen-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir_all(&root).expect("root");
        std::fs::create_dir_all(&outside).expect("outside");
        let root = std::fs::canonicalize(&root).expect("canonical root");
        std::fs::write(root.join("a.rs"), "fn a() {}\n").expect("a.rs");
        std::fs::write(outside.join("secret.txt"), "key\n").expect("secret");

        let first = open_in_root(&root, &root.join("a.rs"), 1 << 20, false).expect("first open");
        let canonical = first.canonical.clone();
        let stamp = first.stamp;
        let again = reopen(&root, &canonical, 1 << 20).expect("unchanged");
        assert_eq!(again.stamp, stamp);
        assert_eq!(again.read_text(1 << 20).expect("text"), "fn a() {}\n");

        // An editor's atomic save: a new file at the same path, with a new stamp.
        std::fs::write(root.join("a.tmp"), "fn a() { changed(); }\n").expect("tmp");
        std::fs::rename(root.join("a.tmp"), root.join("a.rs")).expect("rename");
        let saved = reopen(&root, &canonical, 1 << 20).expect("saved");
        assert_ne!(saved.stamp, stamp);
        assert_eq!(
            saved.read_text(1 << 20).expect("text"),
            "fn a() { changed(); }\n"
        );

        // Swapped for a symlink out of the root, or grown past the limit: refused.
        std::fs::remove_file(root.join("a.rs")).expect("remove");
        std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("a.rs")).expect("ln");
        assert!(matches!(
            reopen(&root, &canonical, 1 << 20),
            Err(SkipReason::NotRegular | SkipReason::OutsideRoot)
        ));
        std::fs::remove_file(root.join("a.rs")).expect("remove link");
        std::fs::write(root.join("a.rs"), "x".repeat(100)).expect("big");
        assert!(matches!(
            reopen(&root, &canonical, 10),
            Err(SkipReason::TooLarge { .. })
        ));
        // A path outside the root is never opened.
        assert!(matches!(
            reopen(&root, &outside.join("secret.txt"), 1 << 20),
            Err(SkipReason::OutsideRoot)
        ));
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn a_path_tried_as_spelled_is_kept_only_where_the_kernel_names_it() {
        let base = std::env::temp_dir().join(format!("cb-spelled-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir_all(root.join("src")).expect("root/src");
        std::fs::create_dir_all(&outside).expect("outside");
        let root = std::fs::canonicalize(&root).expect("canonical root");
        let outside = std::fs::canonicalize(&outside).expect("canonical outside");
        std::fs::write(root.join("src/a.rs"), "fn a() {}\n").expect("a.rs");
        std::fs::write(outside.join("key.rs"), "secret\n").expect("key.rs");
        std::os::unix::fs::symlink(root.join("src"), root.join("inside")).expect("ln in");
        std::os::unix::fs::symlink(&outside, root.join("out")).expect("ln out");

        // Canonical as spelled: kept as spelled.
        let direct = open_in_root(&root, &root.join("src/a.rs"), 1 << 20, true).expect("a.rs");
        assert_eq!(direct.canonical, root.join("src/a.rs"));
        // Through a folder link inside the root: the path it resolves to, as before.
        let linked = open_in_root(&root, &root.join("inside/a.rs"), 1 << 20, true).expect("link");
        assert_eq!(linked.canonical, root.join("src/a.rs"));
        // Through a folder link out of the root: refused, whatever the walk saw.
        assert!(matches!(
            open_in_root(&root, &root.join("out/key.rs"), 1 << 20, true),
            Err(SkipReason::OutsideRoot)
        ));
        // The per-file limit holds on this way in too.
        assert!(matches!(
            open_in_root(&root, &root.join("src/a.rs"), 4, true),
            Err(SkipReason::TooLarge { .. })
        ));
        let _ = std::fs::remove_dir_all(&base);
    }
}
