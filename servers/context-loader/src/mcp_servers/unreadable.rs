//! Answers rmcp's client cannot read, found as they arrive. rmcp drops such a
//! message (a line over 16 MiB, JSON nested deeper than serde_json reads, bytes that
//! are not UTF-8) and waits on, so the request it answered would only end at
//! `--timeout`, as "no answer". We look at every message first (a stdio server's
//! lines, an HTTP server's SSE events and errors) and end that server's measurement
//! at once, saying what was wrong.

use std::sync::Arc;

use futures::StreamExt;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt};
use tokio::sync::watch;

/// Most bytes of one message rmcp's client reads, over stdio (a line) and HTTP (a
/// body or an SSE event): `DEFAULT_MAX_LINE_LENGTH` and `DEFAULT_MAX_SSE_EVENT_SIZE`.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Deepest nesting of arrays and objects serde_json reads (its recursion limit is
/// 128: the 128th level is refused).
pub const MAX_DEPTH: usize = 127;

/// What one server said that could not be read: the first such thing.
#[derive(Clone)]
pub struct Found(watch::Sender<Option<String>>);

impl Found {
    pub fn new() -> Found {
        Found(watch::Sender::new(None))
    }

    fn note(&self, why: String) {
        self.0.send_if_modified(|first| match first {
            Some(_) => false,
            None => {
                *first = Some(why);
                true
            }
        });
    }

    /// What was found, if anything.
    pub fn get(&self) -> Option<String> {
        self.0.borrow().clone()
    }

    /// Resolves with the first unreadable answer (never, if none comes).
    pub async fn first(&self) -> String {
        let mut seen = self.0.subscribe();
        let why = seen
            .wait_for(Option::is_some)
            .await
            .map(|why| why.clone().unwrap_or_default());
        match why {
            Ok(why) => why,
            Err(_) => std::future::pending().await,
        }
    }
}

/// The error for an answer that could not be read.
pub fn error(why: &str) -> String {
    format!("its answer cannot be read: {why}; an MCP client drops such a message")
}

fn too_long(bytes: usize) -> String {
    format!(
        "a message over {} MiB ({bytes} bytes), more than an MCP client reads of one",
        bytes >> 20
    )
}

