//! How a scan over many files (specs, file walks) reports progress and learns it
//! should stop: MCP progress notifications and request cancellation for tools, a
//! progress line on a terminal for the CLI.

use std::io::IsTerminal;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use context_budget::ScanControl;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_common::progress::ProgressReporter;
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

/// A scan's progress and cancellation, shared with the blocking-pool thread.
pub type SharedScan = Arc<dyn ScanControl + Send + Sync>;

/// A scan serving one MCP request.
pub struct RequestScan {
    cancelled: CancellationToken,
    progress: Option<Arc<ProgressReporter>>,
}

impl RequestScan {
    /// Reports to `progress` (`None`: the client asked for none).
    pub fn new(
        context: &RequestContext<RoleServer>,
        progress: Option<Arc<ProgressReporter>>,
    ) -> RequestScan {
        RequestScan {
            cancelled: context.ct.clone(),
            progress,
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

/// A scan run from the command line: a progress bar of files measured on stderr when
/// it is a terminal and the scan takes a while; nothing otherwise (scripts, pipes).
pub struct TerminalScan {
    started: Instant,
    bar: OnceLock<ProgressBar>,
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
            bar: OnceLock::new(),
            enabled: std::io::stderr().is_terminal(),
        }
    }

    /// Clear the progress bar before printing results.
    pub fn finish(&self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }
}

impl ScanControl for TerminalScan {
    fn progress(&self, done: usize, total: usize) {
        // Short scans draw nothing.
        if !self.enabled || self.started.elapsed() < Duration::from_millis(300) {
            return;
        }
        let bar = self.bar.get_or_init(|| {
            let style = ProgressStyle::with_template("[{bar:30}] measuring {pos}/{len} files")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("#> ");
            ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr())
                .with_style(style)
        });
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    }
}
