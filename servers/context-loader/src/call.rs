//! One tool call's context, from MCP or the command line: its cancellation, its
//! progress, the client's roots, and the limit its answer is held to (its client's,
//! `context_budget::clients`). The service runs work under it; tools pass it on.

use std::path::PathBuf;
use std::sync::Arc;

use context_budget::AnswerLimit;
use mcp_common::progress::ProgressReporter;
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

use crate::roots::{RequestRoots, SessionRoots};
use crate::scan::{RequestScan, SharedScan};

/// One call's context: cancellation, progress, the client's roots, the answer limit.
#[derive(Clone)]
pub struct Call {
    /// What this call's answer is held to: its client's limit, or the flags'.
    pub answer_limit: AnswerLimit,
    /// Cancelled with the request (MCP `notifications/cancelled`).
    pub cancelled: CancellationToken,
    /// Progress and cancellation for scans over many files.
    pub scan: SharedScan,
    /// Where `scan`'s progress goes when the client asked for it.
    progress: Option<Arc<ProgressReporter>>,
    /// The MCP request, to ask the client for its roots (none on the CLI).
    request: Option<RequestContext<RoleServer>>,
    /// What the session knows of its client's roots.
    session_roots: SessionRoots,
}

impl Call {
    /// A call serving an MCP request (on the runtime: progress is sent from there),
    /// its answer held to `answer_limit`, in a session that knows `session_roots`.
    pub fn request(
        context: &RequestContext<RoleServer>,
        answer_limit: AnswerLimit,
        session_roots: SessionRoots,
    ) -> Call {
        let progress = ProgressReporter::from_context(context).map(Arc::new);
        Call {
            answer_limit,
            cancelled: context.ct.clone(),
            scan: Arc::new(RequestScan::new(context, progress.clone())),
            progress,
            request: Some(context.clone()),
            session_roots,
        }
    }

    /// A call from the command line: never cancelled, progress on the terminal.
    pub fn command_line(scan: SharedScan, answer_limit: AnswerLimit) -> Call {
        Call {
            answer_limit,
            cancelled: CancellationToken::new(),
            scan,
            progress: None,
            request: None,
            session_roots: SessionRoots::default(),
        }
    }

    /// Wait until the progress reported so far is on its way to the client, so that
    /// none of it follows the answer (MCP: progress stops once the request completes).
    pub async fn progress_sent(&self) {
        if let Some(progress) = &self.progress {
            progress.sent().await;
        }
    }

    /// The folders the client offered (MCP roots), which narrow the server's; `None`
    /// when it offered none (always on the CLI). Asked only by tools that read files.
    pub async fn client_roots(&self) -> Option<Vec<PathBuf>> {
        match &self.request {
            Some(context) => RequestRoots::of(context, &self.session_roots).await.0,
            None => None,
        }
    }
}
