//! What a Markdown file is made of: frontmatter, code, tables, and prose (the rest),
//! as byte ranges. Classified by a CommonMark/GFM parser (pulldown-cmark), not line
//! heuristics: fenced code (``` and ~~~), indented code, and GFM tables (header row
//! included) are whatever the parser says they are.

use std::ops::Range;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use schemars::JsonSchema;
use serde::Serialize;

/// The part of a spec file a token belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Prose,
    Code,
    Tables,
    /// The YAML block between `---` lines at the top, delimiters included.
    Frontmatter,
}

/// The YAML frontmatter of a file, if it has one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frontmatter {
    /// `status:` (e.g. planned, in-progress, complete), when it is a plain string.
    pub status: Option<String>,
    /// `title:`, when it is a plain string.
    pub title: Option<String>,
}

/// How a file's frontmatter turned out.
#[derive(Debug, Clone, PartialEq)]
pub enum FrontmatterState {
    /// No `---` block at the top (allowed: frontmatter is optional).
    Absent,
    Valid(Frontmatter),
    /// A `---` block that is not valid YAML, or never closes; the message says where.
    Invalid(String),
}

/// A classified Markdown text: every non-prose region, sorted and disjoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Classified {
    pub regions: Vec<(Range<usize>, Category)>,
    pub frontmatter: FrontmatterState,
    /// Text of the first level-1 heading, if any.
    pub heading: Option<String>,
}

impl Classified {
    /// The category of every byte offset in ascending order, in one pass: call
    /// `category_at` with non-decreasing offsets (token starts).
    pub fn cursor(&self) -> CategoryCursor<'_> {
        CategoryCursor {
            regions: &self.regions,
            next: 0,
        }
    }
}

/// Walks the regions alongside ascending offsets: O(tokens + regions) for a file.
pub struct CategoryCursor<'a> {
    regions: &'a [(Range<usize>, Category)],
    next: usize,
}

impl CategoryCursor<'_> {
    pub fn category_at(&mut self, offset: usize) -> Category {
        while let Some((range, _)) = self.regions.get(self.next) {
            if offset < range.end {
                break;
            }
            self.next += 1;
        }
        match self.regions.get(self.next) {
            Some((range, category)) if range.contains(&offset) => *category,
            _ => Category::Prose,
        }
    }
}

/// Classify a Markdown text.
pub fn classify(text: &str) -> Classified {
    let (frontmatter_len, frontmatter) = split_frontmatter(text);
    let mut regions = Vec::new();
    if frontmatter_len > 0 {
        regions.push((0..frontmatter_len, Category::Frontmatter));
    }
    let body = &text[frontmatter_len..];
    let mut heading: Option<String> = None;
    let mut in_h1 = false;
    // While inside a code block or table, nested events belong to it.
    let mut open: Option<Range<usize>> = None;
    let parser = Parser::new_ext(body, Options::ENABLE_TABLES).into_offset_iter();
    for (event, range) in parser {
        if let Some(current) = &open {
            if range.start >= current.end {
                open = None;
            } else {
                continue;
            }
        }
        let shifted = range.start + frontmatter_len..range.end + frontmatter_len;
        match event {
            Event::Start(Tag::CodeBlock(_)) => {
                regions.push((shifted, Category::Code));
                open = Some(range);
            }
            Event::Start(Tag::Table(_)) => {
                regions.push((shifted, Category::Tables));
                open = Some(range);
            }
            Event::Start(Tag::Heading {
                level: HeadingLevel::H1,
                ..
            }) if heading.is_none() => in_h1 = true,
            Event::End(TagEnd::Heading(HeadingLevel::H1)) if in_h1 => {
                in_h1 = false;
                if heading.as_deref().is_none_or(str::is_empty) {
                    heading = None;
                }
            }
            Event::Text(t) | Event::Code(t) if in_h1 => {
                heading.get_or_insert_with(String::new).push_str(&t);
            }
            _ => {}
        }
    }
    Classified {
        regions,
        frontmatter,
        heading: heading.map(|h| h.trim().to_string()),
    }
}

