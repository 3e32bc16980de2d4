//! Counting a large text on two cores.
//!
//! A multi-megabyte paste is counted in two halves at once: the caller counts the
//! first, one long-lived helper thread the second. Long-lived, because the tokenizer
//! keeps a per-thread cache of piece counts that a fresh thread would start without
//! (a fresh thread per call was measured no faster than one thread). The helper is
//! used only when idle: under concurrent load every caller counts on its own thread,
//! so nobody queues behind it.
//!
//! The halves are cut near the middle where the tokenizer allows
//! ([`Tokenizer::additive_cut`]), so their counts add up to the whole's; a family
//! with no cut is counted on one thread.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use crate::Tokenizer;

/// Below this size a text is counted on the calling thread alone.
pub const PARALLEL_MIN_BYTES: usize = 256 * 1024;

struct Job {
    tokenizer: Tokenizer,
    text: String,
    reply: mpsc::Sender<usize>,
}

struct Helper {
    jobs: mpsc::Sender<Job>,
    busy: AtomicBool,
}

/// The helper thread, started on first use; `None` on a single core.
fn helper() -> Option<&'static Helper> {
    static HELPER: OnceLock<Option<Helper>> = OnceLock::new();
    HELPER
        .get_or_init(|| {
            if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
                return None;
            }
            let (jobs, queue) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("count-helper".into())
                .spawn(move || {
                    for job in queue {
                        let count = job.tokenizer.count_here(&job.text);
                        if let Some(helper) = HELPER.get().and_then(Option::as_ref) {
                            helper.busy.store(false, Ordering::Release);
                        }
                        let _ = job.reply.send(count);
                    }
                })
                .ok()?;
            Some(Helper {
                jobs,
                busy: AtomicBool::new(false),
            })
        })
        .as_ref()
}

/// The count of `text` made in two halves on two cores, or `None` when the text is
/// small, the helper is busy or absent, or no cut point exists (count it inline).
pub fn count_in_halves(tokenizer: Tokenizer, text: &str) -> Option<usize> {
    if text.len() < PARALLEL_MIN_BYTES {
        return None;
    }
    let cut = tokenizer.additive_cut(text, text.len() / 2)?;
    let helper = helper()?;
    if helper.busy.swap(true, Ordering::AcqRel) {
        return None;
    }
    let (first, second) = text.split_at(cut);
    let (reply, answer) = mpsc::channel();
    let job = Job {
        tokenizer,
        text: second.to_owned(),
        reply,
    };
    if helper.jobs.send(job).is_err() {
        helper.busy.store(false, Ordering::Release);
        return None;
    }
    let first = tokenizer.count_here(first);
    // If the helper died, count its half here: slower, never wrong.
    let second = answer
        .recv()
        .unwrap_or_else(|_| tokenizer.count_here(second));
    Some(first + second)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_add_up_to_the_whole() {
        let paragraph = "Plans change.\nSo do budgets: 42 tokens, \"quoted\" words.\n\n  한국어 문장.\nIndented?\n";
        let text = paragraph.repeat(PARALLEL_MIN_BYTES / paragraph.len() + 10);
        let cut = Tokenizer::Cl100kBase
            .additive_cut(&text, text.len() / 2)
            .expect("a cut point");
        // After a newline before a letter, or at the space of `x y`.
        let bytes = text.as_bytes();
        assert!(
            (bytes[cut - 1] == b'\n' && bytes[cut].is_ascii_alphabetic())
                || (bytes[cut] == b' '
                    && bytes[cut - 1].is_ascii_alphabetic()
                    && bytes[cut + 1].is_ascii_alphabetic()),
            "{cut}"
        );
        assert!(text.is_char_boundary(cut));
        for tokenizer in Tokenizer::EXACT {
            let whole = tokenizer.count_here(&text);
            let (a, b) = text.split_at(cut);
            assert_eq!(tokenizer.count_here(a) + tokenizer.count_here(b), whole);
            assert_eq!(
                count_in_halves(tokenizer, &text),
                Some(whole),
                "{tokenizer:?}"
            );
            assert_eq!(tokenizer.count(&text), whole);
        }
    }

    #[test]
    fn small_texts_and_texts_without_a_cut_are_counted_inline() {
        assert_eq!(count_in_halves(Tokenizer::Cl100kBase, "short\ntext"), None);
        // No newline before a letter, no letter-space-letter.
        let one_line = "word, ".repeat(PARALLEL_MIN_BYTES / 6 + 1);
        assert_eq!(count_in_halves(Tokenizer::Cl100kBase, &one_line), None);
        assert_eq!(
            Tokenizer::Cl100kBase.count(&one_line),
            Tokenizer::Cl100kBase.count_here(&one_line)
        );
    }
}
