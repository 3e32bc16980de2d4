//! The integration tests of context-loader, one module per area, in one binary
//! (`cargo test -p context-loader --test tests -- <module>::`).

mod abuse;
mod abuse_engine;
mod abuse_serving;
mod abuse_tokenizers;
mod answers;
mod app;
mod app_browser;
mod architecture;
mod behind_nginx;
mod budgeting;
mod cli_help;
mod e2e;
mod e2e_files;
mod e2e_specs;
mod faults;
mod fidelity;
mod fidelity_specs;
mod hardening;
mod mcp_tokens;
mod models;
mod module_graph;
mod outline;
mod readme;
mod tool_list;
