//! The import graph of a crate's modules, read from its sources, at every folder
//! level: for each module that has modules inside it (the crate root, `files`,
//! `files::load`, ...), which of its child modules import which of their siblings.
//! A cycle among siblings is how a module meant to sit below another ends up leaning
//! on it without anyone deciding it; each crate's `tests/module_graph.rs` asserts
//! there is none.
//!
//! Read from the sources, not the compiler, so that the check needs no build of the
//! crate: every `crate::`, `super::` or `self::` path outside comments, string
//! literals and `#[cfg(test)]` modules names a module, `{…}` groups expanded. A name
//! a module re-exports (`pub use walk::Candidate;` in `files/mod.rs`) stands for the
//! module that defines it. A path used in module `files::ignore` that leads to
//! `files::walk::x` is the edge `ignore -> walk` of folder `files`; one that leads
//! out of `files` (to `crate::read`) is the edge `files -> read` of the crate root.
//! Uses between a module and its own parent or child are no edges: a folder's
//! `mod.rs` declares and re-exports its children.
//!
//! Not read: paths inside inline modules other than test ones are taken as their
//! file's; `pub use x::*` globs resolve nothing; `src/bin/` and a `main.rs` beside a
//! `lib.rs` are other crates.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path below the crate root (`["files", "load"]`); empty for the root.
type ModPath = Vec<String>;

/// Child module name → the sibling modules it imports.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// One folder level: a module with modules inside it, and their imports of each other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    /// `crate` for the crate root, else the module's path (`files::load`).
    pub path: String,
    pub graph: Graph,
}

impl Folder {
    /// Every group of two or more modules that import each other, around a cycle.
    pub fn cycles(&self) -> Vec<Vec<String>> {
        cycles(&self.graph)
    }

    /// One line per module: `name -> what it imports`.
    pub fn render(&self) -> String {
        let width = self.graph.keys().map(String::len).max().unwrap_or(0);
        let mut text = format!("{}:\n", self.path);
        for (module, deps) in &self.graph {
            let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
            text.push_str(&format!("  {module:>width$} -> {}\n", deps.join(", ")));
        }
        text
    }
}

/// Every folder level of the crate whose sources are under `src`, the root first.
/// Panics when a source cannot be read: this is for tests.
pub fn folders(src: &Path) -> Vec<Folder> {
    let mut sources = Vec::new();
    for file in rust_files(src) {
        let relative = file.strip_prefix(src).expect("under src").to_path_buf();
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        sources.push((relative, text));
    }
    folders_of(&sources)
}

/// [`folders`] of sources given as (path relative to `src`, text).
pub fn folders_of(sources: &[(PathBuf, String)]) -> Vec<Folder> {
    let has_lib = sources.iter().any(|(path, _)| path == Path::new("lib.rs"));
    let mut modules: BTreeMap<ModPath, String> = BTreeMap::new();
    let mut test_only: BTreeSet<ModPath> = BTreeSet::new();
    for (path, text) in sources {
        let Some(module) = module_path(path, has_lib) else {
            continue;
        };
        let (code, test_children) = without_tests(&code_only(text));
        for child in test_children {
            test_only.insert(child_of(&module, &child));
        }
        modules.insert(module, code);
    }
    // A file module declared `#[cfg(test)] mod x;` is test code, and so is all below it.
    modules.retain(|module, _| !test_only.iter().any(|t| module.starts_with(t)));

    let known: BTreeSet<ModPath> = modules.keys().cloned().collect();
    let re_exports: BTreeMap<ModPath, BTreeMap<String, ModPath>> = modules
        .iter()
        .map(|(module, code)| (module.clone(), re_exports(module, code, &known)))
        .collect();
    let crate_modules = Modules {
        known: &known,
        re_exports: &re_exports,
    };

    let mut graphs: BTreeMap<ModPath, Graph> = BTreeMap::new();
    for module in &known {
        if let Some((name, parent)) = module.split_last() {
            graphs
                .entry(parent.to_vec())
                .or_default()
                .entry(name.clone())
                .or_default();
        }
    }
    for (module, code) in &modules {
        for path in paths(module, code) {
            let target = crate_modules.resolve(&path);
            let shared = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            // Both below the folder they share, in different children of it.
            if shared < module.len() && shared < target.len() {
                let graph = graphs.entry(module[..shared].to_vec()).or_default();
                graph
                    .entry(module[shared].clone())
                    .or_default()
                    .insert(target[shared].clone());
            }
        }
    }
    graphs
        .into_iter()
        .map(|(folder, graph)| Folder {
            path: match folder.is_empty() {
                true => "crate".to_string(),
                false => folder.join("::"),
            },
            graph,
        })
        .collect()
}

