//! What an HTTP server is configured with: [`HttpOptions`], the one place its defaults
//! and its checks live. [`super::flags`] exposes the same values as command-line flags.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::auth::BearerTokens;
use super::json_scan::JsonLimits;

/// Whether the server can do its work yet (e.g. vocabularies loaded); `/readyz`
/// answers 503 until [`Readiness::mark_ready`].
#[derive(Debug, Clone, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    pub fn ready() -> Self {
        let readiness = Readiness::default();
        readiness.mark_ready();
        readiness
    }
    pub fn mark_ready(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Where and how to serve streamable HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub bind: SocketAddr,
    /// The MCP endpoint path, e.g. `/mcp`.
    pub path: String,
    /// `Host` header values accepted (DNS-rebinding protection). Empty means the
    /// loopback names, which is only allowed for a loopback bind.
    pub allowed_hosts: Vec<String>,
    /// Browser `Origin`s accepted (`https://app.example.com:443`, `http://localhost:*`).
    /// Empty means loopback origins only. Requests without `Origin` (non-browser
    /// clients) always pass this check.
    pub allowed_origins: Vec<String>,
    /// Bearer tokens for the MCP endpoint and `/metrics`; none means no auth.
    pub auth: BearerTokens,
    /// No sessions: every request is self-contained, so replicas need no affinity.
    pub stateless: bool,
    /// Stateful mode: a session unused this long is closed (its id then gets 404).
    pub session_idle_timeout: Duration,
    /// Larger POST bodies get 413 before any parsing.
    pub max_body_bytes: usize,
    /// MCP requests handled at once; more wait in line (bounded by `request_timeout`).
    pub max_concurrent_requests: usize,
    /// Time until response headers (a stateless call's whole result); 408 after it.
    pub request_timeout: Duration,
    /// On SIGTERM/SIGINT, how long in-flight tool calls may take to finish.
    pub shutdown_grace: Duration,
    /// What one request body may contain, checked before rmcp parses it.
    pub json_limits: JsonLimits,
    /// Stateful mode: sessions held at once; an `initialize` beyond it gets 503.
    pub max_sessions: usize,
    /// How long a connection may take to send a complete request head. Counted from
    /// when the connection starts waiting for one, so it also closes connections left
    /// idle (new or kept alive after a response).
    pub header_read_timeout: Duration,
    /// A request body must arrive within this time plus one second per
    /// `min_body_rate` bytes received; slower senders get 408 and lose their slot.
    pub body_read_timeout: Duration,
    /// Bytes per second a request body must keep up with after `body_read_timeout`.
    pub min_body_rate: u64,
    pub readiness: Readiness,
}

// The defaults, named so the flags (`HttpFlags`) show the same values in `--help`.
impl HttpOptions {
    pub const DEFAULT_BIND: SocketAddr =
        SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8787));
    pub const DEFAULT_PATH: &'static str = "/mcp";
    pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
    /// 16 MiB: room for the largest text a tool accepts plus its JSON escaping.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
    pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 64;
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
    pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
    /// ~0.35 MB each as measured (rmcp's session worker, channels, the handler): 1,000
    /// hold ~350 MB, within the reference unit's 1 GB; far above one per agent.
    pub const DEFAULT_MAX_SESSIONS: usize = 1_000;
    /// Honest clients send a head in one packet; nginx keeps idle upstream
    /// connections 5 s (`keepalive_timeout` in deploy/nginx), below this.
    pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(15);
    pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);
    /// 64 KiB/s: a 16 MiB body may take 10 s + 256 s; a client dribbling a byte
    /// at a time is cut off after 10 s.
    pub const DEFAULT_MIN_BODY_RATE: u64 = 64 * 1024;
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bind: Self::DEFAULT_BIND,
            path: Self::DEFAULT_PATH.into(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            auth: BearerTokens::default(),
            stateless: false,
            session_idle_timeout: Self::DEFAULT_SESSION_IDLE_TIMEOUT,
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            max_concurrent_requests: Self::DEFAULT_MAX_CONCURRENT_REQUESTS,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            shutdown_grace: Self::DEFAULT_SHUTDOWN_GRACE,
            json_limits: JsonLimits::default(),
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: Self::DEFAULT_BODY_READ_TIMEOUT,
            min_body_rate: Self::DEFAULT_MIN_BODY_RATE,
            readiness: Readiness::ready(),
        }
    }
}

