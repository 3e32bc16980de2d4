//! HTTP/1.1 written by hand on a loopback TCP socket, so headers, bodies and
//! disconnects are exactly what a test says (a client library would fix them up).

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::PATIENCE;

/// A parsed HTTP/1.1 response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.body))
    }

    /// The JSON-RPC messages of the body, in order: one for a JSON body, each event's
    /// for an SSE body (events with empty data, priming events, are skipped).
    pub fn messages(&self) -> Vec<Value> {
        if self.body.trim_start().starts_with('{') {
            return vec![self.json()];
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .filter(|data| !data.is_empty())
            .map(|data| {
                serde_json::from_str(data)
                    .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {data}"))
            })
            .collect()
    }

    /// The `token_count` of a successful `count-tokens` reply (a JSON body, not SSE);
    /// panics with the reply on anything else.
    pub fn token_count(&self) -> u64 {
        assert_eq!(self.status, 200, "{self:?}");
        let body = self.json();
        assert_eq!(body["result"]["isError"], false, "{body}");
        body["result"]["structuredContent"]["token_count"]
            .as_u64()
            .unwrap_or_else(|| panic!("no token_count in {body}"))
    }
}

/// `127.0.0.1:port` of a server URL.
pub fn authority(url: &str) -> String {
    let rest = url.trim_start_matches("http://");
    rest[..rest.find('/').unwrap_or(rest.len())].to_string()
}

/// The request head (without the final blank line) for `method path` with a body.
pub fn head(method: &str, path: &str, host: &str, extra: &[(&str, &str)], len: usize) -> String {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {len}\r\n"
    );
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head
}

/// Send one request on a fresh connection to `addr` and read the whole response.
pub async fn request(
    addr: &str,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    request_with_host(addr, addr, method, path, extra, body).await
}

/// `POST /mcp` (the server's MCP endpoint) with a JSON-RPC `body`.
pub async fn post_mcp(addr: &str, extra: &[(&str, &str)], body: &[u8]) -> Reply {
    request(addr, "POST", "/mcp", extra, body).await
}

/// [`request`] with a `Host` header other than `addr`.
pub async fn request_with_host(
    addr: &str,
    host: &str,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    try_request(addr, host, method, path, extra, body)
        .await
        .unwrap_or_else(|e| panic!("{method} {path} on {addr}: {e}"))
}

/// Wait until the server at `addr` is ready (`/readyz` answers 200), within
/// [`PATIENCE`]: a server accepts connections before its warm-up is done.
pub async fn wait_ready(addr: &str) {
    let started = std::time::Instant::now();
    while request(addr, "GET", "/readyz", &[], b"").await.status != 200 {
        assert!(started.elapsed() < PATIENCE, "never ready");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// [`request_with_host`] that reports a refused connection or an unparsable reply
/// instead of failing, for polling a server that is still starting.
pub async fn try_request(
    addr: &str,
    host: &str,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Reply> {
    tokio::time::timeout(PATIENCE, async {
        let mut stream = TcpStream::connect(addr).await?;
        let mut bytes = head(method, path, host, extra, body.len()).into_bytes();
        bytes.extend_from_slice(b"\r\n");
        bytes.extend_from_slice(body);
        // A server may answer (413) before reading all of a large body.
        let _ = stream.write_all(&bytes).await;
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw).await;
        parse_reply(&raw)
    })
    .await
    .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "HTTP request timed out"))?
}

/// Parse a whole response as read from the socket (chunked bodies joined).
pub fn parse_reply(raw: &[u8]) -> std::io::Result<Reply> {
    let invalid = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| invalid(format!("no HTTP response head in {text:?}")))?;
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid(format!("bad status line in {head:?}")))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Ok(Reply {
        status,
        headers,
        body,
    })
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}
