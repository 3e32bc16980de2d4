//! How a scan over many files (specs, file walks) reports progress and learns it
//! should stop: MCP progress notifications and request cancellation for tools, a
//! progress line on a terminal for the CLI.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use context_budget::ScanControl;
use mcp_common::progress::ProgressReporter;
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

/// A scan's progress and cancellation, shared with the blocking-pool thread.
pub type SharedScan = Arc<dyn ScanControl + Send + Sync>;

/// A scan serving one MCP request.
pub struct RequestScan {
    cancelled: CancellationToken,
    progress: Option<ProgressReporter>,
}

impl RequestScan {
    /// Must be called on the runtime (progress sending is spawned there).
    pub fn new(context: &RequestContext<RoleServer>) -> RequestScan {
        RequestScan {
            cancelled: context.ct.clone(),
            progress: ProgressReporter::from_context(context),
        }
    }
}

impl ScanControl for RequestScan {
    fn progress(&self, done: usize, total: usize) {
        if let Some(progress) = &self.progress {
            progress.report(done as u64, total as u64);
        }
    }

    fn is_cancelled(&self) -> bool {
        self.cancelled.is_cancelled()
    }
}

/// A scan run from the command line: `measuring 1234/5001 files` on stderr when it
/// is a terminal and the scan takes a while; silent otherwise (scripts, pipes).
pub struct TerminalScan {
    started: Instant,
    shown: Mutex<Option<Instant>>,
    enabled: bool,
}

impl Default for TerminalScan {
    fn default() -> Self {
        TerminalScan::new()
    }
}

impl TerminalScan {
    pub fn new() -> TerminalScan {
        TerminalScan {
            started: Instant::now(),
            shown: Mutex::new(None),
            enabled: std::io::stderr().is_terminal(),
        }
    }

    /// Clear the progress line before printing results.
    pub fn finish(&self) {
        if let Ok(shown) = self.shown.lock()
            && shown.is_some()
        {
            eprint!("\r\x1b[2K");
        }
    }
}

impl ScanControl for TerminalScan {
    fn progress(&self, done: usize, total: usize) {
        // Short scans print nothing; then at most ten updates a second.
        if !self.enabled || self.started.elapsed() < Duration::from_millis(300) {
            return;
        }
        let Ok(mut shown) = self.shown.lock() else {
            return;
        };
        if shown.is_some_and(|at| at.elapsed() < Duration::from_millis(100)) && done < total {
            return;
        }
        *shown = Some(Instant::now());
        let width = 30;
        let filled = (done * width).checked_div(total).unwrap_or(width);
        eprint!(
            "\r[{}{}] measuring {done}/{total} files",
            "#".repeat(filled),
            " ".repeat(width - filled)
        );
        let _ = std::io::stderr().flush();
    }
}