/// Find a frontmatter block: the text starts with a `---` line (a UTF-8 BOM
/// allowed) and a later line is `---` or `...`. Returns its length in bytes,
/// delimiters and the closing line's newline included, and its state.
fn split_frontmatter(text: &str) -> (usize, FrontmatterState) {
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut lines = LineSpans::new(text, start);
    match lines.next() {
        Some((line, _)) if line.trim_end() == "---" => {}
        _ => return (0, FrontmatterState::Absent),
    }
    let yaml_start = lines.offset();
    for (line, end) in lines.by_ref() {
        if matches!(line.trim_end(), "---" | "...") {
            let yaml_end = end - line.len() - newline_len(&text[..end]);
            let yaml = &text[yaml_start..yaml_end.max(yaml_start)];
            return (end, parse_yaml(yaml));
        }
    }
    (
        0,
        FrontmatterState::Invalid(
            "frontmatter opens with `---` but has no closing `---` line".into(),
        ),
    )
}

fn newline_len(before: &str) -> usize {
    if before.ends_with("\r\n") {
        2
    } else if before.ends_with('\n') {
        1
    } else {
        0
    }
}

/// Lines of `text` from `start`: (line without its newline, offset after the newline).
struct LineSpans<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> LineSpans<'a> {
    fn new(text: &'a str, at: usize) -> Self {
        LineSpans { text, at }
    }
    fn offset(&self) -> usize {
        self.at
    }
}

