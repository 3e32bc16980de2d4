//! MCP logging: the warnings a result carries (an exact-count fallback, a skipped
//! file, a broken spec in a listing) also go to the client as `notifications/message`,
//! at the level the session asked for with `logging/setLevel`.
//!
//! A warning stays in the result too: the model reads results, a client's log pane
//! reads notifications. They are sent before the result, on the call's own stream,
//! so stdio, stateful and stateless HTTP all deliver them; but stateless HTTP has no
//! session, so a level set there lasts for that one request (later calls log at the
//! default, warning).

// rmcp marks the logging types deprecated (SEP-2577 drops logging from a future
// protocol revision); the protocol versions served here still have it.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use context_budget::spec::{SpecBudget, SpecTokens};
use context_budget::{FittedMessages, TokenCount};
use mcp_common::ToolError;
use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::RequestContext;

/// Most warnings one call sends; the rest are summed up in one more message, so a
/// listing of thousands of broken specs cannot flood the client.
pub const MAX_MESSAGES_PER_CALL: usize = 20;

/// The level a session logs at. Before any `logging/setLevel`: warning (the
/// product's own messages are all warnings, so a client that never asks still
/// sees them; one that sets `error` or higher sees none).
#[derive(Debug, Clone)]
pub struct ClientLog {
    level: Arc<AtomicU8>,
}

impl Default for ClientLog {
    fn default() -> Self {
        ClientLog {
            level: Arc::new(AtomicU8::new(severity(LoggingLevel::Warning))),
        }
    }
}

/// RFC 5424 order, lowest first, as MCP defines its levels.
fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl ClientLog {
    /// `logging/setLevel`: messages below `level` are no longer sent.
    pub fn set_level(&self, level: LoggingLevel) {
        self.level.store(severity(level), Ordering::Relaxed);
    }

    fn enabled(&self, level: LoggingLevel) -> bool {
        severity(level) >= self.level.load(Ordering::Relaxed)
    }

    /// Send the warnings of `result` (from tool `tool`) to the session's client.
    /// A client that has gone away is not an error of the call.
    pub async fn forward<T: Warnings>(
        &self,
        context: &RequestContext<RoleServer>,
        tool: &str,
        result: &Result<mcp_common::Structured<T>, ToolError>,
    ) {
        let Ok(mcp_common::Structured(output)) = result else {
            return;
        };
        if !self.enabled(LoggingLevel::Warning) {
            return;
        }
        let warnings = output.warnings();
        let more = warnings.len().saturating_sub(MAX_MESSAGES_PER_CALL);
        let shown = warnings.into_iter().take(MAX_MESSAGES_PER_CALL);
        let summary = (more > 0).then(|| format!("… and {more} more warnings in the result"));
        for message in shown.chain(summary) {
            let param = LoggingMessageNotificationParam::new(
                LoggingLevel::Warning,
                serde_json::Value::String(message),
            )
            .with_logger(tool);
            if context.peer.notify_logging_message(param).await.is_err() {
                return;
            }
        }
    }
}

/// What in a tool's output is a warning worth a client's log: something went
/// differently from what was asked (a fallback, a file not counted, a broken spec).
pub trait Warnings {
    fn warnings(&self) -> Vec<String>;
}

impl Warnings for TokenCount {
    fn warnings(&self) -> Vec<String> {
        self.warning.iter().cloned().collect()
    }
}

impl Warnings for FittedMessages {
    fn warnings(&self) -> Vec<String> {
        self.warning.iter().cloned().collect()
    }
}

impl Warnings for SpecTokens {
    fn warnings(&self) -> Vec<String> {
        match self {
            SpecTokens::Spec(report) => report.notes.clone(),
            SpecTokens::Listing(listing) => {
                let rows = listing.specs.iter().flat_map(|row| {
                    let error = row.error.iter();
                    error
                        .chain(&row.notes)
                        .map(|message| format!("{}: {message}", row.spec))
                });
                rows.chain(listing.notes.iter().cloned()).collect()
            }
        }
    }
}

impl Warnings for SpecBudget {
    fn warnings(&self) -> Vec<String> {
        self.notes.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_filter_by_severity() {
        let log = ClientLog::default();
        assert!(log.enabled(LoggingLevel::Warning));
        assert!(!log.enabled(LoggingLevel::Info));
        log.set_level(LoggingLevel::Error);
        assert!(!log.enabled(LoggingLevel::Warning));
        log.set_level(LoggingLevel::Debug);
        assert!(log.enabled(LoggingLevel::Info));
        // A clone is the same session's setting.
        let clone = log.clone();
        clone.set_level(LoggingLevel::Emergency);
        assert!(!log.enabled(LoggingLevel::Alert));
    }
}
