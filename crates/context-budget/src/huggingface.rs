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
        Ok(HuggingFaceTokenizer {
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
    pub fn count(&self, text: &str) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny word-level tokenizer.json with one added (special) token.
    const TINY: &str = r#"{"version":"1.0","truncation":null,"padding":null,
      "added_tokens":[{"id":3,"content":"<|eot|>","single_word":false,"lstrip":false,
        "rstrip":false,"normalized":false,"special":true}],
      "normalizer":null,"pre_tokenizer":{"type":"Whitespace"},"post_processor":null,
      "decoder":null,"model":{"type":"WordLevel","vocab":{"a":0,"b":1,"[UNK]":2},
        "unk_token":"[UNK]"}}"#;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("context-budget-hf-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn counts_as_the_library_encodes_without_special_tokens_added() {
        let dir = temp_dir("count");
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
    fn one_load_per_file_shared() {
        let dir = temp_dir("shared");
        let path = dir.join("tokenizer.json");
        std::fs::write(&path, TINY).expect("write");
        let first = load_shared(&path).expect("loads");
        let again = load_shared(&dir.join(".").join("tokenizer.json")).expect("loads");
        assert!(std::ptr::eq(first, again));
    }

    #[test]
    fn bad_files_say_which_and_why() {
        let dir = temp_dir("bad");
        let missing =
            HuggingFaceTokenizer::from_file(&dir.join("missing.json")).expect_err("missing");
        assert!(matches!(missing, HuggingFaceError::Unreadable { .. }));
        assert!(missing.to_string().contains("missing.json"), "{missing}");
        let directory = HuggingFaceTokenizer::from_file(&dir).expect_err("a directory");
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
