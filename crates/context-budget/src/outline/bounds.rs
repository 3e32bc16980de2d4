//! What bounds one file's outline (bytes parsed, time spent, cancellation), and
//! [`NoOutline`], why a file has none. A leaf of `outline/`.

use std::time::Duration;

/// Largest text parsed for an outline. Real source files are far smaller; above it
/// a file is generated or minified (a grammar's own `parser.c` is megabytes), and
/// its outline would not be worth the parse. Such a file is `full` or `path`.
pub const MAX_OUTLINE_BYTES: usize = 1024 * 1024;

/// Longest one file's parse may take before it is given up (tree-sitter's progress
/// callback stops it): a grammar's pathological case or a hostile file costs at most
/// this much of a core.
pub const OUTLINE_PARSE_TIMEOUT: Duration = Duration::from_millis(500);

/// The bounds of one outline: [`MAX_OUTLINE_BYTES`] and [`OUTLINE_PARSE_TIMEOUT`]
/// unless a caller (a test) sets others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub max_bytes: usize,
    pub timeout: Duration,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_bytes: MAX_OUTLINE_BYTES,
            timeout: OUTLINE_PARSE_TIMEOUT,
        }
    }
}

/// Why a file has no outline; a caller then shows it `full` or as a `path`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoOutline {
    #[error(
        "no outline for this kind of file (outlines cover Rust, Python, JavaScript, TypeScript, TSX, Go, Java, C, C++ and Markdown)"
    )]
    NoGrammar,
    #[error("{bytes} bytes, over the {limit}-byte limit for an outline")]
    TooLarge { bytes: usize, limit: usize },
    #[error("not valid UTF-8 (first bad byte at offset {offset})")]
    NotUtf8 { offset: usize },
    #[error("parsing took over {} ms; given up", .0.as_millis())]
    TimedOut(Duration),
    #[error("the call was cancelled")]
    Cancelled,
}

impl NoOutline {
    /// The stable, machine-matchable name of the reason.
    pub fn code(&self) -> &'static str {
        match self {
            NoOutline::NoGrammar => "no_grammar",
            NoOutline::TooLarge { .. } => "too_large",
            NoOutline::NotUtf8 { .. } => "not_utf8",
            NoOutline::TimedOut(_) => "timed_out",
            NoOutline::Cancelled => "cancelled",
        }
    }
}
