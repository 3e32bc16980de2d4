//! The orders files take ([`by_order`]), and the rank of `order: "mentioned"`, the
//! one `detail: "auto"` takes unless asked for another: a file whose names other
//! files mention ranks high (Aider's repository map, reduced to an in-degree).
//!
//! - A file's names are its module name (its stem, or its folder's for `mod.rs`,
//!   `lib.rs`, `index.js`, `__init__.py`) and the names its top-level lines declare
//!   (the identifier after `fn`, `struct`, `class`, `def`, `func`, `interface`, ...).
//!   Its top-level lines ([`top_level_lines`]) are, for source code in a language
//!   with an outline, the lines not indented (where an outline keeps declarations,
//!   and no function body is); Markdown's headings; none for other files. A line
//!   scan, no parser: ranking a tree costs one pass over its text, and only the
//!   files the budget can show are parsed for their outlines.
//! - A test, example or fixture (by folder or name) declares none, though what it
//!   mentions counts for the files it uses.
//! - What a file mentions: identifiers that read as code ([`mentions`]).
//! - Its rank is how many other files mention one of its names, each file counting
//!   once with its weightiest name ([`DISTINCT_WEIGHT`] for a distinct one). A name
//!   declared by more than [`MAX_DECLARING_FILES`] files (`new`, `tests`, `main`)
//!   says nothing of which file is meant and is not counted.
//! - Ties go to the shallower path, then the smaller file, then the path; so do
//!   `order: "recent"`'s, the files last modified first.
//!
//! Bounded: names of [`MIN_NAME_BYTES`] to [`MAX_NAME_BYTES`] bytes, at most
//! [`MAX_DECLARED`] declared and [`MAX_MENTIONED`] distinct names mentioned per
//! file and [`MAX_MENTIONED_TOTAL`] per call, read from the file's text, which the
//! file limits already bound; the counting looks at cancellation every
//! [`CHECK_EVERY_FILES`] files. A leaf of `load/`: text in, numbers out.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::SystemTime;

use crate::files::pack::PackOrder;

/// Shortest name counted: shorter ones (`id`, `x`, `Ok`) are everywhere.
pub(super) const MIN_NAME_BYTES: usize = 3;
/// Longest name counted.
pub(super) const MAX_NAME_BYTES: usize = 64;
/// Names one file declares, at most.
pub(super) const MAX_DECLARED: usize = 256;
/// Distinct names one file mentions, at most.
pub(super) const MAX_MENTIONED: usize = 8_192;
/// Distinct names all files of one call mention together, at most: files past it
/// rank by what they declare alone.
pub(super) const MAX_MENTIONED_TOTAL: usize = 4_000_000;
/// A name declared by more files than this is not counted.
pub(super) const MAX_DECLARING_FILES: usize = 2;
/// Files counted between two looks at cancellation.
const CHECK_EVERY_FILES: usize = 256;

/// Words after which an outline line declares a name, across the outlined
/// languages.
const DECLARING: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "union",
    "macro_rules",
    "class",
    "def",
    "function",
    "interface",
    "func",
    "const",
    "static",
    "record",
    "namespace",
];

/// Folders whose files no other file names: a test's or an example's stem (`files`
/// in `tests/files.rs`) is not the module others mention, nor are its functions
/// what others call.
const UNNAMED_FOLDERS: &[&str] = &[
    "tests",
    "test",
    "__tests__",
    "examples",
    "benches",
    "fixtures",
    "corpus",
];

/// Path parts that name no module of their own: the folder above does.
const NAMELESS: &[&str] = &["mod", "lib", "main", "index", "__init__", "src", "init"];

/// What ranking needs of one file, each name held as its hash (eight bytes, however
/// long the name: a tree's names held at once stay small).
#[derive(Debug, Default, Clone)]
pub(super) struct Signals {
    /// Names the file declares (its module name first), each with its weight
    /// ([`weight`]).
    pub(super) declared: Vec<(u64, u32)>,
    /// Names it mentions.
    pub(super) mentioned: HashSet<u64>,
}

fn hash(name: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    name.hash(&mut hasher);
    hasher.finish()
}

/// Which of a file's lines declare its names, by its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TopLevel {
    /// None: a file without declarations (text, data, configuration).
    None,
    /// Source code: the lines that are not indented (a method's or a local's name,
    /// `get`, `insert`, says little of which file is meant).
    Code,
    /// Markdown: its headings.
    Headings,
}

/// The lines of `text` that are its top level, by `kind`.
pub(super) fn top_level_lines(text: &str, kind: TopLevel) -> impl Iterator<Item = &str> {
    text.lines().filter(move |line| match kind {
        TopLevel::None => false,
        TopLevel::Code => line.starts_with(|c: char| !c.is_whitespace()),
        TopLevel::Headings => line.starts_with('#'),
    })
}

