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
//! ASCII letters or non-ASCII, or of anything else that is not an ASCII letter,
//! digit or space (punctuation, control characters) or non-ASCII. A text with no
//! such run of [`LONG_RUN_BYTES`] has no piece much longer than that, and
//! tiktoken's cost on pieces that short is linear in practice.
//!
//! Every file and text is asked this before it is counted, so the question must
//! cost far less than the count: runs are looked for the way Boyer-Moore looks for
//! a word, from the end of each candidate window, so ordinary text (a space every
//! few bytes) is decided after looking at about one byte in [`LONG_RUN_BYTES`].

use crate::Tokenizer;

/// Runs shorter than this are left to tiktoken. Its merge of one piece of 16 KiB
/// costs at most ~1.7× per byte what a piece of 2 KiB does (3.6–5 MB/s against
/// 4.7–8.3 on runs of one letter, random letters or spaces), while loading
/// bpe-openai costs ~50 ms and ~64 MB: at 2 KiB a Markdown rule of 3,000 `=` or a
/// paragraph of Thai (no spaces) made a 5 ms `count` take 55 ms.
pub const LONG_RUN_BYTES: usize = 16 * 1024;

/// Whether `text` may hold a pre-token piece of about [`LONG_RUN_BYTES`] or more.
/// No allocation; each byte is looked at at most once per class.
pub fn may_hold_long_piece(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() < LONG_RUN_BYTES {
        return false;
    }
    let space = |b: u8| b >= 0x80 || matches!(b, b' ' | b'\t'..=b'\r');
    let letter = |b: u8| b >= 0x80 || b.is_ascii_alphabetic();
    let other = |b: u8| b >= 0x80 || !(b.is_ascii_alphanumeric() || space(b));
    has_run(bytes, space) || has_run(bytes, letter) || has_run(bytes, other)
}

/// Whether `bytes` holds [`LONG_RUN_BYTES`] consecutive bytes in `class`.
///
/// A window is checked from its end backwards; a byte outside the class means no
/// run through it, so the next window starts just after it, and the bytes already
/// seen in the class between it and the old window's end are not looked at again.
fn has_run(bytes: &[u8], class: impl Fn(u8) -> bool) -> bool {
    // `bytes[start..seen]` are known to be in the class.
    let (mut start, mut seen) = (0, 0);
    while start + LONG_RUN_BYTES <= bytes.len() {
        let end = start + LONG_RUN_BYTES;
        match (seen.max(start)..end).rev().find(|&i| !class(bytes[i])) {
            None => return true,
            Some(outside) => {
                start = outside + 1;
                seen = end;
            }
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
        // Long runs that ordinary files hold are left to tiktoken: a Markdown rule, a
        // paragraph of Thai (no spaces between words), a line of base64 letters.
        let rule = format!("# Title\n{}\nText.\n", "=".repeat(3000));
        let thai = "ภาษาไทยไม่เว้นวรรคระหว่างคำ".repeat(100);
        let letters = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo".repeat(200);
        for text in [&rule, &thai, &letters] {
            assert!(
                text.len() > 2048 && !may_hold_long_piece(text),
                "{}",
                text.len()
            );
        }
        for run in ["a", " ", "\n", "=", "é", "가"] {
            let text = format!("start {} end", run.repeat(LONG_RUN_BYTES));
            assert!(may_hold_long_piece(&text), "{run:?}");
        }
        // Letters and non-ASCII letters together are one piece too.
        assert!(may_hold_long_piece(&"aé".repeat(LONG_RUN_BYTES)));
        // Control characters are punctuation to the pre-tokenizers; \x0B is space.
        for run in ["\u{1}", "\x0B", "=\u{7f}"] {
            let text = format!("x {} y", run.repeat(LONG_RUN_BYTES));
            assert!(may_hold_long_piece(&text), "{run:?}");
        }
    }

    #[test]
    fn runs_are_found_wherever_they_start_and_only_when_long_enough() {
        // Against the plain byte-by-byte definition, around every window edge.
        let naive = |bytes: &[u8]| {
            let mut run = 0;
            bytes.iter().any(|&b| {
                run = if b.is_ascii_alphabetic() { run + 1 } else { 0 };
                run >= LONG_RUN_BYTES
            })
        };
        for prefix in [
            0,
            1,
            7,
            LONG_RUN_BYTES - 1,
            LONG_RUN_BYTES,
            3 * LONG_RUN_BYTES + 5,
        ] {
            for run in [LONG_RUN_BYTES - 1, LONG_RUN_BYTES, LONG_RUN_BYTES + 1] {
                for gap in [1, 3] {
                    // Short letter runs, then the run being tested, then more.
                    let mut text = "ab1".repeat(prefix / 3) + &"1".repeat(gap);
                    text.push_str(&"q".repeat(run));
                    text.push_str(&"1".repeat(gap));
                    text.push_str(&"abc ".repeat(prefix / 4));
                    let bytes = text.as_bytes();
                    let found = has_run(bytes, |b| b.is_ascii_alphabetic());
                    assert_eq!(found, naive(bytes), "prefix {prefix} run {run} gap {gap}");
                    assert_eq!(found, run >= LONG_RUN_BYTES);
                }
            }
        }
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
