//! The HTTP options as command-line flags, so every server's `http` command has the
//! same ones. A server flattens [`HttpArgs`] with its own [`EnvPrefix`]; each flag can
//! also be set from `<PREFIX><FIELD>` (`--max-body-bytes` from `X_MAX_BODY_BYTES`).
//! Defaults are [`HttpOptions`]'s constants: one source for the flags and the struct.

use std::marker::PhantomData;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{ArgMatches, Args, Command, FromArgMatches};

use super::auth::BearerTokens;
use super::json_scan::JsonLimits;
use super::options::{HttpOptions, HttpSetting, Readiness};

/// The server's prefix for the flags' environment variables, e.g. `"MY_SERVER_"`.
pub trait EnvPrefix {
    const ENV_PREFIX: &'static str;
}

/// The `http` command's flags of the server whose variables start with `P::ENV_PREFIX`.
pub struct HttpArgs<P> {
    pub flags: HttpFlags,
    prefix: PhantomData<P>,
}

/// The flags themselves (see [`HttpOptions`] for what each one does).
#[derive(Debug, Clone, Args)]
pub struct HttpFlags {
    /// Address to listen on. Port 0 picks a free port (the URL is logged to stderr).
    #[arg(long, default_value_t = HttpOptions::DEFAULT_BIND)]
    pub bind: SocketAddr,
    /// Path of the MCP endpoint.
    #[arg(long, default_value = HttpOptions::DEFAULT_PATH)]
    pub path: String,
    /// Host header value to accept (repeatable). Default: loopback names only; a
    /// non-loopback --bind requires at least one.
    #[arg(long = "allowed-host", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,
    /// Browser Origin to accept, with scheme (repeatable), e.g. https://app.example.com:443
    /// or http://localhost:*. Default: loopback origins. Other Origins get 403.
    #[arg(long = "allowed-origin", value_delimiter = ',')]
    pub allowed_origins: Vec<String>,
    /// File of bearer tokens, one per line (# comments allowed). With tokens set, the
    /// MCP endpoint and /metrics answer 401 without `Authorization: Bearer <token>`.
    #[arg(long)]
    pub auth_token_file: Option<PathBuf>,
    /// A bearer token given directly (prefer the file: env and argv are visible to
    /// other local users through /proc).
    #[arg(long, hide_env_values = true)]
    pub auth_token: Option<String>,
    /// Serve without sessions: every request stands alone, so replicas behind a load
    /// balancer need no session affinity.
    #[arg(long)]
    pub stateless: bool,
    /// Stateful mode: close a session after this many seconds without requests.
    #[arg(long, default_value_t = HttpOptions::DEFAULT_SESSION_IDLE_TIMEOUT.as_secs())]
    pub session_idle_timeout: u64,
    /// Largest request body in bytes; larger gets 413.
    #[arg(long, default_value_t = HttpOptions::DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// MCP requests served at once; more wait for a slot.
    #[arg(long, default_value_t = HttpOptions::DEFAULT_MAX_CONCURRENT_REQUESTS)]
    pub max_concurrent_requests: usize,
    /// Seconds a request may take until its response starts (408 after); a tool call
    /// that streams its answer is stopped after as long, with a JSON-RPC error.
    #[arg(long, default_value_t = HttpOptions::DEFAULT_REQUEST_TIMEOUT.as_secs())]
    pub request_timeout: u64,
    /// On SIGTERM/SIGINT, seconds in-flight tool calls get to finish.
    #[arg(long, default_value_t = HttpOptions::DEFAULT_SHUTDOWN_GRACE.as_secs())]
    pub shutdown_grace: u64,
    /// Most JSON values in one request body, checked before it is parsed; more gets 413.
    #[arg(long, default_value_t = JsonLimits::DEFAULT_MAX_VALUES)]
    pub max_json_values: usize,
    /// Stateful mode: sessions held at once; a new `initialize` beyond it gets 503.
    #[arg(long, default_value_t = HttpOptions::DEFAULT_MAX_SESSIONS)]
    pub max_sessions: usize,
    /// Seconds a connection may take to send a request head; also closes connections
    /// idle that long (new, or kept alive after a response).
    #[arg(long, default_value_t = HttpOptions::DEFAULT_HEADER_READ_TIMEOUT.as_secs())]
    pub header_read_timeout: u64,
    /// Seconds a request body may take, plus one per --min-body-rate bytes; 408 after.
    #[arg(long, default_value_t = HttpOptions::DEFAULT_BODY_READ_TIMEOUT.as_secs())]
    pub body_read_timeout: u64,
    /// Bytes per second a request body must average beyond --body-read-timeout.
    #[arg(long, default_value_t = HttpOptions::DEFAULT_MIN_BODY_RATE)]
    pub min_body_rate: u64,
}

