//! `context-loader`: an MCP server (stdio or streamable HTTP) and CLI that tells an
//! agent what text costs in a model's context window before it loads it.
//!
//! A library with a thin binary (`main.rs`). The way in: [`tool::Tool`] is what a tool
//! is, and [`tools`] holds them, one file each, with the one list of them
//! ([`tools::register`]); [`registry::ContextLoader`] serves that list over MCP (both
//! transports) and [`cli`] runs it as shell commands; [`service::Service`] is what
//! every tool runs on; [`config`] turns flags and environment into that service.

pub mod anthropic;
pub mod app;
pub mod call;
pub mod cli;
pub mod client_log;
pub mod config;
pub mod errors;
pub mod http;
pub mod input;
pub mod mcp_servers;
pub mod outside;
pub mod registry;
pub mod roots;
pub mod scan;
pub mod service;
pub mod stdio;
pub mod table;
pub mod tool;
pub mod tools;
pub mod toolset;