/// [`folders`] of the crate under `src`, each printed (seen with `--nocapture`);
/// panics naming every cycle, with the graphs.
pub fn assert_no_cycles(src: &Path) -> Vec<Folder> {
    let folders = folders(src);
    let rendered: String = folders.iter().map(Folder::render).collect();
    println!("{rendered}");
    let cycles: Vec<String> = folders
        .iter()
        .flat_map(|folder| {
            let path = &folder.path;
            folder
                .cycles()
                .into_iter()
                .map(move |cycle| format!("{path}: {}", cycle.join(" <-> ")))
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "modules that import each other in {}:\n{}\n\n{rendered}",
        src.display(),
        cycles.join("\n")
    );
    folders
}

/// The modules of a crate, for resolving a path to the module it leads to.
struct Modules<'a> {
    known: &'a BTreeSet<ModPath>,
    /// Per module: each name it re-exports, with the full path it stands for.
    re_exports: &'a BTreeMap<ModPath, BTreeMap<String, ModPath>>,
}

impl Modules<'_> {
    /// The deepest module `path` (from the crate root) leads to, through re-exports.
    fn resolve(&self, path: &[String]) -> ModPath {
        self.resolve_within(path, 0)
    }

    fn resolve_within(&self, path: &[String], hops: usize) -> ModPath {
        let mut at = ModPath::new();
        for (i, name) in path.iter().enumerate() {
            let child = child_of(&at, name);
            if self.known.contains(&child) {
                at = child;
                continue;
            }
            // Re-exports may chain; a bound keeps a re-export cycle from looping.
            let target = self.re_exports.get(&at).and_then(|names| names.get(name));
            if let Some(target) = target
                && hops < 16
            {
                let mut full = target.clone();
                full.extend_from_slice(&path[i + 1..]);
                return self.resolve_within(&full, hops + 1);
            }
            break;
        }
        at
    }
}

fn child_of(module: &[String], name: &str) -> ModPath {
    let mut child = module.to_vec();
    child.push(name.to_string());
    child
}

/// The module a source file holds, from its path under `src`; `None` for another
/// crate's root (`main.rs` beside `lib.rs`, `bin/`).
fn module_path(relative: &Path, has_lib: bool) -> Option<ModPath> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop()?;
    let stem = file.strip_suffix(".rs")?;
    if parts.first().is_some_and(|first| first == "bin") {
        return None;
    }
    match (parts.is_empty(), stem) {
        (true, "lib") => {}
        (true, "main") if !has_lib => {}
        (true, "main") => return None,
        (_, "mod") => {}
        _ => parts.push(stem.to_string()),
    }
    Some(parts)
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `source` without comments and with string and character literals emptied (`""`,
/// `' '`), so that a path in a doc comment or a message is no import. Lifetimes stay.
/// The one reader of Rust source the checkers share (this graph, and
/// ARCHITECTURE.md's name checker).
pub fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut code = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let after_ident = i > 0 && is_ident(chars[i - 1]);
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && at(i + 1) == '*' {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            code.push(' ');
            continue;
        }
        // A raw string: `r"…"`, `r#"…"#`, `br"…"`; no escapes inside.
        if !after_ident && (c == 'r' || (c == 'b' && at(i + 1) == 'r')) {
            let start = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = (start..).take_while(|&j| at(j) == '#').count();
            if at(start + hashes) == '"' {
                let mut j = start + hashes + 1;
                while j < chars.len()
                    && !(chars[j] == '"' && (1..=hashes).all(|h| at(j + h) == '#'))
                {
                    j += 1;
                }
                code.push_str("\"\"");
                i = j + 1 + hashes;
                continue;
            }
        }
        if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            code.push_str("\"\"");
            i = j + 1;
            continue;
        }
        // A character literal (`'x'`, `'\n'`, `'\u{1F98A}'`), not a lifetime (`'a`).
        if c == '\'' {
            if at(i + 1) == '\\' {
                let mut j = i + 3;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
                code.push_str("' '");
                i = j + 1;
                continue;
            }
            if at(i + 2) == '\'' {
                code.push_str("' '");
                i += 3;
                continue;
            }
        }
        code.push(c);
        i += 1;
    }
    code
}