/// The [`Signals`] of the file at `path`: its `text` and its `top_level` lines
/// ([`top_level_lines`]).
pub(super) fn signals<'a>(
    path: &str,
    text: &str,
    top_level: impl Iterator<Item = &'a str>,
) -> Signals {
    let mut declared = Vec::new();
    // What a test declares (`block_on`, `setup`) is what the code it tests declares
    // as methods, which are not counted: the test would take their mentions.
    let testing = is_test(path);
    declared.extend(module_name(path).map(|name| (hash(&name), weight(&name))));
    let top_level = top_level.filter(|_| !testing);
    for line in top_level {
        // What comes before a parameter list, a type, a value or a body:
        // `std::size_t total(const std::string& s)` declares no `std`.
        let head = line
            .strip_prefix("pub(")
            .and_then(|rest| rest.split_once(')'))
            .map_or(line, |(_, rest)| rest);
        let head = &head[..head
            .find(['(', '=', ':', '{', '<', ';'])
            .unwrap_or(head.len())];
        let mut words = identifiers(head).peekable();
        while let Some(word) = words.next() {
            if declared.len() >= MAX_DECLARED {
                break;
            }
            // `pub const fn f`, `enum class E`: the last of the words names it.
            if !DECLARING.contains(&word) || words.peek().is_some_and(|w| DECLARING.contains(w)) {
                continue;
            }
            if let Some(name) = words.next().filter(|n| counted(n))
                && !declared.iter().any(|d| d.0 == hash(name))
            {
                declared.push((hash(name), weight(name)));
            }
        }
    }
    let mut mentioned = HashSet::new();
    for word in mentions(text) {
        if mentioned.len() >= MAX_MENTIONED {
            break;
        }
        mentioned.insert(hash(word));
    }
    Signals {
        declared,
        mentioned,
    }
}

/// How much a mention of `name` says: [`DISTINCT_WEIGHT`] for a name no prose or
/// other library would have (`load_files`, `FileStore`, `context_budget`), 1 for
/// the rest (`Value`, `Mode`, `walk`).
fn weight(name: &str) -> u32 {
    let inner_underscore = name.trim_matches('_').contains('_');
    let camel = name
        .as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    match (inner_underscore || camel) && name.len() >= 8 {
        true => DISTINCT_WEIGHT,
        false => 1,
    }
}

/// The weight of a distinct name's mention against a plain one's (Aider's repo map
/// weighs them the same way).
pub(super) const DISTINCT_WEIGHT: u32 = 10;

/// For each file, its rank: over the other files that mention one of its names,
/// the weight of the weightiest name each mentions; `None` once `cancelled` says
/// so.
pub(super) fn in_degree(files: &[Signals], cancelled: &dyn Fn() -> bool) -> Option<Vec<u32>> {
    let mut declaring: HashMap<u64, Vec<(u32, u32)>> = HashMap::new();
    for (i, file) in files.iter().enumerate() {
        for &(name, weight) in &file.declared {
            let list = declaring.entry(name).or_default();
            if list.len() <= MAX_DECLARING_FILES {
                list.push((i as u32, weight));
            }
        }
    }
    declaring.retain(|_, files| files.len() <= MAX_DECLARING_FILES);
    let mut degree = vec![0u32; files.len()];
    // The last file counted as mentioning each file, and the weight it gave: each
    // file gives another at most its weightiest mention.
    let mut last = vec![(u32::MAX, 0u32); files.len()];
    for (j, file) in files.iter().enumerate() {
        if j % CHECK_EVERY_FILES == 0 && cancelled() {
            return None;
        }
        for word in &file.mentioned {
            let Some(targets) = declaring.get(word) else {
                continue;
            };
            for &(i, weight) in targets {
                let i = i as usize;
                if i == j {
                    continue;
                }
                let given = match last[i].0 == j as u32 {
                    true => last[i].1,
                    false => 0,
                };
                if weight > given {
                    degree[i] += weight - given;
                    last[i] = (j as u32, weight);
                }
            }
        }
    }
    Some(degree)
}

/// What the orders sort one file by.
#[derive(Debug, Clone, Copy)]
pub(super) struct Key<'a> {
    pub(super) root: usize,
    pub(super) path: &'a str,
    pub(super) tokens: u64,
    /// When it was last modified, as the handle opened to measure it said.
    pub(super) modified: Option<SystemTime>,
    /// Its rank ([`in_degree`]), read by [`PackOrder::Mentioned`] alone.
    pub(super) degree: u32,
}

