//! Files that tests of more than one crate load, kept once in
//! `crates/test-support/fixtures/` (the engine's unit tests, the server's end-to-end
//! tests).

/// A tiny word-level Hugging Face `tokenizer.json`: every whitespace-separated word
/// is one token (`a`, `b`, anything else `[UNK]`), and `<|eot|>` is an added special
/// token.
pub const TINY_TOKENIZER: &str = include_str!("../fixtures/tiny-tokenizer.json");

/// A byte-level BPE `tokenizer.json` shaped like Qwen3's: NFC, its regex split (one
/// digit per piece), the byte-level alphabet and a few merges, a special added token
/// (`<|im_start|>`, matched raw) and a normalized one (`<think>`).
pub const BYTE_LEVEL_TOKENIZER: &str = include_str!("../fixtures/byte-level-tokenizer.json");
