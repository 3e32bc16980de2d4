//! Opening one file so that what is read is provably a regular file inside a root.
//!
//! Resolve, check, open, then verify the handle: the path is canonicalized and
//! checked against the root; the file is opened without following a final symlink
//! (`O_NOFOLLOW`) and without blocking (`O_NONBLOCK`: a FIFO with no writer would
//! otherwise hang the call); then `fstat` on the handle must say "regular file",
//! and the handle itself must be inside the root (`/proc/self/fd` on Linux, device
//! and inode against the checked path elsewhere). A path swapped for a symlink or a
//! FIFO between the check and the open is caught by the verification.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::SkipReason;
use crate::cache::FileStamp;

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
    let file = open_nofollow_nonblocking(&canonical)?;
    let metadata = file
        .metadata()
        .map_err(|e| SkipReason::Unreadable(e.to_string()))?;
    if !metadata.file_type().is_file() {
        return Err(SkipReason::NotRegular);
    }
    if !handle_inside(&file, &metadata, &looked, root) {
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

#[cfg(unix)]
fn open_nofollow_nonblocking(path: &Path) -> Result<File, SkipReason> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            // A symlink appeared at the checked path since it was resolved.
            Some(libc::ELOOP) => SkipReason::OutsideRoot,
            _ => SkipReason::Unreadable(e.to_string()),
        })
}

#[cfg(not(unix))]
fn open_nofollow_nonblocking(path: &Path) -> Result<File, SkipReason> {
    File::open(path).map_err(|e| SkipReason::Unreadable(e.to_string()))
}

/// Whether the opened handle is the file that was checked, inside the root.
fn handle_inside(
    file: &File,
    opened: &std::fs::Metadata,
    looked: &std::fs::Metadata,
    root: &Path,
) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let link = format!("/proc/self/fd/{}", file.as_raw_fd());
        if let Ok(actual) = std::fs::read_link(link) {
            return actual.starts_with(root);
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = (file, root);
        opened.dev() == looked.dev() && opened.ino() == looked.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (file, opened, looked, root);
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
