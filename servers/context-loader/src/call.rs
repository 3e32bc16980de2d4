//! One tool call's context, from MCP or the command line: its cancellation, its
//! progress, and the client's roots. The service runs work under it; tools pass it on.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

use crate::roots::RequestRoots;
use crate::scan::{RequestScan, SharedScan};

/// One call's context: cancellation, progress, and the client's roots.
#[derive(Clone)]
pub struct Call {
    /// Cancelled with the request (MCP `notifications/cancelled`).
    pub cancelled: CancellationToken,
    /// Progress and cancellation for scans over many files.
    pub scan: SharedScan,
    /// The MCP request, to ask the client for its roots (none on the CLI).
    request: Option<RequestContext<RoleServer>>,
}

impl Call {
    /// A call serving an MCP request (on the runtime: progress is sent from there).
    pub fn request(context: &RequestContext<RoleServer>) -> Call {
        Call {
            cancelled: context.ct.clone(),
            scan: Arc::new(RequestScan::new(context)),
            request: Some(context.clone()),
        }
    }

    /// A call from the command line: never cancelled, progress on the terminal.
    pub fn command_line(scan: SharedScan) -> Call {
        Call {
            cancelled: CancellationToken::new(),
            scan,
            request: None,
        }
    }

    /// The folders the client offered (MCP roots), which narrow the server's; `None`
    /// when it offered none (always on the CLI). Asked only by tools that read files.
    pub async fn client_roots(&self) -> Option<Vec<PathBuf>> {
        match &self.request {
            Some(context) => RequestRoots::of(context).await.0,
            None => None,
        }
    }
}
