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
    inner: tokenizers::Tokenizer,
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
        let file = std::fs::File::open(path).map_err(|e| unreadable(e.to_string()))?;
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
        Ok(HuggingFaceTokenizer {
            path: path.to_path_buf(),
            inner,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
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
