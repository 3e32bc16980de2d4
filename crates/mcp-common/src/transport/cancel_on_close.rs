//! Stateful HTTP: a call whose response stream the client closed is cancelled.
//!
//! In a session, a `tools/call` POST is answered with an SSE stream at once; the call
//! runs in the session's task, not in the HTTP request. rmcp's session manager does
//! not notice when that stream is dropped (the client hung up, or the connection
//! died), so the call ran to its end for nobody. [`CancelOnClose`] wraps it: when a
//! request's stream is dropped before it ended, the session gets the
//! `notifications/cancelled` the client would have sent, which cancels the call's
//! token like any cancellation (the tools stop at their next check).
//!
//! A `DELETE` of the session cancels its running calls the same way: rmcp would let
//! them run up to 5 s more while it drains their responses for nobody.
//!
//! The MCP spec lets a client resume a broken stream (`GET` with `Last-Event-ID`)
//! and says a disconnection alone is not a cancellation. So the cancellation waits
//! [`RESUME_GRACE`] first: a stream resumed within it keeps its call; one nobody
//! comes back for is abandoned.
//!
//! A cancellation may also overtake its call: the call's body is read and parsed in
//! its own HTTP request, and a small `notifications/cancelled` sent right after it on
//! another connection can reach the session first. rmcp drops a cancellation for a
//! request it does not know, so the call ran to its end. [`CancelOnClose`] keeps such
//! early cancellations for a while ([`EARLY_KEPT`], at most [`EARLY_PER_SESSION`] per
//! session) and cancels the call as soon as it arrives. Request ids are never reused
//! within a session (MCP), so a kept id can only match the call it was meant for.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, NumberOrString, RequestId};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{EventStore, RestoreOutcome};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};

/// How long a request stream dropped before its end may be resumed before its call is
/// cancelled: rmcp tells clients to retry after 3 s.
pub const RESUME_GRACE: Duration = Duration::from_secs(5);

/// Streams dropped early and waiting out [`RESUME_GRACE`], by session and stream (the
/// `http_request_id` part of their event ids): cancelled when resumed.
type Pending = Arc<Mutex<HashMap<(SessionId, String), CancellationToken>>>;

/// Calls whose response stream is still open, by session: a `DELETE` cancels them.
type Running = Arc<Mutex<HashMap<SessionId, Vec<RequestId>>>>;

/// How long a cancellation for a request the session has not seen is kept, waiting
/// for its request: far longer than reading and parsing the largest body allowed.
pub const EARLY_KEPT: Duration = Duration::from_secs(30);

/// Early cancellations kept per session; the oldest goes first. Most are for calls
/// that had already ended, which a client may cancel at any time.
pub const EARLY_PER_SESSION: usize = 64;

/// A string id longer than this is not kept: no honest client needs one.
const EARLY_ID_BYTES: usize = 256;

/// Cancellations that arrived before their request, by session, oldest first.
type Early = Mutex<HashMap<SessionId, VecDeque<(RequestId, Instant)>>>;

/// rmcp's in-memory sessions, with request streams that cancel their call when
/// dropped early and not resumed, and sessions whose calls stop when they are deleted.
pub struct CancelOnClose {
    sessions: Arc<LocalSessionManager>,
    pending: Pending,
    running: Running,
    /// Locked only while `running` is held (in that order), so a cancellation and its
    /// request cannot both miss each other.
    early: Early,
}

impl CancelOnClose {
    pub fn new(sessions: Arc<LocalSessionManager>) -> Self {
        CancelOnClose {
            sessions,
            pending: Pending::default(),
            running: Running::default(),
            early: Early::default(),
        }
    }

    /// A cancellation came for `request`: kept if the session has not been given that
    /// request yet (its stream is not registered), to be applied when it comes.
    fn keep_if_early(&self, session: &SessionId, request: &RequestId) {
        if matches!(request, NumberOrString::String(id) if id.len() > EARLY_ID_BYTES) {
            return;
        }
        let Ok(running) = self.running.lock() else {
            return;
        };
        if running
            .get(session)
            .is_some_and(|calls| calls.contains(request))
        {
            return;
        }
        let Ok(mut early) = self.early.lock() else {
            return;
        };
        let kept = early.entry(session.clone()).or_default();
        let now = Instant::now();
        kept.retain(|(_, at)| now.duration_since(*at) < EARLY_KEPT);
        if kept.len() >= EARLY_PER_SESSION {
            kept.pop_front();
        }
        kept.push_back((request.clone(), now));
    }

