//! Texts with very long pre-token pieces, counted in linear time.
//!
//! tiktoken merges each pre-token piece with a heap: fine for words, but one piece
//! of megabytes (8 MiB of one letter, 4 MiB of spaces) took seconds. GitHub's
//! `bpe-openai` encodes with the same vocabularies and pre-tokenizers, by
//! backtracking in linear worst-case time, and gives the same tokens (the
//! differential test checks both against tiktoken-rs). It is slower than tiktoken on
//! ordinary prose, so it is used only for texts that may hold a long piece.
//!
//! Which texts: a piece of cl100k_base or o200k_base longer than a few bytes is a run
//! of whitespace, of letters, or of punctuation (then maybe newlines); digits come
//! three at a time. Over bytes that is a run of ASCII whitespace or non-ASCII, of
//! ASCII letters or non-ASCII, or of ASCII punctuation or non-ASCII. A text with no
//! such run of [`LONG_RUN_BYTES`] has no piece much longer than that, and tiktoken's
//! cost on pieces that short is linear in practice.

use crate::Tokenizer;

/// Runs shorter than this are left to tiktoken.
pub const LONG_RUN_BYTES: usize = 2048;

/// Whether `text` may hold a pre-token piece of about [`LONG_RUN_BYTES`] or more.
/// One pass over the bytes, no allocation.
pub fn may_hold_long_piece(text: &str) -> bool {
    if text.len() < LONG_RUN_BYTES {
        return false;
    }
    // Current run lengths: whitespace-like, letter-like, punctuation-like.
    let (mut space, mut letter, mut punct) = (0usize, 0usize, 0usize);
    for &b in text.as_bytes() {
        let non_ascii = b >= 0x80;
        space = if non_ascii || b.is_ascii_whitespace() {
            space + 1
        } else {
            0
        };
        letter = if non_ascii || b.is_ascii_alphabetic() {
            letter + 1
        } else {
            0
        };
        punct = if non_ascii || b.is_ascii_punctuation() {
            punct + 1
        } else {
            0
        };
        if space.max(letter).max(punct) >= LONG_RUN_BYTES {
            return true;
        }
    }
    false
}

fn encoder(tokenizer: Tokenizer) -> &'static bpe_openai::Tokenizer {
    match tokenizer {
        Tokenizer::Cl100kBase => bpe_openai::cl100k_base(),
        // The estimates tokenize with o200k_base; other families never come here.
        _ => bpe_openai::o200k_base(),
    }
}

/// The exact count of `text` (cl100k_base or o200k_base; the estimate's base for
/// Claude), in linear time.
pub fn count(tokenizer: Tokenizer, text: &str) -> usize {
    encoder(tokenizer).count(text)
}

/// The tokens of `text`, in linear time; the same ids tiktoken gives.
pub fn encode(tokenizer: Tokenizer, text: &str) -> Vec<u32> {
    encoder(tokenizer).encode(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_runs_are_found_and_prose_is_not() {
        let prose = "Plans change. So do budgets: 42 tokens, \"quoted\" words.\n".repeat(200);
        assert!(!may_hold_long_piece(&prose));
        assert!(!may_hold_long_piece(&"0123456789".repeat(1000)));
        for run in ["a", " ", "\n", "=", "é", "가"] {
            let text = format!("start {} end", run.repeat(LONG_RUN_BYTES));
            assert!(may_hold_long_piece(&text), "{run:?}");
        }
        // Letters and non-ASCII letters together are one piece too.
        assert!(may_hold_long_piece(&"aé".repeat(LONG_RUN_BYTES)));
    }

    #[test]
    fn linear_counts_equal_tiktoken_on_short_texts() {
        for tokenizer in [Tokenizer::Cl100kBase, Tokenizer::O200kBase] {
            for text in [
                "hello world",
                "aaaaaaaaaaaaaaaaaaaaaaaaa",
                "   \n\n  x",
                "한국어 🦊",
            ] {
                assert_eq!(count(tokenizer, text), tokenizer.count_here(text));
                assert_eq!(encode(tokenizer, text).len(), tokenizer.count_here(text));
            }
        }
    }
}