/// `code` without its `#[cfg(test)]` inline modules, and the names of the file
/// modules it declares for tests only (`#[cfg(test)] mod x;`).
fn without_tests(code: &str) -> (String, Vec<String>) {
    const ATTRIBUTE: &str = "#[cfg(test)]";
    let mut kept = String::with_capacity(code.len());
    let mut test_files = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(ATTRIBUTE) {
        kept.push_str(&rest[..at]);
        let after = &rest[at + ATTRIBUTE.len()..];
        match test_module(after) {
            Some((_, TestModule::Inline { end })) => rest = &after[end..],
            Some((name, TestModule::File { end })) => {
                test_files.push(name);
                rest = &after[end..];
            }
            None => {
                kept.push_str(ATTRIBUTE);
                rest = after;
            }
        }
    }
    kept.push_str(rest);
    (kept, test_files)
}

enum TestModule {
    /// `mod x { … }`: `end` is just past its closing brace.
    Inline { end: usize },
    /// `mod x;`: `end` is just past the semicolon.
    File { end: usize },
}

/// The module an attribute is on, when it is on one: `text` follows the attribute,
/// maybe through more attributes and a visibility.
fn test_module(text: &str) -> Option<(String, TestModule)> {
    let mut at = skip_space(text, 0);
    while text[at..].starts_with("#[") {
        at = skip_space(text, at + text[at..].find(']')? + 1);
    }
    if text[at..].starts_with("pub") {
        at = skip_space(text, at + 3);
        if text[at..].starts_with('(') {
            at = skip_space(text, at + text[at..].find(')')? + 1);
        }
    }
    let after_mod = text[at..].strip_prefix("mod")?;
    if !after_mod.starts_with(char::is_whitespace) {
        return None;
    }
    at = skip_space(text, at + 3);
    let name = identifier(&text[at..]);
    if name.is_empty() {
        return None;
    }
    at = skip_space(text, at + name.len());
    let name = name.to_string();
    match text[at..].chars().next()? {
        ';' => Some((name, TestModule::File { end: at + 1 })),
        '{' => {
            let mut depth = 0usize;
            for (i, c) in text[at..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some((name, TestModule::Inline { end: at + i + 1 }));
                        }
                    }
                    _ => {}
                }
            }
            // Unbalanced: the rest of the file is the test module.
            Some((name, TestModule::Inline { end: text.len() }))
        }
        _ => None,
    }
}

fn skip_space(text: &str, at: usize) -> usize {
    at + (text[at..].len() - text[at..].trim_start().len())
}

fn identifier(text: &str) -> &str {
    let end = text.find(|c: char| !is_ident(c)).unwrap_or(text.len());
    &text[..end]
}

/// Every path from the crate root that `code` (module `module`'s) writes with
/// `crate::`, `super::` or `self::`.
fn paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let Some(offset) = rest.find(|c: char| is_ident(c)) else {
            break;
        };
        let start = at + offset;
        let word = identifier(&code[start..]);
        let boundary = code[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !is_ident(c) && c != '$');
        at = start + word.len();
        if !boundary {
            continue;
        }
        let Some(base) = path_base(module, &code[start..]) else {
            continue;
        };
        let (root, used) = base;
        let (trees, len) = use_tree(&code[start + used..]);
        for (tail, _) in trees {
            let mut path = root.clone();
            path.extend(tail.into_iter().filter(|name| name != "*"));
            found.push(path);
        }
        at = start + used + len;
    }
    found
}

/// Where a path written at `text` starts from (`crate::`, `self::`, `super::`
/// repeated) and how many bytes that prefix takes; `None` for any other word.
fn path_base(module: &[String], text: &str) -> Option<(ModPath, usize)> {
    if text.starts_with("crate::") {
        return Some((ModPath::new(), "crate::".len()));
    }
    if text.starts_with("self::") {
        return Some((module.to_vec(), "self::".len()));
    }
    let mut up = 0;
    let mut used = 0;
    while text[used..].starts_with("super::") {
        up += 1;
        used += "super::".len();
    }
    (up > 0).then(|| (module[..module.len().saturating_sub(up)].to_vec(), used))
}