    /// Registers a request the session was just given, and says whether a
    /// cancellation for it came first (then it is taken).
    fn register(&self, session: &SessionId, request: &RequestId) -> (Registered, bool) {
        let Ok(mut running) = self.running.lock() else {
            return (Registered::unlisted(&self.running, session, request), false);
        };
        running
            .entry(session.clone())
            .or_default()
            .push(request.clone());
        let registered = Registered::unlisted(&self.running, session, request);
        let Ok(mut early) = self.early.lock() else {
            return (registered, false);
        };
        let Some(kept) = early.get_mut(session) else {
            return (registered, false);
        };
        let now = Instant::now();
        kept.retain(|(_, at)| now.duration_since(*at) < EARLY_KEPT);
        let cancelled_first = match kept.iter().position(|(id, _)| id == request) {
            Some(at) => kept.remove(at).is_some(),
            None => false,
        };
        if kept.is_empty() {
            early.remove(session);
        }
        (registered, cancelled_first)
    }
}

/// One call's entry in [`Running`], removed when its stream ends or is dropped.
struct Registered {
    running: Running,
    session: SessionId,
    request: RequestId,
}

impl Registered {
    /// The entry's guard; the caller has put `request` in `running` itself.
    fn unlisted(running: &Running, session: &SessionId, request: &RequestId) -> Self {
        Registered {
            running: running.clone(),
            session: session.clone(),
            request: request.clone(),
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Ok(mut map) = self.running.lock()
            && let Some(calls) = map.get_mut(&self.session)
        {
            calls.retain(|id| *id != self.request);
            if calls.is_empty() {
                map.remove(&self.session);
            }
        }
    }
}

/// The stream part of an event id (`{index}/{http_request_id}`).
fn stream_of(event_id: &str) -> Option<&str> {
    event_id.split_once('/').map(|(_, stream)| stream)
}

/// What a request's stream needs to cancel its call.
struct Armed {
    sessions: Arc<LocalSessionManager>,
    pending: Pending,
    session: SessionId,
    request: RequestId,
    /// Learnt from the first event id seen (the priming event's).
    stream: Option<String>,
}

/// The notification a client sends to cancel request `id`.
fn cancelled(id: &RequestId, reason: &str) -> Option<ClientJsonRpcMessage> {
    let message = serde_json::json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": reason},
    });
    serde_json::from_value(message).ok()
}

/// A request's response stream; cancels the request if dropped before its end and
/// not resumed within [`RESUME_GRACE`].
struct Guarded<S> {
    inner: Pin<Box<S>>,
    /// Set until the stream ends by itself (the response was sent).
    armed: Option<Armed>,
    /// The call among its session's running calls, until its stream ends.
    _registered: Option<Registered>,
}

impl<S: Stream<Item = ServerSseMessage>> Stream for Guarded<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let polled = self.inner.as_mut().poll_next(cx);
        match &polled {
            Poll::Ready(None) => self.armed = None,
            Poll::Ready(Some(message)) => {
                if let Some(armed) = &mut self.armed
                    && armed.stream.is_none()
                {
                    armed.stream = message
                        .event_id
                        .as_deref()
                        .and_then(stream_of)
                        .map(str::to_owned);
                }
            }
            Poll::Pending => {}
        }
        polled
    }
}

impl<S> Drop for Guarded<S> {
    fn drop(&mut self) {
        let Some(armed) = self.armed.take() else {
            return;
        };
        // Drop runs outside async code: hand the wait to the runtime, if any is still
        // there (at shutdown the sessions end anyway).
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let resumed = CancellationToken::new();
        let key = armed.stream.map(|stream| (armed.session.clone(), stream));
        if let Some(key) = &key
            && let Ok(mut pending) = armed.pending.lock()
        {
            pending.insert(key.clone(), resumed.clone());
        }
        runtime.spawn(async move {
            let came_back = tokio::time::timeout(RESUME_GRACE, resumed.cancelled())
                .await
                .is_ok();
            if let Some(key) = &key
                && let Ok(mut pending) = armed.pending.lock()
            {
                pending.remove(key);
            }
            if came_back {
                return;
            }
            let id = armed.request;
            let Some(message) = cancelled(&id, "the client closed the response stream") else {
                return;
            };
            if armed
                .sessions
                .accept_message(&armed.session, message)
                .await
                .is_ok()
            {
                tracing::debug!(%id, "cancelled a call whose response stream was closed");
            }
        });
    }
}

