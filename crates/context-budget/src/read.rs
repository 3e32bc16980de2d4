//! Reading a file to count it, the same way for spec files and any files: a bounded
//! read, a binary sniff, a UTF-8 check and a line count; and [`SkipReason`], the one
//! answer to "why was this file not counted". A leaf: deciding what may be opened
//! (roots, symlinks, races) stays with the callers, who hand over an open handle.

use std::io::Read;

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
/// invalid UTF-8 are skip reasons. The text is a prefix of `bytes`, whose length is
/// left at what earlier files needed (see [`read_to_buffer`]).
pub fn read_text_into(
    file: impl Read,
    size: u64,
    max_bytes: u64,
    bytes: &mut Vec<u8>,
) -> Result<&str, SkipReason> {
    let read = read_to_buffer(file, size, max_bytes, bytes)?;
    let bytes = &bytes[..read];
    not_binary(bytes)?;
    utf8(bytes)
}

/// [`read_text_into`] with the text's lines ([`count_lines`]) and JSON-escaped length
/// (`answer::json_escaped_len`), taken in the pass that also finds whether it is all
/// ASCII: a file that is (most source files) needs no UTF-8 check after it.
/// `std::str::from_utf8` over every file was ~1.4 % of `files`' CPU on a source tree.
pub fn read_text_measured_into(
    file: impl Read,
    size: u64,
    max_bytes: u64,
    bytes: &mut Vec<u8>,
) -> Result<(&str, (u64, u64)), SkipReason> {
    let read = read_to_buffer(file, size, max_bytes, bytes)?;
    let bytes = &bytes[..read];
    not_binary(bytes)?;
    let (counts, ascii) = escape_counts_ascii(bytes);
    let text = if ascii {
        // SAFETY: every byte is ASCII, so the bytes are UTF-8.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    } else {
        utf8(bytes)?
    };
    Ok((text, lines_and_escaped(text, counts)))
}

/// Binary as git decides: a NUL in the first [`BINARY_SNIFF_BYTES`].
fn not_binary(bytes: &[u8]) -> Result<(), SkipReason> {
    match bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        true => Err(SkipReason::Binary),
        false => Ok(()),
    }
}

fn utf8(bytes: &[u8]) -> Result<&str, SkipReason> {
    std::str::from_utf8(bytes).map_err(|e| SkipReason::NotUtf8 {
        offset: e.valid_up_to(),
    })
}