/// One path of a use tree, and the name it is used under when renamed (`as`).
type UsePath = (Vec<String>, Option<String>);

/// The paths of a use tree at `text` (after its root), `{…}` groups expanded; and
/// the bytes the tree takes. A glob ends its path with `*`; `self` in a group stands
/// for the group's prefix.
fn use_tree(text: &str) -> (Vec<UsePath>, usize) {
    let mut prefix = Vec::new();
    let mut at = 0;
    loop {
        at = skip_space(text, at);
        let rest = &text[at..];
        if rest.starts_with('{') {
            let mut trees = Vec::new();
            at += 1;
            loop {
                at = skip_space(text, at);
                if text[at..].starts_with('}') || at >= text.len() {
                    at += 1;
                    break;
                }
                let (subtrees, len) = use_tree(&text[at..]);
                if len == 0 {
                    // Not a path: stop rather than look at the same place again.
                    return (trees, at);
                }
                at += len;
                for (tail, alias) in subtrees {
                    let mut path = prefix.clone();
                    path.extend(tail.into_iter().filter(|name| name != "self"));
                    trees.push((path, alias));
                }
                at = skip_space(text, at);
                if text[at..].starts_with(',') {
                    at += 1;
                }
            }
            return (trees, at.min(text.len()));
        }
        if rest.starts_with('*') {
            prefix.push("*".to_string());
            return (vec![(prefix, None)], at + 1);
        }
        let name = identifier(rest);
        if name.is_empty() {
            return (vec![(prefix, None)], at);
        }
        prefix.push(name.to_string());
        at += name.len();
        if text[at..].starts_with("::") {
            at += 2;
            continue;
        }
        let after = skip_space(text, at);
        let alias = text[after..]
            .strip_prefix("as")
            .filter(|rest| rest.starts_with(char::is_whitespace))
            .map(|rest| identifier(rest.trim_start()).to_string());
        if let Some(alias) = &alias {
            let as_at = skip_space(text, after + 2);
            at = as_at + alias.len();
        }
        return (vec![(prefix, alias)], at);
    }
}

/// The names `module` re-exports (`pub use …;`, any `pub(…)` too), each with the
/// full path from the crate root it stands for. A path starting with a name that is
/// not a child module of `module` is another crate's, and left out.
fn re_exports(
    module: &[String],
    code: &str,
    known: &BTreeSet<ModPath>,
) -> BTreeMap<String, ModPath> {
    let mut names = BTreeMap::new();
    let mut at = 0;
    while let Some(offset) = code[at..].find("pub") {
        let start = at + offset;
        at = start + 3;
        let boundary = code[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !is_ident(c));
        if !boundary {
            continue;
        }
        let mut i = skip_space(code, at);
        if code[i..].starts_with('(') {
            let Some(close) = code[i..].find(')') else {
                continue;
            };
            i = skip_space(code, i + close + 1);
        }
        let Some(rest) = code[i..].strip_prefix("use") else {
            continue;
        };
        if !rest.starts_with(char::is_whitespace) {
            continue;
        }
        i = skip_space(code, i + 3);
        let (root, used) = match path_base(module, &code[i..]) {
            Some(base) => base,
            None => (module.to_vec(), 0),
        };
        let (trees, len) = use_tree(&code[i + used..]);
        at = i + used + len;
        for (tail, alias) in trees {
            let relative = used == 0;
            if relative
                && !tail
                    .first()
                    .is_some_and(|first| known.contains(&child_of(module, first)))
            {
                continue;
            }
            if tail.last().is_some_and(|name| name == "*") {
                continue;
            }
            let mut path = root.clone();
            path.extend(tail);
            let Some(name) = alias.or_else(|| path.last().cloned()) else {
                continue;
            };
            names.insert(name, path);
        }
    }
    names
}

