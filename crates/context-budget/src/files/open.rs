//! Opening one file so that what is read is provably a regular file inside a root.
//!
//! Resolve, check, open, then verify the handle: the path is canonicalized and
//! checked against the root, then opened by [`crate::safe_open::open_regular`] (the
//! one race-free open: no final symlink, no blocking on a FIFO, `fstat` and
//! `/proc/self/fd` on the handle), and the handle must be the file that was looked at
//! (device and inode). A path swapped for a symlink or a FIFO between the check and
//! the open is caught by the verification.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::SkipReason;
use crate::cache::FileStamp;
use crate::safe_open::OpenError;

/// How much of a file is sniffed for NUL bytes to call it binary (as git does).
pub const BINARY_SNIFF_BYTES: usize = 8000;

/// A verified open file.
pub struct OpenFile {
    pub file: File,
    pub canonical: PathBuf,
    pub stamp: FileStamp,
}

/// Open `path` (any spelling, possibly a symlink) if it is a regular file inside
/// `root` (canonical) and at most `max_bytes` long.
pub fn open_in_root(root: &Path, path: &Path, max_bytes: u64) -> Result<OpenFile, SkipReason> {
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
    let (file, metadata) = crate::safe_open::open_regular(&canonical).map_err(|e| match e {
        OpenError::NotRegular => SkipReason::NotRegular,
        OpenError::Moved { .. } => SkipReason::OutsideRoot,
        OpenError::Io(e) => SkipReason::Unreadable(e.to_string()),
    })?;
    if !same_file(&metadata, &looked) {
        return Err(SkipReason::OutsideRoot);
    }
    if metadata.len() > max_bytes {
        return Err(SkipReason::TooLarge {
            bytes: metadata.len(),
            limit: max_bytes,
        });
    }
    Ok(OpenFile {
        file,
        canonical,
        stamp: FileStamp::of(&metadata),
    })
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

/// Read a verified file as UTF-8 text: binary (NUL in the first 8,000 bytes, as git
/// decides) and invalid UTF-8 are skip reasons; a file that grew past `max_bytes`
/// while being read is too large.
pub fn read_text(open: OpenFile, max_bytes: u64) -> Result<String, SkipReason> {
    let mut bytes = Vec::with_capacity(open.stamp.size.min(max_bytes) as usize);
    open.file
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| SkipReason::Unreadable(e.to_string()))?;
    if bytes.len() as u64 > max_bytes {
        return Err(SkipReason::TooLarge {
            bytes: bytes.len() as u64,
            limit: max_bytes,
        });
    }
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(SkipReason::Binary);
    }
    String::from_utf8(bytes).map_err(|e| SkipReason::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })
}
