//! Start the built `context-loader http` on a free loopback port for checks that
//! talk to it from outside (conformance suite, other clients); killed on drop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, bail};

pub struct RunningServer {
    child: Child,
    pub url: String,
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl RunningServer {
    /// Whether the process is still running and `/healthz` answers 200.
    pub fn healthy(&mut self) -> bool {
        if !matches!(self.child.try_wait(), Ok(None)) {
            return false;
        }
        let authority = self.url.trim_start_matches("http://");
        let authority = &authority[..authority.find('/').unwrap_or(authority.len())];
        let Ok(mut stream) = TcpStream::connect(authority) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let request =
            format!("GET /healthz HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
        let mut reply = String::new();
        stream.write_all(request.as_bytes()).is_ok()
            && stream.read_to_string(&mut reply).is_ok()
            && reply.starts_with("HTTP/1.1 200")
    }
}

/// `cargo build` the server, then start `context-loader http --bind 127.0.0.1:0 <args>`.
pub fn start(args: &[&str]) -> anyhow::Result<RunningServer> {
    crate::build_server()?;
    let binary = crate::target_dir().join("debug/context-loader");
    let mut child = Command::new(&binary)
        .args(["http", "--bind", "127.0.0.1:0"])
        .args(args)
        .env("RUST_LOG", "error,mcp_common=info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let stderr = child.stderr.take().context("stderr is piped")?;
    let (found, url) = mpsc::channel();
    // Read the URL from the log, then keep draining (and echoing) so it never blocks.
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.find("listening on http://") {
                let _ = found.send(line[at + "listening on ".len()..].trim().to_string());
            } else if !line.contains(" INFO ") {
                eprintln!("[server] {line}");
            }
        }
    });
    match url.recv_timeout(Duration::from_secs(30)) {
        Ok(url) => Ok(RunningServer { child, url }),
        Err(_) => {
            let _ = child.kill();
            bail!("the server did not report its URL within 30 s")
        }
    }
}
