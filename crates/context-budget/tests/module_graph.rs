//! The engine's modules import each other without cycles in every folder, the
//! modules that everything else imports stay leaves (ARCHITECTURE.md, "Leaves stay
//! leaves"), and `files/` keeps the one-way stack its doc describes.
//!
//! The graphs are read from the sources (`test_support::module_graph`): a path
//! through `crate::` or `super::` outside comments and `#[cfg(test)]` modules is an
//! edge between the two sibling modules it connects. A cycle between modules is how
//! a "leaf" stops being one without anyone deciding it. See them all with
//! `cargo test -p context-budget --test tests -- module_graph:: --nocapture`.

use std::path::{Path, PathBuf};

use test_support::module_graph::{self, Folder};

/// Top-level modules that must import nothing of the engine: every other module may
/// lean on them.
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

/// `files/`, bottom to top as `files/mod.rs` lists it: a module imports only from
/// its own level or below.
const FILES_STACK: &[&[&str]] = &[
    &["query", "output", "error", "pack"],
    &["roots", "secrets", "ignore", "open"],
    &["walk", "measure"],
    &["load"],
    &["store"],
    &["persist"],
];

/// `files/load/`, bottom to top as `load/mod.rs` lists it.
const LOAD_STACK: &[&[&str]] = &[
    &["attribution", "rank"],
    &["answer"],
    &["budget"],
    &["packing"],
    &["auto"],
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn folder(path: &str) -> Folder {
    module_graph::folders(&src_dir())
        .into_iter()
        .find(|folder| folder.path == path)
        .unwrap_or_else(|| panic!("no folder {path}"))
}

#[test]
fn every_folder_of_the_engine_imports_without_cycles() {
    module_graph::assert_no_cycles(&src_dir());
}

#[test]
fn the_leaf_modules_import_nothing_of_the_engine() {
    let root = folder("crate");
    for leaf in LEAVES {
        let deps = root
            .graph
            .get(*leaf)
            .unwrap_or_else(|| panic!("no module {leaf}"));
        assert!(
            deps.is_empty(),
            "{leaf} imports {deps:?}\n{}",
            root.render()
        );
    }
}

#[test]
fn the_file_tools_import_only_downwards() {
    assert_stack(&folder("files"), FILES_STACK);
    assert_stack(&folder("files::load"), LOAD_STACK);
}

/// Every module of `folder` has a level in `stack` (a new one must be placed) and
/// imports nothing of a level above its own.
fn assert_stack(folder: &Folder, stack: &[&[&str]]) {
    let level = |module: &str| {
        stack
            .iter()
            .position(|level| level.contains(&module))
            .unwrap_or_else(|| panic!("{}::{module} has no level in the stack", folder.path))
    };
    for (module, deps) in &folder.graph {
        for dep in deps {
            assert!(
                level(dep) <= level(module),
                "{}::{module} imports {dep}, a level above it\n{}",
                folder.path,
                folder.render()
            );
        }
    }
}
