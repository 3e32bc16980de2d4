//! The engine's integration tests, one module per area, in one binary
//! (`cargo test -p context-budget --test tests -- <module>::`).

mod differential;
mod files;
mod module_graph;
mod outline;
mod spec_races;
mod specs;
mod tokenizer_references;
mod tool_defs;
