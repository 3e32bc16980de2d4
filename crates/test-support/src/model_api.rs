//! What the model-API stand-ins (`gemini_api`, `responses_api`) share: an axum router
//! served on a free loopback port from its own thread and runtime (so synchronous callers such as xtask and async
//! tests use it alike), stopped when dropped; and the record of each request.

use axum::body::Bytes;
use serde_json::Value;

/// One request a stand-in received.
#[derive(Clone, Debug)]
pub struct Recorded<K> {
    pub method: String,
    /// Path and query (`/v1/responses`, `/v1beta/models/m:streamGenerateContent?alt=sse`).
    pub path: String,
    /// The JSON body (`Value::Null` when there was none, a string when not JSON).
    pub body: Value,
    /// What the stand-in made of it.
    pub kind: K,
}

/// A body as JSON, or as a string when it is not JSON.
pub(crate) fn body_json(body: &Bytes) -> Value {
    if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
    }
}

/// A router being served; it serves until dropped.
pub(crate) struct Serving {
    pub url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Serving {
    /// Serve `app` on `127.0.0.1:<free port>`; `url` is `http://127.0.0.1:port`.
    pub fn start(name: &str, app: axum::Router) -> std::io::Result<Serving> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let url = format!("http://{}", listener.local_addr()?);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(async {
                            let _ = stopped.await;
                        })
                        .await;
                });
            })?;
        Ok(Serving {
            url,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `POST path` with a JSON body on a fresh connection, for the stand-ins' own tests:
/// the status and the whole reply (head and body).
#[cfg(test)]
pub(crate) fn post(url: &str, path: &str, body: &Value) -> (u16, String) {
    use std::io::{Read, Write};
    let authority = url.trim_start_matches("http://");
    let body = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(authority).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("timeout");
    stream.write_all(request.as_bytes()).expect("write");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("read");
    let status = reply[9..12].parse().expect("status");
    (status, reply)
}
