//! Open-weight models counted exactly with their own Hugging Face `tokenizer.json`,
//! through the `tokenizers` crate (the library Python `tokenizers` wraps), built with
//! its pure-Rust features only (`fancy-regex`; the default `onig` and `esaxx` need a
//! C/C++ toolchain).
//!
//! A count is what `Tokenizer.encode(text, add_special_tokens=False)` returns: no
//! BOS/EOS or template tokens added, and text spelling an added token
//! (`<|eot_id|>`, `<|im_start|>`) counted as that one token, exactly as the library
//! does. This differs from the OpenAI encodings here, which count such text as the
//! plain characters it is: an open-weight chat template puts those markers in the
//! prompt, and the model sees them as single tokens.
//!
//! Each file is read once, when the models file that names it is loaded, and shared
//! by every thread for the life of the process.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Largest `tokenizer.json` accepted (the biggest common ones, Gemma 3's, are 33 MB).
pub const MAX_TOKENIZER_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Why a `tokenizer.json` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum HuggingFaceError {
    #[error("tokenizer file {path}: {reason}")]
    Unreadable { path: PathBuf, reason: String },
    #[error("tokenizer file {path} is {size} bytes, over the {max}-byte limit")]
    TooLarge { path: PathBuf, size: u64, max: u64 },
    #[error("tokenizer file {path} is not a Hugging Face tokenizer.json: {reason}")]
    Invalid { path: PathBuf, reason: String },
}

/// One loaded `tokenizer.json`.
pub struct HuggingFaceTokenizer {
    path: PathBuf,
    method: String,
    inner: tokenizers::Tokenizer,
    /// The library's own pipeline taken apart, for files whose shape allows it
    /// (see [`Stream`]); `None`: every count goes through `encode_fast` whole.
    stream: Option<Stream>,
}

/// Tokenizers are one per file: equal when their (canonical) paths are.
impl PartialEq for HuggingFaceTokenizer {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl Eq for HuggingFaceTokenizer {}

impl std::hash::Hash for HuggingFaceTokenizer {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.path.hash(state);
    }
}

/// The tokenizer of `path`, loaded on the first request for that file and shared
/// (for the life of the process) by every later one: a models file loaded twice,
/// or two models naming one file, read and build it once.
pub fn load_shared(path: &Path) -> Result<&'static HuggingFaceTokenizer, HuggingFaceError> {
    static LOADED: Mutex<Vec<&'static HuggingFaceTokenizer>> = Mutex::new(Vec::new());
    let canonical = std::fs::canonicalize(path).map_err(|e| HuggingFaceError::Unreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let mut loaded = LOADED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(tokenizer) = loaded.iter().find(|t| t.path == canonical) {
        return Ok(tokenizer);
    }
    let tokenizer: &'static HuggingFaceTokenizer =
        Box::leak(Box::new(HuggingFaceTokenizer::from_file(&canonical)?));
    loaded.push(tokenizer);
    Ok(tokenizer)
}

