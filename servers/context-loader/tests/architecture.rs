//! ARCHITECTURE.md names only what exists. Each inline code span of it that is a
//! path of this repository or a Rust item must resolve in the workspace, or this test
//! fails naming the span and its line. How names are read:
//!
//! **Spans.** Inline code on one line (a span that would cross a line break is an
//! error: keep it on one line). The document has no fenced code blocks: names in a
//! diagram would go unchecked, so a fence is an error too.
//!
//! **Paths.** A span of path characters with a `/` is checked when it starts at one of
//! the repository's folders in [`ROOTS`] (`crates/…`, `servers/…`, `xtask/…`, …): it
//! must exist, and with a trailing `/` be a folder. Under a heading that names a
//! workspace member (`` ### `crates/context-budget` ``), `src/…`, `tests/…`,
//! `examples/…`, `data/…` and `build.rs` are relative to that member; elsewhere
//! those forms are an error (relative to what?). Other spans with a `/`
//! (`tools/list`, `target/xtask/…`, `~/.codex/config.toml`) are not paths of this
//! repository and are not checked.
//!
//! **Rust items.** A span that is a Rust path (`Name`, `module::item`, `Type::method`;
//! a trailing `()` or `!` and generics `<…>` are ignored) is resolved against the
//! definitions in the `.rs` files of every workspace member (not `vendor/`, not
//! `target/`): `fn`, `struct`, `enum`, `union`, `trait`, `type`, `const`, `static`,
//! `macro_rules!`, `mod` (inline, or a file or folder), each enum's variants, and the
//! `fn`s, `const`s and `type`s inside an `impl` or `trait` block, which are members of
//! that block's type.
//!
//! - `a::b::c`: `a` may name a member crate (`context_budget`, `mcp_common`, …), then
//!   each module segment must follow the one before in a module path (from the crate
//!   root when a crate was named, anywhere otherwise), and the last segment must be
//!   defined in that module or a module below it (below, because modules re-export
//!   what their children define; never beside it).
//! - `Type::member`: `Type` is a struct, enum, union, trait or type alias in scope, and
//!   `member` one of its members in the same crate: `Service::run` fails when no
//!   `impl Service` or `trait Service` block has a `fn run`, whatever else is called
//!   `run`.
//! - a bare `name` must be defined somewhere (an item, a module or a member), or be a
//!   crate that a Cargo.toml of the workspace names, or an xtask command (a variant of
//!   xtask's `Task`, kebab-cased: `Proxy` is `proxy`), or one of [`NOT_ITEMS`]: the
//!   words the document sets in code that are not Rust (wire names, a keyword),
//!   listed so that each one is a decision (an entry the document no longer uses is
//!   an error too).
//!
//! **The xtask table.** Under the `xtask` heading, the first cells of the table name
//! the commands: each must be an xtask command, and every command must have a row.
//!
//! Items of other crates (`std`, rmcp, axum) are not resolved: the document names
//! them in prose. Spans with spaces, dashes, quotes or other punctuation (`--root`,
//! `count-tokens`, `{error_code, …}`) are neither paths nor items, and are not checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Folders of this repository a checked path may start at.
const ROOTS: &[&str] = &[
    "crates/",
    "servers/",
    "xtask/",
    "deploy/",
    "packaging/",
    "vendor/",
    "bench/",
    "docs/",
    "specs/",
    ".github/",
];

/// Forms relative to the workspace member whose section they are in.
const MEMBER_RELATIVE: &[&str] = &["src/", "tests/", "examples/", "data/", "build.rs"];