/// The order of `files` (their indices) by `order`, every sort stable: `given` as
/// they are; `smallest` the fewer tokens first, then the path; `path` by root, then
/// path; `mentioned` the higher rank first; `recent` the latest modified first (an
/// unknown time last). The last two tie alike ([`ties`]).
pub(super) fn by_order(order: PackOrder, files: &[Key<'_>]) -> Vec<usize> {
    let mut sequence: Vec<usize> = (0..files.len()).collect();
    let compare: fn(&Key<'_>, &Key<'_>) -> Ordering = match order {
        PackOrder::Given => return sequence,
        PackOrder::Smallest => |a, b| a.tokens.cmp(&b.tokens).then_with(|| a.path.cmp(b.path)),
        PackOrder::Path => |a, b| (a.root, a.path).cmp(&(b.root, b.path)),
        PackOrder::Mentioned => |a, b| b.degree.cmp(&a.degree).then_with(|| ties(a, b)),
        // `None < Some`: compared the other way round, an unknown time goes last.
        PackOrder::Recent => |a, b| b.modified.cmp(&a.modified).then_with(|| ties(a, b)),
    };
    sequence.sort_by(|&a, &b| compare(&files[a], &files[b]));
    sequence
}

/// How files of one rank or time follow each other: the shallower path (a crate's
/// `lib.rs` before its modules), then the fewer tokens, then the path.
fn ties(a: &Key<'_>, b: &Key<'_>) -> Ordering {
    let depth = |k: &Key<'_>| k.path.matches('/').count();
    depth(a)
        .cmp(&depth(b))
        .then_with(|| a.tokens.cmp(&b.tokens))
        .then_with(|| a.path.cmp(b.path))
}

/// The module a path names: its stem, or for `mod.rs`, `lib.rs`, `index.js`,
/// `__init__.py` and the like the nearest folder above that is not `src`; `-`
/// read as `_` (`context-budget` is the crate `context_budget`).
fn module_name(path: &str) -> Option<String> {
    if is_test(path) {
        return None;
    }
    let mut parts = path.rsplit('/');
    let file = parts.next()?;
    let stem = file.split('.').next().unwrap_or(file);
    let name = std::iter::once(stem)
        .chain(parts)
        .find(|part| !NAMELESS.contains(part))?;
    let name = name.replace('-', "_");
    counted(&name).then_some(name)
}

/// A test's, an example's or a fixture's path: in such a folder, or named as tests
/// are (`test_x.py`, `x_test.go`, `x_tests.rs`, `x.test.ts`, `x.spec.js`).
fn is_test(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    path.split('/').any(|part| UNNAMED_FOLDERS.contains(&part))
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || file.contains(".test.")
        || file.contains(".spec.")
}

fn counted(name: &str) -> bool {
    (MIN_NAME_BYTES..=MAX_NAME_BYTES).contains(&name.len())
}

/// The names `text` mentions as code rather than as prose: an identifier with an
/// upper-case letter or an underscore, or of at least [`DISTINCT_NAME_BYTES`]
/// bytes (`FileStore`, `load_files`, `tokenizer`); any other only as a path's part
/// (`rank::`, `::rank`, `./rank`, `rank.py`) or after `import`, `from`, `mod`,
/// `use`, `require`. Short lower-case names (`walk`, `code`, `tree`, `load`) are
/// English words and every file's helpers: "walk the code" or a local `tree()`
/// is no reference.
fn mentions(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut previous: &str = "";
    identifier_spans(text).filter_map(move |(start, end)| {
        let word = &text[start..end];
        let before = &bytes[..start];
        let after = &bytes[end..];
        let strong = word.len() >= DISTINCT_NAME_BYTES
            || word.bytes().any(|b| b == b'_' || b.is_ascii_uppercase())
            || after.starts_with(b"::")
            || before.ends_with(b"::")
            || before.ends_with(b"/")
            || (after.first() == Some(&b'.') && after.get(1).is_some_and(u8::is_ascii_alphabetic))
            || (before.ends_with(b" ")
                && ["import", "from", "mod", "use", "require"].contains(&previous));
        previous = word;
        (strong && counted(word)).then_some(word)
    })
}

/// A lower-case name without an underscore this long is taken for code wherever
/// it appears.
const DISTINCT_NAME_BYTES: usize = 8;

/// Where the identifiers of `text` (`[A-Za-z_][A-Za-z0-9_]*`) are, in order.
fn identifier_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            while at < bytes.len() && !word(bytes[at]) {
                at += 1;
            }
            let start = at;
            while at < bytes.len() && word(bytes[at]) {
                at += 1;
            }
            if start < at && !bytes[start].is_ascii_digit() {
                return Some((start, at));
            }
        }
        None
    })
}

