//! The file measurement cache written out and read back, so that a command-line
//! run starts where the last one ended: run twice over an unchanged tree, the
//! second run opens every file but reads and counts none (repomix keeps a token
//! cache on disk for the same reason).
//!
//! The bytes hold paths, stamps and numbers, never file contents. They are checked,
//! not trusted: a wrong header, another `generation` (the binary that wrote them:
//! another build may count differently), or any malformed entry rejects the whole
//! file, and every length and count is bounded before it is used. An entry read back
//! answers only while its file's stamp (size, mtime, ctime, inode, device) is the
//! one it was measured with, as in memory.

use std::path::PathBuf;
use std::time::{Duration, UNIX_EPOCH};

use super::measure::{FileMeasure, OutlineTokens};
use super::store::FileStore;
use crate::Tokenizer;
use crate::cache::{FileStamp, MAX_CACHE_ENTRIES};

/// What the first bytes of every layout's cache file start with.
macro_rules! magic_stem {
    () => {
        "context-loader file measures v"
    };
}
const MAGIC_STEM: &[u8] = magic_stem!().as_bytes();

/// The first bytes of a cache file; a new layout gets a new version.
const MAGIC: &[u8] = concat!(magic_stem!(), "3\n").as_bytes();

/// How an entry's outline count is written: its tokens, or one of these above any
/// count (a file's tokens are bounded by its bytes, far below).
const OUTLINE_NOT_COUNTED: u64 = u64::MAX;
/// `OUTLINE_MISSING - i`: the file has no outline, for [`OUTLINE_REASONS`]`[i]`.
const OUTLINE_MISSING: u64 = u64::MAX - 1;
const OUTLINE_REASONS: &[&str] = &["no_grammar", "too_large", "not_utf8", "timed_out"];

fn outline_code(outline: OutlineTokens) -> u64 {
    match outline {
        OutlineTokens::NotCounted => OUTLINE_NOT_COUNTED,
        OutlineTokens::Missing(reason) => OUTLINE_REASONS
            .iter()
            .position(|r| *r == reason)
            .map_or(OUTLINE_NOT_COUNTED, |i| OUTLINE_MISSING - i as u64),
        OutlineTokens::Tokens(n) => n.min(OUTLINE_MISSING - OUTLINE_REASONS.len() as u64),
    }
}

fn outline_of_code(code: u64) -> OutlineTokens {
    match code {
        OUTLINE_NOT_COUNTED => OutlineTokens::NotCounted,
        _ if code > OUTLINE_MISSING - OUTLINE_REASONS.len() as u64 => {
            OutlineTokens::Missing(OUTLINE_REASONS[(OUTLINE_MISSING - code) as usize])
        }
        n => OutlineTokens::Tokens(n),
    }
}

