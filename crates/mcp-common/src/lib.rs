//! What every MCP server in this workspace shares, so each one is only its tools.
//!
//! - [`answer`]: [`answer_text`], the one string a model receives of a result.
//! - [`error`]: one enum of error codes and [`create_mcp_error`], the only way a tool
//!   reports a user-facing failure (an `isError` result with code, message, suggestion).
//! - [`result`]: success results from any `Serialize` value, and [`normalize_result`]
//!   for handlers that return plain values.
//! - [`tool`]: schemas from types, argument parsing into INVALID_INPUT errors.
//! - [`progress`]: throttled, ordered `notifications/progress` from worker threads.
//! - [`metrics`]: Prometheus metrics and the metered tool router every registry uses.
//! - [`transport`]: serving a handler over stdio or streamable HTTP, logging to stderr.

pub mod answer;
pub mod error;
pub mod metrics;
pub mod progress;
pub mod result;
pub mod tool;
pub mod transport;

pub use answer::answer_text;
pub use error::{ErrorCode, ToolError, create_mcp_error};
pub use result::{Structured, normalize_result, success_result};
pub use tool::{input_schema, output_schema, parse_params, run_blocking};