/// Why `message` (one line or event, without its newline) cannot be read, if it
/// cannot: only what is meant as JSON (starting with `{` or `[`) counts, since
/// other lines (a server's log on stdout) are skipped by every client.
pub fn unreadable(message: &[u8]) -> Option<String> {
    if message.len() > MAX_MESSAGE_BYTES {
        return Some(too_long(MAX_MESSAGE_BYTES));
    }
    let message = message.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(message);
    let start = message.iter().position(|b| !b.is_ascii_whitespace())?;
    if !matches!(message[start], b'{' | b'[') {
        return None;
    }
    if let Err(e) = std::str::from_utf8(message) {
        return Some(format!(
            "bytes that are not UTF-8 (at byte {})",
            e.valid_up_to()
        ));
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in &message[start..] {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some(format!(
                        "JSON nested over {MAX_DEPTH} levels deep, more than an MCP client \
                         reads (serde_json's limit of 128)"
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// A stdio server's stdout as rmcp reads it, every line looked at first: lines pass
/// through unchanged until one cannot be read; then it is `found` and the stream
/// ends (rmcp sees the server close).
pub fn tap(stdout: impl AsyncRead + Unpin + Send + 'static, found: Found) -> impl AsyncRead {
    let (mut forward, read) = tokio::io::duplex(256 * 1024);
    tokio::spawn(async move {
        let mut stdout = tokio::io::BufReader::with_capacity(64 * 1024, stdout);
        let mut line = Vec::new();
        loop {
            let (consumed, done) = {
                let Ok(available) = stdout.fill_buf().await else {
                    return;
                };
                if available.is_empty() {
                    return;
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |at| at + 1);
                if line.len() + take > MAX_MESSAGE_BYTES + 1 {
                    found.note(too_long(MAX_MESSAGE_BYTES));
                    return;
                }
                line.extend_from_slice(&available[..take]);
                (take, newline.is_some())
            };
            stdout.consume(consumed);
            if !done {
                continue;
            }
            let message = line.strip_suffix(b"\n").unwrap_or(&line);
            let message = message.strip_suffix(b"\r").unwrap_or(message);
            if let Some(why) = unreadable(message) {
                found.note(why);
                return;
            }
            if forward.write_all(&line).await.is_err() {
                return;
            }
            line.clear();
        }
    });
    read
}

/// rmcp's HTTP client (reqwest) with every SSE event and every failed request
/// looked at: what cannot be read is `found`.
#[derive(Clone)]
pub struct Checked {
    pub client: reqwest::Client,
    pub found: Found,
}

type Stream = futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;

impl Checked {
    fn watch(&self, stream: Stream) -> Stream {
        let found = self.found.clone();
        stream
            .map(move |event| {
                match &event {
                    Ok(event) => {
                        let data = event.data.as_deref().unwrap_or_default();
                        if let Some(why) = unreadable(data.as_bytes()) {
                            found.note(why);
                        }
                    }
                    Err(e) => found.note(sse_error(e)),
                }
                event
            })
            .boxed()
    }

    fn check<T>(
        &self,
        result: Result<T, StreamableHttpError<reqwest::Error>>,
    ) -> Result<T, StreamableHttpError<reqwest::Error>> {
        if let Err(e) = &result {
            match e {
                StreamableHttpError::ResponseBodyTooLarge { max_size } => {
                    self.found.note(too_long(*max_size));
                }
                StreamableHttpError::UnexpectedServerResponse(text)
                    if text.contains("could not parse") =>
                {
                    self.found.note(parse_error(text));
                }
                _ => {}
            }
        }
        result
    }
}

/// An SSE stream's error said as what was wrong with the answer.
fn sse_error(error: &sse_stream::Error) -> String {
    let text = error.to_string();
    if text.contains("maximum size") {
        too_long(MAX_MESSAGE_BYTES)
    } else if text.to_lowercase().contains("utf") {
        "bytes that are not UTF-8".into()
    } else {
        format!("its event stream broke: {text}")
    }
}

/// rmcp's "could not parse" said as what was wrong: serde_json's words, whose
/// wording for the two common faults we know.
fn parse_error(text: &str) -> String {
    if text.contains("recursion limit") {
        format!(
            "JSON nested over {MAX_DEPTH} levels deep, more than an MCP client reads \
             (serde_json's limit of 128)"
        )
    } else if text.contains("invalid unicode") || text.contains("UTF-8") {
        "bytes that are not UTF-8".into()
    } else {
        text.to_string()
    }
}

type Headers = std::collections::HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>;

impl StreamableHttpClient for Checked {
    type Error = reqwest::Error;

    fn post_message(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> impl Future<
        Output = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>,
    > + Send
    + '_ {
        <Self as StreamableHttpClient>::post_message_with_max_sse_event_size(
            self,
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            MAX_MESSAGE_BYTES,
        )
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let response = self
            .client
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        match self.check(response)? {
            StreamableHttpPostResponse::Sse(stream, session) => {
                Ok(StreamableHttpPostResponse::Sse(self.watch(stream), session))
            }
            other => Ok(other),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        self.client
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<Stream, StreamableHttpError<reqwest::Error>> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            MAX_MESSAGE_BYTES,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<Stream, StreamableHttpError<reqwest::Error>> {
        let stream = self
            .client
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.check(stream).map(|stream| self.watch(stream))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tools/list answer whose schema nests `depth - 5` arrays: `depth` levels in
    /// all (the message, result, tools, the tool, its schema).
    fn nested(depth: usize) -> Vec<u8> {
        let arrays = depth - 5;
        let mut line =
            br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"x":"#
                .to_vec();
        line.extend(std::iter::repeat_n(b'[', arrays));
        line.extend(std::iter::repeat_n(b']', arrays));
        line.extend_from_slice(b"}}]}}");
        line
    }

    fn rmcp_reads(line: &[u8]) -> bool {
        serde_json::from_slice::<rmcp::model::ServerJsonRpcMessage>(line).is_ok()
    }

    /// Our verdict is rmcp's, at the edge of each bound.
    #[test]
    fn the_verdict_is_what_rmcp_reads() {
        for depth in [10, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 200] {
            let line = nested(depth);
            assert_eq!(
                unreadable(&line).is_none(),
                rmcp_reads(&line),
                "depth {depth}"
            );
        }
        assert!(unreadable(&nested(MAX_DEPTH)).is_none());
        assert!(
            unreadable(&nested(MAX_DEPTH + 1))
                .unwrap()
                .contains("nested")
        );
        // Brackets in strings are text, not nesting.
        let text = format!(r#"{{"a":"{}"}}"#, "[".repeat(500));
        assert!(unreadable(text.as_bytes()).is_none());
        let bad = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"\xff\"}]}}";
        assert!(!rmcp_reads(bad));
        assert!(unreadable(bad).unwrap().contains("UTF-8"));
        // A log line is no message: skipped by every client, not an error.
        assert!(unreadable(b"starting \xff server").is_none());
        let long = vec![b' '; MAX_MESSAGE_BYTES + 1];
        assert!(unreadable(&long).unwrap().contains("16 MiB"));
    }
}
