//! MCP logging: the warnings a result carries (an exact-count fallback, skipped files,
//! a broken spec in a listing: each tool's `Tool::warnings`) also go to the client as
//! `notifications/message`, at the level the session asked for with `logging/setLevel`.
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

    pub(crate) fn enabled(&self, level: LoggingLevel) -> bool {
        severity(level) >= self.level.load(Ordering::Relaxed)
    }

    /// Send `warnings` (from tool `tool`) to the session's client. A client that has
    /// gone away is not an error of the call.
    pub async fn forward(
        &self,
        context: &RequestContext<RoleServer>,
        tool: &str,
        warnings: Vec<String>,
    ) {
        if warnings.is_empty() || !self.enabled(LoggingLevel::Warning) {
            return;
        }
        for message in capped(warnings, "in the result") {
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

/// At most [`MAX_MESSAGES_PER_CALL`] of `warnings`, then one line counting the rest
/// (`… and N more warnings {where_}`): what a client's log and the CLI's stderr show.
pub fn capped(warnings: Vec<String>, where_: &str) -> impl Iterator<Item = String> {
    let more = warnings.len().saturating_sub(MAX_MESSAGES_PER_CALL);
    let summary = (more > 0).then(|| format!("… and {more} more warnings {where_}"));
    warnings
        .into_iter()
        .take(MAX_MESSAGES_PER_CALL)
        .chain(summary)
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
