//! Packing files into one text within a token budget.
//!
//! Each file becomes a piece (wrapper + content) counted exactly on its own; pieces
//! are taken in order while they fit. BPE counts are not always additive across a
//! boundary (the end of one piece may merge with the start of the next), so the
//! final text is counted once more and, while it is over the budget, the last
//! piece is dropped. `tokens` is that final count: the answer never exceeds the
//! budget and always equals a fresh count of `text`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Tokenizer;

/// How files are wrapped in the packed text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PackFormat {
    /// `<file path="src/lib.rs">` ... `</file>` (path XML-escaped).
    #[default]
    Xml,
    /// `## src/lib.rs` and a fenced block tagged with the language; the fence is
    /// longer than any backtick run inside the file.
    Markdown,
    /// `=== src/lib.rs ===` before each file.
    Plain,
}

/// The order files are taken in (and appear in the text). Under
/// [`Detail::Auto`] the files the caller named come first whatever the order, and
/// the order ranks the rest; a request without one takes [`PackOrder::Mentioned`]
/// there and [`PackOrder::Given`] otherwise (`LoadRequest::order`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PackOrder {
    /// As given: `paths` in order, each folder or glob's files by path.
    #[default]
    Given,
    /// Fewest tokens first: the most files within the budget.
    Smallest,
    /// By path.
    Path,
    /// The files whose names other files mention most first (`load::rank`): one
    /// more read of every file.
    Mentioned,
    /// Most recently modified first, by the time the opened file's metadata gives;
    /// ties as [`PackOrder::Mentioned`]'s (shallower path, fewer tokens, path).
    Recent,
}

/// How much of each file `load-files` packs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Detail {
    /// The text.
    #[default]
    Full,
    /// Its outline (`crate::outline`: declarations kept, bodies elided); the text
    /// when it has none.
    Outline,
    /// One line: its path and its full text's tokens, no wrapper.
    Path,
    /// Each file at the most detail the budget allows: every file a path line,
    /// then by rank (named files first) outlines, then full texts (`load::auto`).
    Auto,
}

impl Detail {
    pub fn is_full(&self) -> bool {
        *self == Detail::Full
    }
}

/// A file's line at [`Detail::Path`]: its path and its full text's tokens.
pub fn path_line(path: &str, tokens: u64) -> String {
    format!("{path} ({tokens} tokens)\n")
}

/// The mark left where a file was cut by `max_file_tokens`.
pub fn truncation_mark(kept: u64, total: u64) -> String {
    format!("\n[... truncated by load-files: kept the first {kept} of {total} tokens ...]\n")
}

/// One file's piece of the packed text.
pub fn piece(format: PackFormat, path: &str, content: &str) -> String {
    let mut text = String::new();
    push_piece(&mut text, format, path, content);
    text
}

/// Append one file's piece to `text`, without an intermediate copy of `content`
/// (the packed text of a whole tree is the one large buffer `load-files` holds).
pub fn push_piece(text: &mut String, format: PackFormat, path: &str, content: &str) {
    let newline = if content.is_empty() || content.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    match format {
        PackFormat::Xml => {
            text.push_str("<file path=\"");
            text.push_str(&xml_escape(path));
            text.push_str("\">\n");
            text.push_str(content);
            text.push_str(newline);
            text.push_str("</file>\n");
        }
        PackFormat::Markdown => {
            let fence = "`".repeat(longest_backtick_run(content).max(2) + 1);
            for part in ["## ", path, "\n\n", &fence, language(path), "\n", content] {
                text.push_str(part);
            }
            for part in [newline, &fence, "\n\n"] {
                text.push_str(part);
            }
        }
        PackFormat::Plain => {
            for part in ["=== ", path, " ===\n", content, newline, "\n"] {
                text.push_str(part);
            }
        }
    }
}

