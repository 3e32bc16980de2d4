//! Measuring one spec file: tokens, lines, and a breakdown that adds up exactly.
//!
//! The file is tokenized once; every token is attributed to the category of the byte
//! where it starts (see [`Tokenizer::for_each_token`]). So `prose + code + tables +
//! frontmatter == tokens` always, which re-tokenizing each part separately cannot
//! promise (tokens merge across part boundaries).

use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

use super::markdown::{Category, FrontmatterState, classify};
use crate::read::{SkipReason, count_lines, read_text};
use crate::{ClaudeEstimate, Tokenizer};

/// Files larger than this are not read (a spec this size is a mistake, not a spec).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Tokens of a text by the part they belong to. Sums exactly to the total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Breakdown {
    pub prose: u64,
    pub code: u64,
    pub tables: u64,
    pub frontmatter: u64,
}

impl Breakdown {
    pub fn total(&self) -> u64 {
        self.prose + self.code + self.tables + self.frontmatter
    }

    pub fn add(&mut self, other: &Breakdown) {
        self.prose += other.prose;
        self.code += other.code;
        self.tables += other.tables;
        self.frontmatter += other.frontmatter;
    }

    /// Whole tokens per category from weights in tenths, rounded so that the parts
    /// sum to the rounded-up total (largest remainders get the extra tokens).
    fn from_tenths(tenths: [u64; 4]) -> (u64, Breakdown) {
        let total = ClaudeEstimate::tokens_from_tenths(tenths.iter().sum()) as u64;
        let mut whole = tenths.map(|t| t / 10);
        let mut missing = total - whole.iter().sum::<u64>();
        let mut by_remainder: Vec<usize> =
            (0..4).filter(|&i| !tenths[i].is_multiple_of(10)).collect();
        by_remainder.sort_by_key(|&i| std::cmp::Reverse(tenths[i] % 10));
        for i in by_remainder {
            if missing == 0 {
                break;
            }
            whole[i] += 1;
            missing -= 1;
        }
        let [prose, code, tables, frontmatter] = whole;
        (
            total,
            Breakdown {
                prose,
                code,
                tables,
                frontmatter,
            },
        )
    }
}

/// What one Markdown text measures.
#[derive(Debug, Clone, PartialEq)]
pub struct TextMeasure {
    pub tokens: u64,
    pub lines: u64,
    pub bytes: u64,
    pub breakdown: Breakdown,
    pub frontmatter: FrontmatterState,
    pub heading: Option<String>,
}

impl TextMeasure {
    /// Title and status of a spec's main file, noting frontmatter problems.
    pub fn title_and_status(
        &self,
        path: &str,
        notes: &mut Vec<String>,
    ) -> (Option<String>, Option<String>) {
        match &self.frontmatter {
            FrontmatterState::Valid(fm) => (
                fm.title.clone().or_else(|| self.heading.clone()),
                fm.status.clone(),
            ),
            FrontmatterState::Absent => {
                notes.push(format!("{path}: no frontmatter"));
                (self.heading.clone(), None)
            }
            FrontmatterState::Invalid(message) => {
                notes.push(format!("{path}: {message}"));
                (self.heading.clone(), None)
            }
        }
    }
}

/// A skip reason in the words spec answers use: they predate the file tools' and
/// are part of the spec tools' output, so the two that differ keep theirs.
pub struct SpecWords<'a>(pub &'a SkipReason);

impl std::fmt::Display for SpecWords<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            SkipReason::Binary => write!(f, "binary file (NUL bytes)"),
            SkipReason::TooLarge { bytes, limit } => {
                write!(
                    f,
                    "{bytes} bytes, over the {limit}-byte limit for one spec file"
                )
            }
            reason => reason.fmt(f),
        }
    }
}

/// Measure a Markdown text with `tokenizer`.
pub fn measure_text(text: &str, tokenizer: Tokenizer) -> TextMeasure {
    // Never cancelled, so always measured.
    measure_text_until(text, tokenizer, &|| false).unwrap_or_else(|| unreachable!())
}

/// [`measure_text`], giving up (`None`) soon after `cancelled` turns true: a large
/// file is tokenized in parts that check it.
pub fn measure_text_until(
    text: &str,
    tokenizer: Tokenizer,
    cancelled: &dyn Fn() -> bool,
) -> Option<TextMeasure> {
    let classified = classify(text);
    let mut cursor = classified.cursor();
    let mut tenths = [0u64; 4];
    tokenizer.for_each_token_until(text, cancelled, |start, weight| {
        let slot = match cursor.category_at(start) {
            Category::Prose => 0,
            Category::Code => 1,
            Category::Tables => 2,
            Category::Frontmatter => 3,
        };
        tenths[slot] += weight;
    })?;
    let (tokens, breakdown) = Breakdown::from_tenths(tenths);
    Some(TextMeasure {
        tokens,
        lines: count_lines(text),
        bytes: text.len() as u64,
        breakdown,
        frontmatter: classified.frontmatter,
        heading: classified.heading,
    })
}

/// Read and measure a file; binary, oversize, non-UTF-8 and unreadable files are
/// issues, not panics or whole-listing failures.
pub fn measure_file(path: &Path, tokenizer: Tokenizer) -> Result<TextMeasure, SkipReason> {
    measure_file_until(path, tokenizer, &|| false)
        .unwrap_or_else(|| Err(SkipReason::Unreadable("cancelled".into())))
}

