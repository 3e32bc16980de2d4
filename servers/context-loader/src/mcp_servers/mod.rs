//! `context-loader mcp-tokens`'s sources: the servers of client config files (found
//! for this project and user, or named), one stdio command, or one URL, connected to
//! concurrently (bounded), each within its time limit. Command line only: the MCP tool
//! measures definitions its caller sends and never connects anywhere. A project's
//! config runs nothing until the user approved it ([`trust`]).

pub mod config;
mod connect;
mod trust;
mod unreadable;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use context_budget::tool_defs::MeasuredServer;
use mcp_common::{ErrorCode, ToolError};

pub use config::{Held, Scope, ServerConfig, Transport};
pub use connect::{Bounds, DEFAULT_MAX_PAGES, DEFAULT_MAX_SERVER_BYTES, DEFAULT_MAX_TOOLS};

/// Where the servers to measure are.
#[derive(Debug, Clone)]
pub struct Sources {
    pub configs: Vec<PathBuf>,
    pub command: Vec<String>,
    pub url: Option<String>,
    /// `Name: value`.
    pub headers: Vec<String>,
    pub timeout: Duration,
    pub concurrency: usize,
    /// Run a project's servers without a recorded approval (`--trust-project`).
    pub trust_project: bool,
    /// Variables of ours a stdio server also gets (`--pass-env`), beyond
    /// [`CHILD_ENVIRONMENT`] and what its config names.
    pub pass_env: Vec<String>,
    /// What one server's listings may hold (`--max-pages`, `--max-tools`,
    /// `--max-server-bytes`).
    pub bounds: Bounds,
    /// How the definitions will be counted: each server's are counted within its
    /// `timeout` too, so one clock covers connecting, listing and counting.
    pub counting: Option<Counting>,
    /// `--client`: without `configs`, only that client's config files are read.
    pub client: Option<&'static context_budget::clients::Client>,
}

/// The count the answer will make, made within each server's clock.
#[derive(Debug, Clone)]
pub struct Counting {
    pub counter: context_budget::TokenCounter,
    pub model: Option<String>,
    pub render: Option<context_budget::tool_defs::Rendering>,
    pub client: Option<&'static context_budget::clients::Client>,
}

/// What a stdio server gets of our environment, as the MCP SDKs' stdio clients pass
/// it (Python's and TypeScript's `DEFAULT_INHERITED_ENV_VARS`): enough to find its
/// program and home, nothing secret. Its config's `env` and `--pass-env` add to it.
pub const CHILD_ENVIRONMENT: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The configured servers of `sources`, and the config files read.
pub fn servers(sources: &Sources) -> Result<(Vec<ServerConfig>, Vec<PathBuf>), ToolError> {
    let project = std::env::current_dir().unwrap_or_default();
    let bad = |message: String, suggestion: &str| {
        ToolError::new(ErrorCode::InvalidInput, message, suggestion)
    };
    let mut servers = Vec::new();
    if let Some((command, args)) = sources.command.split_first() {
        servers.push(ServerConfig {
            name: server_name(command),
            transport: Transport::Stdio {
                command: command.clone(),
                args: args.to_vec(),
                env: Default::default(),
                cwd: None,
            },
            source: None,
            held: None,
            secrets: Vec::new(),
        });
    }
    if let Some(url) = &sources.url {
        let mut headers = Vec::new();
        let mut secrets = Vec::new();
        for header in &sources.headers {
            let (key, value) = header.split_once(':').ok_or_else(|| {
                bad(
                    format!("`{header}` is not a header"),
                    "Give --header as `Name: value`.",
                )
                .with_detail("usage", "--header")
            })?;
            // The user's own command line: `${VAR}` is read from the environment, so
            // a token need not be written into argv (where `ps` shows it).
            let mut expansion = config::Expansion::default();
            let value = expansion.expand(value.trim());
            if let Some(unset) = expansion.unset {
                return Err(bad(
                    format!(
                        "--header `{}` names ${{{unset}}}, which is not set",
                        key.trim()
                    ),
                    "Set the variable, or write the header's value.",
                )
                .with_detail("usage", "--header"));
            }
            secrets.extend(expansion.expanded);
            headers.push((key.trim().to_string(), value));
        }
        let mut expansion = config::Expansion::default();
        let url_value = expansion.expand(url);
        if let Some(unset) = expansion.unset {
            return Err(bad(
                format!("--url names ${{{unset}}}, which is not set"),
                "Set the variable, or write the URL out.",
            )
            .with_detail("usage", "--url"));
        }
        secrets.extend(expansion.expanded);
        let name = reqwest::Url::parse(&url_value)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_else(|| "server".into());
        servers.push(ServerConfig {
            name,
            transport: Transport::Http {
                url: url_value,
                headers,
            },
            source: None,
            held: None,
            secrets,
        });
    }
    let mut read = Vec::new();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let files = match (sources.configs.is_empty(), servers.is_empty()) {
        // Named on the command line: the user's say.
        (false, _) => sources
            .configs
            .iter()
            .map(|path| (path.clone(), Scope::User))
            .collect(),
        (true, true) => {
            let found = config::discover(&project, home.as_deref(), sources.client);
            let rendered = sources.client.and_then(|c| c.tools.map(|rules| (c, rules)));
            if let (true, Some((client, rules))) = (found.is_empty(), rendered) {
                let files: Vec<String> = rules
                    .project_configs
                    .iter()
                    .map(|f| format!("./{f}"))
                    .chain(rules.user_configs.iter().map(|f| format!("~/{f}")))
                    .collect();
                return Err(bad(
                    format!(
                        "no {} config found for this project or user (looked for {})",
                        client.product,
                        files.join(", ")
                    ),
                    "Name one with --config FILE, or measure one server with -- CMD ARGS or --url URL.",
                ));
            }
            if found.is_empty() {
                return Err(bad(
                    "no MCP client config found for this project or user (looked for .mcp.json, \
                     .vscode/mcp.json, .cursor/mcp.json, .gemini/settings.json, ~/.claude.json, \
                     ~/.codex/config.toml, Claude Desktop's config)"
                        .into(),
                    "Name one with --config FILE, or measure one server with -- CMD ARGS or --url URL.",
                ));
            }
            found
        }
        (true, false) => Vec::new(),
    };
    for (file, scope) in files {
        let trusted = scope == Scope::User || sources.trust_project;
        let mut found = config::read(&file, &project, trusted).map_err(|e| {
            bad(
                format!("cannot read the config {e}"),
                "Check the file, or pass another with --config.",
            )
            .with_detail("usage", "--config")
        })?;
        if !trusted {
            let names: Vec<String> = found.iter().map(|s| s.name.clone()).collect();
            let approvals = trust::approvals(&file, &project, home.as_deref(), &names);
            // The approved ones are read again as the user's: `${VAR}`s expanded.
            let expanded = match approvals.iter().any(Result::is_ok) {
                true => config::read(&file, &project, true).unwrap_or_default(),
                false => Vec::new(),
            };
            for (server, approval) in found.iter_mut().zip(approvals) {
                match approval {
                    Ok(()) => {
                        if let Some(again) = expanded.iter().find(|s| s.name == server.name) {
                            *server = again.clone();
                        }
                    }
                    Err(how) => server.held = Some(Held::NotApproved(how)),
                }
            }
        }
        servers.extend(found);
        read.push(file);
    }
    if servers.len() > config::MAX_SERVERS {
        return Err(bad(
            format!(
                "{} servers configured; at most {} are measured in one run",
                servers.len(),
                config::MAX_SERVERS
            ),
            "Pass fewer config files with --config.",
        ));
    }
    Ok((servers, read))
}

