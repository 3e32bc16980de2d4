//! `context-loader`: an MCP server (stdio or streamable HTTP) and CLI that tells an
//! agent what text costs in a model's context window before it loads it.
//!
//! A library with a thin binary (`main.rs`), so tests can run the tools and the CLI's
//! rendering in-process. The way in: [`service::Service`] runs every tool (the
//! registry and the CLI both call it); [`tools`] are the MCP adapters;
//! [`registry::ContextLoader`] is the handler both transports serve.

pub mod anthropic;
pub mod cli;
pub mod client_log;
pub mod errors;
pub mod http;
pub mod registry;
pub mod roots;
pub mod scan;
pub mod service;
pub mod stdio;
pub mod tools;
