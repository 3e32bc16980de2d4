//! Stateful HTTP: a call whose response stream the client closed is cancelled.
//!
//! In a session, a `tools/call` POST is answered with an SSE stream at once; the call
//! runs in the session's task, not in the HTTP request. rmcp's session manager does
//! not notice when that stream is dropped (the client hung up, or the connection
//! died), so the call ran to its end for nobody. [`CancelOnClose`] wraps it: when a
//! request's stream is dropped before it ended, the session gets the
//! `notifications/cancelled` the client would have sent, which cancels the call's
//! token like any cancellation (the tools stop at their next check).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, RequestId};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{EventStore, RestoreOutcome};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};

/// rmcp's in-memory sessions, with request streams that cancel their call when
/// dropped early.
pub struct CancelOnClose(pub Arc<LocalSessionManager>);

/// The notification a client sends to cancel request `id`.
fn cancelled(id: &RequestId, reason: &str) -> Option<ClientJsonRpcMessage> {
    let message = serde_json::json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": reason},
    });
    serde_json::from_value(message).ok()
}

/// A request's response stream; cancels the request if dropped before its end.
struct Guarded<S> {
    inner: Pin<Box<S>>,
    /// Set until the stream ends by itself (the response was sent).
    armed: Option<(Arc<LocalSessionManager>, SessionId, RequestId)>,
}

impl<S: Stream> Stream for Guarded<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let polled = self.inner.as_mut().poll_next(cx);
        if let Poll::Ready(None) = polled {
            self.armed = None;
        }
        polled
    }
}

impl<S> Drop for Guarded<S> {
    fn drop(&mut self) {
        let Some((sessions, session, id)) = self.armed.take() else {
            return;
        };
        let Some(message) = cancelled(&id, "the client closed the response stream") else {
            return;
        };
        // Drop runs outside async code: hand the message to the runtime, if any is
        // still there (at shutdown the sessions end anyway).
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if sessions.accept_message(&session, message).await.is_ok() {
                    tracing::debug!(%id, "cancelled a call whose response stream was closed");
                }
            });
        }
    }
}

impl SessionManager for CancelOnClose {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.0.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<rmcp::model::ServerJsonRpcMessage, Self::Error> {
        self.0.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.0.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.0.close_session(id).await
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
        let stream = self.0.create_stream(id, message).await?;
        Ok(Guarded {
            inner: Box::pin(stream),
            armed: request.map(|request| (self.0.clone(), id.clone(), request)),
        })
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.0.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.0.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.0.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.0.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.0.event_store()
    }
}
