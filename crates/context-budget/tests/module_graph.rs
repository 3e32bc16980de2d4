//! The engine's top-level modules form a graph without cycles, and the modules that
//! everything else imports stay leaves (ARCHITECTURE.md, "Leaves stay leaves").
//!
//! Read from the sources, not the compiler: a `crate::x` path outside comments and
//! `#[cfg(test)]` modules is an edge to `x`, and a name the crate root re-exports
//! (`crate::Tokenizer`) is an edge to the module that defines it. A cycle between
//! modules is how a "leaf" stops being one without anyone deciding it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Modules that must import nothing of the engine: every other module may lean on them.
const LEAVES: &[&str] = &[
    "limits",
    "safe_open",
    "suggest",
    "claude",
    "huggingface",
    "sentencepiece",
    "read",
    "fan_out",
    "scan_control",
];

#[test]
fn the_engine_modules_import_each_other_without_cycles() {
    let graph = module_graph();
    // The graph itself, for `cargo test -p context-budget --test tests -- module_graph:: --nocapture`.
    println!("{}", render(&graph));
    let cycles = cycles(&graph);
    assert!(
        cycles.is_empty(),
        "cycles among the engine's top-level modules: {cycles:?}\n{}",
        render(&graph)
    );
}

#[test]
fn the_leaf_modules_import_nothing_of_the_engine() {
    let graph = module_graph();
    for leaf in LEAVES {
        let deps = graph
            .get(*leaf)
            .unwrap_or_else(|| panic!("no module {leaf}"));
        assert!(
            deps.is_empty(),
            "{leaf} imports {deps:?}\n{}",
            render(&graph)
        );
    }
}

#[test]
fn the_reader_finds_edges_through_groups_and_re_exports() {
    let re_exports = BTreeMap::from([("Tokenizer".to_string(), "tokenizer".to_string())]);
    let source = "use crate::{cache::Stamp, counter::{usd, X}, Tokenizer};\n\
                  // crate::fit in a comment is no edge\n\
                  fn f() { crate::limits::check(); }\n\
                  #[cfg(test)]\nmod tests { use crate::assemble; }\n";
    let deps = edges(source, &re_exports);
    assert_eq!(
        deps,
        BTreeSet::from(["cache", "counter", "limits", "tokenizer"].map(String::from))
    );
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Top-level module name → the other top-level modules it uses.
fn module_graph() -> Graph {
    let src = src_dir();
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let re_exports = re_exports(&lib);
    let mut graph = Graph::new();
    for entry in std::fs::read_dir(&src).expect("src/") {
        let path = entry.expect("entry").path();
        let Some(name) = module_name(&path) else {
            continue;
        };
        let mut deps = BTreeSet::new();
        for file in rust_files(&path) {
            let source = std::fs::read_to_string(&file).expect("source");
            deps.extend(edges(&source, &re_exports));
        }
        deps.remove(&name);
        graph.insert(name, deps);
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    graph
}

fn module_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?.to_string();
    let is_module = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
    (is_module && stem != "lib").then_some(stem)
}

fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).expect("module folder") {
        files.extend(rust_files(&entry.expect("entry").path()));
    }
    files.retain(|f| f.extension().is_some_and(|e| e == "rs"));
    files
}

/// `pub use module::{A, B};` at the crate root: which module each re-exported name is from.
fn re_exports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for statement in code_only(lib).split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        for name in names.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !name.is_empty() {
                map.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    map
}

/// The top-level modules a source file refers to through `crate::`.
fn edges(source: &str, re_exports: &BTreeMap<String, String>) -> BTreeSet<String> {
    let code = code_only(source);
    let mut deps = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let names = match rest.strip_prefix('{') {
            Some(group) => top_level_items(group),
            None => vec![identifier(rest)],
        };
        for name in names {
            match re_exports.get(name) {
                Some(module) => deps.insert(module.clone()),
                None => deps.insert(name.to_string()),
            };
        }
    }
    deps
}

/// The first identifier of each item of a `{...}` use group (up to its closing brace).
fn top_level_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = true,
            c if item_start && (c.is_alphanumeric() || c == '_') => {
                items.push(identifier(&group[i..]));
                item_start = false;
            }
            _ => {}
        }
    }
    items
}

fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The source without `//` comments and without the `#[cfg(test)]` module at its end.
fn code_only(source: &str) -> String {
    let mut code = String::new();
    for line in source.lines() {
        let line = line.split("//").next().unwrap_or_default();
        code.push_str(line);
        code.push('\n');
    }
    match code.find("#[cfg(test)]\nmod ") {
        Some(at) => code[..at].to_string(),
        None => code,
    }
}

/// Every strongly connected group of two or more modules (Tarjan's algorithm).
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
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
        for next in &state.graph[node] {
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

fn render(graph: &Graph) -> String {
    let mut text = String::new();
    for (module, deps) in graph {
        let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
        text.push_str(&format!("{module:>14} -> {}\n", deps.join(", ")));
    }
    text
}