/// The setting an [`InvalidHttpOptions`] is about, so a front end can name it in its
/// own terms (its flag, a config key) rather than this crate guessing them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpSetting {
    Path,
    AllowedHosts,
    MaxBodyBytes,
    MaxConcurrentRequests,
    RequestTimeout,
    MaxJsonValues,
    MaxSessions,
    HeaderReadTimeout,
    BodyReadTimeout,
    MinBodyRate,
}

impl HttpSetting {
    /// The [`HttpOptions`] field.
    pub fn field(self) -> &'static str {
        match self {
            HttpSetting::Path => "path",
            HttpSetting::AllowedHosts => "allowed_hosts",
            HttpSetting::MaxBodyBytes => "max_body_bytes",
            HttpSetting::MaxConcurrentRequests => "max_concurrent_requests",
            HttpSetting::RequestTimeout => "request_timeout",
            HttpSetting::MaxJsonValues => "json_limits.max_values",
            HttpSetting::MaxSessions => "max_sessions",
            HttpSetting::HeaderReadTimeout => "header_read_timeout",
            HttpSetting::BodyReadTimeout => "body_read_timeout",
            HttpSetting::MinBodyRate => "min_body_rate",
        }
    }
}

/// A configuration that cannot be served: which setting, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", .setting.field())]
pub struct InvalidHttpOptions {
    pub setting: HttpSetting,
    pub problem: String,
}

fn invalid(setting: HttpSetting, problem: impl Into<String>) -> InvalidHttpOptions {
    InvalidHttpOptions {
        setting,
        problem: problem.into(),
    }
}

impl HttpOptions {
    /// The Host names to accept, or why the configuration is unsafe.
    pub fn effective_allowed_hosts(&self) -> Result<Vec<String>, InvalidHttpOptions> {
        if !self.allowed_hosts.is_empty() {
            return Ok(self.allowed_hosts.clone());
        }
        if !self.bind.ip().is_loopback() {
            return Err(invalid(
                HttpSetting::AllowedHosts,
                format!(
                    "binding {} (not loopback) needs the public host name clients use; \
                     without it every request would be refused with 403",
                    self.bind
                ),
            ));
        }
        Ok(vec![
            "localhost".into(),
            "127.0.0.1".into(),
            "::1".into(),
            "[::1]".into(),
        ])
    }

    /// The browser Origins to accept: loopback pages unless configured.
    pub fn effective_allowed_origins(&self) -> Vec<String> {
        if !self.allowed_origins.is_empty() {
            return self.allowed_origins.clone();
        }
        ["http", "https"]
            .iter()
            .flat_map(|scheme| {
                ["localhost", "127.0.0.1", "[::1]"].map(|host| format!("{scheme}://{host}:*"))
            })
            .collect()
    }

    /// Every check a configuration must pass before anything binds.
    pub fn validate(&self) -> Result<(), InvalidHttpOptions> {
        if self.max_concurrent_requests == 0 {
            return Err(invalid(
                HttpSetting::MaxConcurrentRequests,
                "must be at least 1",
            ));
        }
        if self.max_body_bytes == 0 {
            return Err(invalid(HttpSetting::MaxBodyBytes, "must be at least 1"));
        }
        if self.request_timeout.is_zero() {
            return Err(invalid(HttpSetting::RequestTimeout, "must be above 0"));
        }
        if self.json_limits.max_values == 0 {
            return Err(invalid(HttpSetting::MaxJsonValues, "must be at least 1"));
        }
        if self.max_sessions == 0 {
            return Err(invalid(HttpSetting::MaxSessions, "must be at least 1"));
        }
        if self.header_read_timeout.is_zero() {
            return Err(invalid(HttpSetting::HeaderReadTimeout, "must be above 0"));
        }
        if self.body_read_timeout.is_zero() {
            return Err(invalid(HttpSetting::BodyReadTimeout, "must be above 0"));
        }
        if self.min_body_rate == 0 {
            return Err(invalid(HttpSetting::MinBodyRate, "must be at least 1"));
        }
        self.effective_allowed_hosts()?;
        self.normalized_path().map(drop)
    }

