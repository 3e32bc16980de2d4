//! Newline-delimited JSON-RPC over stdio with every bad line answered.
//!
//! rmcp's own stdio codec silently drops a line over its length limit and answers
//! unparsable JSON without the `id: null` JSON-RPC requires. Here each line is
//! classified first: over-long (read no further than the limit, so a huge line
//! cannot exhaust memory), not JSON (-32700), a batch array (-32600: MCP removed
//! batching), more values than `--max-json-values` (-32600, refused before any tree
//! is built) or not a JSON-RPC message (-32600) gets an error reply on stdout and
//! the session goes on; valid messages go to rmcp.
//!
//! Before the client's `initialize`, rmcp ends the session on anything but a request;
//! the MCP lifecycle only says clients should not send them, so notifications and
//! responses that early are dropped here (logged) instead.
//!
//! When stdin ends, rmcp stops relaying what handlers send to the peer, so a call that
//! sends a notification before its reply (a warning to the client's log) would never
//! finish, and a script that writes its requests and closes stdin would lose that
//! reply. So the end of stdin reaches rmcp only once every request read has been
//! answered, or after the shutdown grace.

use std::borrow::Cow;
use std::collections::HashSet;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, ClientRequest};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;

use super::json_scan::{self, INVALID_REQUEST, JsonLimits, PARSE_ERROR};

/// Largest accepted message line. Tool inputs are capped lower (8 MiB by default),
/// so every legitimate request fits.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The flag that sets [`JsonLimits::max_values`] for stdio, named in refusals.
pub const MAX_JSON_VALUES_FLAG: &str = "--max-json-values";

/// A [`Transport`] over any reader/writer pair (stdin/stdout in production).
pub struct FramedStdio {
    outgoing: mpsc::Sender<Vec<u8>>,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    reader: JoinHandle<()>,
    gate: Arc<Gate>,
    /// After stdin ends, how long requests still running get to be answered.
    shutdown_grace: Duration,
}

/// Default of [`FramedStdio::with_shutdown_grace`]: as long as an HTTP request may take
/// (`--request-timeout`), so a call that would be answered over HTTP is answered here.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(60);

/// What the session may receive next: nothing but requests before `initialize`, and
/// no request reusing the id of one still running (rmcp would lose one of the two).
#[derive(Debug, Default)]
struct Gate {
    initialize_seen: Arc<AtomicBool>,
    /// Ids (as JSON text) of requests forwarded and not yet answered.
    running: Mutex<HashSet<String>>,
    /// Woken whenever a request is answered.
    answered: Notify,
}

enum Admit {
    Forward,
    Ignore(&'static str),
    /// A JSON-RPC error to write back instead.
    Refuse(Value),
}

impl Gate {
    fn admit(&self, message: &RxJsonRpcMessage<RoleServer>) -> Admit {
        match message {
            RxJsonRpcMessage::<RoleServer>::Request(request) => {
                let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
                let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
                if !running.insert(id.to_string()) {
                    return Admit::Refuse(json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": INVALID_REQUEST,
                        "message": format!("Invalid Request: id {id} is already used by a request still running; use a new id"),
                    }}));
                }
                if matches!(request.request, ClientRequest::InitializeRequest(_)) {
                    self.initialize_seen.store(true, Ordering::SeqCst);
                }
                Admit::Forward
            }
            _ if !self.initialize_seen.load(Ordering::SeqCst) => {
                Admit::Ignore("a notification or response before initialize")
            }
            RxJsonRpcMessage::<RoleServer>::Notification(notification) => {
                // A cancelled request may never be answered: its id is free again.
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Ok(id) = serde_json::to_value(&cancelled.params.request_id)
                {
                    self.answered(&id);
                }
                Admit::Forward
            }
            _ => Admit::Forward,
        }
    }

    /// A reply to the request with `id` went out.
    fn answered(&self, id: &Value) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        running.remove(&id.to_string());
        self.answered.notify_waiters();
    }

    /// Returns once no request is waiting for its reply.
    async fn all_answered(&self) {
        loop {
            // Registered before the check, so an answer in between is not missed.
            let answered = self.answered.notified();
            tokio::pin!(answered);
            answered.as_mut().enable();
            if self
                .running
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty()
            {
                return;
            }
            answered.await;
        }
    }
}

/// The task that writes every outgoing line; await it after the session to flush.
pub type WriterTask = JoinHandle<()>;

