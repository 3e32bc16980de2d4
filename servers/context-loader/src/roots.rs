//! The roots a client offers (MCP `roots/list`), asked once per tool call.
//!
//! A client that declares the `roots` capability is asked which folders it works
//! in; file tools then read only inside both those and the server's roots. A client
//! that declares none, does not answer in time, or answers with no `file://` roots
//! leaves the server's roots as they are. Stateless HTTP has no channel for the
//! question, so there the request fails at once and the server's roots apply.
//!
//! A client that declared roots but left one `roots/list` unanswered is not asked
//! again in its session until it sends `notifications/roots/list_changed`: each file
//! call waited the whole timeout for it before (mcp-fuzzer's client: 5 s a call).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// How long a tool call waits for the client's roots.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(5);

/// The client's roots for one request: `None` when it offers none.
#[derive(Debug, Clone, Default)]
pub struct RequestRoots(pub Option<Vec<PathBuf>>);

/// What one session learned about its client's roots: whether a `roots/list` went
/// unanswered (a handler is made per session, and each holds its own).
#[derive(Debug, Clone, Default)]
pub struct SessionRoots {
    unanswered: Arc<AtomicBool>,
}

impl SessionRoots {
    /// `notifications/roots/list_changed`: the client is there, and has roots to say.
    pub fn list_changed(&self) {
        self.unanswered.store(false, Ordering::Relaxed);
    }
}

impl RequestRoots {
    // Roots are deprecated by a future protocol revision (SEP-2577) but are how
    // today's clients (Claude Desktop, VS Code) say which folders they work in.
    #[allow(deprecated)]
    pub async fn of(context: &RequestContext<RoleServer>, session: &SessionRoots) -> RequestRoots {
        let offers = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !offers || session.unanswered.load(Ordering::Relaxed) {
            return RequestRoots(None);
        }
        match tokio::time::timeout(ROOTS_TIMEOUT, context.peer.list_roots()).await {
            Ok(Ok(listed)) => {
                let dirs: Vec<PathBuf> = listed
                    .roots
                    .iter()
                    .filter_map(|root| file_uri_path(&root.uri))
                    .collect();
                RequestRoots((!dirs.is_empty()).then_some(dirs))
            }
            Ok(Err(e)) => {
                tracing::warn!("roots/list failed ({e}); using the server's roots");
                RequestRoots(None)
            }
            Err(_) => {
                session.unanswered.store(true, Ordering::Relaxed);
                tracing::warn!(
                    "roots/list unanswered after {ROOTS_TIMEOUT:?}; using the server's roots, \
                     and not asking again in this session until the client sends \
                     notifications/roots/list_changed"
                );
                RequestRoots(None)
            }
        }
    }
}

/// `file:///home/me/My%20Project` -> `/home/me/My Project`; `None` for other URIs.
pub fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://localhost/x` and `file:///x` name the same local path.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            decoded.push(byte);
            i += 3;
            continue;
        }
        decoded.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(decoded).ok().map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_become_paths() {
        assert_eq!(
            file_uri_path("file:///home/me/My%20Project"),
            Some(PathBuf::from("/home/me/My Project"))
        );
        assert_eq!(
            file_uri_path("file://localhost/srv"),
            Some(PathBuf::from("/srv"))
        );
        assert_eq!(file_uri_path("https://example.com/x"), None);
        assert_eq!(file_uri_path("file://server/share"), None);
    }
}