/// Identifier-shaped words ARCHITECTURE.md sets in code that are not Rust items.
const NOT_ITEMS: &[&str] = &[
    // MCP wire names.
    "initialize",
    "arguments",
    "structuredContent",
    "isError",
    // JSON.
    "null",
    // An error code as it goes on the wire (the variant is CamelCase).
    "INTERNAL_ERROR",
    // A Rust keyword ("add its `mod` line").
    "mod",
    // The MCP Apps SDK's host class (npm, driven by xtask/app/).
    "AppBridge",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_path_and_item_architecture_md_names_exists() {
    let root = root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let index = Index::of_workspace(&root);
    let mut problems = Vec::new();
    let mut checked = (0, 0);
    let mut member: Vec<(usize, Option<String>)> = Vec::new();
    let mut table_commands = BTreeSet::new();
    for (at, line) in text.lines().enumerate() {
        let at = at + 1;
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            problems.push(format!(
                "line {at}: a fenced block (its names would go unchecked)"
            ));
            continue;
        }
        let spans = match code_spans(line) {
            Ok(spans) => spans,
            Err(e) => {
                problems.push(format!("line {at}: {e}"));
                continue;
            }
        };
        if let Some(level) = heading_level(line) {
            member.retain(|(l, _)| *l < level);
            let named = spans
                .iter()
                .map(|s| s.trim_end_matches('/'))
                .find(|s| index.members.contains_key(*s));
            member.push((level, named.map(str::to_string)));
        }
        let section = member.iter().rev().find_map(|(_, m)| m.clone());
        if section.as_deref() == Some("xtask") && line.starts_with("| `") {
            let command = spans[0].split(' ').next().unwrap_or_default();
            table_commands.insert(command.to_string());
        }
        for span in spans {
            match check(&index, &root, section.as_deref(), &span) {
                Checked::Path(Ok(())) => checked.0 += 1,
                Checked::Item(Ok(())) => checked.1 += 1,
                Checked::Path(Err(e)) | Checked::Item(Err(e)) => {
                    problems.push(format!("line {at}: `{span}`: {e}"))
                }
                Checked::Neither => {}
            }
        }
    }
    let commands = index.xtask_commands();
    for missing in commands.difference(&table_commands) {
        problems.push(format!("the xtask table has no row for `{missing}`"));
    }
    for unknown in table_commands.difference(&commands) {
        problems.push(format!(
            "the xtask table has a row for `{unknown}`, not an xtask command"
        ));
    }
    for word in NOT_ITEMS {
        if !text.contains(&format!("`{word}`")) {
            problems.push(format!(
                "NOT_ITEMS lists `{word}`, which the document no longer uses"
            ));
        }
    }
    println!(
        "ARCHITECTURE.md: {} paths and {} items resolved",
        checked.0, checked.1
    );
    assert!(
        checked.0 > 0 && checked.1 > 0,
        "nothing was checked: is the span reader broken?"
    );
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md names what does not exist (see this test's docs for how names \
         are resolved):\n{}",
        problems.join("\n")
    );
}

enum Checked {
    Path(Result<(), String>),
    Item(Result<(), String>),
    Neither,
}

fn check(index: &Index, root: &Path, member: Option<&str>, span: &str) -> Checked {
    let is_path_text = !span.is_empty()
        && span
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.@/-".contains(c));
    let relative = MEMBER_RELATIVE.iter().any(|r| span.starts_with(r));
    if is_path_text && (ROOTS.iter().any(|r| span.starts_with(r)) || relative) {
        let base = match (relative, member) {
            (false, _) => root.to_path_buf(),
            (true, Some(member)) => root.join(member),
            (true, None) => {
                return Checked::Path(Err(
                    "a member-relative path outside a member's section".into()
                ));
            }
        };
        let path = base.join(span);
        let found = if span.ends_with('/') {
            path.is_dir()
        } else {
            path.exists()
        };
        return Checked::Path(if found {
            Ok(())
        } else {
            Err(format!(
                "no such {}",
                if span.ends_with('/') {
                    "folder"
                } else {
                    "file"
                }
            ))
        });
    }
    match rust_path(span) {
        Some(segments) => Checked::Item(index.resolve(&segments)),
        None => Checked::Neither,
    }
}

/// The segments of a span that is a Rust path, without `()`, `!` and generics.
fn rust_path(span: &str) -> Option<Vec<String>> {
    let mut text = String::new();
    let mut angle = 0usize;
    for c in span.chars() {
        match c {
            '<' => angle += 1,
            '>' => angle = angle.checked_sub(1)?,
            _ if angle > 0 => {}
            _ => text.push(c),
        }
    }
    let text = text.strip_suffix("()").unwrap_or(&text);
    let text = text.strip_suffix('!').unwrap_or(text);
    let text = text.strip_suffix("::").unwrap_or(text);
    let segments: Vec<String> = text.split("::").map(str::to_string).collect();
    let ident = |s: &String| {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    segments.iter().all(ident).then_some(segments)
}

/// The inline code spans of one line; an unclosed one is an error.
fn code_spans(line: &str) -> Result<Vec<String>, String> {
    let mut spans = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        let ticks = rest[start..].len() - rest[start..].trim_start_matches('`').len();
        let after = &rest[start + ticks..];
        let closing = "`".repeat(ticks);
        let end = after
            .find(&closing)
            .ok_or("a code span that does not close on its line")?;
        spans.push(after[..end].trim().to_string());
        rest = &after[end + ticks..];
    }
    Ok(spans)
}

