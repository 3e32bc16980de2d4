//! Reading a file to count it, the same way for spec files and any files: a bounded
//! read, a binary sniff, a UTF-8 check and a line count; and [`SkipReason`], the one
//! answer to "why was this file not counted". A leaf: deciding what may be opened
//! (roots, symlinks, races) stays with the callers, who hand over an open handle.

use std::io::Read;

use crate::byte_sums::count_where;

/// How much of a file is sniffed for NUL bytes to call it binary (as git does).
pub const BINARY_SNIFF_BYTES: usize = 8000;

/// Why a file was not measured or loaded. Serialized as its [`code`](Self::code);
/// the words are the file tools' (spec answers word a few differently, see
/// `spec::measure::SpecWords`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkipReason {
    #[error("binary file (NUL bytes in the first 8,000)")]
    Binary,
    #[error("not valid UTF-8 (first bad byte at offset {offset})")]
    NotUtf8 { offset: usize },
    #[error("{bytes} bytes, over the {limit}-byte limit per file (--max-file-bytes)")]
    TooLarge { bytes: u64, limit: u64 },
    #[error(
        "looks like it holds credentials (its path, or the path of the file it links to); never read"
    )]
    Secret,
    #[error("a symlink that leads outside the root; not followed")]
    OutsideRoot,
    #[error("a symlink to nothing")]
    BrokenSymlink,
    #[error("not a regular file (folder link, FIFO, socket or device); not opened")]
    NotRegular,
    #[error("cannot read: {0}")]
    Unreadable(String),
    #[error("the same file as `{0}` (a link to it); counted once")]
    Duplicate(String),
    #[error(
        "another file's name shows as the same `{0}` (one of them is not UTF-8); not read, rename it to read it"
    )]
    SameName(String),
}

impl SkipReason {
    /// The stable, machine-matchable name of the reason.
    pub fn code(&self) -> &'static str {
        match self {
            SkipReason::Binary => "binary",
            SkipReason::NotUtf8 { .. } => "not_utf8",
            SkipReason::TooLarge { .. } => "too_large",
            SkipReason::Secret => "secret",
            SkipReason::OutsideRoot => "outside_root",
            SkipReason::BrokenSymlink => "broken_symlink",
            SkipReason::NotRegular => "not_regular",
            SkipReason::Unreadable(_) => "unreadable",
            SkipReason::Duplicate(_) | SkipReason::SameName(_) => "duplicate",
        }
    }

    /// Reasons that say a spec file was skipped on purpose rather than broken
    /// (a listing notes them and goes on; a broken file is an error).
    pub fn is_skip(&self) -> bool {
        matches!(self, SkipReason::Binary | SkipReason::TooLarge { .. })
    }
}

/// Read an open file of `size` bytes (its metadata's) as UTF-8 text into `bytes`, a
/// buffer the caller reuses from file to file (measuring a tree then allocates one
/// buffer per thread, not one per file). Over `max_bytes` (also when it grows while
/// read), binary (NUL in the first [`BINARY_SNIFF_BYTES`], as git decides) and
/// invalid UTF-8 are skip reasons.
pub fn read_text_into(
    file: impl Read,
    size: u64,
    max_bytes: u64,
    bytes: &mut Vec<u8>,
) -> Result<&str, SkipReason> {
    if size > max_bytes {
        return Err(SkipReason::TooLarge {
            bytes: size,
            limit: max_bytes,
        });
    }
    bytes.clear();
    bytes.reserve(size as usize);
    // `take` guards against a file that grows while we read it.
    file.take(max_bytes + 1)
        .read_to_end(bytes)
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
    std::str::from_utf8(bytes).map_err(|e| SkipReason::NotUtf8 {
        offset: e.valid_up_to(),
    })
}

/// [`read_text_into`] a buffer of its own, kept as the text.
pub fn read_text(file: impl Read, size: u64, max_bytes: u64) -> Result<String, SkipReason> {
    let mut bytes = Vec::new();
    read_text_into(file, size, max_bytes, &mut bytes)?;
    // Checked UTF-8 by `read_text_into`; the check is repeated rather than trusted.
    String::from_utf8(bytes).map_err(|e| SkipReason::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })
}

/// Lines as an editor shows them: a final line without a newline still counts.
pub fn count_lines(text: &str) -> u64 {
    let newlines = count_where(text.as_bytes(), |b| b == b'\n');
    newlines + u64::from(!text.is_empty() && !text.ends_with('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_a_final_unterminated_line() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_lines("\n\n"), 2);
    }

    #[test]
    fn size_nul_bytes_and_utf8_decide_what_is_text() {
        let read = |bytes: &[u8], max| read_text(bytes, bytes.len() as u64, max);
        assert_eq!(read(b"fn a() {}\n", 100).as_deref(), Ok("fn a() {}\n"));
        assert_eq!(read(b"\x89PNG\r\n\x1a\n\0\0", 100), Err(SkipReason::Binary));
        assert_eq!(
            read(b"caf\xe9 au lait", 100),
            Err(SkipReason::NotUtf8 { offset: 3 })
        );
        assert_eq!(
            read(b"0123456789", 4),
            Err(SkipReason::TooLarge {
                bytes: 10,
                limit: 4
            })
        );
        // A file that grew past its stamp's size while read is still caught.
        assert_eq!(
            read_text(&b"0123456789"[..], 2, 4),
            Err(SkipReason::TooLarge { bytes: 5, limit: 4 })
        );
    }
}