/// Largest cache file read back. An entry is ~100 bytes plus its path, so the
/// largest cache ([`MAX_CACHE_ENTRIES`]) fits with room for long paths.
pub const MAX_CACHE_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Longest path an entry may hold (Linux's PATH_MAX is 4,096).
const MAX_PATH_BYTES: usize = 16 * 1024;

/// Why a cache file was not used (it is then ignored, and written anew).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCacheFile(pub &'static str);

impl std::fmt::Display for BadCacheFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl FileStore {
    /// Measurements added since the store was made: nothing new, nothing to write.
    pub fn cache_added(&self) -> u64 {
        self.cache.added()
    }

    /// The cache as bytes that [`FileStore::restore_cache`] reads back under the same
    /// `generation`. Measurements by a tokenizer.json are left out (the file they
    /// came from is not part of the key).
    pub fn cache_bytes(&self, generation: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(MAGIC.len() + 64 * self.cache.len());
        out.extend_from_slice(MAGIC);
        put_bytes(&mut out, generation.as_bytes());
        let entries: Vec<_> = self
            .cache
            .entries()
            .into_iter()
            .filter_map(|(path, tokenizer, stamp, measure)| {
                let tokenizer = Tokenizer::NAMED.iter().position(|t| *t == tokenizer)?;
                let modified = stamp.modified?.duration_since(UNIX_EPOCH).ok()?;
                let path = path_bytes(path)?;
                (path.len() <= MAX_PATH_BYTES)
                    .then_some((path, tokenizer, stamp, modified, measure))
            })
            .collect();
        out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        for (path, tokenizer, stamp, modified, measure) in entries {
            put_bytes(&mut out, &path);
            out.push(tokenizer as u8);
            for n in [stamp.size, modified.as_secs()] {
                out.extend_from_slice(&n.to_le_bytes());
            }
            out.extend_from_slice(&modified.subsec_nanos().to_le_bytes());
            for n in [stamp.changed.0, stamp.changed.1] {
                out.extend_from_slice(&n.to_le_bytes());
            }
            for n in [
                stamp.inode,
                stamp.device,
                measure.tokens,
                measure.lines,
                measure.bytes,
                measure.escaped,
                outline_code(measure.outline),
            ] {
                out.extend_from_slice(&n.to_le_bytes());
            }
        }
        out
    }

    /// Read back what [`FileStore::cache_bytes`] wrote under `generation`: all of it
    /// or, when anything is wrong with it, none. Returns the entries read.
    pub fn restore_cache(&self, bytes: &[u8], generation: &str) -> Result<usize, BadCacheFile> {
        if bytes.len() as u64 > MAX_CACHE_FILE_BYTES {
            return Err(BadCacheFile(
                "larger than any cache file this program writes",
            ));
        }
        let mut reader = Reader(bytes);
        let magic = reader.take(MAGIC.len())?;
        if magic != MAGIC {
            // Another layout is what an upgrade finds: not a stranger's file.
            return Err(BadCacheFile(match magic.starts_with(MAGIC_STEM) {
                true => "written by another build",
                false => "not a cache file of this program",
            }));
        }
        if reader.bytes()? != generation.as_bytes() {
            return Err(BadCacheFile("written by another build"));
        }
        let count = reader.u64()?;
        // Each entry takes at least 97 bytes: a count larger than the rest can hold
        // is malformed, and is refused before anything is allocated for it.
        if count > MAX_CACHE_ENTRIES as u64 || count > reader.0.len() as u64 / 97 {
            return Err(BadCacheFile("more entries than the file holds"));
        }
        let mut entries = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let path = reader.bytes()?;
            if path.len() > MAX_PATH_BYTES {
                return Err(BadCacheFile("a path longer than any file's"));
            }
            let path = path_from_bytes(path).ok_or(BadCacheFile("a path that is not one"))?;
            let tokenizer = *Tokenizer::NAMED
                .get(reader.take(1)?[0] as usize)
                .ok_or(BadCacheFile("an unknown tokenizer"))?;
            let size = reader.u64()?;
            let seconds = reader.u64()?;
            let nanos = u32::from_le_bytes(reader.array()?);
            if nanos >= 1_000_000_000 {
                return Err(BadCacheFile("a modification time that is not one"));
            }
            let modified = UNIX_EPOCH.checked_add(Duration::new(seconds, nanos));
            let changed = (reader.i64()?, reader.i64()?);
            let (inode, device) = (reader.u64()?, reader.u64()?);
            let measure = FileMeasure {
                tokens: reader.u64()?,
                lines: reader.u64()?,
                bytes: reader.u64()?,
                escaped: reader.u64()?,
                outline: outline_of_code(reader.u64()?),
            };
            let stamp = FileStamp {
                size,
                modified: Some(modified.ok_or(BadCacheFile("a modification time out of range"))?),
                changed,
                inode,
                device,
            };
            entries.push((path, tokenizer, stamp, measure));
        }
        if !reader.0.is_empty() {
            return Err(BadCacheFile("bytes after the last entry"));
        }
        let restored = entries.len();
        self.cache.restore(entries);
        Ok(restored)
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

#[cfg(unix)]
fn path_bytes(path: PathBuf) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStringExt;
    Some(path.into_os_string().into_vec())
}

#[cfg(not(unix))]
fn path_bytes(path: PathBuf) -> Option<Vec<u8>> {
    path.into_os_string()
        .into_string()
        .ok()
        .map(String::into_bytes)
}

#[cfg(unix)]
fn path_from_bytes(bytes: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    // Only absolute paths are ever measured (canonical, inside a root).
    let path = PathBuf::from(std::ffi::OsStr::from_bytes(bytes));
    (path.is_absolute() && !bytes.contains(&0)).then_some(path)
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: &[u8]) -> Option<PathBuf> {
    let path = PathBuf::from(std::str::from_utf8(bytes).ok()?);
    path.is_absolute().then_some(path)
}

/// Reads a cache file front to back; running out of bytes is a malformed file.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], BadCacheFile> {
        if n > self.0.len() {
            return Err(BadCacheFile("cut short"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], BadCacheFile> {
        let mut array = [0; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    fn u64(&mut self) -> Result<u64, BadCacheFile> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn i64(&mut self) -> Result<i64, BadCacheFile> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    fn bytes(&mut self) -> Result<&'a [u8], BadCacheFile> {
        let len = u32::from_le_bytes(self.array()?) as usize;
        self.take(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::FileLimits;
    use crate::files::query::{FileQuery, FileSort};
    use crate::files::roots::Roots;
    use crate::scan_control::Unobserved;
    use crate::{Catalog, ResolvedModel};

    fn tree() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "cb-persist-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/a.rs"), "fn main() { println!(\"hi\"); }\n").unwrap();
        std::fs::write(dir.join("README.md"), "# Title\n\nSome prose here.\n").unwrap();
        dir.canonicalize().unwrap()
    }

    fn measure(
        store: &FileStore,
        dir: &std::path::Path,
        model: &ResolvedModel<'_>,
    ) -> (u64, usize) {
        let roots = Roots::new(&[dir.to_path_buf()]).unwrap();
        let answer = store
            .file_tokens(
                &roots,
                &FileQuery::default(),
                model,
                FileSort::Path,
                None,
                &Unobserved,
            )
            .unwrap();
        (answer.total, answer.cached)
    }

    #[test]
    fn a_cache_read_back_answers_for_unchanged_files_only() {
        let dir = tree();
        let catalog = Catalog::builtin();
        for name in ["gpt-4o", "claude-sonnet-4-5"] {
            let model = catalog.resolve(name).unwrap();
            let first = FileStore::new(FileLimits::default());
            let (total, cached) = measure(&first, &dir, &model);
            assert_eq!(cached, 0);
            assert_eq!(first.cache_added(), 2);
            let bytes = first.cache_bytes("build-1");

            let second = FileStore::new(FileLimits::default());
            assert_eq!(second.restore_cache(&bytes, "build-1"), Ok(2));
            assert_eq!(second.cache_added(), 0, "restored entries are not new");
            assert_eq!(measure(&second, &dir, &model), (total, 2));
            // Another build's file is refused whole, and so is another layout's,
            // for the same reason (the command line replaces either quietly).
            let third = FileStore::new(FileLimits::default());
            let another_build = Err(BadCacheFile("written by another build"));
            assert_eq!(third.restore_cache(&bytes, "build-2"), another_build);
            let mut older = bytes.clone();
            older[MAGIC_STEM.len()] = b'1';
            assert_eq!(third.restore_cache(&older, "build-1"), another_build);
            assert_eq!(measure(&third, &dir, &model), (total, 0));
        }
        // A changed file is measured again, the unchanged one still comes back.
        let model = catalog.resolve("gpt-4o").unwrap();
        let first = FileStore::new(FileLimits::default());
        measure(&first, &dir, &model);
        let bytes = first.cache_bytes("b");
        std::fs::write(
            dir.join("README.md"),
            "# Title\n\nOther, longer prose here.\n",
        )
        .unwrap();
        let second = FileStore::new(FileLimits::default());
        second.restore_cache(&bytes, "b").unwrap();
        let fresh = FileStore::new(FileLimits::default());
        let (total, _) = measure(&fresh, &dir, &model);
        assert_eq!(measure(&second, &dir, &model), (total, 1));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// An outline's count is held with the file's other numbers: counted once when
    /// first asked for (also for a file measured before without it), read back with
    /// them, and counted again when the file changes.
    #[test]
    fn outline_counts_are_kept_and_invalidated_like_full_counts() {
        let dir = tree();
        let model = Catalog::builtin().resolve("gpt-4o").unwrap();
        let roots = Roots::new(&[dir.to_path_buf()]).unwrap();
        let tokens = |store: &FileStore, outline: bool| {
            let query = FileQuery {
                outline,
                ..FileQuery::default()
            };
            store
                .file_tokens(&roots, &query, &model, FileSort::Path, None, &Unobserved)
                .unwrap()
        };
        // `main`'s body is under half the file: an outline elides it.
        let body = "/// A point on the plane, in whole units.\npub struct Point {\n    pub x: i64,\n    pub y: i64,\n}\n\npub fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
        std::fs::write(dir.join("src/a.rs"), body).unwrap();
        let first = FileStore::new(FileLimits::default());
        let plain = tokens(&first, false);
        assert_eq!(plain.outline_total, None);
        assert!(plain.files.iter().all(|row| row.outline_tokens.is_none()));
        // Measured before without outlines: now read again for them, once.
        let outlined = tokens(&first, true);
        assert_eq!(outlined.cached, 0);
        let rust = |answer: &crate::files::FileTokens| {
            answer
                .files
                .iter()
                .find(|r| r.path == "src/a.rs")
                .unwrap()
                .outline_tokens
        };
        let expected = crate::outline::outline(
            "src/a.rs",
            body,
            &crate::outline::Bounds::default(),
            &Unobserved,
        )
        .unwrap();
        let expected = model.tokenizer().count(&expected.text) as u64;
        assert_eq!(rust(&outlined), Some(expected));
        assert!(expected < plain.files[1].tokens);
        assert_eq!(tokens(&first, true).cached, 2);
        // Read back with the other numbers.
        let bytes = first.cache_bytes("g");
        let second = FileStore::new(FileLimits::default());
        assert_eq!(second.restore_cache(&bytes, "g"), Ok(2));
        let again = tokens(&second, true);
        assert_eq!(
            (again.cached, again.outline_total),
            (2, outlined.outline_total)
        );
        // A changed file: both counts again.
        let longer = body.replace("let x = 1;", "let x = 1;\n    let y = 2;");
        std::fs::write(dir.join("src/a.rs"), &longer).unwrap();
        let changed = tokens(&second, true);
        assert_eq!(changed.cached, 1);
        let outline = crate::outline::outline(
            "src/a.rs",
            &longer,
            &crate::outline::Bounds::default(),
            &Unobserved,
        )
        .unwrap();
        assert_eq!(
            rust(&changed),
            Some(model.tokenizer().count(&outline.text) as u64)
        );
        assert_eq!(
            changed.files[1].tokens,
            model.tokenizer().count(&longer) as u64
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_malformed_cache_file_is_refused_whole() {
        let dir = tree();
        let model = Catalog::builtin().resolve("gpt-4o").unwrap();
        let store = FileStore::new(FileLimits::default());
        measure(&store, &dir, &model);
        let bytes = store.cache_bytes("g");
        // Every cut, and every single flipped byte in the header and counts, is
        // refused (or, for a byte inside a number, read as a different stamp that no
        // file has); nothing partial is ever restored.
        for cut in 0..bytes.len() {
            let store = FileStore::new(FileLimits::default());
            assert!(
                store.restore_cache(&bytes[..cut], "g").is_err(),
                "cut at {cut}"
            );
            assert_eq!(store.cache.len(), 0);
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(
            FileStore::new(FileLimits::default())
                .restore_cache(&longer, "g")
                .is_err()
        );
        // A count far beyond the file's size is refused before any allocation.
        let count_at = MAGIC.len() + 4 + 1;
        let mut huge = bytes.clone();
        huge[count_at..count_at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(
            FileStore::new(FileLimits::default())
                .restore_cache(&huge, "g")
                .is_err()
        );
        assert!(
            FileStore::new(FileLimits::default())
                .restore_cache(b"garbage", "g")
                .is_err()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