fn heading_level(line: &str) -> Option<usize> {
    let hashes = line.len() - line.trim_start_matches('#').len();
    ((1..=6).contains(&hashes) && line[hashes..].starts_with(' ')).then_some(hashes)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// `fn`, `const`, `static`, `macro_rules!`.
    Item,
    /// `struct`, `enum`, `union`, `trait`, `type`.
    Type,
    Module,
    /// Inside an `impl` or `trait` block, or an enum's variant.
    Member,
}

#[derive(Debug)]
struct Def {
    name: String,
    kind: Kind,
    /// The type a member belongs to.
    owner: Option<String>,
    krate: String,
    /// Module path from the crate root (file modules, then inline ones).
    module: Vec<String>,
}

struct Index {
    defs: Vec<Def>,
    /// Member folder (`crates/context-budget`) → crate name (`context_budget`).
    members: BTreeMap<String, String>,
    /// Every crate a Cargo.toml of the workspace names, `-` as `_`.
    dependencies: BTreeSet<String>,
}

impl Index {
    fn of_workspace(root: &Path) -> Index {
        let mut index = Index {
            defs: Vec::new(),
            members: BTreeMap::new(),
            dependencies: BTreeSet::new(),
        };
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
        index.dependencies.extend(dependencies(&manifest));
        let members_line = manifest
            .lines()
            .find(|l| l.trim_start().starts_with("members"))
            .expect("workspace members");
        for folder in members_line.split('"').skip(1).step_by(2) {
            let dir = root.join(folder);
            let manifest =
                std::fs::read_to_string(dir.join("Cargo.toml")).expect("member Cargo.toml");
            index.dependencies.extend(dependencies(&manifest));
            let name = manifest
                .lines()
                .find_map(|l| l.trim().strip_prefix("name = \""))
                .and_then(|l| l.strip_suffix('"'))
                .expect("package name")
                .replace('-', "_");
            for file in rust_files(&dir) {
                let rel = file.strip_prefix(&dir).expect("inside the member");
                let (krate, module) = module_of(&name, rel);
                for (i, segment) in module.iter().enumerate() {
                    index.defs.push(Def {
                        name: segment.clone(),
                        kind: Kind::Module,
                        owner: None,
                        krate: krate.clone(),
                        module: module[..i].to_vec(),
                    });
                }
                let source = std::fs::read_to_string(&file).expect("source");
                index.defs.extend(definitions(&source, &krate, &module));
            }
            index.dependencies.insert(name.clone());
            index.members.insert(folder.to_string(), name);
        }
        index
    }

    /// xtask's commands: the variants of its `Task`, kebab-cased.
    fn xtask_commands(&self) -> BTreeSet<String> {
        self.defs
            .iter()
            .filter(|d| d.krate == "xtask" && d.owner.as_deref() == Some("Task"))
            .map(|d| {
                let mut kebab = String::new();
                for (i, c) in d.name.chars().enumerate() {
                    if c.is_ascii_uppercase() && i > 0 {
                        kebab.push('-');
                    }
                    kebab.push(c.to_ascii_lowercase());
                }
                kebab
            })
            .collect()
    }