/// Read `file` (of `size` bytes by its metadata) into the front of `bytes`: how many
/// bytes it held, or `TooLarge` past `max_bytes`.
///
/// In one read where the file is as long as its stamp says (asking for a byte more,
/// so a file that grew shows it): `read_to_end` asks for 8 KiB, then twice as much
/// each time, and one read more to find the end, about three reads a file on a
/// source tree. The buffer is read into as it is (its length, zeroed once
/// as it grows, never shrinks), so no byte is zeroed per file and none of the buffer
/// is uninitialized.
fn read_to_buffer(
    file: impl Read,
    size: u64,
    max_bytes: u64,
    bytes: &mut Vec<u8>,
) -> Result<usize, SkipReason> {
    if size > max_bytes {
        return Err(SkipReason::TooLarge {
            bytes: size,
            limit: max_bytes,
        });
    }
    // One byte past the size: a file that grew while read shows it at once.
    let want = usize::try_from(size.saturating_add(1)).unwrap_or(usize::MAX);
    if bytes.len() < want {
        bytes.resize(want, 0);
    }
    // `take` guards against a file that grows while we read it.
    let mut file = file.take(max_bytes.saturating_add(1));
    let mut read = 0;
    while read as u64 <= max_bytes {
        if read == bytes.len() {
            // It grew past its size: room for more, up to one byte over the limit.
            let more = bytes.len().saturating_mul(2).max(4096);
            let cap = usize::try_from(max_bytes.saturating_add(1)).unwrap_or(usize::MAX);
            bytes.resize(more.min(cap), 0);
        }
        match file.read(&mut bytes[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(SkipReason::Unreadable(e.to_string())),
        }
        // Short of what was asked, at the size its stamp says: the file as it was
        // stamped, without a read more to find its end (16k system calls over a
        // 16k-file tree). A file that grew fills the byte past its size and is
        // read on; one read short of its size is read on to its end.
        if read as u64 == size && read < bytes.len() {
            break;
        }
    }
    if read as u64 > max_bytes {
        return Err(SkipReason::TooLarge {
            bytes: read as u64,
            limit: max_bytes,
        });
    }
    Ok(read)
}

/// [`read_text_into`] a buffer of its own, kept as the text.
pub fn read_text(file: impl Read, size: u64, max_bytes: u64) -> Result<String, SkipReason> {
    let mut bytes = Vec::new();
    let read = read_text_into(file, size, max_bytes, &mut bytes)?.len();
    bytes.truncate(read);
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

// Counts of the bytes of a whole text that pass a test (newlines here, bytes that
// JSON escapes in `answer`). A plain `bytes.filter(..).count()` widens every byte to a
// 64-bit counter, so the compiler handles four bytes per step, and the two passes
// every read file gets (its lines, its escaped length) took 12 % of `files`' CPU on a
// source tree (perf). A block of 255 bytes counted into bytes cannot overflow, and
// runs 16 bytes per step: about 4x faster here. (An array of counters defeats the
// vectorizer; a pair does not.)

/// The most bytes a byte-sized counter can count.
const BLOCK: usize = u8::MAX as usize;

/// How many of `bytes` pass each of the two tests `tests` makes of a byte.
#[inline(always)]
pub(crate) fn count_both(bytes: &[u8], tests: impl Fn(u8) -> (bool, bool)) -> (u64, u64) {
    let (first, second, _) = count_three(bytes, |b| {
        let (a, b) = tests(b);
        (a, b, false)
    });
    (first, second)
}

/// How many of `bytes` pass each of the three tests `tests` makes of a byte: one
/// pass where three counts are needed (three separate counters still vectorize).
#[inline(always)]
pub(crate) fn count_three(
    bytes: &[u8],
    tests: impl Fn(u8) -> (bool, bool, bool),
) -> (u64, u64, u64) {
    let mut blocks = bytes.chunks_exact(BLOCK);
    let (mut first, mut second, mut third) = (0u64, 0u64, 0u64);
    for block in &mut blocks {
        let (a, b, c) = block.iter().fold((0u8, 0u8, 0u8), |(a, b, c), &byte| {
            let (pass_a, pass_b, pass_c) = tests(byte);
            (
                a + u8::from(pass_a),
                b + u8::from(pass_b),
                c + u8::from(pass_c),
            )
        });
        first += u64::from(a);
        second += u64::from(b);
        third += u64::from(c);
    }
    for &byte in blocks.remainder() {
        let (pass_a, pass_b, pass_c) = tests(byte);
        first += u64::from(pass_a);
        second += u64::from(pass_b);
        third += u64::from(pass_c);
    }
    (first, second, third)
}

/// Whether escaping byte `b` in a JSON string adds one byte, and whether it adds
/// four more (`\u001f` against `\n`): the rule of [`crate::answer::json_escaped_len`],
/// here so that reading a file can take its escaped length (this module is a leaf).
#[inline(always)]
pub(crate) fn escape_growth(b: u8) -> (bool, bool) {
    let control = b < 0x20;
    // The short escapes: 0x08 \b, \t, \n, 0x0c \f and \r (8..=13 but not 11).
    let short = b.wrapping_sub(0x08) < 6 && b != 0x0b;
    (b == b'"' || b == b'\\' || control, control && !short)
}

/// [`count_lines`] and [`crate::answer::json_escaped_len`] of `text` from the
/// pass [`read_text_measured_into`] makes (the tests' way to run it alone).
#[cfg(test)]
pub fn lines_and_escaped_len(text: &str) -> (u64, u64) {
    lines_and_escaped(text, escape_counts_ascii(text.as_bytes()).0)
}

/// The [`escape_counts`] of `bytes`, and whether they are all ASCII (`false` is
/// also "not looked": only the AVX2 pass looks, where it costs one `or` a step).
/// One pass for a file's lines and escaped length, as every file a tool reads
/// needs both (two passes took ~1.2× the time of one, on a source tree's files):
/// 32 bytes per step where the CPU has AVX2, against the 16 the compiler makes of
/// [`count_three`] (see `escape_counts_ascii_avx2` for the figures); it was ~4 %
/// of `files`' CPU.
#[inline(always)]
fn escape_counts_ascii(bytes: &[u8]) -> ((u64, u64, u64), bool) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("popcnt")
    {
        // SAFETY: the CPU has AVX2 and POPCNT.
        return unsafe { escape_counts_ascii_avx2(bytes) };
    }
    (escape_counts(bytes), false)
}

/// [`escape_counts_ascii`] 32 bytes per step: each test a compare and a
/// `movemask` to a bit per byte, each count a popcount, and the bytes or-ed
/// together for their high bit. 18.5–18.8 GB/s against
/// 6.5 for [`count_three`]'s (150 MB of the bench tree's files, one thread, the
/// same totals); the same written for AVX-512 (Rust 1.89, over the workspace's
/// 1.88) read 18.8–19.1, and the compiler's own AVX2 and AVX-512 versions of
/// [`count_three`] 7.6 and 4.2.
///
/// # Safety
/// The CPU must have AVX2 and POPCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn escape_counts_ascii_avx2(bytes: &[u8]) -> ((u64, u64, u64), bool) {
    use std::arch::x86_64::*;
    let mut chunks = bytes.chunks_exact(32);
    let mut high = _mm256_setzero_si256();
    let (mut newlines, mut one_more, mut four_more) = (0u64, 0u64, 0u64);
    let splat = |b: u8| _mm256_set1_epi8(b as i8);
    let bits = |m: __m256i| _mm256_movemask_epi8(m) as u32;
    // `v < n` for unsigned bytes (AVX2 compares signed ones): min(v, n - 1) == v.
    let below = |v: __m256i, n: u8| bits(_mm256_cmpeq_epi8(_mm256_min_epu8(v, splat(n - 1)), v));
    for chunk in &mut chunks {
        // SAFETY: the load reads the chunk's 32 bytes.
        let v = unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) };
        high = _mm256_or_si256(high, v);
        let eq = |b: u8| bits(_mm256_cmpeq_epi8(v, splat(b)));
        let control = below(v, 0x20);
        // As `escape_growth`: 0x08 \b, \t, \n, 0x0c \f and \r have short escapes.
        let short = below(_mm256_sub_epi8(v, splat(0x08)), 6) & !eq(0x0b);
        newlines += u64::from(eq(b'\n').count_ones());
        one_more += u64::from((eq(b'"') | eq(b'\\') | control).count_ones());
        four_more += u64::from((control & !short).count_ones());
    }
    let rest = chunks.remainder();
    let (n, one, four) = escape_counts(rest);
    let ascii = bits(high) == 0 && rest.is_ascii();
    ((newlines + n, one_more + one, four_more + four), ascii)
}