impl HttpFlags {
    /// The options these flags describe (reading the token file), checked, with
    /// errors naming the flag to fix.
    pub fn into_options(self, readiness: Readiness) -> anyhow::Result<HttpOptions> {
        let auth = self.bearer_tokens()?;
        let options = HttpOptions {
            bind: self.bind,
            path: self.path,
            allowed_hosts: self.allowed_hosts,
            allowed_origins: self.allowed_origins,
            auth,
            stateless: self.stateless,
            session_idle_timeout: Duration::from_secs(self.session_idle_timeout),
            max_body_bytes: self.max_body_bytes,
            max_concurrent_requests: self.max_concurrent_requests,
            request_timeout: Duration::from_secs(self.request_timeout),
            shutdown_grace: Duration::from_secs(self.shutdown_grace),
            json_limits: JsonLimits {
                max_values: self.max_json_values,
            },
            max_sessions: self.max_sessions,
            header_read_timeout: Duration::from_secs(self.header_read_timeout),
            body_read_timeout: Duration::from_secs(self.body_read_timeout),
            min_body_rate: self.min_body_rate,
            readiness,
        };
        options
            .validate()
            .map_err(|e| anyhow::anyhow!("{}: {}", flag(e.setting), e.problem))?;
        Ok(options)
    }

    fn bearer_tokens(&self) -> anyhow::Result<BearerTokens> {
        let mut tokens: Vec<String> = self.auth_token.iter().cloned().collect();
        if let Some(file) = &self.auth_token_file {
            let contents = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read --auth-token-file {}", file.display()))?;
            let from_file = BearerTokens::parse_file(&contents);
            anyhow::ensure!(
                !from_file.is_empty(),
                "--auth-token-file {} has no token (one per line)",
                file.display()
            );
            tokens.extend(from_file);
        }
        Ok(BearerTokens::new(tokens))
    }
}

/// The flag that sets a setting (refusals at run time name it too).
pub fn flag(setting: HttpSetting) -> &'static str {
    match setting {
        HttpSetting::Path => "--path",
        HttpSetting::AllowedHosts => "--allowed-host",
        HttpSetting::MaxBodyBytes => "--max-body-bytes",
        HttpSetting::MaxConcurrentRequests => "--max-concurrent-requests",
        HttpSetting::RequestTimeout => "--request-timeout",
        HttpSetting::MaxJsonValues => "--max-json-values",
        HttpSetting::MaxSessions => "--max-sessions",
        HttpSetting::HeaderReadTimeout => "--header-read-timeout",
        HttpSetting::BodyReadTimeout => "--body-read-timeout",
        HttpSetting::MinBodyRate => "--min-body-rate",
    }
}

impl<P> HttpArgs<P> {
    pub fn into_options(self, readiness: Readiness) -> anyhow::Result<HttpOptions> {
        self.flags.into_options(readiness)
    }
}