impl std::fmt::Debug for HuggingFaceTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HuggingFaceTokenizer")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl HuggingFaceTokenizer {
    /// Read and parse a `tokenizer.json` (a regular file, at most
    /// [`MAX_TOKENIZER_FILE_BYTES`]).
    pub fn from_file(path: &Path) -> Result<HuggingFaceTokenizer, HuggingFaceError> {
        let unreadable = |reason: String| HuggingFaceError::Unreadable {
            path: path.to_path_buf(),
            reason,
        };
        // O_NONBLOCK: a FIFO named as the file opens at once (and is refused below as
        // not a regular file) instead of hanging start-up until a writer comes.
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
        let file = options.open(path).map_err(|e| unreadable(e.to_string()))?;
        // Checked on the opened handle, so a FIFO or device is never read from.
        let metadata = file.metadata().map_err(|e| unreadable(e.to_string()))?;
        if !metadata.is_file() {
            return Err(unreadable("not a regular file".into()));
        }
        if metadata.len() > MAX_TOKENIZER_FILE_BYTES {
            return Err(HuggingFaceError::TooLarge {
                path: path.to_path_buf(),
                size: metadata.len(),
                max: MAX_TOKENIZER_FILE_BYTES,
            });
        }
        let mut bytes = Vec::with_capacity(metadata.len() as usize);
        use std::io::Read;
        file.take(MAX_TOKENIZER_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| unreadable(e.to_string()))?;
        let inner =
            tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| HuggingFaceError::Invalid {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let stream = Stream::of(&inner);
        Ok(HuggingFaceTokenizer {
            stream,
            path: path.to_path_buf(),
            method: format!(
                "exact: Hugging Face tokenizer.json {name} (encode without special tokens \
                 added; added-token text counted as that token)"
            ),
            inner,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// One line for responses, naming the file.
    pub fn method(&self) -> &str {
        &self.method
    }

    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// The number of tokens `encode(text, add_special_tokens=False)` gives.
    ///
    /// `encode_fast` skips the offsets a count does not need. An encoding error
    /// (the library's, for input it cannot handle) is counted as one token per
    /// byte, the most any byte-level vocabulary could need, so a budget never
    /// comes out low; the differential test has never hit it.
    ///
    /// Counted piece by piece ([`Stream`]) where the file's shape allows, so memory
    /// stays a small multiple of the text; otherwise by the library whole.
    pub fn count(&self, text: &str) -> usize {
        match &self.stream {
            Some(stream) => stream
                .count_until(&self.inner, text, &|| false)
                .unwrap_or(text.len()),
            None => self.count_whole(text),
        }
    }

    /// [`Self::count`], giving up (`None`) within about [`CHECK_BYTES`] of text
    /// after `cancelled` turns true. A file whose shape does not allow counting in
    /// pieces is counted whole once started (`encode_fast` cannot be interrupted).
    pub fn count_until(&self, text: &str, cancelled: &dyn Fn() -> bool) -> Option<usize> {
        match &self.stream {
            Some(stream) => stream.count_until(&self.inner, text, cancelled),
            None if cancelled() => None,
            None => Some(self.count_whole(text)),
        }
    }

    /// Whether counts go piece by piece ([`Stream`]) rather than through
    /// `encode_fast` on the whole text.
    pub fn counts_in_pieces(&self) -> bool {
        self.stream.is_some()
    }

    /// The library's own count of the whole text: what [`Self::count`] must equal.
    pub fn count_whole(&self, text: &str) -> usize {
        self.inner
            .encode_fast(text, false)
            .map(|encoding| encoding.len())
            .unwrap_or(text.len())
    }

    /// Token ids with their byte offsets in `text`: `(start, end)` per token.
    pub fn offsets(&self, text: &str) -> Vec<(usize, usize)> {
        self.inner
            .encode(text, false)
            .map(|encoding| encoding.get_offsets().to_vec())
            .unwrap_or_default()
    }
}

/// Bytes of text between two looks at the cancellation flag.
pub const CHECK_BYTES: usize = 64 * 1024;

/// `encode_fast` holds, for the whole text at once, a copy with 16 bytes of
/// alignment per byte, every pre-token piece as its own string and every token as
/// a string with offsets: 300-400 bytes per byte of text (8 MiB of digits: 3.1 GB),
/// and nothing can interrupt it. For the usual shape of a byte-level BPE file
/// (Llama 3, Qwen 2/3, DeepSeek V3, GPT-2 descendants) the same steps are run here
/// on one piece at a time, with the library's own parts, so the count is the
/// library's by construction and the text is never held more than once more:
///
/// 1. added tokens are found in the raw text (aho-corasick, leftmost-longest, over
///    the non-`normalized` ones), each one token;
/// 2. the text between them is normalized (identity, or NFC in parts cut before an
///    ASCII character, where NFC never reaches across) and searched for the
///    `normalized` added tokens;
/// 3. the rest is split by each `Split` regex in turn, every match and every gap a
///    piece: by tiktoken's hand-written scanner when the regex is exactly one it
///    has one for ([`Splitter`]), otherwise by the library's `SysRegex`;
/// 4. each piece, mapped byte by byte to the byte-level alphabet, is tokenized by
///    the library's BPE model.
///
/// Any other shape (another normalizer or pre-tokenizer, `lstrip`/`rstrip`/
/// `single_word` added tokens, padding, truncation) is counted by `encode_fast`.
struct Stream {
    /// Unique per stream in the process: whose counts a thread's cache holds.
    id: u64,
    /// `None` when there are none: an automaton of no patterns still reads every
    /// byte (Llama 3 and Qwen3 have no `normalized` added tokens).
    raw_added: Option<aho_corasick::AhoCorasick>,
    normalized_added: Option<aho_corasick::AhoCorasick>,
    nfc: bool,
    splits: Vec<Splitter>,
    byte_chars: [char; 256],
}

impl Stream {
    /// The stream for `tokenizer`, or `None` when its shape is not the one above.
    fn of(tokenizer: &tokenizers::Tokenizer) -> Option<Stream> {
        use serde_json::Value;
        if tokenizer.get_padding().is_some()
            || tokenizer.get_truncation().is_some()
            || tokenizer.get_encode_special_tokens()
        {
            return None;
        }
        // Matched, not serialized: a model's vocabulary and merges are megabytes.
        match tokenizer.get_model() {
            tokenizers::ModelWrapper::BPE(bpe) if bpe.dropout.is_none() => {}
            _ => return None,
        }
        let nfc = match tokenizer.get_normalizer() {
            None => false,
            Some(normalizer) => {
                let value = serde_json::to_value(normalizer).ok()?;
                match value["type"].as_str()? {
                    "NFC" => true,
                    "Sequence" if value["normalizers"].as_array()?.is_empty() => false,
                    _ => return None,
                }
            }
        };
        let pre = serde_json::to_value(tokenizer.get_pre_tokenizer()?).ok()?;
        let steps: Vec<Value> = match pre["type"].as_str()? {
            "Sequence" => pre["pretokenizers"].as_array()?.clone(),
            _ => vec![pre],
        };
        let (byte_level, split_steps) = steps.split_last()?;
        if byte_level["type"] != "ByteLevel"
            || byte_level["add_prefix_space"] != Value::Bool(false)
            || byte_level["use_regex"] != Value::Bool(false)
        {
            return None;
        }
        let mut splits = Vec::new();
        for step in split_steps {
            if step["type"] != "Split"
                || step["behavior"] != "Isolated"
                || step["invert"] != Value::Bool(false)
            {
                return None;
            }
            // A literal `String` pattern is rare enough to leave to the library.
            let Value::String(pattern) = &step["pattern"]["Regex"] else {
                return None;
            };
            splits.push(match tiktoken::encoding::SplitScanner::for_regex(pattern) {
                Some(scanner) => Splitter::Scanner(scanner),
                None => Splitter::Library(tokenizers::utils::SysRegex::new(pattern).ok()?),
            });
        }
        let mut raw = Vec::new();
        let mut normalized = Vec::new();
        for token in tokenizer.get_added_tokens_decoder().into_values() {
            if token.lstrip || token.rstrip || token.single_word {
                return None;
            }
            if token.normalized {
                let mut content = tokenizers::NormalizedString::from(token.content.as_str());
                if let Some(normalizer) = tokenizer.get_normalizer() {
                    tokenizers::Normalizer::normalize(normalizer, &mut content).ok()?;
                }
                normalized.push(content.get().to_owned());
            } else {
                raw.push(token.content);
            }
        }
        let trie = |patterns: Vec<String>| {
            if patterns.is_empty() {
                return Some(None);
            }
            aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .build(patterns)
                .ok()
                .map(Some)
        };
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Some(Stream {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            raw_added: trie(raw)?,
            normalized_added: trie(normalized)?,
            nfc,
            splits,
            byte_chars: byte_chars(),
        })
    }

    fn count_until(
        &self,
        tokenizer: &tokenizers::Tokenizer,
        text: &str,
        cancelled: &dyn Fn() -> bool,
    ) -> Option<usize> {
        let mut run = Run {
            tokenizer,
            stream: self,
            cancelled,
            tokens: 0,
            unchecked: 0,
            word: String::new(),
        };
        let mut at = 0;
        for found in self
            .raw_added
            .iter()
            .flat_map(|added| added.find_iter(text))
        {
            run.normalize_and_count(&text[at..found.start()])?;
            run.tokens += 1;
            at = found.end();
        }
        run.normalize_and_count(&text[at..])?;
        Some(run.tokens)
    }
}

/// One `Split` step of the pre-tokenizer.
///
/// The `Split` regexes of Llama 3 and Qwen 2/3 end in `\s+(?!\S)|\s+`; that
/// lookahead puts every piece through `fancy-regex`'s backtracking VM and most of
/// a count's time went there. tiktoken scans those exact patterns by hand (the
/// regex crate, without lookahead, where its scanner declines, and the lookahead
/// emulated), giving the same pieces; any other regex stays the library's.
enum Splitter {
    Scanner(tiktoken::encoding::SplitScanner),
    Library(tokenizers::utils::SysRegex),
}

/// One count in progress.
struct Run<'a> {
    tokenizer: &'a tokenizers::Tokenizer,
    stream: &'a Stream,
    cancelled: &'a dyn Fn() -> bool,
    tokens: usize,
    /// Bytes seen since the cancellation flag was last looked at.
    unchecked: usize,
    /// The piece in the byte-level alphabet, reused.
    word: String,
}

impl Run<'_> {
    /// Step 2 and on, for text between two raw added tokens.
    fn normalize_and_count(&mut self, text: &str) -> Option<()> {
        if text.is_empty() {
            return Some(());
        }
        // NFC leaves ASCII as it is (most code, much prose): no copy, no library pass.
        if !self.stream.nfc || text.is_ascii() {
            return self.count_normalized(text);
        }
        let normalizer = self.tokenizer.get_normalizer()?;
        let mut normalized = String::with_capacity(text.len());
        let bytes = text.as_bytes();
        let (mut at, mut unchecked) = (0, 0);
        while at < bytes.len() {
            // NFC never composes or reorders across a cut before an ASCII character,
            // and leaves ASCII as it is: only the non-ASCII runs, each with the ASCII
            // character before it (a base it may compose with), go through the library.
            let Some(first) = bytes[at..].iter().position(|b| !b.is_ascii()) else {
                normalized.push_str(&text[at..]);
                break;
            };
            let start = at + first.saturating_sub(1);
            normalized.push_str(&text[at..start]);
            let run = at + first;
            let end = bytes[run..]
                .iter()
                .position(u8::is_ascii)
                .map_or(bytes.len(), |i| run + i);
            let mut part = tokenizers::NormalizedString::from(&text[start..end]);
            if tokenizers::Normalizer::normalize(normalizer, &mut part).is_err() {
                return None;
            }
            normalized.push_str(part.get());
            unchecked += end - at;
            at = end;
            if unchecked >= CHECK_BYTES {
                unchecked = 0;
                if (self.cancelled)() {
                    return None;
                }
            }
        }
        self.count_normalized(&normalized)
    }

    fn count_normalized(&mut self, text: &str) -> Option<()> {
        let mut at = 0;
        let added = self.stream.normalized_added.as_ref();
        for found in added.into_iter().flat_map(|added| added.find_iter(text)) {
            self.split(0, &text[at..found.start()])?;
            self.tokens += 1;
            at = found.end();
        }
        self.split(0, &text[at..])
    }

    /// Step 3 at `level`: every match of its regex and every gap, each split further.
    fn split(&mut self, level: usize, text: &str) -> Option<()> {
        if text.is_empty() {
            return Some(());
        }
        let Some(splitter) = self.stream.splits.get(level) else {
            return self.tokenize(text);
        };
        let mut at = 0;
        match splitter {
            Splitter::Scanner(scanner) => {
                while let Some((start, end)) = scanner.next_match(text, at) {
                    if at != start {
                        self.split(level + 1, &text[at..start])?;
                    }
                    self.split(level + 1, &text[start..end])?;
                    at = end;
                }
            }
            Splitter::Library(regex) => {
                for (start, end) in regex.find_iter(text) {
                    if at != start {
                        self.split(level + 1, &text[at..start])?;
                    }
                    self.split(level + 1, &text[start..end])?;
                    at = end;
                }
            }
        }
        self.split(level + 1, &text[at..])
    }

    /// Step 4: one piece.
    fn tokenize(&mut self, piece: &str) -> Option<()> {
        self.unchecked += piece.len();
        if self.unchecked >= CHECK_BYTES {
            self.unchecked = 0;
            if (self.cancelled)() {
                return None;
            }
        }
        if piece.len() <= CACHED_PIECE_BYTES {
            let owner = self.stream.id;
            let cached = PIECE_COUNTS.with_borrow_mut(|cache| {
                if cache.owner != owner || cache.counts.len() > CACHE_ENTRIES {
                    cache.owner = owner;
                    cache.counts.clear();
                }
                cache.counts.get(piece).copied()
            });
            let count = match cached {
                Some(count) => count as usize,
                None => {
                    let count = self.model_count(piece);
                    PIECE_COUNTS.with_borrow_mut(|cache| {
                        cache
                            .counts
                            .insert(piece.into(), u32::try_from(count).unwrap_or(u32::MAX))
                    });
                    count
                }
            };
            self.tokens += count;
        } else {
            self.tokens += self.model_count(piece);
        }
        Some(())
    }

    /// The library's BPE on one piece, mapped to the byte-level alphabet.
    fn model_count(&mut self, piece: &str) -> usize {
        self.word.clear();
        self.word
            .extend(piece.bytes().map(|b| self.stream.byte_chars[b as usize]));
        tokenizers::Model::tokenize(self.tokenizer.get_model(), &self.word)
            .map_or(piece.len(), |tokens| tokens.len())
    }
}

/// Counts of recently seen pieces (words, mostly), per thread and for one file at a
/// time: text repeats its words, and a lookup costs far less than the library's
/// tokenize (its own cache sits behind a lock and returns a string per token).
/// Cleared when full or when another file is counted on the thread.
const CACHE_ENTRIES: usize = 1 << 16;
const CACHED_PIECE_BYTES: usize = 64;

#[derive(Default)]
struct PieceCounts {
    /// The [`Stream::id`] the counts are for.
    owner: u64,
    counts: std::collections::HashMap<Box<str>, u32>,
}

thread_local! {
    static PIECE_COUNTS: std::cell::RefCell<PieceCounts> = std::cell::RefCell::default();
}

/// GPT-2's map from bytes to printable characters (the byte-level alphabet):
/// printable Latin-1 bytes stand for themselves, the rest for U+0100 onwards.
fn byte_chars() -> [char; 256] {
    let printable = |b: u8| matches!(b, b'!'..=b'~') || matches!(b, 0xA1..=0xAC) || b >= 0xAE;
    let mut chars = ['\0'; 256];
    let mut next = 0x100u32;
    for b in 0..=255u8 {
        chars[b as usize] = if printable(b) {
            char::from(b)
        } else {
            let c = char::from_u32(next).unwrap_or('\0');
            next += 1;
            c
        };
    }
    chars
}

#[cfg(test)]
mod tests {
    use super::*;

    // A tiny word-level tokenizer.json with one added (special) token, and a
    // byte-level BPE one shaped like Qwen3's (shared with the server's tests).
    use test_support::fixtures::{BYTE_LEVEL_TOKENIZER, TINY_TOKENIZER as TINY};

    /// A scratch folder, removed when the test ends (also when it fails).
    fn temp_dir(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("context-budget-hf-{name}-"))
            .tempdir()
            .expect("temp dir")
    }

    #[test]
    fn counts_as_the_library_encodes_without_special_tokens_added() {
        let scratch = temp_dir("count");
        let dir = scratch.path();
        let path = dir.join("tokenizer.json");
        std::fs::write(&path, TINY).expect("write");
        let tokenizer = HuggingFaceTokenizer::from_file(&path).expect("loads");
        assert_eq!(tokenizer.count("a b a"), 3);
        assert_eq!(tokenizer.count(""), 0);
        // Added-token text is that one token, as Python tokenizers counts it.
        assert_eq!(tokenizer.count("a<|eot|>b"), 3);
        assert!(tokenizer.method().contains("tokenizer.json"));
        assert_eq!(tokenizer.offsets("a b"), [(0, 1), (2, 3)]);
    }

    #[test]
    fn byte_level_files_are_counted_in_pieces_exactly_as_the_library_counts_whole() {
        let scratch = temp_dir("pieces");
        let dir = scratch.path();
        let path = dir.join("tokenizer.json");
        std::fs::write(&path, BYTE_LEVEL_TOKENIZER).expect("write");
        let tokenizer = HuggingFaceTokenizer::from_file(&path).expect("loads");
        assert!(tokenizer.counts_in_pieces());
        let mut seed = 7u64;
        let mut random = |alphabet: &[&str], n: usize| -> String {
            (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    alphabet[(seed >> 33) as usize % alphabet.len()]
                })
                .collect()
        };
        let alphabet = [
            "the",
            " the",
            "in",
            " ",
            "  ",
            "\n",
            "\n\n",
            "\t",
            "1",
            "23",
            "é",
            "e\u{301}",
            "\u{1100}\u{1161}",
            "한",
            "🦊",
            "<|im_start|>",
            "<think>",
            "<thi",
            "'s",
            "!?",
            "x",
            "Ω",
            "\r\n",
            "\u{0958}",
        ];
        let mut texts: Vec<String> = (0..300).map(|i| random(&alphabet, i % 40)).collect();
        texts.push(random(&alphabet, 60_000));
        texts.push("9".repeat(200_000));
        texts.push("e\u{301}".repeat(50_000));
        texts.push(String::new());
        for text in &texts {
            assert_eq!(
                tokenizer.count(text),
                tokenizer.count_whole(text),
                "{text:?}"
            );
        }
        // Cancelled: no count, after at most one check's worth of text.
        let looks = std::cell::Cell::new(0);
        let long = &texts[texts.len() - 3];
        let stop = || {
            looks.set(looks.get() + 1);
            looks.get() > 2
        };
        assert_eq!(tokenizer.count_until(long, &stop), None);
        assert_eq!(looks.get(), 3);
        // Other shapes are left to the library, counted whole.
        let word_level = dir.join("word.json");
        std::fs::write(&word_level, TINY).expect("write");
        assert!(
            !HuggingFaceTokenizer::from_file(&word_level)
                .expect("loads")
                .counts_in_pieces()
        );
    }

    /// The `Split` regexes of Llama 3.x and Qwen 2/3 `tokenizer.json` files, as
    /// written there.
    const LLAMA3_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    const QWEN2_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

    /// Pieces (matches and the gaps between them) as the library's `Split` cuts.
    fn library_pieces(regex: &tokenizers::utils::SysRegex, text: &str) -> Vec<(usize, usize)> {
        let mut pieces = Vec::new();
        let mut at = 0;
        for (start, end) in regex.find_iter(text) {
            if at != start {
                pieces.push((at, start));
            }
            pieces.push((start, end));
            at = end;
        }
        if at != text.len() {
            pieces.push((at, text.len()));
        }
        pieces
    }

    fn scanner_pieces(
        scanner: &tiktoken::encoding::SplitScanner,
        text: &str,
    ) -> Vec<(usize, usize)> {
        let mut pieces = Vec::new();
        let mut at = 0;
        while let Some((start, end)) = scanner.next_match(text, at) {
            if at != start {
                pieces.push((at, start));
            }
            pieces.push((start, end));
            at = end;
        }
        if at != text.len() {
            pieces.push((at, text.len()));
        }
        pieces
    }

    /// Texts where a hand-written scanner could part from the regex: every branch's
    /// edge (contractions in any case, `ſ` and `K` that case-fold to ASCII, curly
    /// quotes), each Unicode category the classes name (letters of many scripts,
    /// marks, `Nd`/`Nl`/`No` numbers), whitespace the classes know and do not
    /// (U+0085, U+00A0, U+2028, U+3000 vs U+200B, U+FEFF), `\r\n` runs, whitespace
    /// before a non-space (the lookahead), emoji and ZWJ, multi-byte characters
    /// against ASCII ones on each side.
    const HARD: &[&str] = &[
        "'s",
        "'S",
        "'t",
        "'T",
        "'re",
        "'RE",
        "'rE",
        "'ve",
        "'VE",
        "'m",
        "'M",
        "'ll",
        "'LL",
        "'lL",
        "'d",
        "'D",
        "'ſ",
        "'\u{212A}",
        "’s",
        "'x",
        "''",
        "'",
        "don't",
        "DON'T",
        "a",
        "Z",
        "abc",
        "é",
        "e\u{301}",
        "\u{301}",
        "ß",
        "Ω",
        "ж",
        "한",
        "国",
        "カ",
        "ｶ",
        "Ａ",
        "ａ",
        "ا",
        "ह",
        "\u{93F}",
        "ǅ",
        "ʰ",
        "\u{5D0}",
        "0",
        "7",
        "123",
        "4567",
        "٣",
        "７",
        "²",
        "½",
        "Ⅻ",
        "〇",
        "𝟘",
        " ",
        "  ",
        "    ",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "\n\n",
        "\r\n\r\n",
        " \n",
        "\n ",
        "\x0b",
        "\x0c",
        "\u{85}",
        "\u{a0}",
        "\u{2028}",
        "\u{3000}",
        "\u{200b}",
        "\u{feff}",
        "\u{2003}",
        ".",
        ",",
        "!",
        "?!",
        "...",
        "//",
        "/*",
        "*/",
        "->",
        "=>",
        "::",
        "{",
        "}",
        "(",
        ")",
        "\"",
        "`",
        "#",
        "_",
        "\\",
        "、",
        "。",
        "「",
        "—",
        "…",
        "🦊",
        "👍🏽",
        "👩\u{200d}👩\u{200d}👧",
        "\u{200d}",
        "<|im_start|>",
        "<think>",
        " the",
        " The",
        "fn main() {",
        "    let x = 1;",
        "\u{0}",
        "\u{7f}",
    ];

    fn hard_texts() -> Vec<String> {
        let mut seed = 21u64;
        let mut texts: Vec<String> = HARD.iter().map(|s| s.to_string()).collect();
        for a in HARD {
            for b in HARD {
                texts.push(format!("{a}{b}"));
                texts.push(format!("{a} {b}"));
                texts.push(format!("{a}  {b}"));
                texts.push(format!("{a}\u{3000} {b}"));
            }
        }
        for i in 0..4000 {
            let n = if i % 100 == 0 { 2000 } else { i % 60 };
            texts.push(
                (0..n)
                    .map(|_| {
                        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        HARD[(seed >> 33) as usize % HARD.len()]
                    })
                    .collect(),
            );
        }
        // Long runs: whitespace before a letter, at the end, with newlines inside.
        for ws in [" ", "\t", "\u{a0}", "\u{3000}", " \n", "\r\n"] {
            texts.push(format!("x{}y", ws.repeat(5000)));
            texts.push(format!("x{}", ws.repeat(5000)));
            texts.push(format!("{}1", ws.repeat(300)));
        }
        texts.push("1".repeat(10_000));
        texts.push("a".repeat(10_000));
        texts.push("!".repeat(10_000));
        texts
    }

    /// The scanner is used only for these exact regexes, and there it cuts every
    /// text into the pieces the library's regex cuts.
    #[test]
    fn split_scanners_cut_as_the_library_regex() {
        assert!(tiktoken::encoding::SplitScanner::for_regex("\\s+").is_none());
        assert!(
            tiktoken::encoding::SplitScanner::for_regex(&LLAMA3_SPLIT.replace("{1,3}", "{1,2}"))
                .is_none()
        );
        let texts = hard_texts();
        for pattern in [LLAMA3_SPLIT, QWEN2_SPLIT] {
            let scanner = tiktoken::encoding::SplitScanner::for_regex(pattern).expect("scanner");
            let regex = tokenizers::utils::SysRegex::new(pattern).expect("regex");
            for text in &texts {
                assert_eq!(
                    scanner_pieces(&scanner, text),
                    library_pieces(&regex, text),
                    "{pattern} on {text:?}"
                );
            }
            // Past a million spaces fancy-regex's VM runs out of stack and the library
            // stops splitting (the rest is one piece); the scanner keeps to the
            // regex's definition, as Python `tokenizers` (Oniguruma) does: there
            // Qwen3 counts this text as 8,596 tokens, the library whole 8,597.
            let n = 1_100_000;
            let long = " ".repeat(n) + "a b";
            assert_eq!(
                scanner_pieces(&scanner, &long),
                [(0, n - 1), (n - 1, n + 1), (n + 1, n + 3)]
            );
        }
    }

    /// Random Unicode with the characters the patterns single out, 3,000 texts. The
    /// scanners and regexes are built once: building them for every text was ~95 % of
    /// this test's time (21 s unoptimized).
    #[test]
    fn split_scanners_cut_any_text_as_the_library_regex() {
        let cutters = [LLAMA3_SPLIT, QWEN2_SPLIT].map(|pattern| {
            (
                tiktoken::encoding::SplitScanner::for_regex(pattern).expect("scanner"),
                tokenizers::utils::SysRegex::new(pattern).expect("regex"),
            )
        });
        let mut runner =
            proptest::test_runner::TestRunner::new(proptest::prelude::ProptestConfig {
                cases: 3000,
                ..Default::default()
            });
        let texts = r"(\PC|[\t\r\n\x0b\x0c\u{85}\u{a0}\u{2028}\u{3000}'sSlL ]){0,80}";
        let result = runner.run(&texts, |text| {
            for (scanner, regex) in &cutters {
                proptest::prop_assert_eq!(
                    scanner_pieces(scanner, &text),
                    library_pieces(regex, &text)
                );
            }
            Ok(())
        });
        if let Err(failure) = result {
            panic!("{failure}");
        }
    }

    #[test]
    fn one_load_per_file_shared() {
        let scratch = temp_dir("shared");
        let dir = scratch.path();
        let path = dir.join("tokenizer.json");
        std::fs::write(&path, TINY).expect("write");
        let first = load_shared(&path).expect("loads");
        let again = load_shared(&dir.join(".").join("tokenizer.json")).expect("loads");
        assert!(std::ptr::eq(first, again));
    }

    #[test]
    fn bad_files_say_which_and_why() {
        let scratch = temp_dir("bad");
        let dir = scratch.path();
        let missing =
            HuggingFaceTokenizer::from_file(&dir.join("missing.json")).expect_err("missing");
        assert!(matches!(missing, HuggingFaceError::Unreadable { .. }));
        assert!(missing.to_string().contains("missing.json"), "{missing}");
        let directory = HuggingFaceTokenizer::from_file(dir).expect_err("a directory");
        assert!(
            directory.to_string().contains("not a regular file"),
            "{directory}"
        );
        let invalid = dir.join("invalid.json");
        std::fs::write(&invalid, "{\"model\": 1}").expect("write");
        let error = HuggingFaceTokenizer::from_file(&invalid).expect_err("invalid");
        assert!(matches!(error, HuggingFaceError::Invalid { .. }), "{error}");
        assert!(error.to_string().contains("invalid.json"), "{error}");
    }
}
