//! A file's outline: what a model needs to know a file's shape at a fraction of its
//! tokens. Declarations stay as written (signatures, types, struct and enum fields,
//! doc comments, imports); the bodies of functions, methods and closures that span
//! more than one line (and are not most of the file: a file that is one function
//! is outlined inside it) become one marker naming the lines they held, in the
//! language's comment syntax (`{ /* … lines 40-88 … */ }`, Python's
//! `...  # … lines 40-88 …`), so an agent can ask for those lines later. Markdown
//! keeps its headings, and the lines between them become `<!-- … lines a-b … -->`.
//!
//! Line numbers are recoverable: outline lines before the first marker are the
//! file's own; after a marker naming `a-b`, the outline goes on with the rest of
//! line `b`, then line `b + 1`.
//!
//! Pure and bounded: text in, text out, no I/O. A file over [`MAX_OUTLINE_BYTES`],
//! a parse over [`OUTLINE_PARSE_TIMEOUT`] or a cancelled call gets [`NoOutline`],
//! with the reason, never a partial outline. Which files may be read at all (roots,
//! secrets) is decided before any text reaches here (`files::measure`).
//!
//! One concept per module; the leaves (`bounds`, `language`, `elide`) import
//! nothing of the folder, `syntax` (tree-sitter) and `markdown` (pulldown-cmark)
//! use them.

mod bounds;
mod elide;
mod language;
mod markdown;
mod syntax;

pub use bounds::{Bounds, MAX_OUTLINE_BYTES, NoOutline, OUTLINE_PARSE_TIMEOUT};
pub use language::Language;

use crate::scan_control::ScanControl;

/// A file's outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    pub language: Language,
    /// The file with its bodies elided.
    pub text: String,
    /// The line ranges elided (1-based, inclusive), in order: each is one marker.
    pub elided: Vec<(u64, u64)>,
}

/// The outline of `text`, the content of the file at `path` (its extension says
/// the language), within `bounds`.
pub fn outline(
    path: &str,
    text: &str,
    bounds: &Bounds,
    control: &dyn ScanControl,
) -> Result<Outline, NoOutline> {
    let language = Language::of(path).ok_or(NoOutline::NoGrammar)?;
    if text.len() > bounds.max_bytes {
        return Err(NoOutline::TooLarge {
            bytes: text.len(),
            limit: bounds.max_bytes,
        });
    }
    if control.is_cancelled() {
        return Err(NoOutline::Cancelled);
    }
    let cuts = match language {
        Language::Markdown => markdown::cuts(text, bounds, control)?,
        _ => syntax::cuts(language, text, bounds, control)?,
    };
    let (text, elided) = elide::apply(text, &cuts, |a, b| language.marker(a, b));
    Ok(Outline {
        language,
        text,
        elided,
    })
}

/// [`outline`] of a file's bytes, which must be UTF-8.
pub fn outline_bytes(
    path: &str,
    bytes: &[u8],
    bounds: &Bounds,
    control: &dyn ScanControl,
) -> Result<Outline, NoOutline> {
    Language::of(path).ok_or(NoOutline::NoGrammar)?;
    if bytes.len() > bounds.max_bytes {
        return Err(NoOutline::TooLarge {
            bytes: bytes.len(),
            limit: bounds.max_bytes,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| NoOutline::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    outline(path, text, bounds, control)
}