/// Gives every [`HttpFlags`] flag in `command` the variable `<prefix><FIELD>`.
fn with_env(command: Command, prefix: &str) -> Command {
    let ids: Vec<String> = HttpFlags::augment_args(Command::new("http"))
        .get_arguments()
        .map(|arg| arg.get_id().to_string())
        .collect();
    ids.iter().fold(command, |command, id| {
        command.mut_arg(id, |arg| {
            arg.env(format!("{prefix}{}", id.to_ascii_uppercase()))
        })
    })
}

impl<P: EnvPrefix> Args for HttpArgs<P> {
    fn augment_args(command: Command) -> Command {
        with_env(HttpFlags::augment_args(command), P::ENV_PREFIX)
    }
    fn augment_args_for_update(command: Command) -> Command {
        with_env(HttpFlags::augment_args_for_update(command), P::ENV_PREFIX)
    }
}

impl<P> FromArgMatches for HttpArgs<P> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(HttpArgs {
            flags: HttpFlags::from_arg_matches(matches)?,
            prefix: PhantomData,
        })
    }
    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.flags.update_from_arg_matches(matches)
    }
}

// By hand: a derive would demand `P: Debug` of a marker type.
impl<P> std::fmt::Debug for HttpArgs<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.flags.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    struct Test;
    impl EnvPrefix for Test {
        const ENV_PREFIX: &'static str = "MCP_COMMON_TEST_";
    }

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        http: HttpArgs<Test>,
    }

    fn parse(args: &[&str]) -> HttpFlags {
        Cli::try_parse_from(std::iter::once("server").chain(args.iter().copied()))
            .expect("valid flags")
            .http
            .flags
    }

    #[test]
    fn flag_defaults_are_the_options_defaults() {
        let parsed = parse(&[]).into_options(Readiness::ready()).expect("valid");
        let default = HttpOptions::default();
        assert_eq!(parsed.bind, default.bind);
        assert_eq!(parsed.path, default.path);
        assert_eq!(parsed.session_idle_timeout, default.session_idle_timeout);
        assert_eq!(parsed.max_body_bytes, default.max_body_bytes);
        assert_eq!(
            parsed.max_concurrent_requests,
            default.max_concurrent_requests
        );
        assert_eq!(parsed.request_timeout, default.request_timeout);
        assert_eq!(parsed.shutdown_grace, default.shutdown_grace);
        assert_eq!(parsed.json_limits, default.json_limits);
        assert_eq!(parsed.max_sessions, default.max_sessions);
        assert_eq!(parsed.header_read_timeout, default.header_read_timeout);
        assert_eq!(parsed.body_read_timeout, default.body_read_timeout);
        assert_eq!(parsed.min_body_rate, default.min_body_rate);
        assert!(!parsed.stateless && !parsed.auth.is_enabled());
    }

    #[test]
    fn every_flag_reads_the_servers_variable() {
        let command = <Cli as clap::CommandFactory>::command();
        for arg in command.get_arguments().filter(|a| a.get_id() != "help") {
            let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
            let expected = format!("MCP_COMMON_TEST_{}", arg.get_id().as_str().to_uppercase());
            assert_eq!(env.as_deref(), Some(expected.as_str()), "{}", arg.get_id());
        }
    }

    #[test]
    fn invalid_values_name_the_flag() {
        let error = parse(&["--bind", "0.0.0.0:0"])
            .into_options(Readiness::ready())
            .expect_err("public bind without allowed host");
        assert!(error.to_string().starts_with("--allowed-host: "), "{error}");
        let error = parse(&["--max-concurrent-requests", "0"])
            .into_options(Readiness::ready())
            .expect_err("zero");
        assert_eq!(
            error.to_string(),
            "--max-concurrent-requests: must be at least 1"
        );
        let error = parse(&["--path", "/readyz"])
            .into_options(Readiness::ready())
            .expect_err("reserved");
        assert!(error.to_string().starts_with("--path: "), "{error}");
    }
}