    fn resolve(&self, segments: &[String]) -> Result<(), String> {
        let last = segments.len() - 1;
        if last == 0 {
            let name = &segments[0];
            let known = self.defs.iter().any(|d| &d.name == name)
                || self.dependencies.contains(name)
                || self.xtask_commands().contains(name)
                || NOT_ITEMS.contains(&name.as_str());
            return if known {
                Ok(())
            } else {
                Err(
                    "defined nowhere in the workspace (not an item, module, member, \
                     dependency, nor in NOT_ITEMS)"
                        .into(),
                )
            };
        }
        let mut krate: Option<&str> = None;
        let mut modules: Vec<&str> = Vec::new();
        let mut i = 0;
        if self.members.values().any(|k| k == &segments[0]) {
            krate = Some(&segments[0]);
            i = 1;
        }
        let in_scope = |d: &Def, modules: &[&str]| {
            krate.is_none_or(|k| d.krate == k)
                && module_matches(&d.module, modules, krate.is_some())
        };
        while i < last {
            let mut deeper = modules.clone();
            deeper.push(&segments[i]);
            if self.defs.iter().any(|d| in_scope(d, &deeper)) {
                modules = deeper;
                i += 1;
            } else {
                break;
            }
        }
        let name = &segments[last];
        if i == last {
            return if self
                .defs
                .iter()
                .any(|d| &d.name == name && in_scope(d, &modules))
            {
                Ok(())
            } else {
                Err(format!(
                    "no `{name}` is defined in or below `{}`",
                    segments[..last].join("::")
                ))
            };
        }
        if i + 1 != last {
            return Err(format!(
                "`{}` is not a crate, module or type here",
                segments[i]
            ));
        }
        let owner = &segments[i];
        let crates: BTreeSet<&str> = self
            .defs
            .iter()
            .filter(|d| &d.name == owner && d.kind == Kind::Type && in_scope(d, &modules))
            .map(|d| d.krate.as_str())
            .collect();
        if crates.is_empty() {
            return Err(format!("`{owner}` is not a crate, module or type here"));
        }
        let member = self.defs.iter().any(|d| {
            &d.name == name
                && d.kind == Kind::Member
                && d.owner.as_ref() == Some(owner)
                && crates.contains(d.krate.as_str())
        });
        if member {
            Ok(())
        } else {
            Err(format!(
                "`{owner}` has no member `{name}` (no fn, const, type or variant of that name in an impl or trait block of it, or in the enum)"
            ))
        }
    }
}

/// `modules` follow each other in `path`: from its start when `anchored`, anywhere
/// otherwise.
fn module_matches(path: &[String], modules: &[&str], anchored: bool) -> bool {
    if modules.is_empty() {
        return true;
    }
    let fits = |at: usize| {
        path.len() >= at + modules.len() && modules.iter().zip(&path[at..]).all(|(m, p)| *m == p)
    };
    if anchored {
        fits(0)
    } else {
        (0..path.len()).any(fits)
    }
}