/// A short name for a command line's server: its program's file name.
fn server_name(command: &str) -> String {
    std::path::Path::new(command)
        .file_name()
        .map_or_else(|| command.to_string(), |n| n.to_string_lossy().into_owned())
}

/// Servers measured at once unless `--concurrency` says otherwise: the cores. Starting
/// a stdio server is CPU work on this machine, and more at once than cores only slows
/// each (20 Python SDK servers on 2 cores: 8 at once 24.7 s, 2 at once 12.5 s, and a
/// third more CPU in all).
pub fn default_concurrency() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().min(8))
}

/// Connect to every server, at most `concurrency` at once; results in config order.
pub fn measure_all(servers: Vec<ServerConfig>, sources: &Sources) -> Vec<MeasuredServer> {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return servers
                .into_iter()
                .map(|s| MeasuredServer::failed(s.name, s.source, format!("no runtime: {e}")))
                .collect();
        }
    };
    let timeout = sources.timeout;
    let bounds = sources.bounds;
    let counting = sources.counting.clone().map(Arc::new);
    let inherited = Arc::new(child_environment(&sources.pass_env));
    let limit = Arc::new(tokio::sync::Semaphore::new(sources.concurrency.max(1)));
    let measured = runtime.block_on(async move {
        // SIGINT/SIGTERM: the servers started so far die with us (their own process
        // groups are beyond the terminal's signal), then the shell's exit code.
        let interrupted = tokio::spawn(async {
            let code = interrupted().await;
            connect::end_every_group();
            std::process::exit(code);
        });
        let mut tasks = tokio::task::JoinSet::new();
        for (index, server) in servers.into_iter().enumerate() {
            let limit = limit.clone();
            let inherited = inherited.clone();
            let counting = counting.clone();
            tasks.spawn(async move {
                let _permit = limit.acquire_owned().await;
                let clock = connect::Clock { timeout, counting };
                (
                    index,
                    connect::measure(server, clock, &inherited, bounds).await,
                )
            });
        }
        let mut measured = Vec::new();
        while let Some(done) = tasks.join_next().await {
            if let Ok(done) = done {
                measured.push(done);
            }
        }
        measured.sort_by_key(|(index, _)| *index);
        interrupted.abort();
        measured.into_iter().map(|(_, m)| m).collect()
    });
    // Child-process cleanup tasks rmcp spawned on drop get a moment to reap.
    runtime.shutdown_timeout(Duration::from_millis(200));
    measured
}

/// Resolves on SIGINT (130) or SIGTERM (143) with the exit code a shell gives; never,
/// where the handlers cannot be installed.
async fn interrupted() -> i32 {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(mut interrupt), Ok(mut terminate)) => tokio::select! {
            _ = interrupt.recv() => 130,
            _ = terminate.recv() => 143,
        },
        _ => std::future::pending().await,
    }
}

/// The variables of ours a stdio server starts with: [`CHILD_ENVIRONMENT`] and
/// `--pass-env`'s, those that are set.
fn child_environment(pass_env: &[String]) -> Vec<(String, std::ffi::OsString)> {
    CHILD_ENVIRONMENT
        .iter()
        .map(|name| name.to_string())
        .chain(pass_env.iter().cloned())
        .filter_map(|name| std::env::var_os(&name).map(|value| (name, value)))
        .collect()
}