/// A file's content cut to at most `max_tokens` tokens including the mark, keeping
/// its front at a token boundary; `None` when it already fits.
pub fn cut(tokenizer: Tokenizer, content: &str, tokens: u64, max_tokens: u64) -> Option<String> {
    if tokens <= max_tokens {
        return None;
    }
    let mark_tokens = tokenizer.count(&truncation_mark(max_tokens, tokens)) as u64;
    let room = max_tokens.saturating_sub(mark_tokens) as usize;
    let mut kept = tokenizer.prefix_within(content, room);
    // The mark may merge with the prefix's end differently: shorten until the
    // whole cut content is within the limit.
    loop {
        let kept_tokens = tokenizer.count(kept) as u64;
        let text = format!("{kept}{}", truncation_mark(kept_tokens, tokens));
        if tokenizer.count(&text) as u64 <= max_tokens || kept.is_empty() {
            return Some(text);
        }
        let shorter = kept_tokens.saturating_sub(1) as usize;
        kept = tokenizer.prefix_within(kept, shorter);
    }
}

fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

fn longest_backtick_run(text: &str) -> usize {
    let (mut longest, mut run) = (0, 0);
    for b in text.bytes() {
        if b == b'`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

/// The fence's language tag from the file's extension (or name).
pub fn language(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "dockerfile" => return "dockerfile",
        "makefile" | "gnumakefile" => return "makefile",
        "cmakelists.txt" => return "cmake",
        _ => {}
    }
    let Some((_, ext)) = lower.rsplit_once('.') else {
        return "";
    };
    match ext {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "jsx",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "swift" => "swift",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "cs" => "csharp",
        "rb" => "ruby",
        "php" => "php",
        "scala" => "scala",
        "sh" | "bash" | "zsh" => "bash",
        "ps1" => "powershell",
        "sql" => "sql",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "md" | "markdown" => "markdown",
        "json" => "json",
        "yaml" | "yml" => "yaml",
        "toml" => "toml",
        "xml" => "xml",
        "proto" => "protobuf",
        "lua" => "lua",
        "zig" => "zig",
        "ex" | "exs" => "elixir",
        "hs" => "haskell",
        "ml" | "mli" => "ocaml",
        "r" => "r",
        "dart" => "dart",
        "vue" => "vue",
        "svelte" => "svelte",
        "tf" => "hcl",
        "ini" | "cfg" => "ini",
        "txt" => "text",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_fences_outgrow_backticks_inside() {
        let content = "text\n````\nnested\n````\n";
        let piece = piece(PackFormat::Markdown, "docs/a.md", content);
        assert!(
            piece.starts_with("## docs/a.md\n\n`````markdown\n"),
            "{piece}"
        );
        assert!(piece.ends_with("\n`````\n\n"));
        let plain = piece_for_rust();
        assert!(plain.contains("```rust\nfn main() {}\n```"), "{plain}");
    }

    fn piece_for_rust() -> String {
        piece(PackFormat::Markdown, "src/main.rs", "fn main() {}")
    }

    #[test]
    fn xml_paths_are_escaped_and_content_ends_with_a_newline() {
        assert_eq!(
            piece(PackFormat::Xml, "a&\"b\".rs", "x"),
            "<file path=\"a&amp;&quot;b&quot;.rs\">\nx\n</file>\n"
        );
        assert_eq!(
            piece(PackFormat::Plain, "a.txt", "x\n"),
            "=== a.txt ===\nx\n\n"
        );
    }

    #[test]
    fn a_cut_keeps_the_front_and_stays_within_the_limit() {
        let content = "fn main() { println!(\"hello, world\"); }\n".repeat(200);
        let tokenizer = Tokenizer::O200kBase;
        let tokens = tokenizer.count(&content) as u64;
        for max in [0, 5, 20, 21, 100, tokens - 1] {
            let cut = cut(tokenizer, &content, tokens, max).expect("over the limit");
            assert!(
                tokenizer.count(&cut) as u64 <= max.max(cut_floor(tokens)),
                "{max}"
            );
            assert!(cut.contains("truncated by load-files"));
            let kept = cut.split("\n[... truncated").next().unwrap_or_default();
            assert!(content.starts_with(kept));
        }
        assert_eq!(cut(tokenizer, &content, tokens, tokens), None);
    }

    /// Below the mark's own size only the mark is left.
    fn cut_floor(total: u64) -> u64 {
        Tokenizer::O200kBase.count(&truncation_mark(0, total)) as u64
    }
}