/// The crates a Cargo.toml depends on (any dependency table), `-` as `_`.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_table = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_table = line.ends_with("dependencies]");
            continue;
        }
        let key = line
            .split(['=', '.'])
            .next()
            .map(str::trim)
            .unwrap_or_default();
        if in_table && !line.starts_with('#') && !key.is_empty() {
            out.push(key.replace('-', "_"));
        }
    }
    out
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                files.extend(rust_files(&path));
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// The crate and module path of a file of a member: `src/spec/store.rs` is
/// `[spec, store]` of the member's crate; a test, example or build script is a crate
/// of its own that no span can name (`tests/readme.rs`: `[readme]`).
fn module_of(krate: &str, rel: &Path) -> (String, Vec<String>) {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    let top = parts.remove(0);
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    match top.as_str() {
        "src" => (krate.to_string(), parts),
        _ => (format!("{krate} ({top})"), parts),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Punct(char),
}

/// Identifiers and punctuation of Rust source, without comments, literals and
/// lifetimes. Comments go, and literals are emptied, by the module graph's reader
/// (`test_support::module_graph::code_only`), so both checkers read source alike.
fn tokens(source: &str) -> Vec<Token> {
    let code = test_support::module_graph::code_only(source);
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // Literals are emptied: `""` (`b""`) and `' '` (`b' '`).
        if c == '"' || (c == 'b' && chars.get(i + 1) == Some(&'"')) {
            i += if c == 'b' { 3 } else { 2 };
        } else if c == '\'' || (c == 'b' && chars.get(i + 1) == Some(&'\'')) {
            let start = if c == 'b' { i + 1 } else { i };
            if chars.get(start + 2) == Some(&'\'') {
                i = start + 3;
            } else {
                // A lifetime or label: skip the quote and its name.
                i = start + 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if word == "r" && chars.get(i) == Some(&'#') {
                // A raw identifier `r#type`.
                i += 1;
                continue;
            }
            out.push(Token::Ident(word));
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
        } else {
            if !c.is_whitespace() {
                out.push(Token::Punct(c));
            }
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone)]
enum Block {
    Module(String),
    Impl(String),
    Trait(String),
    Enum(String),
    Other,
}

/// The definitions in one file (see the module docs for which).
fn definitions(source: &str, krate: &str, module: &[String]) -> Vec<Def> {
    let tokens = tokens(source);
    let mut defs = Vec::new();
    // Open blocks: what they are and the depth inside them.
    let mut blocks: Vec<(Block, usize)> = Vec::new();
    let mut pending: Option<Block> = None;
    let mut depth = 0usize;
    let mut expect_variant = false;
    let ident = |at: usize| match tokens.get(at) {
        Some(Token::Ident(name)) => Some(name.clone()),
        _ => None,
    };
    let mut i = 0;
    while i < tokens.len() {
        let innermost = blocks.last().filter(|(_, d)| *d == depth).map(|(b, _)| b);
        let owner = match innermost {
            Some(Block::Impl(t) | Block::Trait(t)) => Some(t.clone()),
            _ => None,
        };
        let mut modules: Vec<String> = module.to_vec();
        modules.extend(blocks.iter().filter_map(|(b, _)| match b {
            Block::Module(m) => Some(m.clone()),
            _ => None,
        }));
        let mut define = |name: String, kind: Kind, owner: Option<String>| {
            defs.push(Def {
                name,
                kind,
                owner,
                krate: krate.to_string(),
                module: modules.clone(),
            })
        };
        match &tokens[i] {
            Token::Ident(word) => {
                if let (Some(Block::Enum(e)), true) = (innermost, expect_variant) {
                    define(word.clone(), Kind::Member, Some(e.clone()));
                    expect_variant = false;
                    i += 1;
                    continue;
                }
                match word.as_str() {
                    "fn" => {
                        if let Some(name) = ident(i + 1) {
                            let kind = if owner.is_some() {
                                Kind::Member
                            } else {
                                Kind::Item
                            };
                            define(name, kind, owner);
                            pending = Some(Block::Other);
                        }
                    }
                    "struct" | "union" | "enum" | "trait" => {
                        if let Some(name) = ident(i + 1) {
                            define(name.clone(), Kind::Type, None);
                            pending = Some(match word.as_str() {
                                "enum" => Block::Enum(name),
                                "trait" => Block::Trait(name),
                                _ => Block::Other,
                            });
                        }
                    }
                    "type" => {
                        if let Some(name) = ident(i + 1) {
                            let kind = if owner.is_some() {
                                Kind::Member
                            } else {
                                Kind::Type
                            };
                            define(name, kind, owner);
                        }
                    }
                    "const" | "static" => {
                        let at = if ident(i + 1).as_deref() == Some("mut") {
                            i + 2
                        } else {
                            i + 1
                        };
                        if let Some(name) = ident(at).filter(|n| n != "fn" && n != "_") {
                            let kind = if owner.is_some() {
                                Kind::Member
                            } else {
                                Kind::Item
                            };
                            define(name, kind, owner);
                        }
                    }
                    "mod" => {
                        if let Some(name) = ident(i + 1) {
                            define(name.clone(), Kind::Module, None);
                            pending = Some(Block::Module(name));
                        }
                    }
                    "macro_rules" => {
                        if let Some(name) = ident(i + 2) {
                            define(name, Kind::Item, None);
                            pending = Some(Block::Other);
                        }
                    }
                    "impl" if item_position(&tokens, i) => {
                        pending = Some(Block::Impl(impl_type(&tokens, i)));
                    }
                    _ => {}
                }
            }
            Token::Punct('{') => {
                depth += 1;
                let block = pending.take().unwrap_or(Block::Other);
                expect_variant = matches!(block, Block::Enum(_));
                blocks.push((block, depth));
            }
            Token::Punct('}') => {
                if blocks.last().is_some_and(|(_, d)| *d == depth) {
                    blocks.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Token::Punct('(' | '[') => depth += 1,
            Token::Punct(')' | ']') => depth = depth.saturating_sub(1),
            Token::Punct(';') => pending = None,
            Token::Punct(',') if matches!(innermost, Some(Block::Enum(_))) => expect_variant = true,
            Token::Punct(_) => {}
        }
        i += 1;
    }
    defs
}

/// `impl` at `at` starts an item (not `-> impl Trait` or `x: impl Fn()`).
fn item_position(tokens: &[Token], at: usize) -> bool {
    match at.checked_sub(1).map(|p| &tokens[p]) {
        None => true,
        Some(Token::Punct(c)) => matches!(c, ';' | '}' | '{' | ']'),
        Some(Token::Ident(word)) => word == "unsafe" || word == "default",
    }
}

/// The type an `impl` block at `at` is for: the last path segment after `for`, or
/// after the block's own generics.
fn impl_type(tokens: &[Token], at: usize) -> String {
    let mut header = Vec::new();
    for token in &tokens[at + 1..] {
        if *token == Token::Punct('{') || *token == Token::Punct(';') {
            break;
        }
        header.push(token.clone());
    }
    // The impl's own generics.
    let mut start = 0;
    if header.first() == Some(&Token::Punct('<')) {
        let mut angle = 0;
        for (i, token) in header.iter().enumerate() {
            match token {
                Token::Punct('<') => angle += 1,
                Token::Punct('>') => {
                    angle -= 1;
                    if angle == 0 {
                        start = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let mut angle = 0;
    let mut ty = &header[start..];
    for (i, token) in header.iter().enumerate().skip(start) {
        match token {
            Token::Punct('<') => angle += 1,
            Token::Punct('>') => angle -= 1,
            Token::Ident(w) if w == "for" && angle == 0 => ty = &header[i + 1..],
            _ => {}
        }
    }
    let mut name = String::new();
    let mut angle = 0;
    for token in ty {
        match token {
            Token::Punct('<') => angle += 1,
            Token::Punct('>') => angle -= 1,
            Token::Ident(w) if w == "where" && angle == 0 => break,
            Token::Ident(w) if angle == 0 && w != "dyn" && w != "mut" => name = w.clone(),
            _ => {}
        }
    }
    name
}

#[test]
fn the_resolver_finds_members_and_refuses_what_is_not_there() {
    let source = "
        pub struct Service { run_count: u8 }
        impl Service { pub fn counting(&self) {} const LIMIT: u8 = 1; }
        impl<T: Into<u8>> From<T> for Service { fn from(_: T) -> Self { todo!() } }
        pub fn run() -> impl Fn() { || {} }
        pub enum Shows { Request, Response { fields: bool }, Cli(u8, u16) }
        pub trait Tool { fn call(&self); }
        mod inner { pub fn helper() { let _ = \"fn fake() {}\"; let _c = '{'; let _q = '\\''; } }
        // fn commented() {}
    ";
    let mut index = Index {
        defs: definitions(source, "demo", &["service".to_string()]),
        members: BTreeMap::from([("crates/demo".to_string(), "demo".to_string())]),
        dependencies: BTreeSet::from(["tokio".to_string()]),
    };
    index.defs.push(Def {
        name: "service".into(),
        kind: Kind::Module,
        owner: None,
        krate: "demo".into(),
        module: vec![],
    });
    let ok = |span: &str| index.resolve(&rust_path(span).expect("a Rust path"));
    for span in [
        "Service::counting()",
        "Service::LIMIT",
        "Service::from",
        "demo::service::Service",
        "service::inner::helper",
        "demo::helper",
        "Shows::Cli",
        "Shows::Response",
        "Tool::call",
        "run",
        "tokio",
        "Shows::Request",
        "Tool<T>",
    ] {
        assert_eq!(ok(span), Ok(()), "{span}");
    }
    for span in [
        "Service::run",
        "with_exact_counter",
        "Shows::Skip",
        "inner::Service",
        "fake",
        "commented",
        "demo::nowhere::Service",
        "Service::u16",
    ] {
        assert!(ok(span).is_err(), "{span} should not resolve");
    }
    assert_eq!(
        rust_path("shape_only::<T>"),
        Some(vec!["shape_only".to_string()])
    );
    assert_eq!(rust_path("--root"), None);
    assert_eq!(rust_path("count-tokens"), None);
}
