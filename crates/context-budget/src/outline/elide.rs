//! The outline's text: the file with chosen byte ranges replaced by one-line
//! markers naming the lines they held. A leaf of `outline/`.

use std::ops::Range;

/// A range of the file to elide: its bytes, and the lines (1-based, inclusive) the
/// marker names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Cut {
    pub(super) bytes: Range<usize>,
    pub(super) lines: (u64, u64),
}

/// `text` with each of `cuts` (in order, not overlapping) replaced by its marker,
/// and the line ranges that were elided. A cut whose bytes are no more than its
/// marker's is left in place: an outline is never longer than its file, byte for
/// byte (and so, JSON-escaped, no longer either: a marker has nothing to escape).
pub(super) fn apply(
    text: &str,
    cuts: &[Cut],
    marker: impl Fn(u64, u64) -> String,
) -> (String, Vec<(u64, u64)>) {
    let mut out = String::with_capacity(text.len() / 2);
    let mut elided = Vec::new();
    let mut at = 0;
    for cut in cuts {
        if cut.bytes.start < at || cut.bytes.end > text.len() || cut.bytes.is_empty() {
            continue;
        }
        let mark = marker(cut.lines.0, cut.lines.1);
        if cut.bytes.len() <= mark.len() {
            continue;
        }
        out.push_str(&text[at..cut.bytes.start]);
        out.push_str(&mark);
        elided.push(cut.lines);
        at = cut.bytes.end;
    }
    out.push_str(&text[at..]);
    (out, elided)
}

/// The byte offset where each line of `text` starts (line 1 at index 0).
pub(super) fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// The 1-based line holding byte `offset`, by [`line_starts`].
pub(super) fn line_of(starts: &[usize], offset: usize) -> u64 {
    starts.partition_point(|&s| s <= offset) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(a: u64, b: u64) -> String {
        format!("/* {a}-{b} */")
    }

    #[test]
    fn cuts_become_markers_and_short_ones_stay() {
        let text = "fn a() {\n    one();\n    two();\n}\nfn b() {x}\n";
        let open = text.find('{').unwrap() + 1;
        let close = text.find("}\n").unwrap();
        let short = text.rfind('x').unwrap();
        let cuts = [
            Cut {
                bytes: open..close,
                lines: (1, 4),
            },
            Cut {
                bytes: short..short + 1,
                lines: (5, 5),
            },
        ];
        let (out, elided) = apply(text, &cuts, marker);
        assert_eq!(out, "fn a() {/* 1-4 */}\nfn b() {x}\n");
        assert_eq!(elided, [(1, 4)]);
    }

    #[test]
    fn lines_are_found_by_offset() {
        let text = "a\nbb\n\nc";
        let starts = line_starts(text);
        assert_eq!(starts, [0, 2, 5, 6]);
        let lines: Vec<u64> = (0..text.len()).map(|i| line_of(&starts, i)).collect();
        assert_eq!(lines, [1, 1, 2, 2, 2, 3, 4]);
    }
}