    /// The endpoint path without a trailing `/`.
    pub fn normalized_path(&self) -> Result<String, InvalidHttpOptions> {
        let path = self.path.trim_end_matches('/');
        if !path.starts_with('/') || path.len() < 2 {
            return Err(invalid(
                HttpSetting::Path,
                format!(
                    "must start with '/' and name a path, e.g. /mcp (got {:?})",
                    self.path
                ),
            ));
        }
        if matches!(path, "/healthz" | "/readyz" | "/metrics") {
            return Err(invalid(
                HttpSetting::Path,
                format!("{path} is taken by the built-in probe of that name"),
            ));
        }
        Ok(path.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(bind: &str, hosts: &[&str]) -> HttpOptions {
        HttpOptions {
            bind: bind.parse().expect("socket address"),
            allowed_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            ..HttpOptions::default()
        }
    }

    #[test]
    fn loopback_bind_defaults_to_loopback_hosts() {
        let hosts = options("127.0.0.1:8787", &[])
            .effective_allowed_hosts()
            .expect("allowed");
        assert!(hosts.contains(&"localhost".to_string()));
        assert!(hosts.contains(&"127.0.0.1".to_string()));
    }

    #[test]
    fn public_bind_without_allowed_host_is_refused() {
        let error = options("0.0.0.0:8787", &[])
            .effective_allowed_hosts()
            .expect_err("unsafe");
        assert_eq!(error.setting, HttpSetting::AllowedHosts);
        assert!(error.to_string().starts_with("allowed_hosts: "), "{error}");
        assert_eq!(
            options("0.0.0.0:8787", &[]).validate(),
            Err(error),
            "validate refuses it before anything binds"
        );
        let hosts = options("0.0.0.0:8787", &["mcp.example.com"]).effective_allowed_hosts();
        assert_eq!(hosts.ok(), Some(vec!["mcp.example.com".to_string()]));
    }

    #[test]
    fn path_must_be_absolute() {
        let mut o = options("127.0.0.1:0", &[]);
        o.path = "mcp".into();
        assert!(o.normalized_path().is_err());
        o.path = "/mcp/".into();
        assert_eq!(o.normalized_path().ok().as_deref(), Some("/mcp"));
        o.path = "/".into();
        assert!(o.normalized_path().is_err());
        o.path = "/metrics".into();
        assert!(o.normalized_path().is_err(), "probe paths are reserved");
    }

    #[test]
    fn origins_default_to_loopback_pages() {
        let origins = options("127.0.0.1:0", &[]).effective_allowed_origins();
        assert!(origins.contains(&"http://localhost:*".to_string()));
        assert!(origins.iter().all(|o| !o.contains("example")));
        let mut o = options("127.0.0.1:0", &[]);
        o.allowed_origins = vec!["https://app.example.com:443".into()];
        assert_eq!(
            o.effective_allowed_origins(),
            ["https://app.example.com:443"]
        );
    }

    #[test]
    fn zero_limits_are_refused() {
        let mut o = options("127.0.0.1:0", &[]);
        o.max_concurrent_requests = 0;
        assert_eq!(
            o.validate().map_err(|e| e.setting),
            Err(HttpSetting::MaxConcurrentRequests)
        );
        let mut o = options("127.0.0.1:0", &[]);
        o.max_body_bytes = 0;
        assert_eq!(
            o.validate().map_err(|e| e.setting),
            Err(HttpSetting::MaxBodyBytes)
        );
        let mut o = options("127.0.0.1:0", &[]);
        o.request_timeout = Duration::ZERO;
        assert_eq!(
            o.validate().map_err(|e| e.setting),
            Err(HttpSetting::RequestTimeout)
        );
        assert!(options("127.0.0.1:0", &[]).validate().is_ok());
    }
}
