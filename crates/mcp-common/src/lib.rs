//! What every MCP server in this workspace shares, so each one is only its tools.
//!
//! - [`answer`]: [`answer_text`], the one string a model receives of a result.
//! - [`error`]: one enum of error codes and [`create_mcp_error`], the only way a tool
//!   reports a user-facing failure (an `isError` result with code, message, suggestion).
//! - [`result`]: success results from any `Serialize` value, and [`normalize_result`]
//!   for handlers that return plain values.
//! - [`schema`]: tool input schemas trimmed to what a model reads, output schemas
//!   that admit the error object.
//! - [`params`]: tool arguments parsed into INVALID_INPUT errors naming the field,
//!   unknown names refused with a "did you mean".
//! - [`parked`]: a large call's arguments moved past rmcp's parsing, not copied.
//! - [`blocking`]: a tool's CPU-heavy work on the blocking pool.
//! - [`progress`]: throttled, ordered `notifications/progress` from worker threads.
//! - [`metrics`]: Prometheus metrics and the metered tool router every registry uses.
//! - [`transport`]: serving a handler over stdio or streamable HTTP, logging to stderr.

pub mod answer;
pub mod blocking;
pub mod error;
pub mod metrics;
pub mod params;
pub mod parked;
pub mod progress;
pub mod result;
pub mod schema;
pub mod transport;

pub use answer::answer_text;
pub use blocking::run_blocking;
pub use error::{ErrorCode, ToolError, create_mcp_error};
pub use params::parse_params;
pub use result::{Structured, normalize_result, success_result};
pub use schema::{input_schema, output_schema};