/// The identifiers of `text` (`[A-Za-z_][A-Za-z0-9_]*`), in order.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.as_bytes().first().is_some_and(|b| !b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(path: &str, text: &str) -> Signals {
        signals(path, text, top_level_lines(text, TopLevel::Code))
    }

    #[test]
    fn top_level_lines_are_unindented_code_or_headings() {
        let text = "/// Doc.\npub fn f() {\n    let local = 1;\n}\n\n# Title\n";
        let lines: Vec<&str> = top_level_lines(text, TopLevel::Code).collect();
        assert_eq!(lines, ["/// Doc.", "pub fn f() {", "}", "# Title"]);
        let headings: Vec<&str> = top_level_lines(text, TopLevel::Headings).collect();
        assert_eq!(headings, ["# Title"]);
        assert_eq!(top_level_lines(text, TopLevel::None).count(), 0);
        // A name declared inside a body (indented) is not the file's.
        let s = code("src/walker.rs", "fn outer() {\n    fn inner_name() {}\n}\n");
        assert_eq!(s.declared.len(), 2, "walker and outer: {:?}", s.declared);
    }

    #[test]
    fn module_names_skip_nameless_parts() {
        assert_eq!(module_name("src/walk.rs").as_deref(), Some("walk"));
        assert_eq!(
            module_name("crates/context-budget/src/lib.rs").as_deref(),
            Some("context_budget")
        );
        assert_eq!(module_name("files/mod.rs").as_deref(), Some("files"));
        assert_eq!(module_name("pkg/__init__.py").as_deref(), Some("pkg"));
        assert_eq!(module_name("a.rs"), None, "too short to count");
        assert_eq!(module_name("tests/files.rs"), None);
        let test = code("src/time/tests/mod.rs", "fn block_on() {}");
        assert!(test.declared.is_empty(), "a test declares nothing");
        assert!(
            is_test("pkg/io_test.go") && is_test("src/a.spec.ts") && !is_test("src/testing.rs")
        );
    }

    #[test]
    fn a_file_whose_names_others_mention_ranks_first() {
        let core = code(
            "src/core.rs",
            "pub struct Engine;\npub fn start_engine() {\n    body_only_name();\n}\n",
        );
        let user = |body: &str| code("src/user.rs", body);
        let files = vec![
            code("tests/corpus.py", "def unused(): pass"),
            user("use crate::core::Engine;"),
            user("fn go() {\n    start_engine()\n}"),
            core,
        ];
        let degree = in_degree(&files, &|| false).unwrap();
        // `start_engine` is distinct (10), `Engine` and `core` are not (1 each).
        assert_eq!(degree, [0, 0, 0, 1 + DISTINCT_WEIGHT]);
        let paths = [
            "tests/corpus.py",
            "src/user.rs",
            "src/user.rs",
            "src/core.rs",
        ];
        let keys = keys(&paths, &[9, 1, 2, 50], &degree, &[None; 4]);
        assert_eq!(by_order(PackOrder::Mentioned, &keys)[0], 3);
        assert!(in_degree(&files, &|| true).is_none(), "cancelled");
    }

    fn keys<'a>(
        paths: &[&'a str],
        tokens: &[u64],
        degree: &[u32],
        modified: &[Option<SystemTime>],
    ) -> Vec<Key<'a>> {
        (0..paths.len())
            .map(|i| Key {
                root: 0,
                path: paths[i],
                tokens: tokens[i],
                modified: modified[i],
                degree: degree[i],
            })
            .collect()
    }

    #[test]
    fn each_order_sorts_by_its_key_and_recent_ties_as_the_rank() {
        let at = |secs: u64| Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs));
        let paths = ["b/deep/x.rs", "a.rs", "c.rs", "b/y.rs"];
        let tokens = [5, 30, 10, 20];
        let degree = [4, 0, 9, 1];
        // `a.rs` and `c.rs` were modified together: the fewer tokens first.
        let modified = [at(10), at(50), at(50), None];
        let keys = keys(&paths, &tokens, &degree, &modified);
        assert_eq!(by_order(PackOrder::Given, &keys), [0, 1, 2, 3]);
        assert_eq!(by_order(PackOrder::Smallest, &keys), [0, 2, 3, 1]);
        assert_eq!(by_order(PackOrder::Path, &keys), [1, 0, 3, 2]);
        assert_eq!(by_order(PackOrder::Mentioned, &keys), [2, 0, 3, 1]);
        assert_eq!(by_order(PackOrder::Recent, &keys), [2, 1, 0, 3]);
    }

    #[test]
    fn names_declared_everywhere_are_not_counted_and_lists_are_bounded() {
        let common = |path: &str| code(path, "fn new() {}");
        let files: Vec<Signals> = (0..5).map(|i| common(&format!("f{i}.rs"))).collect();
        assert_eq!(in_degree(&files, &|| false).unwrap(), [0; 5]);
        let many: String = (0..20_000)
            .map(|i| format!("fn name{i}() {{}}\n"))
            .collect();
        let s = code("big.rs", &many);
        assert_eq!(s.declared.len(), MAX_DECLARED);
        assert_eq!(s.mentioned.len(), MAX_MENTIONED);
    }
}
