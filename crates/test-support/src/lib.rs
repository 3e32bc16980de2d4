//! Test support shared by every test in the workspace, so that each test file holds
//! only what it asserts:
//!
//! - [`Binary`]: the built server, started over stdio, HTTP (stateful or stateless)
//!   or as a CLI, with extra flags, environment and a readable log;
//! - [`client`]: rmcp's MCP client over each [`Transport`], tool calls and their
//!   results;
//! - [`RawStdio`] and [`http1`]: hand-written JSON-RPC lines and HTTP/1.1 requests,
//!   for tests about exactly what goes over the wire ([`Binary::call_on_the_wire`]:
//!   a tool call's notifications in the order the server sent them);
//! - [`anthropic`]: a fake Anthropic count_tokens API on loopback;
//! - [`discover_only`]: an rmcp server that answers only `server/discover`;
//! - [`fixtures`]: tokenizer.json files the engine's and the server's tests share;
//! - [`messages_api`], [`responses_api`], [`gemini_api`]: scripted stand-ins on
//!   loopback for Anthropic's Messages API, OpenAI's Responses API and Google's
//!   Gemini API, for driving real agents (Claude Code, Codex CLI, Gemini CLI, in
//!   `cargo xtask clients`) against the server;
//! - [`process`]: a server's memory and CPU time, for tests that bound them, SIGTERM,
//!   and a command run under a hang guard;
//! - [`module_graph`]: which modules of a crate import which, per folder, and the cycles;
//! - [`readme`]: the docs' examples as checks (which blocks, how compared, `--bless`) and
//!   their links;
//! - [`stand_in`]: an MCP server on loopback (HTTP, or stdio through a bridge) whose
//!   `tools/list` answer is any bytes: huge, or unreadable;
//! - [`TempTree`]: a test's scratch folder, uniquely named, removed on drop.
//!
//! Integration tests name their binary once:
//! `const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));`
//! (Cargo gives that path only to the binary's own package's tests).

pub mod anthropic;
mod binary;
pub mod client;
pub mod discover_only;
pub mod fixtures;
pub mod gemini_api;
pub mod http1;
pub mod messages_api;
mod model_api;
pub mod module_graph;
pub mod process;
pub mod readme;
pub mod responses_api;
pub mod stand_in;
mod temp_tree;

use std::time::Duration;

pub use binary::{ALL, Binary, Connection, RawStdio, Transport, WireCall};
pub use client::{Client, call, structured, text_json};
pub use temp_tree::TempTree;

/// How long a test waits for a server before failing: a guard against hangs, not a
/// performance claim.
pub const PATIENCE: Duration = Duration::from_secs(30);
