//! mcp-common's integration tests in one binary; `common` is their shared server.

mod common;
mod module_graph;
mod normalize;
mod shutdown;
