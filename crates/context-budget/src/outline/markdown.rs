//! Markdown's outline: its headings (read by pulldown-cmark, so a `#` inside a code
//! block is no heading), and the lines between them elided.

use std::time::Instant;

use pulldown_cmark::{Event, Options, Parser, Tag};

use super::bounds::{Bounds, NoOutline};
use super::elide::{Cut, line_of, line_starts};
use crate::scan_control::ScanControl;

/// Events read between two looks at the clock and at cancellation.
const CHECK_EVERY_EVENTS: usize = 1024;

/// The runs of lines between headings (and before the first), in order.
pub(super) fn cuts(
    text: &str,
    bounds: &Bounds,
    control: &dyn ScanControl,
) -> Result<Vec<Cut>, NoOutline> {
    let starts = line_starts(text);
    let started = Instant::now();
    // Each heading's first and last line (a setext heading has two).
    let mut headings: Vec<(u64, u64)> = Vec::new();
    for (n, (event, range)) in Parser::new_ext(text, Options::empty())
        .into_offset_iter()
        .enumerate()
    {
        if n.is_multiple_of(CHECK_EVERY_EVENTS) {
            if control.is_cancelled() {
                return Err(NoOutline::Cancelled);
            }
            if started.elapsed() >= bounds.timeout {
                return Err(NoOutline::TimedOut(bounds.timeout));
            }
        }
        if let Event::Start(Tag::Heading { .. }) = event {
            let last_byte = range.end.saturating_sub(1).max(range.start);
            headings.push((line_of(&starts, range.start), line_of(&starts, last_byte)));
        }
    }
    let lines = starts.len() as u64 - u64::from(text.ends_with('\n') || text.is_empty());
    let mut cuts = Vec::new();
    let mut next = 1;
    for (first, last) in headings.into_iter().chain([(lines + 1, lines + 1)]) {
        if first > next {
            cuts.push(cut_lines(text, &starts, next, first - 1));
        }
        next = next.max(last + 1);
    }
    Ok(cuts)
}

/// Lines `first..=last` of `text`, their last newline left in place.
fn cut_lines(text: &str, starts: &[usize], first: u64, last: u64) -> Cut {
    let from = starts[first as usize - 1];
    let to = starts
        .get(last as usize)
        .map_or(text.len(), |&next| next - 1);
    Cut {
        bytes: from..to,
        lines: (first, last),
    }
}