impl SessionManager for CancelOnClose {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.sessions.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<rmcp::model::ServerJsonRpcMessage, Self::Error> {
        self.sessions.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.sessions.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // rmcp lets a closed session's handlers run up to 5 s more (draining their
        // responses) before it cancels them; a client that deleted its session wants
        // none of them, so they are cancelled first.
        let calls = self
            .running
            .lock()
            .ok()
            .and_then(|mut map| map.remove(id))
            .unwrap_or_default();
        if let Ok(mut early) = self.early.lock() {
            early.remove(id);
        }
        for request in calls {
            if let Some(message) = cancelled(&request, "the client ended the session") {
                let _ = self.sessions.accept_message(id, message).await;
            }
        }
        self.sessions.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let request = match &message {
            ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let stream = self.sessions.create_stream(id, message).await?;
        // The session has the request now: a cancellation from here on reaches it
        // after the request, and one that came before is applied.
        let registered = request.as_ref().map(|request| {
            let (registered, cancelled_first) = self.register(id, request);
            (registered, cancelled_first.then(|| request.clone()))
        });
        let (registered, cancel_now) = match registered {
            Some((registered, cancel_now)) => (Some(registered), cancel_now),
            None => (None, None),
        };
        if let Some(request) = cancel_now
            && let Some(message) = cancelled(&request, "cancelled before the request arrived")
            && self.sessions.accept_message(id, message).await.is_ok()
        {
            tracing::debug!(%request, "applied a cancellation that overtook its call");
        }
        Ok(Guarded {
            _registered: registered,
            inner: Box::pin(stream),
            armed: request.map(|request| Armed {
                sessions: self.sessions.clone(),
                pending: self.pending.clone(),
                session: id.clone(),
                request,
                stream: None,
            }),
        })
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        // Kept before it is passed on, so the request cannot slip in between unseen.
        if let ClientJsonRpcMessage::Notification(notification) = &message
            && let ClientNotification::CancelledNotification(cancelled) = &notification.notification
            && let Some(request) = &cancelled.params.request_id
        {
            self.keep_if_early(id, request);
        }
        let accepted = self.sessions.accept_message(id, message).await;
        if accepted.is_err()
            && let Ok(mut early) = self.early.lock()
        {
            // No such session (any more): nothing to keep for it.
            early.remove(id);
        }
        accepted
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.sessions.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // A stream dropped early and resumed: its call goes on.
        if let Some(stream) = stream_of(&last_event_id)
            && let Ok(pending) = self.pending.lock()
            && let Some(resumed) = pending.get(&(id.clone(), stream.to_owned()))
        {
            resumed.cancel();
        }
        self.sessions.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.sessions.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.sessions.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manager() -> CancelOnClose {
        CancelOnClose::new(Arc::new(LocalSessionManager::default()))
    }

    #[test]
    fn an_early_cancellation_is_applied_once_to_its_request_only() {
        let calls = manager();
        let session: SessionId = "s".into();
        calls.keep_if_early(&session, &NumberOrString::Number(7));
        let (_other, cancelled) = calls.register(&session, &NumberOrString::Number(8));
        assert!(!cancelled, "another request is not cancelled");
        let (_seven, cancelled) = calls.register(&session, &NumberOrString::Number(7));
        assert!(cancelled, "the request that was cancelled first is");
        let (_again, cancelled) = calls.register(&session, &NumberOrString::Number(7));
        assert!(!cancelled, "taken once");
        assert!(calls.early.lock().unwrap().is_empty());
    }

    #[test]
    fn a_cancellation_for_a_running_call_is_not_kept() {
        let calls = manager();
        let session: SessionId = "s".into();
        let (_running, _) = calls.register(&session, &NumberOrString::Number(1));
        calls.keep_if_early(&session, &NumberOrString::Number(1));
        assert!(calls.early.lock().unwrap().is_empty());
    }

    #[test]
    fn early_cancellations_are_bounded_per_session_and_long_ids_never_kept() {
        let calls = manager();
        let session: SessionId = "s".into();
        for id in 0..1_000 {
            calls.keep_if_early(&session, &NumberOrString::Number(id));
        }
        calls.keep_if_early(&session, &NumberOrString::String("x".repeat(10_000).into()));
        let kept = calls.early.lock().unwrap()[&session].len();
        assert_eq!(kept, EARLY_PER_SESSION);
        // The newest are kept, the oldest went first.
        assert!(calls.register(&session, &NumberOrString::Number(999)).1);
        assert!(!calls.register(&session, &NumberOrString::Number(0)).1);
    }
}
