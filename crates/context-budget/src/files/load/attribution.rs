//! One count of the packed text for every piece's share of it: each token goes to
//! the piece it starts in, so the shares add up to the count. Large texts are
//! counted in chunks on all cores, cut where the tokenizer's counts add up.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::Tokenizer;
use crate::scan_control::ScanControl;

/// The exact count of the packed `text`, and each piece's share: every token is
/// attributed to the piece it starts in, so the shares add up to the count (for
/// the Claude estimate each share is rounded up on its own).
///
/// A large text is tokenized in chunks of about [`COUNT_CHUNK_BYTES`] on all cores,
/// cut only where the tokenizer says its parts add up ([`Tokenizer::additive_cut`]),
/// so the chunks' tokens are exactly the whole text's. `None` when `control` says
/// the call was cancelled (looked at before each chunk).
pub(super) fn count_pieces(
    tokenizer: Tokenizer,
    text: &str,
    starts: &[usize],
    control: &dyn ScanControl,
) -> Option<(u64, Vec<u64>)> {
    let threads = crate::fan_out::cores();
    let parts = threads.max(text.len() / COUNT_CHUNK_BYTES);
    let chunks = chunk_starts(tokenizer, text, parts);
    let cancelled = AtomicBool::new(false);
    // Tokens of `text[from..to]` to the pieces they start in.
    let encode_into = |tenths: &mut [u64], from: usize, to: usize| {
        // The piece holding `from`: the last piece starting at or before it.
        let mut piece = starts.partition_point(|&s| s <= from).saturating_sub(1);
        tokenizer.for_each_token(&text[from..to], |start, weight| {
            let start = from + start;
            while piece + 1 < starts.len() && starts[piece + 1] <= start {
                piece += 1;
            }
            if let Some(slot) = tenths.get_mut(piece) {
                *slot += weight;
            }
        });
    };
    // Only the few bytes around where a piece starts need each token's position:
    // from the last cut before that start to the first cut after it, the text is
    // encoded and its tokens attributed; between two such spans it lies inside one
    // piece and is only counted (counting is about twice as fast as encoding).
    let attribute = |from: usize, to: usize| -> Vec<u64> {
        let mut tenths = vec![0u64; starts.len()];
        let mut at = from;
        while at < to {
            let piece = starts.partition_point(|&s| s <= at).saturating_sub(1);
            let Some(boundary) = starts.get(piece + 1).copied().filter(|&b| b < to) else {
                if let Some(slot) = tenths.get_mut(piece) {
                    *slot += tokenizer.tenths_here(&text[at..to]);
                }
                break;
            };
            if let Some(cut) = tokenizer.additive_cut_before(text, at, boundary) {
                if let Some(slot) = tenths.get_mut(piece) {
                    *slot += tokenizer.tenths_here(&text[at..cut]);
                }
                at = cut;
            }
            let end = tokenizer
                .additive_cut(text, boundary + 1)
                .filter(|&cut| cut <= to)
                .unwrap_or(to);
            encode_into(&mut tenths, at, end);
            at = end;
        }
        tenths
    };
    let ends: Vec<usize> = chunks.iter().skip(1).copied().chain([text.len()]).collect();
    let spans: Vec<(usize, usize)> = chunks.iter().copied().zip(ends).collect();
    let parts = crate::fan_out::map(spans.iter().copied(), threads, |(from, to)| {
        if control.is_cancelled() {
            cancelled.store(true, Ordering::Relaxed);
            return None;
        }
        Some(attribute(from, to))
    });
    if cancelled.load(Ordering::Relaxed) {
        return None;
    }
    // A panicking worker is a bug; recount its chunk here rather than lose it.
    let parts = parts
        .into_iter()
        .zip(&spans)
        .map(|(part, &(from, to))| part.unwrap_or_else(|| attribute(from, to)));
    let mut tenths = vec![0u64; starts.len()];
    for part in parts {
        for (sum, t) in tenths.iter_mut().zip(part) {
            *sum += t;
        }
    }
    let total = crate::ClaudeEstimate::tokens_from_tenths(tenths.iter().sum()) as u64;
    let shares = tenths
        .into_iter()
        .map(|t| crate::ClaudeEstimate::tokens_from_tenths(t) as u64)
        .collect();
    Some((total, shares))
}

/// About how much of the packed text is counted between two looks at cancellation.
pub(super) const COUNT_CHUNK_BYTES: usize = 1 << 20;