impl FramedStdio {
    pub fn new<R, W>(
        reader: R,
        writer: W,
        max_line_bytes: usize,
        limits: JsonLimits,
    ) -> (Self, WriterTask)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (outgoing, lines_out) = mpsc::channel::<Vec<u8>>(64);
        let (messages_in, incoming) = mpsc::channel(64);
        let writer_task = tokio::spawn(write_lines(writer, lines_out));
        let replies = outgoing.clone();
        let gate = Arc::new(Gate::default());
        let reader_gate = gate.clone();
        let reader = tokio::spawn(async move {
            let gate = reader_gate;
            let mut reader = BufReader::new(reader);
            loop {
                let line = match read_bounded_line(&mut reader, max_line_bytes).await {
                    Ok(Some(line)) => line,
                    Ok(None) => break,
                    Err(e) => {
                        tracing::debug!("stdin closed: {e}");
                        break;
                    }
                };
                match classify(line, max_line_bytes, limits) {
                    Incoming::Message(message) => match gate.admit(&message) {
                        Admit::Forward => {
                            if messages_in.send(*message).await.is_err() {
                                break;
                            }
                        }
                        Admit::Ignore(why) => tracing::debug!("ignored a stdio message: {why}"),
                        Admit::Refuse(reply) => {
                            tracing::warn!(
                                "refused a stdio request: {}",
                                reply["error"]["message"]
                            );
                            if replies.send(to_line(&reply)).await.is_err() {
                                break;
                            }
                        }
                    },
                    Incoming::Reply(reply) => {
                        tracing::warn!("bad stdio message: {}", reply["error"]["message"]);
                        if replies.send(to_line(&reply)).await.is_err() {
                            break;
                        }
                    }
                    Incoming::Blank => {}
                }
            }
        });
        (
            FramedStdio {
                outgoing,
                incoming,
                reader,
                gate,
                shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            },
            writer_task,
        )
    }

    /// After stdin ends, wait up to `grace` for the requests still running to be
    /// answered before the session ends.
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Whether the client has sent `initialize`: a client that leaves before it did
    /// ends the session cleanly, not as a failed start.
    pub fn initialize_seen(&self) -> Arc<AtomicBool> {
        self.gate.initialize_seen.clone()
    }
}

impl Drop for FramedStdio {
    fn drop(&mut self) {
        // The session is over: stop reading (this also releases the reader's handle
        // on the writer channel, so the writer task can finish).
        self.reader.abort();
    }
}

impl Transport<RoleServer> for FramedStdio {
    type Error = io::Error;

    fn name() -> Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let outgoing = self.outgoing.clone();
        let gate = self.gate.clone();
        async move {
            let value = serde_json::to_value(&item).map_err(io::Error::other)?;
            if value.get("result").is_some() || value.get("error").is_some() {
                gate.answered(&value["id"]);
            }
            let line = to_line(&value);
            outgoing
                .send(line)
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed"))
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        if let Some(message) = self.incoming.recv().await {
            return Some(message);
        }
        // stdin has ended: keep the session (and its notifications) going until every
        // request read has its reply.
        if tokio::time::timeout(self.shutdown_grace, self.gate.all_answered())
            .await
            .is_err()
        {
            tracing::warn!(
                "stdin closed; requests still running after {:?} are dropped",
                self.shutdown_grace
            );
        }
        None
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.incoming.close();
        Ok(())
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut writer: W, mut lines: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        if let Err(e) = async {
            writer.write_all(&line).await?;
            writer.flush().await
        }
        .await
        {
            tracing::debug!("stdout closed: {e}");
            return;
        }
    }
}

fn to_line(value: &Value) -> Vec<u8> {
    let mut line = value.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// One line read from the stream.
#[derive(Debug, PartialEq)]
enum Line {
    Complete(Vec<u8>),
    /// Longer than the limit: its bytes were counted and discarded, not kept.
    TooLong(usize),
}

/// Read up to the next `\n` keeping at most `max` bytes; `None` at end of input.
async fn read_bounded_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> io::Result<Option<Line>> {
    let mut kept = Vec::new();
    let mut seen = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // EOF: a last line without a newline still counts.
            return Ok(match seen {
                0 => None,
                n if n > max => Some(Line::TooLong(n)),
                _ => Some(Line::Complete(kept)),
            });
        }
        let (chunk, used, ends) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        seen += chunk.len();
        if seen <= max {
            kept.extend_from_slice(chunk);
        } else {
            kept = Vec::new();
        }
        reader.consume(used);
        if ends {
            return Ok(Some(if seen > max {
                Line::TooLong(seen)
            } else {
                Line::Complete(kept)
            }));
        }
    }
}

#[derive(Debug)]
enum Incoming {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// A JSON-RPC error object to write back.
    Reply(Value),
    Blank,
}

fn error_reply(id: Value, code: i64, message: String) -> Incoming {
    Incoming::Reply(
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    )
}

