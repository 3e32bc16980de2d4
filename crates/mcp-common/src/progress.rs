//! MCP progress notifications from long-running tool work.
//!
//! A client that wants progress puts a `progressToken` in the request's `_meta`; the
//! server then sends `notifications/progress` whose `progress` only ever increases.
//! Tool work usually runs on worker threads, so [`ProgressReporter::report`] is a
//! cheap, thread-safe call: it throttles, keeps values increasing, and hands them to
//! one async task that sends them in order. The server awaits [`ProgressReporter::sent`]
//! before it answers a call: a notification queued behind the response arrived after it (a
//! stdio client saw progress after the result) or not at all (a stateless HTTP
//! response's stream is closed once the result is on it).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use tokio::sync::{mpsc, oneshot};

/// Sends at most one notification per interval (plus the final one): enough for a
/// progress bar, never a flood on a 5,000-file scan.
const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// What the sending task is handed, in order.
enum Outgoing {
    Progress {
        done: u64,
        total: u64,
    },
    /// Answered once everything queued before it has been handed to the transport.
    Sent(oneshot::Sender<()>),
}

pub struct ProgressReporter {
    sender: mpsc::UnboundedSender<Outgoing>,
    started: Instant,
    /// Milliseconds after `started` of the last notification, +1 (0 = none yet).
    last_sent_ms: AtomicU64,
    /// Highest `done` sent so far (`None`: nothing yet): progress must increase.
    highest: Mutex<Option<u64>>,
}

impl ProgressReporter {
    /// A reporter for this request, or `None` when the client sent no progress
    /// token. Must be called inside a tokio runtime (it spawns the sending task).
    pub fn from_context(context: &RequestContext<RoleServer>) -> Option<ProgressReporter> {
        let token = context.meta.get_progress_token()?;
        let peer = context.peer.clone();
        let (sender, mut receiver) = mpsc::unbounded_channel::<Outgoing>();
        tokio::spawn(async move {
            while let Some(outgoing) = receiver.recv().await {
                let (done, total) = match outgoing {
                    Outgoing::Progress { done, total } => (done, total),
                    Outgoing::Sent(answer) => {
                        let _ = answer.send(());
                        continue;
                    }
                };
                let param = ProgressNotificationParam::new(token.clone(), done as f64)
                    .with_total(total as f64);
                if peer.notify_progress(param).await.is_err() {
                    break; // the client is gone; the work notices through cancellation
                }
            }
        });
        Some(ProgressReporter {
            sender,
            started: Instant::now(),
            last_sent_ms: AtomicU64::new(0),
            highest: Mutex::new(None),
        })
    }

    /// `done` of `total` units finished. Callable from any thread.
    pub fn report(&self, done: u64, total: u64) {
        let now_ms = self.started.elapsed().as_millis() as u64 + 1;
        let last = self.last_sent_ms.load(Ordering::Relaxed);
        let due = last == 0 || now_ms.saturating_sub(last) >= MIN_INTERVAL.as_millis() as u64;
        if !(due || done >= total) {
            return;
        }
        // Only a value above everything sent so far goes out. Checked and queued
        // under one lock: two walker threads that each passed a lock-free check sent
        // 5 after 7 (or 0 twice), and the client saw progress go backwards.
        let Ok(mut highest) = self.highest.lock() else {
            return;
        };
        if highest.is_some_and(|sent| sent >= done) {
            return;
        }
        *highest = Some(done);
        self.last_sent_ms.store(now_ms, Ordering::Relaxed);
        let _ = self.sender.send(Outgoing::Progress { done, total });
    }

    /// Wait until every notification reported so far is on its way to the client
    /// (handed to the transport, ahead of anything sent after this returns). Returns
    /// at once when the client is gone.
    pub async fn sent(&self) {
        let (answer, sent) = oneshot::channel();
        if self.sender.send(Outgoing::Sent(answer)).is_ok() {
            let _ = sent.await;
        }
    }
}
