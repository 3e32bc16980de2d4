//! Servers the harness starts on loopback and stops itself: ours or the peer, both of
//! which log `listening on http://ADDR/PATH` to stderr when ready (port 0 = free port).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// A running HTTP server process; killed on drop if not stopped before.
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    /// Spawn `command` and wait (bounded) for the URL it logs.
    pub fn start(mut command: Command) -> anyhow::Result<HttpServer> {
        let program = format!("{:?}", command.get_program());
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {program}"))?;
        let stderr = child.stderr.take().context("stderr is piped")?;
        let (sender, receiver) = mpsc::channel();
        // Read stderr on a thread: report the URL, then keep draining so the server
        // never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !sent && let Some(at) = line.find("listening on http://") {
                    let url = line[at + "listening on ".len()..].trim().to_string();
                    sent = sender.send(url).is_ok();
                }
            }
        });
        let mut server = HttpServer {
            child,
            url: String::new(),
        };
        // On failure `server` drops here, which kills the process.
        server.url = receiver
            .recv_timeout(Duration::from_secs(30))
            .map_err(|_| anyhow::anyhow!("{program} did not report a URL within 30 s"))?;
        Ok(server)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident set size now, from /proc/PID/status (VmRSS), in KiB.
    pub fn rss_kib(&self) -> anyhow::Result<u64> {
        rss_kib(self.pid())
    }

    /// SIGTERM, then wait up to 10 s for a clean exit (SIGKILL after that).
    pub fn stop(mut self) -> anyhow::Result<ExitStatus> {
        let pid = self.pid().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.child.kill()?;
        bail!("server {pid} did not exit within 10 s of SIGTERM; killed")
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("cannot read /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .with_context(|| format!("no VmRSS in /proc/{pid}/status"))
}