fn classify(line: Line, max: usize, limits: JsonLimits) -> Incoming {
    let bytes = match line {
        Line::TooLong(n) => {
            return error_reply(
                Value::Null,
                INVALID_REQUEST,
                format!("Invalid Request: message of {n} bytes exceeds the {max}-byte limit"),
            );
        }
        Line::Complete(bytes) => bytes,
    };
    if bytes.trim_ascii().is_empty() {
        return Incoming::Blank;
    }
    // Checked before any tree is built: the tree costs ~200 bytes per value.
    if let Err(refusal) = json_scan::scan(&bytes, limits) {
        return error_reply(
            refusal.reply_id(&bytes),
            refusal.json_rpc_code(),
            refusal.message(MAX_JSON_VALUES_FLAG),
        );
    }
    let mut value: Value = match serde_json::from_slice(&bytes) {
        Ok(value) => value,
        Err(e) => {
            return error_reply(Value::Null, PARSE_ERROR, format!("Parse error: {e}"));
        }
    };
    let size = bytes.len();
    drop(bytes);
    // Echo the id when it is a valid one, so the client can match the error.
    let id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    // A large call's arguments bypass rmcp's parse (which copies its input twice).
    let parked = crate::parked::park(&mut value, size);
    match serde_json::from_value(value) {
        Ok(message) => {
            if let Some(parked) = parked {
                parked.until_taken();
            }
            Incoming::Message(Box::new(message))
        }
        Err(e) => error_reply(id, INVALID_REQUEST, format!("Invalid Request: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: JsonLimits = JsonLimits { max_values: 1000 };

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(line) = read_bounded_line(&mut reader, max).await.expect("read") {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn lines_are_split_and_bounded_without_keeping_overflow() {
        let got = lines(b"ab\n0123456789\n\ncd", 5).await;
        assert_eq!(
            got,
            [
                Line::Complete(b"ab".to_vec()),
                Line::TooLong(10),
                Line::Complete(Vec::new()),
                Line::Complete(b"cd".to_vec()),
            ]
        );
        assert_eq!(lines(b"0123456789", 5).await, [Line::TooLong(10)]);
        assert!(lines(b"", 5).await.is_empty());
    }

    fn reply(incoming: Incoming) -> Value {
        match incoming {
            Incoming::Reply(v) => v,
            other => panic!("expected an error reply, got {other:?}"),
        }
    }

    #[test]
    fn bad_lines_become_json_rpc_errors() {
        let parse = reply(classify(Line::Complete(b"{not json".to_vec()), 100, LIMITS));
        assert_eq!(parse["error"]["code"], PARSE_ERROR);
        assert_eq!(parse["id"], Value::Null);
        assert_eq!(parse["jsonrpc"], "2.0");

        let batch = reply(classify(
            Line::Complete(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec()),
            100,
            LIMITS,
        ));
        assert_eq!(batch["error"]["code"], INVALID_REQUEST);
        assert!(
            batch["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("batch")
        );

        let huge = reply(classify(Line::TooLong(500), 100, LIMITS));
        assert_eq!(huge["error"]["code"], INVALID_REQUEST);
        assert!(
            huge["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("500 bytes")
        );

        let not_rpc = reply(classify(
            Line::Complete(br#"{"id":7,"hello":1}"#.to_vec()),
            100,
            LIMITS,
        ));
        assert_eq!(not_rpc["error"]["code"], INVALID_REQUEST);
        assert_eq!(not_rpc["id"], 7);
    }

    #[test]
    fn too_many_values_are_refused_with_the_id_and_the_flag() {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{"x":[{}0]}}}}"#,
            "0,".repeat(2000)
        );
        let refused = reply(classify(Line::Complete(line.into_bytes()), 1 << 20, LIMITS));
        assert_eq!(refused["error"]["code"], INVALID_REQUEST);
        assert_eq!(refused["id"], 3);
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("1000") && message.contains("--max-json-values"),
            "{message}"
        );
    }

    fn message(value: Value) -> RxJsonRpcMessage<RoleServer> {
        serde_json::from_value(value).expect("a JSON-RPC message")
    }

    #[test]
    fn gate_drops_early_notifications_and_refuses_ids_in_use() {
        let gate = Gate::default();
        let initialized = message(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert!(matches!(gate.admit(&initialized), Admit::Ignore(_)));
        let stray = message(json!({"jsonrpc": "2.0", "id": 4, "result": {}}));
        assert!(matches!(gate.admit(&stray), Admit::Ignore(_)));
        let init = message(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        );
        assert!(matches!(gate.admit(&init), Admit::Forward));
        assert!(matches!(gate.admit(&initialized), Admit::Forward));

        let ping = message(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}));
        assert!(matches!(gate.admit(&ping), Admit::Forward));
        let Admit::Refuse(reply) = gate.admit(&ping) else {
            panic!("a second request with id 7 while the first runs is refused");
        };
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["error"]["code"], INVALID_REQUEST);
        let other_type = message(json!({"jsonrpc": "2.0", "id": "7", "method": "ping"}));
        assert!(
            matches!(gate.admit(&other_type), Admit::Forward),
            "\"7\" is not 7"
        );
        gate.answered(&json!(7));
        assert!(
            matches!(gate.admit(&ping), Admit::Forward),
            "free again once answered"
        );
        let cancel = message(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                    "params": {"requestId": 7}}),
        );
        assert!(matches!(gate.admit(&cancel), Admit::Forward));
        assert!(
            matches!(gate.admit(&ping), Admit::Forward),
            "free again once cancelled"
        );
    }

    #[test]
    fn valid_messages_and_blank_lines_pass() {
        let ping = classify(
            Line::Complete(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec()),
            100,
            LIMITS,
        );
        assert!(matches!(ping, Incoming::Message(_)), "{ping:?}");
        assert!(matches!(
            classify(Line::Complete(b"  \r".to_vec()), 100, LIMITS),
            Incoming::Blank
        ));
    }
}
