//! The texts the counting rows run on, written to target/bench. All are real text
//! already on the machine, or generated deterministically: nothing is downloaded.
//!
//! - English prose: the prose of the Markdown docs of the crates in cargo's registry
//!   (this build downloaded them): paragraphs and list items, without code blocks,
//!   tables, HTML or headings;
//! - Rust code: the .rs files of the same crates (files over 100 KB, mostly generated
//!   bindings, skipped);
//! - Korean: the translations in Debian's gettext catalogs (/usr/share/locale/ko);
//! - chat-sized messages: the English text cut into ~256-byte messages, each counted
//!   on its own (the per-call overhead of many small counts);
//! - worst cases: 1 MiB of one repeated letter (one giant pre-token), 1 MiB of base64
//!   of pseudo-random bytes (no merges to find).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

pub struct Corpus {
    /// Row name, no spaces.
    pub name: &'static str,
    pub path: PathBuf,
    /// Count as messages of about this many bytes instead of one text.
    pub piece_bytes: Option<usize>,
    pub source: &'static str,
    pub bytes: usize,
}

pub struct Corpora {
    pub list: Vec<Corpus>,
    /// The English text: also what the MCP clients send, in ~1 KB windows.
    pub english: PathBuf,
}

impl Corpora {
    /// `NAME=FILE[@PIECE]` arguments for count_throughput.
    pub fn specs(&self) -> Vec<String> {
        self.list
            .iter()
            .map(|c| match c.piece_bytes {
                Some(n) => format!("{}={}@{n}", c.name, c.path.display()),
                None => format!("{}={}", c.name, c.path.display()),
            })
            .collect()
    }

    pub fn describe(&self) -> String {
        self.list
            .iter()
            .map(|c| format!("- `{}`: {} ({} bytes)\n", c.name, c.source, c.bytes))
            .collect()
    }
}

pub fn build(out_dir: &Path, quick: bool) -> anyhow::Result<Corpora> {
    let size = if quick { 256 << 10 } else { 2 << 20 };
    let small = if quick { 64 << 10 } else { 1 << 20 };
    let mut list = Vec::new();
    let mut add = |name: &'static str, text: &str, piece, source| -> anyhow::Result<PathBuf> {
        let path = out_dir.join(format!("{name}.txt"));
        std::fs::write(&path, text)?;
        list.push(Corpus {
            name,
            path: path.clone(),
            piece_bytes: piece,
            source,
            bytes: text.len(),
        });
        Ok(path)
    };
    let registry = cargo_home()?.join("registry/src");
    let markdown = concatenated(&registry, "md", size * 3, u64::MAX)?;
    let english_text = cut(&markdown_prose(&markdown), size).to_string();
    let english = add(
        "english",
        &english_text,
        None,
        "English prose: the paragraphs and list items of the Markdown docs of the crates in cargo's registry",
    )?;
    let rust = concatenated(&registry, "rs", size, 100_000)?;
    add(
        "rust-code",
        &rust,
        None,
        "Rust code: .rs files of the crates in cargo's registry",
    )?;
    match korean(size) {
        Some(text) => {
            add(
                "korean",
                &text,
                None,
                "Korean: translations in Debian's gettext catalogs",
            )?;
        }
        None => {
            eprintln!("no Korean gettext catalogs under /usr/share/locale/ko: Korean rows skipped")
        }
    }
    add(
        "chat-256B",
        cut(&english_text, small),
        Some(256),
        "chat-sized messages: the English text as ~256-byte messages, each counted alone",
    )?;
    add(
        "one-letter",
        &"a".repeat(small),
        None,
        "worst case: one letter repeated (a single giant pre-token)",
    )?;
    add(
        "base64",
        &base64_noise(small),
        None,
        "worst case: base64 of pseudo-random bytes",
    )?;
    Ok(Corpora { list, english })
}

fn cargo_home() -> anyhow::Result<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .context("neither CARGO_HOME nor HOME is set")
}

/// Files with this extension under `dir`, in path order, until `limit` bytes.
fn concatenated(
    dir: &Path,
    extension: &str,
    limit: usize,
    max_file: u64,
) -> anyhow::Result<String> {
    let mut files = Vec::new();
    collect_files(
        dir,
        &mut |p| {
            p.extension().is_some_and(|e| e == extension)
                && std::fs::metadata(p).is_ok_and(|m| m.len() <= max_file)
        },
        &mut files,
    );
    files.sort();
    let mut text = String::new();
    for file in files {
        if text.len() >= limit {
            break;
        }
        if let Ok(content) = std::fs::read_to_string(&file) {
            text.push_str(&content);
            text.push('\n');
        }
    }
    if text.len() < limit.min(100_000) {
        bail!(
            "found only {} bytes of .{extension} files under {}; build the workspace first",
            text.len(),
            dir.display()
        );
    }
    Ok(cut(&text, limit).to_string())
}

