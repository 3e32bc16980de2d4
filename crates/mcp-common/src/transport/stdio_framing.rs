//! Newline-delimited JSON-RPC over stdio with every bad line answered.
//!
//! rmcp's own stdio codec silently drops a line over its length limit and answers
//! unparsable JSON without the `id: null` JSON-RPC requires. Here each line is
//! classified first: over-long (read no further than the limit, so a huge line
//! cannot exhaust memory), not JSON (-32700), a batch array (-32600: MCP removed
//! batching) or not a JSON-RPC message (-32600) gets an error reply on stdout and the
//! session goes on; valid messages go to rmcp.

use std::borrow::Cow;
use std::io;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Largest accepted message line. Tool inputs are capped lower (8 MiB by default),
/// so every legitimate request fits.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// A [`Transport`] over any reader/writer pair (stdin/stdout in production).
pub struct FramedStdio {
    outgoing: mpsc::Sender<Vec<u8>>,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    reader: JoinHandle<()>,
}

/// The task that writes every outgoing line; await it after the session to flush.
pub type WriterTask = JoinHandle<()>;

impl FramedStdio {
    pub fn new<R, W>(reader: R, writer: W, max_line_bytes: usize) -> (Self, WriterTask)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (outgoing, lines_out) = mpsc::channel::<Vec<u8>>(64);
        let (messages_in, incoming) = mpsc::channel(64);
        let writer_task = tokio::spawn(write_lines(writer, lines_out));
        let replies = outgoing.clone();
        let reader = tokio::spawn(async move {
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
                match classify(line, max_line_bytes) {
                    Incoming::Message(message) => {
                        if messages_in.send(*message).await.is_err() {
                            break;
                        }
                    }
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
            },
            writer_task,
        )
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
        async move {
            let line = serde_json::to_value(&item)
                .map(|v| to_line(&v))
                .map_err(io::Error::other)?;
            outgoing
                .send(line)
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed"))
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.incoming.recv().await
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

fn classify(line: Line, max: usize) -> Incoming {
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
    let value: Value = match serde_json::from_slice(&bytes) {
        Ok(value) => value,
        Err(e) => {
            return error_reply(Value::Null, PARSE_ERROR, format!("Parse error: {e}"));
        }
    };
    if value.is_array() {
        return error_reply(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 removed \
             them); send one message per line"
                .into(),
        );
    }
    // Echo the id when it is a valid one, so the client can match the error.
    let id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    match serde_json::from_value(value) {
        Ok(message) => Incoming::Message(Box::new(message)),
        Err(e) => error_reply(id, INVALID_REQUEST, format!("Invalid Request: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let parse = reply(classify(Line::Complete(b"{not json".to_vec()), 100));
        assert_eq!(parse["error"]["code"], PARSE_ERROR);
        assert_eq!(parse["id"], Value::Null);
        assert_eq!(parse["jsonrpc"], "2.0");

        let batch = reply(classify(
            Line::Complete(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec()),
            100,
        ));
        assert_eq!(batch["error"]["code"], INVALID_REQUEST);
        assert!(
            batch["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("batch")
        );

        let huge = reply(classify(Line::TooLong(500), 100));
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
        ));
        assert_eq!(not_rpc["error"]["code"], INVALID_REQUEST);
        assert_eq!(not_rpc["id"], 7);
    }

    #[test]
    fn valid_messages_and_blank_lines_pass() {
        let ping = classify(
            Line::Complete(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec()),
            100,
        );
        assert!(matches!(ping, Incoming::Message(_)), "{ping:?}");
        assert!(matches!(
            classify(Line::Complete(b"  \r".to_vec()), 100),
            Incoming::Blank
        ));
    }
}