/// Newlines, bytes whose escape adds one byte and bytes whose escape adds five
/// ([`escape_growth`]), one byte at a time.
#[inline(always)]
fn escape_counts(bytes: &[u8]) -> (u64, u64, u64) {
    count_three(bytes, |b| {
        let (one, four) = escape_growth(b);
        (b == b'\n', one, four)
    })
}

/// `text`'s lines and escaped length from its [`escape_counts`].
#[inline(always)]
fn lines_and_escaped(text: &str, (newlines, one_more, four_more): (u64, u64, u64)) -> (u64, u64) {
    let lines = newlines + u64::from(!text.is_empty() && !text.ends_with('\n'));
    (lines, text.len() as u64 + one_more + 4 * four_more)
}

/// How many of `bytes` pass `test`.
#[inline(always)]
pub(crate) fn count_where(bytes: &[u8], test: impl Fn(u8) -> bool) -> u64 {
    count_both(bytes, |b| (test(b), false)).0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 pass counts what the byte-at-a-time one does: every ASCII
    /// byte in every lane of a chunk, texts of every length around the chunk
    /// size (the rest after the last whole chunk), and multi-byte characters.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_wide_pass_counts_as_the_byte_pass() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("this CPU has no AVX2: only the byte pass runs here");
            return;
        }
        let mut texts: Vec<String> = (0..128u8)
            .map(|first| {
                (0..130)
                    .map(|k| char::from(first.wrapping_add((k as u8).wrapping_mul(37)) % 128))
                    .collect()
            })
            .collect();
        texts.extend((0..200).map(|n| "a\"\\\n\t\u{1f}é한".chars().cycle().take(n).collect()));
        for text in &texts {
            // SAFETY: the CPU has AVX2 (checked above) and POPCNT (every AVX2
            // CPU has it).
            let wide = unsafe { escape_counts_ascii_avx2(text.as_bytes()) };
            assert_eq!(
                wide,
                (escape_counts(text.as_bytes()), text.is_ascii()),
                "{text:?}"
            );
        }
    }

    /// A file read with its measures is the file read, then measured: ASCII or
    /// not, invalid UTF-8 anywhere (in a whole 32-byte step or the rest after
    /// the last), binary.
    #[test]
    fn a_text_read_with_its_measures_is_read_then_measured() {
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for len in [0, 1, 31, 32, 33, 64, 100] {
            let ascii: Vec<u8> = (0..len).map(|i| b"a\"\n\t\x01 z"[i % 7]).collect();
            texts.push(ascii.clone());
            for at in [0, len / 2, len.saturating_sub(1)]
                .into_iter()
                .filter(|&at| at < len)
            {
                let mut bad = ascii.clone();
                bad[at] = 0xE9; // Latin-1 é: not UTF-8
                texts.push(bad);
                let mut good = ascii[..at].to_vec();
                good.extend("é한🦊".as_bytes());
                good.extend(&ascii[at..]);
                texts.push(good);
            }
        }
        texts.push(b"\x89PNG\0\0".to_vec());
        let (mut one, mut two) = (Vec::new(), Vec::new());
        for bytes in &texts {
            let size = bytes.len() as u64;
            let measured = read_text_measured_into(&bytes[..], size, 1 << 20, &mut one);
            let read = read_text_into(&bytes[..], size, 1 << 20, &mut two);
            let expected = read.map(|text| (text, lines_and_escaped_len(text)));
            assert_eq!(measured, expected, "{bytes:?}");
        }
    }

    #[test]
    fn lines_and_escaped_length_in_one_pass_are_the_two_counts() {
        let every_byte: String = (0u8..128).map(char::from).collect();
        for text in [
            String::new(),
            "a".into(),
            "a\n".into(),
            "\n\n\"q\" \\ \t\r\u{1}\u{1f}é🦊".into(),
            every_byte.repeat(5),
            format!("{}x", every_byte.repeat(3)),
        ] {
            assert_eq!(
                lines_and_escaped_len(&text),
                (count_lines(&text), crate::answer::json_escaped_len(&text)),
                "{text:?}"
            );
        }
    }

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
        // A file larger than its stamp says is read whole (the buffer grows).
        assert_eq!(
            read_text(&b"0123456789"[..], 2, 100).as_deref(),
            Ok("0123456789")
        );
        // A file that grew past its stamp's size while read is still caught.
        assert_eq!(
            read_text(&b"0123456789"[..], 2, 4),
            Err(SkipReason::TooLarge { bytes: 5, limit: 4 })
        );
    }

    #[test]
    fn a_reused_buffer_holds_only_the_file_just_read() {
        let mut buffer = Vec::new();
        let long = "fn long() {}\n".repeat(100);
        assert_eq!(
            read_text_into(long.as_bytes(), long.len() as u64, 1 << 20, &mut buffer),
            Ok(long.as_str())
        );
        // Shorter, then empty: no byte of the file before shows through.
        assert_eq!(
            read_text_into(&b"fn a() {}\n"[..], 10, 1 << 20, &mut buffer),
            Ok("fn a() {}\n")
        );
        assert_eq!(read_text_into(&b""[..], 0, 1 << 20, &mut buffer), Ok(""));
        // Grown past its stamp's size, and past the limit, with the buffer longer
        // than the limit from the first file: still too large.
        assert_eq!(
            read_text_into(&b"0123456789"[..], 2, 4, &mut buffer),
            Err(SkipReason::TooLarge { bytes: 5, limit: 4 })
        );
    }

    /// A reader that hands out at most `.1` bytes a read, as a pipe or a network
    /// file system may.
    struct Chunks<'a>(&'a [u8], usize);

    impl Read for Chunks<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(self.1).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn short_reads_are_read_on_to_the_stamped_size_or_the_end() {
        let text = "fn a() {}\nfn b() {}\n";
        let mut buffer = Vec::new();
        for chunk in [1, 3, 7, 64] {
            // As long as stamped: whole, however it comes.
            let file = Chunks(text.as_bytes(), chunk);
            let read = read_text_into(file, text.len() as u64, 1 << 20, &mut buffer);
            assert_eq!(read, Ok(text), "chunks of {chunk}");
            // Shorter than stamped (it shrank): read to its end.
            let file = Chunks(text.as_bytes(), chunk);
            let read = read_text_into(file, 100, 1 << 20, &mut buffer);
            assert_eq!(read, Ok(text), "chunks of {chunk}");
        }
        // Longer than stamped (it grew): whole when a read goes past the size, as a
        // regular file's does.
        let read = read_text_into(Chunks(text.as_bytes(), 64), 5, 1 << 20, &mut buffer);
        assert_eq!(read, Ok(text));
    }

    #[test]
    fn every_length_around_a_block_counts_what_a_plain_loop_does() {
        // All bytes passing fills each counter to the brim: a block one byte too
        // long would wrap it.
        for len in [0, 1, 15, 16, 17, 254, 255, 256, 509, 510, 511, 4096, 9000] {
            let all = vec![b'\n'; len];
            assert_eq!(count_where(&all, |b| b == b'\n'), len as u64);
            assert_eq!(count_both(&all, |_| (true, true)), (len as u64, len as u64));
            let mixed: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let (odd, small) = count_both(&mixed, |b| (b % 2 == 1, b < 0x20));
            assert_eq!(odd, mixed.iter().filter(|&&b| b % 2 == 1).count() as u64);
            assert_eq!(small, mixed.iter().filter(|&&b| b < 0x20).count() as u64);
        }
    }
}