/// The prose of Markdown text: paragraphs and list items. Fenced and indented code,
/// tables, HTML, headings, images and link definitions are dropped (a line filter is
/// enough to build a corpus; the product classifies with a real parser).
fn markdown_prose(markdown: &str) -> String {
    let mut prose = String::new();
    let mut in_fence = false;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        let not_prose = in_fence
            || line.starts_with("    ")
            || line.starts_with('\t')
            || ['|', '<', '#', '!'].iter().any(|&c| trimmed.starts_with(c))
            || (trimmed.starts_with('[') && trimmed.contains("]:"));
        if !not_prose {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    prose
}

/// At most `limit` bytes, cut at a line boundary.
fn cut(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let end = text.as_bytes()[..limit]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    &text[..end]
}

/// The Korean translations (msgstr) of Debian's gettext catalogs.
fn korean(limit: usize) -> Option<String> {
    let mut files = Vec::new();
    collect_files(
        Path::new("/usr/share/locale/ko/LC_MESSAGES"),
        &mut |p| p.extension().is_some_and(|e| e == "mo"),
        &mut files,
    );
    files.sort();
    let mut text = String::new();
    for file in files {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        for message in mo_translations(&bytes) {
            if message.chars().any(|c| ('가'..='힣').contains(&c)) {
                text.push_str(message);
                text.push('\n');
            }
        }
    }
    // Unique text only: repeating it would flatter a tokenizer with a piece cache.
    (text.len() >= 100_000).then(|| cut(&text, limit).to_string())
}

/// The translated strings of a GNU .mo catalog (little-endian), skipping bad entries.
fn mo_translations(bytes: &[u8]) -> Vec<&str> {
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    if word(0) != Some(0x9504_12de) {
        return Vec::new();
    }
    let (Some(count), Some(table)) = (word(8), word(16)) else {
        return Vec::new();
    };
    (0..count)
        .filter_map(|i| {
            let (len, offset) = (word(table + 8 * i)?, word(table + 8 * i + 4)?);
            std::str::from_utf8(bytes.get(offset..offset + len)?).ok()
        })
        .flat_map(|s| s.split('\0'))
        .collect()
}

/// `len` characters of standard base64 over xorshift bytes (fixed seed: same every run).
fn base64_noise(len: usize) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut out = String::with_capacity(len);
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        // 64 random bits → 10 base64 digits of 6 bits each.
        for i in 0..10 {
            if out.len() < len {
                out.push(ALPHABET[((state >> (6 * i)) & 63) as usize] as char);
            }
        }
    }
    out
}

fn collect_files(dir: &Path, wanted: &mut dyn FnMut(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, wanted, out);
        } else if wanted(&path) {
            out.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_drops_code_tables_html_and_headings() {
        let markdown = "# Title\n\nSome prose here.\n\n```rust\nfn x() {}\n```\n\n    indented\n| a | b |\n<div>\n![img](x)\n[ref]: http://x\n- a list item\n";
        assert_eq!(
            markdown_prose(markdown),
            "\nSome prose here.\n\n\n- a list item\n"
        );
    }

    #[test]
    fn cut_stops_at_a_line_boundary() {
        assert_eq!(cut("ab\ncd\nef", 7), "ab\ncd\n");
        assert_eq!(cut("ab\ncd", 100), "ab\ncd");
    }

    #[test]
    fn base64_noise_is_deterministic_base64() {
        let noise = base64_noise(1000);
        assert_eq!(noise.len(), 1000);
        assert_eq!(noise, base64_noise(1000));
        assert!(
            noise
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        );
        // Not a repeating pattern: many distinct 4-character windows.
        let windows: std::collections::HashSet<_> = noise.as_bytes().windows(4).collect();
        assert!(windows.len() > 900, "{}", windows.len());
    }

    #[test]
    fn mo_catalog_translations_are_read() {
        // A GNU .mo file with one entry: "hi" -> "안녕".
        let (original, translation) = (b"hi".as_slice(), "안녕".as_bytes());
        let mut mo = Vec::new();
        let header = [0x9504_12de_u32, 0, 1, 28, 36, 0, 0];
        header
            .iter()
            .for_each(|w| mo.extend_from_slice(&w.to_le_bytes()));
        let strings_at = 28 + 8 + 8;
        mo.extend_from_slice(&(original.len() as u32).to_le_bytes());
        mo.extend_from_slice(&(strings_at as u32).to_le_bytes());
        mo.extend_from_slice(&(translation.len() as u32).to_le_bytes());
        mo.extend_from_slice(&((strings_at + original.len()) as u32).to_le_bytes());
        mo.extend_from_slice(original);
        mo.extend_from_slice(translation);
        assert_eq!(mo_translations(&mo), vec!["안녕"]);
        assert!(mo_translations(b"not a catalog").is_empty());
    }
}
