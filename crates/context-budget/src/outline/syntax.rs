//! Source code's outline: the file parsed with its tree-sitter grammar, within the
//! time bound and stopping when the call is cancelled, and the bodies of its
//! functions, methods and closures chosen for eliding.

use std::ops::ControlFlow;
use std::time::Instant;

use tree_sitter::{Node, ParseOptions, ParseState, Parser};

use super::bounds::{Bounds, NoOutline};
use super::elide::Cut;
use super::language::{BodyStyle, Language};
use crate::scan_control::ScanControl;

/// Nodes walked between two looks at the clock and at cancellation.
const CHECK_EVERY_NODES: usize = 4096;

/// The parts of `text` (source in `language`) to elide, in order: each function's
/// body that spans more than one line and is at most half of the file. The walk
/// never descends into an elided body, so the cuts do not overlap.
pub(super) fn cuts(
    language: Language,
    text: &str,
    bounds: &Bounds,
    control: &dyn ScanControl,
) -> Result<Vec<Cut>, NoOutline> {
    let grammar = language.grammar().ok_or(NoOutline::NoGrammar)?;
    let mut parser = Parser::new();
    // A grammar built for another tree-sitter ABI: no outline rather than a panic.
    parser
        .set_language(&grammar)
        .map_err(|_| NoOutline::NoGrammar)?;
    let started = Instant::now();
    let out_of_time = || started.elapsed() >= bounds.timeout;
    let mut stopped = None;
    let mut progress = |_: &ParseState| {
        if control.is_cancelled() {
            stopped = Some(NoOutline::Cancelled);
            return ControlFlow::Break(());
        }
        if out_of_time() {
            stopped = Some(NoOutline::TimedOut(bounds.timeout));
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    };
    let bytes = text.as_bytes();
    let tree = parser.parse_with_options(
        &mut |offset, _| bytes.get(offset..).unwrap_or_default(),
        None,
        Some(ParseOptions::new().progress_callback(&mut progress)),
    );
    let Some(tree) = tree else {
        return Err(stopped.unwrap_or(NoOutline::TimedOut(bounds.timeout)));
    };
    let kinds = language.function_kinds();
    let mut cuts = Vec::new();
    let mut cursor = tree.walk();
    let mut walked = 0usize;
    loop {
        walked += 1;
        if walked.is_multiple_of(CHECK_EVERY_NODES) {
            if control.is_cancelled() {
                return Err(NoOutline::Cancelled);
            }
            if out_of_time() {
                return Err(NoOutline::TimedOut(bounds.timeout));
            }
        }
        let node = cursor.node();
        let cut = kinds
            .contains(&node.kind())
            .then(|| node.child_by_field_name("body"))
            .flatten()
            .and_then(|body| body_cut(language, body, bytes))
            // A body that is most of the file (`module.exports = function () {…}`,
            // an IIFE, a `main` holding everything) is the file: its own
            // functions are elided instead, or the outline would say nothing.
            .filter(|cut| cut.bytes.len() <= bytes.len() / 2);
        let elided = cut.is_some();
        cuts.extend(cut);
        if !elided && cursor.goto_first_child() {
            continue;
        }
        // Next: a sibling, or the sibling of the nearest ancestor that has one.
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Ok(cuts);
            }
        }
    }
}

/// What of a function's `body` is elided, if anything: the inside of its braces
/// (the lines from `{` to `}`), or in Python the statements after its docstring;
/// nothing when it fits on one line.
fn body_cut(language: Language, body: Node<'_>, bytes: &[u8]) -> Option<Cut> {
    let (start, end) = (body.start_position(), body.end_position());
    if start.row == end.row {
        return None;
    }
    match language.body_style() {
        BodyStyle::Braces => {
            // The closing brace: the last child but comments, which a grammar may
            // count into the block (`} // end` in TypeScript).
            let close = (0..body.child_count() as u32)
                .rev()
                .filter_map(|i| body.child(i))
                .find(|child| !child.is_extra())?;
            let open = body.start_byte();
            let braced =
                bytes.get(open) == Some(&b'{') && close.kind() == "}" && close.start_byte() > open;
            braced.then(|| Cut {
                bytes: open + 1..close.start_byte(),
                lines: (start.row as u64 + 1, close.start_position().row as u64 + 1),
            })
        }
        BodyStyle::Indented => {
            let mut statements = (0..body.named_child_count() as u32)
                .filter_map(|i| body.named_child(i))
                .filter(|n| n.kind() != "comment");
            let first = statements.next()?;
            let elided_from = if is_docstring(first) {
                statements.next()?
            } else {
                first
            };
            // To the end of the block's last line: only a comment can follow its
            // last statement there, and the marker's own comment would swallow it.
            let last = body.named_child(body.named_child_count().checked_sub(1)? as u32)?;
            let (mut end, mut row) = (last.end_byte(), last.end_position().row);
            if last.end_position().column == 0 && end > last.start_byte() {
                // The node ends after its newline: its line is the one before.
                end -= 1;
                row = row.saturating_sub(1);
            }
            let end = bytes[end..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |at| end + at);
            let end = match end > 0 && bytes[end - 1] == b'\r' {
                true => end - 1,
                false => end,
            };
            (end > elided_from.start_byte()).then(|| Cut {
                bytes: elided_from.start_byte()..end,
                lines: (elided_from.start_position().row as u64 + 1, row as u64 + 1),
            })
        }
    }
}

/// A Python statement that is a lone string: the docstring, when it comes first.
fn is_docstring(statement: Node<'_>) -> bool {
    statement.kind() == "expression_statement"
        && statement.named_child_count() == 1
        && statement
            .named_child(0)
            .is_some_and(|s| s.kind() == "string")
}