/// Where to cut `text` into up to `parts` chunks of about equal size, at the
/// tokenizer's [`Tokenizer::additive_cut`]s (none for a family that has none).
/// Texts under [`crate::PARALLEL_MIN_BYTES`] are one chunk. Always starts with 0.
fn chunk_starts(tokenizer: Tokenizer, text: &str, parts: usize) -> Vec<usize> {
    let mut starts = vec![0];
    if text.len() < crate::PARALLEL_MIN_BYTES || parts < 2 {
        return starts;
    }
    for i in 1..parts {
        let from = (text.len() * i / parts).max(starts.last().copied().unwrap_or(0) + 1);
        if let Some(cut) = tokenizer.additive_cut(text, from) {
            starts.push(cut);
        }
    }
    starts.dedup();
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::pack::{PackFormat, piece};
    use crate::scan_control::Unobserved;

    /// Pieces of real code, enough of them that the text is counted in chunks; and
    /// where each piece starts.
    fn packed(format: PackFormat) -> (String, Vec<usize>) {
        let sources = [
            // load.rs, as it was before it became this folder.
            concat!(
                include_str!("mod.rs"),
                include_str!("budget.rs"),
                include_str!("packing.rs"),
                include_str!("answer.rs"),
                include_str!("attribution.rs"),
            ),
            include_str!("../walk.rs"),
            include_str!("../pack.rs"),
            "대한민국의 수도는 서울이다. 🦊 emoji and `code`",
            // No cut inside at all, and pieces too short to hold one.
            "{}[]();\n=>+-*/\n",
            "x",
            "",
        ];
        let (mut text, mut starts) = (String::new(), Vec::new());
        for round in 0..12 {
            for (i, source) in sources.iter().enumerate() {
                starts.push(text.len());
                text.push_str(&piece(format, &format!("f{round}-{i}.rs"), source));
            }
        }
        (text, starts)
    }

    #[test]
    fn chunked_counts_equal_the_whole_and_shares_add_up() {
        for format in [PackFormat::Xml, PackFormat::Markdown, PackFormat::Plain] {
            let (text, starts) = packed(format);
            assert!(text.len() > 2 * crate::PARALLEL_MIN_BYTES);
            assert!(
                chunk_starts(Tokenizer::O200kBase, &text, 4).len() > 1,
                "the text is cut"
            );
            for tokenizer in [
                Tokenizer::Cl100kBase,
                Tokenizer::O200kBase,
                Tokenizer::Gemma3,
            ] {
                let (total, shares) =
                    count_pieces(tokenizer, &text, &starts, &Unobserved).expect("not cancelled");
                // count_here: the shared helper thread stays free for the parallel
                // module's own tests running beside this one.
                assert_eq!(total, tokenizer.count_here(&text) as u64, "{tokenizer:?}");
                assert_eq!(shares.iter().sum::<u64>(), total);
                assert_eq!(
                    shares,
                    shares_by_encoding(tokenizer, &text, &starts),
                    "{tokenizer:?}"
                );
            }
            let (total, shares) =
                count_pieces(Tokenizer::ClaudeEstimate, &text, &starts, &Unobserved)
                    .expect("not cancelled");
            assert_eq!(total, Tokenizer::ClaudeEstimate.count(&text) as u64);
            // Each share is rounded up on its own.
            assert!(shares.iter().sum::<u64>() >= total);
            assert_eq!(
                shares,
                shares_by_encoding(Tokenizer::ClaudeEstimate, &text, &starts)
            );
        }
    }

    /// Each piece's share the plain way: every token of the whole text, by position.
    fn shares_by_encoding(tokenizer: Tokenizer, text: &str, starts: &[usize]) -> Vec<u64> {
        let mut tenths = vec![0u64; starts.len()];
        tokenizer.for_each_token(text, |start, weight| {
            let piece = starts.partition_point(|&s| s <= start).saturating_sub(1);
            tenths[piece] += weight;
        });
        tenths
            .into_iter()
            .map(|t| crate::ClaudeEstimate::tokens_from_tenths(t) as u64)
            .collect()
    }

    #[test]
    fn chunks_start_at_additive_cuts() {
        let (text, _) = packed(PackFormat::Xml);
        // The answer as the model receives it, JSON-escaped, has no newline: it is
        // cut between words, and the chunks still add up.
        let escaped = serde_json::to_string(&text).unwrap();
        for text in [&text, &escaped] {
            let starts = chunk_starts(Tokenizer::O200kBase, text, 8);
            assert!(starts.len() > 4, "{}", starts.len());
            assert_eq!(starts[0], 0);
            let bytes = text.as_bytes();
            for &start in &starts[1..] {
                assert!(
                    (bytes[start - 1] == b'\n' && bytes[start].is_ascii_alphabetic())
                        || (bytes[start] == b' '
                            && bytes[start - 1].is_ascii_alphabetic()
                            && bytes[start + 1].is_ascii_alphabetic())
                );
            }
            assert!(starts.windows(2).all(|w| w[0] < w[1]));
            let ends = starts[1..].iter().copied().chain([text.len()]);
            let sum: usize = starts
                .iter()
                .zip(ends)
                .map(|(&a, b)| Tokenizer::O200kBase.count(&text[a..b]))
                .sum();
            assert_eq!(sum, Tokenizer::O200kBase.count(text));
        }
        assert_eq!(chunk_starts(Tokenizer::O200kBase, "short\ntext", 8), [0]);
    }
}