/// [`measure_file`], giving up (`None`) soon after `cancelled` turns true, also in
/// the middle of a large file.
///
/// `path` must be canonical (as the layout lists files): it is opened without
/// following a final symlink or blocking on a FIFO, and the opened handle must be a
/// regular file still at `path` (see [`crate::safe_open`]).
pub fn measure_file_until(
    path: &Path,
    tokenizer: Tokenizer,
    cancelled: &dyn Fn() -> bool,
) -> Option<Result<TextMeasure, SkipReason>> {
    // Opened race-free; what may be read is then the shared core's to decide.
    let read = crate::safe_open::open_regular(path)
        .map_err(|e| SkipReason::Unreadable(e.to_string()))
        .and_then(|(file, metadata)| read_text(file, metadata.len(), MAX_FILE_BYTES));
    let text = match read {
        Ok(text) => text,
        Err(issue) => return Some(Err(issue)),
    };
    measure_text_until(&text, tokenizer, cancelled).map(Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "---\nstatus: planned\n---\n# Title\n\nSome prose about the design.\n\n```rust\nfn main() { println!(\"hi\"); }\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n대한민국의 수도는 서울이다.\n";

    #[test]
    fn breakdown_adds_up_exactly_for_every_tokenizer() {
        for tokenizer in [
            Tokenizer::Cl100kBase,
            Tokenizer::O200kBase,
            Tokenizer::ClaudeEstimate,
        ] {
            let m = measure_text(SPEC, tokenizer);
            assert_eq!(m.breakdown.total(), m.tokens, "{tokenizer:?}");
            assert_eq!(m.tokens, tokenizer.count(SPEC) as u64, "{tokenizer:?}");
            assert!(m.breakdown.prose > 0 && m.breakdown.code > 0);
            assert!(m.breakdown.tables > 0 && m.breakdown.frontmatter > 0);
        }
    }

    #[test]
    fn breakdown_sums_on_awkward_texts() {
        let texts = [
            String::new(),
            "```\nunclosed fence".to_string(),
            "---\n---\n".to_string(),
            "    indented\n".repeat(50),
            "| x |\n|---|\n".repeat(30) + "🦊🦊🦊 한국어",
            "\u{feff}---\r\ntitle: x\r\n---\r\n~~~\r\ncode\r\n~~~\r\n".to_string(),
        ];
        for text in &texts {
            for tokenizer in [Tokenizer::Cl100kBase, Tokenizer::ClaudeEstimate] {
                let m = measure_text(text, tokenizer);
                assert_eq!(m.breakdown.total(), m.tokens, "{text:?} {tokenizer:?}");
                assert_eq!(m.tokens, tokenizer.count(text) as u64);
            }
        }
    }

    #[test]
    fn rounding_gives_extra_tokens_to_the_largest_remainders() {
        // 1.1 + 1.9 + 0 + 0.3 = 3.3 -> 4 tokens: 1 + 1 + 0 + 0, then +1 to the
        // largest remainder (code's .9), +1 to prose's .1 only if still short.
        let (total, b) = Breakdown::from_tenths([11, 19, 0, 3]);
        assert_eq!(total, 4);
        assert_eq!(b.total(), 4);
        assert_eq!(b.code, 2);
        assert_eq!(
            Breakdown::from_tenths([20, 30, 0, 0]),
            (
                5,
                Breakdown {
                    prose: 2,
                    code: 3,
                    tables: 0,
                    frontmatter: 0
                }
            )
        );
    }

    #[test]
    fn spec_answers_keep_their_own_words_for_binary_and_oversize_files() {
        let words = |reason: SkipReason| SpecWords(&reason).to_string();
        assert_eq!(words(SkipReason::Binary), "binary file (NUL bytes)");
        assert_eq!(
            words(SkipReason::TooLarge { bytes: 9, limit: 4 }),
            "9 bytes, over the 4-byte limit for one spec file"
        );
        assert_eq!(
            words(SkipReason::NotUtf8 { offset: 3 }),
            "not valid UTF-8 (first bad byte at offset 3)"
        );
        assert_eq!(
            words(SkipReason::Unreadable("gone".into())),
            "cannot read: gone"
        );
    }

    #[test]
    fn binary_and_invalid_utf8_files_are_issues() {
        let dir = std::env::temp_dir().join(format!("cb-measure-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let binary = dir.join("image.md");
        std::fs::write(&binary, b"\x89PNG\r\n\x1a\n\0\0\0IHDR").expect("write");
        assert_eq!(
            measure_file(&binary, Tokenizer::Cl100kBase),
            Err(SkipReason::Binary)
        );
        let latin1 = dir.join("latin1.md");
        std::fs::write(&latin1, b"caf\xe9 au lait").expect("write");
        assert_eq!(
            measure_file(&latin1, Tokenizer::Cl100kBase),
            Err(SkipReason::NotUtf8 { offset: 3 })
        );
        let missing = measure_file(&dir.join("nope.md"), Tokenizer::Cl100kBase);
        assert!(matches!(missing, Err(SkipReason::Unreadable(_))));
        let good = dir.join("good.md");
        std::fs::write(&good, SPEC).expect("write");
        assert_eq!(
            measure_file(&good, Tokenizer::Cl100kBase).map(|m| m.tokens),
            Ok(Tokenizer::Cl100kBase.count(SPEC) as u64)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