impl<'a> Iterator for LineSpans<'a> {
    type Item = (&'a str, usize);
    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.text.len() {
            return None;
        }
        let rest = &self.text[self.at..];
        let (line, consumed) = match rest.find('\n') {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.at += consumed;
        Some((line.strip_suffix('\r').unwrap_or(line), self.at))
    }
}

fn parse_yaml(yaml: &str) -> FrontmatterState {
    use yaml_rust2::{Yaml, YamlLoader};
    match YamlLoader::load_from_str(yaml) {
        Err(e) => FrontmatterState::Invalid(format!(
            "frontmatter is not valid YAML: {} (line {}, column {} of the frontmatter)",
            e.info(),
            e.marker().line() + 1,
            e.marker().col() + 1
        )),
        Ok(docs) => {
            let doc = docs.into_iter().next().unwrap_or(Yaml::Null);
            match doc {
                Yaml::Hash(_) => {
                    let field = |key: &str| match &doc[key] {
                        Yaml::String(s) => Some(s.clone()),
                        _ => None,
                    };
                    FrontmatterState::Valid(Frontmatter {
                        status: field("status"),
                        title: field("title"),
                    })
                }
                // An empty block (`---\n---`) is allowed and says nothing.
                Yaml::Null => FrontmatterState::Valid(Frontmatter::default()),
                _ => FrontmatterState::Invalid(
                    "frontmatter must be a YAML mapping (key: value lines)".into(),
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regions(text: &str) -> Vec<(&str, Category)> {
        classify(text)
            .regions
            .into_iter()
            .map(|(r, c)| (&text[r], c))
            .collect()
    }

    #[test]
    fn fenced_code_with_backticks_and_tildes() {
        let text = "Intro\n\n```rust\nfn a() {}\n```\n\nMiddle\n\n~~~\nplain\n~~~\nEnd\n";
        let found = regions(text);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].1, Category::Code);
        assert!(found[0].0.starts_with("```rust\nfn a() {}\n```"));
        assert!(found[1].0.starts_with("~~~\nplain\n~~~"));
    }

    #[test]
    fn indented_code_is_code_but_an_indented_list_continuation_is_not() {
        let text = "Para\n\n    let x = 1;\n    let y = 2;\n\nAfter\n";
        let found = regions(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, Category::Code);
        assert!(found[0].0.contains("let x = 1;"));
        assert!(found[0].0.contains("let y = 2;"));
        // A lazy continuation line indented by four spaces is paragraph text.
        assert!(regions("Para\n    still para\n").is_empty());
    }

    #[test]
    fn gfm_tables_include_the_header_row() {
        let text = "Before\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter\n";
        let found = regions(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, Category::Tables);
        assert!(found[0].0.starts_with("| a | b |"));
        assert!(found[0].0.contains("| 1 | 2 |"));
        // Pipes without a delimiter row are not a table.
        assert!(regions("| a | b |\n| 1 | 2 |\n").is_empty());
    }

    #[test]
    fn code_fence_inside_a_table_cell_or_list_is_handled_by_the_parser() {
        let text = "- item\n\n  ```\n  code in list\n  ```\n";
        let found = regions(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, Category::Code);
        assert!(found[0].0.contains("code in list"));
    }

    #[test]
    fn frontmatter_with_delimiters() {
        let text = "---\nstatus: planned\ntitle: Token engine\n---\n# Heading\n\nBody\n";
        let classified = classify(text);
        assert_eq!(
            classified.regions,
            vec![(
                0..text.find("# Heading").unwrap_or(0),
                Category::Frontmatter
            )]
        );
        assert_eq!(
            classified.frontmatter,
            FrontmatterState::Valid(Frontmatter {
                status: Some("planned".into()),
                title: Some("Token engine".into())
            })
        );
        assert_eq!(classified.heading.as_deref(), Some("Heading"));
        // The `---` that closes frontmatter is not read as a setext heading or rule.
        assert_eq!(regions("---\na: 1\n...\nText\n").len(), 1);
    }

    #[test]
    fn frontmatter_is_optional_and_errors_are_located() {
        let none = classify("# Title\n\nNo frontmatter here.\n");
        assert_eq!(none.frontmatter, FrontmatterState::Absent);
        assert!(none.regions.is_empty());

        let invalid = classify("---\nstatus: [unclosed\n---\nBody\n");
        let FrontmatterState::Invalid(message) = invalid.frontmatter else {
            panic!("invalid YAML must be reported");
        };
        assert!(message.contains("not valid YAML"), "{message}");
        assert!(message.contains("line"), "{message}");

        let unclosed = classify("---\nstatus: x\nno end\n");
        assert!(
            matches!(unclosed.frontmatter, FrontmatterState::Invalid(m) if m.contains("closing"))
        );
        assert!(
            unclosed.regions.is_empty(),
            "an unclosed block is not frontmatter"
        );

        let scalar = classify("---\njust a string\n---\n");
        assert!(matches!(scalar.frontmatter, FrontmatterState::Invalid(_)));
    }

    #[test]
    fn crlf_and_bom_frontmatter() {
        let text = "\u{feff}---\r\nstatus: done\r\n---\r\nBody\r\n";
        let classified = classify(text);
        assert_eq!(
            classified.regions,
            vec![(0..text.find("Body").unwrap_or(0), Category::Frontmatter)]
        );
        assert!(
            matches!(classified.frontmatter, FrontmatterState::Valid(f) if f.status.as_deref() == Some("done"))
        );
    }

    #[test]
    fn cursor_walks_regions_in_order() {
        let text = "---\na: 1\n---\nText\n\n```\ncode\n```\n\n| h |\n|---|\n| c |\n";
        let classified = classify(text);
        let mut cursor = classified.cursor();
        assert_eq!(cursor.category_at(0), Category::Frontmatter);
        assert_eq!(
            cursor.category_at(text.find("Text").unwrap_or(0)),
            Category::Prose
        );
        assert_eq!(
            cursor.category_at(text.find("code").unwrap_or(0)),
            Category::Code
        );
        assert_eq!(
            cursor.category_at(text.find("| c |").unwrap_or(0)),
            Category::Tables
        );
        assert_eq!(cursor.category_at(text.len()), Category::Prose);
    }
}