/// Every strongly connected group of two or more modules (Tarjan's algorithm).
pub fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(state: &mut State<'a>, node: &'a str) {
        let order = state.index.len();
        state.index.insert(node, order);
        state.low.insert(node, order);
        state.stack.push(node);
        for next in state.graph.get(node).into_iter().flatten() {
            let next = next.as_str();
            if !state.index.contains_key(next) {
                visit(state, next);
                let low = state.low[node].min(state.low[next]);
                state.low.insert(node, low);
            } else if state.stack.contains(&next) {
                let low = state.low[node].min(state.index[next]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut group = Vec::new();
            while let Some(member) = state.stack.pop() {
                group.push(member.to_string());
                if member == node {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                state.found.push(group);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node.as_str()) {
            visit(&mut state, node);
        }
    }
    state.found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graphs(sources: &[(&str, &str)]) -> BTreeMap<String, Graph> {
        let sources: Vec<(PathBuf, String)> = sources
            .iter()
            .map(|(path, text)| (PathBuf::from(path), text.to_string()))
            .collect();
        folders_of(&sources)
            .into_iter()
            .map(|folder| (folder.path, folder.graph))
            .collect()
    }

    fn deps(graphs: &BTreeMap<String, Graph>, folder: &str, module: &str) -> Vec<String> {
        graphs[folder][module].iter().cloned().collect()
    }

    #[test]
    fn edges_come_through_groups_and_re_exports_not_comments_strings_or_tests() {
        let graphs = graphs(&[
            (
                "lib.rs",
                "mod a; mod b; mod c; mod d; pub use d::Tokenizer;",
            ),
            (
                "a.rs",
                "use crate::{b::X, c::{self, Y}, Tokenizer};\n\
                 // crate::limits in a comment is no edge\n\
                 const S: &str = \"crate::limits\";\n\
                 fn f() -> char { '{' }\n\
                 #[cfg(test)]\nmod tests { use crate::e; }\n\
                 fn g() { crate::limits::check(); }\n",
            ),
            ("b.rs", "/* crate::a */ fn f<'a>(x: &'a str) {}"),
            ("c.rs", "#[cfg(test)]\nmod fixtures;"),
            ("c/fixtures.rs", "use crate::a;"),
            ("d.rs", ""),
            ("limits.rs", ""),
            ("e.rs", ""),
        ]);
        assert_eq!(deps(&graphs, "crate", "a"), ["b", "c", "d", "limits"]);
        assert!(graphs["crate"]["b"].is_empty());
        assert!(
            graphs["crate"]["c"].is_empty(),
            "a test-only file is no edge"
        );
        assert!(!graphs.contains_key("c"), "nor a folder");
    }

    #[test]
    fn each_folder_has_its_own_graph() {
        let graphs = graphs(&[
            ("lib.rs", "pub mod files; mod read;"),
            ("read.rs", ""),
            (
                "files/mod.rs",
                "mod ignore; mod walk; mod error; pub mod load;\n\
                 pub use error::FilesError;\npub use crate::read::SkipReason;",
            ),
            ("files/error.rs", ""),
            (
                "files/ignore.rs",
                "use super::FilesError; fn f() { super::walk::deep(); }",
            ),
            (
                "files/walk.rs",
                "use super::{ignore::Rules, SkipReason}; use crate::files::error::E;",
            ),
            ("files/load/mod.rs", "mod budget; mod pack; use budget::B;"),
            ("files/load/budget.rs", "use super::super::walk::W;"),
            (
                "files/load/pack.rs",
                "use super::budget::Reserve; use crate::files::{load::budget::X, ignore};",
            ),
        ]);
        assert_eq!(deps(&graphs, "crate", "files"), ["read"]);
        assert_eq!(deps(&graphs, "files", "ignore"), ["error", "walk"]);
        assert_eq!(deps(&graphs, "files", "walk"), ["error", "ignore"]);
        assert_eq!(deps(&graphs, "files", "load"), ["ignore", "walk"]);
        assert_eq!(deps(&graphs, "files::load", "pack"), ["budget"]);
        assert!(graphs["files::load"]["budget"].is_empty());
        let files = Folder {
            path: "files".into(),
            graph: graphs["files"].clone(),
        };
        assert_eq!(files.cycles(), [["ignore", "walk"]]);
        assert!(files.render().contains("  ignore -> error, walk\n"));
    }

    #[test]
    fn paths_in_a_two_file_module_and_renames_resolve() {
        let graphs = graphs(&[
            ("lib.rs", "pub mod transport; mod error;"),
            ("error.rs", ""),
            (
                "transport.rs",
                "pub mod http; pub mod auth; pub use auth::Bearer as Tokens;",
            ),
            ("transport/auth.rs", ""),
            ("transport/http.rs", "use super::Tokens; use crate::error;"),
        ]);
        assert_eq!(deps(&graphs, "transport", "http"), ["auth"]);
        assert_eq!(deps(&graphs, "crate", "transport"), ["error"]);
    }
}
